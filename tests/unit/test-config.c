/* Config files: the line parser, file checks, errors with FILE:LINE. */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "policy.h"

static char tmp[64];

static void
setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/test-config-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(config, .init = setup, .fini = teardown);

/* Write a file with mode and return its path (static buffer). */
static const char *
write_file(const char *name, const char *text, size_t len, mode_t mode)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	cr_assert_not_null(f = fopen(path, "w"));
	cr_assert_eq(fwrite(text, 1, len, f), len);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

static const char *
write_conf(const char *text, mode_t mode)
{
	return write_file("config", text, strlen(text), mode);
}

static int
parse(const char *line, char **k, char **v, struct aisb_error *err)
{
	static char buf[CONFIG_LINE_MAX + 64];

	snprintf(buf, sizeof(buf), "%s", line);
	return config_parse_line(buf, k, v, err);
}

Test(config, line_parser)
{
	struct aisb_error err;
	char *k, *v;

	cr_assert_eq(parse("", &k, &v, &err), 0);
	cr_assert_eq(parse("   \t", &k, &v, &err), 0);
	cr_assert_eq(parse("# memory = 1g", &k, &v, &err), 0);
	cr_assert_eq(parse("  # indented comment", &k, &v, &err), 0);
	cr_assert_eq(parse("memory = 1g", &k, &v, &err), 1);
	cr_assert_str_eq(k, "memory");
	cr_assert_str_eq(v, "1g");
	cr_assert_eq(parse("\tmemory=1g\t ", &k, &v, &err), 1);
	cr_assert_str_eq(k, "memory");
	cr_assert_str_eq(v, "1g");
	/* The value runs to the end of the line, '#' and '=' included. */
	cr_assert_eq(parse("harness = sh -c 'a=1 # b'", &k, &v, &err), 1);
	cr_assert_str_eq(v, "sh -c 'a=1 # b'");
	cr_assert_eq(parse("memory 1g", &k, &v, &err), -1);
	cr_assert_str_eq(err.msg, "expected \"key = value\"");
	cr_assert_eq(parse("= 1g", &k, &v, &err), -1);
	cr_assert_str_eq(err.msg, "missing key before '='");
	cr_assert_eq(parse("Memory = 1g", &k, &v, &err), -1);
	cr_assert_str_eq(err.msg, "invalid key \"Memory\"");
	cr_assert_eq(parse("mem ory = 1g", &k, &v, &err), -1);
	cr_assert_str_eq(err.msg, "invalid key \"mem ory\"");
	cr_assert_eq(parse("memory =   ", &k, &v, &err), -1);
	cr_assert_str_eq(err.msg, "memory: missing value");
}

Test(config, line_too_long)
{
	struct aisb_error err;
	char *line = malloc(CONFIG_LINE_MAX + 2), *k, *v;

	memcpy(line, "harness = ", 10);
	memset(line + 10, 'a', CONFIG_LINE_MAX - 9);
	line[CONFIG_LINE_MAX + 1] = '\0';
	cr_assert_eq(config_parse_line(line, &k, &v, &err), -1);
	cr_assert_str_eq(err.msg, "line longer than 4096 bytes");
	free(line);
}

Test(config, load_applies_every_line)
{
	struct aisb_error err;
	struct policy p;
	const char *path;

	path = write_conf("# user config\n"
	    "\n"
	    "memory = 8g\r\n"
	    "allow = a.example\n"
	    "allow = 192.0.2.0/24\n"
	    "net=none\n"
	    "keep = yes", 0600);
	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), 0,
	    "%s", err.msg);
	cr_assert_eq(p.memory, 8ULL << 30);
	cr_assert_eq(p.net, POLICY_NET_NONE);
	cr_assert_eq(p.keep, 1);
	cr_assert_eq(p.allow.n, 2);
	cr_assert_eq(p.origin[PK_MEMORY].src, POLICY_SRC_USER);
	cr_assert(strstr(p.origin[PK_MEMORY].where, "/config:3") != NULL);
	cr_assert(strstr(p.origin[PK_KEEP].where, "/config:7") != NULL);
	cr_assert(strstr(p.allow.v[1].origin.where, "/config:5") != NULL);
	policy_free(&p);
}

Test(config, missing_file_is_not_an_error)
{
	struct aisb_error err;
	struct policy p;
	char path[128];

	snprintf(path, sizeof(path), "%s/nope", tmp);
	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), 0);
	policy_free(&p);
}

static void
expect_error(const char *text, mode_t mode, enum policy_source src,
    const char *want_after_path)
{
	struct aisb_error err;
	struct policy p;
	const char *path = write_conf(text, mode);
	char want[512];

	snprintf(want, sizeof(want), "%s%s", path, want_after_path);
	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, src, &err), -1, "%s", text);
	/* A prefix: the allowlist parser's own reason may follow. */
	cr_assert(strncmp(err.msg, want, strlen(want)) == 0 &&
	    (strlen(err.msg) == strlen(want) || strstr(want, "allow:")),
	    "got \"%s\", want \"%s\"", err.msg, want);
	policy_free(&p);
}

Test(config, errors_name_file_and_line)
{
	expect_error("memory = 1g\n\nfoo = 1\n", 0600, POLICY_SRC_USER,
	    ":3: unknown key \"foo\"");
	expect_error("# x\nmemory = 12q\n", 0600, POLICY_SRC_USER,
	    ":2: memory: invalid size \"12q\"");
	expect_error("cpus 2\n", 0600, POLICY_SRC_USER,
	    ":1: expected \"key = value\"");
	expect_error("net = full\n", 0600, POLICY_SRC_PROJECT,
	    ":1: net: \"full\" is not accepted in a project file (a project "
	    "must not widen its own sandbox)");
	expect_error("extra-args = --privileged\n", 0600, POLICY_SRC_USER,
	    ":1: extra-args: can only be set with AISB_EXTRA_ARGS");
	expect_error("mount = /etc\n", 0644, POLICY_SRC_PROJECT,
	    ":1: mount: not accepted in a project file (a project must not "
	    "widen its own sandbox); set it in your own config file, "
	    "AISB_MOUNT or --mount");
	expect_error("allow = bad name\n", 0600, POLICY_SRC_USER,
	    ":1: allow: invalid name \"bad name\"");
}

Test(config, first_error_stops_and_names_its_line)
{
	struct aisb_error err;
	struct policy p;
	const char *path = write_conf("memory = 1g\npids = 1\nmemory = 2g\n",
	    0600);

	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), -1);
	cr_assert(strstr(err.msg, ":2: pids: 1 is out of range") != NULL, "%s",
	    err.msg);
	cr_assert_eq(p.memory, 1ULL << 30);
	policy_free(&p);
}

Test(config, writable_by_others_is_refused)
{
	expect_error("memory = 1g\n", 0620, POLICY_SRC_USER,
	    ": group- or world-writable (mode 0620); fix it with chmod go-w");
	expect_error("memory = 1g\n", 0602, POLICY_SRC_PROJECT,
	    ": group- or world-writable (mode 0602); fix it with chmod go-w");
	/* Readable by others is fine: a config file holds no secret. */
	struct aisb_error err;
	struct policy p;
	const char *path = write_conf("memory = 1g\n", 0644);

	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), 0);
	policy_free(&p);
}

Test(config, owned_by_someone_else_is_refused)
{
	struct aisb_error err;
	struct policy p;
	const char *path = write_conf("memory = 1g\n", 0644);
	char want[256];

	if (geteuid() != 0)
		cr_skip_test("needs root to chown");
	cr_assert_eq(chown(path, 4242, 4242), 0);
	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), -1);
	snprintf(want, sizeof(want), "%s: owned by uid 4242, not by you",
	    path);
	cr_assert_str_eq(err.msg, want);
	policy_free(&p);
}

Test(config, nul_byte_and_directory_refused)
{
	struct aisb_error err;
	struct policy p;
	const char *path = write_file("config", "memory = 1g\n\0x = 1\n", 18,
	    0600);
	char want[256], dir[128];

	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), -1);
	snprintf(want, sizeof(want), "%s: contains a NUL byte", path);
	cr_assert_str_eq(err.msg, want);
	snprintf(dir, sizeof(dir), "%s/d", tmp);
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(config_load_file(&p, dir, POLICY_SRC_USER, &err), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", dir);
	cr_assert_str_eq(err.msg, want);
	policy_free(&p);
}

Test(config, too_large_refused)
{
	struct aisb_error err;
	struct policy p;
	size_t n = CONFIG_FILE_MAX + 1;
	char *big = malloc(n), want[256];
	const char *path;

	memset(big, '#', n);
	path = write_file("config", big, n, 0600);
	policy_init(&p);
	cr_assert_eq(config_load_file(&p, path, POLICY_SRC_USER, &err), -1);
	snprintf(want, sizeof(want), "%s: larger than %d bytes", path,
	    CONFIG_FILE_MAX);
	cr_assert_str_eq(err.msg, want);
	policy_free(&p);
	free(big);
}
