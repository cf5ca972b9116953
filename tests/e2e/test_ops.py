#!/usr/bin/env python3
"""
Operations, end to end, as the unprivileged test user with real podman:
doctor (each measured host problem provoked on purpose: a missing podman,
crun on a hybrid cgroup host, ulimits beyond the hard limits, /dev/net/tun
at 0600, a stale and an UNPINNED base, a dirty git tree; --deep proving
egress against the host's test world), ps, clean (stopped sandboxes,
orphaned gates, never a named gate, --all, unused volumes only), inspect,
the labelled home volume, and install.sh --alias / --uninstall.

Everything this suite makes carries its own project directory, names
starting "aisb-e2eops-" or "e2eops-", and is removed at the end; clean is
always scoped with --here or a volume pattern of its own, because other
suites share the user's podman storage.
"""
import json
import os
import re
import resource
import stat
import subprocess
import sys
import tarfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration", "gate"))

import e2elib  # noqa: E402
import world  # noqa: E402

TAG = "e2eops-%d" % os.getpid()
CHECKS = ["podman", "rootless", "subids", "network", "tun", "runtime",
          "ulimits", "caps", "storage", "selinux", "bind-mount", "base-pin",
          "git", "ports"]
DEEP = ["egress-allowed", "egress-unlisted", "egress-raw-ip", "egress-udp",
        "egress-ipv6"]


def verdicts(out):
    """{check: (LEVEL, text with its fix)} from doctor's report."""
    res, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^(OK|SKIP|WARN|FAIL) +([a-z0-9-]+): (.*)$", line)
        if m:
            name = m.group(2)
            res[name] = [m.group(1), m.group(3)]
        elif line.startswith("      ") and name:
            res[name][1] += " " + line.strip()
    return {k: tuple(v) for k, v in res.items()}


def slurp(path):
    with open(path) as f:
        return f.read()


def cgroup_v2():
    return os.path.exists("/sys/fs/cgroup/cgroup.controllers")


class Env:
    """A project, a state, a config and (optionally) a cache directory of
    the test user's, with the configuration the other suites use."""

    def __init__(self, dns=None, cache=False, extra=()):
        self.project = e2elib.user_tmpdir("aisb-e2eops-proj-")
        self.state = e2elib.user_tmpdir("aisb-e2eops-state-")
        self.config = e2elib.user_tmpdir("aisb-e2eops-config-")
        self.cache = e2elib.user_tmpdir("aisb-e2eops-cache-") if cache \
            else None
        lines = ["base-image = %s" % e2elib.BASE_IMAGE]
        if dns is not None:
            lines.append("dns-server = %s" % dns.addr)
        if e2elib.limits_unenforced():
            lines.append("allow-unenforced-limits = yes")
        ca = e2elib.extra_ca_file()
        if ca and e2elib.CA_KEY:
            lines.append("%s = %s" % (e2elib.CA_KEY, ca))
        lines.extend(extra)
        self.write_config(lines)

    def write_config(self, lines):
        path = os.path.join(self.config, "config")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o600)
        e2elib.chown_tree(self.config)

    def env(self, extra=None):
        e = {"AISB_STATE_DIR": self.state, "AISB_CONFIG_DIR": self.config}
        if self.cache:
            e["AISB_CACHE_DIR"] = self.cache
        if extra:
            e.update(extra)
        return e

    def run(self, args, env=None, timeout=1800, cwd=None):
        return e2elib.run_as_user([e2elib.AISB_BIN] + list(args),
                                  cwd=cwd or self.project, env=self.env(env),
                                  timeout=timeout)

    def popen(self, args, env=None):
        e = e2elib.user_env(self.env(env))
        return subprocess.Popen(["runuser", "-u", e2elib.USER, "--",
                                 e2elib.AISB_BIN] + list(args), env=e,
                                cwd=self.project, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def doctor(self, args=(), env=None):
        r = self.run(["doctor"] + list(args), env=env)
        return r, verdicts(r.stdout)

    def runs(self):
        path = os.path.join(self.state, "runs.jsonl")
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip()]


def as_user(argv, cwd, env=None):
    return e2elib.run_as_user(argv, cwd=cwd, env=env, timeout=300)


def names(*filters):
    args = ["ps", "-a", "--format", "{{.Names}}"]
    for f in filters:
        args += ["--filter", f]
    return [n for n in e2elib.podman(*args).stdout.split() if n]


def volumes(prefix):
    out = e2elib.podman("volume", "ls", "--format", "{{.Name}}").stdout
    return sorted(v for v in out.split() if v.startswith(prefix))


class DoctorTest(e2elib.E2ECase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.w = world.FakeDns()
        cls.e = Env(cls.w)
        # The policy's image, so the bind-mount round trip has one.
        b = cls.e.run(["build"], timeout=3600)
        if b.returncode != 0:
            raise RuntimeError("build: %s" % b.stderr[-2000:])

    @classmethod
    def tearDownClass(cls):
        cls.w.close()

    def explain(self, r):
        return "exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr[-2000:])

    def test_every_check_speaks_and_the_host_is_fit(self):
        r, v = self.e.doctor()
        self.assertEqual(sorted(v), sorted(CHECKS), self.explain(r))
        fails = [k for k, (lvl, _) in v.items() if lvl == "FAIL"]
        self.assertEqual(fails, [], self.explain(r))
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertRegex(r.stdout, r"\nfit: no problems, \d+ warnings?\n")
        self.assertEqual(v["podman"][0], "OK")
        self.assertRegex(v["podman"][1], r"podman \d+\.\d+")
        self.assertEqual(v["bind-mount"],
                         ("OK", "a file the sandbox's uid 1000 wrote in a "
                          "bind mount belongs to you (uid %d) on the host"
                          % e2elib.user_info()[0]))
        self.assertIn("no published ports", v["ports"][1])
        if not cgroup_v2():
            self.assertIn("passes --runtime=runc itself", v["runtime"][1])
        if e2elib.limits_unenforced():
            self.assertEqual(v["caps"][0], "WARN")
            self.assertIn("allow-unenforced-limits is set", v["caps"][1])

    def test_missing_podman(self):
        e = Env(self.w, extra=["podman = /nonexistent/podman"])
        r, v = e.doctor()
        self.assertEqual(r.returncode, 1, self.explain(r))
        self.assertEqual(v["podman"][0], "FAIL", self.explain(r))
        self.assertIn("\"/nonexistent/podman\" does not run", v["podman"][1])
        self.assertIn("fix: install podman", v["podman"][1])
        self.assertEqual(v["rootless"][0], "SKIP")
        self.assertIn("not fit:", r.stdout)

    def test_crun_on_this_host(self):
        r, v = self.e.doctor(env={"AISB_RUNTIME": "crun"})
        if not cgroup_v2():
            self.assertEqual(v["runtime"][0], "FAIL", self.explain(r))
            self.assertIn("crun refuses this cgroup", v["runtime"][1])
            self.assertIn("cgroups in hybrid mode not supported",
                          v["runtime"][1])
            self.assertIn("fix: set runtime = runc", v["runtime"][1])
            self.assertEqual(r.returncode, 1)
        elif not any(os.access(os.path.join(d, "crun"), os.X_OK)
                     for d in ("/usr/bin", "/usr/sbin", "/usr/local/bin")):
            self.assertEqual(v["runtime"][0], "FAIL", self.explain(r))
            self.assertIn("crun is not installed", v["runtime"][1])
        else:
            self.assertEqual(v["runtime"][0], "OK", self.explain(r))

    def test_nofile_beyond_the_hard_limit(self):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        if hard == resource.RLIM_INFINITY or hard >= 1048576:
            self.skipTest("the hard nofile limit is %s: nothing is above "
                          "it that the key accepts" % hard)
        r, v = self.e.doctor(["--nofile", str(hard + 1)])
        self.assertEqual(r.returncode, 1, self.explain(r))
        self.assertEqual(v["ulimits"][0], "FAIL", self.explain(r))
        self.assertIn("nofile %d is above the hard limit %d" %
                      (hard + 1, hard), v["ulimits"][1])
        self.assertIn("setrlimit: operation not permitted", v["ulimits"][1])
        self.assertIn("fix: set nofile = %d or lower" % hard,
                      v["ulimits"][1])
        # And a run would fail before any container: the same limit.
        r2 = self.e.run(["--nofile", str(hard + 1), "--net", "none",
                         "--no-tty", "--", "true"])
        self.assertNotEqual(r2.returncode, 0)
        self.assertIn("above this host's hard limit", r2.stderr)

    def test_nproc_beyond_podmans_own_limit(self):
        # Measured: podman's own processes run with a lower hard nproc
        # (32768) than the host allows; a container above it fails.
        p = e2elib.podman("unshare", "cat", "/proc/self/limits")
        m = re.search(r"Max processes\s+\S+\s+(\d+)", p.stdout)
        self.assertIsNotNone(m, p.stdout + p.stderr)
        podman_hard = int(m.group(1))
        if podman_hard >= 4194304:
            self.skipTest("podman's processes allow every nproc")
        r, v = self.e.doctor(["--nproc", str(podman_hard + 1)])
        self.assertEqual(v["ulimits"][0], "FAIL", self.explain(r))
        self.assertIn("nproc %d is above the hard limit %d" %
                      (podman_hard + 1, podman_hard), v["ulimits"][1])

    def test_tun_mode_0600(self):
        st = os.stat("/dev/net/tun")
        try:
            os.chmod("/dev/net/tun", 0o600)
            r, v = self.e.doctor()
        finally:
            os.chmod("/dev/net/tun", stat.S_IMODE(st.st_mode))
        self.assertEqual(r.returncode, 1, self.explain(r))
        self.assertEqual(v["tun"][0], "FAIL", self.explain(r))
        self.assertIn("/dev/net/tun is mode 0600: rootless slirp4netns "
                      "cannot open it", v["tun"][1])
        self.assertIn("fix: as root: chmod 0666 /dev/net/tun", v["tun"][1])
        r, v = self.e.doctor()
        self.assertEqual(v["tun"][0], "OK", self.explain(r))

    def test_base_pin_missing_stale_and_unpinned(self):
        e = Env(self.w, cache=True)
        r, v = e.doctor()
        self.assertEqual(v["base-pin"][0], "WARN", self.explain(r))
        m = re.search(r"no base pin recorded for \S+ yet \((/[^)]+)\)",
                      v["base-pin"][1])
        self.assertIsNotNone(m, v["base-pin"])
        self.assertIn("fix: ai-sandbox build", v["base-pin"][1])
        # No pin: no tag to find an image by.
        self.assertEqual(v["bind-mount"][0], "SKIP")
        self.assertIn("ai-sandbox build", v["bind-mount"][1])
        path = m.group(1)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "w") as f:
            f.write("ref %s\ndigest sha256:%s\nresolved %d\nvia debootstrap\n"
                    % (e2elib.BASE_IMAGE, "ab" * 32,
                       int(time.time()) - 30 * 86400))
        os.chmod(path, 0o600)
        e2elib.chown_tree(e.cache)
        r, v = e.doctor()
        self.assertEqual(v["base-pin"][0], "WARN", self.explain(r))
        self.assertIn("is 30 days old (base-ttl-days = 7)", v["base-pin"][1])
        self.assertIn("fix: ai-sandbox update", v["base-pin"][1])
        r, v = e.doctor(env={"AISB_BASE_TTL_DAYS": "-1"})
        self.assertEqual(v["base-pin"][0], "OK", self.explain(r))
        # An image built from an unpinned base, as its label says.
        ref = "localhost/aisb-e2eops-unpinned:%d" % os.getpid()
        d = e2elib.user_tmpdir("aisb-e2eops-tar-")
        tar = os.path.join(d, "rootfs.tar")
        with tarfile.open(tar, "w") as t:
            info = tarfile.TarInfo("etc/aisb-e2eops")
            t.addfile(info)
        e2elib.chown_tree(d)
        try:
            p = e2elib.podman("import", "--change",
                              "LABEL aisb.base-digest=UNPINNED", tar, ref)
            self.assertEqual(p.returncode, 0, p.stderr)
            r, v = e.doctor(env={"AISB_BASE_TTL_DAYS": "-1"})
            self.assertEqual(v["base-pin"][0], "WARN", self.explain(r))
            self.assertIn("built from an UNPINNED base", v["base-pin"][1])
        finally:
            e2elib.podman("rmi", ref)

    def test_git_tree(self):
        e = Env(self.w)
        r, v = e.doctor()
        self.assertEqual(v["git"][0], "WARN", self.explain(r))
        self.assertIn("not in a git repository", v["git"][1])
        git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@invalid",
               "-C", e.project]
        with open(os.path.join(e.project, "main.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        e2elib.chown_tree(e.project)
        for args in (["init", "-q"], ["add", "-A"],
                     ["commit", "-q", "-m", "start"]):
            p = as_user(git + args, e.project)
            self.assertEqual(p.returncode, 0, p.stderr)
        r, v = e.doctor()
        self.assertEqual(v["git"][0], "OK", self.explain(r))
        with open(os.path.join(e.project, "main.c"), "a") as f:
            f.write("/* changed */\n")
        r, v = e.doctor()
        self.assertEqual(v["git"][0], "WARN", self.explain(r))
        self.assertIn("has 1 uncommitted change ( M main.c)", v["git"][1])
        self.assertIn("fix: commit (or stash) first", v["git"][1])
        self.assertEqual(r.returncode, 0, "a warning keeps the host fit")

    def test_caps_enforced_or_refused(self):
        why = e2elib.limits_unenforced()
        r, v = self.e.doctor(env={"AISB_ALLOW_UNENFORCED_LIMITS": "no"})
        if why is None:
            self.assertEqual(v["caps"][0], "OK", self.explain(r))
            return
        self.assertEqual(v["caps"][0], "FAIL", self.explain(r))
        self.assertIn(why, v["caps"][1])
        self.assertIn("Runs are refused", v["caps"][1])
        self.assertEqual(r.returncode, 1)

    def test_deep_proves_egress(self):
        http = world.HttpUpstream("127.0.0.2")
        self.w.set("test.example", ["127.0.0.2"])
        try:
            r, v = self.e.doctor(["--deep", "--allow",
                                  "test.example:%d" % http.port,
                                  "--allow", "127.0.0.2"])
        finally:
            http.close()
        self.assertEqual(sorted(v), sorted(CHECKS + DEEP), self.explain(r))
        for k in DEEP:
            self.assertEqual(v[k][0], "OK", "%s: %s" % (k, self.explain(r)))
        self.assertIn("allowlisted test.example passed the gate (HTTP status "
                      "200", v["egress-allowed"][1])
        self.assertIn("refused by the gate (not allowlisted, HTTP 403)",
                      v["egress-unlisted"][1])
        self.assertIn("IP literal not allowlisted", v["egress-raw-ip"][1])
        self.assertEqual(r.returncode, 0, self.explain(r))
        self.assertIn("test.example", self.w.names())
        self.assertNotIn("aisb-doctor-unlisted.invalid", self.w.names())
        self.assertTrue(http.requests, "the upstream saw no request")
        # The probe sandbox left nothing behind.
        self.assertEqual(names("label=aisb.project=" + self.e.project), [])


class LifecycleTest(e2elib.E2ECase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.w = world.FakeDns()
        cls.e = Env(cls.w)
        cls.allow = ["--allow", "127.0.0.2"]

    @classmethod
    def tearDownClass(cls):
        for n in names("label=aisb.project=" + cls.e.project):
            e2elib.podman("rm", "-f", "-v", n)
        cls.w.close()

    def ps(self, *args):
        r = self.e.run(["ps", "--json"] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def kept_session(self):
        r = self.e.run(["--keep", "--no-tty"] + self.allow +
                       ["--", "true"])
        self.assertEqual(r.returncode, 0, r.stderr)
        return self.e.runs()[-1]["session"]

    def test_ps_inspect_clean_of_a_kept_session(self):
        s = self.kept_session()
        rows = [x for x in self.ps("--all", "--here") if x["session"] == s]
        self.assertEqual(sorted(x["role"] for x in rows), ["gate", "sandbox"],
                         rows)
        sb = [x for x in rows if x["role"] == "sandbox"][0]
        self.assertFalse(sb["running"])
        self.assertEqual(sb["project"], self.e.project)
        self.assertEqual(sb["policy"], "net=allow,allow=1,via=gate")
        self.assertEqual(sb["ports"], "")
        running = [x for x in self.ps("--here") if x["session"] == s]
        self.assertEqual([x["role"] for x in running], ["gate"],
                         "ps without --all: running ones only")
        text = self.e.run(["ps", "--all", "--here"]).stdout
        self.assertRegex(text, r"\n%s +sandbox +exited +\d+s +"
                         r"net=allow,allow=1,via=gate +%s +none\n"
                         % (s, re.escape(self.e.project)))

        r = self.e.run(["inspect", s])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("session %s\n" % s, r.stdout)
        self.assertIn("exit status 0", r.stdout)
        self.assertIn("  allowlist   127.0.0.2\n", r.stdout)
        self.assertRegex(r.stdout, r"containers  (sandbox|gate) aisb-")
        self.assertIn("aisb.base-ref=%s" % e2elib.BASE_IMAGE, r.stdout)
        self.assertRegex(r.stdout, r"base pin    %s sha256:[0-9a-f]{64}, "
                         r"resolved " % re.escape(e2elib.BASE_IMAGE))
        self.assertIn("ai-sandbox gate logs --session %s" % s, r.stdout)
        self.assertIn("none published", r.stdout)
        here = self.e.run(["inspect"])
        self.assertIn("session %s\n" % s, here.stdout, "newest of project")

        dry = self.e.run(["clean", "--here", "--dry-run"])
        self.assertEqual(dry.returncode, 0, dry.stderr)
        self.assertIn("would remove sandbox aisb-%s" % s, dry.stdout)
        self.assertIn("would remove gate aisb-gate-%s" % s, dry.stdout)
        self.assertEqual(len(names("label=aisb.session=" + s)), 2)
        c = self.e.run(["clean", "--here"])
        self.assertEqual(c.returncode, 0, c.stderr)
        self.assertIn("removed sandbox aisb-%s" % s, c.stdout)
        self.assertIn("removed gate aisb-gate-%s" % s, c.stdout,
                      "the gate of a sandbox cleaned in the same pass")
        self.assertEqual(names("label=aisb.session=" + s), [])
        again = self.e.run(["inspect", s])
        self.assertIn("none (removed when the run ended", again.stdout)
        c = self.e.run(["clean", "--here"])
        self.assertIn("no stopped or orphaned containers to remove "
                      "for this project", c.stdout)

    def test_clean_all_takes_running_never_named(self):
        name = "%s-gate" % TAG
        up = self.e.run(["gate", "up", "--name", name] + self.allow)
        self.assertEqual(up.returncode, 0, up.stderr)
        p = self.e.popen(["--no-tty"] + self.allow + ["--", "sleep", "300"])
        try:
            deadline = time.monotonic() + 600
            live = []
            while time.monotonic() < deadline and p.poll() is None:
                live = [x for x in self.ps("--here")
                        if x["role"] == "sandbox" and x["running"]]
                if live:
                    break
                time.sleep(0.5)
            self.assertTrue(live, "no running sandbox appeared")
            s = live[0]["session"]
            c = self.e.run(["clean", "--here"])
            self.assertNotIn("aisb-%s" % s, c.stdout, "running: kept")
            self.assertIn("aisb-%s" % s, names("label=aisb.session=" + s))
            c = self.e.run(["clean", "--here", "--all"])
            self.assertEqual(c.returncode, 0, c.stderr)
            self.assertIn("removed sandbox aisb-%s" % s, c.stdout)
            self.assertNotIn(name, c.stdout)
            p.communicate(timeout=120)
            self.assertNotEqual(p.returncode, 0)
            self.assertEqual(names("label=aisb.session=" + s), [])
            self.assertEqual(names("name=aisb-gate-named-" + name),
                             ["aisb-gate-named-" + name],
                             "clean --all removed a named gate")
            rows = [x for x in self.ps("--here")
                    if x["gate_name"] == name]
            self.assertEqual(len(rows), 1, rows)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
            self.e.run(["gate", "down", "--name", name])

    def test_volumes_only_unused_in_the_namespace(self):
        unused, used = "aisb-%s-a" % TAG, "aisb-%s-b" % TAG
        holder = "aisb-%s-holder" % TAG
        for v in (unused, used):
            self.assertEqual(e2elib.podman("volume", "create", v).returncode,
                             0)
        img = e2elib.podman("images", "--format", "{{.ID}}",
                            "--filter", "label=aisb.role=sandbox")
        image = img.stdout.split()[0]
        try:
            h = e2elib.podman("create", "--name", holder, "--volume",
                              "%s:/x" % used, image, "true")
            self.assertEqual(h.returncode, 0, h.stderr)
            bad = self.e.run(["clean", "--volumes=*"])
            self.assertEqual(bad.returncode, 2)
            self.assertIn("must start with \"aisb-\"", bad.stderr)
            self.assertEqual(volumes("aisb-%s" % TAG), [unused, used])
            c = self.e.run(["clean", "--here",
                            "--volumes=aisb-%s-*" % TAG])
            self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
            self.assertIn("removed volume %s" % unused, c.stdout)
            self.assertEqual(volumes("aisb-%s" % TAG), [used],
                             "a volume in use was removed")
        finally:
            e2elib.podman("rm", "-f", holder)
            e2elib.podman("volume", "rm", "-f", unused, used)

    def test_home_volume_labelled_and_kept_ephemeral_not(self):
        vol = "aisb-%s-home" % TAG
        env = {"AISB_HOME_VOLUME": vol}
        try:
            r = self.e.run(["--no-tty", "--net", "none", "--", "sh", "-c",
                            "echo cached > $HOME/e2e-cache"], env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            lab = e2elib.podman("volume", "inspect", "--format",
                                "{{.Labels}}", vol)
            self.assertEqual(lab.returncode, 0, lab.stderr)
            self.assertIn("aisb.role:home", lab.stdout)
            r = self.e.run(["--no-tty", "--net", "none", "--", "cat",
                            "/home/sandbox/e2e-cache"], env=env)
            self.assertEqual(r.stdout.strip(), "cached", r.stderr)
            before = volumes("")
            r = self.e.run(["--no-tty", "--net", "none", "--ephemeral-home",
                            "--", "sh", "-c", "test ! -e $HOME/e2e-cache && "
                            "touch $HOME/x && echo fresh"], env=env)
            self.assertEqual(r.stdout.strip(), "fresh", r.stderr)
            self.assertEqual(volumes(""), before,
                             "the throwaway home volume stayed")
        finally:
            e2elib.podman("volume", "rm", "-f", vol)


class InstallTest(e2elib.E2ECase):
    def test_install_alias_uninstall(self):
        home = e2elib.user_tmpdir("aisb-e2eops-home-")
        rc = os.path.join(home, ".bashrc")
        with open(rc, "w") as f:
            f.write("# the user's own line\n")
        e2elib.chown_tree(home)
        # runuser resets HOME and SHELL: they go through env(1), so that
        # nothing touches the test user's real home.
        script = ["env", "HOME=" + home, "SHELL=/bin/bash", "sh",
                  os.path.join(SRC, "install.sh")]
        real_rc = os.path.join(e2elib.user_info()[2], ".bashrc")
        real_before = slurp(real_rc) if os.path.exists(real_rc) else None
        r = e2elib.run_as_user(script + ["--alias", "pi"], cwd=home,
                               timeout=1200)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        prefix = os.path.join(home, ".local")
        for rel in ("bin/ai-sandbox", "bin/aisb-gate",
                    "share/man/man1/ai-sandbox.1",
                    "share/man/man8/aisb-gate.8",
                    "share/bash-completion/completions/ai-sandbox",
                    "share/ai-sandbox/meson.build",
                    "share/ai-sandbox/install-manifest"):
            self.assertTrue(os.path.exists(os.path.join(prefix, rel)), rel)
        v = e2elib.run_as_user([os.path.join(prefix, "bin/ai-sandbox"),
                                "--version"], cwd=home)
        self.assertEqual(v.stdout.strip(), "ai-sandbox 0.1.0")
        text = slurp(rc)
        self.assertIn("# the user's own line\n", text)
        self.assertIn("alias pi='%s/bin/ai-sandbox'" % prefix, text)
        r = e2elib.run_as_user(script + ["--alias", "pi"], cwd=home,
                               timeout=1200)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(slurp(rc).count("alias pi="), 1,
                         "a reinstall added the alias twice")
        r = e2elib.run_as_user(script + ["--uninstall"], cwd=home)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(slurp(rc), "# the user's own line\n")
        self.assertFalse(os.path.exists(prefix),
                         "uninstall left %s" % list(os.walk(prefix)))
        r = e2elib.run_as_user(script + ["--uninstall"], cwd=home)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no manifest", r.stderr)
        self.assertEqual(slurp(real_rc) if os.path.exists(real_rc) else None,
                         real_before, "the real ~/.bashrc changed")
        self.assertFalse(os.path.exists(os.path.join(
            e2elib.user_info()[2], ".local", "bin", "ai-sandbox")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
