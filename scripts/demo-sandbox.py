#!/usr/bin/env python3
"""
The main job: a real sandboxed run. As root, it drives ai-sandbox as the
unprivileged user tests/e2e/prepare-host made. A private test world stands
in for the internet: a fake DNS server answers for *.example, and web
servers on 127.0.0.2 (a loopback address, which the gate refuses unless an
IP entry covers it: hence the entry 127.0.0.2). Inside the sandbox, curl
makes one allowed HTTPS request, one allowed HTTP request, and refused
ones; afterwards the gate's log lines for the session are printed.
The first run builds the images (several minutes, progress shown).
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration", "gate"))

import e2elib  # noqa: E402
import world  # noqa: E402


def main():
    dns = world.FakeDns()
    http = world.HttpUpstream("127.0.0.2")
    tls = world.HttpUpstream("127.0.0.2", tls=True)
    dns.set("test.example", ["127.0.0.2"])
    dns.set("evil.example", ["127.0.0.2"])
    project = e2elib.user_tmpdir("aisb-demo-")
    cert, _ = world.test_cert()
    shutil.copy(cert, os.path.join(project, "cert.pem"))
    e2elib.chown_tree(project)
    env = {}
    ca = e2elib.extra_ca_file()
    args = [e2elib.AISB_BIN, "--no-tty",
            "--base-image", e2elib.BASE_IMAGE,
            "--dns-server", dns.addr,
            "--allow", "test.example:%d" % http.port,
            "--allow", "test.example:%d" % tls.port,
            "--allow", "127.0.0.2"]
    if ca:
        args += ["--ca-file", ca]
    why = e2elib.limits_unenforced()
    if why:
        print("note: %s here, so podman would ignore --memory, --cpus and "
              "--pids; the demo passes --allow-unenforced-limits, and "
              "ai-sandbox warns about it" % why)
        args += ["--allow-unenforced-limits"]
    script = (
        "echo '-- allowed: HTTPS to test.example through the gate';"
        "curl -sS -o /dev/null -w 'HTTP %%{http_code}\\n' "
        "--cacert /project/cert.pem https://test.example:%(t)d/echo;"
        "echo '-- allowed: HTTP to test.example through the gate';"
        "curl -sS -o /dev/null -w 'HTTP %%{http_code}\\n' "
        "http://test.example:%(h)d/echo;"
        "echo '-- refused: evil.example is not on the allowlist';"
        "curl -sS -w 'HTTP %%{http_code}\\n' http://evil.example:%(h)d/;"
        "echo '-- refused: a direct connection around the gate (3 s)';"
        "curl -sS -m 3 --noproxy '*' http://10.0.2.2:%(d)d/ "
        "|| echo 'blocked by the ruleset';"
        "echo '-- refused: undoing the ruleset from inside';"
        "nft flush ruleset 2>&1 | head -1;"
        "echo \"-- inside: uid $(id -u), $(grep CapEff /proc/self/status)\""
    ) % {"t": tls.port, "h": http.port, "d": dns.port}
    argv = args + ["--", "sh", "-c", script]
    print("$ cd %s" % project)
    print("$ " + " ".join(a if " " not in a else "'...'" for a in argv))
    sys.stdout.flush()
    r = e2elib.run_as_user(argv, cwd=project, env=env, timeout=3600,
                           stream=True)
    print("(ai-sandbox exit status %d)" % r.returncode)
    state = os.path.join(e2elib.user_info()[2], ".local", "state",
                         "ai-sandbox")
    runs = os.path.join(state, "runs.jsonl")
    if os.path.exists(runs):
        with open(runs) as f:
            last = json.loads(f.read().splitlines()[-1])
        glog = last.get("gate_log")
        print("\nrun log: %s" % json.dumps(last, separators=(",", ":")))
        if glog and os.path.exists(glog):
            print("\ngate log (%s):" % glog)
            with open(glog) as f:
                for line in f:
                    print("  " + line.rstrip())
    http.close()
    tls.close()
    dns.close()
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
