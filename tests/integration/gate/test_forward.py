#!/usr/bin/env python3
"""
aisb-gate integration: absolute-URI forward proxying.

Run: AISB_GATE=build/gate/aisb-gate python3 tests/integration/gate/test_forward.py -v
"""

import json
import os
import sys

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import world as W  # noqa: E402


class ForwardTest(W.GateTestCase):

    def url(self, path, host="test.example"):
        return "http://%s:%d%s" % (host, self.world.http.port, path)

    def target(self):
        return "test.example:%d" % self.world.http.port

    def req(self, method, path, extra=b"", body=b"", host=None):
        host = (host or self.target()).encode()
        return b"%s http://%s%s HTTP/1.1\r\nHost: %s\r\n%s\r\n%s" % (
            method.encode(), host, path.encode(), host, extra, body)

    def assertAllowRecord(self, method, status, **kv):
        rec = self.gate.record_for(method=method, host="test.example",
            port=self.world.http.port, **kv)
        self.assertEqual(rec["decision"], "allow", rec)
        self.assertEqual(rec["status"], status, rec)
        self.assertEqual(rec["rule"], self.target(), rec)
        self.assertIn("127.0.0.2", rec["addr"] or "", rec)
        self.assertEqual(rec["refused_addrs"], [], rec)
        self.assertIsNone(rec["sni"], rec)
        self.assertTrue(str(rec["client"]).startswith("127.0.0.1"), rec)
        self.assertIsNotNone(rec["dns_ms"], rec)
        self.assertIsNotNone(rec["connect_ms"], rec)
        self.assertIsNotNone(rec["duration_ms"], rec)
        return rec

    def test_get_via_curl(self):
        r = W.curl(self.gate, self.url("/echo?q=1&r=2"))
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag()))
        j = r.json()
        self.assertEqual(j["method"], "GET")
        self.assertEqual(j["target"], "/echo?q=1&r=2",
            "upstream must get origin-form")
        self.assertEqual(j["version"], "HTTP/1.1")
        self.assertEqual(W.field(j["fields"], "host"), self.target())
        self.assertEqual(len(W.fields_named(j["fields"], "host")), 1)
        self.assertEqual(len(self.world.http.got()), 1)
        self.assertIn("test.example", self.world.dns.names())
        rec = self.assertAllowRecord("GET", 200)
        self.assertGreaterEqual(rec["bytes_down"], len(r.body), rec)

    def test_post_content_length(self):
        body = W.pattern(200000, seed=3)
        path = os.path.join(W.tmpdir(), "body")
        with open(path, "wb") as f:
            f.write(body)
        r = W.curl(self.gate, self.url("/echo"), "--data-binary", "@" + path,
            "-H", "Content-Type: application/octet-stream",
            "-H", "Expect:")
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag()))
        got = self.world.http.got()
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0].method, "POST")
        self.assertEqual(got[0].header("content-length"), "200000")
        self.assertEqual(W.sha(got[0].body), W.sha(body),
            "request body changed on the way")
        rec = self.assertAllowRecord("POST", 200)
        self.assertGreaterEqual(rec["bytes_up"], len(body), rec)

    def test_post_chunked_raw(self):
        big = W.pattern(5000, seed=9)
        chunks = (b"5;ext=1\r\nhello\r\n" + b"%x\r\n" % len(big) + big +
            b"\r\n" + b"1\r\n!\r\n0\r\nX-Trailer: t\r\n\r\n")
        s = W.gate_socket(self.gate)
        try:
            s.sendall(self.req("POST", "/echo",
                b"Transfer-Encoding: chunked\r\n", chunks))
            resp = W.read_response(W.Reader(s))
        finally:
            s.close()
        self.assertIsNotNone(resp, "gate closed without a response" +
            self.diag())
        self.assertEqual(resp.status, 200, "%r%s" % (resp, self.diag()))
        got = self.world.http.got()
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0].body, b"hello" + big + b"!",
            "decoded chunked body differs")
        self.assertEqual(got[0].raw_body, chunks,
            "chunked framing was not passed through byte for byte")
        self.assertIsNone(got[0].header("content-length"))

    def test_post_chunked_curl(self):
        body = W.pattern(70000, seed=5)
        path = os.path.join(W.tmpdir(), "body")
        with open(path, "wb") as f:
            f.write(body)
        r = W.curl(self.gate, self.url("/echo"), "--data-binary", "@" + path,
            "-H", "Transfer-Encoding: chunked", "-H", "Expect:")
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag()))
        got = self.world.http.got()
        self.assertEqual(len(got), 1)
        self.assertEqual(W.sha(got[0].body), W.sha(body))

    def test_head_then_get_same_connection(self):
        r = W.curl(self.gate, self.url("/big?n=1000"), "-I")
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag()))
        self.assertEqual(r.header("content-length"), "1000")
        # curl -I writes the head to its output: nothing may follow it
        self.assertTrue(r.body.endswith(b"\r\n\r\n"), r.body)
        # HEAD has no body even with Content-Length: the next response on
        # the connection must not be swallowed as one
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("HEAD", "/big?n=1000"))
            r1 = W.read_response(rd, "HEAD")
            s.sendall(self.req("GET", "/big?n=10"))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual((r1.status, r1.body), (200, b""), r1)
        self.assertIsNotNone(r2, "connection closed after HEAD")
        self.assertEqual((r2.status, r2.body), (200, W.pattern(10)), r2)
        self.assertAllowRecord("HEAD", 200)

    def test_keepalive_two_requests(self):
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/echo?one"))
            r1 = W.read_response(rd)
            self.assertIsNotNone(r1, "no first response" + self.diag())
            s.sendall(self.req("GET", "/echo?two"))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual(r1.status, 200, r1)
        self.assertIsNotNone(r2, "gate closed a keep-alive connection "
            "after one request")
        self.assertEqual(r2.status, 200, r2)
        self.assertEqual(json.loads(r1.body)["target"], "/echo?one")
        self.assertEqual(json.loads(r2.body)["target"], "/echo?two")
        # The second record may land just after its response was read.
        W.wait_until(lambda: len(self.gate.find(lambda x: x["host"] ==
            "test.example" and x["status"] == 200, 0)) >= 2, 5)
        recs = self.gate.find(lambda x: x["host"] == "test.example"
            and x["status"] == 200, timeout=5)
        self.assertEqual(len(recs), 2, recs)
        self.assertNotEqual(recs[0]["id"], recs[1]["id"])

    def test_pipelined_second_request_refused(self):
        self.world.dns.set("other.example", ["127.0.0.2"])
        other = "other.example:%d" % self.world.http.port
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/echo?first") +
                self.req("GET", "/echo?second", host=other))
            r1 = W.read_response(rd)
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertIsNotNone(r1, "no first response" + self.diag())
        self.assertEqual(r1.status, 200, r1)
        self.assertEqual(json.loads(r1.body)["target"], "/echo?first")
        self.assertIsNotNone(r2, "no response to the pipelined request")
        self.assertEqual(r2.status, 403, r2)
        got = self.world.http.got()
        self.assertEqual([g.target for g in got], ["/echo?first"],
            "upstream got the refused pipelined request")
        for g in got:
            self.assertNotIn(b"other.example", g.head + g.body)
        self.assertNotIn("other.example", self.world.dns.names())
        self.assertDenyRecord(403, host="other.example")

    def test_pipelined_after_body(self):
        body = b"x" * 300
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("POST", "/echo?a", b"Content-Length: 300\r\n",
                body) + self.req("GET", "/echo?b"))
            r1 = W.read_response(rd)
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual(r1.status, 200, r1)
        self.assertIsNotNone(r2, "no response to the pipelined request")
        self.assertEqual(r2.status, 200, r2)
        got = self.world.http.got()
        self.assertEqual([(g.method, g.target, g.body) for g in got],
            [("POST", "/echo?a", body), ("GET", "/echo?b", b"")])

    def test_hop_by_hop_not_forwarded(self):
        secret = b"c2VjcmV0OnBhc3N3b3Jk"
        extra = (b"Connection: keep-alive, X-Foo\r\n"
            b"Keep-Alive: timeout=5\r\n"
            b"Proxy-Connection: keep-alive\r\n"
            b"Proxy-Authorization: Basic " + secret + b"\r\n"
            b"TE: trailers\r\n"
            b"Trailer: X-T\r\n"
            b"X-Foo: drop-me\r\n"
            b"X-Keep: keep-me\r\n")
        resp = W.exchange(self.gate, self.req("GET", "/echo", extra))
        self.assertIsNotNone(resp, "no response" + self.diag())
        self.assertEqual(resp.status, 200, resp)
        got = self.world.http.got()
        self.assertEqual(len(got), 1)
        head = got[0].head
        for name in ("proxy-authorization", "keep-alive", "proxy-connection",
                "te", "trailer", "x-foo"):
            self.assertIsNone(got[0].header(name),
                "%s was forwarded: %r" % (name, head))
        self.assertNotIn(secret, head)
        self.assertEqual(got[0].header("x-keep"), "keep-me")
        conn = got[0].header("connection")
        self.assertEqual(conn, "keep-alive", "Connection upstream: %r"
            % conn)
        for ln in self.gate.log_lines():
            self.assertNotIn(secret, ln, "credential in the log")

    def test_response_hop_by_hop_removed(self):
        r = W.curl(self.gate, self.url("/hop"))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("x-up-kept"), "yes")
        self.assertIsNone(r.header("x-up-hop"),
            "field named by the upstream's Connection reached the client")
        self.assertNotEqual(r.header("keep-alive"), "timeout=5")

    def test_response_chunked(self):
        r = W.curl(self.gate, self.url("/chunked?n=300000"))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(W.sha(r.body), W.sha(W.pattern(300000)))
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/chunked?n=5000"))
            r1 = W.read_response(rd)
            s.sendall(self.req("GET", "/echo?after-chunked"))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual((r1.status, r1.body), (200, W.pattern(5000)))
        self.assertIsNotNone(r2, "connection lost after a chunked response")
        self.assertEqual(json.loads(r2.body)["target"], "/echo?after-chunked")

    def test_response_close_delimited(self):
        r = W.curl(self.gate, self.url("/close?n=70000"))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(W.sha(r.body), W.sha(W.pattern(70000)))
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/close?n=50000"))
            r1 = W.read_response(rd)
            self.assertEqual((r1.status, W.sha(r1.body)),
                (200, W.sha(W.pattern(50000))))
            if r1.header("content-length") is None and \
                    "chunked" not in (r1.header("transfer-encoding") or ""):
                self.assertTrue(rd.eof or W.closed_within(s, 5),
                    "close-delimited body but the gate kept the "
                    "connection open")
        finally:
            s.close()

    def test_big_download(self):
        n = 8 * 1000 * 1000
        r = W.curl(self.gate, self.url("/big?n=%d" % n), timeout=60)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(len(r.body), n)
        self.assertEqual(W.sha(r.body), W.sha(W.pattern(n)))
        rec = self.assertAllowRecord("GET", 200)
        self.assertGreaterEqual(rec["bytes_down"], n, rec)
        self.assertLess(rec["bytes_down"], n + 4096, rec)

    def test_status_passthrough(self):
        r = W.curl(self.gate, self.url("/status/404"))
        self.assertEqual(r.status, 404, r)
        self.assertEqual(r.body, b"status body\n")
        self.assertAllowRecord("GET", 404)
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/status/204"))
            r1 = W.read_response(rd)
            s.sendall(self.req("GET", "/echo?after-204"))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual((r1.status, r1.body), (204, b""))
        self.assertIsNotNone(r2, "connection lost after a 204")
        self.assertEqual(r2.status, 200)

    def test_subdomain_and_case(self):
        self.world.dns.set("sub.test.example", ["127.0.0.2"])
        r = W.curl(self.gate, self.url("/echo", host="sub.test.example"))
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag()))
        rec = self.gate.record_for(host="sub.test.example")
        self.assertEqual(rec["rule"], self.target(), rec)
        self.world.reset()
        resp = W.exchange(self.gate, self.req("GET", "/echo",
            host="TEST.Example.:%d" % self.world.http.port))
        self.assertIsNotNone(resp, "no response" + self.diag())
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(self.world.dns.names()[:1], ["test.example"])
        self.gate.record_for(host="test.example", status=200)

    def test_http10_client(self):
        s = W.gate_socket(self.gate)
        try:
            s.sendall(b"GET http://%s/echo HTTP/1.0\r\n\r\n"
                % self.target().encode())
            rd = W.Reader(s)
            r = W.read_response(rd)
            self.assertIsNotNone(r, "no response" + self.diag())
            self.assertEqual(r.status, 200, r)
            self.assertTrue(rd.eof or W.closed_within(s, 5),
                "HTTP/1.0 request without keep-alive left open")
        finally:
            s.close()
        got = self.world.http.got()
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0].header("host"), self.target())

    def test_client_connection_close(self):
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/echo", b"Connection: close\r\n"))
            r = W.read_response(rd)
            self.assertEqual(r.status, 200, r)
            self.assertEqual((r.header("connection") or "").lower(), "close")
            self.assertTrue(rd.eof or W.closed_within(s, 5),
                "connection kept after Connection: close")
        finally:
            s.close()

    def test_head_of_chunked_response(self):
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("HEAD", "/chunked?n=100"))
            r1 = W.read_response(rd, "HEAD")
            s.sendall(self.req("GET", "/echo?after-head"))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual((r1.status, r1.body), (200, b""), r1)
        self.assertIsNotNone(r2, "connection lost after HEAD")
        self.assertEqual(json.loads(r2.body)["target"], "/echo?after-head")

    def test_keepalive_switches_host(self):
        self.world.dns.set("sub.test.example", ["127.0.0.2"])
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/echo?a"))
            r1 = W.read_response(rd)
            s.sendall(self.req("GET", "/echo?b", host="sub.test.example:%d"
                % self.world.http.port))
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual(r1.status, 200, r1)
        self.assertIsNotNone(r2, "closed before the second host")
        self.assertEqual(r2.status, 200, r2)
        got = self.world.http.got()
        self.assertEqual([g.header("host") for g in got], [self.target(),
            "sub.test.example:%d" % self.world.http.port])

    def test_ipv6_upstream(self):
        up6 = self.world.add(W.HttpUpstream("::1"))
        self.world.dns.set("six.example", ["::1"])
        g = self.new_gate(allow=["six.example:%d" % up6.port, "::1"])
        r = W.curl(g, "http://six.example:%d/echo" % up6.port)
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag(g)))
        self.assertEqual(len(up6.got()), 1)
        rec = g.record_for(host="six.example")
        self.assertEqual(rec["addr"], "[::1]:%d" % up6.port, rec)
        self.assertEqual(rec["rule"], "six.example:%d" % up6.port, rec)

    def test_interim_100_passed_on(self):
        s = W.gate_socket(self.gate)
        try:
            rd = W.Reader(s)
            s.sendall(self.req("GET", "/continue"))
            r1 = W.read_response(rd)
            r2 = W.read_response(rd)
        finally:
            s.close()
        self.assertEqual(r1.status, 100, r1)
        self.assertIsNotNone(r2, "no final response after a 100")
        self.assertEqual(r2.status, 200, r2)
        self.assertEqual(json.loads(r2.body)["target"], "/continue")

    def test_upstream_101_refused(self):
        resp = W.exchange(self.gate, self.req("GET", "/upgrade"))
        self.assertIsNotNone(resp, "no answer" + self.diag())
        self.assertEqual(resp.status, 502, resp)
        self.assertNotIn(b"RAW-AFTER-101", resp.raw)

    def test_broken_upstream_responses(self):
        for path in ("/garbage", "/drop", "/hugehead", "/clte"):
            with self.subTest(path=path):
                self.world.reset()
                resp = W.exchange(self.gate, self.req("GET", path))
                self.assertIsNotNone(resp, "%s: no answer%s" % (path,
                    self.diag()))
                self.assertEqual(resp.status, 502, "%s: %r" % (path, resp))
                rec = self.gate.record_for(host="test.example", status=502)
                self.assertTrue(rec["reason"], rec)

    def test_concurrent_clients(self):
        import threading
        n = 200000
        results = [None] * 16

        def one(i):
            results[i] = W.curl(self.gate, self.url("/big?n=%d" % n),
                timeout=60)
        ts = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(90)
        want = W.sha(W.pattern(n))
        for i, r in enumerate(results):
            self.assertIsNotNone(r, "client %d did not finish" % i)
            self.assertEqual((r.status, W.sha(r.body)), (200, want),
                "client %d: %r" % (i, r))
        self.assertEqual(len(self.world.http.got()), 16)
        recs = self.gate.find(lambda x: x["status"] == 200, timeout=5)
        W.wait_until(lambda: len(self.gate.find(
            lambda x: x["status"] == 200, 0)) >= 16, 5)
        recs = self.gate.find(lambda x: x["status"] == 200, timeout=0)
        self.assertEqual(len(recs), 16)


if __name__ == "__main__":
    W.main()
