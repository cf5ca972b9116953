#!/usr/bin/env python3
"""
aisb-gate integration: CONNECT tunnels, the ClientHello/SNI check, /notls.

Run: AISB_GATE=build/gate/aisb-gate python3 tests/integration/gate/test_connect.py -v
"""

import json
import os
import socket
import ssl
import subprocess
import sys
import time

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import world as W  # noqa: E402

CUT_ERRORS = (ssl.SSLError, ConnectionError, OSError)


class ConnectTest(W.GateTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.world.dns.set("second.example", ["127.0.0.2"])
        cls.world.dns.set("other.example", ["127.0.0.2"])

    def tls_target(self, host="test.example"):
        return "%s:%d" % (host, self.world.tls.port)

    def tls_get(self, conn, path="/echo"):
        conn.sendall(b"GET %s HTTP/1.1\r\nHost: test.example\r\n"
            b"Connection: close\r\n\r\n" % path.encode())
        return W.read_response(W.Reader(conn))

    def tunnel(self, gate=None, target=None):
        s, resp = W.connect_tunnel(gate or self.gate,
            target or self.tls_target())
        if resp is None or resp.status != 200:
            s.close()
            self.fail("CONNECT %s not answered 200: %r%s" % (target
                or self.tls_target(), resp, self.diag(gate)))
        return s

    def hello_refused(self, server_hostname, gate=None, what=""):
        """A tunnel whose ClientHello carries this SNI must be cut."""
        g = gate or self.gate
        s = self.tunnel(g)
        client = W.client_of(s)
        conn = W.TlsConn(s, W.client_ctx(), False, server_hostname)
        try:
            with self.assertRaises(CUT_ERRORS, msg="TLS handshake with SNI "
                    "%r went through %s" % (server_hostname, what)):
                conn.handshake()
            self.assertTrue(W.closed_within(s, 5), "tunnel not closed")
        finally:
            s.close()
        self.assertNoBytes(self.world.tls, "after a refused ClientHello")
        rec = g.record_for(method="CONNECT", host="test.example",
            client=client)
        self.assertEqual(rec["decision"], "deny", rec)
        self.assertTrue(rec["reason"], rec)
        return rec

    def hello_allowed(self, server_hostname, gate=None):
        g = gate or self.gate
        s = self.tunnel(g)
        conn = W.TlsConn(s, W.client_ctx(), False, server_hostname)
        try:
            conn.handshake()
            r = self.tls_get(conn)
        finally:
            s.close()
        self.assertEqual(r.status, 200, r)
        # Python's sni_callback reports a hello without SNI as None
        self.assertEqual(self.world.tls.snis, [server_hostname])
        return r

    def test_tls_via_curl(self):
        r = W.curl(self.gate, "https://%s/echo" % self.tls_target())
        self.assertEqual((r.rc, r.connect_status, r.status), (0, 200, 200),
            "%r%s" % (r, self.diag()))
        self.assertEqual(r.header("x-sni"), "test.example")
        self.assertEqual(json.loads(r.body)["target"], "/echo")
        self.assertEqual(self.world.tls.snis, ["test.example"])
        self.assertIn("test.example", self.world.dns.names())
        rec = self.gate.record_for(method="CONNECT", host="test.example")
        self.assertEqual(rec["decision"], "allow", rec)
        self.assertEqual(rec["port"], self.world.tls.port, rec)
        self.assertEqual(rec["sni"], "test.example", rec)
        self.assertEqual(rec["rule"], self.tls_target(), rec)
        self.assertIn("127.0.0.2", rec["addr"] or "", rec)
        self.assertEqual(rec["status"], 200, rec)
        self.assertGreater(rec["bytes_up"], 0, rec)
        self.assertGreater(rec["bytes_down"], len(r.body), rec)

    def test_tls_big_download(self):
        n = 3 * 1000 * 1000
        r = W.curl(self.gate, "https://%s/big?n=%d" % (self.tls_target(), n),
            timeout=60)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(W.sha(r.body), W.sha(W.pattern(n)))
        rec = self.gate.record_for(method="CONNECT", host="test.example")
        self.assertGreater(rec["bytes_down"], n, rec)

    def test_openssl_s_client(self):
        p = subprocess.run(["openssl", "s_client", "-quiet",
            "-proxy", "127.0.0.1:%d" % self.gate.port,
            "-connect", self.tls_target(), "-servername", "test.example"],
            input=b"GET /echo HTTP/1.1\r\nHost: test.example\r\n"
            b"Connection: close\r\n\r\n", stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=30)
        self.assertIn(b"HTTP/1.1 200", p.stdout, "%r %r%s" % (p.stdout,
            p.stderr, self.diag()))

    def test_hello_split_across_segments(self):
        s = self.tunnel()
        time.sleep(0.2)
        self.assertEqual(self.world.tls.bytes_in, 0,
            "bytes reached the upstream before the ClientHello")

        def dribble(data):
            for i in range(0, len(data), 11):
                s.sendall(data[i:i + 11])
                time.sleep(0.003)
        conn = W.TlsConn(s, W.client_ctx(verify=True), False, "test.example")
        try:
            conn.handshake(dribble)
            r = self.tls_get(conn)
        finally:
            s.close()
        self.assertEqual(r.status, 200, "%r%s" % (r, self.diag()))
        self.assertEqual(self.world.tls.snis, ["test.example"])

    def test_hello_in_same_packet_as_connect(self):
        target = self.tls_target().encode()
        s = W.gate_socket(self.gate)
        heads = []

        def send_with_connect(data):
            s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%s"
                % (target, target, data))
            h = b""
            for _ in range(4096):
                c = s.recv(1)
                if not c:
                    break
                h += c
                if h.endswith(b"\r\n\r\n"):
                    break
            heads.append(h)
        conn = W.TlsConn(s, W.client_ctx(verify=True), False, "test.example")
        try:
            conn.handshake(send_with_connect)
            r = self.tls_get(conn)
        finally:
            s.close()
        self.assertTrue(heads and heads[0].startswith(b"HTTP/1.1 200"),
            heads)
        self.assertEqual(r.status, 200, r)

    def test_sni_mismatch_cut(self):
        rec = self.hello_refused("other.example")
        self.assertEqual(rec["sni"], "other.example", rec)

    def test_sni_below_connect_host_cut(self):
        # strict: the SNI names the CONNECT host itself
        self.world.dns.set("www.test.example", ["127.0.0.2"])
        self.hello_refused("www.test.example")

    def test_sni_missing_cut(self):
        rec = self.hello_refused(None)
        self.assertIsNone(rec["sni"], rec)

    def test_non_tls_bytes_cut(self):
        for first in (b"GET / HTTP/1.1\r\nHost: test.example\r\n\r\n",
                b"\x17\x03\x03\x00\x05hello",
                b"\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00",
                b"SSH-2.0-OpenSSH_9.2\r\n"):
            with self.subTest(first=first):
                self.world.reset()
                s = self.tunnel()
                client = W.client_of(s)
                try:
                    s.sendall(first)
                    self.assertTrue(W.closed_within(s, 5),
                        "tunnel not closed after %r" % first)
                finally:
                    s.close()
                self.assertNoBytes(self.world.tls, "after %r" % first)
                rec = self.gate.record_for(method="CONNECT", client=client)
                self.assertEqual(rec["decision"], "deny", rec)

    def test_sni_strict_refuses_other_allowlisted_name(self):
        g = self.new_gate(allow=self.world.base_allow() +
            [self.tls_target("second.example")], args=["--sni", "strict"])
        self.hello_refused("second.example", gate=g)
        self.world.reset()
        self.hello_allowed("test.example", gate=g)

    def test_sni_allowlisted(self):
        g = self.new_gate(allow=self.world.base_allow() +
            [self.tls_target("second.example")], args=["--sni", "allowlisted"])
        self.hello_allowed("second.example", gate=g)
        self.world.reset()
        self.hello_refused("other.example", gate=g, what="(not allowlisted)")
        self.world.reset()
        self.hello_refused(None, gate=g, what="(no SNI)")

    def test_sni_off(self):
        g = self.new_gate(args=["--sni", "off"])
        self.hello_allowed("other.example", gate=g)
        self.world.reset()
        self.hello_allowed(None, gate=g)

    def test_notls_plain_bytes(self):
        target = "test.example:%d" % self.world.echo.port
        s = self.tunnel(target=target)
        client = W.client_of(s)
        data = b"hello plain\n" + W.pattern(20000)
        try:
            s.sendall(data)
            rd = W.Reader(s)
            back = rd.exactly(len(data))
            s.shutdown(socket.SHUT_WR)
            tail = rd.rest()
        finally:
            s.close()
        self.assertEqual(back, data)
        self.assertEqual(tail, b"", "bytes after the echo")
        self.assertEqual(self.world.echo.received(), data)
        rec = self.gate.record_for(method="CONNECT", client=client)
        self.assertEqual(rec["decision"], "allow", rec)
        self.assertIsNone(rec["sni"], rec)
        self.assertEqual(rec["rule"], target + "/notls", rec)
        for k in ("bytes_up", "bytes_down"):
            self.assertGreaterEqual(rec[k], len(data), rec)
            self.assertLess(rec[k], len(data) + 1024, rec)

    def test_notls_server_speaks_first(self):
        banner = self.world.add(W.TcpUpstream("127.0.0.2", mode="banner",
            banner=b"220 hello from upstream\r\n"))
        target = "test.example:%d" % banner.port
        g = self.new_gate(allow=self.world.base_allow() +
            [target + "/notls"])
        s = self.tunnel(gate=g, target=target)
        try:
            rd = W.Reader(s)
            line = rd.until(b"\r\n")
        except socket.timeout:
            line = None
        finally:
            s.close()
        self.assertEqual(line, b"220 hello from upstream\r\n",
            "server-first bytes did not reach the client")

    def sink_gate(self):
        """A gate whose TLS-port entry leads to a raw sink that records
        the exact bytes the gate passed on."""
        sink = self.world.add(W.TcpUpstream("127.0.0.2", mode="sink"))
        target = "test.example:%d" % sink.port
        g = self.new_gate(allow=self.world.base_allow() + [target])
        return sink, target, g

    def test_hello_bytes_passed_exactly(self):
        sink, target, g = self.sink_gate()
        hello = W.hello_bytes("test.example")
        extra = b"\x17\x03\x03\x00\x04MORE"
        s = self.tunnel(gate=g, target=target)
        try:
            s.sendall(hello + extra)
            ok = W.wait_until(lambda: len(sink.received()) >=
                len(hello + extra), 5)
        finally:
            s.close()
        self.assertTrue(ok, "sink got %d of %d bytes%s" % (len(
            sink.received()), len(hello + extra), self.diag(g)))
        self.assertEqual(sink.received(), hello + extra)

    def test_hello_fragmented_across_records(self):
        sink, target, g = self.sink_gate()
        hello = W.hello_bytes("test.example")
        self.assertEqual(hello[0], 0x16)
        body = hello[5:]
        cut = 40
        frag = (b"\x16\x03\x01" + len(body[:cut]).to_bytes(2, "big") +
            body[:cut] + b"\x16\x03\x01" +
            len(body[cut:]).to_bytes(2, "big") + body[cut:])
        s = self.tunnel(gate=g, target=target)
        try:
            s.sendall(frag[:7])
            time.sleep(0.1)
            s.sendall(frag[7:])
            ok = W.wait_until(lambda: len(sink.received()) >= len(frag), 5)
        finally:
            s.close()
        self.assertTrue(ok, "a ClientHello in two records was not passed: "
            "sink got %d bytes%s" % (len(sink.received()), self.diag(g)))
        self.assertEqual(sink.received(), frag)

    def test_notls_data_with_connect(self):
        target = "test.example:%d" % self.world.echo.port
        s, resp = W.connect_tunnel(self.gate, target, extra=b"EARLY DATA")
        try:
            self.assertEqual(resp.status, 200, resp)
            got = W.Reader(s).exactly(len(b"EARLY DATA"))
        finally:
            s.close()
        self.assertEqual(got, b"EARLY DATA")

    def test_tls_port_via_python_ssl_socket(self):
        # the stock ssl module over the tunnel, hostname verified
        s = self.tunnel()
        ctx = W.client_ctx(verify=True)
        ss = ctx.wrap_socket(s, server_hostname="test.example")
        try:
            r = self.tls_get(ss)
        finally:
            ss.close()
        self.assertEqual(r.status, 200, r)


if __name__ == "__main__":
    W.main()
