/* The Containerfile: base references, the stages, labels, the extra CA, the
 * install list, the Node.js checksum pin, and what cannot be rendered. */
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

#define DIGEST	"sha256:0586e8d02a96205b81fc5840795f4315550d58d238f4ef60" \
		"fa29b5bde230167f"
#define HASH	"68f9c12dd548985cf3e1e677fd225b0783e9175612334359d7d1eb73" \
		"78080a0b"
#define BAD_SRI	"sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

#define tmp	fx_tmp
#define home	fx_home
#define proj	fx_proj

static void
setup(void)
{
	fx_setup("cf");
}

TestSuite(containerfile, .init = setup, .fini = fx_teardown);

/* "ai-sandbox build ARGS" with ENV, loaded as the launcher does. */
static void
load(struct launcher *L, const char *const *args, const char *const *env)
{
	const char *v[64];
	struct aisb_error err;
	size_t n = 0;

	v[n++] = "build";
	for (; args != NULL && *args != NULL && n < 63; args++)
		v[n++] = *args;
	v[n] = NULL;
	cr_assert_eq(fx_load(L, v, env, &err), 0, "%s", err.msg);
}

/* Render with a digest (NULL: unpinned), the test hash and ca certs. */
static char *
render(const char *const *args, const char *const *env, const char *digest,
    size_t ca)
{
	struct launcher L;
	struct containerfile_in in;
	struct aisb_error err;
	struct sbuf b;

	load(&L, args, env);
	memset(&in, 0, sizeof(in));
	in.base_digest = digest;
	in.source_hash = HASH;
	in.ca_certs = ca;
	sbuf_init(&b);
	cr_assert_eq(containerfile_render(&L.policy, &in, &b, &err), 0, "%s",
	    err.msg);
	launcher_free(&L);
	return sbuf_steal(&b);
}

/* The text of one stage, from its FROM line to the next FROM. */
static char *
stage(const char *cf, const char *name)
{
	char from[64];
	const char *s, *e;

	snprintf(from, sizeof(from), " AS %s\n", name);
	s = strstr(cf, from);
	cr_assert_not_null(s, "no stage %s", name);
	while (s > cf && s[-1] != '\n')
		s--;
	e = strstr(s + 1, "\nFROM ");
	return strndup(s, e ? (size_t)(e - s + 1) : strlen(s));
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)) != NULL; hay++)
		n++;
	return n;
}

Test(containerfile, base_kinds)
{
	cr_assert_eq(containerfile_base_kind("docker.io/library/ubuntu:24.04"),
	    CONTAINERFILE_BASE_REGISTRY);
	cr_assert_eq(containerfile_base_kind("ubuntu@" DIGEST),
	    CONTAINERFILE_BASE_DIGEST);
	cr_assert_eq(containerfile_base_kind("debootstrap:bookworm"),
	    CONTAINERFILE_BASE_DEBOOTSTRAP);
	cr_assert_str_eq(containerfile_base_suite("debootstrap:trixie"),
	    "trixie");
	cr_assert_null(containerfile_base_suite("debian:bookworm"));
	cr_assert(containerfile_digest_valid(DIGEST));
	cr_assert_not(containerfile_digest_valid("sha256:0586"));
	cr_assert_not(containerfile_digest_valid("sha512:" HASH));
	cr_assert_not(containerfile_digest_valid(
	    "sha256:0586E8D02A96205B81FC5840795F4315550D58D238F4EF60FA29B5BD"
	    "E230167F"));
	cr_assert_not(containerfile_digest_valid(NULL));
}

Test(containerfile, base_from)
{
	char buf[256];

	cr_assert_eq(containerfile_base_from("docker.io/library/ubuntu:24.04",
	    DIGEST, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "docker.io/library/ubuntu@" DIGEST);
	/* a registry port is not a tag */
	cr_assert_eq(containerfile_base_from("localhost:5000/base", DIGEST, buf,
	    sizeof(buf)), 0);
	cr_assert_str_eq(buf, "localhost:5000/base@" DIGEST);
	cr_assert_eq(containerfile_base_from("localhost:5000/base:1", DIGEST,
	    buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "localhost:5000/base@" DIGEST);
	cr_assert_eq(containerfile_base_from("ubuntu:24.04", NULL, buf,
	    sizeof(buf)), 0);
	cr_assert_str_eq(buf, "ubuntu:24.04");
	cr_assert_eq(containerfile_base_from("ubuntu@" DIGEST, NULL, buf,
	    sizeof(buf)), 0);
	cr_assert_str_eq(buf, "ubuntu@" DIGEST);
	cr_assert_eq(containerfile_base_from("debootstrap:bookworm", DIGEST,
	    buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, DIGEST + 7);
	cr_assert_eq(containerfile_base_from("debootstrap:bookworm", NULL, buf,
	    sizeof(buf)), -1);
	cr_assert_eq(containerfile_base_from("ubuntu:24.04", "sha256:12", buf,
	    sizeof(buf)), -1);
	cr_assert_eq(containerfile_base_from("ubuntu:24.04", DIGEST, buf, 20),
	    -1);
}

Test(containerfile, stages_and_base)
{
	char *cf = render(NULL, NULL, DIGEST, 0), *s;

	cr_assert(strstr(cf, "\nFROM docker.io/library/ubuntu@" DIGEST
	    " AS os\n") != NULL, "%s", cf);
	cr_assert_eq(count(cf, "\nFROM "), 5);
	cr_assert_eq(count(cf, "\nFROM os AS "), 4);
	cr_assert(strstr(cf, "# Base: docker.io/library/ubuntu:24.04, pinned "
	    "to " DIGEST ".\n") != NULL);

	s = stage(cf, "build");
	cr_assert(strstr(s, "COPY src/ /usr/src/ai-sandbox/\n") != NULL);
	cr_assert(strstr(s, "meson setup -Dtests=false -Dinit=enabled") !=
	    NULL);
	cr_assert(strstr(s, "ninja -C /usr/src/ai-sandbox/build gate/aisb-gate "
	    "image/aisb-init") != NULL);
	cr_assert(strstr(s, " libnftables-dev ") != NULL);
	cr_assert(strstr(s, "dpkg -S") != NULL);
	free(s);

	s = stage(cf, "node");
	cr_assert(strstr(s, "COPY src/image/fetch-node "
	    "/usr/local/libexec/ai-sandbox/fetch-node\n") != NULL);
	cr_assert(strstr(s, "\nRUN sh /usr/local/libexec/ai-sandbox/fetch-node "
	    AISB_NODE_VERSION_DEFAULT " " AISB_NPM_VERSION " /opt/node\n") !=
	    NULL, "%s", s);
	cr_assert_null(strstr(s, "AISB_NODE_INTEGRITY"));
	free(s);

	s = stage(cf, "gate");
	cr_assert(strstr(s, "COPY --from=build /out/aisb-gate "
	    AISB_GATE_PATH "\n") != NULL);
	cr_assert(strstr(s, "\nUSER 65534:65534\n") != NULL);
	cr_assert(strstr(s, "\nENTRYPOINT [\"" AISB_GATE_PATH "\"]\n") != NULL);
	cr_assert(strstr(s, "aisb-gate.deps") != NULL);
	cr_assert_null(strstr(s, "nftables"));
	cr_assert_null(strstr(s, "aisb-init"));
	cr_assert(strstr(s, "echo \"role gate\"") != NULL);
	free(s);

	s = stage(cf, "sandbox");
	cr_assert(strstr(s, " nftables git curl jq build-essential python3 ") !=
	    NULL);
	cr_assert(strstr(s, "COPY --from=node /opt/node/ /usr/local/\n") !=
	    NULL);
	cr_assert(strstr(s, "npm install --global --no-fund --no-audit "
	    "--update-notifier=false " AISB_PI_PACKAGE "@"
	    AISB_PI_VERSION_DEFAULT " ") != NULL);
	cr_assert(strstr(s, "useradd -u 1000 -g 1000 -d /home/sandbox -m") !=
	    NULL);
	cr_assert(strstr(s, "chown 1000:1000 /project\n") != NULL);
	cr_assert(strstr(s, "COPY --from=build /out/aisb-init "
	    AISB_INIT_PATH "\n") != NULL);
	cr_assert(strstr(s, "COPY --from=build /out/aisb-gate "
	    AISB_GATE_PATH "\n") != NULL);
	cr_assert(strstr(s, "> " AISB_MANIFEST " \\\n") != NULL);
	cr_assert(strstr(s, "npm-package") != NULL);
	cr_assert(strstr(s, "\nWORKDIR /project\n") != NULL);
	cr_assert(strstr(s, "\nENTRYPOINT [\"" AISB_INIT_PATH "\"]\n") != NULL);
	cr_assert_null(strstr(s, "\nUSER "));
	cr_assert_null(strstr(s, "NODE_EXTRA_CA_CERTS"));
	free(s);
	cr_assert_null(strstr(cf, "COPY ca/"));
	free(cf);
}

Test(containerfile, labels_exact)
{
	char *cf = render(ARGS("--base-image", "debootstrap:bookworm"), NULL,
	    DIGEST, 0);
	char *s = stage(cf, "gate");

	cr_assert(strstr(cf, "\nFROM " DIGEST + 7) != NULL);
	cr_assert(strstr(s,
	    "LABEL aisb.role=\"gate\" \\\n"
	    "      aisb.version=\"" AISB_VERSION "\" \\\n"
	    "      aisb.base-ref=\"debootstrap:bookworm\" \\\n"
	    "      aisb.base-digest=\"" DIGEST "\" \\\n"
	    "      aisb.node=\"22.23.5\" \\\n"
	    "      aisb.pi-package=\"@mariozechner/pi-coding-agent\" \\\n"
	    "      aisb.pi-version=\"0.73.1\" \\\n"
	    "      aisb.source-hash=\"" HASH "\"\n") != NULL, "%s", s);
	free(s);
	s = stage(cf, "sandbox");
	cr_assert(strstr(s, "LABEL aisb.role=\"sandbox\" \\\n") != NULL);
	cr_assert(strstr(s, "aisb.base-digest=\"" DIGEST "\"") != NULL);
	cr_assert(strstr(s, "echo \"base debootstrap:bookworm " DIGEST "\"") !=
	    NULL);
	free(s);
	free(cf);
}

Test(containerfile, unpinned)
{
	char *cf = render(NULL, NULL, NULL, 0);

	cr_assert(strstr(cf, "\nFROM docker.io/library/ubuntu:24.04 AS os\n") !=
	    NULL);
	cr_assert_eq(count(cf, "aisb.base-digest=\"UNPINNED\""), 2);
	cr_assert(strstr(cf, "# Base: docker.io/library/ubuntu:24.04, UNPINNED "
	    "(no digest recorded).\n") != NULL);
	free(cf);
}

Test(containerfile, digest_reference)
{
	char *cf = render(ARGS("--base-image", "quay.io/x/base@" DIGEST), NULL,
	    NULL, 0);

	cr_assert(strstr(cf, "\nFROM quay.io/x/base@" DIGEST " AS os\n") !=
	    NULL);
	cr_assert_eq(count(cf, "aisb.base-digest=\"" DIGEST "\""), 2);
	free(cf);
}

Test(containerfile, extra_ca)
{
	char *cf = render(NULL, NULL, DIGEST, 2), *s;

	s = stage(cf, "os");
	cr_assert(strstr(s, "COPY ca/ " AISB_EXTRA_CA_DIR "/\nRUN apt-get") !=
	    NULL, "the certificates come before the first download: %s", s);
	cr_assert(strstr(s, "RUN update-ca-certificates \\\n") != NULL);
	cr_assert(strstr(s, "cat " AISB_EXTRA_CA_DIR "/*.crt > "
	    AISB_EXTRA_CA_PEM "\n") != NULL);
	free(s);
	s = stage(cf, "sandbox");
	cr_assert(strstr(s, "\nENV NODE_EXTRA_CA_CERTS=" AISB_EXTRA_CA_PEM
	    "\nRUN npm install") != NULL, "%s", s);
	free(s);
	free(cf);
}

Test(containerfile, install_list_sandbox_only)
{
	char *cf = render(ARGS("--install", "ripgrep", "--install", "hello=2.10-3"),
	    ENV("AISB_INSTALL=fd-find"), DIGEST, 0), *s;

	s = stage(cf, "sandbox");
	cr_assert(strstr(s, "apt-get -q install -y --no-install-recommends "
	    "fd-find hello=2.10-3 ripgrep \\\n") != NULL, "%s", s);
	free(s);
	s = stage(cf, "gate");
	cr_assert_null(strstr(s, "ripgrep"));
	free(s);
	cr_assert_eq(count(cf, "ripgrep"), 1);
	free(cf);
}

Test(containerfile, node_integrity_and_versions)
{
	char *cf = render(NULL, ENV("AISB_NODE_INTEGRITY=" BAD_SRI,
	    "AISB_NODE_VERSION=22.1.0", "AISB_PI_VERSION=0.70.0"), DIGEST, 0);
	char *s = stage(cf, "node");

	cr_assert(strstr(s, "\nRUN AISB_NODE_INTEGRITY=" BAD_SRI " sh "
	    AISB_NODE_FETCH " 22.1.0 ") != NULL, "%s", s);
	free(s);
	cr_assert_eq(count(cf, "aisb.node=\"22.1.0\""), 2);
	cr_assert_eq(count(cf, "aisb.pi-version=\"0.70.0\""), 2);
	cr_assert(strstr(cf, AISB_PI_PACKAGE "@0.70.0 ") != NULL);
	free(cf);
}

Test(containerfile, deterministic)
{
	char *a = render(ARGS("--install", "b1", "--install", "a1"), NULL,
	    DIGEST, 1);
	char *b = render(ARGS("--install", "a1", "--install", "b1"), NULL,
	    DIGEST, 1);

	cr_assert_str_eq(a, b);
	free(a);
	free(b);
}

Test(containerfile, refusals)
{
	struct launcher L;
	struct containerfile_in in;
	struct aisb_error err;
	struct sbuf b;

	load(&L, ARGS("--base-image", "debootstrap:bookworm"), NULL);
	memset(&in, 0, sizeof(in));
	in.source_hash = HASH;
	sbuf_init(&b);
	cr_assert_eq(containerfile_render(&L.policy, &in, &b, &err), -1);
	cr_assert(strstr(err.msg, "cannot be built unpinned") != NULL, "%s",
	    err.msg);
	in.base_digest = "sha256:abc";
	cr_assert_eq(containerfile_render(&L.policy, &in, &b, &err), -1);
	cr_assert(strstr(err.msg, "is not sha256:HEX") != NULL, "%s", err.msg);
	in.base_digest = DIGEST;
	in.source_hash = "xyz";
	cr_assert_eq(containerfile_render(&L.policy, &in, &b, &err), -1);
	cr_assert_str_eq(err.msg, "the source hash is not 64 hex digits");
	in.source_hash = NULL;
	cr_assert_eq(containerfile_render(&L.policy, &in, &b, &err), -1);
	sbuf_free(&b);
	launcher_free(&L);
}

Test(containerfile, keys_validate)
{
	struct policy p;
	struct policy_origin o;
	struct aisb_error err;

	policy_init(&p);
	policy_origin_set(&o, POLICY_SRC_FLAG, "x");
	cr_assert_eq(policy_set(&p, policy_key_by_name("node-version"),
	    "22.23.5", &o, &err), 0);
	cr_assert_eq(policy_set(&p, policy_key_by_name("pi-version"),
	    "1.0.0-beta.1", &o, &err), 0);
	cr_assert_eq(policy_set(&p, policy_key_by_name("node-version"),
	    "v22", &o, &err), -1);
	cr_assert(strstr(err.msg, "invalid version \"v22\"") != NULL, "%s",
	    err.msg);
	cr_assert_eq(policy_set(&p, policy_key_by_name("pi-version"),
	    "1.0 ; rm", &o, &err), -1);
	cr_assert_eq(policy_set(&p, policy_key_by_name("node-integrity"),
	    BAD_SRI, &o, &err), 0);
	cr_assert_eq(policy_set(&p, policy_key_by_name("node-integrity"),
	    "sha256-AAAA", &o, &err), -1);
	cr_assert(strstr(err.msg, "invalid integrity") != NULL, "%s", err.msg);
	cr_assert_eq(policy_set(&p, policy_key_by_name("node-integrity"),
	    "sha512-AAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", &o, &err), -1);
	cr_assert_eq(policy_set(&p, policy_key_by_name("base-ttl-days"), "-1",
	    &o, &err), 0);
	cr_assert_eq(p.base_ttl_days, -1);
	cr_assert_eq(policy_set(&p, policy_key_by_name("base-ttl-days"), "0",
	    &o, &err), 0);
	cr_assert_eq(p.base_ttl_days, 0);
	cr_assert_eq(policy_set(&p, policy_key_by_name("base-ttl-days"), "-2",
	    &o, &err), -1);
	cr_assert_eq(policy_set(&p, policy_key_by_name("base-ttl-days"),
	    "36501", &o, &err), -1);
	cr_assert(strstr(err.msg, "0 to 36500, or -1 for never") != NULL, "%s",
	    err.msg);
	cr_assert_eq(policy_set(&p, policy_key_by_name("extra-ca"),
	    "relative.pem", &o, &err), -1);
	policy_free(&p);
}

Test(containerfile, extra_ca_not_from_a_project)
{
	struct policy p;
	struct policy_origin o;
	struct aisb_error err;

	policy_init(&p);
	policy_origin_set(&o, POLICY_SRC_PROJECT, ".ai-sandbox/config:1");
	cr_assert_eq(policy_set(&p, policy_key_by_name("extra-ca"), "/x.pem",
	    &o, &err), -1);
	cr_assert(strstr(err.msg, "not accepted in a project file") != NULL,
	    "%s", err.msg);
	policy_free(&p);
}

Test(containerfile, build_needs_no_allowlist)
{
	struct launcher L;

	/* no --allow, and net=allow: a run would refuse; build does not */
	load(&L, NULL, ENV("AISB_ENV=UNSET_VARIABLE_X"));
	cr_assert_eq(L.policy.allow.n, 0);
	cr_assert(L.policy.image_only);
	cr_assert_str_eq(L.policy.base_image, "docker.io/library/ubuntu:24.04");
	cr_assert_eq(L.policy.base_ttl_days, 7);
	cr_assert(L.policy.base_auto_update);
	cr_assert(L.policy.base_pull_fallback);
	launcher_free(&L);
}
