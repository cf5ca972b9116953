#!/usr/bin/env python3
"""
aisb-gate integration: the DNS answer cache. An answer is kept for its
smallest TTL, at most --dns-cache seconds; TTL 0 and failures are never
kept; SIGHUP empties it; --dns-cache 0 turns it off.

Run: AISB_GATE=build/gate/aisb-gate python3 tests/integration/gate/test_dnscache.py -v
"""

import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True	# keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import world as W  # noqa: E402

NAME = "cache.example"


class DnsCacheTest(W.GateTestCase):

    def setUp(self):
        super().setUp()
        self.world.dns.set(NAME, ["127.0.0.2"])

    def allow(self):
        return self.world.base_allow() + ["%s:%d" % (NAME,
            self.world.http.port)]

    def get(self, gate, name=NAME):
        """One forwarded GET on a new connection; the response or None."""
        t = ("%s:%d" % (name, self.world.http.port)).encode()
        return W.exchange(gate, b"GET http://%s/echo HTTP/1.1\r\n"
            b"Host: %s\r\nConnection: close\r\n\r\n" % (t, t))

    def queries(self, name=NAME):
        return self.world.dns.names().count(name)

    def two_gets(self, gate, pause=0.0, between=None):
        """Two requests; the queries the first and both of them made."""
        r1 = self.get(gate)
        self.assertIsNotNone(r1, self.diag(gate))
        self.assertEqual(r1.status, 200, "%r%s" % (r1, self.diag(gate)))
        first = self.queries()
        self.assertGreaterEqual(first, 1, "the name was never resolved")
        time.sleep(pause)
        if between is not None:
            between()
        r2 = self.get(gate)
        self.assertIsNotNone(r2, self.diag(gate))
        self.assertEqual(r2.status, 200, "%r%s" % (r2, self.diag(gate)))
        return first, self.queries()

    def test_answer_kept_for_its_ttl(self):
        self.world.dns.ttls[NAME] = 30
        g = self.new_gate(allow=self.allow())
        first, both = self.two_gets(g)
        self.assertEqual(both, first,
            "a 30 s answer was asked for again within a second: %r"
            % self.world.dns.queries)
        # A record is written when the exchange ends, which may be just
        # after the client has read its response.
        def recs_for():
            return [r for r in g.records() if r["host"] == NAME]
        W.wait_until(lambda: len(recs_for()) == 2, 5)
        recs = recs_for()
        self.assertEqual(len(recs), 2, recs)
        for r in recs:
            self.assertEqual(r["decision"], "allow", r)
            self.assertIn("127.0.0.2", r["addr"] or "", r)
            self.assertIsNotNone(r["dns_ms"], r)

    def test_ttl_zero_is_not_kept(self):
        self.world.dns.ttls[NAME] = 0
        g = self.new_gate(allow=self.allow())
        first, both = self.two_gets(g)
        self.assertEqual(both, 2 * first, "an answer with TTL 0 was kept")

    def test_expired_answer_is_asked_again(self):
        self.world.dns.ttls[NAME] = 1
        g = self.new_gate(allow=self.allow())
        first, both = self.two_gets(g, pause=2.1)
        self.assertEqual(both, 2 * first,
            "an answer was used past its TTL")

    def test_cap_shorter_than_ttl(self):
        self.world.dns.ttls[NAME] = 3600
        g = self.new_gate(allow=self.allow(), args=["--dns-cache", "1"])
        first, both = self.two_gets(g, pause=2.1)
        self.assertEqual(both, 2 * first,
            "an answer was kept past --dns-cache")

    def test_cache_off(self):
        self.world.dns.ttls[NAME] = 30
        g = self.new_gate(allow=self.allow(), args=["--dns-cache", "0"])
        first, both = self.two_gets(g)
        self.assertEqual(both, 2 * first, "--dns-cache 0 kept an answer")

    def test_sighup_empties_the_cache(self):
        self.world.dns.ttls[NAME] = 30
        g = self.new_gate(allow=self.allow())

        def reload():
            g.signal(signal.SIGHUP)
            self.assertTrue(W.wait_until(lambda: "reloaded" in g.stderr(),
                5), "no reload" + self.diag(g))

        first, both = self.two_gets(g, between=reload)
        self.assertEqual(both, 2 * first,
            "a cached answer outlived SIGHUP")

    def test_failure_is_not_kept(self):
        self.world.dns.ttls["gone.example"] = 30
        self.world.dns.set("gone.example", "NXDOMAIN")
        g = self.new_gate(allow=self.allow() + ["gone.example:%d" %
            self.world.http.port])
        seen = []
        for _ in range(2):
            r = self.get(g, "gone.example")
            self.assertEqual(r.status, 502, r)
            seen.append(self.queries("gone.example"))
        self.assertGreater(seen[0], 0, "the name was never resolved")
        self.assertGreater(seen[1], seen[0],
            "a failed lookup was served from the cache")
        self.assertDenyRecord(502, gate=g, reason="dns: no such name")

    def test_bad_value_is_a_usage_error(self):
        for bad in ("-1", "x", "86401"):
            p = subprocess.run([W.GATE_BIN, "--listen", "127.0.0.1:1",
                "--dns-cache", bad], capture_output=True, timeout=10)
            self.assertEqual(p.returncode, 2, p)
            self.assertIn(b"--dns-cache", p.stderr, p)
        # Both ends of the range are accepted.
        for good in ("0", "86400"):
            p = subprocess.run([W.GATE_BIN, "-n", "--listen", "127.0.0.1:1",
                "--allow", "a.example", "--dns-cache", good],
                capture_output=True, timeout=10)
            self.assertEqual(p.returncode, 0, p)


if __name__ == "__main__":
    W.main()
