#!/usr/bin/env python3
"""ai-sandbox previews, byte for byte.

Runs the built launcher (AISB_BIN) with a private HOME, XDG directories and
working directory for each case below, and compares its standard output,
standard error and exit status with expected/CASE.out. The temporary
directory's path is replaced by @TMP@ and the home volume's hash (FNV-1a of
the project path, checked here) by @HASH@ before comparing.

AISB_UPDATE_EXPECTED=1 rewrites the expected files instead.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected")
CANARY = "canary-4e1d-secret"

USER_CONFIG = """\
# the user's config
memory = 6g
allow = user.example
install = git
env = USER_TOKEN
"""

PROJECT_CONFIG = """\
# the project's config
memory = 2g
cpus = 1.5
allow = project.example:8443
install = ripgrep
"""

PROJECT_ALLOW = """\
# one entry a line
registry.npmjs.org
192.0.2.0/24   # documentation range
[2001:db8::1]:443
"""

ENV_FILE = "FILE_TOKEN=%s-file\n# comment\nOTHER=x\n" % CANARY

# name: (argv, extra environment, files {path under tmp: (text, mode)})
CASES = {
    "help": (["--help"], {}, {}),
    "version": (["version"], {}, {}),
    "policy-defaults": (["--allow", "api.anthropic.com", "--print-policy"],
                        {}, {}),
    "policy-origin": (
        ["--allow", "flag.example", "--memory", "8g", "--env",
         "ANTHROPIC_API_KEY", "--print-policy", "--origin", "--model", "x"],
        {"AISB_PIDS": "512", "AISB_ALLOW": "env1.example env2.example",
         "AISB_MEMORY": "3g", "ANTHROPIC_API_KEY": CANARY,
         "USER_TOKEN": CANARY + "-user"},
        {"xdg/config/ai-sandbox/config": (USER_CONFIG, 0o600),
         "proj/.ai-sandbox/config": (PROJECT_CONFIG, 0o644),
         "proj/.ai-sandbox/allow": (PROJECT_ALLOW, 0o644)}),
    "dry-run-gate": (
        ["--allow", "api.anthropic.com", "--allow", "192.0.2.0/24",
         "--env", "ANTHROPIC_API_KEY", "--dry-run", "--model", "sonnet"],
        {"ANTHROPIC_API_KEY": CANARY, "TERM": "xterm-256color",
         "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}, {}),
    "dry-run-pasta": (
        ["--allow", "api.anthropic.com", "--dry-run"],
        {"AISB_NETWORK_BACKEND": "pasta"}, {}),
    "dry-run-net-none": (["--net", "none", "--dry-run", "--", "make", "test"],
                         {}, {}),
    "dry-run-net-full": (["--net", "full", "--dry-run"], {}, {}),
    "dry-run-no-gate": (
        ["--no-gate", "--allow", "example.com", "--allow", "192.0.2.7:22",
         "--dns-server", "9.9.9.9", "--dry-run"], {}, {}),
    "dry-run-proxy": (
        ["--proxy", "localhost:3128", "--allow", "a.example", "--dry-run"],
        {}, {}),
    "dry-run-files": (
        ["--allow", "a.example", "--read-only", "--ephemeral-home", "--mount",
         "~/.gitconfig:ro", "--mount", "data:/srv/data", "--keep",
         "--env-file", "secrets", "--env", "LIT=" + CANARY + "-lit",
         "--shell", "--dry-run"],
        {"AISB_SELINUX": "yes", "AISB_RUNTIME": "runc"},
        {"home/.gitconfig": ("[user]\n", 0o644),
         "proj/data/.keep": ("", 0o644),
         "proj/secrets": (ENV_FILE, 0o600)}),
    "dry-run-escape-hatches": (
        ["--net", "none", "--allow-unenforced", "--insecure-keep-root",
         "--dry-run"],
        {"AISB_EXTRA_ARGS": "--device /dev/fuse"}, {}),
    "entrypoint-gate": (
        ["--allow", "api.anthropic.com", "--allow", "203.0.113.9:8443",
         "--allow", "2001:db8::/32", "--print-entrypoint", "-p", "hi"],
        {}, {}),
    "entrypoint-no-gate": (
        ["--no-gate", "--allow", "example.com", "--print-entrypoint"],
        {}, {}),
    "error-bad-size": (["--memory", "12q", "--dry-run"], {}, {}),
    "error-empty-allowlist": (["--dry-run"], {}, {}),
    "error-env-unset": (["--net", "none", "--env", "MISSING", "--dry-run"],
                        {}, {}),
    "error-strict-args": (["--strict-args", "--net", "none", "--model", "x"],
                          {}, {}),
    "error-config-line": (
        ["--print-policy"], {},
        {"xdg/config/ai-sandbox/config": ("net = none\nmemroy = 1g\n",
                                          0o600)}),
    "error-config-writable": (
        ["--print-policy"], {},
        {"proj/.ai-sandbox/config": ("net = none\n", 0o666)}),
    "error-project-widens": (
        ["--print-policy"], {},
        {"proj/.ai-sandbox/config": ("mount = /etc\n", 0o644)}),
    "error-env-file-mode": (
        ["--net", "none", "--env-file", "secrets", "--dry-run"], {},
        {"proj/secrets": (ENV_FILE, 0o644)}),
    "error-mount-colon": (["--mount", "/a:b:c", "--dry-run"], {}, {}),
}


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def run_case(binary, name, case):
    argv, extra, files = case
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="aisb-it-"))
    try:
        for d in ("home", "proj", "xdg/config", "xdg/state", "xdg/cache",
                  "xdg/run"):
            os.makedirs(os.path.join(tmp, d), mode=0o700)
        for rel, (text, mode) in files.items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, mode)
        env = {
            "HOME": tmp + "/home",
            "XDG_CONFIG_HOME": tmp + "/xdg/config",
            "XDG_STATE_HOME": tmp + "/xdg/state",
            "XDG_CACHE_HOME": tmp + "/xdg/cache",
            "XDG_RUNTIME_DIR": tmp + "/xdg/run",
            "AISB_SELINUX": "no",
        }
        env.update(extra)
        proj = tmp + "/proj"
        p = subprocess.run([binary] + argv, cwd=proj, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        problems = []
        if CANARY in out or CANARY in err:
            problems.append("the canary value leaked into the output")
        hashes = set(re.findall(r"aisb-home-([0-9a-f]{16})", out))
        if hashes and hashes != {fnv1a64(proj.encode())}:
            problems.append("home volume hash %s is not FNV-1a of %s"
                            % (hashes, proj))
        text = "%s--- stderr\n%s--- exit %d\n" % (out, err, p.returncode)
        text = text.replace(tmp, "@TMP@")
        text = re.sub(r"aisb-home-[0-9a-f]{16}", "aisb-home-@HASH@", text)
        return text, problems
    finally:
        shutil.rmtree(tmp)


def main():
    binary = os.environ.get("AISB_BIN")
    if not binary:
        print("AISB_BIN is not set", file=sys.stderr)
        return 2
    binary = os.path.abspath(binary)
    update = os.environ.get("AISB_UPDATE_EXPECTED") == "1"
    failed = 0
    for name in sorted(CASES):
        got, problems = run_case(binary, name, CASES[name])
        path = os.path.join(EXPECTED, name + ".out")
        if update:
            with open(path, "w") as f:
                f.write(got)
        else:
            try:
                with open(path) as f:
                    want = f.read()
            except FileNotFoundError:
                want = None
            if want != got:
                problems.append("output differs from %s" % path)
                if want is not None:
                    import difflib
                    sys.stdout.writelines(difflib.unified_diff(
                        want.splitlines(True), got.splitlines(True),
                        "expected/" + name + ".out", "got"))
                else:
                    sys.stdout.write(got)
        for prob in problems:
            print("FAIL %s: %s" % (name, prob))
        failed += bool(problems)
        if not problems:
            print("ok %s" % name)
    print("%d of %d cases failed" % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
