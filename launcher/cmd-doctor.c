/*
 * doctor: is this host fit for ai-sandbox, and if not, what to do.
 *
 *	doctor [--deep] [FLAG...]
 *
 * First the facts are gathered (podman, /etc/subuid, /dev/net/tun, the
 * cgroup layout, hard limits, containers.conf, SELinux, git, the base pin,
 * a bind-mount round trip through a real container); then every check of
 * doctor_checks[] turns them into one OK, SKIP, WARN or FAIL line in plain
 * words with the fix. The checks are pure (tests/unit/test-doctor.c).
 * --deep also runs a real sandbox with a probe inside and proves egress:
 * an allowlisted name passes the gate; an unlisted name, a raw IP, UDP and
 * IPv6 do not. The exit status is 0 when no check failed, else 1.
 *
 * What each check looks for is what was measured on the development hosts
 * (shared/DESIGN.md, "Measured").
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define DOCTOR_RESULTS_MAX	32
#define DOCTOR_FILE_MAX		(1024 * 1024)	/* subuid, limits, conf */
#define DOCTOR_SUBIDS_NEEDED	65536	/* uid 65534 (gate) and 1000 mapped */
#define DOCTOR_PROBE_NAME	"example.com"	/* --deep without a name */
#define DOCTOR_UNLISTED		"aisb-doctor-unlisted.invalid"
#define DOCTOR_RAW_IP		"192.0.2.1"	/* TEST-NET-1, RFC 5737 */
#define DOCTOR_IPV6		"2001:4860:4860::8888"
#define DOCTOR_PROBE_TAG	"AISB-DOCTOR "
#define DOCTOR_CONF_NAME	"containers.conf"
#define DOCTOR_VFS_COST		"about 6 s per container here, against " \
				"0.24 s with overlay"

/* One check: its name and the function that judges the facts. */
struct doctor_check {
	const char	*name;
	void		(*fn)(const struct doctor_facts *,
			    const struct policy *, struct doctor_result *);
	int		 deep;		/* only with --deep */
};

/* A verdict and its words. */
static void __attribute__((format(printf, 3, 4)))
say(struct doctor_result *r, enum doctor_level level, const char *fmt, ...)
{
	va_list ap;

	r->level = level;
	va_start(ap, fmt);
	vsnprintf(r->what, sizeof(r->what), fmt, ap);
	va_end(ap);
}

/* What to do about it. */
static void __attribute__((format(printf, 2, 3)))
fix(struct doctor_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->fix, sizeof(r->fix), fmt, ap);
	va_end(ap);
}

/* "OK", "SKIP", "WARN", "FAIL". */
const char *
doctor_level_name(enum doctor_level l)
{
	switch (l) {
	case DOCTOR_OK:
		return "OK";
	case DOCTOR_SKIP:
		return "SKIP";
	case DOCTOR_WARN:
		return "WARN";
	case DOCTOR_FAIL:
		return "FAIL";
	}
	return "?";
}

/* The cgroup layout in words. */
static const char *
cgroup_text(enum doctor_cgroup c)
{
	switch (c) {
	case DOCTOR_CGROUP_V2:
		return "cgroup v2";
	case DOCTOR_CGROUP_HYBRID:
		return "cgroup hybrid (v1 and v2)";
	case DOCTOR_CGROUP_V1:
		return "cgroup v1";
	}
	return "cgroup ?";
}

/* The backend a run will use: auto is pasta from podman 5 on. */
static enum policy_backend
doctor_backend(const struct doctor_facts *f, const struct policy *p)
{
	if (p->backend != POLICY_BACKEND_AUTO)
		return (enum policy_backend)p->backend;
	return f->podman_major >= 5 ? POLICY_BACKEND_PASTA :
	    POLICY_BACKEND_SLIRP4NETNS;
}

/* --- the checks: facts in, one verdict out ---------------------------- */

/* Does podman run, and is it recent enough? */
static void
check_podman(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (!f->podman_runs) {
		say(r, DOCTOR_FAIL, "\"%s\" does not run (%s): ai-sandbox "
		    "cannot start anything", p->podman, f->podman_error);
		fix(r, "install podman (apt install podman), or name it in "
		    "your config: podman = /path/to/podman (or AISB_PODMAN)");
		return;
	}
	if (f->podman_major < 4) {
		say(r, DOCTOR_WARN, "podman %s is older than 4: ai-sandbox is "
		    "tested with podman 4.3 and 5", f->podman_version);
		fix(r, "upgrade podman");
		return;
	}
	say(r, DOCTOR_OK, "podman %s (%s)", f->podman_version, p->podman);
}

/* Does podman info work as this user, rootless? */
static void
check_rootless(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (!f->podman_runs) {
		say(r, DOCTOR_SKIP, "needs podman");
		return;
	}
	if (!f->info_ok) {
		say(r, DOCTOR_FAIL, "\"podman info\" fails as uid %u: %s",
		    f->uid, f->info_error);
		fix(r, "run podman info to see the whole error; after changing "
		    "/etc/subuid or storage.conf, podman system migrate");
		return;
	}
	if (f->uid == 0) {
		say(r, DOCTOR_WARN, "running as root: podman is rootful here; "
		    "ai-sandbox is meant to run as a normal user with rootless "
		    "podman");
		fix(r, "run ai-sandbox as your own user");
		return;
	}
	if (!f->rootless) {
		say(r, DOCTOR_FAIL, "podman does not run rootless as uid %u",
		    f->uid);
		fix(r, "check that podman is not a wrapper for sudo or a "
		    "remote connection (podman info)");
		return;
	}
	say(r, DOCTOR_OK, "rootless podman works as uid %u (%s)", f->uid,
	    f->user);
}

/* Enough subordinate ids for the user namespace, and in use? */
static void
check_subids(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (f->uid == 0) {
		say(r, DOCTOR_OK, "root needs no subordinate ids");
		return;
	}
	if (f->subuid_count < DOCTOR_SUBIDS_NEEDED ||
	    f->subgid_count < DOCTOR_SUBIDS_NEEDED) {
		say(r, DOCTOR_FAIL, "%s has %llu subordinate uids in "
		    "/etc/subuid and %llu gids in /etc/subgid; the sandbox's "
		    "user namespace needs %d of each (the gate runs as uid "
		    "65534)", f->user,
		    (unsigned long long)f->subuid_count,
		    (unsigned long long)f->subgid_count, DOCTOR_SUBIDS_NEEDED);
		fix(r, "as root: usermod --add-subuids 100000-165535 "
		    "--add-subgids 100000-165535 %s; then, as %s: podman "
		    "system migrate", f->user, f->user);
		return;
	}
	if (f->info_ok && f->uidmap_size != 0 &&
	    f->uidmap_size < DOCTOR_SUBIDS_NEEDED) {
		say(r, DOCTOR_FAIL, "/etc/subuid gives %s %llu ids, but podman "
		    "maps only %llu: it has not picked the ranges up", f->user,
		    (unsigned long long)f->subuid_count,
		    (unsigned long long)f->uidmap_size);
		fix(r, "podman system migrate");
		return;
	}
	say(r, DOCTOR_OK, "%s has %llu subordinate uids (from %llu) and %llu "
	    "gids", f->user, (unsigned long long)f->subuid_count,
	    (unsigned long long)f->subuid_start,
	    (unsigned long long)f->subgid_count);
}

/* The rootless network helper this podman needs. */
static void
check_network(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	enum policy_backend b = doctor_backend(f, p);

	if (!f->podman_runs) {
		say(r, DOCTOR_SKIP, "needs podman");
		return;
	}
	if (b == POLICY_BACKEND_PASTA && f->podman_major < 5) {
		say(r, DOCTOR_FAIL, "network-backend = pasta, but podman %s "
		    "has no pasta network mode (podman 5 has)",
		    f->podman_version);
		fix(r, "set network-backend = auto (slirp4netns with podman "
		    "4)");
		return;
	}
	if (b == POLICY_BACKEND_PASTA && !f->has_pasta) {
		say(r, DOCTOR_FAIL, "podman %s networks rootless containers "
		    "with pasta, and pasta is not installed",
		    f->podman_version);
		fix(r, "install it (apt install passt)");
		return;
	}
	if (b == POLICY_BACKEND_SLIRP4NETNS && !f->has_slirp) {
		say(r, DOCTOR_FAIL, "podman %s networks rootless containers "
		    "with slirp4netns, and slirp4netns is not installed",
		    f->podman_version);
		fix(r, "install it (apt install slirp4netns)");
		return;
	}
	if (b == POLICY_BACKEND_PASTA)
		say(r, DOCTOR_OK, "pasta (podman %s): the sandbox reaches the "
		    "gate on the host's loopback at " AISB_PASTA_HOST " "
		    "(--map-host-loopback)", f->podman_version);
	else
		say(r, DOCTOR_OK, "slirp4netns (podman %s): the sandbox "
		    "reaches the gate on the host's loopback at "
		    AISB_SLIRP_HOST " (allow_host_loopback)",
		    f->podman_version);
}

/* /dev/net/tun, which rootless slirp4netns opens: 0666 (measured). */
static void
check_tun(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (!f->tun_exists || !f->tun_chr) {
		say(r, DOCTOR_FAIL, "/dev/net/tun is %s: rootless networking "
		    "(slirp4netns, pasta) cannot start", f->tun_exists ?
		    "not a character device" : "missing");
		fix(r, "as root: modprobe tun (or mknod /dev/net/tun c 10 200) "
		    "and chmod 0666 /dev/net/tun");
		return;
	}
	if (f->uid != 0 && (f->tun_mode & 0006) != 0006) {
		say(r, DOCTOR_FAIL, "/dev/net/tun is mode %04o: rootless "
		    "slirp4netns cannot open it (inside podman's user "
		    "namespace you are not its owner), so no sandbox with a "
		    "network starts", f->tun_mode & 07777);
		fix(r, "as root: chmod 0666 /dev/net/tun (its usual mode); to "
		    "keep it after a reboot, a udev rule such as "
		    "KERNEL==\"tun\", MODE=\"0666\"");
		return;
	}
	say(r, DOCTOR_OK, "/dev/net/tun is mode %04o", f->tun_mode & 07777);
}

/* crun refuses hybrid and v1 cgroup hosts; runc works (measured). */
static void
check_runtime(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	int v2 = f->cgroup == DOCTOR_CGROUP_V2;

	if (p->runtime == POLICY_RUNTIME_CRUN && !v2) {
		say(r, DOCTOR_FAIL, "runtime = crun, but crun refuses this %s "
		    "host (\"cgroups in hybrid mode not supported\")",
		    cgroup_text(f->cgroup));
		fix(r, "set runtime = runc, or remove the setting: with "
		    "runtime = auto ai-sandbox picks runc itself on such "
		    "hosts%s",
		    f->has_runc ? "" : " (and install runc: apt install runc)");
		return;
	}
	if (p->runtime == POLICY_RUNTIME_CRUN && !f->has_crun) {
		say(r, DOCTOR_FAIL, "runtime = crun, and crun is not "
		    "installed");
		fix(r, "install crun, or set runtime = auto");
		return;
	}
	if ((p->runtime == POLICY_RUNTIME_RUNC || !v2) && !f->has_runc) {
		say(r, DOCTOR_FAIL, "%s, and runc is not installed", !v2 ?
		    "this host needs runc (crun refuses hybrid and v1 cgroup "
		    "hosts)" : "runtime = runc");
		fix(r, "install runc (apt install runc)");
		return;
	}
	if (p->runtime == POLICY_RUNTIME_AUTO && !v2)
		say(r, DOCTOR_OK, "%s: ai-sandbox passes --runtime=runc itself "
		    "(crun refuses such hosts; runc works)",
		    cgroup_text(f->cgroup));
	else if (p->runtime == POLICY_RUNTIME_AUTO)
		say(r, DOCTOR_OK, "%s: podman's own runtime%s%s",
		    cgroup_text(f->cgroup), f->oci_runtime[0] ? ", " : "",
		    f->oci_runtime);
	else
		say(r, DOCTOR_OK, "runtime = %s on a %s host",
		    p->runtime == POLICY_RUNTIME_RUNC ? "runc" : "crun",
		    cgroup_text(f->cgroup));
}

/* The lower of the host's and podman's hard limit (0: unknown). */
static uint64_t
hard_min(uint64_t host, uint64_t podman)
{
	if (podman != 0 && podman < host)
		return podman;
	return host;
}

/* "20000", or "unlimited". */
static const char *
lim_text(uint64_t v, char *buf, size_t len)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* nofile and nproc within every hard limit they meet (measured). */
static void
check_ulimits(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	uint64_t hn = hard_min(f->host_nofile, f->podman_nofile);
	uint64_t hu = hard_min(f->host_nproc, f->podman_nproc);
	char a[32], b[32], why[200];

	if (p->nofile > hn) {
		say(r, DOCTOR_FAIL, "nofile %llu is above the hard limit %s "
		    "(%s): podman would fail to create the sandbox with "
		    "\"setrlimit: operation not permitted\"",
		    (unsigned long long)p->nofile, lim_text(hn, a, sizeof(a)),
		    hn == f->host_nofile ? "this host's" : "of podman's own "
		    "processes");
		fix(r, "set nofile = %s or lower (--nofile, AISB_NOFILE, or "
		    "nofile in your config)", a);
		return;
	}
	if (p->nproc > hu) {
		if (hu != f->host_nproc)
			snprintf(why, sizeof(why), "podman's own processes "
			    "run with a hard nproc of %s, below the host's %s",
			    lim_text(hu, a, sizeof(a)),
			    lim_text(f->host_nproc, b, sizeof(b)));
		else
			snprintf(why, sizeof(why), "this host's hard limit");
		say(r, DOCTOR_FAIL, "nproc %llu is above the hard limit %s "
		    "(%s): the runtime would fail with \"setrlimit: operation "
		    "not permitted\"", (unsigned long long)p->nproc,
		    lim_text(hu, a, sizeof(a)), why);
		fix(r, "set nproc = %s or lower (--nproc, AISB_NPROC, or nproc "
		    "in your config)", a);
		return;
	}
	if (f->conf_file[0] != '\0' && ((f->conf_nofile != 0 &&
	    f->conf_nofile > hn) || (f->conf_nproc != 0 &&
	    f->conf_nproc > hu))) {
		snprintf(why, sizeof(why), "%s%s%s%s%s",
		    f->conf_nofile ? "nofile " : "",
		    f->conf_nofile ? lim_text(f->conf_nofile, a, sizeof(a)) :
		    "", f->conf_nofile && f->conf_nproc ? ", " : "",
		    f->conf_nproc ? "nproc " : "",
		    f->conf_nproc ? lim_text(f->conf_nproc, b, sizeof(b)) : "");
		say(r, DOCTOR_WARN, "podman's default_ulimits in %s (%s) "
		    "exceed the hard limits (nofile %s, nproc %s): plain "
		    "podman run and build fail with \"setrlimit: operation not "
		    "permitted\"; ai-sandbox passes its own --ulimit, so its "
		    "runs are not affected", f->conf_file, why,
		    lim_text(hn, a, sizeof(a)), lim_text(hu, b, sizeof(b)));
		fix(r, "lower default_ulimits in %s to within the hard limits",
		    f->conf_file);
		return;
	}
	if (hu != f->host_nproc)
		snprintf(why, sizeof(why), "; podman's own processes have "
		    "nproc %llu, below the host's %s, and a higher --nproc "
		    "fails", (unsigned long long)hu,
		    lim_text(f->host_nproc, b, sizeof(b)));
	else
		why[0] = '\0';
	say(r, DOCTOR_OK, "nofile %llu and nproc %llu are within the hard "
	    "limits (nofile %s, nproc %s%s)", (unsigned long long)p->nofile,
	    (unsigned long long)p->nproc, lim_text(hn, a, sizeof(a)),
	    lim_text(hu, b, sizeof(b)), why);
}

/* Will memory, cpus and pids be enforced, or silently ignored? */
static void
check_caps(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (f->limits_reason[0] == '\0') {
		say(r, DOCTOR_OK, "memory, cpus and pids caps will be enforced "
		    "(%s)", f->uid == 0 ? "rootful podman" : "cgroup v2 with "
		    "the controllers delegated to you");
		return;
	}
	say(r, p->allow_unenforced_limits ? DOCTOR_WARN : DOCTOR_FAIL,
	    "memory, cpus and pids caps would not be enforced: %s. %s",
	    f->limits_reason, p->allow_unenforced_limits ?
	    "allow-unenforced-limits is set, so runs go on without them" :
	    "Runs are refused");
	fix(r, "boot with cgroup v2 (systemd.unified_cgroup_hierarchy=1) and "
	    "delegate memory, pids and cpu to your user, or use rootful "
	    "podman; --allow-unenforced-limits runs without the caps, warned "
	    "every time");
}

/* vfs copies the image per container (measured: 6.4 s against 0.24 s). */
static void
check_storage(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (!f->info_ok) {
		say(r, DOCTOR_SKIP, "needs podman info");
		return;
	}
	if (strcmp(f->graph_driver, "vfs") == 0) {
		say(r, DOCTOR_WARN, "podman stores images with the vfs driver, "
		    "which copies the whole image for every container ("
		    DOCTOR_VFS_COST ")");
		fix(r, "put driver = \"overlay\" under [storage] in "
		    "~/.config/containers/storage.conf, then run podman system "
		    "reset, which DELETES all your podman images, containers "
		    "and volumes; ai-sandbox never does that for you");
		return;
	}
	say(r, DOCTOR_OK, "storage driver %s", f->graph_driver);
}

/* SELinux and the :z relabel of bind mounts. */
static void
check_selinux(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	if (!f->selinux_enabled) {
		say(r, DOCTOR_OK, "SELinux is not enabled: bind mounts need no "
		    "relabel%s", p->selinux == POLICY_YES ? " (selinux = yes "
		    "adds :z anyway, harmlessly)" : "");
		return;
	}
	if (f->selinux_enforcing && p->selinux == POLICY_NO) {
		say(r, DOCTOR_FAIL, "SELinux is enforcing and selinux = no: "
		    "the sandbox could not read or write the project");
		fix(r, "set selinux = auto (the default)");
		return;
	}
	if (f->selinux_enforcing)
		say(r, DOCTOR_OK, "SELinux is enforcing: ai-sandbox adds :z to "
		    "bind mounts, which relabels the project directory (and "
		    "--mount sources) with a shared container label");
	else
		say(r, DOCTOR_OK, "SELinux is permissive: no relabel needed");
}

/* The owner, on the host, of a file the sandbox wrote. */
static void
check_roundtrip(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	switch (f->rt_state) {
	case DOCTOR_RT_NOPODMAN:
		say(r, DOCTOR_SKIP, "needs podman");
		return;
	case DOCTOR_RT_NOIMAGE:
		say(r, DOCTOR_SKIP, "no sandbox image for this policy yet "
		    "(%s), so no container could write a file", f->rt_detail);
		fix(r, "ai-sandbox build, then doctor again; or doctor --deep, "
		    "which builds it");
		return;
	case DOCTOR_RT_FAILED:
		say(r, DOCTOR_FAIL, "a container with the sandbox's user "
		    "mapping did not run: %s", f->rt_detail);
		fix(r, "the other lines say why (network, runtime, ulimits); "
		    "podman run --userns=keep-id shows the whole error");
		return;
	case DOCTOR_RT_OWNER:
		say(r, DOCTOR_FAIL, "a file the sandbox's uid %d wrote in a "
		    "bind mount belongs to uid %u on the host, not to you "
		    "(%u): the agent's changes to your project would not be "
		    "yours",
		    AISB_SANDBOX_UID, f->rt_owner, f->uid);
		fix(r, "check /etc/subuid and /etc/subgid, then podman system "
		    "migrate; --userns=keep-id must map you to uid %d",
		    AISB_SANDBOX_UID);
		return;
	default:
		say(r, DOCTOR_OK, "a file the sandbox's uid %d wrote in a bind "
		    "mount belongs to you (uid %u) on the host",
		    AISB_SANDBOX_UID, f->uid);
	}
}

/* The base pin: missing, stale, bad, or images built UNPINNED. */
static void
check_pin(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	int64_t age = (f->now - f->pin.resolved) / 86400;

	if (f->pin_state == -1) {
		say(r, DOCTOR_FAIL, "%s", f->pin_error);
		fix(r, "delete the file: the next build resolves the base "
		    "again");
		return;
	}
	if (f->unpinned > 0) {
		say(r, DOCTOR_WARN, "%zu image%s built from an UNPINNED base "
		    "(a mutable tag, not a digest), e.g. %s", f->unpinned,
		    f->unpinned == 1 ? " was" : "s were", f->unpinned_first);
		fix(r, "ai-sandbox update (pins the base and rebuilds)");
		return;
	}
	if (f->pin_state == 2) {
		say(r, DOCTOR_OK, "base %s names its digest", p->base_image);
		return;
	}
	if (f->pin_state == 0) {
		say(r, DOCTOR_WARN, "no base pin recorded for %s yet (%s): the "
		    "first build resolves one, or builds UNPINNED if it cannot",
		    p->base_image, f->pin_error);
		fix(r, "ai-sandbox build");
		return;
	}
	if (p->base_ttl_days > 0 && f->now - f->pin.resolved >
	    p->base_ttl_days * 86400) {
		say(r, DOCTOR_WARN, "the base pin for %s is %lld days old "
		    "(base-ttl-days = %lld): %s", p->base_image, (long long)age,
		    (long long)p->base_ttl_days, p->base_auto_update ?
		    "the next build re-resolves it" : "base-auto-update is no, "
		    "so it stays until ai-sandbox update");
		fix(r, "ai-sandbox update");
		return;
	}
	say(r, DOCTOR_OK, "base %s pinned to %.19s..., resolved %lld days ago "
	    "(%s)", p->base_image, f->pin.digest, (long long)age,
	    p->base_ttl_days < 0 ? "never stale" : p->base_ttl_days == 0 ?
	    "re-resolved on every build" : "fresh");
}

/* Is the project committed, so the agent's edits can be undone? */
static void
check_git(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	switch (f->git_state) {
	case DOCTOR_GIT_NOCWD:
		say(r, DOCTOR_SKIP, "cwd = no: no project is mounted");
		return;
	case DOCTOR_GIT_NONE:
		say(r, DOCTOR_SKIP, "git is not installed: cannot tell whether "
		    "%s is committed", p->project_dir);
		return;
	case DOCTOR_GIT_ERROR:
		say(r, DOCTOR_SKIP, "git could not read %s: %s",
		    p->project_dir, f->git_detail);
		return;
	case DOCTOR_GIT_NOREPO:
		say(r, DOCTOR_WARN, "%s is not in a git repository: you could "
		    "not review or undo what the agent changes",
		    p->project_dir);
		fix(r, "git init && git add -A && git commit");
		return;
	case DOCTOR_GIT_DIRTY:
		say(r, DOCTOR_WARN, "%s has %zu uncommitted change%s (%s): the "
		    "agent's edits would mix with yours", p->project_dir,
		    f->git_dirty, f->git_dirty == 1 ? "" : "s", f->git_detail);
		fix(r, "commit (or stash) first, so what the agent changes can "
		    "be reviewed and undone: git add -A && git commit");
		return;
	default:
		say(r, DOCTOR_OK, "%s is committed (a clean git tree)",
		    p->project_dir);
	}
}

/* Published ports: there are none yet, and it says so. */
static void
check_ports(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	say(r, DOCTOR_OK, "no published ports: ai-sandbox publishes none yet, "
	    "so none can be in use");
}

/* SKIP or FAIL for a probe that has no answer; 1 when it said so. */
static int
probe_missing(const struct doctor_facts *f, const struct doctor_probe *pr,
    struct doctor_result *r)
{
	if (f->deep_error[0] != '\0') {
		say(r, DOCTOR_FAIL, "the probe sandbox did not run: %s",
		    f->deep_error);
		fix(r, "the lines above say why; ai-sandbox --net none -- true "
		    "shows the whole error");
		return 1;
	}
	if (!pr->done) {
		say(r, DOCTOR_FAIL, "the probe inside the sandbox did not "
		    "report");
		return 1;
	}
	return 0;
}

/* --deep: the allowlisted name went through the gate. */
static void
check_egress_allowed(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	const struct doctor_probe *pr = &f->probes[DOCTOR_PROBE_ALLOWED];

	if (probe_missing(f, pr, r))
		return;
	if (strcmp(pr->decision, "allow") == 0) {
		say(r, DOCTOR_OK, "allowlisted %s passed the gate (HTTP status "
		    "%d; the sandbox saw %s)", f->deep_name, pr->status,
		    pr->result);
		return;
	}
	if (strcmp(pr->decision, "deny") == 0 &&
	    (strncmp(pr->reason, "dns:", 4) == 0 ||
	    strncmp(pr->reason, "upstream", 8) == 0)) {
		say(r, DOCTOR_WARN, "the gate admitted allowlisted %s but "
		    "could not reach it (%s): egress works, the name does not "
		    "answer from this host", f->deep_name, pr->reason);
		fix(r, "check the host's network and DNS (--dns-server), or "
		    "try doctor --deep --allow NAME with a name you can reach");
		return;
	}
	if (pr->decision[0] == '\0') {
		say(r, DOCTOR_FAIL, "a request for allowlisted %s never "
		    "reached the gate (the sandbox saw %s)", f->deep_name,
		    pr->result);
		fix(r, "ai-sandbox gate logs shows what the gate saw; the "
		    "ruleset must let the sandbox reach the gate");
		return;
	}
	say(r, DOCTOR_FAIL, "the gate refused allowlisted %s: %s",
	    f->deep_name, pr->reason);
	fix(r, "ai-sandbox gate logs --denied suggests the entry that admits "
	    "it");
}

/* --deep: the gate refused an unlisted name. */
static void
check_egress_unlisted(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	const struct doctor_probe *pr = &f->probes[DOCTOR_PROBE_UNLISTED];

	if (probe_missing(f, pr, r))
		return;
	if (strcmp(pr->decision, "allow") == 0) {
		say(r, DOCTOR_FAIL, "the gate let unlisted " DOCTOR_UNLISTED
		    " through");
		fix(r, "look for a wildcard entry in your allowlist "
		    "(ai-sandbox --print-policy --origin)");
		return;
	}
	if (pr->decision[0] == '\0') {
		say(r, DOCTOR_FAIL, "no refusal of unlisted " DOCTOR_UNLISTED
		    " was logged by the gate (the sandbox saw %s)", pr->result);
		return;
	}
	say(r, DOCTOR_OK, "unlisted " DOCTOR_UNLISTED " was refused by the "
	    "gate (%s, HTTP %d)", pr->reason, pr->status);
}

/* --deep: neither the ruleset nor the gate let a raw IP through. */
static void
check_egress_ip(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	const struct doctor_probe *pr = &f->probes[DOCTOR_PROBE_RAW_IP];

	if (probe_missing(f, pr, r))
		return;
	if (pr->arrived || strcmp(pr->result, "connected") == 0) {
		say(r, DOCTOR_FAIL, "a direct TCP connection from the sandbox "
		    "to a host port other than the gate's got through: the "
		    "ruleset is not holding");
		fix(r, "ai-sandbox --print-entrypoint shows the ruleset the "
		    "init installs; never set allow-unenforced");
		return;
	}
	if (strcmp(pr->decision, "allow") == 0) {
		say(r, DOCTOR_FAIL, "the gate let a request to the raw IP "
		    DOCTOR_RAW_IP " through");
		fix(r, "remove the IP or CIDR entry that covers it");
		return;
	}
	say(r, DOCTOR_OK, "raw IPs are refused: a direct TCP connection "
	    "bypassing the gate got %s, and the gate refused " DOCTOR_RAW_IP
	    "%s%s", pr->result, pr->reason[0] ? ": " : "", pr->reason);
}

/* --deep: no UDP datagram reached the host. */
static void
check_egress_udp(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	const struct doctor_probe *pr = &f->probes[DOCTOR_PROBE_UDP];

	if (probe_missing(f, pr, r))
		return;
	if (pr->arrived) {
		say(r, DOCTOR_FAIL, "a UDP datagram from the sandbox reached a "
		    "port on the host");
		fix(r, "ai-sandbox --print-entrypoint shows the ruleset; never "
		    "set allow-unenforced");
		return;
	}
	say(r, DOCTOR_OK, "UDP gets nothing out: a datagram to a host port "
	    "never arrived (the sandbox saw %s)", pr->result);
}

/* --deep: no IPv6 connection got out. */
static void
check_egress_ipv6(const struct doctor_facts *f, const struct policy *p,
    struct doctor_result *r)
{
	const struct doctor_probe *pr = &f->probes[DOCTOR_PROBE_IPV6];

	if (probe_missing(f, pr, r))
		return;
	if (strcmp(pr->result, "connected") == 0) {
		say(r, DOCTOR_FAIL, "an IPv6 connection from the sandbox to ["
		    DOCTOR_IPV6 "]:443 got through");
		fix(r, "ai-sandbox --print-entrypoint shows the ruleset");
		return;
	}
	say(r, DOCTOR_OK, "IPv6 gets nothing out: a connection to ["
	    DOCTOR_IPV6 "]:443 got %s", pr->result);
}

static const struct doctor_check doctor_checks[] = {
	{ "podman", check_podman, 0 },
	{ "rootless", check_rootless, 0 },
	{ "subids", check_subids, 0 },
	{ "network", check_network, 0 },
	{ "tun", check_tun, 0 },
	{ "runtime", check_runtime, 0 },
	{ "ulimits", check_ulimits, 0 },
	{ "caps", check_caps, 0 },
	{ "storage", check_storage, 0 },
	{ "selinux", check_selinux, 0 },
	{ "bind-mount", check_roundtrip, 0 },
	{ "base-pin", check_pin, 0 },
	{ "git", check_git, 0 },
	{ "ports", check_ports, 0 },
	{ "egress-allowed", check_egress_allowed, 1 },
	{ "egress-unlisted", check_egress_unlisted, 1 },
	{ "egress-raw-ip", check_egress_ip, 1 },
	{ "egress-udp", check_egress_udp, 1 },
	{ "egress-ipv6", check_egress_ipv6, 1 },
};

#define DOCTOR_NCHECKS	(sizeof(doctor_checks) / sizeof(doctor_checks[0]))

/* The checks whose deep flag is want, into out. */
static size_t
check_some(const struct doctor_facts *f, const struct policy *p, int want,
    struct doctor_result *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < DOCTOR_NCHECKS && n < max; i++) {
		if (doctor_checks[i].deep != want)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].name = doctor_checks[i].name;
		doctor_checks[i].fn(f, p, &out[n]);
		n++;
	}
	return n;
}

size_t
doctor_check_all(const struct doctor_facts *f, const struct policy *p,
    int deep, struct doctor_result *out, size_t max)
{
	size_t n = check_some(f, p, 0, out, max);

	if (deep)
		n += check_some(f, p, 1, out + n, max - n);
	return n;
}

/* One verdict: "LEVEL name: what", wrapped, then "fix: ...". */
static int
render_one(const struct doctor_result *r, struct sbuf *out)
{
	struct sbuf b;
	char head[DOCTOR_TEXT_MAX + 64];
	int rv;

	sbuf_init(&b);
	snprintf(head, sizeof(head), "%s: %s", r->name, r->what);
	rv = help_wrap(&b, 6, head);
	if (rv == 0 && r->fix[0] != '\0' && r->level != DOCTOR_OK) {
		snprintf(head, sizeof(head), "fix: %s", r->fix);
		rv = help_wrap(&b, 6, head);
	}
	if (rv == 0 && b.len >= 6) {
		memcpy(b.p, doctor_level_name(r->level),
		    strlen(doctor_level_name(r->level)));
		rv = sbuf_add(out, b.p, b.len);
	}
	sbuf_free(&b);
	return rv;
}

int
doctor_render(const struct doctor_result *r, size_t n, struct sbuf *out)
{
	size_t i, fails = 0, warns = 0;

	for (i = 0; i < n; i++) {
		if (render_one(&r[i], out) == -1)
			return -1;
		fails += r[i].level == DOCTOR_FAIL;
		warns += r[i].level == DOCTOR_WARN;
	}
	if (fails > 0)
		sbuf_printf(out, "not fit: %zu problem%s to fix (FAIL), %zu "
		    "warning%s\n", fails, fails == 1 ? "" : "s", warns,
		    warns == 1 ? "" : "s");
	else
		sbuf_printf(out, "fit: no problems, %zu warning%s\n", warns,
		    warns == 1 ? "" : "s");
	return fails == 0;
}

/* --- pure parsers of host files ---------------------------------------- */

/* Parse a decimal number up to a delimiter; -1 when none. */
static int
parse_u64(const char *s, const char **end, uint64_t *v)
{
	uint64_t n = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	*v = n;
	*end = p;
	return 0;
}

uint64_t
doctor_subids(const char *text, const char *user, unsigned int uid,
    uint64_t *start)
{
	const char *p = text, *nl, *c1, *e;
	char uidbuf[16];
	uint64_t total = 0, s, n;
	size_t ul;
	int first = 1;

	snprintf(uidbuf, sizeof(uidbuf), "%u", uid);
	*start = 0;
	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		c1 = memchr(p, ':', nl ? (size_t)(nl - p) : strlen(p));
		if (c1 != NULL) {
			ul = (size_t)(c1 - p);
			if (((user != NULL && strlen(user) == ul &&
			    strncmp(p, user, ul) == 0) || (strlen(uidbuf) ==
			    ul && strncmp(p, uidbuf, ul) == 0)) &&
			    parse_u64(c1 + 1, &e, &s) == 0 && *e == ':' &&
			    parse_u64(e + 1, &e, &n) == 0 &&
			    (*e == '\0' || *e == '\n' || *e == '\r')) {
				if (first)
					*start = s;
				first = 0;
				if (total < UINT64_MAX - n)
					total += n;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	return total;
}

/* The hard column of a /proc/PID/limits line starting with name. */
static uint64_t
limits_hard(const char *text, const char *name)
{
	const char *p = strstr(text, name), *e;
	uint64_t v;

	if (p == NULL)
		return 0;
	p += strlen(name);
	while (*p == ' ')
		p++;
	/* The soft column, then the hard one. */
	if (strncmp(p, "unlimited", 9) == 0)
		p += 9;
	else if (parse_u64(p, &e, &v) == 0)
		p = e;
	else
		return 0;
	while (*p == ' ')
		p++;
	if (strncmp(p, "unlimited", 9) == 0)
		return UINT64_MAX;
	if (parse_u64(p, &e, &v) == -1)
		return 0;
	return v;
}

int
doctor_proc_limits(const char *text, uint64_t *nofile, uint64_t *nproc)
{
	*nofile = limits_hard(text, "Max open files");
	*nproc = limits_hard(text, "Max processes");
	return *nofile != 0 && *nproc != 0 ? 0 : -1;
}

/* The hard value of "NAME=SOFT:HARD" (or "NAME=N") in a quoted item. */
static void
conf_item(const char *s, size_t len, uint64_t *nofile, uint64_t *nproc)
{
	const char *eq = memchr(s, '=', len), *colon, *e;
	uint64_t v;

	if (eq == NULL)
		return;
	colon = memchr(eq, ':', len - (size_t)(eq - s));
	if (strncmp(eq + 1, "-1", 2) == 0 || (colon != NULL &&
	    strncmp(colon + 1, "-1", 2) == 0))
		v = UINT64_MAX;
	else if (parse_u64(colon ? colon + 1 : eq + 1, &e, &v) == -1)
		return;
	if ((size_t)(eq - s) == 6 && strncmp(s, "nofile", 6) == 0)
		*nofile = v;
	else if ((size_t)(eq - s) == 5 && strncmp(s, "nproc", 5) == 0)
		*nproc = v;
}

int
doctor_conf_ulimits(const char *text, uint64_t *nofile, uint64_t *nproc)
{
	const char *p = text, *line, *q, *end;
	int found = 0;

	*nofile = *nproc = 0;
	while (p != NULL && *p != '\0') {
		line = p + strspn(p, " \t");
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
		if (strncmp(line, "default_ulimits", 15) != 0)
			continue;
		q = line + 15 + strspn(line + 15, " \t");
		if (*q != '=')
			continue;
		q++;
		if ((end = strchr(q, ']')) == NULL)
			break;
		found = 1;
		*nofile = *nproc = 0;	/* the last definition counts */
		while ((q = strchr(q, '"')) != NULL && q < end) {
			const char *close = strchr(q + 1, '"');

			if (close == NULL || close > end)
				break;
			conf_item(q + 1, (size_t)(close - q - 1), nofile,
			    nproc);
			q = close + 1;
		}
		p = strchr(end, '\n');
		if (p != NULL)
			p++;
	}
	return found;
}

/* --- gathering the facts (impure) --------------------------------------- */

/* Read a whole small file into b; -1 when it cannot be read. */
static int
read_small(const char *path, struct sbuf *b)
{
	char buf[8192];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0 &&
	    b->len < DOCTOR_FILE_MAX)
		sbuf_add(b, buf, (size_t)n);
	close(fd);
	if (b->p == NULL)
		sbuf_adds(b, "");
	return n == -1 ? -1 : 0;
}

/* Is name an executable in PATH or where podman looks for helpers? */
static int
find_program(const char *name)
{
	static const char *const extra[] = { "/usr/libexec/podman",
		"/usr/local/libexec/podman", "/usr/lib/podman", "/usr/sbin",
		"/sbin", "/usr/local/sbin", "/usr/bin", "/bin" };
	const char *path = getenv("PATH"), *p, *c;
	char buf[4096];
	size_t i, len;

	for (p = path; p != NULL && *p != '\0'; p = c ? c + 1 : NULL) {
		c = strchr(p, ':');
		len = c ? (size_t)(c - p) : strlen(p);
		if (len == 0 || len > 1024)
			continue;
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, name);
		if (access(buf, X_OK) == 0)
			return 1;
	}
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		snprintf(buf, sizeof(buf), "%s/%s", extra[i], name);
		if (access(buf, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* The first line of what a failed command said. */
static void
first_words(struct sbuf *b, char *out, size_t len)
{
	const char *s = ops_last_line(b);

	snprintf(out, len, "%s", s);
}

static void
gather_podman(struct launcher *L, struct doctor_facts *f)
{
	struct sbuf out, errb;
	cJSON *root;
	const cJSON *host, *store, *sec, *rt, *ids, *m;
	int rc;

	sbuf_init(&out);
	sbuf_init(&errb);
	rc = ops_podman(L, &out, &errb, "version", "--format",
	    "{{.Client.Version}}", (char *)NULL);
	if (rc != 0) {
		if (rc == 127 || rc == -1)
			snprintf(f->podman_error, sizeof(f->podman_error),
			    "not found or not executable");
		else
			first_words(&errb, f->podman_error,
			    sizeof(f->podman_error));
		goto out;
	}
	f->podman_runs = 1;
	snprintf(f->podman_version, sizeof(f->podman_version), "%.*s",
	    (int)strcspn(out.p ? out.p : "", "\r\n"), out.p ? out.p : "");
	f->podman_major = atoi(f->podman_version);
	sbuf_reset(&out);
	sbuf_reset(&errb);
	rc = ops_podman(L, &out, &errb, "info", "--format", "json",
	    (char *)NULL);
	if (rc != 0 || (root = cJSON_Parse(out.p ? out.p : "")) == NULL) {
		if (rc == 0)
			snprintf(f->info_error, sizeof(f->info_error), "its "
			    "output is not JSON");
		else
			first_words(&errb, f->info_error,
			    sizeof(f->info_error));
		goto out;
	}
	f->info_ok = 1;
	host = cJSON_GetObjectItemCaseSensitive(root, "host");
	store = cJSON_GetObjectItemCaseSensitive(root, "store");
	sec = cJSON_GetObjectItemCaseSensitive(host, "security");
	f->rootless = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sec,
	    "rootless"));
	rt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    host, "ociRuntime"), "name");
	if (cJSON_IsString(rt))
		snprintf(f->oci_runtime, sizeof(f->oci_runtime), "%s",
		    rt->valuestring);
	rt = cJSON_GetObjectItemCaseSensitive(store, "graphDriverName");
	if (cJSON_IsString(rt))
		snprintf(f->graph_driver, sizeof(f->graph_driver), "%s",
		    rt->valuestring);
	ids = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    host, "idMappings"), "uidmap");
	cJSON_ArrayForEach(m, ids) {
		rt = cJSON_GetObjectItemCaseSensitive(m, "size");
		if (cJSON_IsNumber(rt) && rt->valuedouble > 0)
			f->uidmap_size += (uint64_t)rt->valuedouble;
	}
	rt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    host, "slirp4netns"), "executable");
	if (cJSON_IsString(rt) && rt->valuestring[0] != '\0' &&
	    access(rt->valuestring, X_OK) == 0)
		f->has_slirp = 1;
	cJSON_Delete(root);
	/* The limits podman's own processes run with (measured: nproc 32768
	 * inside podman unshare, though the host allows more). */
	if (f->uid != 0) {
		sbuf_reset(&out);
		if (ops_podman(L, &out, NULL, "unshare", "cat",
		    "/proc/self/limits", (char *)NULL) == 0)
			doctor_proc_limits(out.p ? out.p : "",
			    &f->podman_nofile, &f->podman_nproc);
	}
out:
	sbuf_free(&out);
	sbuf_free(&errb);
}

/* One containers.conf: its default_ulimits replace earlier ones. */
static void
conf_take(const char *path, struct sbuf *b, struct doctor_facts *f)
{
	uint64_t nofile, nproc;

	sbuf_reset(b);
	if (read_small(path, b) == 0 && doctor_conf_ulimits(b->p, &nofile,
	    &nproc)) {
		snprintf(f->conf_file, sizeof(f->conf_file), "%.*s",
		    (int)sizeof(f->conf_file) - 1, path);
		f->conf_nofile = nofile;
		f->conf_nproc = nproc;
	}
}

/* containers.conf files in podman's order; the last default_ulimits wins. */
static void
gather_conf(const struct launcher *L, struct doctor_facts *f)
{
	char dirs[3][1024], path[1400];
	const char *env = getenv("CONTAINERS_CONF"), *home = L->host.home;
	const char *xdg = L->host.xdg_config_home;
	struct dirent **ents;
	struct sbuf b;
	size_t d;
	int n, i;

	snprintf(dirs[0], sizeof(dirs[0]), "/usr/share/containers");
	snprintf(dirs[1], sizeof(dirs[1]), "/etc/containers");
	if (xdg != NULL)
		snprintf(dirs[2], sizeof(dirs[2]), "%s/containers", xdg);
	else
		snprintf(dirs[2], sizeof(dirs[2]), "%s/.config/containers",
		    home ? home : "/nonexistent");
	sbuf_init(&b);
	if (env != NULL && env[0] == '/') {
		conf_take(env, &b, f);
		sbuf_free(&b);
		return;
	}
	for (d = 0; d < 3; d++) {
		if (snprintf(path, sizeof(path), "%s/" DOCTOR_CONF_NAME,
		    dirs[d]) >= (int)sizeof(path))
			continue;
		conf_take(path, &b, f);
		if (snprintf(path, sizeof(path), "%s/" DOCTOR_CONF_NAME ".d",
		    dirs[d]) >= (int)sizeof(path))
			continue;
		if ((n = scandir(path, &ents, NULL, alphasort)) < 0)
			continue;
		for (i = 0; i < n; i++) {
			size_t l = strlen(ents[i]->d_name);
			char file[1700];

			if (l > 5 && strcmp(ents[i]->d_name + l - 5, ".conf") ==
			    0) {
				snprintf(file, sizeof(file), "%s/%s", path,
				    ents[i]->d_name);
				conf_take(file, &b, f);
			}
			free(ents[i]);
		}
		free(ents);
	}
	sbuf_free(&b);
}

/* /etc/subuid and /etc/subgid, cgroups, helpers, tun, limits, SELinux. */
static void
gather_host(struct launcher *L, struct doctor_facts *f)
{
	struct sbuf b;
	struct stat st;
	struct rlimit rl;
	struct passwd *pw;
	uint64_t start;
	char buf[4];
	int fd;

	f->uid = (unsigned int)geteuid();
	if ((pw = getpwuid(f->uid)) != NULL)
		snprintf(f->user, sizeof(f->user), "%s", pw->pw_name);
	else
		snprintf(f->user, sizeof(f->user), "%u", f->uid);
	sbuf_init(&b);
	if (read_small("/etc/subuid", &b) == 0)
		f->subuid_count = doctor_subids(b.p, f->user, f->uid,
		    &f->subuid_start);
	sbuf_reset(&b);
	if (read_small("/etc/subgid", &b) == 0)
		f->subgid_count = doctor_subids(b.p, f->user, f->uid, &start);
	sbuf_free(&b);
	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0)
		f->cgroup = DOCTOR_CGROUP_V2;
	else if (stat("/sys/fs/cgroup/unified", &st) == 0)
		f->cgroup = DOCTOR_CGROUP_HYBRID;
	else
		f->cgroup = DOCTOR_CGROUP_V1;
	f->has_slirp = f->has_slirp || find_program("slirp4netns");
	f->has_pasta = find_program("pasta");
	f->has_runc = find_program("runc");
	f->has_crun = find_program("crun");
	if (stat("/dev/net/tun", &st) == 0) {
		f->tun_exists = 1;
		f->tun_chr = S_ISCHR(st.st_mode);
		f->tun_mode = (unsigned int)st.st_mode;
	}
	f->host_nofile = f->host_nproc = UINT64_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY)
		f->host_nofile = rl.rlim_max;
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_max != RLIM_INFINITY)
		f->host_nproc = rl.rlim_max;
	if (run_limits_unenforced(f->limits_reason,
	    sizeof(f->limits_reason)) == NULL)
		f->limits_reason[0] = '\0';
	if ((fd = open("/sys/fs/selinux/enforce", O_RDONLY | O_CLOEXEC)) !=
	    -1) {
		f->selinux_enabled = 1;
		if (read(fd, buf, 1) == 1 && buf[0] == '1')
			f->selinux_enforcing = 1;
		close(fd);
	}
	gather_conf(L, f);
}

/* Is the project committed? */
static void
gather_git(struct launcher *L, struct doctor_facts *f)
{
	const struct policy *p = &L->policy;
	struct sbuf out, errb;
	struct argv a;
	const char *s;
	size_t n = 0;
	int rc;

	if (!p->cwd) {
		f->git_state = DOCTOR_GIT_NOCWD;
		return;
	}
	sbuf_init(&out);
	sbuf_init(&errb);
	argv_init(&a);
	if (argv_add(&a, "git") == -1 || argv_add(&a, "-C") == -1 ||
	    argv_add(&a, p->project_dir) == -1 ||
	    argv_add(&a, "status") == -1 ||
	    argv_add(&a, "--porcelain=v1") == -1) {
		f->git_state = DOCTOR_GIT_ERROR;
		snprintf(f->git_detail, sizeof(f->git_detail), "out of memory");
		goto out;
	}
	rc = ops_capture(&a, &out, &errb);
	if (rc == 127 || rc == -1) {
		f->git_state = DOCTOR_GIT_NONE;
		goto out;
	}
	if (rc != 0) {
		s = ops_last_line(&errb);
		if (strstr(s, "not a git repository") != NULL)
			f->git_state = DOCTOR_GIT_NOREPO;
		else {
			f->git_state = DOCTOR_GIT_ERROR;
			snprintf(f->git_detail, sizeof(f->git_detail), "%s", s);
		}
		goto out;
	}
	for (s = out.p; s != NULL && *s != '\0'; s = strchr(s, '\n')) {
		if (*s == '\n')
			s++;
		if (*s == '\0')
			break;
		if (n++ == 0)
			snprintf(f->git_detail, sizeof(f->git_detail), "%.*s",
			    (int)strcspn(s, "\n"), s);
	}
	f->git_dirty = n;
	f->git_state = n ? DOCTOR_GIT_DIRTY : DOCTOR_GIT_CLEAN;
out:
	argv_free(&a);
	sbuf_free(&out);
	sbuf_free(&errb);
}

/* The base pin of the policy, and images built UNPINNED. */
static void
gather_pin(struct launcher *L, struct doctor_facts *f)
{
	struct aisb_error err;
	struct sbuf out;
	char *path;
	int rv;

	if (containerfile_base_kind(L->policy.base_image) ==
	    CONTAINERFILE_BASE_DIGEST)
		f->pin_state = 2;
	else {
		rv = image_pin_load(&L->policy, &f->pin, &err);
		f->pin_state = rv;
		if (rv == -1)
			snprintf(f->pin_error, sizeof(f->pin_error), "%s",
			    err.msg);
		else if (rv == 0 && (path = image_pin_path(&L->policy)) !=
		    NULL) {
			snprintf(f->pin_error, sizeof(f->pin_error), "%s",
			    path);
			free(path);
		}
	}
	if (!f->podman_runs)
		return;
	sbuf_init(&out);
	if (ops_podman(L, &out, NULL, "images", "--format",
	    "{{.Repository}}:{{.Tag}}", "--filter",
	    "label=aisb.base-digest=" AISB_UNPINNED, (char *)NULL) == 0 &&
	    out.p != NULL) {
		const char *s = out.p;

		while (*s != '\0') {
			size_t l = strcspn(s, "\n");

			if (l > 0 && f->unpinned++ == 0)
				snprintf(f->unpinned_first,
				    sizeof(f->unpinned_first), "%.*s", (int)l,
				    s);
			s += l;
			if (*s == '\n')
				s++;
		}
	}
	sbuf_free(&out);
}

/* --runtime for containers doctor starts: what a run would pass. */
static const char *
doctor_runtime_flag(const struct policy *p, const struct doctor_facts *f)
{
	if (p->runtime == POLICY_RUNTIME_RUNC || (p->runtime ==
	    POLICY_RUNTIME_AUTO && f->cgroup != DOCTOR_CGROUP_V2))
		return "--runtime=runc";
	if (p->runtime == POLICY_RUNTIME_CRUN)
		return "--runtime=crun";
	return NULL;
}

/* mkdir -p the state directory (0700 for what it creates). */
static void
doctor_state_dir(const struct policy *p)
{
	char buf[PATH_MAX], *s;

	snprintf(buf, sizeof(buf), "%s", p->state_dir);
	for (s = buf + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(buf, 0700);
		*s = '/';
	}
	mkdir(buf, 0700);
}

/* A fresh directory under the state directory. */
static char *
doctor_tmpdir(const struct policy *p)
{
	char buf[PATH_MAX];

	doctor_state_dir(p);
	if (snprintf(buf, sizeof(buf), "%s/doctor.XXXXXX", p->state_dir) >=
	    (int)sizeof(buf))
		return NULL;
	if (mkdtemp(buf) == NULL)
		return NULL;
	return strdup(buf);
}

/* A file written by the sandbox's uid in a bind mount: whose is it? */
static void
gather_roundtrip(struct launcher *L, struct doctor_facts *f, const char *tag)
{
	const struct policy *p = &L->policy;
	uint64_t nofile = p->nofile, nproc = p->nproc;
	uint64_t hn = hard_min(f->host_nofile, f->podman_nofile);
	uint64_t hu = hard_min(f->host_nproc, f->podman_nproc);
	struct sbuf errb;
	struct argv a;
	struct stat st;
	char *dir, file[PATH_MAX + 16];
	const char *rt = doctor_runtime_flag(p, f);
	int rc;

	if ((dir = doctor_tmpdir(p)) == NULL) {
		f->rt_state = DOCTOR_RT_FAILED;
		snprintf(f->rt_detail, sizeof(f->rt_detail), "cannot make a "
		    "directory under %s: %s", p->state_dir, strerror(errno));
		return;
	}
	/* Within the hard limits: the ulimits check speaks for those. */
	if (nofile > hn)
		nofile = hn;
	if (nproc > hu)
		nproc = hu;
	argv_init(&a);
	sbuf_init(&errb);
	rc = argv_add(&a, p->podman) | argv_add(&a, "run") |
	    argv_add(&a, "--rm") | argv_add(&a, "--network=none") |
	    argv_addf(&a, "--userns=keep-id:uid=%d,gid=%d", AISB_SANDBOX_UID,
	    AISB_SANDBOX_GID) | argv_addf(&a, "--user=%d:%d",
	    AISB_SANDBOX_UID, AISB_SANDBOX_GID) |
	    argv_add(&a, "--cap-drop=ALL") |
	    argv_add(&a, "--security-opt=no-new-privileges") |
	    argv_addf(&a, "--ulimit=nofile=%llu:%llu",
	    (unsigned long long)nofile, (unsigned long long)nofile) |
	    argv_addf(&a, "--ulimit=nproc=%llu:%llu",
	    (unsigned long long)nproc, (unsigned long long)nproc) |
	    argv_addf(&a, "--volume=%s:/aisb-doctor:%s", dir,
	    policy_selinux_effective(p) ? "rw,z" : "rw") |
	    argv_add(&a, "--entrypoint=/bin/sh");
	if (rt != NULL)
		rc |= argv_add(&a, rt);
	rc |= argv_add(&a, tag) | argv_add(&a, "-c") |
	    argv_add(&a, "touch /aisb-doctor/written-by-sandbox");
	if (rc != 0) {
		f->rt_state = DOCTOR_RT_FAILED;
		snprintf(f->rt_detail, sizeof(f->rt_detail), "out of memory");
		goto out;
	}
	rc = ops_capture(&a, NULL, &errb);
	snprintf(file, sizeof(file), "%s/written-by-sandbox", dir);
	if (rc != 0) {
		f->rt_state = DOCTOR_RT_FAILED;
		snprintf(f->rt_detail, sizeof(f->rt_detail), "exit %d: %s", rc,
		    ops_last_line(&errb));
	} else if (lstat(file, &st) == -1) {
		f->rt_state = DOCTOR_RT_FAILED;
		snprintf(f->rt_detail, sizeof(f->rt_detail), "the file did not "
		    "appear on the host: %s", strerror(errno));
	} else if (st.st_uid != (uid_t)f->uid) {
		f->rt_state = DOCTOR_RT_OWNER;
		f->rt_owner = (unsigned int)st.st_uid;
	} else
		f->rt_state = DOCTOR_RT_OK;
	unlink(file);
out:
	rmdir(dir);
	free(dir);
	argv_free(&a);
	sbuf_free(&errb);
}

/* The sandbox image of this policy, if podman has it (or --deep built it). */
static void
gather_image(struct launcher *L, struct doctor_facts *f, int deep)
{
	char tag[IMAGE_TAG_MAX + 64];
	struct aisb_error err;
	struct sbuf errb;

	if (!f->podman_runs) {
		f->rt_state = DOCTOR_RT_NOPODMAN;
		return;
	}
	f->rt_state = DOCTOR_RT_NOIMAGE;
	if (deep) {
		if (image_ensure(L, IMAGE_ROLE_SANDBOX, tag, sizeof(tag),
		    &err) == -1) {
			snprintf(f->rt_detail, sizeof(f->rt_detail), "%s",
			    err.msg);
			return;
		}
	} else if (image_tag(L, IMAGE_ROLE_SANDBOX, tag, sizeof(tag),
	    &err) == -1) {
		snprintf(f->rt_detail, sizeof(f->rt_detail), "%s", err.msg);
		return;
	}
	if (strcmp(tag, AISB_PH_IMAGE) == 0) {
		snprintf(f->rt_detail, sizeof(f->rt_detail), "no base pin yet");
		return;
	}
	sbuf_init(&errb);
	if (ops_podman(L, NULL, &errb, "image", "exists", tag,
	    (char *)NULL) != 0) {
		snprintf(f->rt_detail, sizeof(f->rt_detail), "%s is not built",
		    tag);
		sbuf_free(&errb);
		return;
	}
	sbuf_free(&errb);
	gather_roundtrip(L, f, tag);
}

/* --- doctor --deep: a real sandbox, a probe inside ----------------------- */

/*
 * Runs inside the sandbox as uid 1000 with the gate as its proxy: asks for
 * the allowlisted name, an unlisted name and a raw IP through the gate,
 * then tries a direct TCP connection and a UDP datagram to host ports that
 * listen (reachable without the ruleset through the host-loopback mapping)
 * and an IPv6 connection. Prints one JSON line; the host decides.
 */
static const char doctor_probe_py[] =
"import json, socket, subprocess, sys\n"
"host, tport, uport, ok, bad, ip, v6 = sys.argv[1:8]\n"
"def curl(url):\n"
"    try:\n"
"        p = subprocess.run(['curl', '-sS', '-k', '-o', '/dev/null', '-w',\n"
"            '%{http_code}', '--max-time', '20', url], capture_output=True,\n"
"            text=True, timeout=30)\n"
"        return 'HTTP %s' % p.stdout.strip() if p.returncode == 0 else \\\n"
"            'curl exit %d (%s)' % (p.returncode, p.stderr.strip()[-80:])\n"
"    except Exception as e:\n"
"        return 'error %s' % e\n"
"def tcp(addr, port, fam):\n"
"    s = socket.socket(fam, socket.SOCK_STREAM)\n"
"    s.settimeout(4)\n"
"    try:\n"
"        s.connect((addr, int(port)))\n"
"        return 'connected'\n"
"    except socket.timeout:\n"
"        return 'a timeout'\n"
"    except OSError as e:\n"
"        return 'error %d (%s)' % (e.errno, e.strerror)\n"
"    finally:\n"
"        s.close()\n"
"out = {'allowed': curl(ok), 'unlisted': curl(bad), 'ip': curl(ip)}\n"
"out['raw_ip'] = tcp(host, tport, socket.AF_INET)\n"
"u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
"try:\n"
"    u.sendto(b'aisb-doctor', (host, int(uport)))\n"
"    out['udp'] = 'the datagram sent'\n"
"except OSError as e:\n"
"    out['udp'] = 'error %d (%s)' % (e.errno, e.strerror)\n"
"out['ipv6'] = tcp(v6, 443, socket.AF_INET6)\n"
"print('" DOCTOR_PROBE_TAG "' + json.dumps(out), flush=True)\n";

/* The host's side of the probes: a TCP and a UDP socket on loopback. */
struct doctor_listen {
	int		 tcp;
	int		 udp;
	uint16_t	 tcp_port;
	uint16_t	 udp_port;
};

static int
listen_one(int type, uint16_t *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd;

	if ((fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) ==
	    -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    (type == SOCK_STREAM && listen(fd, 4) == -1) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

/* The allowlist's first name entry as a URL; adds example.com if none. */
static int
deep_target(struct policy *p, char *name, size_t nlen, char *url,
    size_t ulen, struct aisb_error *err)
{
	struct allow_entry e;
	struct policy_origin o;
	const struct allow_entry *n = NULL;
	size_t i;

	for (i = 0; i < p->allow.n && n == NULL; i++)
		if (p->allow.v[i].e.kind == ALLOW_KIND_NAME)
			n = &p->allow.v[i].e;
	if (n == NULL) {
		if (allow_entry_parse(DOCTOR_PROBE_NAME,
		    strlen(DOCTOR_PROBE_NAME), &e, err) == -1)
			return -1;
		policy_origin_set(&o, POLICY_SRC_BUILTIN, "doctor --deep");
		if (policy_allow_add(&p->allow, &e, &o, err) == -1)
			return -1;
		snprintf(name, nlen, "%s", DOCTOR_PROBE_NAME);
		snprintf(url, ulen, "https://%s/", DOCTOR_PROBE_NAME);
		return 0;
	}
	snprintf(name, nlen, "%s", n->name);
	/* Port 443 by CONNECT; any other port the entry names, forwarded. */
	if (n->port == 0 || (n->port == ALLOW_PORT_HTTPS && !n->notls))
		snprintf(url, ulen, "https://%s/", n->name);
	else
		snprintf(url, ulen, "http://%s:%u/", n->name, n->port);
	return 0;
}

/* Make the policy a probe's: no project, no home volume, no secrets. */
static int
deep_policy(struct launcher *L, const char *gate_host, const char *url,
    const struct doctor_listen *ls, const char *token,
    struct aisb_error *err)
{
	struct policy *p = &L->policy;
	size_t i;
	int rc;

	for (i = 0; i < p->env.n; i++) {
		free(p->env.v[i].name);
		if (p->env.v[i].value != NULL) {
			explicit_bzero(p->env.v[i].value,
			    strlen(p->env.v[i].value));
			free(p->env.v[i].value);
		}
	}
	p->env.n = 0;
	for (i = 0; i < p->mounts.n; i++) {
		free(p->mounts.v[i].src);
		free(p->mounts.v[i].dst);
	}
	p->mounts.n = 0;
	free(p->workdir);
	free(p->gate_name);
	free(p->proxy);
	p->workdir = strdup(AISB_HOME);
	p->gate_name = strdup("");
	p->proxy = strdup("none");
	if (p->workdir == NULL || p->gate_name == NULL || p->proxy == NULL)
		return aisb_err(err, "out of memory");
	p->net = POLICY_NET_ALLOW;
	p->gate = 1;
	p->cwd = 0;
	p->ephemeral_home = 1;
	p->keep = 0;
	p->tty = 0;
	p->interactive = 0;
	p->insecure_keep_root = 0;
	argv_free(&p->command);
	rc = argv_add(&p->command, "python3") | argv_add(&p->command, "-c") |
	    argv_add(&p->command, doctor_probe_py) |
	    argv_add(&p->command, gate_host) |
	    argv_addf(&p->command, "%u", ls->tcp_port) |
	    argv_addf(&p->command, "%u", ls->udp_port) |
	    argv_add(&p->command, url) |
	    argv_add(&p->command, "http://" DOCTOR_UNLISTED "/") |
	    argv_add(&p->command, "http://" DOCTOR_RAW_IP "/") |
	    argv_add(&p->command, DOCTOR_IPV6) |
	    argv_add(&p->command, token);
	return rc == 0 ? 0 : aisb_err(err, "out of memory");
}

/* The JSON line the probe printed, into the probes' results. */
static void
deep_read_probe(const char *text, struct doctor_facts *f)
{
	static const char *const keys[] = { "allowed", "unlisted", "raw_ip",
		"udp", "ipv6" };
	const char *line = strstr(text, DOCTOR_PROBE_TAG);
	const cJSON *j;
	cJSON *o;
	size_t i;

	if (line == NULL || (o = cJSON_Parse(line +
	    strlen(DOCTOR_PROBE_TAG))) == NULL)
		return;
	for (i = 0; i < DOCTOR_NPROBES; i++) {
		j = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
		f->probes[i].done = 1;
		f->probes[i].status = -1;
		snprintf(f->probes[i].result, sizeof(f->probes[i].result),
		    "%s", cJSON_IsString(j) ? j->valuestring : "nothing");
	}
	cJSON_Delete(o);
}

/* What the gate logged for host: the last record's decision. */
static void
deep_read_gate(const char *log, const char *host, struct doctor_probe *pr)
{
	const char *p = log, *nl;
	const cJSON *h, *d, *r, *s;
	cJSON *o;
	char *line;

	while (p != NULL && *p != '\0') {
		nl = strchr(p, '\n');
		line = strndup(p, nl ? (size_t)(nl - p) : strlen(p));
		p = nl ? nl + 1 : NULL;
		if (line == NULL || (o = cJSON_Parse(line)) == NULL) {
			free(line);
			continue;
		}
		free(line);
		h = cJSON_GetObjectItemCaseSensitive(o, "host");
		d = cJSON_GetObjectItemCaseSensitive(o, "decision");
		r = cJSON_GetObjectItemCaseSensitive(o, "reason");
		s = cJSON_GetObjectItemCaseSensitive(o, "status");
		if (cJSON_IsString(h) && strcmp(h->valuestring, host) == 0 &&
		    cJSON_IsString(d)) {
			snprintf(pr->decision, sizeof(pr->decision), "%s",
			    d->valuestring);
			snprintf(pr->reason, sizeof(pr->reason), "%s",
			    cJSON_IsString(r) ? r->valuestring : "");
			pr->status = cJSON_IsNumber(s) ? s->valueint : -1;
		}
		cJSON_Delete(o);
	}
}

/* The run log's record of the probe run (its token in the command) and
 * its gate's log. */
static void
deep_read_logs(const struct policy *p, const char *token,
    struct doctor_facts *f)
{
	struct sbuf b, g;
	char path[PATH_MAX];
	const char *rec = NULL, *s, *nl;
	const cJSON *gl;
	cJSON *o = NULL;
	char *line;

	sbuf_init(&b);
	sbuf_init(&g);
	snprintf(path, sizeof(path), "%s/runs.jsonl", p->state_dir);
	if (read_small(path, &b) == -1)
		goto out;
	for (s = b.p; s != NULL && (s = strstr(s, token)) != NULL; s++)
		rec = s;
	if (rec == NULL)
		goto out;
	while (rec > b.p && rec[-1] != '\n')
		rec--;
	nl = strchr(rec, '\n');
	if ((line = strndup(rec, nl ? (size_t)(nl - rec) : strlen(rec))) ==
	    NULL)
		goto out;
	o = cJSON_Parse(line);
	free(line);
	gl = cJSON_GetObjectItemCaseSensitive(o, "gate_log");
	if (!cJSON_IsString(gl) || read_small(gl->valuestring, &g) == -1)
		goto out;
	deep_read_gate(g.p, f->deep_name,
	    &f->probes[DOCTOR_PROBE_ALLOWED]);
	deep_read_gate(g.p, DOCTOR_UNLISTED,
	    &f->probes[DOCTOR_PROBE_UNLISTED]);
	deep_read_gate(g.p, DOCTOR_RAW_IP, &f->probes[DOCTOR_PROBE_RAW_IP]);
out:
	cJSON_Delete(o);
	sbuf_free(&b);
	sbuf_free(&g);
}

/* Run the probe sandbox with its output captured, then read the logs. */
static void
gather_deep(struct launcher *L, struct doctor_facts *f)
{
	struct policy *p = &L->policy;
	struct doctor_listen ls = { -1, -1, 0, 0 };
	struct policy_egress eg;
	struct aisb_error err;
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	struct sbuf out;
	char url[512], token[64], buf[64], path[PATH_MAX];
	int saved_rt = p->runtime, saved_be = p->backend;
	int saved = -1, tmp = -1, fd, rv;

	f->deep_ran = 1;
	sbuf_init(&out);
	memset(&err, 0, sizeof(err));
	snprintf(token, sizeof(token), "aisb-doctor-%ld-%d", (long)time(NULL),
	    (int)getpid());
	if (deep_target(p, f->deep_name, sizeof(f->deep_name), url,
	    sizeof(url), &err) == -1)
		goto fail;
	if (p->backend == POLICY_BACKEND_AUTO)
		p->backend = doctor_backend(f, p);
	if ((ls.tcp = listen_one(SOCK_STREAM, &ls.tcp_port)) == -1 ||
	    (ls.udp = listen_one(SOCK_DGRAM, &ls.udp_port)) == -1) {
		aisb_errno(&err, "a loopback socket for the probes");
		goto fail;
	}
	policy_egress(p, &eg);
	if (deep_policy(L, eg.addr[0] ? eg.addr : AISB_SLIRP_HOST, url, &ls,
	    token, &err) == -1)
		goto fail;
	snprintf(path, sizeof(path), "%s", p->state_dir);
	doctor_state_dir(p);
	if ((tmp = open(p->state_dir, O_TMPFILE | O_RDWR | O_CLOEXEC,
	    0600)) == -1) {
		aisb_errno(&err, "a temporary file in %s", path);
		goto fail;
	}
	fflush(stdout);
	if ((saved = dup(STDOUT_FILENO)) == -1 ||
	    dup2(tmp, STDOUT_FILENO) == -1) {
		aisb_errno(&err, "redirecting the probe's output");
		goto fail;
	}
	rv = run_start(L, &err);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	saved = -1;
	lseek(tmp, 0, SEEK_SET);
	{
		char chunk[8192];
		ssize_t n;

		while ((n = read(tmp, chunk, sizeof(chunk))) > 0 &&
		    out.len < DOCTOR_FILE_MAX)
			sbuf_add(&out, chunk, (size_t)n);
	}
	if (rv == -1)
		goto fail;
	deep_read_probe(out.p ? out.p : "", f);
	if (!f->probes[0].done) {
		snprintf(f->deep_error, sizeof(f->deep_error), "the sandbox "
		    "ended with exit status %d without the probe's report%s",
		    rv, rv == 77 ? " (77: the ruleset could not be installed)" :
		    rv == 78 ? " (78: the ruleset did not verify)" : "");
		goto done;
	}
	deep_read_logs(p, token, f);
	/* Did anything reach the host's sockets? */
	if ((fd = accept(ls.tcp, (struct sockaddr *)&sin, &slen)) != -1) {
		f->probes[DOCTOR_PROBE_RAW_IP].arrived = 1;
		close(fd);
	}
	if (recv(ls.udp, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		f->probes[DOCTOR_PROBE_UDP].arrived = 1;
	goto done;
fail:
	snprintf(f->deep_error, sizeof(f->deep_error), "%s", err.msg[0] ?
	    err.msg : "unknown error");
done:
	if (saved != -1) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	if (tmp != -1)
		close(tmp);
	if (ls.tcp != -1)
		close(ls.tcp);
	if (ls.udp != -1)
		close(ls.udp);
	sbuf_free(&out);
	p->runtime = saved_rt;
	p->backend = saved_be;
}

/* A policy flag after doctor's own (--deep --allow X), like args.c. */
static int
doctor_policy_flag(struct launcher *L, const struct argv *a, size_t *i,
    struct aisb_error *err)
{
	const char *w = a->v[*i], *eq = strchr(w, '='), *value;
	size_t len = eq ? (size_t)(eq - w) : strlen(w);
	const struct policy_key *k;
	struct policy_origin o;

	if ((k = policy_key_by_flag(w, len)) == NULL)
		return aisb_err(err, "doctor: %.*s: unknown flag (doctor takes "
		    "--deep and the policy's flags)",
		    (int)(len > 64 ? 64 : len), w);
	if (k->flag_value != NULL) {
		if (eq != NULL)
			return aisb_err(err, "%s: takes no argument", k->flag);
		value = k->flag_value;
	} else if (eq != NULL)
		value = eq + 1;
	else if (*i + 1 < a->n)
		value = a->v[++*i];
	else
		return aisb_err(err, "%s: missing argument %s", k->flag,
		    k->arg);
	policy_origin_set(&o, POLICY_SRC_FLAG, "%s", k->flag);
	return policy_set(&L->policy, k, value, &o, err);
}

/* doctor: gather, judge (the user's policy first), report. */
int
cmd_doctor_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	const struct argv *a = &L->policy.args;
	struct doctor_result res[DOCTOR_RESULTS_MAX];
	struct doctor_facts *f;
	size_t i, n;
	int deep = 0, fit;

	if (L->preview != PREVIEW_NONE || L->policy.dashdash) {
		L->exit_status = LAUNCHER_EXIT_USAGE;
		return aisb_err(err, "doctor: takes --deep and policy flags "
		    "only");
	}
	for (i = 0; i < a->n; i++) {
		if (strcmp(a->v[i], "--deep") == 0)
			deep = 1;
		else if (strncmp(a->v[i], "--", 2) == 0 &&
		    doctor_policy_flag(L, a, &i, err) == 0)
			continue;
		else {
			if (strncmp(a->v[i], "--", 2) != 0)
				aisb_err(err, "doctor: %.64s: unknown argument",
				    a->v[i]);
			L->exit_status = LAUNCHER_EXIT_USAGE;
			return -1;
		}
	}
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return aisb_err(err, "out of memory");
	f->now = (int64_t)time(NULL);
	gather_host(L, f);
	gather_podman(L, f);
	gather_git(L, f);
	gather_pin(L, f);
	gather_image(L, f, deep);
	/* The checks judge the user's policy, before --deep reshapes it. */
	n = check_some(f, &L->policy, 0, res, DOCTOR_RESULTS_MAX);
	if (deep) {
		gather_deep(L, f);
		n += check_some(f, &L->policy, 1, res + n,
		    DOCTOR_RESULTS_MAX - n);
	}
	sbuf_printf(out, "ai-sandbox doctor: uid %u (%s), %s%s, project %s\n",
	    f->uid, f->user, f->podman_runs ? "podman " : "no podman",
	    f->podman_runs ? f->podman_version : "", L->policy.project_dir);
	fit = doctor_render(res, n, out);
	free(f);
	if (fit == -1)
		return aisb_err(err, "out of memory");
	if (!fit)
		L->exit_status = LAUNCHER_EXIT_FAIL;
	return 0;
}
