/* The sandbox's environment: --env from the launcher's environment,
 * literals, env files, inheritance, and secrets kept out of previews. */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "fixture.h"
#include "launcher.h"
#include "policy.h"

#define CANARY	"canary-9f3c1e7a"

#define tmp	fx_tmp
#define home	fx_home
#define proj	fx_proj

static void
setup(void)
{
	fx_setup("lenv");
}

TestSuite(env, .init = setup, .fini = fx_teardown);

#define load	fx_load

static const char *
write_file(const char *name, const char *text, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

static const struct policy_env *
find(const struct launcher *L, const char *name)
{
	size_t i;

	for (i = 0; i < L->policy.env.n; i++)
		if (strcmp(L->policy.env.v[i].name, name) == 0)
			return &L->policy.env.v[i];
	return NULL;
}

Test(env, named_variable_takes_its_value)
{
	struct launcher L;
	struct aisb_error err;
	const struct policy_env *e;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "API_KEY"),
	    ENV("API_KEY=" CANARY), &err), 0, "%s", err.msg);
	cr_assert_not_null(e = find(&L, "API_KEY"));
	cr_assert_str_eq(e->value, CANARY);
	cr_assert_eq(e->kind, POLICY_ENV_HOST);
	cr_assert_eq(L.policy.warnings.n, 0);
	launcher_free(&L);
}

Test(env, unset_or_empty_is_an_error)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "API_KEY"), NULL,
	    &err), -1);
	cr_assert_str_eq(err.msg, "--env: API_KEY is not set in the "
	    "environment");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "API_KEY"),
	    ENV("API_KEY="), &err), -1);
	cr_assert_str_eq(err.msg, "--env: API_KEY is empty in the environment");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none"), ENV("AISB_ENV=A B",
	    "A=1"), &err), -1);
	cr_assert_str_eq(err.msg, "AISB_ENV: B is not set in the environment");
	launcher_free(&L);
}

Test(env, literal_warns_and_keeps_the_value)
{
	struct launcher L;
	struct aisb_error err;
	const struct policy_env *e;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "K=" CANARY),
	    NULL, &err), 0, "%s", err.msg);
	cr_assert_not_null(e = find(&L, "K"));
	cr_assert_str_eq(e->value, CANARY);
	cr_assert_eq(e->kind, POLICY_ENV_LITERAL);
	cr_assert_eq(L.policy.warnings.n, 1);
	cr_assert_str_eq(L.policy.warnings.v[0].s, "--env K=...: the value is "
	    "visible in ai-sandbox's own argv (ps, shell history); prefer "
	    "--env K or --env-file");
	launcher_free(&L);

	/* From AISB_ENV it is not in argv: no warning. */
	cr_assert_eq(load(&L, ARGS("--net", "none"), ENV("AISB_ENV=K=v"), &err),
	    0, "%s", err.msg);
	cr_assert_eq(L.policy.warnings.n, 0);
	cr_assert_str_eq(find(&L, "K")->value, "v");
	launcher_free(&L);
}

Test(env, env_file_0600_is_read)
{
	struct launcher L;
	struct aisb_error err;
	const struct policy_env *e;
	const char *path = write_file("secrets", "# keys\n\nA=1\r\n"
	    "B=" CANARY " with spaces=and equals\n  C=\n", 0600);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), 0, "%s", err.msg);
	cr_assert_not_null(e = find(&L, "A"));
	cr_assert_str_eq(e->value, "1");
	cr_assert_eq(e->kind, POLICY_ENV_FILE);
	cr_assert_not_null(e = find(&L, "B"));
	cr_assert_str_eq(e->value, CANARY " with spaces=and equals");
	cr_assert(strstr(e->origin.where, "/secrets:4") != NULL, "%s",
	    e->origin.where);
	cr_assert_eq(e->origin.src, POLICY_SRC_FLAG);
	cr_assert_not_null(e = find(&L, "C"));
	cr_assert_str_eq(e->value, "");
	launcher_free(&L);
}

Test(env, env_file_readable_by_others_is_refused)
{
	struct launcher L;
	struct aisb_error err;
	const char *path = write_file("secrets", "A=1\n", 0640);
	char want[512];

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s: mode 0640 lets others read or write "
	    "it; an env file must be 0600 (chmod 600 %s)", path, path);
	cr_assert_str_eq(err.msg, want);
	launcher_free(&L);

	path = write_file("secrets", "A=1\n", 0604);
	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), -1);
	cr_assert(strstr(err.msg, "mode 0604") != NULL, "%s", err.msg);
	launcher_free(&L);

	path = write_file("secrets", "A=1\n", 0400);
	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), 0, "%s", err.msg);
	launcher_free(&L);
}

Test(env, env_file_of_another_owner_is_refused)
{
	struct launcher L;
	struct aisb_error err;
	const char *path = write_file("secrets", "A=1\n", 0600);
	char want[512];

	if (geteuid() != 0)
		cr_skip_test("needs root to chown");
	cr_assert_eq(chown(path, 4242, 4242), 0);
	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s: owned by uid 4242, not by you (uid "
	    "0)", path);
	cr_assert_str_eq(err.msg, want);
	launcher_free(&L);
}

Test(env, env_file_errors_never_show_a_value)
{
	struct launcher L;
	struct aisb_error err;
	const char *path;
	char want[512];

	path = write_file("secrets", "A=1\n" CANARY "\n", 0600);
	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s:2: expected NAME=VALUE", path);
	cr_assert_str_eq(err.msg, want);
	launcher_free(&L);

	path = write_file("secrets", "export K=" CANARY "\n", 0600);
	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s:1: invalid variable name \"export "
	    "K\"", path);
	cr_assert_str_eq(err.msg, want);
	cr_assert(strstr(err.msg, CANARY) == NULL);
	launcher_free(&L);

	path = write_file("secrets", "AISB_X=1\n", 0600);
	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path), NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s:1: AISB_X: names starting AISB_ are "
	    "reserved for ai-sandbox", path);
	cr_assert_str_eq(err.msg, want);
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", "nope"), NULL,
	    &err), -1);
	snprintf(want, sizeof(want), "%s/nope: No such file or directory",
	    L.host.project_dir);
	cr_assert_str_eq(err.msg, want);
	launcher_free(&L);
}

Test(env, explicit_env_beats_env_file_at_the_same_level)
{
	struct launcher L;
	struct aisb_error err;
	const char *path = write_file("secrets", "A=from-file\nB=b\n", 0600);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env-file", path,
	    "--env", "A"), ENV("A=from-env"), &err), 0, "%s", err.msg);
	cr_assert_str_eq(find(&L, "A")->value, "from-env");
	cr_assert_str_eq(find(&L, "B")->value, "b");
	launcher_free(&L);
}

Test(env, only_the_locale_and_terminal_are_inherited)
{
	struct launcher L;
	struct aisb_error err;
	struct argv names;
	struct sbuf b;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "TERM=dumb"),
	    ENV("TERM=xterm", "LANG=C.UTF-8", "LC_ALL=", "TZ=UTC",
	    "PATH=/bin", "SSH_AUTH_SOCK=/s", "AWS_SECRET_ACCESS_KEY=x",
	    "LC_CTYPE=C"), &err), 0, "%s", err.msg);
	argv_init(&names);
	cr_assert_eq(env_names(&L, &names), 0);
	cr_assert_eq(names.n, 4);
	cr_assert_str_eq(names.v[0], "LANG");
	cr_assert_str_eq(names.v[1], "LC_CTYPE");
	cr_assert_str_eq(names.v[2], "TERM");
	cr_assert_str_eq(names.v[3], "TZ");
	argv_free(&names);
	sbuf_init(&b);
	cr_assert_eq(env_file_render(&L, &b, &err), 0);
	cr_assert_str_eq(b.p, "TERM=dumb\nLANG=C.UTF-8\nLC_CTYPE=C\nTZ=UTC\n");
	sbuf_free(&b);
	launcher_free(&L);
}

/* Every preview a run can print, concatenated. */
static void
all_previews(struct launcher *L, struct sbuf *out)
{
	struct aisb_error err;
	size_t i;

	for (i = 0; i < L->policy.warnings.n; i++) {
		sbuf_adds(out, L->policy.warnings.v[i].s);
		sbuf_adds(out, "\n");
	}
	cr_assert_eq(policy_print(&L->policy, 0, out), 0);
	cr_assert_eq(policy_print(&L->policy, 1, out), 0);
	cr_assert_eq(cmd_run_dry_run(L, out, &err), 0, "%s", err.msg);
	L->preview = PREVIEW_ENTRYPOINT;
	cr_assert_eq(cmd_run_exec(L, out, &err), 0, "%s", err.msg);
}

Test(env, canary_never_reaches_a_preview)
{
	struct launcher L;
	struct aisb_error err;
	struct sbuf out, file;
	const char *path = write_file("secrets", "FILE_SECRET=" CANARY "-f\n",
	    0600);
	char cfgdir[256], cfg[300], envcfg[300];
	FILE *f;

	snprintf(cfgdir, sizeof(cfgdir), "%s/cfg", tmp);
	cr_assert_eq(mkdir(cfgdir, 0700), 0);
	snprintf(cfg, sizeof(cfg), "%s/config", cfgdir);
	cr_assert_not_null(f = fopen(cfg, "w"));
	fputs("env = CFG_SECRET=" CANARY "-c\n", f);
	fclose(f);
	snprintf(envcfg, sizeof(envcfg), "AISB_CONFIG_DIR=%s", cfgdir);
	cr_assert_eq(load(&L, ARGS("--allow", "api.example.com", "--allow",
	    "192.0.2.1", "--env", "HOST_SECRET", "--env",
	    "LIT_SECRET=" CANARY "-l", "--env-file", path, "--dry-run"),
	    ENV("HOST_SECRET=" CANARY "-h", envcfg,
	    "AISB_ENV=ENV_SECRET=" CANARY "-e", "TERM=" CANARY "-t"), &err), 0,
	    "%s", err.msg);
	sbuf_init(&out);
	all_previews(&L, &out);
	cr_assert(strstr(out.p, CANARY) == NULL, "canary in:\n%s", out.p);
	/* The names are there; the values go to the env file only. */
	cr_assert(strstr(out.p, "HOST_SECRET") != NULL);
	cr_assert(strstr(out.p, "LIT_SECRET") != NULL);
	cr_assert(strstr(out.p, "FILE_SECRET") != NULL);
	cr_assert(strstr(out.p, "CFG_SECRET") != NULL);
	cr_assert(strstr(out.p, "ENV_SECRET") != NULL);
	sbuf_init(&file);
	cr_assert_eq(env_file_render(&L, &file, &err), 0);
	cr_assert(strstr(file.p, "HOST_SECRET=" CANARY "-h\n") != NULL);
	cr_assert(strstr(file.p, "LIT_SECRET=" CANARY "-l\n") != NULL);
	cr_assert(strstr(file.p, "FILE_SECRET=" CANARY "-f\n") != NULL);
	cr_assert(strstr(file.p, "CFG_SECRET=" CANARY "-c\n") != NULL);
	cr_assert(strstr(file.p, "ENV_SECRET=" CANARY "-e\n") != NULL);
	cr_assert(strstr(file.p, "TERM=" CANARY "-t\n") != NULL);
	sbuf_free(&file);
	sbuf_free(&out);
	launcher_free(&L);
}

Test(env, canary_never_reaches_an_error)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "K=" CANARY "\nx"),
	    NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--env: K: the value contains a line break, "
	    "which an env file cannot carry");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--net", "none", "--env", "K"),
	    ENV("K=" CANARY "\rx"), &err), -1);
	cr_assert_str_eq(err.msg, "--env: K: the value contains a line break, "
	    "which an env file cannot carry");
	launcher_free(&L);

	cr_assert_eq(load(&L, ARGS("--env", "9K=" CANARY), NULL, &err), -1);
	cr_assert_str_eq(err.msg, "--env: invalid variable name \"9K\"");
	launcher_free(&L);
}
