#!/usr/bin/env python3
"""
aisb-gate integration: command line, config checks, signals, limits,
timeouts and the log.

Run: AISB_GATE=build/gate/aisb-gate python3 tests/integration/gate/test_ops.py -v
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import world as W  # noqa: E402


def run_gate(*args, timeout=15):
    """Run the binary to completion; (rc, stdout, stderr)."""
    p = subprocess.run([W.GATE_BIN] + list(args), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), \
        p.stderr.decode(errors="replace")


def write_file(path, text, mode=0o644):
    """Replace path atomically (write, chmod, rename)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.rename(tmp, path)


class CommandLineTest(W.GateTestCase):
    """Runs of the binary that end by themselves (one gate for the class
    is started too, and must keep working)."""

    def test_version(self):
        rc, out, err = run_gate("--version")
        self.assertEqual(rc, 0, err)
        self.assertIn("0.1.0", out + err)

    def test_help(self):
        rc, out, err = run_gate("--help")
        self.assertEqual(rc, 0, err)
        for opt in ("--listen", "--allow", "--allow-file", "--dns-server",
                "--log", "--sni", "--check"):
            self.assertIn(opt, out, "--help does not mention %s" % opt)

    def test_unknown_option(self):
        rc, out, err = run_gate("--listen", "127.0.0.1:1", "--allow",
            "x.example", "--no-such-option")
        self.assertNotEqual(rc, 0)
        self.assertIn("no-such-option", err)

    def test_bad_option_values(self):
        for args, word in ((["--listen", "127.0.0.1:0"], "listen"),
                (["--listen", "127.0.0.1:99999"], "listen"),
                (["--listen", "nonsense"], "listen"),
                (["--max-conns", "zero"], "max-conns"),
                (["--head-timeout", "-1"], "head-timeout"),
                (["--sni", "maybe"], "sni"),
                (["--dns-server", "not an address"], "dns-server")):
            with self.subTest(args=args):
                a = ["--listen", "127.0.0.1:%d" % W.free_port(), "--allow",
                    "x.example"] + args
                rc, out, err = run_gate(*a, timeout=10)
                self.assertNotEqual(rc, 0, "%r accepted" % args)
                self.assertIn(word, err, "%r: the error does not name the "
                    "option: %r" % (args, err))

    def test_n_good_config(self):
        d = W.tmpdir()
        f = os.path.join(d, "allow")
        write_file(f, "# comment\n\nexample.com\napi.example.org:8443\n"
            "10.0.0.0/8\n[2001:db8::1]:443\nplain.example:8080/notls\n")
        rc, out, err = run_gate("-n", "--listen", "127.0.0.1:1",
            "--allow-file", f, "--allow", "other.example")
        self.assertEqual(rc, 0, err)

    def test_n_bad_file_names_file_and_line(self):
        d = W.tmpdir()
        for text, line in (("good.example\nbad..name\n", 2),
                ("# c\n\ngood.example\nx.example:99999\n", 4),
                ("a.example\nb.example:443/tls\n", 2),
                ("under_score.example\n", 1),
                ("1.2.3.4/33\n", 1)):
            with self.subTest(text=text):
                f = os.path.join(d, "allow")
                write_file(f, text)
                rc, out, err = run_gate("-n", "--listen", "127.0.0.1:1",
                    "--allow-file", f)
                self.assertNotEqual(rc, 0, "bad file accepted: %r" % text)
                self.assertIn("%s:%d:" % (f, line), err)

    def test_n_bad_allow_flag(self):
        rc, out, err = run_gate("-n", "--listen", "127.0.0.1:1",
            "--allow", "bad..name")
        self.assertNotEqual(rc, 0)
        self.assertIn("bad..name", err)

    def test_writable_allowlist_refused(self):
        d = W.tmpdir()
        f = os.path.join(d, "allow")
        for mode in (0o666, 0o664, 0o646):
            with self.subTest(mode=oct(mode)):
                write_file(f, "example.com\n", mode)
                rc, out, err = run_gate("-n", "--listen", "127.0.0.1:1",
                    "--allow-file", f)
                self.assertNotEqual(rc, 0, "mode %o accepted" % mode)
                self.assertIn(f, err)
        # and the gate proper does not start with it
        write_file(f, "example.com\n", 0o666)
        g = W.Gate(self.world.dns, allow=[], allow_files=[f])
        self.world.gates.append(g)
        with self.assertRaises(W.GateError):
            g.start()
        self.assertNotEqual(g.rc, 0)

    def test_missing_allow_file(self):
        f = os.path.join(W.tmpdir(), "nonexistent")
        rc, out, err = run_gate("-n", "--listen", "127.0.0.1:1",
            "--allow-file", f)
        self.assertNotEqual(rc, 0)
        self.assertIn(f, err)

    def test_check(self):
        cases = [
            (["--allow", "example.com"], "www.example.com",
                0, "allow www.example.com:443 rule=example.com"),
            (["--allow", "example.com"], "example.com:80", 1,
                "deny example.com:80 reason="),
            (["--allow", "example.com:8443"], "example.com:8443",
                0, "allow example.com:8443 rule=example.com:8443"),
            (["--allow", "10.0.0.0/8"], "10.1.2.3:5432",
                0, "allow 10.1.2.3:5432 rule=10.0.0.0/8"),
            (["--allow", "example.com"], "evil.com", 1,
                "deny evil.com:443 reason="),
            (["--allow", "example.com"], "example.com:8443", 1,
                "deny example.com:8443 reason="),
            (["--allow", "example.com"], "notexample.com", 1,
                "deny notexample.com:443 reason="),
            (["--allow", "example.com"], "127.0.0.1:80", 1,
                "deny 127.0.0.1:80 reason="),
        ]
        for args, target, want_rc, want in cases:
            with self.subTest(args=args, target=target):
                rc, out, err = run_gate(*(args + ["--check", target]))
                self.assertEqual(rc, want_rc, "%r %r" % (out, err))
                lines = out.splitlines()
                self.assertEqual(len(lines), 1, "want one line: %r" % out)
                if want.endswith("="):
                    self.assertTrue(lines[0].startswith(want), lines[0])
                    self.assertGreater(len(lines[0]), len(want), lines[0])
                else:
                    # "allow HOST:PORT rule=ENTRY", maybe more after a space
                    self.assertTrue(lines[0] == want or
                        lines[0].startswith(want + " "), lines[0])


class SignalTest(W.GateTestCase):

    def get(self, gate, host="test.example", path="/echo"):
        hp = ("%s:%d" % (host, self.world.http.port)).encode()
        return W.exchange(gate, b"GET http://%s%s HTTP/1.1\r\nHost: %s\r\n"
            b"\r\n" % (hp, path.encode(), hp))

    def status(self, gate, host="test.example"):
        r = self.get(gate, host)
        return r.status if r is not None else None

    def wait_status(self, gate, host, want, timeout=5):
        return W.wait_until(lambda: self.status(gate, host) == want,
            timeout, step=0.2)

    def test_sighup_reload(self):
        p = self.world.http.port
        self.world.dns.set("second.example", ["127.0.0.2"])
        d = W.tmpdir()
        f = os.path.join(d, "allow")
        write_file(f, "test.example:%d\n" % p)
        g = self.new_gate(allow=["127.0.0.2"], allow_files=[f])
        self.assertEqual(self.status(g), 200, self.diag(g))
        self.assertEqual(self.status(g, "second.example"), 403)

        write_file(f, "# swapped\nsecond.example:%d\n" % p)
        g.signal(signal.SIGHUP)
        self.assertTrue(self.wait_status(g, "second.example", 200),
            "SIGHUP did not add an entry" + self.diag(g))
        self.assertEqual(self.status(g, "test.example"), 403,
            "SIGHUP did not remove an entry")

        write_file(f, "test.example:%d\nthis is not an entry\n" % p)
        g.signal(signal.SIGHUP)
        said = W.wait_until(lambda: f in g.stderr() or
            f.encode() in b"".join(g.log_lines()), 5)
        self.assertTrue(said, "a bad file on reload was not reported"
            + self.diag(g))
        self.assertTrue(g.alive(), "a bad file on reload killed the gate")
        self.assertEqual(self.status(g, "second.example"), 200,
            "a bad file on reload dropped the old list")
        self.assertEqual(self.status(g, "test.example"), 403,
            "a bad file on reload was partly applied")

        write_file(f, "test.example:%d\n" % p, 0o666)
        g.signal(signal.SIGHUP)
        time.sleep(1)
        self.assertTrue(g.alive())
        self.assertEqual(self.status(g, "test.example"), 403,
            "a world-writable file was loaded on reload")
        self.assertEqual(self.status(g, "second.example"), 200)
        os.chmod(f, 0o644)
        g.signal(signal.SIGHUP)
        self.assertTrue(self.wait_status(g, "test.example", 200),
            "a good file after a bad one was not loaded")

    def test_sighup_cuts_tunnel_to_removed_entry(self):
        d = W.tmpdir()
        f = os.path.join(d, "allow")
        target = "test.example:%d" % self.world.echo.port
        write_file(f, target + "/notls\n")
        g = self.new_gate(allow=["127.0.0.2"], allow_files=[f])
        s, resp = W.connect_tunnel(g, target)
        try:
            self.assertEqual(resp.status, 200, resp)
            s.sendall(b"ping")
            self.assertEqual(W.Reader(s).exactly(4), b"ping")
            write_file(f, "# nothing\n")
            g.signal(signal.SIGHUP)
            self.assertTrue(W.closed_within(s, 5), "a tunnel to a removed "
                "entry stayed open after SIGHUP")
        finally:
            s.close()
        self.assertTrue(g.alive())

    def test_sigterm_idle(self):
        g = self.new_gate(args=["--drain-timeout", "2"])
        g.signal(signal.SIGTERM)
        rc = g.wait(5)
        self.assertEqual(rc, 0, "SIGTERM: rc=%r%s" % (rc, self.diag(g)))
        g.stop()

    def test_sigterm_drains_inflight(self):
        g = self.new_gate(args=["--drain-timeout", "10"])
        out = {}

        def slow():
            out["r"] = self.get(g, path="/slow?ms=1500&n=100000")
        t = threading.Thread(target=slow, daemon=True)
        t.start()
        self.assertTrue(W.wait_until(lambda: self.world.http.got(), 5),
            "the slow request did not reach the upstream" + self.diag(g))
        g.signal(signal.SIGTERM)
        time.sleep(0.3)
        # new connections are not served while draining
        refused = False
        try:
            s = socket.create_connection(("127.0.0.1", g.port), timeout=2)
            s.sendall(b"GET http://test.example:%d/echo HTTP/1.1\r\n"
                b"Host: test.example:%d\r\n\r\n" % (self.world.http.port,
                self.world.http.port))
            r = W.read_response(W.Reader(s))
            refused = r is None or r.status >= 500
            s.close()
        except (ConnectionError, socket.timeout, OSError):
            refused = True
        self.assertTrue(refused, "a new request was served after SIGTERM")
        t.join(10)
        r = out.get("r")
        self.assertIsNotNone(r, "the in-flight request was cut by SIGTERM")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(W.sha(r.body), W.sha(W.pattern(100000)))
        rc = g.wait(10)
        self.assertEqual(rc, 0, self.diag(g))
        g.record_for(host="test.example", status=200)
        g.stop()

    def test_sigterm_drain_timeout_bounds_exit(self):
        g = self.new_gate(args=["--drain-timeout", "1"])
        s, resp = W.connect_tunnel(g, "test.example:%d"
            % self.world.echo.port)
        try:
            self.assertEqual(resp.status, 200, resp)
            t0 = time.monotonic()
            g.signal(signal.SIGTERM)
            rc = g.wait(6)
            took = time.monotonic() - t0
            self.assertEqual(rc, 0, "rc=%r after %.1fs%s" % (rc, took,
                self.diag(g)))
            self.assertLess(took, 1 + 3)
            self.assertTrue(W.closed_within(s, 2), "tunnel left open")
        finally:
            s.close()
        g.stop()


class LimitsTest(W.GateTestCase):

    def echo_tunnel(self, gate):
        s, resp = W.connect_tunnel(gate, "test.example:%d"
            % self.world.echo.port)
        self.assertIsNotNone(resp, "CONNECT unanswered" + self.diag(gate))
        self.assertEqual(resp.status, 200, resp)
        s.sendall(b"ping")
        self.assertEqual(W.Reader(s).exactly(4), b"ping")
        return s

    def get_raw(self, gate):
        hp = b"test.example:%d" % self.world.http.port
        return W.exchange(gate, b"GET http://%s/echo HTTP/1.1\r\nHost: %s\r\n"
            b"\r\n" % (hp, hp))

    def test_max_conns(self):
        g = self.new_gate(args=["--max-conns", "2"])
        a = self.echo_tunnel(g)
        b = self.echo_tunnel(g)
        try:
            r = self.get_raw(g)
            self.assertIsNotNone(r, "no answer past --max-conns"
                + self.diag(g))
            self.assertEqual(r.status, 503, r)
            self.assertEqual(self.world.http.got(), [])
        finally:
            a.close()
        try:
            ok = W.wait_until(lambda: (self.get_raw(g) or W.Response(0, "",
                [], b"", b"")).status == 200, 5, step=0.2)
            self.assertTrue(ok, "a freed slot was not reused" + self.diag(g))
        finally:
            b.close()

    def test_head_timeout_slowloris(self):
        g = self.new_gate(args=["--head-timeout", "2"])
        s = W.gate_socket(g)
        t0 = time.monotonic()
        closed = False
        try:
            s.sendall(b"GET http://test.example:%d/echo HTTP/1.1\r\n"
                % self.world.http.port)
            for _ in range(30):
                try:
                    s.sendall(b"X")
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                if W.closed_within(s, 0.3):
                    closed = True
                    break
        finally:
            s.close()
        took = time.monotonic() - t0
        self.assertTrue(closed, "slowloris connection open after %.1fs with "
            "--head-timeout 2" % took)
        self.assertLess(took, 2 + 2.5, "closed only after %.1fs" % took)
        self.assertUntouched(self.world.http)

    def test_head_timeout_silent_client(self):
        g = self.new_gate(args=["--head-timeout", "2"])
        s = W.gate_socket(g)
        t0 = time.monotonic()
        try:
            self.assertTrue(W.closed_within(s, 6), "silent client kept")
        finally:
            s.close()
        self.assertLess(time.monotonic() - t0, 2 + 2.5)

    def test_idle_timeout_tunnel(self):
        g = self.new_gate(args=["--idle-timeout", "2"])
        s = self.echo_tunnel(g)
        t0 = time.monotonic()
        try:
            self.assertTrue(W.closed_within(s, 7), "idle tunnel kept")
        finally:
            s.close()
        took = time.monotonic() - t0
        self.assertGreater(took, 1.5, "idle tunnel closed too early")
        self.assertLess(took, 2 + 3)

    def test_tls_timeout(self):
        g = self.new_gate(args=["--tls-timeout", "2"])
        target = "test.example:%d" % self.world.tls.port
        s, resp = W.connect_tunnel(g, target)
        t0 = time.monotonic()
        try:
            self.assertEqual(resp.status, 200, resp)
            self.assertTrue(W.closed_within(s, 7),
                "tunnel waiting for a ClientHello kept open")
        finally:
            s.close()
        self.assertLess(time.monotonic() - t0, 2 + 3)
        # a ClientHello dripped slowly is cut by the same deadline
        hello = W.hello_bytes("test.example")
        s, resp = W.connect_tunnel(g, target)
        t0 = time.monotonic()
        closed = False
        try:
            for i in range(len(hello) - 1):
                try:
                    s.sendall(hello[i:i + 1])
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                if W.closed_within(s, 0.3):
                    closed = True
                    break
                if time.monotonic() - t0 > 8:
                    break
        finally:
            s.close()
        self.assertTrue(closed, "dripped ClientHello not cut")
        self.assertLess(time.monotonic() - t0, 2 + 3)
        self.assertNoBytes(self.world.tls)


class LogTest(W.GateTestCase):

    def get_raw(self, gate):
        hp = b"test.example:%d" % self.world.http.port
        return W.exchange(gate, b"GET http://%s/echo HTTP/1.1\r\nHost: %s\r\n"
            b"\r\n" % (hp, hp))

    def test_log_to_stdout(self):
        g = self.new_gate(log="-")
        r = self.get_raw(g)
        self.assertEqual(r.status, 200, r)
        recs = g.find(lambda x: x["host"] == "test.example")
        self.assertEqual(len(recs), 1, g.stdout())

    def test_sighup_reopens_log(self):
        g = self.new_gate()
        r = self.get_raw(g)
        self.assertEqual(r.status, 200, r)
        g.find(lambda x: x["host"] == "test.example")
        rotated = g.logpath + ".1"
        os.rename(g.logpath, rotated)
        g.signal(signal.SIGHUP)
        ok = W.wait_until(lambda: os.path.exists(g.logpath), 5)
        r = self.get_raw(g)
        self.assertEqual(r.status, 200, r)
        g.base = 0
        recs = g.find(lambda x: x["host"] == "test.example")
        self.assertTrue(ok and len(recs) == 1, "after rotation and SIGHUP "
            "the new log holds %d records%s" % (len(recs), self.diag(g)))
        with open(rotated, "rb") as f:
            old = [ln for ln in f.read().split(b"\n") if ln]
        self.assertEqual(len(old), 1, old)

    def test_records_whole_under_load_and_on_stop(self):
        # Records finished in one loop turn share one write(2): under
        # concurrent load every request still has exactly one whole line,
        # and the last turn's records are written when the gate stops.
        g = self.new_gate(args=["--drain-timeout", "1"])
        n_threads, per = 16, 8
        ids = []
        lock = threading.Lock()

        def client(t):
            for i in range(per):
                hp = b"test.example:%d" % self.world.http.port
                r = W.exchange(g, b"GET http://%s/echo?%d.%d HTTP/1.1\r\n"
                    b"Host: %s\r\nConnection: close\r\n\r\n" % (hp, t, i,
                    hp))
                with lock:
                    ids.append(r.status if r is not None else None)

        threads = [threading.Thread(target=client, args=(t,))
            for t in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(ids, [200] * (n_threads * per), self.diag(g))
        # A tunnel still open is cut after the drain, after the loop's
        # last turn: its record must be written all the same.
        s, resp = W.connect_tunnel(g, "test.example:%d" %
            self.world.echo.port)
        try:
            self.assertEqual(resp.status, 200, resp)
            g.stop()
        finally:
            s.close()
        recs = [r for r in g.records() if r["host"] == "test.example"]
        cut = [r for r in recs if r["method"] == "CONNECT"]
        self.assertEqual([r["decision"] for r in cut], ["allow"],
            "the record of the tunnel cut on stop: %r" % cut)
        recs = [r for r in recs if r["method"] == "GET"]
        self.assertEqual(len(recs), n_threads * per,
            "records for %d requests: %d" % (n_threads * per, len(recs)))
        self.assertEqual(len({r["id"] for r in recs}), len(recs),
            "a record was written twice")

    def test_log_unwritable(self):
        g = W.Gate(self.world.dns, allow=self.world.base_allow(),
            log="/dev/full")
        self.world.gates.append(g)
        try:
            g.start()
        except W.GateError:
            # refusing to start is fail-closed too, if it says why
            self.assertNotEqual(g.rc, 0)
            self.assertTrue("/dev/full" in g.stderr() or "log" in
                g.stderr().lower(), g.stderr())
            return
        statuses = []
        for _ in range(3):
            r = self.get_raw(g)
            statuses.append(r.status if r is not None else None)
            time.sleep(0.3)
        served = len(self.world.http.got())
        self.assertLessEqual(served, 1, "served %d requests it could not "
            "log: statuses %r%s" % (served, statuses, self.diag(g)))
        self.assertEqual(statuses[1:], [503, 503], "statuses %r" % statuses)

    def test_records_from_hostile_bytes(self):
        p = self.world.http.port
        reqs = [
            b"GET http://te\x01st.example:%d/ HTTP/1.1\r\nHost: x\r\n\r\n" % p,
            b"GET http://t\xffe\xc3(st.example:%d/ HTTP/1.1\r\nHost: x\r\n"
            b"\r\n" % p,
            b"CONNECT \x1b[31mred\x1b[0m.example:443 HTTP/1.1\r\n\r\n",
            b"CONNECT \"q\\uote\".example:443 HTTP/1.1\r\n\r\n",
            b"G\x00T http://test.example:%d/ HTTP/1.1\r\n\r\n" % p,
            b"GE\xe9T http://test.example:%d/ HTTP/1.1\r\n\r\n" % p,
            b"GET http://test.example:%d/\xff\"\\\x7f HTTP/1.1\r\n"
            b"Host: test.example:%d\r\n\r\n" % (p, p),
            b"GET http://test.example:%d/ HTTP/1.1\r\nHost: te\nst\r\n\r\n"
            % p,
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64
            + b"\r\n\r\n",
        ]
        self.gate.mark()
        for raw in reqs:
            with self.subTest(raw=raw):
                r = W.exchange(self.gate, raw, timeout=5)
                self.assertIsNotNone(r, "no answer to %r%s" % (raw,
                    self.diag()))
                self.assertEqual(r.status, 400, r)
        W.wait_until(lambda: len(self.gate.log_lines()) - self.gate.base
            >= len(reqs), 5)
        lines = self.gate.log_lines()[self.gate.base:]
        self.assertGreaterEqual(len(lines), len(reqs),
            "fewer records than refused requests" + self.diag())
        for ln in lines:
            W.check_record(ln)
            self.assertFalse(any(c < 0x20 for c in ln),
                "raw control byte in a log line: %r" % ln)
        self.assertEqual(self.world.dns.names(), [])
        self.assertUntouched(self.world.http)

    def test_record_ids_unique_and_timings(self):
        for _ in range(3):
            r = self.get_raw(self.gate)
            self.assertEqual(r.status, 200, r)
        recs = self.gate.find(lambda x: x["host"] == "test.example")
        W.wait_until(lambda: len(self.gate.find(
            lambda x: x["host"] == "test.example", 0)) >= 3, 5)
        recs = self.gate.find(lambda x: x["host"] == "test.example")
        self.assertEqual(len(recs), 3, recs)
        self.assertEqual(len({json.dumps(r["id"]) for r in recs}), 3, recs)
        for rec in recs:
            self.assertLessEqual(rec["dns_ms"], rec["duration_ms"], rec)
            self.assertLessEqual(rec["connect_ms"], rec["duration_ms"], rec)


if __name__ == "__main__":
    W.main()
