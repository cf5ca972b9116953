/* The images: the pin rules and pin files, the tag's inputs (each one
 * changes it, nothing else does), the build context, the host's mirror,
 * the flags of build and update. */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define DIGEST	"sha256:0586e8d02a96205b81fc5840795f4315550d58d238f4ef60" \
		"fa29b5bde230167f"
#define DIGEST2	"sha256:105db8227cf94bce4b9f02050053e368c8461dc4ff7ffa95" \
		"d210c59c5326b4a3"
#define HASH	"68f9c12dd548985cf3e1e677fd225b0783e9175612334359d7d1eb73" \
		"78080a0b"
#define HASH2	"78f9c12dd548985cf3e1e677fd225b0783e9175612334359d7d1eb73" \
		"78080a0b"
#define SRI	"sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="
#define DAY	86400

static char tmp[64];
static char home[128];
static char proj[300];
static char data[300];
static char cache[300];
static char envbuf[32][512];
static char *envp[33];

static void
setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/test-image-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(proj, sizeof(proj), "%s/proj", tmp);
	snprintf(data, sizeof(data), "%s/data", tmp);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	cr_assert_eq(mkdir(home, 0700), 0);
	cr_assert_eq(mkdir(proj, 0700), 0);
	cr_assert_eq(mkdir(data, 0700), 0);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(image, .init = setup, .fini = teardown);

#define ARGS(...)	((const char *const []){ __VA_ARGS__, NULL })
#define ENV(...)	((const char *const []){ __VA_ARGS__, NULL })

/* "ai-sandbox CMD ARGS" with HOME, the cache, the data dir and ENV. */
static int
load_cmd(struct launcher *L, const char *cmd, const char *const *args,
    const char *const *env, struct aisb_error *err)
{
	static char *argv[64];
	int argc = 0;
	size_t n = 0;

	argv[argc++] = "ai-sandbox";
	if (cmd != NULL)
		argv[argc++] = (char *)cmd;
	for (; args != NULL && *args != NULL; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	snprintf(envbuf[n++], sizeof(envbuf[0]), "HOME=%s", home);
	snprintf(envbuf[n++], sizeof(envbuf[0]), "AISB_CACHE_DIR=%s", cache);
	snprintf(envbuf[n++], sizeof(envbuf[0]), "AISB_DATA_DIR=%s", data);
	snprintf(envbuf[n++], sizeof(envbuf[0]), "AISB_PODMAN=/nonexistent/"
	    "podman");
	for (; env != NULL && *env != NULL; env++)
		snprintf(envbuf[n++], sizeof(envbuf[0]), "%s", *env);
	for (size_t i = 0; i < n; i++)
		envp[i] = envbuf[i];
	envp[n] = NULL;
	launcher_init(L);
	return launcher_load(L, argc, argv, envp, proj, err);
}

static void
load(struct launcher *L, const char *const *args, const char *const *env)
{
	struct aisb_error err;

	cr_assert_eq(load_cmd(L, "build", args, env, &err), 0, "%s", err.msg);
}

static void
put(const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX], *slash;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	for (slash = path + strlen(tmp) + 1; (slash = strchr(slash, '/')) !=
	    NULL; slash++) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert_neq(fd, -1, "%s", path);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

/* A small data dir: what image_context_load takes, and what it skips. */
static void
make_data(void)
{
	put("data/meson.build", "project('x')\nsubdir('gate')\n", 0644);
	put("data/meson_options.txt", "option('tests')\n", 0644);
	put("data/gate/meson.build", "# gate\n", 0644);
	put("data/gate/main.c", "int main(void) { return 0; }\n", 0644);
	put("data/gate/.main.c.swp", "editor junk\n", 0644);
	put("data/image/meson.build", "# image\n", 0644);
	put("data/image/fetch-node", "#!/bin/sh\n", 0755);
	put("data/image/sub/deep.c", "/* deep */\n", 0644);
	put("data/tests/meson.build", "# tests\n", 0644);
	put("data/docs/image.md", "# docs\n", 0644);
}

/* The Containerfile and tag of a loaded policy, as a build makes them. */
static void
tag_for(struct launcher *L, const char *digest, const char *hash,
    size_t ca, enum image_role role, char *tag)
{
	struct containerfile_in in;
	struct aisb_error err;
	struct sbuf b;

	memset(&in, 0, sizeof(in));
	in.base_digest = digest;
	in.source_hash = hash;
	in.ca_certs = ca;
	sbuf_init(&b);
	cr_assert_eq(containerfile_render(&L->policy, &in, &b, &err), 0, "%s",
	    err.msg);
	cr_assert_eq(image_tag_of(b.p, b.len, role, tag, IMAGE_TAG_MAX), 0);
	sbuf_free(&b);
}

/* The tag of "build ARGS" with ENV. */
static void
tag_of_policy(const char *const *args, const char *const *env,
    const char *digest, const char *hash, size_t ca, char *tag)
{
	struct launcher L;

	load(&L, args, env);
	tag_for(&L, digest, hash, ca, IMAGE_ROLE_SANDBOX, tag);
	launcher_free(&L);
}

/* --- the pin rules ----------------------------------------------------- */

static struct image_pin
pin_at(int64_t resolved)
{
	struct image_pin p;

	memset(&p, 0, sizeof(p));
	snprintf(p.ref, sizeof(p.ref), "debootstrap:bookworm");
	snprintf(p.digest, sizeof(p.digest), DIGEST);
	snprintf(p.via, sizeof(p.via), "debootstrap");
	p.resolved = resolved;
	return p;
}

Test(image, pin_decide)
{
	int64_t now = 1000 * DAY;
	struct image_pin fresh = pin_at(now - 6 * DAY - DAY / 2);
	struct image_pin stale = pin_at(now - 7 * DAY);
	struct image_pin future = pin_at(now + 30 * DAY);

	/* no pin: resolve, whatever the settings */
	cr_assert_eq(image_pin_decide(NULL, now, 7, 1, 0), IMAGE_PIN_RESOLVE);
	cr_assert_eq(image_pin_decide(NULL, now, -1, 0, 0), IMAGE_PIN_RESOLVE);
	/* the TTL */
	cr_assert_eq(image_pin_decide(&fresh, now, 7, 1, 0), IMAGE_PIN_USE);
	cr_assert_eq(image_pin_decide(&stale, now, 7, 1, 0), IMAGE_PIN_RESOLVE);
	cr_assert_eq(image_pin_decide(&stale, now, 8, 1, 0), IMAGE_PIN_USE);
	/* 0: every build; -1: never */
	cr_assert_eq(image_pin_decide(&fresh, now, 0, 1, 0), IMAGE_PIN_RESOLVE);
	cr_assert_eq(image_pin_decide(&stale, now, -1, 1, 0), IMAGE_PIN_USE);
	/* auto-update off: a stale pin is used */
	cr_assert_eq(image_pin_decide(&stale, now, 7, 0, 0), IMAGE_PIN_USE);
	cr_assert_eq(image_pin_decide(&fresh, now, 0, 0, 0), IMAGE_PIN_USE);
	/* asked for (update, --refresh-base): always */
	cr_assert_eq(image_pin_decide(&fresh, now, -1, 0, 1),
	    IMAGE_PIN_RESOLVE);
	/* a clock set back does not make a pin stale */
	cr_assert_eq(image_pin_decide(&future, now, 7, 1, 0), IMAGE_PIN_USE);
}

Test(image, pin_parse_format)
{
	struct image_pin p = pin_at(1795950450), q;
	struct aisb_error err;
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(image_pin_format(&p, &b), 0);
	cr_assert(strstr(b.p, "\nref debootstrap:bookworm\ndigest " DIGEST
	    "\nresolved 1795950450\nvia debootstrap\n") != NULL, "%s", b.p);
	cr_assert_eq(image_pin_parse(b.p, "debootstrap:bookworm", &q, &err), 0,
	    "%s", err.msg);
	cr_assert_eq(memcmp(&p, &q, sizeof(p)), 0);
	cr_assert_eq(image_pin_parse(b.p, "debootstrap:trixie", &q, &err), -1);
	cr_assert_str_eq(err.msg, "records debootstrap:bookworm, not "
	    "debootstrap:trixie");
	sbuf_free(&b);

	cr_assert_eq(image_pin_parse("ref x\ndigest " DIGEST "\nresolved 1\n",
	    "x", &q, &err), -1);
	cr_assert_str_eq(err.msg, "incomplete: it needs ref, digest, resolved "
	    "and via");
	cr_assert_eq(image_pin_parse("ref x\ndigest sha256:12\nresolved 1\n"
	    "via pull\n", "x", &q, &err), -1);
	cr_assert_str_eq(err.msg, "line 2: invalid value");
	cr_assert_eq(image_pin_parse("ref x\ndigest " DIGEST "\nresolved -5\n"
	    "via pull\n", "x", &q, &err), -1);
	cr_assert_str_eq(err.msg, "line 3: invalid value");
	cr_assert_eq(image_pin_parse("ref x\ncolour blue\n", "x", &q, &err),
	    -1);
	cr_assert_str_eq(err.msg, "line 2: unknown key");
	cr_assert_eq(image_pin_parse("# c\n\nref x\ndigest " DIGEST
	    "\nresolved 7\nvia pull", "x", &q, &err), 0, "%s", err.msg);
	cr_assert_eq(q.resolved, 7);
}

Test(image, pin_files)
{
	struct launcher L;
	struct image_pin p = pin_at(1795950450), q;
	struct aisb_error err;
	struct stat st;
	char *path;

	load(&L, ARGS("--base-image", "debootstrap:bookworm"), NULL);
	path = image_pin_path(&L.policy);
	cr_assert(strncmp(path, cache, strlen(cache)) == 0);
	cr_assert(strstr(path, "/base/debootstrap_bookworm-") != NULL, "%s",
	    path);
	cr_assert_eq(image_pin_load(&L.policy, &q, &err), 0);
	cr_assert_eq(image_pin_store(&L.policy, &p, &err), 0, "%s", err.msg);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(image_pin_load(&L.policy, &q, &err), 1, "%s", err.msg);
	cr_assert_str_eq(q.digest, DIGEST);
	cr_assert_eq(q.resolved, 1795950450);
	/* another reference has another file */
	free(L.policy.base_image);
	L.policy.base_image = strdup("debootstrap:trixie");
	cr_assert_eq(image_pin_load(&L.policy, &q, &err), 0);
	free(L.policy.base_image);
	L.policy.base_image = strdup("debootstrap:bookworm");
	/* a pin others could rewrite is refused */
	cr_assert_eq(chmod(path, 0622), 0);
	cr_assert_eq(image_pin_load(&L.policy, &q, &err), -1);
	cr_assert(strstr(err.msg, "that only you can write") != NULL, "%s",
	    err.msg);
	cr_assert_eq(chmod(path, 0600), 0);
	{
		FILE *f = fopen(path, "w");

		fputs("ref debootstrap:bookworm\ndigest nope\n", f);
		fclose(f);
	}
	cr_assert_eq(image_pin_load(&L.policy, &q, &err), -1);
	cr_assert(strstr(err.msg, "line 2: invalid value (delete it to "
	    "re-resolve the base)") != NULL, "%s", err.msg);
	cr_assert_eq(stat(cache, &st), 0);
	free(path);
	launcher_free(&L);
}

/* A stale pin is what a preview shows, and what a build with
 * base-auto-update=no builds from. */
Test(image, preview_reports_recorded_pin)
{
	struct launcher L;
	struct image_pin p = pin_at(1);	/* 1970: long stale */
	struct aisb_error err;
	struct sbuf out;
	char tag[IMAGE_TAG_MAX], want[IMAGE_TAG_MAX];

	make_data();
	load(&L, ARGS("--base-image", "debootstrap:bookworm"), NULL);
	/* no pin for a debootstrap base: nothing to render yet */
	cr_assert_eq(image_tag(&L, IMAGE_ROLE_SANDBOX, tag, sizeof(tag), &err),
	    0, "%s", err.msg);
	cr_assert_str_eq(tag, AISB_PH_IMAGE);
	sbuf_init(&out);
	cr_assert_eq(image_print_containerfile(&L, &out, &err), -1);
	cr_assert(strstr(err.msg, "no image is recorded for it yet") != NULL,
	    "%s", err.msg);
	cr_assert_eq(image_pin_store(&L.policy, &p, &err), 0, "%s", err.msg);
	cr_assert_eq(image_print_containerfile(&L, &out, &err), 0, "%s",
	    err.msg);
	cr_assert(strstr(out.p, "\nFROM " DIGEST + 7) != NULL);
	cr_assert_eq(image_tag(&L, IMAGE_ROLE_GATE, tag, sizeof(tag), &err), 0);
	cr_assert_eq(image_tag_of(out.p, out.len, IMAGE_ROLE_GATE, want,
	    sizeof(want)), 0);
	cr_assert_str_eq(tag, want, "the tag is the printed text's hash");
	cr_assert(strncmp(tag, "localhost/aisb-gate:", 20) == 0);
	cr_assert_eq(strlen(tag), 20 + 16);
	sbuf_free(&out);
	launcher_free(&L);
}

/* --- the tag's inputs -------------------------------------------------- */

Test(image, tag_inputs_each_change_it)
{
	char base[IMAGE_TAG_MAX], t[IMAGE_TAG_MAX];

	tag_of_policy(NULL, NULL, DIGEST, HASH, 0, base);
	cr_assert(strncmp(base, "localhost/aisb-sandbox:", 23) == 0);
	/* the base digest */
	tag_of_policy(NULL, NULL, DIGEST2, HASH, 0, t);
	cr_assert_str_neq(t, base);
	tag_of_policy(NULL, NULL, NULL, HASH, 0, t);
	cr_assert_str_neq(t, base, "UNPINNED is another image");
	/* the base reference */
	tag_of_policy(ARGS("--base-image", "docker.io/library/debian:12"),
	    NULL, DIGEST, HASH, 0, t);
	cr_assert_str_neq(t, base);
	/* the versions */
	tag_of_policy(NULL, ENV("AISB_NODE_VERSION=22.23.3"), DIGEST, HASH, 0,
	    t);
	cr_assert_str_neq(t, base);
	tag_of_policy(NULL, ENV("AISB_PI_VERSION=0.73.0"), DIGEST, HASH, 0, t);
	cr_assert_str_neq(t, base);
	tag_of_policy(NULL, ENV("AISB_NODE_INTEGRITY=" SRI), DIGEST, HASH, 0,
	    t);
	cr_assert_str_neq(t, base);
	/* the install list */
	tag_of_policy(ARGS("--install", "hello"), NULL, DIGEST, HASH, 0, t);
	cr_assert_str_neq(t, base);
	/* the sources (the init and the gate among them), the CAs */
	tag_of_policy(NULL, NULL, DIGEST, HASH2, 0, t);
	cr_assert_str_neq(t, base);
	tag_of_policy(NULL, NULL, DIGEST, HASH, 1, t);
	cr_assert_str_neq(t, base);
}

Test(image, tag_ignores_the_rest)
{
	char base[IMAGE_TAG_MAX], t[IMAGE_TAG_MAX];

	tag_of_policy(NULL, NULL, DIGEST, HASH, 0, base);
	tag_of_policy(ARGS("--allow", "api.example", "--memory", "8g",
	    "--cpus", "3", "--net", "none", "--harness", "claude",
	    "--no-gate", "--read-only", "--ephemeral-home", "--nofile", "999",
	    "--pids", "77"),
	    ENV("AISB_ENV=X", "AISB_TMP_SIZE=2g", "AISB_BASE_TTL_DAYS=0",
	    "AISB_BASE_AUTO_UPDATE=no", "AISB_BASE_PULL_FALLBACK=no",
	    "AISB_RUNTIME=runc"), DIGEST, HASH, 0, t);
	cr_assert_str_eq(t, base);
	/* the same install list in another order or from another source */
	tag_of_policy(ARGS("--install", "b2", "--install", "a1"), NULL, DIGEST,
	    HASH, 0, base);
	tag_of_policy(ARGS("--install", "a1"), ENV("AISB_INSTALL=b2"), DIGEST,
	    HASH, 0, t);
	cr_assert_str_eq(t, base);
}

Test(image, tag_roles_share_the_hash)
{
	struct launcher L;
	char s[IMAGE_TAG_MAX], g[IMAGE_TAG_MAX];

	load(&L, NULL, NULL);
	tag_for(&L, DIGEST, HASH, 0, IMAGE_ROLE_SANDBOX, s);
	tag_for(&L, DIGEST, HASH, 0, IMAGE_ROLE_GATE, g);
	cr_assert(strncmp(s, AISB_IMAGE_SANDBOX ":", 23) == 0, "%s", s);
	cr_assert(strncmp(g, AISB_IMAGE_GATE ":", 20) == 0, "%s", g);
	cr_assert_str_eq(strchr(s, ':'), strchr(g, ':'));
	launcher_free(&L);
}

/* --- the build context ------------------------------------------------- */

Test(image, context_load)
{
	struct launcher L;
	struct image_context c;
	struct aisb_error err;
	char hex[65], hex2[65];
	size_t i;
	int seen = 0;

	make_data();
	load(&L, NULL, NULL);
	image_context_init(&c);
	cr_assert_eq(image_context_load(&L.policy, &c, &err), 0, "%s",
	    err.msg);
	for (i = 0; i < c.n; i++) {
		const char *p = c.v[i].path;

		if (strcmp(p, "src/meson.build") == 0 ||
		    strcmp(p, "src/meson_options.txt") == 0 ||
		    strcmp(p, "src/gate/main.c") == 0 ||
		    strcmp(p, "src/image/fetch-node") == 0 ||
		    strcmp(p, "src/image/sub/deep.c") == 0)
			seen++;
		cr_assert_null(strstr(p, "tests/"), "%s", p);
		cr_assert_null(strstr(p, "docs/"), "%s", p);
		cr_assert_null(strstr(p, ".swp"), "%s", p);
	}
	cr_assert_eq(seen, 5);
	cr_assert_eq(c.n, 7);
	cr_assert_eq(c.ca_certs, 0);
	cr_assert_eq(image_context_hash(&c, hex, sizeof(hex)), 0);
	image_context_free(&c);

	/* one byte of the init's or the gate's sources changes the hash */
	put("data/gate/main.c", "int main(void) { return 1; }\n", 0644);
	image_context_init(&c);
	cr_assert_eq(image_context_load(&L.policy, &c, &err), 0);
	cr_assert_eq(image_context_hash(&c, hex2, sizeof(hex2)), 0);
	cr_assert_str_neq(hex, hex2);
	image_context_free(&c);

	/* no sources: said plainly */
	free(L.policy.data_dir);
	L.policy.data_dir = strdup("/nonexistent/share/ai-sandbox");
	image_context_init(&c);
	cr_assert_eq(image_context_load(&L.policy, &c, &err), -1);
	cr_assert(strstr(err.msg, "meson install puts them there; "
	    "AISB_DATA_DIR names another place") != NULL, "%s", err.msg);
	image_context_free(&c);
	launcher_free(&L);
}

Test(image, context_hash)
{
	struct image_context a, b;
	struct aisb_error err;
	char ha[65], hb[65];

	image_context_init(&a);
	image_context_init(&b);
	cr_assert_eq(image_context_add(&a, "src/x", "12", 2, &err), 0);
	cr_assert_eq(image_context_add(&a, "src/y", "3", 1, &err), 0);
	cr_assert_eq(image_context_add(&b, "src/y", "3", 1, &err), 0);
	cr_assert_eq(image_context_add(&b, "src/x", "12", 2, &err), 0);
	cr_assert_eq(image_context_hash(&a, ha, sizeof(ha)), 0);
	cr_assert_eq(image_context_hash(&b, hb, sizeof(hb)), 0);
	cr_assert_str_eq(ha, hb, "the order files are read in does not "
	    "matter");
	cr_assert_eq(strlen(ha), 64);
	image_context_free(&b);
	/* a byte moved from the content to the name is another context */
	image_context_init(&b);
	cr_assert_eq(image_context_add(&b, "src/x1", "2", 1, &err), 0);
	cr_assert_eq(image_context_add(&b, "src/y", "3", 1, &err), 0);
	cr_assert_eq(image_context_hash(&b, hb, sizeof(hb)), 0);
	cr_assert_str_neq(ha, hb);
	cr_assert_eq(image_context_add(&b, "/etc/passwd", "", 0, &err), -1);
	cr_assert_eq(image_context_add(&b, "src/../x", "", 0, &err), -1);
	cr_assert_eq(image_context_hash(&b, hb, 10), -1);
	image_context_free(&a);
	image_context_free(&b);
}

#define CERT1 "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\nAbC+/=\n" \
	"-----END CERTIFICATE-----\n"
#define CERT2 "-----BEGIN CERTIFICATE-----\nZZZZ\n-----END CERTIFICATE-----\n"

Test(image, context_ca)
{
	struct image_context c;
	struct aisb_error err;
	const char *pem = "subject=CN=one\r\n" CERT1 "\n# two\n" CERT2;

	image_context_init(&c);
	cr_assert_eq(image_context_ca(&c, pem, strlen(pem), "ca.pem", &err), 0,
	    "%s", err.msg);
	cr_assert_eq(c.ca_certs, 2);
	cr_assert_eq(c.n, 2);
	cr_assert_str_eq(c.v[0].path, "ca/aisb-extra-001.crt");
	cr_assert_str_eq(c.v[1].path, "ca/aisb-extra-002.crt");
	cr_assert_eq(c.v[0].len, strlen(CERT1));
	cr_assert_eq(memcmp(c.v[0].data, CERT1, strlen(CERT1)), 0);
	cr_assert_eq(memcmp(c.v[1].data, CERT2, strlen(CERT2)), 0);
	image_context_free(&c);

	image_context_init(&c);
	cr_assert_eq(image_context_ca(&c, "hello\n", 6, "ca.pem", &err), -1);
	cr_assert_str_eq(err.msg, "ca.pem: no PEM certificate (-----BEGIN "
	    "CERTIFICATE-----) in it");
	pem = CERT1 "-----BEGIN PRIVATE KEY-----\nAAAA\n";
	cr_assert_eq(image_context_ca(&c, pem, strlen(pem), "ca.pem", &err),
	    -1);
	cr_assert_str_eq(err.msg, "ca.pem:5: a private key: give only "
	    "certificates");
	image_context_free(&c);
	image_context_init(&c);
	pem = "-----BEGIN CERTIFICATE-----\nAAAA\n";
	cr_assert_eq(image_context_ca(&c, pem, strlen(pem), "ca.pem", &err),
	    -1);
	cr_assert_str_eq(err.msg, "ca.pem: a certificate without its END line");
	pem = "-----BEGIN CERTIFICATE-----\nAA AA\n-----END CERTIFICATE-----\n";
	cr_assert_eq(image_context_ca(&c, pem, strlen(pem), "ca.pem", &err),
	    -1);
	cr_assert_str_eq(err.msg, "ca.pem:2: not base64 inside a certificate");
	image_context_free(&c);
}

Test(image, context_with_extra_ca_file)
{
	struct launcher L;
	struct image_context c;
	struct aisb_error err;
	char ca[PATH_MAX], flag[PATH_MAX + 16], h1[65], h2[65];

	make_data();
	put("ca.pem", CERT1 CERT2, 0644);
	snprintf(ca, sizeof(ca), "%s/ca.pem", tmp);
	snprintf(flag, sizeof(flag), "--ca-file=%s", ca);
	load(&L, ARGS(flag), NULL);
	cr_assert_str_eq(L.policy.extra_ca, ca);
	image_context_init(&c);
	cr_assert_eq(image_context_load(&L.policy, &c, &err), 0, "%s",
	    err.msg);
	cr_assert_eq(c.ca_certs, 2);
	cr_assert_eq(c.n, 9);
	cr_assert_eq(image_context_hash(&c, h1, sizeof(h1)), 0);
	image_context_free(&c);
	/* another certificate, another context */
	put("ca.pem", CERT1, 0644);
	image_context_init(&c);
	cr_assert_eq(image_context_load(&L.policy, &c, &err), 0);
	cr_assert_eq(image_context_hash(&c, h2, sizeof(h2)), 0);
	cr_assert_str_neq(h1, h2);
	image_context_free(&c);
	launcher_free(&L);
}

/* --- the host's mirror ------------------------------------------------- */

static const char deb822[] =
    "Types: deb\n"
    "# http://snapshot.debian.org/archive/debian/20250520T000000Z\n"
    "URIs: http://deb.debian.org/debian\n"
    "Suites: bookworm bookworm-updates\n"
    "Components: main\n"
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    "\n"
    "Types: deb\n"
    "URIs: http://deb.debian.org/debian-security\n"
    "Suites: bookworm-security\n"
    "Components: main\n"
    "\n"
    "Types: deb-src\n"
    "URIs: http://src.example/debian\n"
    "Suites: bookworm\n"
    "\n"
    "Enabled: no\n"
    "Types: deb\n"
    "URIs: http://off.example/debian\n"
    "Suites: bookworm\n";

Test(image, mirrors_deb822)
{
	struct argv a;

	argv_init(&a);
	cr_assert_eq(image_mirror_lines(deb822, 1, "bookworm", &a), 3);
	cr_assert_str_eq(a.v[0], "deb http://deb.debian.org/debian bookworm "
	    "main");
	cr_assert_str_eq(a.v[1], "deb http://deb.debian.org/debian "
	    "bookworm-updates main");
	cr_assert_str_eq(a.v[2], "deb http://deb.debian.org/debian-security "
	    "bookworm-security main");
	argv_free(&a);
	/* another suite: the host's Debian mirror, without its updates */
	argv_init(&a);
	cr_assert_eq(image_mirror_lines(deb822, 1, "trixie", &a), 1);
	cr_assert_str_eq(a.v[0], "deb http://deb.debian.org/debian trixie "
	    "main");
	argv_free(&a);
}

Test(image, mirrors_oneline)
{
	const char *text =
	    "# comment\n"
	    "deb-src http://src.example/debian bookworm main\n"
	    "deb [arch=amd64 signed-by=/k.gpg] http://ftp.de.debian.org/debian/"
	    " bookworm-security main\n"
	    "deb https://packages.cloud.google.com/apt cloud-sdk main\n"
	    "deb http://ftp.de.debian.org/debian/ bookworm main contrib\n";
	struct argv a;

	argv_init(&a);
	cr_assert_eq(image_mirror_lines(text, 0, "bookworm", &a), 2);
	cr_assert_str_eq(a.v[0], "deb http://ftp.de.debian.org/debian/ "
	    "bookworm main");
	cr_assert_str_eq(a.v[1], "deb http://ftp.de.debian.org/debian/ "
	    "bookworm-security main");
	argv_free(&a);
	/* the security suite alone: the Debian mirror first, then it */
	argv_init(&a);
	cr_assert_eq(image_mirror_lines("deb http://m.example/debian "
	    "trixie-security main\n", 0, "trixie", &a), 2);
	cr_assert_str_eq(a.v[0], "deb http://m.example/debian trixie main");
	cr_assert_str_eq(a.v[1], "deb http://m.example/debian trixie-security "
	    "main");
	cr_assert_null(a.v[2]);
	argv_free(&a);
	argv_init(&a);
	cr_assert_eq(image_mirror_lines("deb https://packages.cloud.google.com"
	    "/apt cloud-sdk main\n", 0, "bookworm", &a), 0);
	cr_assert_eq(image_mirror_lines("", 0, "bookworm", &a), 0);
	cr_assert_eq(image_mirror_lines("", 1, "bookworm", &a), 0);
	argv_free(&a);
}

/* --- flags ------------------------------------------------------------- */

Test(image, flags_belong_to_their_command)
{
	struct launcher L;
	struct aisb_error err;

	cr_assert_eq(load_cmd(&L, "build", ARGS("--rebuild", "--install", "jq",
	    "--refresh-base"), NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(L.image_flags, IMAGE_F_REBUILD | IMAGE_F_REFRESH_BASE);
	cr_assert_eq(L.policy.install.n, 1, "flags after --rebuild are read");
	cr_assert_eq(L.policy.args.n, 0);
	launcher_free(&L);

	cr_assert_eq(load_cmd(&L, "update", ARGS("--check"), NULL, &err), 0,
	    "%s", err.msg);
	cr_assert_eq(L.image_flags, IMAGE_F_CHECK);
	launcher_free(&L);

	/* a run passes them to the harness (the alias rule) */
	cr_assert_eq(load_cmd(&L, NULL, ARGS("--allow", "x.example", "--check",
	    "--rebuild"), NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(L.image_flags, 0);
	cr_assert_eq(L.policy.args.n, 2);
	cr_assert_str_eq(L.policy.args.v[0], "--check");
	launcher_free(&L);

	/* update does not take --rebuild */
	cr_assert_eq(load_cmd(&L, "update", ARGS("--rebuild"), NULL, &err), 0);
	cr_assert_eq(L.image_flags, 0);
	cr_assert_eq(L.policy.args.n, 1);
	cr_assert_eq(cmd_update_exec(&L, NULL, &err), -1);
	cr_assert_str_eq(err.msg, "update: unexpected argument \"--rebuild\"");
	launcher_free(&L);
}

Test(image, build_previews)
{
	struct launcher L;
	struct aisb_error err;
	struct sbuf out;

	make_data();
	sbuf_init(&out);
	cr_assert_eq(load_cmd(&L, "build", ARGS("--dry-run"), NULL, &err), 0);
	cr_assert_eq(cmd_build_exec(&L, &out, &err), -1);
	cr_assert_str_eq(err.msg, "build: not with --dry-run");
	launcher_free(&L);
	/* a registry base with no pin: the preview says UNPINNED, asks no one */
	cr_assert_eq(load_cmd(&L, "build", ARGS("--print-containerfile"), NULL,
	    &err), 0);
	cr_assert_eq(cmd_build_exec(&L, &out, &err), 0, "%s", err.msg);
	cr_assert(strstr(out.p, "\nFROM docker.io/library/ubuntu:24.04 AS "
	    "os\n") != NULL);
	cr_assert(strstr(out.p, "aisb.base-digest=\"UNPINNED\"") != NULL);
	launcher_free(&L);
	sbuf_free(&out);
}
