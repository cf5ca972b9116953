/* The policy: key table, validation, precedence, lists, finish checks. */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "policy.h"

static char tmp[64];
static char home[PATH_MAX];
static char proj[PATH_MAX];

static void
setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/test-policy-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(proj, sizeof(proj), "%s/proj", tmp);
	cr_assert_eq(mkdir(home, 0700), 0);
	cr_assert_eq(mkdir(proj, 0700), 0);
}

static void
teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(policy, .init = setup, .fini = teardown);

static struct policy_host
host(void)
{
	struct policy_host h;

	memset(&h, 0, sizeof(h));
	h.home = home;
	h.project_dir = proj;
	return h;
}

static struct policy_origin
org(enum policy_source src, const char *where)
{
	struct policy_origin o;

	policy_origin_set(&o, src, "%s", where);
	return o;
}

/* Set key name from a flag; returns policy_set's result, err filled. */
static int
setflag(struct policy *p, const char *name, const char *v,
    struct aisb_error *err)
{
	const struct policy_key *k = policy_key_by_name(name);
	struct policy_origin o;

	cr_assert_not_null(k, "key %s", name);
	o = org(POLICY_SRC_FLAG, k->flag ? k->flag : name);
	return policy_set(p, k, v, &o, err);
}

static int
setsrc(struct policy *p, const char *name, const char *v,
    enum policy_source src, const char *where, struct aisb_error *err)
{
	const struct policy_key *k = policy_key_by_name(name);
	struct policy_origin o = org(src, where);

	cr_assert_not_null(k, "key %s", name);
	return policy_set(p, k, v, &o, err);
}

/* The printed value of one key ("" when absent). */
static char *
printed(const struct policy *p, const char *key)
{
	struct sbuf b;
	char *line, *next, *out = NULL;
	size_t kl = strlen(key);

	sbuf_init(&b);
	cr_assert_eq(policy_print(p, 0, &b), 0);
	for (line = b.p; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
			out = strdup(line + kl + 1);
			break;
		}
	}
	sbuf_free(&b);
	return out ? out : strdup("");
}

static void
assert_printed(const struct policy *p, const char *key, const char *want)
{
	char *got = printed(p, key);

	cr_assert_str_eq(got, want, "%s: got \"%s\", want \"%s\"", key, got,
	    want);
	free(got);
}

Test(policy, table_is_consistent)
{
	size_t i, j;
	char env[64];

	for (i = 0; i < PK__COUNT; i++) {
		const struct policy_key *k = &policy_keys[i];

		cr_assert_eq((size_t)k->id, i, "row %zu (%s) has id %d", i,
		    k->name, k->id);
		cr_assert_not_null(k->help);
		cr_assert_not_null(k->env, "%s has no variable", k->name);
		/* AISB_ + the key in upper case, '-' as '_'. */
		snprintf(env, sizeof(env), "AISB_");
		for (j = 0; k->name[j] != '\0'; j++)
			env[5 + j] = k->name[j] == '-' ? '_' :
			    (char)toupper((unsigned char)k->name[j]);
		env[5 + j] = '\0';
		cr_assert_str_eq(k->env, env);
		if (k->flag_value != NULL)
			cr_assert_eq(k->type, PT_BOOL, "%s", k->name);
		if (k->flag != NULL && k->flag_value == NULL)
			cr_assert_not_null(k->arg, "%s", k->name);
		for (j = 0; j < i; j++) {
			cr_assert_str_neq(k->name, policy_keys[j].name);
			if (k->flag && policy_keys[j].flag)
				cr_assert_str_neq(k->flag, policy_keys[j].flag);
		}
		cr_assert_eq(policy_key_by_name(k->name), k);
		if (k->flag)
			cr_assert_eq(policy_key_by_flag(k->flag,
			    strlen(k->flag)), k);
		cr_assert_eq(policy_key_by_env(k->env, strlen(k->env)), k);
	}
	cr_assert_null(policy_key_by_name("nosuch"));
	cr_assert_null(policy_key_by_flag("--mem", 5));
}

/* Each invalid value with the error the flag gives for it. */
static const struct {
	const char	*key;
	const char	*value;
	const char	*msg;
} bad_values[] = {
	{ "memory", "12q", "--memory: invalid size \"12q\"" },
	{ "memory", "", "--memory: invalid size \"\"" },
	{ "memory", "-1g", "--memory: invalid size \"-1g\"" },
	{ "memory", "1k", "--memory: size \"1k\" is out of range (6m to 1024t)" },
	{ "memory", "99999999999999999999g", "--memory: invalid size" },
	{ "memory", "4 g", "--memory: invalid size \"4 g\"" },
	{ "cpus", "0", "--cpus: \"0\" CPUs is out of range (0.01 to 1024)" },
	{ "cpus", "1.2345", "--cpus: invalid number of CPUs \"1.2345\"" },
	{ "cpus", "1.", "--cpus: invalid number of CPUs \"1.\"" },
	{ "cpus", "two", "--cpus: invalid number of CPUs \"two\"" },
	{ "cpus", "2000", "--cpus: \"2000\" CPUs is out of range" },
	{ "pids", "abc", "--pids: invalid number \"abc\"" },
	{ "pids", "4", "--pids: 4 is out of range (8 to 4194304)" },
	{ "pids", "+10", "--pids: invalid number \"+10\"" },
	{ "tmp-size", "0", "--tmp-size: size \"0\" is out of range" },
	{ "shm-size", "1x", "--shm-size: invalid size \"1x\"" },
	{ "home-size", "big", "--home-size: invalid size \"big\"" },
	{ "nofile", "1e3", "--nofile: invalid number \"1e3\"" },
	{ "nproc", "10", "--nproc: 10 is out of range (64 to 4194304)" },
	{ "net", "some", "--net: invalid value \"some\" (expected allow, none "
	  "or full)" },
	{ "net", "ALLOW", "--net: invalid value \"ALLOW\"" },
	{ "harness", "", "--harness: empty command" },
	{ "harness", "  \t ", "--harness: empty command" },
	{ "harness", "pi\x01", "--harness: contains a control character" },
	{ "workdir", "rel/dir", "--workdir: \"rel/dir\" is not an absolute "
	  "path" },
	{ "workdir", "/a:b", "--workdir: \"/a:b\": a path cannot contain ':'" },
	{ "workdir", "/a\nb", "--workdir: path \"/a\\x0ab\" contains a "
	  "control character" },
	{ "base-image", "-x", "--base-image: invalid image reference \"-x\"" },
	{ "base-image", "a b", "--base-image: invalid image reference" },
	{ "base-image", "debian:", "--base-image: invalid image reference" },
	{ "base-image", "a//b", "--base-image: invalid image reference" },
	{ "install", "Foo", "--install: invalid package name \"Foo\"" },
	{ "install", "a", "--install: invalid package name \"a\"" },
	{ "install", "foo;rm", "--install: invalid package name" },
	{ "install", "foo=", "--install: invalid package name \"foo=\"" },
	{ "install", "foo=1 2", "--install: invalid package name" },
	{ "proxy", "localhost", "--proxy: invalid HOST:PORT \"localhost\"" },
	{ "proxy", "localhost:0", "--proxy: invalid HOST:PORT" },
	{ "proxy", "localhost:70000", "--proxy: invalid HOST:PORT" },
	{ "proxy", "proxy.corp:3128", "--proxy: \"proxy.corp:3128\": HOST must "
	  "be 127.0.0.1, localhost or an IP address (the ruleset pins it)" },
	{ "proxy", "127.0.0.2:3128", "--proxy: \"127.0.0.2:3128\": of the "
	  "host's loopback only 127.0.0.1 is reachable from the sandbox" },
	{ "proxy", "[::1]:3128", "--proxy: \"[::1]:3128\": of the host's "
	  "loopback only 127.0.0.1" },
	{ "proxy", "1.2.3.4:08", "--proxy: invalid HOST:PORT" },
	{ "dns-server", "dns.google", "--dns-server: \"dns.google\" is not an "
	  "IP address" },
	{ "env", "1ABC", "--env: invalid variable name \"1ABC\"" },
	{ "env", "A-B=x", "--env: invalid variable name \"A-B\"" },
	{ "env", "=x", "--env: invalid variable name \"\"" },
	{ "env", "AISB_X", "--env: AISB_X: names starting AISB_ are reserved" },
	{ "env", "K=a\nb", "--env: K: the value contains a line break" },
	{ "env-file", "", "--env-file: invalid path \"\"" },
	{ "mount", "/a:b:c:ro", "--mount: \"/a:b:c:ro\": a path cannot contain "
	  "':' (podman's volume syntax splits on it); the form is "
	  "SRC[:DST][:ro], DST absolute" },
	{ "mount", "/a:b", "--mount: \"/a:b\": a path cannot contain ':'" },
	{ "mount", "/a:/b:/c", "--mount: \"/a:/b:/c\": a path cannot contain" },
	{ "mount", "/a:/b:xx", "--mount: \"/a:/b:xx\": a path cannot contain" },
	{ "mount", "", "--mount: \"\": an empty path or a control character" },
	{ "mount", ":/b", "--mount: \":/b\": an empty path" },
	{ "mount", "/a::ro", "--mount: \"/a::ro\": an empty path" },
	{ "allow", "exa mple.com", "--allow: invalid name \"exa mple.com\"" },
	{ "allow", "", "--allow: empty entry" },
	{ "allow", "a.com:0", "--allow: invalid port \"0\"" },
	{ "allow", "10.0.0.0/8:443", "--allow: " },
	{ "gate", "maybe", "--no-gate: invalid boolean \"maybe\" (expected yes "
	  "or no)" },
	{ "network-backend", "slirp", "network-backend: invalid value "
	  "\"slirp\" (expected auto, slirp4netns or pasta)" },
	{ "selinux", "permissive", "selinux: invalid value \"permissive\"" },
	{ "runtime", "kata", "runtime: invalid value \"kata\" (expected auto, "
	  "runc or crun)" },
	{ "podman", "my podman", "podman: invalid command \"my podman\"" },
	{ "podman", "bin/podman", "podman: \"bin/podman\": give a program name "
	  "or an absolute path" },
	{ "state-dir", "state", "state-dir: \"state\" is not an absolute path" },
};

Test(policy, every_validator_names_its_flag)
{
	struct aisb_error err;
	struct policy p;
	size_t i;

	for (i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		policy_init(&p);
		memset(&err, 0, sizeof(err));
		cr_assert_eq(setflag(&p, bad_values[i].key, bad_values[i].value,
		    &err), -1, "%s=\"%s\" accepted", bad_values[i].key,
		    bad_values[i].value);
		cr_assert(strncmp(err.msg, bad_values[i].msg,
		    strlen(bad_values[i].msg)) == 0,
		    "%s: got \"%s\", want \"%s...\"", bad_values[i].key,
		    err.msg, bad_values[i].msg);
		cr_assert_eq(p.origin[policy_key_by_name(bad_values[i].key)->id]
		    .src, POLICY_SRC_UNSET);
		policy_free(&p);
	}
}

Test(policy, values_parse_and_print_canonically)
{
	static const struct {
		const char	*key;
		const char	*in;
		const char	*out;
	} good[] = {
		{ "memory", "4G", "4g" }, { "memory", "1536m", "1536m" },
		{ "memory", "2048m", "2g" }, { "memory", "7000000", "7000000" },
		{ "memory", "1t", "1t" }, { "memory", "6291456b", "6m" },
		{ "cpus", "1.5", "1.5" }, { "cpus", "0.25", "0.25" },
		{ "cpus", "2.000", "2" }, { "cpus", "0.01", "0.01" },
		{ "pids", "8", "8" }, { "pids", "4194304", "4194304" },
		{ "net", "none", "none" }, { "gate", "off", "no" },
		{ "keep", "TRUE", "yes" }, { "keep", "0", "no" },
		{ "proxy", "localhost:3128", "127.0.0.1:3128" },
		{ "proxy", "[2001:db8::1]:8080", "[2001:db8::1]:8080" },
		{ "proxy", "192.0.2.7:3128", "192.0.2.7:3128" },
		{ "proxy", "none", "none" },
		{ "harness", "claude --verbose", "claude --verbose" },
		{ "base-image", "localhost/aisb-base:bookworm",
		  "localhost/aisb-base:bookworm" },
		{ "base-image", "debian@sha256:abcd", "debian@sha256:abcd" },
		{ "podman", "/usr/local/bin/podman", "/usr/local/bin/podman" },
		{ "selinux", "yes", "yes" }, { "runtime", "runc", "runc" },
	};
	struct aisb_error err;
	struct policy p;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		policy_init(&p);
		cr_assert_eq(setflag(&p, good[i].key, good[i].in, &err), 0,
		    "%s=%s: %s", good[i].key, good[i].in, err.msg);
		assert_printed(&p, good[i].key, good[i].out);
		policy_free(&p);
	}
}

/* Two valid values per scalar key, to see which source won. */
static const struct {
	const char	*key;
	const char	*a;
	const char	*b;
} scalars[] = {
	{ "harness", "claude", "codex" }, { "net", "none", "allow" },
	{ "gate", "no", "yes" }, { "proxy", "127.0.0.1:1", "127.0.0.1:2" },
	{ "cwd", "no", "yes" }, { "read-only", "yes", "no" },
	{ "ephemeral-home", "yes", "no" }, { "workdir", "/a", "/b" },
	{ "memory", "1g", "2g" }, { "cpus", "1", "3" }, { "pids", "100", "200" },
	{ "tmp-size", "2g", "3g" }, { "shm-size", "1g", "2g" },
	{ "home-size", "2g", "3g" }, { "nofile", "100", "200" },
	{ "nproc", "100", "200" }, { "base-image", "a/b", "c/d" },
	{ "keep", "yes", "no" }, { "tty", "no", "yes" },
	{ "interactive", "no", "yes" }, { "allow-unenforced", "yes", "no" },
	{ "insecure-keep-root", "yes", "no" }, { "extra-args", "-x", "-y" },
	{ "network-backend", "pasta", "slirp4netns" }, { "selinux", "yes", "no" },
	{ "runtime", "runc", "crun" }, { "podman", "p1", "p2" },
	{ "state-dir", "/s1", "/s2" }, { "cache-dir", "/c1", "/c2" },
	{ "config-dir", "/g1", "/g2" }, { "runtime-dir", "/r1", "/r2" },
};

static const enum policy_source ranks[] = {
	POLICY_SRC_USER, POLICY_SRC_PROJECT, POLICY_SRC_ENV, POLICY_SRC_FLAG,
};

/* Can source src set key k at all (env-only and user-only keys)? */
static int
can_set(const struct policy_key *k, enum policy_source src)
{
	if ((k->flags & PK_ENV_ONLY) && (src == POLICY_SRC_USER ||
	    src == POLICY_SRC_PROJECT))
		return 0;
	if ((k->flags & PK_USER_ONLY) && src == POLICY_SRC_PROJECT)
		return 0;
	return 1;
}

Test(policy, precedence_every_key_every_pair_of_sources)
{
	struct aisb_error err;
	struct policy p;
	size_t i, lo, hi, n = 0;
	char *got;

	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		const struct policy_key *k = policy_key_by_name(scalars[i].key);

		for (lo = 0; lo < 4; lo++) {
			for (hi = lo + 1; hi < 4; hi++) {
				if (!can_set(k, ranks[lo]) ||
				    !can_set(k, ranks[hi]))
					continue;
				/* Low first, then high: high wins. */
				policy_init(&p);
				cr_assert_eq(setsrc(&p, k->name, scalars[i].a,
				    ranks[lo], "lo", &err), 0, "%s", err.msg);
				cr_assert_eq(setsrc(&p, k->name, scalars[i].b,
				    ranks[hi], "hi", &err), 0, "%s", err.msg);
				got = printed(&p, k->name);
				cr_assert_str_eq(got, scalars[i].b, "%s", k->name);
				free(got);
				policy_free(&p);
				/* High first, then low: high still wins. */
				policy_init(&p);
				cr_assert_eq(setsrc(&p, k->name, scalars[i].b,
				    ranks[hi], "hi", &err), 0);
				cr_assert_eq(setsrc(&p, k->name, scalars[i].a,
				    ranks[lo], "lo", &err), 0);
				got = printed(&p, k->name);
				cr_assert_str_eq(got, scalars[i].b, "%s", k->name);
				free(got);
				cr_assert_eq(p.origin[k->id].src, ranks[hi]);
				cr_assert_str_eq(p.origin[k->id].where, "hi");
				policy_free(&p);
				n++;
			}
		}
	}
	cr_assert_gt(n, 140, "only %zu pairs", n);
}

Test(policy, same_source_later_wins)
{
	struct aisb_error err;
	struct policy p;

	policy_init(&p);
	cr_assert_eq(setflag(&p, "memory", "1g", &err), 0);
	cr_assert_eq(setflag(&p, "memory", "2g", &err), 0);
	assert_printed(&p, "memory", "2g");
	policy_free(&p);
}

Test(policy, defaults_never_beat_a_source)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;
	size_t i;

	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		const struct policy_key *k = policy_key_by_name(scalars[i].key);

		policy_init(&p);
		cr_assert_eq(setsrc(&p, k->name, scalars[i].a, k->flags &
		    PK_ENV_ONLY ? POLICY_SRC_ENV : POLICY_SRC_USER, "u", &err),
		    0, "%s: %s", k->name, err.msg);
		cr_assert_eq(policy_fill_defaults(&p, &h, &err), 0, "%s",
		    err.msg);
		assert_printed(&p, k->name, scalars[i].a);
		policy_free(&p);
	}
}

Test(policy, defaults_fill_everything_unset)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;
	char want[PATH_MAX * 2];
	size_t i;

	policy_init(&p);
	cr_assert_eq(policy_fill_defaults(&p, &h, &err), 0, "%s", err.msg);
	for (i = 0; i < PK__COUNT; i++)
		if (!(policy_keys[i].flags & PK_LIST))
			cr_assert_eq(p.origin[i].src, POLICY_SRC_BUILTIN, "%s",
			    policy_keys[i].name);
	assert_printed(&p, "memory", "4g");
	assert_printed(&p, "net", "allow");
	assert_printed(&p, "gate", "yes");
	assert_printed(&p, "harness", "pi");
	assert_printed(&p, "workdir", "/project");
	snprintf(want, sizeof(want), "%s/.local/state/ai-sandbox", home);
	assert_printed(&p, "state-dir", want);
	snprintf(want, sizeof(want), "%s/.config/ai-sandbox", home);
	assert_printed(&p, "config-dir", want);
	snprintf(want, sizeof(want), "%s/.cache/ai-sandbox", home);
	assert_printed(&p, "cache-dir", want);
	snprintf(want, sizeof(want), "%s/.local/state/ai-sandbox/run", home);
	assert_printed(&p, "runtime-dir", want);
	policy_free(&p);

	/* XDG directories and --no-cwd change the computed defaults. */
	policy_init(&p);
	h.xdg_state_home = "/xs";
	h.xdg_config_home = "/xc";
	h.xdg_cache_home = "/xk";
	h.xdg_runtime_dir = "/run/user/7";
	cr_assert_eq(setflag(&p, "cwd", "no", &err), 0);
	cr_assert_eq(policy_fill_defaults(&p, &h, &err), 0);
	assert_printed(&p, "workdir", "/home/sandbox");
	assert_printed(&p, "state-dir", "/xs/ai-sandbox");
	assert_printed(&p, "config-dir", "/xc/ai-sandbox");
	assert_printed(&p, "cache-dir", "/xk/ai-sandbox");
	assert_printed(&p, "runtime-dir", "/run/user/7/ai-sandbox");
	policy_free(&p);
}

Test(policy, lists_accumulate_across_sources)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;
	struct sbuf b;

	policy_init(&p);
	cr_assert_eq(setsrc(&p, "allow", "a.example", POLICY_SRC_USER, "u:1",
	    &err), 0, "%s", err.msg);
	cr_assert_eq(setsrc(&p, "allow", "b.example", POLICY_SRC_PROJECT,
	    "p:1", &err), 0);
	cr_assert_eq(setsrc(&p, "allow", "c.example", POLICY_SRC_ENV,
	    "AISB_ALLOW", &err), 0);
	cr_assert_eq(setsrc(&p, "allow", "d.example", POLICY_SRC_FLAG,
	    "--allow", &err), 0);
	/* A duplicate is kept once, with the higher origin. */
	cr_assert_eq(setsrc(&p, "allow", "A.EXAMPLE.", POLICY_SRC_FLAG,
	    "--allow", &err), 0);
	cr_assert_eq(setsrc(&p, "allow", "b.example", POLICY_SRC_USER, "u:2",
	    &err), 0);
	cr_assert_eq(setsrc(&p, "install", "git", POLICY_SRC_USER, "u:3",
	    &err), 0);
	cr_assert_eq(setsrc(&p, "install", "ripgrep", POLICY_SRC_FLAG,
	    "--install", &err), 0);
	cr_assert_eq(setsrc(&p, "install", "git", POLICY_SRC_PROJECT, "p:2",
	    &err), 0);
	cr_assert_eq(setsrc(&p, "dns-server", "9.9.9.9", POLICY_SRC_USER,
	    "u:4", &err), 0);
	cr_assert_eq(setsrc(&p, "dns-server", "1.1.1.1", POLICY_SRC_FLAG,
	    "--dns-server", &err), 0);
	cr_assert_eq(setsrc(&p, "env", "A", POLICY_SRC_USER, "u:5", &err), 0);
	cr_assert_eq(setsrc(&p, "env", "B", POLICY_SRC_ENV, "AISB_ENV", &err),
	    0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	sbuf_init(&b);
	cr_assert_eq(policy_print(&p, 1, &b), 0);
	cr_assert(strstr(b.p, "allow=a.example\t# flag --allow\n"
	    "allow=b.example\t# p:1\n"
	    "allow=c.example\t# env AISB_ALLOW\n"
	    "allow=d.example\t# flag --allow\n"
	    "allow-unenforced=no\t# builtin\n") != NULL, "%s", b.p);
	cr_assert(strstr(b.p, "dns-server=1.1.1.1\t# flag --dns-server\n"
	    "dns-server=9.9.9.9\t# u:4\n") != NULL, "%s", b.p);
	cr_assert(strstr(b.p, "env=A\t# u:5\nenv=B\t# env AISB_ENV\n") !=
	    NULL, "%s", b.p);
	cr_assert(strstr(b.p, "install=git\t# p:2\n"
	    "install=ripgrep\t# flag --install\n") != NULL, "%s", b.p);
	sbuf_free(&b);
	policy_free(&p);
}

Test(policy, print_is_sorted_and_has_every_key)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;
	struct sbuf b;
	char *prev = NULL, *line, *next, *eq;
	size_t i, nlines = 0;

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	sbuf_init(&b);
	cr_assert_eq(policy_print(&p, 0, &b), 0);
	for (i = 0; i < PK__COUNT; i++) {
		char needle[64];

		if (policy_keys[i].flags & PK_LIST)
			continue;
		snprintf(needle, sizeof(needle), "\n%s=", policy_keys[i].name);
		cr_assert(strstr(b.p, needle) != NULL || strncmp(b.p,
		    needle + 1, strlen(needle + 1)) == 0, "%s missing",
		    policy_keys[i].name);
	}
	for (line = b.p; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		cr_assert_not_null(next);
		*next++ = '\0';
		eq = strchr(line, '=');
		cr_assert_not_null(eq, "%s", line);
		if (prev != NULL) {
			size_t pl = strcspn(prev, "="), ll = strcspn(line, "=");
			int c = strncmp(prev, line, pl < ll ? pl : ll);

			cr_assert(c < 0 || (c == 0 && pl <= ll), "%s before %s",
			    prev, line);
		}
		prev = line;
		nlines++;
	}
	cr_assert_eq(nlines, PK__COUNT - 6 + 2);	/* lists empty; +2 */
	sbuf_free(&b);
	policy_free(&p);
}

Test(policy, empty_allowlist_is_refused_in_allow_mode)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;

	policy_init(&p);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert_str_eq(err.msg, "the allowlist is empty and net=allow: the "
	    "sandbox could reach nothing. Add --allow ENTRY (or lines in "
	    ".ai-sandbox/allow), or say --net none");
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "full", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	cr_assert_eq(p.warnings.n, 1);
	cr_assert_str_eq(p.warnings.v[0].s, "net=full (flag --net): the "
	    "sandbox's egress is not limited; anything it can read can leave");
	policy_free(&p);

	/* With a proxy of the user's own, the proxy decides. */
	policy_init(&p);
	cr_assert_eq(setflag(&p, "proxy", "127.0.0.1:3128", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	policy_free(&p);
}

Test(policy, cross_key_checks)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;

	policy_init(&p);
	cr_assert_eq(setflag(&p, "proxy", "127.0.0.1:3128", &err), 0);
	cr_assert_eq(setflag(&p, "gate", "no", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert_str_eq(err.msg, "proxy (flag --proxy) and gate=no "
	    "(--no-gate) exclude each other: choose one");
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "proxy", "127.0.0.1:3128", &err), 0);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert_str_eq(err.msg, "proxy (flag --proxy) needs net=allow, not "
	    "net=none");
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "proxy", "127.0.0.1:3128", &err), 0);
	cr_assert_eq(setflag(&p, "allow", "a.example", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0);
	cr_assert_eq(p.warnings.n, 1);
	cr_assert_str_eq(p.warnings.v[0].s, "proxy 127.0.0.1:3128 (flag "
	    "--proxy): ai-sandbox does not check the allowlist's names; the "
	    "proxy decides");
	policy_free(&p);
}

Test(policy, escape_hatches_warn)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setflag(&p, "allow-unenforced", "yes", &err), 0);
	cr_assert_eq(setsrc(&p, "insecure-keep-root", "yes", POLICY_SRC_USER,
	    "/c:3", &err), 0);
	cr_assert_eq(setsrc(&p, "extra-args", "--privileged  --x",
	    POLICY_SRC_ENV, "AISB_EXTRA_ARGS", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	cr_assert_eq(p.warnings.n, 3);
	cr_assert_str_eq(p.warnings.v[0].s, "allow-unenforced (flag "
	    "--allow-unenforced): the run goes on even when the egress ruleset "
	    "or a resource limit cannot be enforced");
	cr_assert_str_eq(p.warnings.v[1].s, "insecure-keep-root (/c:3): the "
	    "command runs as root inside the sandbox");
	cr_assert_str_eq(p.warnings.v[2].s, "AISB_EXTRA_ARGS: podman arguments "
	    "passed unchecked: --privileged  --x");
	cr_assert_eq(p.extra.n, 2);
	cr_assert_str_eq(p.extra.v[0], "--privileged");
	policy_free(&p);
}

Test(policy, project_file_cannot_widen_the_sandbox)
{
	static const char *const keys[] = { "mount", "env", "env-file",
	    "proxy", "dns-server", "allow-unenforced", "insecure-keep-root",
	    "podman" };
	static const char *const vals[] = { "/etc", "A", "/f", "127.0.0.1:1",
	    "1.1.1.1", "yes", "yes", "podman" };
	struct aisb_error err;
	struct policy p;
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		policy_init(&p);
		cr_assert_eq(setsrc(&p, keys[i], vals[i], POLICY_SRC_PROJECT,
		    "/p/.ai-sandbox/config:4", &err), -1, "%s", keys[i]);
		snprintf(want, sizeof(want), "/p/.ai-sandbox/config:4: %s: not "
		    "accepted in a project file (a project must not widen its "
		    "own sandbox)", keys[i]);
		cr_assert(strncmp(err.msg, want, strlen(want)) == 0, "%s",
		    err.msg);
		cr_assert_eq(setsrc(&p, keys[i], vals[i], POLICY_SRC_USER,
		    "/u:1", &err), 0, "%s: %s", keys[i], err.msg);
		policy_free(&p);
	}
	policy_init(&p);
	cr_assert_eq(setsrc(&p, "net", "full", POLICY_SRC_PROJECT, "/p:2",
	    &err), -1);
	cr_assert_str_eq(err.msg, "/p:2: net: \"full\" is not accepted in a "
	    "project file (a project must not widen its own sandbox)");
	cr_assert_eq(setsrc(&p, "net", "none", POLICY_SRC_PROJECT, "/p:2",
	    &err), 0);
	cr_assert_eq(setsrc(&p, "state-dir", "/s", POLICY_SRC_USER, "/u:9",
	    &err), -1);
	cr_assert_str_eq(err.msg, "/u:9: state-dir: can only be set with "
	    "AISB_STATE_DIR");
	policy_free(&p);
}

Test(policy, command_from_harness_args_dashdash_shell)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setsrc(&p, "harness", "claude --verbose", POLICY_SRC_USER,
	    "/u:1", &err), 0);
	argv_add(&p.args, "-p");
	argv_add(&p.args, "fix it");
	cr_assert_eq(policy_finish(&p, &h, &err), 0);
	cr_assert_eq(p.command.n, 4);
	cr_assert_str_eq(p.command.v[0], "claude");
	cr_assert_str_eq(p.command.v[1], "--verbose");
	cr_assert_str_eq(p.command.v[3], "fix it");
	cr_assert_null(p.command.v[4]);
	assert_printed(&p, "command", "claude --verbose -p 'fix it'");
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	p.dashdash = 1;
	argv_add(&p.args, "make");
	cr_assert_eq(policy_finish(&p, &h, &err), 0);
	cr_assert_eq(p.command.n, 1);
	cr_assert_str_eq(p.command.v[0], "make");
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	p.dashdash = 1;
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert_str_eq(err.msg, "--: no command after it");
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	p.shell = 1;
	cr_assert_eq(policy_finish(&p, &h, &err), 0);
	cr_assert_eq(p.command.n, 1);
	cr_assert_str_eq(p.command.v[0], "bash");
	policy_free(&p);
}

static void
touch(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(path, "w"));
	fclose(f);
}

Test(policy, mounts_resolve_and_collide)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;
	char want[PATH_MAX * 3];

	touch(home, ".gitconfig");
	touch(proj, "data");
	touch(tmp, "other");
	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setflag(&p, "mount", "~/.gitconfig:ro", &err), 0);
	cr_assert_eq(setflag(&p, "mount", "data:/srv/data", &err), 0);
	snprintf(want, sizeof(want), "%s/other", tmp);
	cr_assert_eq(setsrc(&p, "mount", want, POLICY_SRC_USER, "/u:1", &err),
	    0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	cr_assert_eq(p.mounts.n, 3);
	/* Sorted by destination. */
	snprintf(want, sizeof(want), "%s/.gitconfig", home);
	cr_assert_str_eq(p.mounts.v[0].src, want);
	cr_assert_str_eq(p.mounts.v[0].dst, "/home/sandbox/.gitconfig");
	cr_assert(p.mounts.v[0].ro);
	snprintf(want, sizeof(want), "%s/data", proj);
	cr_assert_str_eq(p.mounts.v[1].src, want);
	cr_assert_str_eq(p.mounts.v[1].dst, "/srv/data");
	cr_assert(!p.mounts.v[1].ro);
	snprintf(want, sizeof(want), "%s/other", tmp);
	cr_assert_str_eq(p.mounts.v[2].dst, want);
	policy_free(&p);

	/* Same destination: the higher source wins, equal ones collide. */
	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setsrc(&p, "mount", "/etc:/x", POLICY_SRC_USER, "/u:1",
	    &err), 0);
	cr_assert_eq(setflag(&p, "mount", "/usr:/x:ro", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	cr_assert_eq(p.mounts.n, 1);
	cr_assert_str_eq(p.mounts.v[0].src, "/usr");
	policy_free(&p);
	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setflag(&p, "mount", "/etc:/x", &err), 0);
	cr_assert_eq(setflag(&p, "mount", "/usr:/x", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert_str_eq(err.msg, "two mounts on /x (flag --mount and flag "
	    "--mount)");
	policy_free(&p);

	/* A missing source, a reserved destination. */
	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setflag(&p, "mount", "/nonexistent/x", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert_str_eq(err.msg, "flag --mount: /nonexistent/x: No such file "
	    "or directory");
	policy_free(&p);
	static const char *const reserved[] = { "/etc:/", "/etc:/proc/x",
	    "/etc:/dev", "/etc:/project", "/etc:/etc/aisb", "/etc:/tmp",
	    "/etc:/home/sandbox" };
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		policy_init(&p);
		cr_assert_eq(setflag(&p, "net", "none", &err), 0);
		cr_assert_eq(setflag(&p, "mount", reserved[i], &err), 0);
		cr_assert_eq(policy_finish(&p, &h, &err), -1, "%s",
		    reserved[i]);
		cr_assert(strstr(err.msg, "cannot mount over") != NULL, "%s",
		    err.msg);
		policy_free(&p);
	}
}

Test(policy, literal_env_from_a_flag_warns_without_the_value)
{
	struct aisb_error err;
	struct policy p;

	policy_init(&p);
	cr_assert_eq(setflag(&p, "env", "TOKEN=canary-7731", &err), 0);
	cr_assert_eq(p.warnings.n, 1);
	cr_assert_str_eq(p.warnings.v[0].s, "--env TOKEN=...: the value is "
	    "visible in ai-sandbox's own argv (ps, shell history); prefer "
	    "--env TOKEN or --env-file");
	cr_assert_eq(setsrc(&p, "env", "OTHER=x", POLICY_SRC_USER, "/u:1",
	    &err), 0);
	cr_assert_eq(p.warnings.n, 1);
	cr_assert_eq(p.env.n, 2);
	cr_assert_str_eq(p.env.v[0].value, "canary-7731");
	cr_assert_eq(p.env.v[0].kind, POLICY_ENV_LITERAL);
	/* The same name from a lower source does not replace it. */
	cr_assert_eq(setsrc(&p, "env", "TOKEN", POLICY_SRC_USER, "/u:2", &err),
	    0);
	cr_assert_str_eq(p.env.v[0].value, "canary-7731");
	/* A higher one does. */
	policy_free(&p);
}

Test(policy, sizes_and_cpus_text)
{
	char b[32];

	policy_size_text(4ULL << 30, b, sizeof(b));
	cr_assert_str_eq(b, "4g");
	policy_size_text(1536ULL << 20, b, sizeof(b));
	cr_assert_str_eq(b, "1536m");
	policy_size_text(1000, b, sizeof(b));
	cr_assert_str_eq(b, "1000");
	policy_size_text(0, b, sizeof(b));
	cr_assert_str_eq(b, "0");
	policy_cpus_text(1500, b, sizeof(b));
	cr_assert_str_eq(b, "1.5");
	policy_cpus_text(10, b, sizeof(b));
	cr_assert_str_eq(b, "0.01");
	policy_cpus_text(2000, b, sizeof(b));
	cr_assert_str_eq(b, "2");
}

Test(policy, origin_text)
{
	struct policy_origin o;
	char b[POLICY_ORIGIN_SIZE + 8];

	memset(&o, 0, sizeof(o));
	cr_assert_str_eq(policy_origin_text(&o, b, sizeof(b)), "unset");
	policy_origin_set(&o, POLICY_SRC_BUILTIN, "builtin");
	cr_assert_str_eq(policy_origin_text(&o, b, sizeof(b)), "builtin");
	policy_origin_set(&o, POLICY_SRC_USER, "/c:%d", 3);
	cr_assert_str_eq(policy_origin_text(&o, b, sizeof(b)), "/c:3");
	policy_origin_set(&o, POLICY_SRC_ENV, "AISB_NET");
	cr_assert_str_eq(policy_origin_text(&o, b, sizeof(b)), "env AISB_NET");
	policy_origin_set(&o, POLICY_SRC_FLAG, "--net");
	cr_assert_str_eq(policy_origin_text(&o, b, sizeof(b)), "flag --net");
}

Test(policy, over_long_value_refused)
{
	struct aisb_error err;
	struct policy p;
	char *big = malloc(POLICY_VALUE_MAX + 2);

	memset(big, 'a', POLICY_VALUE_MAX + 1);
	big[POLICY_VALUE_MAX + 1] = '\0';
	policy_init(&p);
	cr_assert_eq(setflag(&p, "harness", big, &err), -1);
	cr_assert_str_eq(err.msg, "--harness: value longer than 4096 bytes");
	policy_free(&p);
	free(big);
}

Test(policy, home_or_root_as_the_project_is_refused)
{
	struct policy_host h = host();
	struct aisb_error err;
	struct policy p;
	char want[PATH_MAX + 256];

	h.project_dir = home;
	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	snprintf(want, sizeof(want), "the working directory is %s: mounting it "
	    "would give the sandbox your whole home (keys, tokens, history). "
	    "Run from a project directory, or give --no-cwd", home);
	cr_assert_str_eq(err.msg, want);
	policy_free(&p);

	h.project_dir = "/";
	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), -1);
	cr_assert(strstr(err.msg, "the whole disk") != NULL, "%s", err.msg);
	policy_free(&p);

	policy_init(&p);
	cr_assert_eq(setflag(&p, "net", "none", &err), 0);
	cr_assert_eq(setflag(&p, "cwd", "no", &err), 0);
	cr_assert_eq(policy_finish(&p, &h, &err), 0, "%s", err.msg);
	policy_free(&p);
}
