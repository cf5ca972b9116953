#!/usr/bin/env python3
"""
The images, end to end: real podman building the sandbox and gate images
as the unprivileged test user, on a Debian base made with mmdebstrap from
the host's mirror (no registry is reachable here), with the host's extra
CA certificates for the npm registry.

The tests run in order and share one base pin and one build with each
other and with the other e2e tests (the user's default cache directory):
a first build, a rebuild that is not one, a variant, a refused Node.js
checksum, update --check, and last update, which pins a new base and
leaves both generations of images in place.
"""
import glob
import hashlib
import os
import re
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import e2elib  # noqa: E402

LABELS = ("aisb.base-ref", "aisb.base-digest", "aisb.node",
          "aisb.pi-package", "aisb.pi-version", "aisb.role",
          "aisb.source-hash")
BAD_SRI = "sha512-" + "A" * 86 + "=="
BASE_TIMEOUT = 3600
DEBOOTSTRAP = e2elib.BASE_IMAGE.startswith("debootstrap:")


def podman_ok(*args):
    p = e2elib.podman(*args, timeout=300)
    if p.returncode != 0:
        raise AssertionError("podman %s: %s" % (" ".join(args), p.stderr))
    return p.stdout


def image_exists(ref):
    return e2elib.podman("image", "exists", ref).returncode == 0


def labels(ref):
    out = podman_ok("image", "inspect", "--format",
                    '{{range $k, $v := .Labels}}{{$k}}={{$v}}\n{{end}}', ref)
    return dict(line.split("=", 1) for line in out.splitlines() if line)


def image_id(ref):
    return podman_ok("image", "inspect", "--format", "{{.Id}}", ref).strip()


def in_image(ref, *argv):
    return podman_ok("run", "--rm", "--network=none", "--entrypoint",
                     argv[0], ref, *argv[1:])


def tags_of(stdout):
    """{"sandbox": TAG, "gate": TAG} from build's standard output."""
    tags = {}
    for line in stdout.splitlines():
        role, _, rest = line.partition(" ")
        tags[role] = rest.split(" ")[0]
    return tags


class ImageTest(e2elib.E2ECase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        _, _, home = e2elib.user_info()
        cls.cache = os.path.join(home, ".cache", "ai-sandbox")
        cls.project = e2elib.user_tmpdir("aisb-img-proj-")
        cls.state = e2elib.user_tmpdir("aisb-img-state-")
        cls.config = e2elib.user_tmpdir("aisb-img-config-")
        lines = ["base-image = %s" % e2elib.BASE_IMAGE]
        ca = e2elib.extra_ca_file()
        if ca:
            lines.append("extra-ca = %s" % ca)
        if e2elib.limits_unenforced():
            lines.append("allow-unenforced-limits = yes")
        path = os.path.join(cls.config, "config")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o600)
        e2elib.chown_tree(cls.config)
        cls.tags = None

    def aisb(self, *args, env=None, timeout=BASE_TIMEOUT):
        e = {"AISB_STATE_DIR": self.state, "AISB_CONFIG_DIR": self.config}
        e.update(env or {})
        t0 = time.monotonic()
        p = e2elib.run_as_user([e2elib.AISB_BIN] + list(args),
                               cwd=self.project, env=e, timeout=timeout)
        p.seconds = time.monotonic() - t0
        return p

    def pin_file(self):
        name = re.sub(r"[^A-Za-z0-9.-]", "_", e2elib.BASE_IMAGE)
        files = glob.glob(os.path.join(self.cache, "base", name + "-*"))
        self.assertEqual(len(files), 1, files)
        return files[0]

    def pin(self):
        with open(self.pin_file()) as f:
            return dict(line.split(" ", 1) for line in f.read().splitlines()
                        if line and not line.startswith("#"))

    def containerfile(self, env=None, *args):
        p = self.aisb("build", "--print-containerfile", *args, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def build(self, *args, env=None):
        p = self.aisb("build", *args, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        tags = tags_of(p.stdout)
        self.assertEqual(sorted(tags), ["gate", "sandbox"], p.stdout)
        return p, tags

    def assert_tag_is_hash(self, tags, text):
        h = hashlib.sha256(text.encode()).hexdigest()[:16]
        self.assertEqual(tags["sandbox"], "localhost/aisb-sandbox:" + h)
        self.assertEqual(tags["gate"], "localhost/aisb-gate:" + h)

    def test_01_first_build(self):
        # A preview asks neither podman nor the network.
        p = self.aisb("build", "--print-containerfile",
                      env={"AISB_PODMAN": "/nonexistent/podman"})
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertNotIn("/nonexistent/podman", p.stderr)
        if p.returncode == 1:
            self.assertIn("no image is recorded for it yet", p.stderr)

        p, tags = self.build()
        print("first build: %.1fs" % p.seconds, file=sys.stderr)
        ImageTest.tags = tags
        pin = self.pin()
        self.assertEqual(pin["ref"], e2elib.BASE_IMAGE)
        self.assertEqual(pin["via"], "debootstrap" if DEBOOTSTRAP else
                         pin["via"])
        self.assertRegex(pin["digest"], "^sha256:[0-9a-f]{64}$")
        self.assertEqual(os.stat(self.pin_file()).st_mode & 0o7777, 0o600)
        if DEBOOTSTRAP:
            self.assertTrue(image_exists(pin["digest"][7:]))
        # The tag is the hash of exactly what --print-containerfile prints.
        text = self.containerfile()
        if DEBOOTSTRAP:
            self.assertIn("\nFROM %s AS os\n" % pin["digest"][7:], text)
        self.assert_tag_is_hash(tags, text)

        for role in ("sandbox", "gate"):
            lab = labels(tags[role])
            for k in LABELS:
                self.assertIn(k, lab, "%s: %s" % (role, lab))
            self.assertEqual(lab["aisb.role"], role)
            self.assertEqual(lab["aisb.base-ref"], e2elib.BASE_IMAGE)
            self.assertEqual(lab["aisb.base-digest"], pin["digest"])
            self.assertRegex(lab["aisb.node"], r"^22\.\d+\.\d+$")
            self.assertEqual(lab["aisb.pi-package"],
                             "@mariozechner/pi-coding-agent")
            self.assertRegex(lab["aisb.source-hash"], "^[0-9a-f]{64}$")

        sb = in_image(tags["sandbox"], "cat", "/etc/aisb/manifest.txt")
        gate = in_image(tags["gate"], "cat", "/etc/aisb/manifest.txt")
        for lib in ("nftables", "libnftables1", "libevent-2.1-7",
                    "libc-ares2", "libssl3", "libcjson1"):
            self.assertRegex(sb, r"\ndeb %s \S+ \S+\n" % re.escape(lib))
        for lib in ("libevent-2.1-7", "libc-ares2", "libssl3"):
            self.assertRegex(gate, r"\ndeb %s \S+ \S+\n" % re.escape(lib))
        self.assertIn("\nrole gate\n", gate)
        self.assertRegex(gate, r"\nsha256 [0-9a-f]{64}  /usr/local/bin/aisb-gate\n")
        self.assertRegex(sb, r"\nsha256 [0-9a-f]{64}  /usr/local/sbin/aisb-init\n")
        lab = labels(tags["sandbox"])
        self.assertIn("\nverified node %s node-linux-" % lab["aisb.node"], sb)
        self.assertIn("\nnpm-package @mariozechner/pi-coding-agent %s\n"
                      % lab["aisb.pi-version"], sb)

        out = in_image(tags["sandbox"], "sh", "-c",
                       "id sandbox; echo ~sandbox; stat -c %u /project; "
                       "node --version; pi --version 2>&1; "
                       "test -x /usr/local/sbin/aisb-init && "
                       "test -x /usr/local/bin/aisb-gate && echo binaries")
        self.assertIn("uid=1000(sandbox) gid=1000(sandbox)", out)
        self.assertIn("/home/sandbox\n1000\nv%s\n" % lab["aisb.node"], out)
        self.assertIn("%s\n" % lab["aisb.pi-version"], out)
        self.assertIn("binaries", out)
        cfg = podman_ok("image", "inspect", "--format",
                        "{{.Config.User}} {{json .Config.Entrypoint}}",
                        tags["gate"])
        self.assertEqual(cfg.strip(), '65534:65534 ["/usr/local/bin/aisb-gate"]')

    def test_02_second_build_reuses(self):
        self.assertIsNotNone(self.tags, "the first build failed")
        ids = {r: image_id(t) for r, t in self.tags.items()}
        with open(self.pin_file()) as f:
            before = f.read()
        p, tags = self.build()
        self.assertEqual(tags, self.tags)
        self.assertEqual(p.stderr.count("is up to date"), 2, p.stderr)
        self.assertNotIn("building", p.stderr)
        self.assertLess(p.seconds, 30)
        self.assertEqual({r: image_id(t) for r, t in tags.items()}, ids)
        with open(self.pin_file()) as f:
            self.assertEqual(f.read(), before, "reused within its TTL")
        # Stale by the TTL but auto-update off: the recorded pin is used.
        p, tags = self.build(env={"AISB_BASE_TTL_DAYS": "0",
                                  "AISB_BASE_AUTO_UPDATE": "no"})
        self.assertEqual(tags, self.tags)
        self.assertNotIn("mmdebstrap", p.stderr)
        with open(self.pin_file()) as f:
            self.assertEqual(f.read(), before)

    def test_03_run_reuses(self):
        self.assertIsNotNone(self.tags, "the first build failed")
        p = self.aisb("--net", "none", "--", "cat", "/etc/aisb/manifest.txt",
                      timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("\nrole sandbox\n", p.stdout)
        self.assertNotIn("building", p.stderr)

    def test_04_install_variant(self):
        self.assertIsNotNone(self.tags, "the first build failed")
        p, tags = self.build("--install", "hello")
        print("--install variant: %.1fs" % p.seconds, file=sys.stderr)
        self.assertNotEqual(tags["sandbox"], self.tags["sandbox"])
        self.assertTrue(image_exists(self.tags["sandbox"]), "the old stays")
        self.assertTrue(image_exists(tags["sandbox"]))
        self.assertIn("\ndeb hello ", in_image(tags["sandbox"], "cat",
                                              "/etc/aisb/manifest.txt"))
        self.assertNotIn("\ndeb hello ", in_image(self.tags["sandbox"], "cat",
                                                 "/etc/aisb/manifest.txt"))

    def test_05_bad_node_checksum_stops_the_build(self):
        self.assertIsNotNone(self.tags, "the first build failed")
        env = {"AISB_NODE_INTEGRITY": BAD_SRI}
        text = self.containerfile(env)
        h = hashlib.sha256(text.encode()).hexdigest()[:16]
        p = self.aisb("build", env=env)
        self.assertNotEqual(p.returncode, 0)
        last = p.stderr.strip().splitlines()[-1]
        self.assertIn("ai-sandbox: building localhost/aisb-sandbox:%s failed"
                      % h, last)
        self.assertIn("Node.js tarball node-linux-", last)
        self.assertIn("checksum mismatch", last)
        self.assertFalse(image_exists("localhost/aisb-sandbox:" + h))
        self.assertFalse(image_exists("localhost/aisb-gate:" + h))
        self.assertTrue(image_exists(self.tags["sandbox"]))

    def test_06_update_check_changes_nothing(self):
        self.assertIsNotNone(self.tags, "the first build failed")
        path = self.pin_file()
        with open(path) as f:
            before = f.read()
        mtime = os.stat(path).st_mtime_ns
        images = podman_ok("images", "--all", "--format",
                           "{{.ID}} {{.Repository}}:{{.Tag}}")
        p = self.aisb("update", "--check")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("base-image %s\n" % e2elib.BASE_IMAGE, p.stdout)
        self.assertIn("pinned %s (%s, " % (self.pin()["digest"],
                                          self.pin()["via"]), p.stdout)
        if DEBOOTSTRAP:
            self.assertIn("upstream no digest: update builds a new base "
                          "from \"deb http", p.stdout)
        self.assertIn("sandbox %s (built)\n" % self.tags["sandbox"], p.stdout)
        self.assertIn("gate %s (built)\n" % self.tags["gate"], p.stdout)
        with open(path) as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(os.stat(path).st_mtime_ns, mtime)
        self.assertEqual(podman_ok("images", "--all", "--format",
                                   "{{.ID}} {{.Repository}}:{{.Tag}}"),
                         images)

    def test_07_update_pins_a_new_base(self):
        self.assertIsNotNone(self.tags, "the first build failed")
        old = self.pin()["digest"]
        p = self.aisb("update")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        print("update (new base, cold build): %.1fs" % p.seconds,
              file=sys.stderr)
        new = self.pin()["digest"]
        if not DEBOOTSTRAP and new == old:
            return      # upstream has not moved: nothing new to build
        if DEBOOTSTRAP:
            self.assertIn("imported debootstrap:", p.stderr)
        self.assertNotEqual(new, old)
        tags = tags_of(p.stdout)
        for role in ("sandbox", "gate"):
            self.assertNotEqual(tags[role], self.tags[role])
            self.assertIn("%s %s (was %s, kept)" % (role, tags[role],
                                                    self.tags[role]),
                          p.stdout)
            self.assertTrue(image_exists(self.tags[role]), "rollback")
            self.assertEqual(labels(tags[role])["aisb.base-digest"], new)
        self.assert_tag_is_hash(tags, self.containerfile())


if __name__ == "__main__":
    unittest.main(verbosity=2)
