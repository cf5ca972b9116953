#!/usr/bin/env python3
"""
aisb-gate integration: what the gate refuses, and that a refused request
never reaches DNS (when the name decides) or any upstream.

Run: AISB_GATE=build/gate/aisb-gate python3 tests/integration/gate/test_refusals.py -v
"""

import os
import socket
import sys
import time

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import world as W  # noqa: E402

# 127.0.0.1 in the encodings a resolver or URL parser accepts
LOOPBACK_LITERALS = ["127.0.0.1", "127.1", "127.0.1", "2130706433",
    "0x7f000001", "0177.0.0.1", "0x7f.0.0.1", "0x7f.1", "017700000001",
    "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]",
    "0.0.0.0", "0"]
V6_LITERALS = ["[::1]", "[0:0:0:0:0:0:0:1]", "[::]"]

REBIND = [
    ("rebind3.example", "127.0.0.3"),
    ("rebind10.example", "10.0.0.1"),
    ("meta.example", "169.254.169.254"),
    ("cgnat.example", "100.64.0.1"),
    ("zero.example", "0.0.0.0"),
    ("rebind6.example", "::1"),
    ("mapped.example", "::ffff:127.0.0.3"),
    ("ula.example", "fd00::1"),
    ("linklocal6.example", "fe80::1"),
]


def norm_addr(s):
    """An address as the log may write it ("a", "a:p", "[v6]:p") to a
    canonical text, or the input when it does not parse."""
    if s is None:
        return None
    t = s.split(" ")[0]		# the gate may add " (range)"
    if t.startswith("["):
        t = t[1:t.index("]")]
    elif t.count(":") == 1:
        t = t.split(":")[0]
    for fam in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.inet_ntop(fam, socket.inet_pton(fam, t))
        except OSError:
            pass
    return s


class RefusalTest(W.GateTestCase):

    @classmethod
    def setUpClass(cls):
        cls.world = W.World()
        w = cls.world
        try:
            cls.lo1 = w.add(W.HttpUpstream("127.0.0.1"))
            cls.lo3 = w.add(W.HttpUpstream("127.0.0.3", port=w.http.port))
            cls.lo6 = w.add(W.HttpUpstream("::1", port=w.http.port))
            cls.lo6b = w.add(W.HttpUpstream("::1", port=cls.lo1.port))
            cls.other = w.add(W.HttpUpstream("127.0.0.2"))
            cls.dead_port = W.free_port("127.0.0.2")
            p = w.http.port
            for name in ("nope.example", "test.example.evil",
                    "eviltest.example", "xtest.example", "localhost.example",
                    "portonly.example"):
                w.dns.set(name, ["127.0.0.2"])
            for name, addr in REBIND:
                w.dns.set(name, [addr])
            w.dns.set("mixed.example", ["127.0.0.3", "127.0.0.2"])
            w.dns.set("servfail.example", "SERVFAIL")
            w.dns.set("nx.example", "NXDOMAIN")
            w.dns.set("slow.example", "TIMEOUT")
            w.dns.set("nodata.example", [])
            w.dns.set("refused.example", "REFUSED")
            names = [n for n, _ in REBIND] + ["mixed.example",
                "servfail.example", "nx.example", "slow.example",
                "nodata.example", "refused.example"]
            cls.allow = w.base_allow() + ["%s:%d" % (n, p) for n in names] + [
                "%s:%d" % (n, w.tls.port) for n in names] + [
                "portonly.example", "test.example:%d" % cls.dead_port]
            cls.gate = w.gate(allow=cls.allow, args=["--dns-timeout", "2"])
        except Exception:
            w.close()
            raise

    def upstreams(self):
        w = self.world
        return [w.http, w.tls, w.echo, self.lo1, self.lo3, self.lo6,
            self.lo6b, self.other]

    def assertNothingReached(self, what=""):
        time.sleep(0.1)
        for srv in self.upstreams():
            self.assertUntouched(srv, what, settle=False)

    def get(self, hostport, path="/echo", extra=b"", gate=None):
        hp = hostport.encode()
        return W.exchange(gate or self.gate,
            b"GET http://%s%s HTTP/1.1\r\nHost: %s\r\n%s\r\n"
            % (hp, path.encode(), hp, extra))

    def connect(self, hostport, gate=None):
        s, resp = W.connect_tunnel(gate or self.gate, hostport)
        s.close()
        return resp

    def expect_status(self, resp, status, what):
        self.assertIsNotNone(resp, "%s: no answer (closed, reset or timed "
            "out)%s" % (what, self.diag()))
        if isinstance(status, int):
            status = (status,)
        self.assertIn(resp.status, status, "%s: %r%s" % (what, resp,
            self.diag()))

    def expect_policy_refusal(self, resp, what):
        self.expect_status(resp, 403, what)
        self.assertTrue(resp.header("x-aisb-reason"),
            "%s: 403 without X-Aisb-Reason: %r" % (what, resp))
        self.assertTrue(resp.body, "%s: 403 without a body saying why: %r"
            % (what, resp))

    # ---- names

    def test_name_not_allowlisted_forward(self):
        r = W.curl(self.gate, "http://nope.example:%d/echo"
            % self.world.http.port)
        self.assertEqual(r.status, 403, r)
        self.assertTrue(r.header("x-aisb-reason"), r.heads)
        self.assertTrue(r.body, "403 without a body")
        self.assertNoDns("for a name not in the allowlist")
        self.assertNothingReached()
        rec = self.assertDenyRecord(403, host="nope.example")
        self.assertEqual(rec["method"], "GET", rec)
        self.assertEqual(rec["port"], self.world.http.port, rec)
        self.assertIsNone(rec["rule"], rec)
        self.assertIsNone(rec["addr"], rec)

    def test_name_not_allowlisted_connect(self):
        r = W.curl(self.gate, "https://nope.example:%d/" % self.world.tls.port)
        self.assertNotEqual(r.rc, 0, r)
        self.assertEqual(r.connect_status, 403, r)
        self.assertNoDns()
        self.assertNothingReached()
        rec = self.assertDenyRecord(403, host="nope.example")
        self.assertEqual(rec["method"], "CONNECT", rec)

    def test_lookalike_names(self):
        p = self.world.http.port
        for name in ("test.example.evil", "eviltest.example",
                "xtest.example", "localhost.example", "localhost",
                "example"):
            with self.subTest(name=name):
                self.world.reset()
                self.expect_policy_refusal(self.get("%s:%d" % (name, p)),
                    name)
                self.expect_policy_refusal(self.connect("%s:%d" % (name,
                    self.world.tls.port)), "CONNECT " + name)
                self.assertNoDns("for %s" % name)
                self.assertNothingReached(name)
                self.assertDenyRecord(403, host=name)

    def test_port_not_allowlisted(self):
        # the name is allowlisted on other ports; 127.0.0.2 has an IP
        # entry, which must not make the name good on every port
        o = self.other.port
        self.expect_policy_refusal(self.get("test.example:%d" % o),
            "forward to an unlisted port")
        self.expect_policy_refusal(self.connect("test.example:%d" % o),
            "CONNECT to an unlisted port")
        self.expect_policy_refusal(self.get("test.example"),
            "forward to default port 80")
        self.assertNoDns()
        self.assertNothingReached()

    def test_default_port_entry(self):
        # "portonly.example" allows CONNECT 443 and forward 80 only
        p = self.world.http.port
        self.expect_policy_refusal(self.get("portonly.example:%d" % p),
            "forward to a port a bare name entry does not allow")
        self.expect_policy_refusal(self.connect("portonly.example:80"),
            "CONNECT to port 80 with a bare name entry")
        self.expect_policy_refusal(self.get("portonly.example:443"),
            "forward to port 443 with a bare name entry")
        self.assertNoDns()
        self.assertNothingReached()

    # ---- IP literals

    def test_ip_literals_forward(self):
        for lit in LOOPBACK_LITERALS + V6_LITERALS:
            port = self.lo1.port
            with self.subTest(literal=lit):
                self.world.reset()
                r = self.get("%s:%d" % (lit, port))
                self.expect_policy_refusal(r, "GET http://%s" % lit)
                self.assertNoDns("for literal %s" % lit)
                self.assertNothingReached("by literal %s" % lit)
                self.assertDenyRecord(403)

    def test_ip_literals_connect(self):
        for lit in LOOPBACK_LITERALS + V6_LITERALS:
            port = self.lo1.port
            with self.subTest(literal=lit):
                self.world.reset()
                r = self.connect("%s:%d" % (lit, port))
                self.expect_policy_refusal(r, "CONNECT %s" % lit)
                self.assertNoDns("for literal %s" % lit)
                self.assertNothingReached("by literal %s" % lit)
                self.assertDenyRecord(403, method="CONNECT")

    def test_ip_literal_allowed_by_ip_entry(self):
        r = self.get("127.0.0.2:%d" % self.world.http.port)
        self.expect_status(r, 200, "GET to an IP-entry address")
        self.assertNoDns()
        self.assertEqual(len(self.world.http.got()), 1)
        rec = self.gate.record_for(status=200)
        self.assertEqual(rec["rule"], "127.0.0.2", rec)

    # ---- DNS answers the gate must not dial

    def test_rebinding_refused(self):
        for name, addr in REBIND:
            with self.subTest(name=name, addr=addr):
                self.world.reset()
                r = self.get("%s:%d" % (name, self.world.http.port))
                self.expect_policy_refusal(r, "%s -> %s" % (name, addr))
                self.assertIn(name, self.world.dns.names())
                self.assertNothingReached("for %s -> %s" % (name, addr))
                rec = self.assertDenyRecord(403, host=name)
                self.assertIn(norm_addr(addr),
                    [norm_addr(a) for a in rec["refused_addrs"]], rec)
                self.assertIsNone(rec["connect_ms"], rec)

    def test_rebinding_refused_connect(self):
        name = "rebind3.example"
        r = self.connect("%s:%d" % (name, self.world.tls.port))
        self.expect_policy_refusal(r, "CONNECT to a name on loopback")
        self.assertNothingReached()
        rec = self.assertDenyRecord(403, host=name)
        self.assertEqual([norm_addr(a) for a in rec["refused_addrs"]],
            ["127.0.0.3"], rec)

    def test_mixed_answer_dials_allowed_only(self):
        r = self.get("mixed.example:%d" % self.world.http.port)
        self.expect_status(r, 200, "mixed answer")
        self.assertEqual(len(self.world.http.got()), 1)
        self.assertUntouched(self.lo3, "(refused address of a mixed answer)")
        rec = self.gate.record_for(host="mixed.example")
        self.assertEqual(rec["decision"], "allow", rec)
        self.assertEqual(norm_addr(rec["addr"]), "127.0.0.2", rec)
        self.assertEqual([norm_addr(a) for a in rec["refused_addrs"]],
            ["127.0.0.3"], rec)

    def test_strict_dns_refuses_whole_answer(self):
        g = self.new_gate(allow=self.allow, args=["--strict-dns"])
        r = self.get("mixed.example:%d" % self.world.http.port, gate=g)
        self.expect_status(r, 403, "--strict-dns with one refused address")
        self.assertNothingReached()
        rec = self.assertDenyRecord(403, gate=g, host="mixed.example")
        self.assertIn("127.0.0.3", [norm_addr(a) for a in
            rec["refused_addrs"]], rec)
        self.world.reset()
        r = self.get("test.example:%d" % self.world.http.port, gate=g)
        self.expect_status(r, 200, "--strict-dns with a clean answer")

    # ---- DNS failures: 502, reason not a policy reason

    def test_dns_failures(self):
        pol = self.get("nope.example:%d" % self.world.http.port)
        self.expect_status(pol, 403, "policy refusal")
        policy_reason = self.assertDenyRecord(403,
            host="nope.example")["reason"]
        reasons = {}
        for name in ("servfail.example", "nx.example", "slow.example",
                "nodata.example", "refused.example"):
            with self.subTest(name=name):
                self.world.reset()
                t0 = time.monotonic()
                r = self.get("%s:%d" % (name, self.world.http.port))
                took = time.monotonic() - t0
                self.expect_status(r, 502, name)
                self.assertLess(took, 2 + 4, "%s took %.1fs with "
                    "--dns-timeout 2" % (name, took))
                self.assertTrue(r.header("x-aisb-reason"), r)
                self.assertNothingReached(name)
                self.assertIn(name, self.world.dns.names())
                rec = self.gate.record_for(host=name, status=502)
                self.assertTrue(rec["reason"], rec)
                self.assertNotEqual(rec["reason"], policy_reason, rec)
                self.assertNotEqual(r.header("x-aisb-reason"),
                    pol.header("x-aisb-reason"))
                reasons[name] = rec["reason"]
        trio = [reasons.get(n) for n in ("servfail.example", "nx.example",
            "slow.example")]
        self.assertEqual(len(set(trio)), 3,
            "SERVFAIL, NXDOMAIN and timeout share a reason: %r" % reasons)

    def test_dns_failure_connect(self):
        r = self.connect("servfail.example:%d" % self.world.tls.port)
        self.expect_status(r, 502, "CONNECT to a SERVFAIL name")
        self.assertNothingReached()

    # ---- upstream failures

    def test_upstream_refused_502(self):
        r = self.get("test.example:%d" % self.dead_port)
        self.expect_status(r, 502, "connect refused")
        self.assertTrue(r.header("x-aisb-reason"), r)
        rec = self.gate.record_for(host="test.example", status=502)
        self.assertTrue(rec["reason"], rec)

    def test_connect_timeout_504(self):
        bh = W.Blackhole("127.0.0.2")
        try:
            g = self.new_gate(allow=self.world.base_allow() +
                ["test.example:%d" % bh.port], args=["--connect-timeout", "1"])
            t0 = time.monotonic()
            r = self.get("test.example:%d" % bh.port, gate=g)
            took = time.monotonic() - t0
        finally:
            bh.close()
        self.expect_status(r, 504, "connect timeout")
        self.assertLess(took, 1 + 4, "504 took %.1fs" % took)
        rec = g.record_for(host="test.example", status=504)
        self.assertTrue(rec["reason"], rec)

    # ---- parse refusals: status, a record, no DNS, nothing reached

    def parse_refusal(self, data, status, what, method=None, shut=False):
        self.world.reset()
        s = W.gate_socket(self.gate)
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
            try:
                resp = W.read_response(W.Reader(s))
            except (ConnectionResetError, socket.timeout):
                resp = None
        finally:
            s.close()
        self.expect_status(resp, status, what)
        self.assertNoDns(what)
        self.assertNothingReached(what)
        rec = self.gate.record_for(timeout=5,
            decision="deny", status=resp.status)
        if method is not None:
            self.assertEqual(rec["method"], method, rec)
        return resp

    def hp(self):
        return b"test.example:%d" % self.world.http.port

    def test_userinfo(self):
        hp = self.hp()
        self.parse_refusal(b"GET http://user:pw@%s/echo HTTP/1.1\r\n"
            b"Host: %s\r\n\r\n" % (hp, hp), 400, "userinfo in absolute-URI")
        self.parse_refusal(b"GET http://user@%s/echo HTTP/1.1\r\n"
            b"Host: %s\r\n\r\n" % (hp, hp), 400, "user@ in absolute-URI")
        self.parse_refusal(b"CONNECT user@test.example:%d HTTP/1.1\r\n"
            b"Host: test.example\r\n\r\n" % self.world.tls.port, 400,
            "userinfo in CONNECT")

    def test_host_mismatch(self):
        self.parse_refusal(b"GET http://%s/echo HTTP/1.1\r\n"
            b"Host: nope.example\r\n\r\n" % self.hp(), 400,
            "Host differs from the absolute-URI")
        self.parse_refusal(b"GET http://%s/echo HTTP/1.1\r\n"
            b"Host: %s\r\nHost: %s\r\n\r\n" % (self.hp(), self.hp(),
            self.hp()), 400, "two Host fields")

    def test_origin_form(self):
        self.parse_refusal(b"GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n"
            % self.hp(), 400, "origin-form", method="GET")

    def test_asterisk_form(self):
        self.parse_refusal(b"OPTIONS * HTTP/1.1\r\nHost: %s\r\n\r\n"
            % self.hp(), (400, 405), "asterisk-form")

    def test_http09(self):
        self.parse_refusal(b"GET http://%s/echo\r\n" % self.hp(), 400,
            "HTTP/0.9 request line")

    def test_h2_preface(self):
        self.parse_refusal(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505,
            "HTTP/2 preface")
        self.parse_refusal(b"GET http://%s/ HTTP/2.0\r\nHost: %s\r\n\r\n"
            % (self.hp(), self.hp()), 505, "HTTP/2.0 request line")

    def test_oversized_head_before_newline(self):
        hp = self.hp()
        # a header line past every cap, no newline, the connection open
        t0 = time.monotonic()
        self.parse_refusal(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n"
            b"X-Big: %s" % (hp, hp, b"a" * 40000), 431,
            "40 KB header line without a newline")
        self.assertLess(time.monotonic() - t0, 5)
        self.parse_refusal(b"GET http://%s/%s" % (hp, b"a" * 40000),
            (414, 431), "40 KB request line without a newline")

    def test_oversized_head_shapes(self):
        hp = self.hp()
        many = b"".join(b"X-H%d: v\r\n" % i for i in range(120))
        self.parse_refusal(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n%s\r\n"
            % (hp, hp, many), 431, "120 header fields")
        big = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 1000)
            for i in range(40))
        self.parse_refusal(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n%s\r\n"
            % (hp, hp, big), 431, "40 KB of header fields")

    def body_req(self, fields):
        hp = self.hp()
        return b"POST http://%s/echo HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (
            hp, hp, fields)

    def test_content_length_and_transfer_encoding(self):
        self.parse_refusal(self.body_req(b"Content-Length: 5\r\n"
            b"Transfer-Encoding: chunked\r\n") + b"0\r\n\r\n", 400,
            "Content-Length with Transfer-Encoding")

    def test_transfer_encoding_other_than_chunked(self):
        for te in (b"gzip", b"gzip, chunked", b"identity", b"chunked, gzip"):
            with self.subTest(te=te):
                self.parse_refusal(self.body_req(b"Transfer-Encoding: %s\r\n"
                    % te) + b"0\r\n\r\n", 501, "TE %r" % te)

    def test_two_transfer_encoding_fields(self):
        self.parse_refusal(self.body_req(b"Transfer-Encoding: chunked\r\n"
            b"Transfer-Encoding: chunked\r\n") + b"0\r\n\r\n", (400, 501),
            "two Transfer-Encoding fields")

    def test_chunk_size_overflow(self):
        # the head may have gone upstream; the body must not
        r = W.exchange(self.gate, self.body_req(
            b"Transfer-Encoding: chunked\r\n") + b"1" * 40 + b"\r\nxx")
        self.assertIsNotNone(r, "no answer" + self.diag())
        self.assertEqual(r.status, 400, r)
        for g in self.world.http.got():
            self.assertEqual(g.body, b"", "upstream got body bytes")

    def test_missing_host_and_fragment(self):
        hp = self.hp()
        self.parse_refusal(b"GET http://%s/echo HTTP/1.1\r\n\r\n" % hp,
            400, "HTTP/1.1 without Host")
        self.parse_refusal(b"GET http://%s/echo#frag HTTP/1.1\r\n"
            b"Host: %s\r\n\r\n" % (hp, hp), 400, "fragment in target")

    def test_bad_content_length(self):
        for cl in (b"Content-Length: 5x\r\n", b"Content-Length: -1\r\n",
                b"Content-Length: 5\r\nContent-Length: 6\r\n",
                b"Content-Length: 99999999999999999999999\r\n"):
            with self.subTest(cl=cl):
                self.parse_refusal(self.body_req(cl), 400, "CL %r" % cl,
                    shut=True)

    def test_malformed_fields(self):
        hp = self.hp()
        for bad in (b"X-Fold: a\r\n continued\r\n", b"X-Sp : v\r\n",
                b"X-Nul: a\x00b\r\n", b"No colon here\r\n",
                b": empty name\r\n"):
            with self.subTest(field=bad):
                self.parse_refusal(b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n"
                    b"%s\r\n" % (hp, hp, bad), 400, "field %r" % bad)

    def test_bare_lf(self):
        hp = self.hp()
        self.parse_refusal(b"GET http://%s/ HTTP/1.1\nHost: %s\n\n"
            % (hp, hp), 400, "bare LF line ends", shut=True)

    def test_bad_targets(self):
        p = self.world.http.port
        for tgt in (b"http://test%%2eexample:%d/" % p,
                b"http://te_st.example:%d/" % p,
                b"http://test.example:%d:1/" % p,
                b"http://test.example:0/", b"http://test.example:65536/",
                b"http://test.example:%dx/" % p,
                b"http://test..example:%d/" % p,
                b"http:///x", b"http://[::1/"):
            host = tgt[len(b"http://"):].split(b"/")[0] or b"x"
            with self.subTest(target=tgt):
                self.parse_refusal(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                    % (tgt, host), 400, "target %r" % tgt)

    def test_bad_connect_targets(self):
        for tgt in (b"test.example", b"test.example:", b"test.example:0",
                b"test.example:65536", b"/x", b"http://test.example:443"):
            with self.subTest(target=tgt):
                self.parse_refusal(b"CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n"
                    % tgt, 400, "CONNECT %r" % tgt)

    def test_https_absolute_uri_not_sent_in_clear(self):
        # the gate does not originate TLS; it must not send plaintext to
        # a TLS port either
        hp = b"test.example:%d" % self.world.tls.port
        r = W.exchange(self.gate, b"GET https://%s/ HTTP/1.1\r\nHost: %s\r\n"
            b"\r\n" % (hp, hp))
        self.assertIsNotNone(r, "no answer" + self.diag())
        self.assertGreaterEqual(r.status, 400, r)
        self.assertNothingReached()

    def test_upgrade_h2c(self):
        hp = self.hp()
        r = W.exchange(self.gate, b"GET http://%s/echo HTTP/1.1\r\n"
            b"Host: %s\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
            b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n" % (hp, hp))
        self.assertIsNotNone(r, "no answer" + self.diag())
        self.assertNotEqual(r.status, 101, r)
        if r.status >= 400:
            self.assertNothingReached("by a refused h2c upgrade")
            self.assertDenyRecord(r.status)
        else:
            got = self.world.http.got()
            self.assertEqual(len(got), 1)
            self.assertIsNone(got[0].header("upgrade"),
                "Upgrade reached the upstream: %r" % got[0].head)
            self.assertIsNone(got[0].header("http2-settings"),
                "HTTP2-Settings reached the upstream: %r" % got[0].head)


if __name__ == "__main__":
    W.main()
