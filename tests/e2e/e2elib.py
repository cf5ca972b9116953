"""
End-to-end test helpers: the tests run as root and drive ai-sandbox as the
unprivileged user that tests/e2e/prepare-host created, with real podman,
real nftables and real containers. Nothing is mocked.

Environment: AISB_BIN (the installed ai-sandbox, default from PATH),
AISB_E2E_USER (default aisbtest). Every wait is bounded.
"""
import os
import pwd
import shutil
import subprocess
import tempfile
import unittest

USER = os.environ.get("AISB_E2E_USER", "aisbtest")
AISB_BIN = os.environ.get("AISB_BIN") or shutil.which("ai-sandbox") or \
    "/usr/local/bin/ai-sandbox"
EXTRA_CA_DIR = "/usr/local/share/ca-certificates"
# No registry is reachable on the development hosts: the images build on a
# Debian base made with debootstrap from the host's mirror.
BASE_IMAGE = os.environ.get("AISB_E2E_BASE", "debootstrap:bookworm")
# The config key that adds CA certificates to the images (issue 4).
CA_KEY = os.environ.get("AISB_E2E_CA_KEY", "extra-ca")


def user_info():
    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid, pw.pw_dir


def limits_unenforced():
    """Why rootless podman would ignore resource caps on this host (the
    words ai-sandbox uses), or None; computed here independently."""
    if not os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return "cgroup v1"
    uid = user_info()[0]
    path = ("/sys/fs/cgroup/user.slice/user-%d.slice/user@%d.service/"
            "cgroup.controllers" % (uid, uid))
    try:
        with open(path) as f:
            words = f.read().split()
    except OSError:
        return "no cgroup v2 delegation"
    for c in ("memory", "pids", "cpu"):
        if c not in words:
            return "the %s controller is not delegated" % c
    return None


def user_env(extra=None):
    uid, _, home = user_info()
    env = {
        "HOME": home,
        "USER": USER,
        "LOGNAME": USER,
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "XDG_RUNTIME_DIR": "/run/user/%d" % uid,
        "LANG": "C.UTF-8",
    }
    # AISB_E2E_ENV: extra NAME=VALUE pairs (space-separated) for every run,
    # for debugging the suite against a development build.
    for kv in os.environ.get("AISB_E2E_ENV", "").split():
        k, _, v = kv.partition("=")
        env[k] = v
    if extra:
        env.update(extra)
    return env


def run_as_user(argv, cwd=None, env=None, timeout=600, input=None,
                stream=False):
    """Run argv as the test user with exactly the environment user_env()
    gives (passed as the environment, never in argv); returns the
    CompletedProcess (text). Never raises on a non-zero exit. stream: let
    the output through to the terminal instead of capturing it."""
    e = user_env(env)
    cmd = ["runuser", "-u", USER, "--"] + list(argv)
    return subprocess.run(cmd, cwd=cwd or e["HOME"], env=e,
                          capture_output=not stream, text=True,
                          timeout=timeout, input=input,
                          stdin=None if input is not None else
                          subprocess.DEVNULL)


def podman(*args, timeout=120):
    return run_as_user(["podman"] + list(args), timeout=timeout)


def user_tmpdir(prefix="aisb-e2e-"):
    """A directory owned by the test user, under its home."""
    uid, gid, home = user_info()
    base = os.path.join(home, "e2e")
    os.makedirs(base, exist_ok=True)
    os.chown(base, uid, gid)
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    os.chown(d, uid, gid)
    os.chmod(d, 0o755)
    return d


def chown_tree(path):
    uid, gid, _ = user_info()
    for root, dirs, files in os.walk(path):
        os.chown(root, uid, gid)
        for n in dirs + files:
            os.lchown(os.path.join(root, n), uid, gid)


def extra_ca_file():
    """The host's extra CA certificates as one PEM file the user can read,
    or None when there are none (a network that does not re-sign TLS)."""
    pems = []
    if os.path.isdir(EXTRA_CA_DIR):
        for root, _, files in os.walk(EXTRA_CA_DIR):
            for n in sorted(files):
                if n.endswith(".crt"):
                    with open(os.path.join(root, n)) as f:
                        pems.append(f.read())
    if not pems:
        return None
    d = user_tmpdir("aisb-ca-")
    path = os.path.join(d, "extra-ca.pem")
    with open(path, "w") as f:
        f.write("\n".join(pems))
    chown_tree(d)
    return path


class E2ECase(unittest.TestCase):
    """Fails (never skips) when the host is not prepared."""

    @classmethod
    def setUpClass(cls):
        try:
            pwd.getpwnam(USER)
        except KeyError:
            raise RuntimeError("user %s missing: run tests/e2e/prepare-host "
                               "as root first" % USER)
        if os.geteuid() != 0:
            raise RuntimeError("the e2e suite runs as root (it drives "
                               "ai-sandbox as %s with runuser)" % USER)
        if not os.access(AISB_BIN, os.X_OK):
            raise RuntimeError("AISB_BIN=%s is not executable" % AISB_BIN)
