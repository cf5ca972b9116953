#!/usr/bin/env python3
"""
The enforced run, end to end: real podman, real nftables, real containers,
as the unprivileged test user. The test world lives on the host: a fake
DNS server for the gate and web servers on 127.0.0.2, which an IP entry
lets the gate reach.
"""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration", "gate"))

import e2elib  # noqa: E402
import world  # noqa: E402

CANARY = "aisb-canary-5f0c2e9d71"


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Sandbox:
    """One project directory and state directory for the test user."""

    def __init__(self, dns):
        self.project = e2elib.user_tmpdir("aisb-proj-")
        self.state = e2elib.user_tmpdir("aisb-state-")
        self.config = e2elib.user_tmpdir("aisb-config-")
        lines = ["base-image = %s" % e2elib.BASE_IMAGE,
                 "dns-server = %s" % dns.addr]
        if e2elib.limits_unenforced():
            # Rootless on cgroup v1: podman would ignore the caps, and
            # ai-sandbox refuses unless told (FailClosedTest checks that).
            lines.append("allow-unenforced-limits = yes")
        ca = e2elib.extra_ca_file()
        if ca and e2elib.CA_KEY:
            lines.append("%s = %s" % (e2elib.CA_KEY, ca))
        path = os.path.join(self.config, "config")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o600)
        e2elib.chown_tree(self.config)

    def env(self, extra=None):
        e = {"AISB_STATE_DIR": self.state, "AISB_CONFIG_DIR": self.config}
        if extra:
            e.update(extra)
        return e

    def run(self, args, env=None, timeout=1800):
        return e2elib.run_as_user([e2elib.AISB_BIN] + list(args),
                                  cwd=self.project, env=self.env(env),
                                  timeout=timeout)

    def popen(self, args, env=None):
        # The environment travels as the environment, never in argv, so
        # ps shows no value the test passes.
        e = e2elib.user_env(self.env(env))
        cmd = ["runuser", "-u", e2elib.USER, "--", e2elib.AISB_BIN]
        return subprocess.Popen(cmd + list(args), env=e,
                                cwd=self.project, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def runs(self):
        return records(os.path.join(self.state, "runs.jsonl"))


def containers(label):
    p = e2elib.podman("ps", "-a", "--format", "{{.Names}}", "--filter",
                      "label=" + label)
    return [n for n in p.stdout.split() if n]


class World:
    def __init__(self):
        self.dns = world.FakeDns()
        self.http = world.HttpUpstream("127.0.0.2")
        self.tls = world.HttpUpstream("127.0.0.2", tls=True)
        self.dns.set("test.example", ["127.0.0.2"])
        self.dns.set("evil.example", ["127.0.0.2"])

    def allow(self):
        return ["--allow", "test.example:%d" % self.http.port,
                "--allow", "test.example:%d" % self.tls.port,
                "--allow", "127.0.0.2"]

    def close(self):
        self.http.close()
        self.tls.close()
        self.dns.close()


class EgressTest(e2elib.E2ECase):
    """One sandbox run probes every way out; each test checks one."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.w = World()
        cls.sb = Sandbox(cls.w.dns)
        cert, _ = world.test_cert()
        shutil.copy(cert, os.path.join(cls.sb.project, "cert.pem"))
        shutil.copy(os.path.join(HERE, "probe.py"),
                    os.path.join(cls.sb.project, "probe.py"))
        e2elib.chown_tree(cls.sb.project)
        script = (
            "curl -sS -o /dev/null -w 'http %%{http_code}\\n' "
            "http://test.example:%(h)d/echo; "
            "curl -sS -o /dev/null -w 'https %%{http_code}\\n' "
            "--cacert /project/cert.pem https://test.example:%(t)d/echo; "
            "curl -sS -o /dev/null -w 'evil %%{http_code}\\n' "
            "http://evil.example:%(h)d/; "
            "python3 /project/probe.py 10.0.2.2 %(d)d %(t)d %(d)d "
            "udp-probe.example") % {"h": cls.w.http.port,
                                    "t": cls.w.tls.port,
                                    "d": cls.w.dns.port}
        cls.tls_conns_before = len(cls.w.tls.snis)
        cls.res = cls.sb.run(["--no-tty"] + cls.w.allow() +
                             ["--", "sh", "-c", script])
        out = cls.res.stdout
        cls.lines = out.splitlines()
        cls.probe = {}
        for line in cls.lines:
            if line.startswith("PROBE "):
                cls.probe = json.loads(line[6:])
        runs = cls.sb.runs()
        cls.run_rec = runs[-1] if runs else {}
        glog = cls.run_rec.get("gate_log")
        cls.gate = records(glog) if glog and os.path.exists(glog) else []

    @classmethod
    def tearDownClass(cls):
        cls.w.close()

    def explain(self):
        return "exit %d\nstdout:\n%s\nstderr:\n%s" % (
            self.res.returncode, self.res.stdout, self.res.stderr)

    def test_run_succeeded(self):
        self.assertEqual(self.res.returncode, 0, self.explain())
        self.assertTrue(self.probe, "the probe printed nothing\n" +
                        self.explain())

    def test_allowed_http_through_gate(self):
        self.assertIn("http 200", self.lines, self.explain())
        recs = [r for r in self.gate if r["method"] == "GET" and
                r["host"] == "test.example" and r["decision"] == "allow"]
        self.assertTrue(recs, self.gate)
        self.assertTrue(any(r.path == "/echo" for r in self.w.http.requests
                            if hasattr(r, "path")) or self.w.http.requests,
                        "the upstream saw no request")

    def test_allowed_https_through_gate(self):
        self.assertIn("https 200", self.lines, self.explain())
        recs = [r for r in self.gate if r["method"] == "CONNECT" and
                r["sni"] == "test.example" and r["decision"] == "allow"]
        self.assertTrue(recs, self.gate)

    def test_refused_name_403_and_logged(self):
        self.assertIn("evil 403", self.lines, self.explain())
        recs = [r for r in self.gate if r["host"] == "evil.example"]
        self.assertEqual(len(recs), 1, self.gate)
        self.assertEqual(recs[0]["decision"], "deny")
        self.assertEqual(recs[0]["status"], 403)
        self.assertNotIn("evil.example", self.w.dns.names(),
                         "a refused name caused a DNS query")

    def test_direct_tcp_blocked(self):
        # The host's fake DNS listens on TCP too: reachable without the
        # ruleset, so a timeout here is the ruleset's doing.
        self.assertIn(self.probe.get("direct_host_tcp"),
                      ("timeout", "error 1", "error 13", "error 111"),
                      self.probe)
        self.assertNotEqual(self.probe.get("direct_public_tcp"),
                            "connected", self.probe)

    def test_udp_gets_nothing_out(self):
        self.assertNotEqual(self.probe.get("udp_host_dns"), "answered")
        self.assertNotEqual(self.probe.get("udp_public_dns"), "answered")
        self.assertNotIn("udp-probe.example", self.w.dns.names(),
                         "a UDP query from the sandbox reached the host")

    def test_ipv6_gets_nothing_out(self):
        self.assertNotEqual(self.probe.get("ipv6_tcp"), "connected",
                            self.probe)

    def test_sni_mismatch_cut_before_upstream(self):
        self.assertIn("200", self.probe.get("sni_connect", ""), self.probe)
        self.assertTrue(self.probe.get("sni_mismatch", "").startswith(
            "cut"), self.probe)
        self.assertNotIn("other.example", self.w.tls.snis,
                         "the mismatching ClientHello reached the server")
        recs = [r for r in self.gate if r["sni"] == "other.example"]
        self.assertEqual(len(recs), 1, self.gate)
        self.assertEqual(recs[0]["decision"], "deny")

    def test_capabilities_all_gone(self):
        st = self.probe.get("status", {})
        for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            self.assertEqual(int(st.get(k, "1"), 16), 0, "%s %s" % (k, st))
        self.assertEqual(st.get("NoNewPrivs"), "1", st)

    def test_uid_1000_no_groups(self):
        self.assertEqual(self.probe.get("uid"), 1000)
        self.assertEqual(self.probe.get("gid"), 1000)
        self.assertEqual(self.probe.get("groups"), [])

    def test_ruleset_cannot_be_undone(self):
        for k in ("nft_flush", "unshare_net"):
            r = self.probe.get(k, {})
            self.assertNotEqual(r.get("rc"), 0, "%s succeeded" % k)
            self.assertRegex(r.get("err", ""),
                             "(?i)operation not permitted", k)

    def test_project_files_owned_by_host_user(self):
        uid, gid, _ = e2elib.user_info()
        path = os.path.join(self.sb.project, "written-by-sandbox")
        st = os.stat(path)
        self.assertEqual((st.st_uid, st.st_gid), (uid, gid))

    def test_nothing_outside_project_writable(self):
        self.assertNotIn("writable", self.probe, self.probe)

    def test_gate_gone_and_run_logged(self):
        self.assertEqual(containers("aisb.role=gate"), [])
        self.assertEqual(self.run_rec.get("exit"), 0, self.run_rec)
        self.assertTrue(self.run_rec.get("gate"), self.run_rec)


class FailClosedTest(e2elib.E2ECase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.w = World()
        cls.sb = Sandbox(cls.w.dns)

    @classmethod
    def tearDownClass(cls):
        cls.w.close()

    def test_no_net_admin_exits_77_and_never_runs(self):
        # The exact podman commands a run would execute, minus NET_ADMIN.
        marker = os.path.join(self.sb.project, "command-ran")
        pre = self.sb.run(["build"], timeout=3600)
        self.assertEqual(pre.returncode, 0, pre.stderr)
        dry = self.sb.run(["--dry-run", "--net", "none", "--no-tty", "--",
                           "touch", "/project/command-ran"])
        self.assertEqual(dry.returncode, 0, dry.stderr)
        argv_line = [l for l in dry.stdout.splitlines()
                     if not l.startswith("#")][-1]
        argv = [a for a in shlex.split(argv_line)
                if a != "--cap-add=NET_ADMIN" and
                not a.startswith("--env-file")]
        # "build" prints "sandbox TAG" and "gate TAG".
        tags = dict(l.split(None, 1) for l in pre.stdout.splitlines()
                    if l.startswith(("sandbox ", "gate ")))
        self.assertIn("sandbox", tags, pre.stdout)
        argv = [tags["sandbox"].strip() if a == "IMAGE-TAG" else a
                for a in argv]
        argv = [a.replace("SESSION", "failclosed") for a in argv]
        r = e2elib.run_as_user(argv, cwd=self.sb.project, timeout=300)
        self.assertEqual(r.returncode, 77, "%s\n%s" % (r.stdout, r.stderr))
        self.assertIn("cannot install the egress ruleset", r.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran")

    def test_unset_env_stops_before_any_container(self):
        before = containers("aisb.project=" + self.sb.project)
        r = self.sb.run(["--no-tty"] + self.w.allow() +
                        ["--env", "AISB_E2E_SURELY_UNSET", "--", "true"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("AISB_E2E_SURELY_UNSET", r.stderr)
        self.assertEqual(containers("aisb.project=" + self.sb.project),
                         before)
        self.assertFalse(os.path.exists(os.path.join(self.sb.state,
                                                     "runs.jsonl")))

    def test_unenforceable_limits_refused(self):
        why = e2elib.limits_unenforced()
        r = self.sb.run(["--no-tty"] + self.w.allow() + ["--", "true"],
                        env={"AISB_ALLOW_UNENFORCED_LIMITS": "no"})
        if why is None:
            self.assertEqual(r.returncode, 0, r.stderr)
            return
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertIn("--memory, --cpus and --pids would not be enforced",
                      r.stderr)
        self.assertIn(why, r.stderr)
        self.assertEqual(containers("aisb.project=" + self.sb.project), [])

    def test_empty_allowlist_refused(self):
        r = self.sb.run(["--no-tty", "--", "true"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(r.stderr, "(?i)allowlist")


class SecretAndLifecycleTest(e2elib.E2ECase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.w = World()
        cls.sb = Sandbox(cls.w.dns)

    @classmethod
    def tearDownClass(cls):
        cls.w.close()

    def all_text_under(self, path):
        found = []
        for root, _, files in os.walk(path):
            for n in files:
                p = os.path.join(root, n)
                try:
                    with open(p, "rb") as f:
                        if CANARY.encode() in f.read():
                            found.append(p)
                except OSError:
                    pass
        return found

    def test_canary_visible_inside_only(self):
        env = {"E2E_CANARY_SECRET": CANARY}
        args = ["--no-tty"] + self.w.allow() + \
            ["--env", "E2E_CANARY_SECRET", "--", "sh", "-c",
             'printf %%s "$E2E_CANARY_SECRET" | sha256sum; '
             'curl -sS -o /dev/null http://test.example:%d/echo; sleep 4'
             % self.w.http.port]
        p = self.sb.popen(args, env=env)
        seen_in_ps = []
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline:
            ps = subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                text=True).stdout
            if CANARY in ps:
                seen_in_ps.append(ps)
            time.sleep(0.3)
        out, err = p.communicate(timeout=600)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn(hashlib.sha256(CANARY.encode()).hexdigest(), out,
                      "the command did not see the value")
        self.assertEqual(seen_in_ps, [], "the canary showed in ps")
        dry = self.sb.popen(args[:1] + ["--dry-run"] + args[1:], env=env)
        dout, derr = dry.communicate(timeout=60)
        self.assertEqual(dry.returncode, 0, derr)
        self.assertNotIn(CANARY, dout + derr)
        self.assertEqual(self.all_text_under(self.sb.state), [],
                         "the canary is in the state directory")
        uid = e2elib.user_info()[0]
        self.assertEqual(self.all_text_under("/run/user/%d/ai-sandbox" % uid),
                         [])

    def test_gate_removed_after_sandbox_killed(self):
        p = self.sb.popen(["--no-tty"] + self.w.allow() +
                          ["--", "sleep", "120"])
        name = None
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and name is None:
            names = containers("aisb.role=sandbox")
            if names:
                name = names[0]
            elif p.poll() is not None:
                break
            time.sleep(0.5)
        self.assertIsNotNone(name, "no sandbox container appeared: %s"
                             % (p.communicate()[1] if p.poll() is not None
                                else ""))
        self.assertTrue(containers("aisb.role=gate"))
        e2elib.podman("kill", name)
        p.communicate(timeout=120)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(containers("aisb.role=gate"), [])

    def test_net_none_runs_without_gate(self):
        r = self.sb.run(["--no-tty", "--net", "none", "--", "sh", "-c",
                         "curl -sS -m 3 http://10.0.2.2/ || echo NO-NET"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("NO-NET", r.stdout)
        self.assertFalse(self.sb.runs()[-1]["gate"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
