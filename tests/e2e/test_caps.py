#!/usr/bin/env python3
"""
Resource caps that hold. Rootless podman on cgroup v1 ignores them
(test_run.py checks that ai-sandbox refuses to run there); rootful podman
enforces them on v1 and v2. So this suite runs ai-sandbox as root: it reads
the caps back from inside the sandbox, and shows a fork bomb and a memory
bomb ending with the sandbox, not with the host.
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration", "gate"))

import e2elib  # noqa: E402
import world  # noqa: E402

SANDBOX_UID = 1000


def host_procs(pattern):
    p = subprocess.run(["pgrep", "-f", pattern], capture_output=True,
                       text=True)
    return [x for x in p.stdout.split() if x]


class CapsTest(e2elib.E2ECase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.http = world.HttpUpstream("127.0.0.2")
        cls.base = tempfile.mkdtemp(prefix="aisb-caps-")
        cls.project = os.path.join(cls.base, "proj")
        os.mkdir(cls.project)
        # Rootful: the sandbox user is host uid 1000.
        os.chown(cls.project, SANDBOX_UID, SANDBOX_UID)
        cls.env = dict(os.environ)
        cls.env.update({"AISB_STATE_DIR": os.path.join(cls.base, "state"),
                        "AISB_CACHE_DIR": os.path.join(cls.base, "cache"),
                        "AISB_CONFIG_DIR": os.path.join(cls.base, "config"),
                        "AISB_RUNTIME_DIR": os.path.join(cls.base, "run")})
        for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            cls.env.pop(k, None)
        cls.common = ["--base-image", e2elib.BASE_IMAGE]
        ca = e2elib.extra_ca_file()
        if ca:
            cls.common += ["--ca-file", ca]
        b = cls.run_aisb(["build"] + cls.common, timeout=3600)
        if b.returncode != 0:
            raise RuntimeError("rootful build failed:\n" + b.stderr[-3000:])

    @classmethod
    def tearDownClass(cls):
        cls.http.close()
        subprocess.run(["rm", "-rf", cls.base])

    @classmethod
    def run_aisb(cls, args, timeout=600):
        return subprocess.run([e2elib.AISB_BIN] + args, cwd=cls.project,
                              env=cls.env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def sandbox(self, flags, script, timeout=300):
        return self.run_aisb(["--no-tty"] + self.common +
                             ["--allow", "127.0.0.2"] + flags +
                             ["--", "sh", "-c", script], timeout=timeout)

    def test_caps_read_back_inside(self):
        r = self.sandbox(["--memory", "256m", "--pids", "64"],
                         "cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                         "2>/dev/null || cat /sys/fs/cgroup/memory.max; "
                         "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || "
                         "cat /sys/fs/cgroup/pids.max; id -u")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), [str(256 * 1024 * 1024), "64",
                                            str(SANDBOX_UID)], r.stdout)

    def test_egress_still_enforced_rootful(self):
        r = self.sandbox([], "curl -sS -o /dev/null -w '%%{http_code} ' "
                         "http://127.0.0.2:%d/echo; curl -sS -m 3 --noproxy "
                         "'*' http://10.0.2.2:%d/ >/dev/null 2>&1 || "
                         "echo blocked" % (self.http.port, self.http.port))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["200", "blocked"], r.stdout)

    def test_fork_bomb_ends_with_the_sandbox(self):
        marker = "aisb-forkbomb-%d" % os.getpid()
        start = time.monotonic()
        r = self.sandbox(["--pids", "64"],
                         "echo %s >/dev/null; b() { b | b & }; b; sleep 5; "
                         "echo host-survived" % marker, timeout=180)
        self.assertLess(time.monotonic() - start, 180)
        self.assertIn("host-survived", r.stdout, r.stderr[-2000:])
        self.assertRegex(r.stderr, "(?i)resource temporarily unavailable|"
                         "cannot fork|fork")
        self.assertTrue(e2elib_wait(lambda: not host_procs(marker), 30),
                        "bomb processes outlived the sandbox")

    def test_memory_bomb_ends_with_the_sandbox(self):
        r = self.sandbox(["--memory", "128m"],
                         "python3 -c 'a = []\n"
                         "for _ in range(200): a.append(bytearray(10**7))'; "
                         "echo status $?", timeout=180)
        # The OOM killer ends the allocation inside the sandbox (SIGKILL:
        # 137), normally python itself, and the run goes on; if it picked
        # the shell instead, the whole sandbox ended with 137. Either way
        # the bomb ended with the sandbox and the host is untouched.
        self.assertTrue("status 137" in r.stdout or r.returncode == 137,
                        "exit %d\n%s\n%s" % (r.returncode, r.stdout,
                                              r.stderr[-1000:]))


def e2elib_wait(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.5)
    return pred()


if __name__ == "__main__":
    unittest.main(verbosity=2)
