#!/usr/bin/env python3
"""
The main job while the launcher cannot yet run a sandbox: aisb-gate on
loopback in a private test world, one allowed HTTP and one allowed HTTPS
request, and refused ones, each with what curl got and the gate's log line.

The world: a fake DNS server on 127.0.0.1 answers for *.example, and web
servers on 127.0.0.2 stand in for the internet. Because 127.0.0.2 is a
loopback address, which the gate refuses, the allowlist carries the entry
127.0.0.2 to exempt it; everything else about the decisions is real.
Usage: AISB_GATE=build/gate/aisb-gate scripts/demo-gate.py
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration", "gate"))

import world  # noqa: E402


def show(title, argv, gate):
    before = len(gate.records())
    print("\n== %s" % title)
    print("$ " + " ".join(argv))
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    out = (p.stdout + p.stderr).strip()
    print(out if out else "(no output, curl exit %d)" % p.returncode)
    world.wait_until(lambda: len(gate.records()) > before, 5.0)
    for rec in gate.records()[before:]:
        print("gate log: " + json.dumps(rec, separators=(",", ":")))


def main():
    w = world.World()
    w.dns.set("evil.example", ["127.0.0.2"])
    w.dns.set("rebind.test.example", ["10.0.0.1", "169.254.169.254"])
    allow = ["test.example:%d" % w.http.port,
             "test.example:%d" % w.tls.port,
             "127.0.0.2"]
    gate = w.gate(allow=allow)
    proxy = "http://127.0.0.1:%d" % gate.port
    cert, _ = world.test_cert()
    print("aisb-gate %s listening on 127.0.0.1:%d" % (
        subprocess.run([world.GATE_BIN, "--version"], capture_output=True,
                       text=True).stdout.split()[-1], gate.port))
    print("allowlist: " + " ".join(allow))
    fmt = "-w", "HTTP %{http_code}\\n"
    try:
        show("allowed: plain HTTP to an allowlisted name",
             ["curl", "-sS", "-o", "/dev/null", *fmt, "-x", proxy,
              "http://test.example:%d/echo" % w.http.port], gate)
        show("allowed: HTTPS through CONNECT, SNI checked",
             ["curl", "-sS", "-o", "/dev/null", *fmt, "--cacert", cert,
              "-x", proxy, "https://test.example:%d/echo" % w.tls.port],
             gate)
        show("refused: a name the allowlist does not hold (no DNS query)",
             ["curl", "-sS", "-x", proxy,
              "http://evil.example:%d/" % w.http.port], gate)
        show("refused: an allowlisted name resolving to private and "
             "metadata addresses",
             ["curl", "-sS", "-x", proxy,
              "http://rebind.test.example:%d/" % w.http.port], gate)
        show("refused: the cloud metadata address as an IP literal",
             ["curl", "-sS", "-x", proxy,
              "http://169.254.169.254/latest/meta-data/"], gate)
        print("\nDNS queries the gate made: %s" % sorted(set(w.dns.names())))
    finally:
        w.close()


if __name__ == "__main__":
    main()
