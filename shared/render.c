/* Renderings of a policy: the nftables ruleset, the podman argv of the gate
 * and the sandbox, the init's arguments and plan. Pure and deterministic. */
#include <sys/socket.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisb.h"
#include "policy.h"

#define GATE_MEMORY	"256m"	/* one libevent process and its buffers */
#define GATE_PIDS	64

void
argv_init(struct argv *a)
{
	a->v = NULL;
	a->n = 0;
	a->cap = 0;
}

/* Free every word and the vector. */
void
argv_free(struct argv *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	argv_init(a);
}

/* Append a copy of s; the vector stays NULL-terminated. */
int
argv_add(struct argv *a, const char *s)
{
	char **v;
	size_t cap;

	if (a->n + 2 > a->cap) {
		cap = a->cap ? a->cap * 2 : 16;
		if ((v = realloc(a->v, cap * sizeof(*v))) == NULL)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	if ((a->v[a->n] = strdup(s)) == NULL)
		return -1;
	a->v[++a->n] = NULL;
	return 0;
}

/* Append a formatted word. */
int
argv_addf(struct argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n, rv;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	rv = argv_add(a, s);
	free(s);
	return rv;
}

/* Append the blank-separated words of s, at most max of them. */
int
argv_add_words(struct argv *a, const char *s, size_t max)
{
	const char *w;
	char *word;
	size_t n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			return 0;
		if (++n > max)
			return -1;
		for (w = s; *s != '\0' && *s != ' ' && *s != '\t'; s++)
			;
		if ((word = strndup(w, (size_t)(s - w))) == NULL)
			return -1;
		if (argv_add(a, word) == -1) {
			free(word);
			return -1;
		}
		free(word);
	}
}

/* Bytes a POSIX shell takes literally anywhere in a word. */
static int
shell_safe(const char *s, int first)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9'))
			continue;
		if (strchr("_-./:,@%+", *s) != NULL)
			continue;
		if (*s == '=' && !first)
			continue;
		return 0;
	}
	return 1;
}

/* Quote a word for a POSIX shell: bare when safe, else in single quotes. */
static int
shell_quote_word(struct sbuf *b, const char *s, int first)
{
	if (shell_safe(s, first))
		return sbuf_adds(b, s);
	if (sbuf_add(b, "'", 1) == -1)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s == '\'' ? sbuf_adds(b, "'\\''") : sbuf_add(b, s, 1))
			return -1;
	}
	return sbuf_add(b, "'", 1);
}

int
shell_quote(struct sbuf *b, const char *s)
{
	return shell_quote_word(b, s, 0);
}

/* The whole argv as one shell-quoted line. */
int
argv_quote_line(const struct argv *a, struct sbuf *b)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (i > 0 && sbuf_add(b, " ", 1) == -1)
			return -1;
		if (shell_quote_word(b, a->v[i], i == 0) == -1)
			return -1;
	}
	return sbuf_add(b, "\n", 1);
}

enum policy_backend
policy_backend_effective(const struct policy *p)
{
	/* Until a run detects podman 5, auto is podman 4's slirp4netns. */
	if (p->backend == POLICY_BACKEND_PASTA)
		return POLICY_BACKEND_PASTA;
	return POLICY_BACKEND_SLIRP4NETNS;
}

/* Does a bind mount need ",z"? */
int
policy_selinux_effective(const struct policy *p)
{
	if (p->selinux == POLICY_AUTO)
		return p->selinux_enforcing;
	return p->selinux == POLICY_YES;
}

/* The sandbox-side address of the host's loopback. */
static const char *
backend_host(const struct policy *p)
{
	return policy_backend_effective(p) == POLICY_BACKEND_PASTA ?
	    AISB_PASTA_HOST : AISB_SLIRP_HOST;
}

/* Where egress goes: the gate, a proxy, pinned addresses or nowhere. */
int
policy_egress(const struct policy *p, struct policy_egress *eg)
{
	char abuf[ADDR_STR_SIZE];

	memset(eg, 0, sizeof(*eg));
	if (p->net == POLICY_NET_FULL)
		return 0;
	eg->ruleset = 1;
	if (p->net == POLICY_NET_NONE)
		return 0;
	if (p->proxy != NULL && strcmp(p->proxy, "none") != 0) {
		eg->port = p->proxy_port;
		addr_ntop(&p->proxy_addr, abuf);
		if (strcmp(abuf, "127.0.0.1") == 0) {
			eg->host_loopback = 1;
			snprintf(eg->addr, sizeof(eg->addr), "%s",
			    backend_host(p));
		} else
			snprintf(eg->addr, sizeof(eg->addr), "%s", abuf);
	} else if (p->gate) {
		eg->gate = 1;
		eg->host_loopback = 1;
		snprintf(eg->addr, sizeof(eg->addr), "%s", backend_host(p));
	} else
		eg->dns = 1;
	return 0;
}

/* The resolvers: dns-server entries, else the backend's forwarder. */
int
policy_dns_targets(const struct policy *p, struct policy_strs *out)
{
	size_t i;
	const char *def;

	memset(out, 0, sizeof(*out));
	if (p->dns.n == 0) {
		def = policy_backend_effective(p) == POLICY_BACKEND_PASTA ?
		    AISB_PASTA_DNS : AISB_SLIRP_DNS;
		if ((out->v = calloc(1, sizeof(*out->v))) == NULL ||
		    (out->v[0].s = strdup(def)) == NULL) {
			free(out->v);
			out->v = NULL;
			return -1;
		}
		out->n = out->cap = 1;
		return 0;
	}
	if ((out->v = calloc(p->dns.n, sizeof(*out->v))) == NULL)
		return -1;
	out->cap = p->dns.n;
	for (i = 0; i < p->dns.n; i++) {
		out->v[i] = p->dns.v[i];
		if ((out->v[i].s = strdup(p->dns.v[i].s)) == NULL)
			return -1;
		out->n++;
	}
	return 0;
}

static void
dns_targets_free(struct policy_strs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].s);
	free(l->v);
}

/* "ip daddr X" or "ip6 daddr X", with the prefix unless it is a host. */
static int
rule_daddr(struct sbuf *b, const struct aisb_cidr *c, int *v6)
{
	char abuf[ADDR_STR_SIZE];
	int full = c->addr.family == AF_INET6 ? 128 : 32;

	if (c->addr.family == AF_INET6)
		*v6 = 1;
	addr_ntop(&c->addr, abuf);
	if (c->prefix == full)
		return sbuf_printf(b, "\t\t%s daddr %s",
		    c->addr.family == AF_INET6 ? "ip6" : "ip", abuf);
	return sbuf_printf(b, "\t\t%s daddr %s/%d",
	    c->addr.family == AF_INET6 ? "ip6" : "ip", abuf, c->prefix);
}

/* One direct rule for an address entry: any protocol, or TCP to a port. */
static int
rule_entry(struct sbuf *b, const struct allow_entry *e, int *v6)
{
	if (rule_daddr(b, &e->cidr, v6) == -1)
		return -1;
	if (e->port != 0)
		return sbuf_printf(b, " tcp dport %u accept\n", e->port);
	return sbuf_adds(b, " accept\n");
}

/* The rule that lets the sandbox reach the gate (or the proxy). */
static int
rule_gate(struct sbuf *b, const char *gate_addr, uint16_t port, int *v6,
    struct aisb_error *err)
{
	struct aisb_cidr c;
	char pbuf[16];

	memset(&c, 0, sizeof(c));
	if (addr_parse_literal(gate_addr, strlen(gate_addr), &c.addr) != 1)
		return aisb_err(err, "gate address \"%.64s\" is not an IP "
		    "address", gate_addr);
	c.prefix = c.addr.family == AF_INET6 ? 128 : 32;
	if (port == 0)
		snprintf(pbuf, sizeof(pbuf), "%s", AISB_PH_GATE_PORT);
	else
		snprintf(pbuf, sizeof(pbuf), "%u", port);
	if (rule_daddr(b, &c, v6) == -1 ||
	    sbuf_printf(b, " tcp dport %s accept\n", pbuf) == -1)
		return aisb_err(err, "out of memory");
	return 0;
}

/* Without the gate: names become pinned addresses when a run resolves
 * them; a preview says where they go. */
static int
rule_name_notes(struct sbuf *b, const struct policy *p)
{
	size_t i;
	const struct allow_entry *e;

	if (p->pinned.n > 0)
		return 0;
	for (i = 0; i < p->allow.n; i++) {
		e = &p->allow.v[i].e;
		if (e->kind != ALLOW_KIND_NAME)
			continue;
		if (sbuf_printf(b, "\t\t# %s: its addresses are resolved and "
		    "pinned here when the run starts (tcp dport %s)\n",
		    e->text, e->port ? "as given" : "80 and 443") == -1)
			return -1;
	}
	return 0;
}

/* UDP and TCP 53 to each resolver. */
static int
rule_dns(struct sbuf *b, const struct policy *p, int *v6)
{
	struct policy_strs t;
	struct aisb_cidr c;
	size_t i;
	int rv = 0;

	if (policy_dns_targets(p, &t) == -1)
		return -1;
	for (i = 0; i < t.n && rv == 0; i++) {
		memset(&c, 0, sizeof(c));
		if (addr_parse_literal(t.v[i].s, strlen(t.v[i].s), &c.addr) !=
		    1) {
			rv = -1;
			break;
		}
		c.prefix = c.addr.family == AF_INET6 ? 128 : 32;
		if (rule_daddr(b, &c, v6) == -1 ||
		    sbuf_adds(b, " udp dport 53 accept\n") == -1 ||
		    rule_daddr(b, &c, v6) == -1 ||
		    sbuf_adds(b, " tcp dport 53 accept\n") == -1)
			rv = -1;
	}
	dns_targets_free(&t);
	return rv;
}

/* The output chain's accept rules after loopback and established. */
static int
ruleset_output(const struct policy *p, const char *gate_addr,
    uint16_t gate_port, struct sbuf *b, int *v6, struct aisb_error *err)
{
	size_t i;

	if (p->net != POLICY_NET_ALLOW)
		return 0;
	if (gate_addr != NULL &&
	    rule_gate(b, gate_addr, gate_port, v6, err) == -1)
		return -1;
	for (i = 0; i < p->allow.n; i++)
		if (p->allow.v[i].e.kind == ALLOW_KIND_ADDR &&
		    rule_entry(b, &p->allow.v[i].e, v6) == -1)
			return aisb_err(err, "out of memory");
	for (i = 0; i < p->pinned.n; i++)
		if (rule_entry(b, &p->pinned.v[i].e, v6) == -1)
			return aisb_err(err, "out of memory");
	if (!p->gate && (rule_name_notes(b, p) == -1 ||
	    rule_dns(b, p, v6) == -1))
		return aisb_err(err, "dns-server: without the gate, a "
		    "resolver must be a plain address (port 53)");
	return 0;
}

/* The whole ruleset text; the init installs exactly this. */
int
policy_render_ruleset(const struct policy *p, const char *gate_addr,
    uint16_t gate_port, struct sbuf *out, struct aisb_error *err)
{
	struct sbuf rules;
	int v6 = 0, rv = -1;

	if (p->net == POLICY_NET_FULL)
		return aisb_err(err, "net=full installs no ruleset");
	sbuf_init(&rules);
	if (ruleset_output(p, gate_addr, gate_port, &rules, &v6, err) == -1)
		goto out;
	/* IPv6 needs neighbour discovery once anything v6 is allowed. */
	if (sbuf_adds(out, "table inet aisb {\n"
	    "\tchain output {\n"
	    "\t\ttype filter hook output priority filter; policy drop;\n"
	    "\t\toifname \"lo\" accept\n"
	    "\t\tct state established,related accept\n") == -1 ||
	    sbuf_add(out, rules.p ? rules.p : "", rules.len) == -1 ||
	    (v6 && sbuf_adds(out, "\t\ticmpv6 type { nd-neighbor-solicit, "
	    "nd-neighbor-advert, nd-router-solicit } accept\n") == -1) ||
	    sbuf_adds(out, "\t}\n"
	    "\tchain input {\n"
	    "\t\ttype filter hook input priority filter; policy drop;\n"
	    "\t\tiifname \"lo\" accept\n"
	    "\t\tct state established,related accept\n") == -1 ||
	    (v6 && sbuf_adds(out, "\t\ticmpv6 type { nd-neighbor-solicit, "
	    "nd-neighbor-advert, nd-router-advert } accept\n") == -1) ||
	    sbuf_adds(out, "\t}\n}\n") == -1) {
		aisb_err(err, "out of memory");
		goto out;
	}
	rv = 0;
out:
	sbuf_free(&rules);
	return rv;
}

/* A host path for podman's volume syntax, which splits on ':'. */
static int
volume_path_ok(const char *what, const char *path, struct aisb_error *err)
{
	if (strchr(path, ':') != NULL)
		return aisb_err(err, "%s %s contains ':', which podman's "
		    "volume syntax cannot carry", what, path);
	return 0;
}

/* The gate port, or its placeholder in a preview. */
static const char *
port_text(const struct render_ctx *ctx, char *buf, size_t len)
{
	if (ctx->gate_port == 0)
		snprintf(buf, len, "%s", AISB_PH_GATE_PORT);
	else
		snprintf(buf, len, "%u", ctx->gate_port);
	return buf;
}

/* "podman run" and what every container of a session shares. */
static int
argv_run_head(const struct policy *p, struct argv *a)
{
	if (argv_add(a, p->podman) == -1 || argv_add(a, "run") == -1)
		return -1;
	if (!p->keep && argv_add(a, "--rm") == -1)
		return -1;
	if (p->runtime == POLICY_RUNTIME_RUNC &&
	    argv_add(a, "--runtime=runc") == -1)
		return -1;
	if (p->runtime == POLICY_RUNTIME_CRUN &&
	    argv_add(a, "--runtime=crun") == -1)
		return -1;
	return 0;
}

/* ps's policy column: the network mode, the entry count, the way out
 * ("net=allow,allow=3,via=gate"); no names, no values. */
void
policy_summary(const struct policy *p, char *buf, size_t len)
{
	static const char *const nets[] = { "allow", "none", "full" };
	const char *via = "gate";

	if (p->net != POLICY_NET_ALLOW) {
		snprintf(buf, len, "net=%s", nets[p->net]);
		return;
	}
	if (p->proxy != NULL && strcmp(p->proxy, "none") != 0)
		via = "proxy";
	else if (!p->gate)
		via = "pinned";
	else if (p->gate_name != NULL && p->gate_name[0] != '\0')
		via = "named-gate";
	snprintf(buf, len, "net=allow,allow=%zu,via=%s", p->allow.n, via);
}

/* The labels ps and clean find a session's containers by. */
static int
argv_labels(const struct policy *p, const struct render_ctx *ctx,
    const char *role, struct argv *a)
{
	char sum[96];

	policy_summary(p, sum, sizeof(sum));
	if (argv_addf(a, "--label=aisb.session=%s", ctx->session) == -1 ||
	    argv_addf(a, "--label=aisb.role=%s", role) == -1 ||
	    argv_addf(a, "--label=aisb.project=%s", p->project_dir) == -1 ||
	    argv_addf(a, "--label=aisb.policy=%s", sum) == -1)
		return -1;
	return 0;
}

/* ":ro" or ":rw", with ",z" when SELinux needs the relabel. */
static const char *
volume_opts(const struct policy *p, int ro)
{
	if (policy_selinux_effective(p))
		return ro ? "ro,z" : "rw,z";
	return ro ? "ro" : "rw";
}

/* Explicit ulimits: podman's defaults can exceed the host's hard limits. */
static int
argv_ulimits(const struct policy *p, struct argv *a)
{
	if (argv_addf(a, "--ulimit=nofile=%llu:%llu",
	    (unsigned long long)p->nofile, (unsigned long long)p->nofile) ==
	    -1 || argv_addf(a, "--ulimit=nproc=%llu:%llu",
	    (unsigned long long)p->nproc, (unsigned long long)p->nproc) == -1)
		return -1;
	return 0;
}

/* The gate: host network, read-only, no capabilities, nobody. */
int
policy_render_gate_argv(const struct policy *p, const struct render_ctx *ctx,
    struct argv *a, struct aisb_error *err)
{
	char pbuf[16];
	size_t i;

	if (volume_path_ok("session directory", ctx->session_dir, err) == -1)
		return -1;
	if (argv_run_head(p, a) == -1 ||
	    argv_add(a, "--detach") == -1 ||
	    argv_addf(a, "--name=aisb-gate-%s", ctx->session) == -1 ||
	    argv_add(a, "--network=host") == -1 ||
	    argv_add(a, "--read-only") == -1 ||
	    (!p->rootful && argv_addf(a, "--userns=keep-id:uid=%d,gid=%d",
	    AISB_GATE_UID, AISB_GATE_GID) == -1) ||
	    argv_addf(a, "--user=%d:%d", AISB_GATE_UID, AISB_GATE_GID) == -1 ||
	    argv_add(a, "--cap-drop=ALL") == -1 ||
	    argv_add(a, "--security-opt=no-new-privileges") == -1 ||
	    argv_addf(a, "--pids-limit=%d", GATE_PIDS) == -1 ||
	    argv_add(a, "--memory=" GATE_MEMORY) == -1 ||
	    argv_add(a, "--memory-swap=" GATE_MEMORY) == -1 ||
	    argv_ulimits(p, a) == -1 ||
	    argv_labels(p, ctx, "gate", a) == -1 ||
	    argv_addf(a, "--volume=%s/allow:%s:%s", ctx->session_dir,
	    AISB_GATE_ALLOW_FILE, volume_opts(p, 1)) == -1 ||
	    argv_addf(a, "--volume=%s/log:%s:%s", ctx->session_dir,
	    AISB_GATE_LOG_DIR, volume_opts(p, 0)) == -1 ||
	    argv_add(a, "--entrypoint=" AISB_GATE_PATH) == -1 ||
	    argv_add(a, ctx->gate_image ? ctx->gate_image : ctx->image) == -1 ||
	    argv_add(a, "--listen") == -1 ||
	    argv_addf(a, "127.0.0.1:%s", port_text(ctx, pbuf,
	    sizeof(pbuf))) == -1 ||
	    argv_add(a, "--allow-file") == -1 ||
	    argv_add(a, AISB_GATE_ALLOW_FILE) == -1 ||
	    argv_add(a, "--log") == -1 ||
	    argv_add(a, AISB_GATE_LOG_FILE) == -1)
		return aisb_err(err, "out of memory");
	for (i = 0; i < p->dns.n; i++)
		if (argv_add(a, "--dns-server") == -1 ||
		    argv_add(a, p->dns.v[i].s) == -1)
			return aisb_err(err, "out of memory");
	return 0;
}

/*
 * The init starts as root in the user namespace (--user=0:0; keep-id maps
 * the user to uid 1000) and needs NET_ADMIN for the ruleset, SETPCAP to
 * empty the bounding set, SETGID and SETUID to drop to 1000; nothing else.
 * no-new-privileges does not stop a drop: it only stops gaining privileges
 * through execve.
 */
static int
argv_identity(const struct policy *p, const struct render_ctx *ctx,
    const struct policy_egress *eg, struct argv *a)
{
	/*
	 * Rootless: keep-id maps the user to uid 1000, so the project's
	 * files stay theirs. Rootful podman (ai-sandbox run as root) has no
	 * keep-id: the sandbox user is host uid 1000.
	 */
	if (argv_addf(a, "--name=aisb-%s", ctx->session) == -1 ||
	    argv_add(a, "--hostname=ai-sandbox") == -1 ||
	    (!p->rootful && argv_addf(a, "--userns=keep-id:uid=%d,gid=%d",
	    AISB_SANDBOX_UID, AISB_SANDBOX_GID) == -1) ||
	    argv_add(a, "--user=0:0") == -1 ||
	    argv_add(a, "--cap-drop=ALL") == -1)
		return -1;
	if (eg->ruleset && argv_add(a, "--cap-add=NET_ADMIN") == -1)
		return -1;
	if (!p->insecure_keep_root && argv_add(a, "--cap-add=SETGID") == -1)
		return -1;
	if (argv_add(a, "--cap-add=SETPCAP") == -1)
		return -1;
	if (!p->insecure_keep_root && argv_add(a, "--cap-add=SETUID") == -1)
		return -1;
	return argv_add(a, "--security-opt=no-new-privileges");
}

/* The network mode, and resolvers without the gate. */
static int
argv_network(const struct policy *p, const struct policy_egress *eg,
    struct argv *a)
{
	struct policy_strs t;
	size_t i;
	int rv = 0;

	if (p->net == POLICY_NET_NONE)
		return argv_add(a, "--network=none");
	if (policy_backend_effective(p) == POLICY_BACKEND_PASTA)
		rv = argv_add(a, eg->host_loopback ?
		    "--network=pasta:--map-host-loopback," AISB_PASTA_HOST :
		    "--network=pasta:--no-map-gw");
	else
		rv = argv_add(a, eg->host_loopback ?
		    "--network=slirp4netns:allow_host_loopback=true" :
		    "--network=slirp4netns");
	if (rv == -1 || !eg->dns || p->dns.n == 0)
		return rv;
	if (policy_dns_targets(p, &t) == -1)
		return -1;
	for (i = 0; i < t.n && rv == 0; i++)
		rv = argv_addf(a, "--dns=%s", t.v[i].s);
	dns_targets_free(&t);
	return rv;
}

/* The resource limits. */
static int
argv_limits(const struct policy *p, struct argv *a)
{
	char mem[32], cpus[32], tmp[32], shm[32];

	policy_size_text(p->memory, mem, sizeof(mem));
	policy_cpus_text(p->cpus, cpus, sizeof(cpus));
	policy_size_text(p->tmp_size, tmp, sizeof(tmp));
	policy_size_text(p->shm_size, shm, sizeof(shm));
	if (argv_addf(a, "--pids-limit=%llu", (unsigned long long)p->pids) ==
	    -1 || argv_addf(a, "--memory=%s", mem) == -1 ||
	    argv_addf(a, "--memory-swap=%s", mem) == -1 ||
	    argv_addf(a, "--cpus=%s", cpus) == -1 ||
	    argv_addf(a, "--shm-size=%s", shm) == -1 ||
	    argv_addf(a, "--tmpfs=/tmp:rw,nosuid,nodev,size=%s,mode=1777",
	    tmp) == -1)
		return -1;
	return argv_ulimits(p, a);
}

/* Launcher-made, non-secret variables: the proxy settings. */
static int
argv_env(const struct policy *p, const struct render_ctx *ctx,
    const struct policy_egress *eg, struct argv *a)
{
	static const char *const names[] = {
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
		NULL };
	char pbuf[16], url[ADDR_STR_SIZE + 32];
	size_t i;

	if (argv_addf(a, "--env-file=%s", ctx->env_file) == -1)
		return -1;
	if (eg->addr[0] == '\0')
		return 0;
	if (eg->port != 0)
		snprintf(pbuf, sizeof(pbuf), "%u", eg->port);
	else
		port_text(ctx, pbuf, sizeof(pbuf));
	snprintf(url, sizeof(url), strchr(eg->addr, ':') ? "http://[%s]:%s" :
	    "http://%s:%s", eg->addr, pbuf);
	for (i = 0; names[i] != NULL; i++)
		if (argv_addf(a, "--env=%s=%s", names[i], url) == -1)
			return -1;
	if (argv_add(a, "--env=NO_PROXY=localhost,127.0.0.1,::1") == -1 ||
	    argv_add(a, "--env=no_proxy=localhost,127.0.0.1,::1") == -1)
		return -1;
	return 0;
}

/* The working directory, the home, the user's mounts. */
static int
argv_mounts(const struct policy *p, struct argv *a, struct aisb_error *err)
{
	size_t i;

	if (p->cwd) {
		if (volume_path_ok("working directory", p->project_dir, err) ==
		    -1)
			return -1;
		if (argv_addf(a, "--volume=%s:%s:%s", p->project_dir,
		    AISB_PROJECT_MNT, volume_opts(p, p->read_only)) == -1)
			return aisb_err(err, "out of memory");
	}
	/*
	 * The home is a named volume (run.c creates it, labelled, before the
	 * run); --ephemeral-home gives an anonymous one, which --rm removes.
	 * Not a tmpfs: podman 4.3 has no uid= option for one (measured:
	 * "unknown mount option"), and ignores mode= on a directory the image
	 * has (measured: /home/sandbox stayed 0755 root), so uid 1000 could
	 * not write it; the init cannot chown.
	 */
	if (p->ephemeral_home ? argv_addf(a, "--volume=%s", AISB_HOME) :
	    argv_addf(a, "--volume=%s:%s", p->home_volume, AISB_HOME))
		return aisb_err(err, "out of memory");
	for (i = 0; i < p->mounts.n; i++)
		if (argv_addf(a, "--volume=%s:%s:%s", p->mounts.v[i].src,
		    p->mounts.v[i].dst, volume_opts(p, p->mounts.v[i].ro)) ==
		    -1)
			return aisb_err(err, "out of memory");
	return 0;
}

/* -i when stdin is passed on, -t only between two terminals. */
static int
argv_tty(const struct policy *p, struct argv *a)
{
	if (p->interactive && argv_add(a, "--interactive") == -1)
		return -1;
	if (p->tty && p->stdin_tty && p->stdout_tty &&
	    argv_add(a, "--tty") == -1)
		return -1;
	return 0;
}

/* The init's arguments: network mode, gate, entries, drop, command. */
int
policy_render_init_args(const struct policy *p, const struct render_ctx *ctx,
    struct argv *a, struct aisb_error *err)
{
	static const char *const nets[] = { "allow", "none", "full" };
	struct policy_egress eg;
	struct policy_strs t;
	char pbuf[16];
	size_t i;
	int rv = 0;

	policy_egress(p, &eg);
	if (argv_addf(a, "--net=%s", nets[p->net]) == -1)
		return aisb_err(err, "out of memory");
	if (eg.port != 0)
		snprintf(pbuf, sizeof(pbuf), "%u", eg.port);
	else
		port_text(ctx, pbuf, sizeof(pbuf));
	if (eg.addr[0] != '\0' && argv_addf(a, strchr(eg.addr, ':') ?
	    "--gate=[%s]:%s" : "--gate=%s:%s", eg.addr, pbuf) == -1)
		return aisb_err(err, "out of memory");
	for (i = 0; p->net == POLICY_NET_ALLOW && i < p->allow.n; i++)
		if (p->allow.v[i].e.kind == ALLOW_KIND_ADDR &&
		    argv_addf(a, "--allow=%s", p->allow.v[i].e.text) == -1)
			return aisb_err(err, "out of memory");
	for (i = 0; p->net == POLICY_NET_ALLOW && i < p->pinned.n; i++)
		if (argv_addf(a, "--allow=%s", p->pinned.v[i].e.text) == -1)
			return aisb_err(err, "out of memory");
	if (eg.dns) {
		if (policy_dns_targets(p, &t) == -1)
			return aisb_err(err, "out of memory");
		for (i = 0; i < t.n && rv == 0; i++)
			rv = argv_addf(a, "--dns=%s", t.v[i].s);
		dns_targets_free(&t);
		if (rv == -1)
			return aisb_err(err, "out of memory");
	}
	if (p->insecure_keep_root)
		rv = argv_add(a, "--keep-root");
	else if ((rv = argv_addf(a, "--uid=%d", AISB_SANDBOX_UID)) == 0)
		rv = argv_addf(a, "--gid=%d", AISB_SANDBOX_GID);
	if (rv == 0 && p->allow_unenforced)
		rv = argv_add(a, "--allow-unenforced");
	if (rv == 0)
		rv = argv_add(a, "--");
	if (rv == -1)
		return aisb_err(err, "out of memory");
	for (i = 0; i < p->command.n; i++)
		if (argv_add(a, p->command.v[i]) == -1)
			return aisb_err(err, "out of memory");
	return 0;
}

/* The sandbox's whole podman argv. */
int
policy_render_sandbox_argv(const struct policy *p,
    const struct render_ctx *ctx, struct argv *a, struct aisb_error *err)
{
	struct policy_egress eg;
	size_t i;

	policy_egress(p, &eg);
	if (argv_run_head(p, a) == -1 ||
	    argv_identity(p, ctx, &eg, a) == -1 ||
	    argv_network(p, &eg, a) == -1 ||
	    argv_limits(p, a) == -1 ||
	    argv_labels(p, ctx, "sandbox", a) == -1 ||
	    argv_env(p, ctx, &eg, a) == -1)
		return aisb_err(err, "out of memory");
	if (argv_mounts(p, a, err) == -1)
		return -1;
	if (argv_addf(a, "--workdir=%s", p->workdir) == -1 ||
	    argv_add(a, "--entrypoint=" AISB_INIT_PATH) == -1 ||
	    argv_tty(p, a) == -1)
		return aisb_err(err, "out of memory");
	for (i = 0; i < p->extra.n; i++)
		if (argv_add(a, p->extra.v[i]) == -1)
			return aisb_err(err, "out of memory");
	if (argv_add(a, ctx->image) == -1)
		return aisb_err(err, "out of memory");
	return policy_render_init_args(p, ctx, a, err);
}

/* The numbered steps of the init's plan. */
static int
plan_steps(const struct policy *p, const struct policy_egress *eg,
    struct sbuf *b)
{
	int n = 1;
	const char *fail77 = p->allow_unenforced ? "warn and go on "
	    "(allow-unenforced)" : "stop with exit status 77";
	const char *fail78 = p->allow_unenforced ? "warn and go on "
	    "(allow-unenforced)" : "stop with exit status 78";

	if (!eg->ruleset) {
		if (sbuf_printf(b, "%d. Install no ruleset: net=full leaves "
		    "egress unlimited.\n", n++) == -1)
			return -1;
	} else if (sbuf_printf(b, "%d. As root with CAP_NET_ADMIN, install "
	    "the ruleset below with \"nft -f -\"; if that fails, %s.\n"
	    "%d. Verify it: \"nft list table inet aisb\" must show both "
	    "chains with policy drop; if not, %s.\n", n, fail77, n + 1,
	    fail78) == -1)
		return -1;
	else
		n += 2;
	if (p->insecure_keep_root) {
		if (sbuf_printf(b, "%d. Keep uid 0 (insecure-keep-root); empty "
		    "the bounding, inheritable and ambient capability sets; "
		    "no_new_privs stays set.\n", n++) == -1)
			return -1;
	} else if (sbuf_printf(b, "%d. Drop privileges: empty the capability "
	    "bounding set, setgroups to none, setresgid %d, setresuid %d, "
	    "empty the inheritable and ambient sets; no_new_privs stays set "
	    "(podman's no-new-privileges).\n", n++, AISB_SANDBOX_GID,
	    AISB_SANDBOX_UID) == -1)
		return -1;
	if (sbuf_printf(b, "%d. Exec in %s with HOME=%s:\n   ", n,
	    p->workdir, AISB_HOME) == -1 ||
	    argv_quote_line(&p->command, b) == -1)
		return -1;
	return 0;
}

/* The --print-entrypoint text: the plan, then the ruleset. */
int
policy_render_entrypoint(const struct policy *p, const struct render_ctx *ctx,
    struct sbuf *out, struct aisb_error *err)
{
	struct policy_egress eg;

	policy_egress(p, &eg);
	if (sbuf_printf(out, "# What %s does in the sandbox, in order.\n",
	    AISB_INIT_PATH) == -1 || plan_steps(p, &eg, out) == -1)
		return aisb_err(err, "out of memory");
	if (!eg.ruleset)
		return 0;
	if (sbuf_adds(out, "\n# The nftables ruleset.\n") == -1)
		return aisb_err(err, "out of memory");
	return policy_render_ruleset(p, eg.addr[0] ? eg.addr : NULL,
	    eg.port ? eg.port : ctx->gate_port, out, err);
}
