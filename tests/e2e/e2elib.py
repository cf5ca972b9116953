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


def user_info():
    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid, pw.pw_dir


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
    if extra:
        env.update(extra)
    return env


def run_as_user(argv, cwd=None, env=None, timeout=600, input=None):
    """Run argv as the test user with a clean environment; returns the
    CompletedProcess (text). Never raises on a non-zero exit."""
    e = user_env(env)
    cmd = ["runuser", "-u", USER, "--", "env", "-i"]
    cmd += ["%s=%s" % kv for kv in sorted(e.items())]
    cmd += list(argv)
    return subprocess.run(cmd, cwd=cwd or e["HOME"], capture_output=True,
                          text=True, timeout=timeout, input=input,
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
