/* The Containerfile of the sandbox and gate images, rendered from the
 * policy: pure text, no I/O. launcher/image.c builds what this prints. */
#include <stdio.h>
#include <string.h>

#include "aisb.h"
#include "policy.h"

#define HEX	"0123456789abcdef"
/* Characters a rendered value may have: no blank, quote, $ or backslash. */
#define SAFE	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
		"0123456789._:/@+~=-"

/* Build dependencies of aisb-gate and aisb-init: the same names on Debian
 * 12 and Ubuntu 24.04. */
static const char *const build_pkgs[] = {
	"gcc", "libc6-dev", "meson", "ninja-build", "pkg-config",
	"libevent-dev", "libssl-dev", "libc-ares-dev", "libcjson-dev",
	"libnftables-dev", NULL
};

/* The sandbox's tools; its runtime libraries come from the binaries. */
static const char *const sandbox_pkgs[] = {
	"nftables", "git", "curl", "jq", "build-essential", "python3",
	"procps", "less", "xz-utils", NULL
};

/* Which kind of base a reference is. */
enum containerfile_base
containerfile_base_kind(const char *ref)
{
	if (strncmp(ref, AISB_BASE_DEBOOTSTRAP,
	    strlen(AISB_BASE_DEBOOTSTRAP)) == 0)
		return CONTAINERFILE_BASE_DEBOOTSTRAP;
	if (strstr(ref, "@sha256:") != NULL)
		return CONTAINERFILE_BASE_DIGEST;
	return CONTAINERFILE_BASE_REGISTRY;
}

const char *
containerfile_base_suite(const char *ref)
{
	if (containerfile_base_kind(ref) != CONTAINERFILE_BASE_DEBOOTSTRAP)
		return NULL;
	return ref + strlen(AISB_BASE_DEBOOTSTRAP);
}

int
containerfile_digest_valid(const char *d)
{
	size_t i;

	if (d == NULL || strncmp(d, "sha256:", 7) != 0 || strlen(d) != 7 + 64)
		return 0;
	for (i = 7; d[i] != '\0'; i++)
		if (strchr(HEX, d[i]) == NULL)
			return 0;
	return 1;
}

/* Is s made only of SAFE characters (and not empty)? */
static int
safe(const char *s)
{
	return s != NULL && s[0] != '\0' && strspn(s, SAFE) == strlen(s);
}

/* REPO@DIGEST, the image id, or the reference as given. */
int
containerfile_base_from(const char *ref, const char *digest, char *buf,
    size_t len)
{
	const char *slash, *colon;
	size_t rl;
	int n;

	switch (containerfile_base_kind(ref)) {
	case CONTAINERFILE_BASE_DIGEST:
		n = snprintf(buf, len, "%s", ref);
		break;
	case CONTAINERFILE_BASE_DEBOOTSTRAP:
		if (!containerfile_digest_valid(digest))
			return -1;
		n = snprintf(buf, len, "%s", digest + 7);
		break;
	default:
		if (digest == NULL) {
			n = snprintf(buf, len, "%s", ref);
			break;
		}
		if (!containerfile_digest_valid(digest))
			return -1;
		/* A tag is a ':' after the last '/' (a port comes before). */
		slash = strrchr(ref, '/');
		colon = strrchr(ref, ':');
		rl = colon != NULL && (slash == NULL || colon > slash) ?
		    (size_t)(colon - ref) : strlen(ref);
		n = snprintf(buf, len, "%.*s@%s", (int)rl, ref, digest);
		break;
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* "RUN apt-get install" of words, one RUN with the lists removed after. */
static int
apt_install(struct sbuf *b, const char *const *pkgs, const char *extra)
{
	size_t i;

	if (sbuf_adds(b, "RUN apt-get -q update \\\n"
	    " && apt-get -q install -y --no-install-recommends") == -1)
		return -1;
	for (i = 0; pkgs != NULL && pkgs[i] != NULL; i++)
		if (sbuf_printf(b, " %s", pkgs[i]) == -1)
			return -1;
	if (extra != NULL && sbuf_printf(b, " %s", extra) == -1)
		return -1;
	return sbuf_adds(b, " \\\n && rm -rf /var/lib/apt/lists/*\n");
}

/* The first stage: the pinned base, CA certificates, the extra ones. */
static int
stage_os(struct sbuf *b, const char *from, size_t ca)
{
	static const char *const pkgs[] = { "ca-certificates", NULL };

	if (sbuf_printf(b, "FROM %s AS os\n"
	    "ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8\n", from) == -1)
		return -1;
	if (ca > 0 && sbuf_adds(b, "COPY ca/ " AISB_EXTRA_CA_DIR "/\n") == -1)
		return -1;
	if (apt_install(b, pkgs, NULL) == -1)
		return -1;
	if (ca > 0 && sbuf_adds(b, "RUN update-ca-certificates \\\n"
	    " && mkdir -p /etc/aisb \\\n"
	    " && cat " AISB_EXTRA_CA_DIR "/*.crt > " AISB_EXTRA_CA_PEM "\n") ==
	    -1)
		return -1;
	return 0;
}

/*
 * The build stage: the project's sources compiled against the base's own
 * libraries, and for each binary the packages that hold the libraries it
 * links (ldd, then dpkg -S), so the final stages install exactly those:
 * the names differ between distributions (libssl3 vs libssl3t64).
 */
static int
stage_build(struct sbuf *b)
{
	if (sbuf_adds(b, "\nFROM os AS build\n") == -1 ||
	    apt_install(b, build_pkgs, NULL) == -1)
		return -1;
	return sbuf_adds(b,
	    "COPY src/ " AISB_SRC_DIR "/\n"
	    "RUN meson setup -Dtests=false -Dinit=enabled " AISB_SRC_DIR
	    "/build " AISB_SRC_DIR " \\\n"
	    " && ninja -C " AISB_SRC_DIR "/build gate/aisb-gate "
	    "image/aisb-init \\\n"
	    " && mkdir -p /out \\\n"
	    " && cp " AISB_SRC_DIR "/build/gate/aisb-gate " AISB_SRC_DIR
	    "/build/image/aisb-init /out/ \\\n"
	    " && for bin in aisb-gate aisb-init; do \\\n"
	    "      for lib in $(ldd /out/$bin | awk '$2 == \"=>\" && "
	    "$3 ~ /^\\// { print $3 }'); do \\\n"
	    "        real=$(readlink -f \"$lib\"); \\\n"
	    "        pkg=$(dpkg -S \"$real\" 2>/dev/null || "
	    "dpkg -S \"${real#/usr}\" 2>/dev/null) \\\n"
	    "          || { echo \"no package holds $lib ($bin)\" >&2; "
	    "exit 1; }; \\\n"
	    "        echo \"${pkg%%:*}\"; \\\n"
	    "      done | LC_ALL=C sort -u > /out/$bin.deps; \\\n"
	    "    done\n");
}

/* The node stage: Node.js and npm, verified before they are unpacked. */
static int
stage_node(struct sbuf *b, const struct policy *p)
{
	static const char *const pkgs[] = { "curl", "jq", NULL };

	if (sbuf_adds(b, "\nFROM os AS node\n") == -1 ||
	    apt_install(b, pkgs, NULL) == -1)
		return -1;
	if (sbuf_adds(b, "COPY src/image/fetch-node " AISB_NODE_FETCH "\n"
	    "RUN ") == -1)
		return -1;
	if (p->node_integrity != NULL && p->node_integrity[0] != '\0' &&
	    sbuf_printf(b, "AISB_NODE_INTEGRITY=%s ", p->node_integrity) == -1)
		return -1;
	return sbuf_printf(b, "sh " AISB_NODE_FETCH " %s " AISB_NPM_VERSION
	    " /opt/node\n", p->node_version);
}

/* The manifest's common head: what the labels say, then the binaries. */
static int
manifest_head(struct sbuf *b, const char *role, const char *ref,
    const char *digest, const char *hash, const char *bins)
{
	return sbuf_printf(b,
	    "RUN mkdir -p /etc/aisb \\\n"
	    " && { echo \"# ai-sandbox image manifest: what this image holds\"; "
	    "\\\n"
	    "      echo \"role %s\"; \\\n"
	    "      echo \"ai-sandbox %s\"; \\\n"
	    "      echo \"base %s %s\"; \\\n"
	    "      echo \"source-hash %s\"; \\\n"
	    "      sha256sum %s | sed 's/^/sha256 /'; \\\n"
	    "      dpkg-query -W -f='deb ${Package} ${Version} "
	    "${Architecture}\\n' | LC_ALL=C sort; \\\n",
	    role, AISB_VERSION, ref, digest ? digest : AISB_UNPINNED, hash,
	    bins);
}

/* The manifest's tail: written, then checked for the package list. */
static int
manifest_tail(struct sbuf *b)
{
	return sbuf_adds(b,
	    "    } > " AISB_MANIFEST " \\\n"
	    " && grep -q '^deb ' " AISB_MANIFEST " \\\n"
	    " && chmod 0644 " AISB_MANIFEST "\n");
}

/* The labels both images carry. */
static int
labels(struct sbuf *b, const struct policy *p, const char *role,
    const char *digest, const char *hash)
{
	return sbuf_printf(b,
	    "LABEL aisb.role=\"%s\" \\\n"
	    "      aisb.version=\"%s\" \\\n"
	    "      aisb.base-ref=\"%s\" \\\n"
	    "      aisb.base-digest=\"%s\" \\\n"
	    "      aisb.node=\"%s\" \\\n"
	    "      aisb.pi-package=\"%s\" \\\n"
	    "      aisb.pi-version=\"%s\" \\\n"
	    "      aisb.source-hash=\"%s\"\n",
	    role, AISB_VERSION, p->base_image, digest ? digest : AISB_UNPINNED,
	    p->node_version, AISB_PI_PACKAGE, p->pi_version, hash);
}

/* The gate: its runtime libraries, aisb-gate, an unprivileged user. */
static int
stage_gate(struct sbuf *b, const struct policy *p, const char *digest,
    const char *hash)
{
	if (sbuf_adds(b, "\nFROM os AS gate\n"
	    "COPY --from=build /out/aisb-gate.deps /usr/share/ai-sandbox/\n") ==
	    -1 ||
	    apt_install(b, NULL, "$(cat /usr/share/ai-sandbox/aisb-gate.deps)")
	    == -1)
		return -1;
	if (sbuf_adds(b, "COPY --from=build /out/aisb-gate " AISB_GATE_PATH
	    "\n") == -1 ||
	    manifest_head(b, "gate", p->base_image, digest, hash,
	    AISB_GATE_PATH) == -1 ||
	    manifest_tail(b) == -1)
		return -1;
	if (sbuf_printf(b, "RUN mkdir -p " AISB_GATE_LOG_DIR "\n"
	    "USER %u:%u\n"
	    "ENTRYPOINT [\"" AISB_GATE_PATH "\"]\n",
	    AISB_GATE_UID, AISB_GATE_GID) == -1)
		return -1;
	return labels(b, p, "gate", digest, hash);
}

/* The sandbox: tools, Node.js, pi, the user, the init and the gate. */
static int
stage_sandbox(struct sbuf *b, const struct policy *p, const char *digest,
    const char *hash, size_t ca)
{
	size_t i;

	if (sbuf_adds(b, "\nFROM os AS sandbox\n") == -1 ||
	    apt_install(b, sandbox_pkgs, NULL) == -1)
		return -1;
	if (sbuf_adds(b, "COPY --from=node /opt/node/ /usr/local/\n") == -1)
		return -1;
	if (ca > 0 && sbuf_adds(b, "ENV NODE_EXTRA_CA_CERTS="
	    AISB_EXTRA_CA_PEM "\n") == -1)
		return -1;
	if (sbuf_printf(b, "RUN npm install --global --no-fund --no-audit "
	    "--update-notifier=false %s@%s \\\n"
	    " && npm cache clean --force\n", AISB_PI_PACKAGE,
	    p->pi_version) == -1)
		return -1;
	/* Ubuntu's images have a user "ubuntu" with uid 1000. */
	if (sbuf_printf(b,
	    "RUN if u=$(getent passwd %u); then userdel -r \"${u%%%%:*}\"; "
	    "fi \\\n"
	    " && if g=$(getent group %u); then groupdel \"${g%%%%:*}\"; "
	    "fi \\\n"
	    " && groupadd -g %u sandbox \\\n"
	    " && useradd -u %u -g %u -d " AISB_HOME " -m -s /bin/bash "
	    "sandbox \\\n"
	    " && mkdir -p " AISB_PROJECT_MNT " \\\n"
	    " && chown %u:%u " AISB_PROJECT_MNT "\n",
	    AISB_SANDBOX_UID, AISB_SANDBOX_GID, AISB_SANDBOX_GID,
	    AISB_SANDBOX_UID, AISB_SANDBOX_GID, AISB_SANDBOX_UID,
	    AISB_SANDBOX_GID) == -1)
		return -1;
	if (sbuf_adds(b, "COPY --from=build /out/aisb-init.deps "
	    "/out/aisb-gate.deps /usr/share/ai-sandbox/\n") == -1 ||
	    apt_install(b, NULL, "$(cat /usr/share/ai-sandbox/aisb-init.deps "
	    "/usr/share/ai-sandbox/aisb-gate.deps)") == -1)
		return -1;
	if (p->install.n > 0) {
		if (sbuf_adds(b, "RUN apt-get -q update \\\n"
		    " && apt-get -q install -y --no-install-recommends") == -1)
			return -1;
		for (i = 0; i < p->install.n; i++)
			if (sbuf_printf(b, " %s", p->install.v[i].s) == -1)
				return -1;
		if (sbuf_adds(b, " \\\n && rm -rf /var/lib/apt/lists/*\n") ==
		    -1)
			return -1;
	}
	if (sbuf_adds(b,
	    "COPY --from=build /out/aisb-init " AISB_INIT_PATH "\n"
	    "COPY --from=build /out/aisb-gate " AISB_GATE_PATH "\n") == -1 ||
	    manifest_head(b, "sandbox", p->base_image, digest, hash,
	    AISB_INIT_PATH " " AISB_GATE_PATH) == -1)
		return -1;
	if (sbuf_adds(b,
	    "      sed 's/^/verified /' /usr/local/share/ai-sandbox/node.txt; "
	    "\\\n"
	    "      npm ls --global --all --json | jq -r '[.. | objects | "
	    ".dependencies? // empty | to_entries[] | \"npm-package \\(.key) "
	    "\\(.value.version)\"] | unique[]'; \\\n") == -1 ||
	    manifest_tail(b) == -1)
		return -1;
	if (sbuf_adds(b, "WORKDIR " AISB_PROJECT_MNT "\n"
	    "ENTRYPOINT [\"" AISB_INIT_PATH "\"]\n") == -1)
		return -1;
	return labels(b, p, "sandbox", digest, hash);
}

/* Refuse a value the Containerfile could not carry as one word. */
static int
check_inputs(const struct policy *p, const struct containerfile_in *in,
    struct aisb_error *err)
{
	size_t i;

	if (!safe(p->base_image))
		return aisb_err(err, "base-image: cannot be rendered");
	if (in->base_digest != NULL &&
	    !containerfile_digest_valid(in->base_digest))
		return aisb_err(err, "base digest \"%.80s\" is not "
		    "sha256:HEX", in->base_digest);
	if (in->source_hash == NULL || strlen(in->source_hash) != 64 ||
	    strspn(in->source_hash, HEX) != 64)
		return aisb_err(err, "the source hash is not 64 hex digits");
	if (!safe(p->node_version) || !safe(p->pi_version))
		return aisb_err(err, "node-version or pi-version: cannot be "
		    "rendered");
	if (p->node_integrity != NULL && p->node_integrity[0] != '\0' &&
	    !safe(p->node_integrity))
		return aisb_err(err, "node-integrity: cannot be rendered");
	for (i = 0; i < p->install.n; i++)
		if (!safe(p->install.v[i].s))
			return aisb_err(err, "install: \"%.64s\" cannot be "
			    "rendered", p->install.v[i].s);
	return 0;
}

/* The whole Containerfile. */
int
containerfile_render(const struct policy *p,
    const struct containerfile_in *in, struct sbuf *b,
    struct aisb_error *err)
{
	char from[512];
	const char *digest = in->base_digest;

	if (check_inputs(p, in, err) == -1)
		return -1;
	if (containerfile_base_kind(p->base_image) ==
	    CONTAINERFILE_BASE_DEBOOTSTRAP && digest == NULL)
		return aisb_err(err, "base %s: no image id recorded; a "
		    "debootstrap base cannot be built unpinned",
		    p->base_image);
	if (containerfile_base_kind(p->base_image) == CONTAINERFILE_BASE_DIGEST)
		digest = strstr(p->base_image, "@") + 1;
	if (containerfile_base_from(p->base_image, digest, from,
	    sizeof(from)) == -1)
		return aisb_err(err, "base %s: cannot name it in FROM",
		    p->base_image);
	if (sbuf_printf(b,
	    "# The ai-sandbox images, rendered from the policy by ai-sandbox "
	    "%s.\n"
	    "# Build one with podman build --target sandbox (or gate) in a "
	    "context of\n"
	    "# src/ (the project's sources) and ca/ (extra CA certificates).\n"
	    "# Base: %s, %s%s.\n\n",
	    AISB_VERSION, p->base_image, digest ? "pinned to " : "",
	    digest ? digest : AISB_UNPINNED " (no digest recorded)") == -1)
		goto nomem;
	if (stage_os(b, from, in->ca_certs) == -1 ||
	    stage_build(b) == -1 ||
	    stage_node(b, p) == -1 ||
	    stage_gate(b, p, digest, in->source_hash) == -1 ||
	    stage_sandbox(b, p, digest, in->source_hash, in->ca_certs) == -1)
		goto nomem;
	return 0;
nomem:
	return aisb_err(err, "out of memory");
}
