#!/usr/bin/env python3
"""
aisb-gate integration: an upstream connection kept between the forwarded
requests of one client connection, and every case where it must not be.

Run: AISB_GATE=build/gate/aisb-gate python3 tests/integration/gate/test_reuse.py -v
"""

import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import world as W  # noqa: E402


class ReuseTest(W.GateTestCase):

    def target(self, host="test.example"):
        return "%s:%d" % (host, self.world.http.port)

    def req(self, path, method="GET", host="test.example", extra=b"",
            body=b""):
        t = self.target(host).encode()
        if body:
            extra += b"Content-Length: %d\r\n" % len(body)
        return b"%s http://%s%s HTTP/1.1\r\nHost: %s\r\n%s\r\n%s" % (
            method.encode(), t, path.encode(), t, extra, body)

    def session(self, gate, steps):
        """
        One client connection: for each (request bytes, pause) send, read
        one response, then pause. The responses; None where the gate
        closed instead.
        """
        s = W.gate_socket(gate)
        out = []
        try:
            rd = W.Reader(s)
            for data, pause in steps:
                s.sendall(data)
                try:
                    out.append(W.read_response(rd))
                except (ConnectionResetError, ValueError):
                    out.append(None)
                time.sleep(pause)
        finally:
            s.close()
        return out

    def upstream_conns(self):
        return [(g.target, g.conn_id) for g in self.world.http.got()]

    def records(self, gate, n):
        ok = W.wait_until(lambda: len(gate.new_records()) >= n, 5)
        recs = gate.new_records()
        self.assertTrue(ok, "expected %d records, got %r" % (n, recs))
        return recs

    def test_same_target_reuses_one_connection(self):
        rs = self.session(self.gate, [(self.req("/echo?%d" % i), 0)
            for i in range(3)])
        self.assertEqual([r.status for r in rs], [200, 200, 200],
            "%r%s" % (rs, self.diag()))
        for i, r in enumerate(rs):
            self.assertEqual(json.loads(r.body)["target"], "/echo?%d" % i)
        conns = self.upstream_conns()
        self.assertEqual(len(conns), 3, conns)
        self.assertEqual(len({c for _, c in conns}), 1,
            "requests to one target took several upstream connections: %r"
            % conns)
        got = self.world.http.got()
        self.assertEqual(got[1].header("connection"), "keep-alive")
        recs = self.records(self.gate, 3)
        first, later = recs[0], recs[1:]
        self.assertIsNotNone(first["connect_ms"], first)
        self.assertIsNotNone(first["dns_ms"], first)
        for rec in later:
            self.assertEqual(rec["decision"], "allow", rec)
            self.assertEqual(rec["addr"], first["addr"], rec)
            self.assertIsNone(rec["connect_ms"],
                "a reused connection logged a connect: %r" % rec)
            self.assertIsNone(rec["dns_ms"], rec)
            self.assertEqual(rec["rule"], self.target(), rec)
        self.assertEqual(self.world.dns.names().count("test.example"),
            first_queries(self.world.dns.names()),
            "the name was resolved again for a reused connection")

    def test_other_target_gets_its_own_connection(self):
        ip_target = "127.0.0.2:%d" % self.world.http.port
        rs = self.session(self.gate, [
            (self.req("/echo?a"), 0),
            (b"GET http://%s/echo?b HTTP/1.1\r\nHost: %s\r\n\r\n" % (
                ip_target.encode(), ip_target.encode()), 0),
            (self.req("/echo?c"), 0)])
        self.assertEqual([r.status for r in rs], [200, 200, 200], rs)
        conns = self.upstream_conns()
        self.assertEqual(len({c for _, c in conns}), 3,
            "a connection opened for one target served another: %r"
            % conns)

    def test_upstream_close_is_not_reused(self):
        rs = self.session(self.gate, [(self.req("/close?n=10"), 0),
            (self.req("/echo"), 0)])
        # The client's connection ends with a close-delimited response.
        self.assertEqual(rs[0].status, 200, rs)
        self.assertEqual(rs[0].header("connection"), "close", rs[0])
        rs = self.session(self.gate, [(self.req("/status/200", extra=
            b"X-Up: 1\r\n"), 0), (self.req("/echo"), 0)])
        self.assertEqual([r.status for r in rs], [200, 200], rs)

    def test_idle_close_between_requests(self):
        rs = self.session(self.gate, [(self.req("/then-close"), 0.5),
            (self.req("/echo?after"), 0)])
        self.assertEqual([r.status for r in rs], [200, 200],
            "%r%s" % (rs, self.diag()))
        self.assertEqual(json.loads(rs[1].body)["target"], "/echo?after")
        conns = self.upstream_conns()
        self.assertEqual(len({c for _, c in conns}), 2, conns)
        recs = self.records(self.gate, 2)
        self.assertIsNotNone(recs[1]["connect_ms"], recs[1])

    def test_unrequested_bytes_drop_the_connection(self):
        rs = self.session(self.gate, [(self.req("/extra"), 0.3),
            (self.req("/echo?next"), 0)])
        self.assertEqual(rs[0].status, 200, rs)
        self.assertEqual(rs[0].body, b"ok")
        self.assertIsNotNone(rs[1], "no answer to the next request")
        self.assertEqual(rs[1].status, 200, rs[1])
        self.assertNotIn(b"EVIL", rs[1].raw,
            "bytes the upstream sent unasked reached the client")
        self.assertEqual(json.loads(rs[1].body)["target"], "/echo?next")
        conns = self.upstream_conns()
        self.assertEqual(len({c for _, c in conns}), 2,
            "the connection that sent unasked bytes was reused: %r" % conns)

    def test_safe_request_retried_once_on_a_new_connection(self):
        # /drop closes without answering: on the kept connection it looks
        # like the upstream's idle close racing the request.
        rs = self.session(self.gate, [(self.req("/echo"), 0),
            (self.req("/drop"), 0)])
        self.assertEqual(rs[0].status, 200, rs)
        self.assertIsNotNone(rs[1], "no answer after the retry")
        self.assertEqual(rs[1].status, 502, rs[1])
        conns = self.upstream_conns()
        self.assertEqual([t for t, _ in conns], ["/echo", "/drop", "/drop"],
            "a GET on a connection closed under it is sent again once: %r"
            % conns)
        self.assertEqual(conns[0][1], conns[1][1], conns)
        self.assertNotEqual(conns[1][1], conns[2][1], conns)
        self.assertDenyRecord(502, reason="upstream closed before responding")

    def test_unsafe_request_not_retried(self):
        rs = self.session(self.gate, [(self.req("/echo"), 0),
            (self.req("/drop", method="POST", body=b"once only"), 0)])
        self.assertEqual(rs[0].status, 200, rs)
        self.assertEqual(rs[1].status, 502, rs[1])
        self.assertEqual([t for t, _ in self.upstream_conns()],
            ["/echo", "/drop"], "a POST was sent twice")

    def test_reload_removing_entry_refuses_on_kept_connection(self):
        d = W.tmpdir()
        f = os.path.join(d, "allow")
        with open(f, "w") as fh:
            fh.write("%s\n127.0.0.2\n" % self.target())
        os.chmod(f, 0o644)
        g = self.new_gate(allow=[], allow_files=[f])
        s = W.gate_socket(g)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("/echo?1"))
            r1 = W.read_response(rd)
            self.assertEqual(r1.status, 200, "%r%s" % (r1, self.diag(g)))
            # The name stays; the IP entry that admitted 127.0.0.2 goes.
            with open(f, "w") as fh:
                fh.write("%s\n" % self.target())
            g.signal(signal.SIGHUP)
            time.sleep(0.5)
            s.sendall(self.req("/echo?2"))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertIsNotNone(r2, "no answer after the reload")
        self.assertEqual(r2.status, 403, r2)
        self.assertEqual([t for t, _ in self.upstream_conns()], ["/echo?1"],
            "the upstream got a request the new allowlist refuses")
        self.assertDenyRecord(403, gate=g,
            reason="all resolved addresses refused")


def first_queries(names):
    """Queries one resolution makes (A and AAAA): as many as the first."""
    return min(names.count("test.example"), 2)


if __name__ == "__main__":
    W.main()
