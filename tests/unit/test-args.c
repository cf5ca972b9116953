/* The command line: the alias rule, flags, subcommands, and every source
 * together through launcher_load(). */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "fixture.h"
#include "launcher.h"
#include "policy.h"

#define tmp	fx_tmp
#define home	fx_home
#define proj	fx_proj

static void
setup(void)
{
	fx_setup("args");
}

TestSuite(args, .init = setup, .fini = fx_teardown);

#define load	fx_load

static void
assert_argv(const struct argv *a, const char *const *want)
{
	size_t i;

	for (i = 0; want[i] != NULL; i++) {
		cr_assert_lt(i, a->n, "argv too short at %zu", i);
		cr_assert_str_eq(a->v[i], want[i], "argv[%zu]", i);
	}
	cr_assert_eq(a->n, i, "argv has %zu words, want %zu", a->n, i);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, 0600), 0);
}

Test(args, alias_rule_first_unknown_flag_goes_to_the_harness)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--allow", "api.anthropic.com", "--env",
	    "ANTHROPIC_API_KEY", "--model", "sonnet"),
	    ENV("ANTHROPIC_API_KEY=k"), &err), 0, "%s", err.msg);
	assert_argv(&L.policy.args, ARGS("--model", "sonnet"));
	assert_argv(&L.policy.command, ARGS("pi", "--model", "sonnet"));
	cr_assert_eq(L.policy.allow.n, 1);
	cr_assert_eq(L.policy.env.n, 1);
	launcher_free(&L);
}

Test(args, alias_rule_first_positional_ends_the_flags)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--net", "none", "fix", "the", "--memory",
	    "1g"), NULL, &err), 0, "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("pi", "fix", "the", "--memory",
	    "1g"));
	cr_assert_eq(L.policy.memory, 4ULL << 30);
	cr_assert_eq(L.policy.origin[PK_MEMORY].src, POLICY_SRC_BUILTIN);
	launcher_free(&L);

	/* A lone "-" is a positional argument (stdin, by convention). */
	cr_assert_eq(load(&L, ARGS("--net", "none", "-", "--keep"), NULL,
	    &err), 0, "%s", err.msg);
	assert_argv(&L.policy.args, ARGS("-", "--keep"));
	cr_assert_eq(L.policy.keep, 0);
	launcher_free(&L);
}

Test(args, alias_rule_flags_after_an_unknown_one_are_the_harness_s)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--model", "x", "--keep"),
	    NULL, &err), 0, "%s", err.msg);
	assert_argv(&L.policy.args, ARGS("--model", "x", "--keep"));
	cr_assert_eq(L.policy.keep, 0);
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "-p", "hi", "--no-gate"),
	    NULL, &err), 0, "%s", err.msg);
	assert_argv(&L.policy.args, ARGS("-p", "hi", "--no-gate"));
	cr_assert_eq(L.policy.gate, 1);
	launcher_free(&L);
}

Test(args, dashdash_replaces_the_command)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--", "make", "test"), NULL,
	    &err), 0, "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("make", "test"));
	cr_assert(L.policy.dashdash);
	launcher_free(&L);

	/* After the first positional, "--" is the harness's. */
	cr_assert_eq(load(&L, ARGS("--net", "none", "x", "--", "y"), NULL,
	    &err), 0, "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("pi", "x", "--", "y"));
	launcher_free(&L);

	/* "--" then flags: they are the command's, not ours. */
	cr_assert_eq(load(&L, ARGS("--net", "none", "--", "--keep"), NULL,
	    &err), 0, "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("--keep"));
	cr_assert_eq(L.policy.keep, 0);
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--: no command after it");
	launcher_free(&L);
}

Test(args, strict_args_makes_an_unknown_flag_an_error)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--strict-args", "--net", "none", "--model",
	    "x"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--model: unknown flag (with --strict-args, "
	    "give the harness's flags after --)");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "-p"),
	    ENV("AISB_STRICT_ARGS=yes"), &err), -1);
	cr_assert_str_eq(err.msg, "-p: unknown flag (with --strict-args, give "
	    "the harness's flags after --)");
	launcher_free(&L);

	/* The flag is named, not its value. */
	cr_assert_eq(load(&L, ARGS("--strict-args", "--token=s3cret"), NULL,
	    &err), -1);
	cr_assert(strstr(err.msg, "s3cret") == NULL, "%s", err.msg);
	cr_assert(strncmp(err.msg, "--token: unknown flag", 21) == 0);
	launcher_free(&L);

	/* Positionals and "--" still work. */
	cr_assert_eq(load(&L, ARGS("--strict-args", "--net", "none", "hello",
	    "--model"), NULL, &err), 0, "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("pi", "hello", "--model"));
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "x"),
	    ENV("AISB_STRICT_ARGS=perhaps"), &err), -1);
	cr_assert_str_eq(err.msg, "AISB_STRICT_ARGS: invalid boolean "
	    "\"perhaps\" (expected yes or no)");
	launcher_free(&L);
}

Test(args, shell_runs_bash)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--shell", "--net", "none"), NULL, &err), 0,
	    "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("bash"));
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--shell", "-c", "ls"),
	    NULL, &err), 0, "%s", err.msg);
	assert_argv(&L.policy.command, ARGS("bash", "-c", "ls"));
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--shell", "--", "make"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--shell: cannot be combined with -- (both "
	    "give the command)");
	launcher_free(&L);
}

Test(args, subcommand_in_first_position)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("help"), NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.cmd->name, "help");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("version"), NULL, &err), 0);
	cr_assert_str_eq(L.cmd->name, "version");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("version", "x"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "version: takes no arguments");
	launcher_free(&L);

	/* Only the first position: later it is the harness's. */
	cr_assert_eq(load(&L, ARGS("run", "--net", "none", "help"), NULL,
	    &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.cmd->name, "run");
	assert_argv(&L.policy.command, ARGS("pi", "help"));
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "version"), NULL, &err), 0);
	cr_assert_str_eq(L.cmd->name, "run");
	launcher_free(&L);

	/* --help wins over what follows it. */
	cr_assert_eq(load(&L, ARGS("--help", "--memory", "12q"), NULL, &err),
	    0, "%s", err.msg);
	cr_assert_str_eq(L.cmd->name, "help");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--version"), NULL, &err), 0);
	cr_assert_str_eq(L.cmd->name, "version");
	launcher_free(&L);
}

Test(args, flag_forms_and_their_errors)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--memory=8g", "--net=none", "--no-tty"),
	    NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.memory, 8ULL << 30);
	cr_assert_eq(L.policy.tty, 0);
	cr_assert_str_eq(L.policy.origin[PK_MEMORY].where, "--memory");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--memory"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--memory: missing argument SIZE");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--keep=yes"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--keep: takes no argument");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--dry-run=1"), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--dry-run: takes no argument");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--dry-run", "--print-policy"), NULL, &err),
	    -1);
	cr_assert_str_eq(err.msg, "--print-policy: cannot be combined with "
	    "--dry-run");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--origin", "--net", "none"), NULL, &err),
	    -1);
	cr_assert_str_eq(err.msg, "--origin: only with --print-policy");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--print-policy", "--origin", "--net",
	    "none"), NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(L.preview, PREVIEW_POLICY);
	cr_assert(L.origin);
	launcher_free(&L);

	/* An argument that looks like a flag is still the argument. */
	cr_assert_eq(load(&L, ARGS("--harness", "--verbose", "--net", "none"),
	    NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.policy.harness, "--verbose");
	launcher_free(&L);
}

/* One bad value for each flag that takes an argument. */
static const struct {
	const char	*flag;
	const char	*value;
	const char	*msg;
} bad_flags[] = {
	{ "--harness", "", "--harness: empty command" },
	{ "--net", "open", "--net: invalid value \"open\" (expected allow, "
	  "none or full)" },
	{ "--allow", "", "--allow: empty entry" },
	{ "--proxy", "x", "--proxy: invalid HOST:PORT \"x\"" },
	{ "--dns-server", "one", "--dns-server: \"one\" is not an IP address" },
	{ "--env", "9X", "--env: invalid variable name \"9X\"" },
	{ "--env-file", "", "--env-file: invalid path \"\"" },
	{ "--mount", "/a:b:c", "--mount: \"/a:b:c\": a path cannot contain ':' "
	  "(podman's volume syntax splits on it); the form is SRC[:DST][:ro], "
	  "DST absolute" },
	{ "--workdir", "work", "--workdir: \"work\" is not an absolute path" },
	{ "--memory", "12q", "--memory: invalid size \"12q\"" },
	{ "--cpus", "x", "--cpus: invalid number of CPUs \"x\"" },
	{ "--pids", "1e3", "--pids: invalid number \"1e3\"" },
	{ "--tmp-size", "1q", "--tmp-size: invalid size \"1q\"" },
	{ "--shm-size", "q", "--shm-size: invalid size \"q\"" },
	{ "--home-size", "0", "--home-size: size \"0\" is out of range (1m to "
	  "1024t)" },
	{ "--nofile", "-1", "--nofile: invalid number \"-1\"" },
	{ "--nproc", "1", "--nproc: 1 is out of range (64 to 4194304)" },
	{ "--install", "Git", "--install: invalid package name \"Git\"" },
	{ "--base-image", "-i", "--base-image: invalid image reference \"-i\"" },
	{ "--ca-file", "ca.pem", "--ca-file: \"ca.pem\" is not an absolute "
	  "path" },
	{ "--gate", "-x", "--gate: \"-x\" is not a name (letters and digits, "
	  "then also _ . -; at most 63)" },
};

Test(args, every_flag_validates_and_names_itself)
{
	struct launcher L;
	struct aisb_error err;
	size_t i, j;

	for (i = 0; i < PK__COUNT; i++) {
		const struct policy_key *k = &policy_keys[i];

		if (k->flag == NULL || k->flag_value != NULL)
			continue;
		for (j = 0; j < sizeof(bad_flags) / sizeof(bad_flags[0]); j++)
			if (strcmp(bad_flags[j].flag, k->flag) == 0)
				break;
		cr_assert_lt(j, sizeof(bad_flags) / sizeof(bad_flags[0]),
		    "%s has no bad-value test", k->flag);
	}
	for (j = 0; j < sizeof(bad_flags) / sizeof(bad_flags[0]); j++) {
		cr_assert_eq(load(&L, ARGS(bad_flags[j].flag,
		    bad_flags[j].value, "--net", "none"), NULL, &err), -1,
		    "%s %s", bad_flags[j].flag, bad_flags[j].value);
		cr_assert_str_eq(err.msg, bad_flags[j].msg);
		launcher_free(&L);
	}
}

Test(args, every_argument_less_flag_sets_its_key)
{
	struct launcher L;
	struct aisb_error err;
	size_t i;
	int want;

	for (i = 0; i < PK__COUNT; i++) {
		const struct policy_key *k = &policy_keys[i];

		if (k->flag_value == NULL)
			continue;
		cr_assert_eq(load(&L, ARGS(k->flag, "--net", "none"), NULL,
		    &err), 0, "%s: %s", k->flag, err.msg);
		want = strcmp(k->flag_value, "yes") == 0;
		cr_assert_eq(*(int *)((char *)&L.policy + k->off), want, "%s",
		    k->flag);
		cr_assert_eq(L.policy.origin[k->id].src, POLICY_SRC_FLAG);
		launcher_free(&L);
	}
}

/* Every source sets memory; the highest present wins. */
Test(args, precedence_through_every_source)
{
	struct launcher L;
	struct aisb_error err;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/.config", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/.config/ai-sandbox", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "config", "memory = 1g\nnet = none\n");

	cr_assert_eq(load(&L, NULL, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.memory, 1ULL << 30);
	cr_assert_eq(L.policy.origin[PK_MEMORY].src, POLICY_SRC_USER);
	launcher_free(&L);

	snprintf(dir, sizeof(dir), "%s/.ai-sandbox", proj);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "config", "memory = 2g\n");
	cr_assert_eq(load(&L, NULL, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.memory, 2ULL << 30);
	cr_assert_eq(L.policy.origin[PK_MEMORY].src, POLICY_SRC_PROJECT);
	launcher_free(&L);

	cr_assert_eq(load(&L, NULL, ENV("AISB_MEMORY=3g"), &err), 0, "%s",
	    err.msg);
	cr_assert_eq(L.policy.memory, 3ULL << 30);
	cr_assert_eq(L.policy.origin[PK_MEMORY].src, POLICY_SRC_ENV);
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--memory", "5g"), ENV("AISB_MEMORY=3g"),
	    &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.memory, 5ULL << 30);
	cr_assert_eq(L.policy.origin[PK_MEMORY].src, POLICY_SRC_FLAG);
	launcher_free(&L);

	/* An empty variable is unset. */
	cr_assert_eq(load(&L, NULL, ENV("AISB_MEMORY="), &err), 0, "%s",
	    err.msg);
	cr_assert_eq(L.policy.memory, 2ULL << 30);
	launcher_free(&L);
}

Test(args, config_dir_from_aisb_config_dir_and_xdg)
{
	struct launcher L;
	struct aisb_error err;
	char dir[256], env1[300], env2[300];

	snprintf(dir, sizeof(dir), "%s/cfg", tmp);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "config", "pids = 99\nnet = none\n");
	snprintf(env1, sizeof(env1), "AISB_CONFIG_DIR=%s", dir);
	cr_assert_eq(load(&L, NULL, ENV(env1), &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.pids, 99);
	cr_assert_str_eq(L.policy.config_dir, dir);
	launcher_free(&L);

	snprintf(dir, sizeof(dir), "%s/xdg", tmp);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/xdg/ai-sandbox", tmp);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "config", "pids = 77\nnet = none\n");
	snprintf(env2, sizeof(env2), "XDG_CONFIG_HOME=%s/xdg", tmp);
	cr_assert_eq(load(&L, NULL, ENV(env2), &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.pids, 77);
	launcher_free(&L);

	/* A relative XDG_CONFIG_HOME is ignored (the XDG spec). */
	cr_assert_eq(load(&L, ARGS("--net", "none"), ENV("XDG_CONFIG_HOME=xdg"),
	    &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.pids, 1024);
	launcher_free(&L);
}

Test(args, lists_accumulate_through_every_source)
{
	struct launcher L;
	struct aisb_error err;
	char dir[256], want[300];
	size_t i;

	snprintf(dir, sizeof(dir), "%s/.config", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/.config/ai-sandbox", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "config", "allow = user.example\ninstall = git\n");
	snprintf(dir, sizeof(dir), "%s/.ai-sandbox", proj);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "config", "allow = project.example\n");
	write_file(dir, "allow", "# the project's allowlist\n"
	    "file.example\n\n192.0.2.0/24\n");
	cr_assert_eq(load(&L, ARGS("--allow", "flag.example", "--install",
	    "ripgrep"), ENV("AISB_ALLOW=env1.example  env2.example:8443",
	    "AISB_INSTALL=jq"), &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.allow.n, 7);
	static const char *const sorted[] = { "192.0.2.0/24", "env1.example",
	    "env2.example:8443", "file.example", "flag.example",
	    "project.example", "user.example" };
	for (i = 0; i < 7; i++)
		cr_assert_str_eq(L.policy.allow.v[i].e.text, sorted[i]);
	cr_assert_eq(L.policy.allow.v[0].origin.src, POLICY_SRC_PROJECT);
	snprintf(want, sizeof(want), "%s/.ai-sandbox/allow:4", L.host.project_dir);
	cr_assert_str_eq(L.policy.allow.v[0].origin.where, want);
	cr_assert_str_eq(L.policy.allow.v[1].origin.where, "AISB_ALLOW");
	cr_assert_eq(L.policy.install.n, 3);
	launcher_free(&L);
}

Test(args, unknown_aisb_variable_warns)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--net", "none"), ENV("AISB_MEMROY=1g"),
	    &err), 0, "%s", err.msg);
	cr_assert_eq(L.policy.warnings.n, 1);
	cr_assert_str_eq(L.policy.warnings.v[0].s, "AISB_MEMROY: not a "
	    "variable ai-sandbox knows; ignored");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none"), ENV("AISB_PIDS=lots"),
	    &err), -1);
	cr_assert_str_eq(err.msg, "AISB_PIDS: invalid number \"lots\"");
	launcher_free(&L);
}

Test(args, bad_project_file_stops_the_run)
{
	struct launcher L;
	struct aisb_error err;
	char dir[256], want[300];

	snprintf(dir, sizeof(dir), "%s/.ai-sandbox", proj);
	cr_assert_eq(mkdir(dir, 0700), 0);
	write_file(dir, "allow", "ok.example\nnot a name\n");
	cr_assert_eq(load(&L, ARGS("--net", "none"), NULL, &err), -1);
	snprintf(want, sizeof(want), "%s/.ai-sandbox/allow:2: ",
	    L.host.project_dir);
	cr_assert(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	launcher_free(&L);

	write_file(dir, "allow", "ok.example\n");
	snprintf(want, sizeof(want), "%s/allow", dir);
	cr_assert_eq(chmod(want, 0666), 0);
	cr_assert_eq(load(&L, ARGS("--net", "none"), NULL, &err), -1);
	cr_assert(strstr(err.msg, "writable") != NULL, "%s", err.msg);
	launcher_free(&L);
}

Test(args, help_documents_every_flag_key_and_variable)
{
	static const char *const extra[] = { "--help", "--version",
	    "--strict-args", "--shell", "--print-policy", "--origin",
	    "--dry-run", "--print-entrypoint", "AISB_STRICT_ARGS", "--",
	    "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
	    "XDG_RUNTIME_DIR", ".ai-sandbox/config", ".ai-sandbox/allow",
	    "TERM, LANG, LC_ALL, LC_CTYPE and TZ", "Exit status", "run",
	    "help", "version", NULL };
	struct sbuf b;
	char needle[128], *line, *next;
	size_t i;

	sbuf_init(&b);
	cr_assert_eq(help_render(&b), 0);
	for (i = 0; i < PK__COUNT; i++) {
		const struct policy_key *k = &policy_keys[i];

		if (k->flag != NULL) {
			snprintf(needle, sizeof(needle), "\n  %s%s%s\n", k->flag,
			    k->arg && !k->flag_value ? " " : "",
			    k->arg && !k->flag_value ? k->arg : "");
			cr_assert(strstr(b.p, needle) != NULL, "no %s", k->flag);
		} else {
			snprintf(needle, sizeof(needle), "\n  %s (no flag)\n",
			    k->name);
			cr_assert(strstr(b.p, needle) != NULL, "no %s", k->name);
		}
		if (!(k->flags & PK_ENV_ONLY)) {
			snprintf(needle, sizeof(needle), "Key: %s = ", k->name);
			cr_assert(strstr(b.p, needle) != NULL, "no key %s",
			    k->name);
		}
		cr_assert(strstr(b.p, k->env) != NULL, "no %s", k->env);
		if (k->def != NULL && k->def[0] != '\0' &&
		    strchr(k->def, '/') == NULL) {
			snprintf(needle, sizeof(needle), "Default: %s.", k->def);
			cr_assert(strstr(b.p, needle) != NULL, "no default of %s",
			    k->name);
		}
	}
	for (i = 0; extra[i] != NULL; i++)
		cr_assert(strstr(b.p, extra[i]) != NULL, "no %s", extra[i]);
	for (line = b.p; *line != '\0'; line = next + 1) {
		next = strchr(line, '\n');
		cr_assert_not_null(next);
		cr_assert_leq(next - line, 79, "line too long: %.*s",
		    (int)(next - line), line);
	}
	sbuf_free(&b);
}
