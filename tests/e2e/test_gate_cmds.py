#!/usr/bin/env python3
"""
The named gate, end to end: gate up, status, a request through it, reload
(an open tunnel of a kept entry survives, one of a removed entry is cut),
logs with its per-destination audit and suggested --allow lines, down.
Real podman as the test user; the test world (fake DNS, an HTTP server and
echo servers on 127.0.0.2) lives on the host, which the named gate shares
its network with.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration", "gate"))

import e2elib  # noqa: E402
import world  # noqa: E402

NAME = "e2e-%d" % os.getpid()
CONTAINER = "aisb-gate-named-" + NAME


def recv_exactly(s, n, timeout=10):
    s.settimeout(timeout)
    data = b""
    while len(data) < n:
        d = s.recv(n - len(data))
        if not d:
            break
        data += d
    return data


def connect_tunnel(port, host, tport):
    """CONNECT through the gate; returns the socket after the 200."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" %
              (host.encode(), tport, host.encode(), tport))
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 4096:
        d = s.recv(1)
        if not d:
            break
        head += d
    return s, head


def http_get(port, url, timeout=10):
    """A forwarded GET through the gate; returns (status, body)."""
    host = url.split("/")[2]
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" %
              (url.encode(), host.encode()))
    data = b""
    s.settimeout(timeout)
    for _ in range(1000):
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    line = data.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 else 0, data


def is_closed(s, timeout=10):
    """True when the peer closes (or resets) within timeout."""
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


class NamedGateTest(e2elib.E2ECase):
    """One gate through its whole life; the steps run in order."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dns = world.FakeDns()
        cls.http = world.HttpUpstream("127.0.0.2")
        cls.keep_up = world.TcpUpstream("127.0.0.2", mode="echo")
        cls.drop_up = world.TcpUpstream("127.0.0.2", mode="echo")
        for n in ("web.example", "keep.example", "drop.example"):
            cls.dns.set(n, ["127.0.0.2"])
        cls.project = e2elib.user_tmpdir("aisb-gproj-")
        cls.state = e2elib.user_tmpdir("aisb-gstate-")
        cls.config = e2elib.user_tmpdir("aisb-gconfig-")
        lines = ["base-image = %s" % e2elib.BASE_IMAGE,
                 "dns-server = %s" % cls.dns.addr]
        ca = e2elib.extra_ca_file()
        if ca and e2elib.CA_KEY:
            lines.append("%s = %s" % (e2elib.CA_KEY, ca))
        path = os.path.join(cls.config, "config")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o600)
        os.makedirs(os.path.join(cls.project, ".ai-sandbox"))
        cls.write_allow(drop=True)
        e2elib.chown_tree(cls.config)
        cls.gate_port = None
        cls.keep = cls.drop = None

    @classmethod
    def write_allow(cls, drop):
        entries = ["web.example:%d" % cls.http.port,
                   "keep.example:%d/notls" % cls.keep_up.port,
                   "127.0.0.2"]
        if drop:
            entries.append("drop.example:%d/notls" % cls.drop_up.port)
        path = os.path.join(cls.project, ".ai-sandbox", "allow")
        with open(path, "w") as f:
            f.write("\n".join(entries) + "\n")
        os.chmod(path, 0o644)
        e2elib.chown_tree(cls.project)

    @classmethod
    def tearDownClass(cls):
        for s in (cls.keep, cls.drop):
            if s is not None:
                s.close()
        e2elib.podman("rm", "--force", "--time=0", CONTAINER)
        cls.http.close()
        cls.keep_up.close()
        cls.drop_up.close()
        cls.dns.close()

    def env(self):
        return {"AISB_STATE_DIR": self.state, "AISB_CONFIG_DIR": self.config}

    def aisb(self, *args, timeout=1800):
        return e2elib.run_as_user([e2elib.AISB_BIN] + list(args),
                                  cwd=self.project, env=self.env(),
                                  timeout=timeout)

    def explain(self, r):
        return "exit %d\nstdout:\n%s\nstderr:\n%s" % (
            r.returncode, r.stdout, r.stderr)

    def need_gate(self):
        if self.__class__.gate_port is None:
            self.fail("gate up did not succeed earlier")
        return self.__class__.gate_port

    def gate_dir(self, *rest):
        return os.path.join(self.state, "gates", NAME, *rest)

    def test_01_up(self):
        r = self.aisb("gate", "up", "--name", NAME)
        self.assertEqual(r.returncode, 0, self.explain(r))
        with open(self.gate_dir("port")) as f:
            port = int(f.read().strip())
        self.assertIn("gate %s up on 127.0.0.1:%d" % (NAME, port), r.stdout)
        self.__class__.gate_port = port
        insp = e2elib.podman("container", "inspect", "--format",
                             "{{.State.Running}} {{.HostConfig.AutoRemove}} "
                             "{{index .Config.Labels \"aisb.role\"}} "
                             "{{index .Config.Labels \"aisb.gate-name\"}} "
                             "{{index .Config.Labels \"aisb.gate-port\"}} "
                             "{{index .Config.Labels \"aisb.session\"}}",
                             CONTAINER)
        self.assertEqual(insp.returncode, 0, insp.stderr)
        self.assertEqual(insp.stdout.split(),
                         ["true", "false", "gate", NAME, str(port),
                          "named-" + NAME])
        st = os.stat(self.gate_dir("allow"))
        self.assertEqual(st.st_mode & 0o777, 0o600)
        with open(self.gate_dir("allow")) as f:
            text = f.read()
        self.assertIn("drop.example:%d/notls" % self.drop_up.port, text)

        again = self.aisb("gate", "up", "--name", NAME)
        self.assertEqual(again.returncode, 1, self.explain(again))
        self.assertIn("already up on 127.0.0.1:%d" % port, again.stderr)

    def test_02_requests_and_tunnels(self):
        port = self.need_gate()
        status, body = http_get(port, "http://web.example:%d/echo" %
                                self.http.port)
        self.assertEqual(status, 200, body[:300])
        status, _ = http_get(port, "http://evil.example/")
        self.assertEqual(status, 403)
        self.assertNotIn("evil.example", self.dns.names())
        for attr, host, up in (("keep", "keep.example", self.keep_up),
                               ("drop", "drop.example", self.drop_up)):
            s, head = connect_tunnel(port, host, up.port)
            self.assertTrue(head.startswith(b"HTTP/1.1 200"), head)
            s.sendall(b"ping-" + host.encode())
            self.assertEqual(recv_exactly(s, 5 + len(host)),
                             b"ping-" + host.encode())
            setattr(self.__class__, attr, s)

    def test_03_status(self):
        self.need_gate()
        r = self.aisb("gate", "status", "--name", NAME)
        self.assertEqual(r.returncode, 0, self.explain(r))
        out = r.stdout
        self.assertRegex(out, r"gate %s: running, up \d+s" % NAME)
        self.assertIn("listen     127.0.0.1:%d" % self.gate_port, out)
        self.assertIn("    web.example:%d\n" % self.http.port, out)
        self.assertIn("    keep.example:%d/notls\n" % self.keep_up.port, out)
        self.assertIn("    127.0.0.2\n", out)
        # The open tunnels are logged when they end.
        self.assertIn("requests   1 allowed, 1 denied since it started", out)

    def test_04_reload_keeps_kept_cuts_removed(self):
        self.need_gate()
        self.assertIsNotNone(self.keep, "no tunnels from step 2")
        self.write_allow(drop=False)
        r = self.aisb("gate", "reload", "--name", NAME)
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertIn("gate %s reloaded: 3 allowlist entries" % NAME,
                      r.stdout)
        with open(self.gate_dir("allow")) as f:
            self.assertNotIn("drop.example", f.read())
        self.assertTrue(is_closed(self.drop), "the removed entry's tunnel "
                        "stayed open")
        self.keep.sendall(b"after-reload")
        self.assertEqual(recv_exactly(self.keep, 12), b"after-reload")
        s, head = connect_tunnel(self.gate_port, "drop.example",
                                 self.drop_up.port)
        self.assertTrue(head.startswith(b"HTTP/1.1 403"), head)
        s.close()

    def test_05_logs_table(self):
        self.need_gate()
        r = self.aisb("gate", "logs", "--name", NAME)
        self.assertEqual(r.returncode, 0, self.explain(r))
        out = r.stdout
        self.assertIn("log: %s" % self.gate_dir("log", "gate.log"), out)
        rows = {l.split()[0]: l.split() for l in out.splitlines()
                if l and not l.startswith(" ") and ":" in l.split()[0]}
        web = rows.get("web.example:%d" % self.http.port)
        self.assertIsNotNone(web, out)
        self.assertEqual(web[1:3], ["1", "0"], out)
        self.assertGreater(int(web[4]), 0, "bytes down")
        drop = rows.get("drop.example:%d" % self.drop_up.port)
        self.assertEqual(drop[1:3], ["0", "2"], out)
        self.assertEqual(rows.get("evil.example:80")[1:3], ["0", "1"], out)
        self.assertIn("denied: allowlist reloaded: entry removed (1), "
                      "not allowlisted (1)", out)
        self.assertIn("4 requests: 1 allowed, 3 denied", out)

    def test_06_logs_denied_and_json(self):
        self.need_gate()
        r = self.aisb("gate", "logs", "--name", NAME, "--denied")
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertIn("evil.example:80: 1 denied", r.stdout)
        self.assertIn("\n  --allow evil.example\n", r.stdout)
        self.assertIn("\n  --allow drop.example:%d\n" % self.drop_up.port,
                      r.stdout)
        self.assertNotIn("web.example", r.stdout)

        r = self.aisb("gate", "logs", "--name", NAME, "--json")
        self.assertEqual(r.returncode, 0, self.explain(r))
        doc = json.loads(r.stdout)
        self.assertEqual((doc["requests"], doc["allowed"], doc["denied"]),
                         (4, 1, 3))
        evil = [d for d in doc["destinations"] if d["host"] == "evil.example"]
        self.assertEqual(evil[0]["suggest"], ["--allow evil.example"])

        later = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                              time.gmtime(time.time() + 3600))
        r = self.aisb("gate", "logs", "--name", NAME, "--since", later,
                      "--json")
        self.assertEqual(json.loads(r.stdout)["requests"], 0, r.stdout)
        self.assertEqual(json.loads(r.stdout)["left_out"], 4)
        r = self.aisb("gate", "logs", "--name", NAME, "--since", "1h")
        self.assertIn("4 requests", r.stdout)
        r = self.aisb("gate", "logs", "--name", NAME, "--since", "soon")
        self.assertEqual(r.returncode, 2, self.explain(r))
        self.assertIn("--since soon: expected an RFC 3339 time", r.stderr)

    def test_07_logs_follow(self):
        port = self.need_gate()
        e = e2elib.user_env(self.env())
        p = subprocess.Popen(["runuser", "-u", e2elib.USER, "--",
                              e2elib.AISB_BIN, "gate", "logs", "--name",
                              NAME, "--follow", "--denied"],
                             env=e, cwd=self.project,
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        try:
            time.sleep(1.5)
            http_get(port, "http://follow.example/")
            line = ""
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and \
                    "follow.example" not in line:
                line = p.stdout.readline()
                if not line:
                    break
            self.assertIn("deny   follow.example:80  GET 403  not "
                          "allowlisted", line)
            self.assertEqual(p.stdout.readline(),
                             "  --allow follow.example\n")
        finally:
            # The launcher is runuser's child: signal it by its pid.
            with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
                kids = f.read().split()
            for k in kids:
                os.kill(int(k), signal.SIGINT)
            try:
                p.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 0)

    def test_08_session_logs(self):
        # A session's log as a run leaves it (the lines a gate writes).
        d = os.path.join(self.state, "sessions", "0123456789ab", "log")
        os.makedirs(d)
        with open(self.gate_dir("log", "gate.log")) as f:
            lines = f.read().splitlines()
        with open(os.path.join(d, "gate.log"), "w") as f:
            f.write("\n".join(lines[:2] + ["garbage {"] + lines[2:]) + "\n")
        e2elib.chown_tree(os.path.join(self.state, "sessions"))
        r = self.aisb("gate", "logs", "--session", "0123456789ab")
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertIn("1 line skipped\n  skipped line 3: not JSON", r.stdout)
        r = self.aisb("gate", "logs", "--session", "../x")
        self.assertEqual(r.returncode, 2, self.explain(r))
        r = self.aisb("gate", "logs", "--session", "nosuchsession")
        self.assertEqual(r.returncode, 1, self.explain(r))
        self.assertIn("No such file", r.stderr)

    def test_08_z_run_through_named_gate(self):
        self.need_gate()
        logp = self.gate_dir("log", "gate.log")
        with open(logp) as f:
            before = len(f.read().splitlines())
        args = ["--no-tty", "--gate", NAME]
        if e2elib.limits_unenforced():
            args.append("--allow-unenforced-limits")
        r = self.aisb(*(args + ["--", "curl", "-sS", "-o", "/dev/null",
                                "-w", "code %{http_code}\n",
                                "http://web.example:%d/echo" %
                                self.http.port]))
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertIn("code 200", r.stdout)
        with open(logp) as f:
            new = [json.loads(l) for l in f.read().splitlines()[before:]]
        self.assertTrue([x for x in new if x["host"] == "web.example" and
                         x["decision"] == "allow"], new)
        # No gate of its own: only the named gate is running.
        names = e2elib.podman("ps", "--format", "{{.Names}}", "--filter",
                              "label=aisb.role=gate").stdout.split()
        self.assertEqual(names, [CONTAINER])

    def test_09_down(self):
        self.need_gate()
        r = self.aisb("gate", "down", "--name", NAME, timeout=120)
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertIn("gate %s down" % NAME, r.stdout)
        p = e2elib.podman("container", "exists", CONTAINER)
        self.assertEqual(p.returncode, 1, "the container is still there")
        self.assertFalse(os.path.exists(self.gate_dir("port")))
        self.assertTrue(os.path.exists(self.gate_dir("log", "gate.log")))
        self.assertTrue(is_closed(self.keep), "a tunnel outlived the gate")
        r = self.aisb("gate", "status", "--name", NAME)
        self.assertEqual(r.returncode, 1, self.explain(r))
        self.assertIn("gate %s is not up" % NAME, r.stderr)
        r = self.aisb("gate", "down", "--name", NAME)
        self.assertEqual(r.returncode, 1, self.explain(r))
        # The kept tunnel's record came when the gate stopped.
        r = self.aisb("gate", "logs", "--name", NAME, "--json")
        keep = [d for d in json.loads(r.stdout)["destinations"]
                if d["host"] == "keep.example"]
        self.assertEqual(len(keep), 1, r.stdout)
        self.assertGreaterEqual(keep[0]["bytes_up"], len("ping-keep.example"
                                                         "after-reload"))

    def test_10_usage_errors(self):
        for args, text in ((["gate"], "give one of up, status"),
                           (["gate", "sideways"], "sideways: not one of"),
                           (["gate", "up", "--name", "-bad"], "--name -bad"),
                           (["gate", "status", "--allow", "x.example"],
                            "--allow: unknown flag"),
                           (["gate", "logs", "--session", "a", "--name",
                             "b"], "exclude each other")):
            r = self.aisb(*args)
            self.assertEqual(r.returncode, 2, self.explain(r))
            self.assertIn(text, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
