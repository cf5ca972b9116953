"""
Summarise bench/run's results file into one Markdown table: the median of
each metric over the repeats, and each proxy's ratio to direct.

usage: table.py RESULTS "gate N squid N tinyproxy N" NCPU PROXY_CPU LOAD_CPU
                ORIGIN_CPU
"""

import shlex
import statistics
import sys

CONFIGS = ("direct", "gate", "floor", "squid", "tinyproxy")
NAMES = {"direct": "direct", "gate": "aisb-gate", "floor": "floor (relay)",
    "squid": "squid", "tinyproxy": "tinyproxy"}

# (row, title, direct row it is compared with)
RATE_ROWS = (
    ("new", "1. new tunnel per request (IP literal)", "new"),
    ("new-name", "1b. new tunnel per request (name, DNS)", "new"),
    ("tls", "1c. new TLS tunnel per request (name, SNI)", "tls"),
    ("ka", "2. keep-alive GETs in tunnels", "ka"),
    ("fwd-ka", "3a. forward GETs, keep-alive", "ka"),
    ("fwd-new", "3b. forward GETs, new connection each", "new"),
)


def load(path):
    """{(row, cfg): [dict per repeat]}"""
    out = {}
    with open(path) as f:
        for line in f:
            d = {}
            for tok in shlex.split(line):
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    d[k] = v
            if "row" in d and "cfg" in d:
                out.setdefault((d["row"], d["cfg"]), []).append(d)
    return out


def med(runs, key):
    vals = []
    for r in runs or ():
        try:
            v = float(r[key])
        except (KeyError, ValueError):
            continue
        if v >= 0:
            vals.append(v)
    return statistics.median(vals) if vals else None


def errs(runs):
    """Errors in the runs, and the first message."""
    n, first = 0, None
    for r in runs or ():
        try:
            e = int(float(r.get("errors", "0")))
        except ValueError:
            e = 1
        n += e
        if e and first is None:
            first = r.get("first_error", "?")
    return n, first


def fmt(v, nd=0):
    if v is None:
        return "-"
    if nd == 0:
        return "{:,.0f}".format(v)
    return "{:.{}f}".format(v, nd)


def main():
    res = load(sys.argv[1])
    logs = sys.argv[2].split()
    ncpu, pcpu, lcpu, ocpu = sys.argv[3:7]
    notes = []
    lines = ["| workload | metric | " + " | ".join(NAMES[c] for c in
        CONFIGS) + " |", "|---|---|" + "---|" * len(CONFIGS)]

    def mark(runs, row, cfg):
        n, first = errs(runs)
        if n == 0:
            return ""
        notes.append("%s/%s: %d errors over the repeats, first: %s"
            % (row, NAMES[cfg], n, first))
        return " !"

    for row, title, dref in RATE_ROWS:
        cells = {"rps": [], "lat": [], "cpu": []}
        base = med(res.get((dref, "direct")), "rps")
        for cfg in CONFIGS:
            runs = res.get((dref if cfg == "direct" else row, cfg))
            rps = med(runs, "rps")
            m = mark(runs, row, cfg)
            if rps is None:
                cells["rps"].append("-")
            elif cfg == "direct" or not base:
                cells["rps"].append(fmt(rps) + m)
            else:
                cells["rps"].append("%s (%.2f)%s" % (fmt(rps), rps / base,
                    m))
            p50, p99 = med(runs, "p50_us"), med(runs, "p99_us")
            cells["lat"].append("-" if p50 is None else "%s / %s" % (
                fmt(p50 / 1000, 2), fmt(p99 / 1000, 2)))
            cpu = med(runs, "cpu_us_per_req")
            cells["cpu"].append("-" if cfg == "direct" or cpu is None
                else fmt(cpu, 1))
        lines.append("| %s | req/s (x direct) | %s |" % (title,
            " | ".join(cells["rps"])))
        lines.append("| | p50 / p99 ms | %s |" % " | ".join(cells["lat"]))
        lines.append("| | proxy CPU us/req | %s |" % " | ".join(
            cells["cpu"]))

    base = med(res.get(("bulk", "direct")), "mbps")
    mb, cpu = [], []
    for cfg in CONFIGS:
        runs = res.get(("bulk", cfg))
        v = med(runs, "mbps")
        m = mark(runs, "bulk", cfg)
        if v is None:
            mb.append("-")
        elif cfg == "direct" or not base:
            mb.append(fmt(v) + m)
        else:
            mb.append("%s (%.2f)%s" % (fmt(v), v / base, m))
        c = med(runs, "cpu_s_per_gib")
        cpu.append("-" if cfg == "direct" or c is None else fmt(c, 3))
    lines.append("| 4. bulk, 4 tunnels, 1 GiB | MB/s (x direct) | %s |"
        % " | ".join(mb))
    lines.append("| | proxy CPU s/GiB | %s |" % " | ".join(cpu))

    rss = []
    for cfg in CONFIGS:
        runs = res.get(("idle", cfg))
        v = med(runs, "rss_per_tunnel_bytes")
        m = mark(runs, "idle", cfg)
        rss.append("-" if v is None else "%.1f%s" % (v / 1024, m))
    lines.append("| 5. idle tunnels (2,000) | RSS KiB per tunnel | %s |"
        % " | ".join(rss))

    st, ls = [], []
    for cfg in CONFIGS:
        runs = res.get(("startup", cfg))
        v = med(runs, "first_ms")
        m = mark(runs, "startup", cfg)
        st.append("-" if v is None else fmt(v, 1) + m)
        w = med(runs, "listen_ms")
        ls.append("-" if w is None else fmt(w, 1))
    lines.append("| 6. start-up | ms to first proxied response | %s |"
        % " | ".join(st))
    lines.append("| | ms to first accepted connect | %s |" % " | ".join(ls))

    print("\n".join(lines))
    print()
    reps = max((len(v) for k, v in res.items() if k[0] == "new"),
        default=0)
    print("Medians of %d repeat(s); %s CPUs; proxy on CPU %s; load generator "
        "and DNS responder on CPU %s; origin (nginx) on CPU %s (-1: not "
        "pinned)." % (reps, ncpu, pcpu, lcpu, ocpu))
    print("Request log lines written: %s." % ", ".join(
        "%s %s" % (logs[i], logs[i + 1]) for i in range(0, len(logs), 2)))
    print("floor (relay): bench/floor-relay, a CONNECT relay with no checks "
        "and no log, on the proxy's CPU; measured for the tunnel rows only.")
    for n in notes:
        print("! " + n)


if __name__ == "__main__":
    main()
