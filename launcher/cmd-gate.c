/*
 * gate: a named gate that outlives sessions, and the audit of any gate's
 * log.
 *
 *	gate up [--name NAME] [FLAG...]	start aisb-gate-named-NAME
 *	gate status [--name NAME]	state, uptime, allowlist, requests
 *	gate down [--name NAME]		remove the container
 *	gate reload [--name NAME] [FLAG...]	new allowlist, SIGHUP
 *	gate logs [--session ID|--name NAME] [--since T] [--follow]
 *	    [--json] [--denied]
 *
 * A named gate is the per-session gate's container (the same argv from
 * policy_render_gate_argv) with session "named-NAME" and its files under
 * state-dir/gates/NAME: allow (0600), log/gate.log and port. Podman is
 * exec'd with argv arrays only.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define GATE_DEFAULT_NAME	"default"
#define GATE_SESSION_PREFIX	"named-"
#define GATE_WAIT_MS		20000	/* first start may load the image */
#define GATE_RELOAD_WAIT_MS	5000
#define GATE_POLL_MS		50
#define GATE_FOLLOW_MS		250	/* --follow polls the file this often */
#define GATE_READ_CHUNK		65536
#define GATE_SCAN_MAX		100000	/* directory entries looked at */
/* SIGTERM drains open tunnels for the gate's --drain-timeout (10 s) and
 * logs each; SIGKILL comes only after that. */
#define GATE_STOP_TIME		"--time=15"

enum gate_verb {
	GATE_UP,
	GATE_STATUS,
	GATE_DOWN,
	GATE_RELOAD,
	GATE_LOGS,
};

static const char *const gate_verbs[] = { "up", "status", "down", "reload",
	"logs", NULL };

struct gate_cmd {
	enum gate_verb	 verb;
	const char	*name;
	const char	*session;
	const char	*since;
	int64_t		 since_ms;	/* --since, parsed; 0: none */
	int		 named;		/* --name was given */
	int		 follow;
	int		 json;
	int		 denied;
};

/* What podman says about a named gate's container. */
struct gate_state {
	int		 exists;
	int		 running;
	char		 status[32];
	int64_t		 started;	/* seconds since the epoch */
	char		 image[256];
	uint16_t	 port;		/* from its aisb.gate-port label */
};

static volatile sig_atomic_t gate_stop;

static void
gate_sighandler(int sig)
{
	gate_stop = sig;
}

int
gate_name_valid(const char *s)
{
	return policy_name_valid(s);
}

/* The value of an option: "--opt=value" or the next word. */
static int
gate_optval(const struct argv *a, size_t *i, const char *eq,
    const char *opt, const char **v, struct aisb_error *err)
{
	if (eq != NULL) {
		*v = eq + 1;
		return 0;
	}
	if (*i + 1 >= a->n)
		return aisb_err(err, "gate: %s: missing argument", opt);
	*v = a->v[++*i];
	return 0;
}

/* A policy flag after the verb of up or reload, applied like args.c. */
static int
gate_policy_flag(struct launcher *L, const char *verb, const struct argv *a,
    size_t *i, struct aisb_error *err)
{
	const char *w = a->v[*i], *eq = strchr(w, '='), *value = NULL;
	size_t len = eq ? (size_t)(eq - w) : strlen(w);
	const struct policy_key *k;
	struct policy_origin o;

	if ((k = policy_key_by_flag(w, len)) == NULL)
		return aisb_err(err, "gate %s: %.*s: unknown flag", verb,
		    (int)(len > 64 ? 64 : len), w);
	if (k->flag_value != NULL) {
		if (eq != NULL)
			return aisb_err(err, "%s: takes no argument", k->flag);
		value = k->flag_value;
	} else if (gate_optval(a, i, eq, k->flag, &value, err) == -1)
		return -1;
	policy_origin_set(&o, POLICY_SRC_FLAG, "%s", k->flag);
	return policy_set(&L->policy, k, value, &o, err);
}

/* The words after "gate": the verb first, then its options. */
static int
gate_parse(struct launcher *L, struct gate_cmd *c, struct aisb_error *err)
{
	const struct argv *a = &L->policy.args;
	const char *w, *eq, *v = NULL;
	struct timespec now;
	size_t i, len;
	int k;

	memset(c, 0, sizeof(*c));
	c->name = GATE_DEFAULT_NAME;
	if (L->policy.dashdash || a->n == 0)
		return aisb_err(err, "gate: give one of up, status, down, "
		    "reload, logs");
	for (k = 0; gate_verbs[k] != NULL; k++)
		if (strcmp(a->v[0], gate_verbs[k]) == 0)
			break;
	if (gate_verbs[k] == NULL)
		return aisb_err(err, "gate: %.64s: not one of up, status, down, "
		    "reload, logs", a->v[0]);
	c->verb = (enum gate_verb)k;
	for (i = 1; i < a->n; i++) {
		w = a->v[i];
		eq = strchr(w, '=');
		len = eq ? (size_t)(eq - w) : strlen(w);
		if (len == 6 && strncmp(w, "--name", 6) == 0) {
			if (gate_optval(a, &i, eq, "--name", &c->name,
			    err) == -1)
				return -1;
			if (!gate_name_valid(c->name))
				return aisb_err(err, "gate: --name %.64s: a "
				    "name is 1-%d letters, digits, '_', '.' or "
				    "'-', starting with a letter or digit",
				    c->name, GATE_NAME_MAX);
			c->named = 1;
			continue;
		}
		if (c->verb == GATE_LOGS) {
			if (len == 9 && strncmp(w, "--session", 9) == 0) {
				if (gate_optval(a, &i, eq, "--session",
				    &c->session, err) == -1)
					return -1;
				if (!gate_name_valid(c->session))
					return aisb_err(err, "gate logs: "
					    "--session %.64s: not a session id",
					    c->session);
				continue;
			}
			if (len == 7 && strncmp(w, "--since", 7) == 0) {
				if (gate_optval(a, &i, eq, "--since", &v,
				    err) == -1)
					return -1;
				c->since = v;
				clock_gettime(CLOCK_REALTIME, &now);
				if (audit_parse_since(v, (int64_t)now.tv_sec *
				    1000 + now.tv_nsec / 1000000, &c->since_ms,
				    err) == -1)
					return -1;
				continue;
			}
			if (eq == NULL && strcmp(w, "--follow") == 0) {
				c->follow = 1;
				continue;
			}
			if (eq == NULL && strcmp(w, "--json") == 0) {
				c->json = 1;
				continue;
			}
			if (eq == NULL && strcmp(w, "--denied") == 0) {
				c->denied = 1;
				continue;
			}
		}
		if ((c->verb == GATE_UP || c->verb == GATE_RELOAD) &&
		    strncmp(w, "--", 2) == 0 && len > 2) {
			if (gate_policy_flag(L, gate_verbs[c->verb], a, &i,
			    err) == -1)
				return -1;
			continue;
		}
		return aisb_err(err, "gate %s: %.64s: unknown %s",
		    gate_verbs[c->verb], w, w[0] == '-' ? "flag" : "argument");
	}
	if (c->session != NULL && c->named)
		return aisb_err(err, "gate logs: --session and --name exclude "
		    "each other");
	return 0;
}

/* The container's name: aisb-gate-named-NAME, as render.c makes it. */
static void
gate_container(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "aisb-gate-" GATE_SESSION_PREFIX "%s", name);
}

/* Ask podman about the named gate's container. */
static int
gate_inspect(const struct launcher *L, const char *name,
    struct gate_state *st, struct aisb_error *err)
{
	char cname[128], *f[5], *p;
	struct sbuf out;
	unsigned long port;
	int rc, i;

	memset(st, 0, sizeof(*st));
	gate_container(name, cname, sizeof(cname));
	sbuf_init(&out);
	rc = ops_podman(L, &out, &out, "container", "inspect", "--format",
	    "{{.State.Status}}|{{.State.Running}}|{{.State.StartedAt.Unix}}|"
	    "{{.ImageName}}|{{index .Config.Labels \"aisb.gate-port\"}}",
	    cname, (char *)NULL);
	if (rc == -1 || rc == 127) {
		sbuf_free(&out);
		return aisb_err(err, "%s does not run: is podman installed? "
		    "(ai-sandbox doctor says more)", L->policy.podman);
	}
	if (rc != 0) {
		/* "no such container" is the one answer that is not an error. */
		if (out.p != NULL && strstr(out.p, "no such") != NULL) {
			sbuf_free(&out);
			return 0;
		}
		aisb_err(err, "podman container inspect %s: %s", cname,
		    ops_last_line(&out));
		sbuf_free(&out);
		return -1;
	}
	ops_last_line(&out);
	p = out.p ? out.p : "";
	for (i = 0; i < 5; i++) {
		f[i] = p;
		if ((p = strchr(p, '|')) == NULL && i < 4) {
			sbuf_free(&out);
			return aisb_err(err, "podman container inspect %s: "
			    "unexpected output", cname);
		}
		if (p != NULL)
			*p++ = '\0';
	}
	st->exists = 1;
	snprintf(st->status, sizeof(st->status), "%s", f[0]);
	st->running = strcmp(f[1], "true") == 0;
	st->started = strtoll(f[2], NULL, 10);
	snprintf(st->image, sizeof(st->image), "%s", f[3]);
	errno = 0;
	port = strtoul(f[4], &p, 10);
	if (errno == 0 && p != f[4] && *p == '\0' && port > 0 && port < 65536)
		st->port = (uint16_t)port;
	sbuf_free(&out);
	return 1;
}

int
gate_named_port(struct launcher *L, const char *name, uint16_t *port,
    struct aisb_error *err)
{
	struct gate_state st;
	int rc;

	if (!gate_name_valid(name))
		return aisb_err(err, "--gate %.64s: not a gate name", name);
	if ((rc = gate_inspect(L, name, &st, err)) == -1)
		return -1;
	if (rc == 0)
		return aisb_err(err, "--gate %s: no such gate (start it with "
		    "ai-sandbox gate up --name %s)", name, name);
	if (!st.running)
		return aisb_err(err, "--gate %s: the gate is %s, not running "
		    "(ai-sandbox gate down --name %s, then gate up)", name,
		    st.status, name);
	if (st.port == 0)
		return aisb_err(err, "--gate %s: the container has no "
		    "aisb.gate-port label", name);
	*port = st.port;
	return 0;
}

/* state-dir/gates/NAME[/rest]. */
static int
gate_path(const struct launcher *L, const char *name, const char *rest,
    char *buf, size_t len, struct aisb_error *err)
{
	if ((size_t)snprintf(buf, len, "%s/gates/%s%s%s", L->policy.state_dir,
	    name, rest ? "/" : "", rest ? rest : "") >= len)
		return aisb_err(err, "%s/gates/%s: path too long",
		    L->policy.state_dir, name);
	return 0;
}

/* mkdir with mode unless it exists as a directory. */
static int
gate_mkdir(const char *path, mode_t mode, struct aisb_error *err)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return aisb_errno(err, "mkdir %s", path);
	if (lstat(path, &st) == -1)
		return aisb_errno(err, "%s", path);
	if (!S_ISDIR(st.st_mode))
		return aisb_err(err, "%s: not a directory", path);
	return 0;
}

/* state-dir, state-dir/gates, .../NAME and .../NAME/log, all 0700. */
static int
gate_mkdirs(const struct launcher *L, const char *name,
    struct aisb_error *err)
{
	char path[4096], *p;

	if (gate_path(L, name, "log", path, sizeof(path), err) == -1)
		return -1;
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (gate_mkdir(path, 0700, err) == -1)
			return -1;
		*p = '/';
	}
	return gate_mkdir(path, 0700, err);
}

/*
 * Write a file in place: the gate's allow file is a bind mount of this
 * inode, so it must be rewritten, not replaced (a rename would leave the
 * container reading the old file).
 */
static int
gate_write_file(const char *path, const char *data, size_t len,
    struct aisb_error *err)
{
	struct stat st;
	ssize_t n;
	size_t off = 0;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return aisb_errno(err, "%s", path);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		close(fd);
		return aisb_err(err, "%s: not a regular file of this user",
		    path);
	}
	if (fchmod(fd, 0600) == -1 || ftruncate(fd, 0) == -1) {
		aisb_errno(err, "%s", path);
		close(fd);
		return -1;
	}
	while (off < len) {
		n = write(fd, data + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			aisb_errno(err, "write %s", path);
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (fsync(fd) == -1) {
		aisb_errno(err, "fsync %s", path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* A gate needs net=allow through the gate, and something to allow. */
static int
gate_policy_check(const struct policy *p, const char *verb,
    struct aisb_error *err)
{
	if (p->net != POLICY_NET_ALLOW)
		return aisb_err(err, "gate %s: net is not allow: a gate has "
		    "nothing to do", verb);
	if (p->proxy != NULL && strcmp(p->proxy, "none") != 0)
		return aisb_err(err, "gate %s: proxy %s replaces the gate",
		    verb, p->proxy);
	if (!p->gate)
		return aisb_err(err, "gate %s: gate=no (--no-gate)", verb);
	if (p->allow.n == 0)
		return aisb_err(err, "gate %s: the allowlist is empty: give "
		    "--allow ENTRY after \"gate %s\", or lines in "
		    ".ai-sandbox/allow", verb, verb);
	return 0;
}

/* The named gate's allowlist from the current policy. */
static int
gate_write_allow(const struct launcher *L, const char *name,
    const char *verb, struct aisb_error *err)
{
	const struct policy *p = &L->policy;
	char path[4096], ts[32];
	struct sbuf b;
	struct tm tm;
	time_t now = time(NULL);
	size_t i;
	int rv;

	if (gate_path(L, name, "allow", path, sizeof(path), err) == -1)
		return -1;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	sbuf_init(&b);
	sbuf_printf(&b, "# ai-sandbox gate %s, written by gate %s at %s\n",
	    name, verb, ts);
	for (i = 0; i < p->allow.n; i++)
		sbuf_printf(&b, "%s\n", p->allow.v[i].e.text);
	if (b.p == NULL) {
		sbuf_free(&b);
		return aisb_err(err, "out of memory");
	}
	rv = gate_write_file(path, b.p, b.len, err);
	sbuf_free(&b);
	return rv;
}

/* Does 127.0.0.1:port accept a connection? */
static int
gate_accepts(uint16_t port)
{
	struct sockaddr_in sin;
	int fd, rv;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	rv = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	close(fd);
	return rv;
}

static void
gate_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The argv of the named gate: the per-session gate's, without --rm (a
 * named gate is removed by gate down, and a crashed one stays for
 * status), with the labels ps and --gate find it by.
 */
static int
gate_argv(struct launcher *L, const char *name, const struct render_ctx *ctx,
    struct argv *out, struct aisb_error *err)
{
	struct argv a;
	size_t i;
	int keep = L->policy.keep, rv = -1, labelled = 0;

	argv_init(&a);
	L->policy.keep = 1;
	if (policy_render_gate_argv(&L->policy, ctx, &a, err) == -1)
		goto out;
	for (i = 0; i < a.n; i++) {
		if (!labelled && strncmp(a.v[i], "--entrypoint=", 13) == 0) {
			if (argv_addf(out, "--label=aisb.gate-name=%s", name) ==
			    -1 || argv_addf(out, "--label=aisb.gate-port=%u",
			    ctx->gate_port) == -1)
				goto nomem;
			labelled = 1;
		}
		if (argv_add(out, a.v[i]) == -1)
			goto nomem;
	}
	if (!labelled) {
		aisb_err(err, "the gate's argv has no --entrypoint");
		goto out;
	}
	rv = 0;
	goto out;
nomem:
	aisb_err(err, "out of memory");
out:
	L->policy.keep = keep;
	argv_free(&a);
	return rv;
}

/* The gate's own log (podman logs), appended to out for a message. */
static void
gate_container_log(const struct launcher *L, const char *cname,
    struct sbuf *out)
{
	ops_podman(L, out, out, "logs", "--tail", "20", cname, (char *)NULL);
}

/* gate up: start the named gate and wait until it serves. */
static int
gate_up(struct launcher *L, const struct gate_cmd *c, struct sbuf *out,
    struct aisb_error *err)
{
	char cname[128], session[128], dir[4096], path[4096], port_s[16];
	char image[256];
	struct gate_state st;
	struct render_ctx ctx;
	struct argv a;
	struct sbuf pout;
	uint16_t port = 0;
	int rc, waited;

	if (gate_policy_check(&L->policy, "up", err) == -1)
		return -1;
	gate_container(c->name, cname, sizeof(cname));
	if ((rc = gate_inspect(L, c->name, &st, err)) == -1)
		return -1;
	if (rc == 1 && st.running)
		return aisb_err(err, "gate %s is already up on 127.0.0.1:%u "
		    "(gate reload --name %s changes its allowlist; gate down "
		    "--name %s stops it)", c->name, st.port, c->name, c->name);
	if (rc == 1 && ops_podman(L, NULL, NULL, "rm", "--force", cname,
	    (char *)NULL) != 0)
		return aisb_err(err, "could not remove the stopped container "
		    "%s", cname);
	if (gate_mkdirs(L, c->name, err) == -1 ||
	    gate_path(L, c->name, NULL, dir, sizeof(dir), err) == -1 ||
	    gate_write_allow(L, c->name, "up", err) == -1)
		return -1;
	if (image_ensure(L, IMAGE_ROLE_GATE, image, sizeof(image), err) == -1)
		return -1;
	run_detect_runtime(&L->policy);
	if (run_free_port(&port, err) == -1)
		return -1;
	snprintf(port_s, sizeof(port_s), "%u\n", port);
	if (gate_path(L, c->name, "port", path, sizeof(path), err) == -1 ||
	    gate_write_file(path, port_s, strlen(port_s), err) == -1)
		return -1;

	snprintf(session, sizeof(session), GATE_SESSION_PREFIX "%s", c->name);
	memset(&ctx, 0, sizeof(ctx));
	ctx.session = session;
	ctx.image = image;
	ctx.gate_image = image;
	ctx.gate_port = port;
	ctx.session_dir = dir;
	argv_init(&a);
	if (gate_argv(L, c->name, &ctx, &a, err) == -1) {
		argv_free(&a);
		return -1;
	}
	sbuf_init(&pout);
	rc = ops_capture(&a, &pout, &pout);
	argv_free(&a);
	if (rc != 0) {
		aisb_err(err, "the gate container did not start (podman exit "
		    "%d): %s", rc, ops_last_line(&pout));
		sbuf_free(&pout);
		ops_podman(L, NULL, NULL, "rm", "--force", cname, (char *)NULL);
		unlink(path);
		return -1;
	}
	for (waited = 0; waited < GATE_WAIT_MS && !gate_accepts(port);
	    waited += GATE_POLL_MS)
		gate_sleep_ms(GATE_POLL_MS);
	if (waited >= GATE_WAIT_MS) {
		sbuf_reset(&pout);
		gate_container_log(L, cname, &pout);
		aisb_err(err, "gate %s did not accept connections on "
		    "127.0.0.1:%u within %d s: %s", c->name, port,
		    GATE_WAIT_MS / 1000, ops_last_line(&pout));
		sbuf_free(&pout);
		ops_podman(L, NULL, NULL, "rm", "--force", cname, (char *)NULL);
		unlink(path);
		return -1;
	}
	sbuf_free(&pout);
	sbuf_printf(out, "gate %s up on 127.0.0.1:%u (container %s, %zu "
	    "allowlist entr%s)\n", c->name, port, cname, L->policy.allow.n,
	    L->policy.allow.n == 1 ? "y" : "ies");
	sbuf_printf(out, "log: %s/log/gate.log\n", dir);
	sbuf_printf(out, "use it with: ai-sandbox --gate %s ...\n", c->name);
	return 0;
}

/* gate down: remove the container; allow and log stay for the audit. */
static int
gate_down(struct launcher *L, const struct gate_cmd *c, struct sbuf *out,
    struct aisb_error *err)
{
	char cname[128], path[4096];
	struct gate_state st;
	struct sbuf pout;
	int rc;

	gate_container(c->name, cname, sizeof(cname));
	if ((rc = gate_inspect(L, c->name, &st, err)) == -1)
		return -1;
	if (rc == 0)
		return aisb_err(err, "gate %s is not up (no container %s)",
		    c->name, cname);
	sbuf_init(&pout);
	if (st.running)
		ops_podman(L, NULL, NULL, "stop", GATE_STOP_TIME, cname,
		    (char *)NULL);
	rc = ops_podman(L, &pout, &pout, "rm", "--force", cname, (char *)NULL);
	if (rc != 0) {
		aisb_err(err, "podman rm %s: %s", cname, ops_last_line(&pout));
		sbuf_free(&pout);
		return -1;
	}
	sbuf_free(&pout);
	if (gate_path(L, c->name, "port", path, sizeof(path), err) == 0)
		unlink(path);
	gate_path(L, c->name, "log/gate.log", path, sizeof(path), err);
	sbuf_printf(out, "gate %s down (it was %s); its log stays in %s\n",
	    c->name, st.status, path);
	return 0;
}

/* How many reload results the gate has written to its standard error. */
static int
gate_reload_marks(const struct launcher *L, const char *cname, int *ok,
    int *bad, char *last, size_t lastlen)
{
	struct sbuf b;
	char *p, *nl;

	*ok = *bad = 0;
	sbuf_init(&b);
	if (ops_podman(L, &b, &b, "logs", cname, (char *)NULL) != 0) {
		sbuf_free(&b);
		return -1;
	}
	for (p = b.p; p != NULL && *p != '\0'; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (strstr(p, "aisb-gate: allowlist reloaded") != NULL)
			(*ok)++;
		else if (strstr(p, "aisb-gate: reload failed") != NULL) {
			(*bad)++;
			snprintf(last, lastlen, "%s", p);
		}
	}
	sbuf_free(&b);
	return 0;
}

/*
 * gate reload: the allow file from the current policy, then SIGHUP. The
 * gate swaps its allowlist atomically and closes only the tunnels whose
 * entry went away; its standard error says how the reload went.
 */
static int
gate_reload(struct launcher *L, const struct gate_cmd *c, struct sbuf *out,
    struct aisb_error *err)
{
	char cname[128], msg[512] = "";
	struct gate_state st;
	struct sbuf pout;
	int rc, ok0, bad0, ok, bad, waited;

	if (gate_policy_check(&L->policy, "reload", err) == -1)
		return -1;
	gate_container(c->name, cname, sizeof(cname));
	if ((rc = gate_inspect(L, c->name, &st, err)) == -1)
		return -1;
	if (rc == 0 || !st.running)
		return aisb_err(err, "gate %s is not running (ai-sandbox gate "
		    "up --name %s)", c->name, c->name);
	if (gate_reload_marks(L, cname, &ok0, &bad0, msg, sizeof(msg)) == -1)
		ok0 = bad0 = -1;
	if (gate_write_allow(L, c->name, "reload", err) == -1)
		return -1;
	sbuf_init(&pout);
	rc = ops_podman(L, &pout, &pout, "kill", "--signal", "HUP", cname,
	    (char *)NULL);
	if (rc != 0) {
		aisb_err(err, "podman kill --signal HUP %s: %s", cname,
		    ops_last_line(&pout));
		sbuf_free(&pout);
		return -1;
	}
	sbuf_free(&pout);
	for (waited = 0; ok0 >= 0 && waited < GATE_RELOAD_WAIT_MS;
	    waited += GATE_POLL_MS * 2) {
		if (gate_reload_marks(L, cname, &ok, &bad, msg,
		    sizeof(msg)) == -1)
			break;
		if (bad > bad0)
			return aisb_err(err, "gate %s kept its old allowlist: "
			    "%s", c->name, msg);
		if (ok > ok0) {
			sbuf_printf(out, "gate %s reloaded: %zu allowlist "
			    "entr%s\n", c->name, L->policy.allow.n,
			    L->policy.allow.n == 1 ? "y" : "ies");
			return 0;
		}
		gate_sleep_ms(GATE_POLL_MS * 2);
	}
	sbuf_printf(out, "gate %s: allowlist written and SIGHUP sent (%zu "
	    "entries); the gate did not confirm within %d s\n", c->name,
	    L->policy.allow.n, GATE_RELOAD_WAIT_MS / 1000);
	return 0;
}

/* "3d 4h", "2h 5m", "5m 12s", "12s". */
static void
gate_duration(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s >= 86400)
		snprintf(buf, len, "%" PRId64 "d %" PRId64 "h", s / 86400,
		    s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, len, "%" PRId64 "h %" PRId64 "m", s / 3600,
		    s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, len, "%" PRId64 "m %" PRId64 "s", s / 60, s % 60);
	else
		snprintf(buf, len, "%" PRId64 "s", s);
}

/* Read fd from *off to its end into the audit. */
static int
gate_read_log(int fd, off_t *off, struct audit *a, audit_cb cb, void *arg,
    struct aisb_error *err)
{
	char *buf;
	ssize_t n;

	if ((buf = malloc(GATE_READ_CHUNK)) == NULL)
		return aisb_err(err, "out of memory");
	for (;;) {
		n = pread(fd, buf, GATE_READ_CHUNK, *off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			return aisb_errno(err, "reading %s", a->source);
		}
		if (n == 0)
			break;
		*off += n;
		if (audit_feed(a, buf, (size_t)n, cb, arg) == AUDIT_NOMEM) {
			free(buf);
			return aisb_err(err, "out of memory");
		}
	}
	free(buf);
	return 0;
}

/* A whole log into the audit; a missing log is an empty one. */
static int
gate_audit_file(const char *path, struct audit *a, struct aisb_error *err)
{
	off_t off = 0;
	int fd, rv;

	a->source = path;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		if (errno == ENOENT)
			return 0;
		return aisb_errno(err, "%s", path);
	}
	rv = gate_read_log(fd, &off, a, NULL, NULL, err);
	close(fd);
	if (rv == 0 && audit_finish(a, NULL, NULL) == AUDIT_NOMEM)
		return aisb_err(err, "out of memory");
	return rv;
}

/* gate status: the container, its uptime, allowlist and requests. */
static int
gate_status(struct launcher *L, const struct gate_cmd *c, struct sbuf *out,
    struct aisb_error *err)
{
	char cname[128], path[4096], up[64], ts[32], line[1024];
	struct gate_state st;
	struct audit a;
	struct tm tm;
	time_t t;
	FILE *f;
	size_t n = 0;
	int rc;

	gate_container(c->name, cname, sizeof(cname));
	if ((rc = gate_inspect(L, c->name, &st, err)) == -1)
		return -1;
	if (rc == 0)
		return aisb_err(err, "gate %s is not up (ai-sandbox gate up "
		    "--name %s)", c->name, c->name);
	t = (time_t)st.started;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gate_duration((int64_t)time(NULL) - st.started, up, sizeof(up));
	if (st.running)
		sbuf_printf(out, "gate %s: running, up %s (since %s)\n",
		    c->name, up, ts);
	else
		sbuf_printf(out, "gate %s: %s (remove it with ai-sandbox gate "
		    "down --name %s)\n", c->name, st.status, c->name);
	sbuf_printf(out, "  listen     127.0.0.1:%u\n", st.port);
	sbuf_printf(out, "  container  %s\n  image      %s\n", cname, st.image);
	if (gate_path(L, c->name, "allow", path, sizeof(path), err) == -1)
		return -1;
	sbuf_printf(out, "  allowlist  %s\n", path);
	if ((f = fopen(path, "re")) != NULL) {
		while (n < ALLOW_MAX_ENTRIES &&
		    fgets(line, sizeof(line), f) != NULL) {
			line[strcspn(line, "\r\n")] = '\0';
			if (line[0] == '#' || line[0] == '\0')
				continue;
			sbuf_printf(out, "    %s\n", line);
			n++;
		}
		fclose(f);
	} else
		sbuf_printf(out, "    (cannot read: %s)\n", strerror(errno));
	if (gate_path(L, c->name, "log/gate.log", path, sizeof(path),
	    err) == -1)
		return -1;
	audit_init(&a);
	a.since_ms = st.started * 1000;
	if (gate_audit_file(path, &a, err) == -1) {
		audit_free(&a);
		return -1;
	}
	sbuf_printf(out, "  requests   %" PRIu64 " allowed, %" PRIu64
	    " denied since it started", a.allowed, a.denied);
	if (a.skipped > 0)
		sbuf_printf(out, " (%" PRIu64 " log lines skipped)", a.skipped);
	sbuf_printf(out, "\n  log        %s\n", path);
	audit_free(&a);
	if (!st.running)
		L->exit_status = LAUNCHER_EXIT_FAIL;
	return 0;
}

/* The newest DIR/ENTRY/log/gate.log under state-dir/sub. */
static void
gate_newest_in(const char *state, const char *sub, char *best,
    size_t len, struct timespec *bt)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", state, sub);
	if ((d = opendir(path)) == NULL)
		return;
	while (n++ < GATE_SCAN_MAX && (de = readdir(d)) != NULL) {
		if (!gate_name_valid(de->d_name))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s/log/gate.log",
		    state, sub, de->d_name) >= sizeof(path))
			continue;
		if (stat(path, &st) == -1 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_mtim.tv_sec > bt->tv_sec ||
		    (st.st_mtim.tv_sec == bt->tv_sec &&
		    st.st_mtim.tv_nsec > bt->tv_nsec)) {
			*bt = st.st_mtim;
			snprintf(best, len, "%s", path);
		}
	}
	closedir(d);
}

/* The log gate logs reads: a session's, a named gate's, or the newest. */
static int
gate_log_path(const struct launcher *L, const struct gate_cmd *c, char *buf,
    size_t len, struct aisb_error *err)
{
	struct timespec bt = { 0, 0 };

	if (c->session != NULL) {
		if ((size_t)snprintf(buf, len, "%s/sessions/%s/log/gate.log",
		    L->policy.state_dir, c->session) >= len)
			return aisb_err(err, "--session: path too long");
		return 0;
	}
	if (c->named)
		return gate_path(L, c->name, "log/gate.log", buf, len, err);
	buf[0] = '\0';
	gate_newest_in(L->policy.state_dir, "sessions", buf, len, &bt);
	gate_newest_in(L->policy.state_dir, "gates", buf, len, &bt);
	if (buf[0] == '\0')
		return aisb_err(err, "no gate log under %s (give --session ID "
		    "or --name NAME)", L->policy.state_dir);
	return 0;
}

/* Write b to standard output now (--follow), then empty it. */
static int
gate_flush(struct sbuf *b)
{
	if (b->len > 0 && fwrite(b->p, 1, b->len, stdout) != b->len)
		return -1;
	sbuf_reset(b);
	return fflush(stdout) == 0 ? 0 : -1;
}

struct gate_follow {
	const struct gate_cmd	*c;
	struct sbuf		 b;
	int			 failed;
};

/* --follow: one line (or JSON object) per new record. */
static void
gate_follow_event(const struct audit *a, const struct audit_event *ev,
    void *arg)
{
	struct gate_follow *f = arg;

	if (f->c->denied && ev->allow)
		return;
	if (audit_render_event(a, ev, f->c->json, &f->b) == -1 ||
	    gate_flush(&f->b) == -1)
		f->failed = 1;
}

/*
 * --follow: read what is appended until SIGINT or SIGTERM, polling the
 * file; a rotated or truncated log is read again from its start.
 */
static int
gate_follow(const char *path, int fd, off_t off, struct audit *a,
    const struct gate_cmd *c, struct aisb_error *err)
{
	struct gate_follow f;
	struct sigaction sa, oint, oterm;
	struct stat st, pst;
	int rv = 0, nfd;

	memset(&f, 0, sizeof(f));
	f.c = c;
	sbuf_init(&f.b);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = gate_sighandler;
	sigemptyset(&sa.sa_mask);
	gate_stop = 0;
	sigaction(SIGINT, &sa, &oint);
	sigaction(SIGTERM, &sa, &oterm);
	while (!gate_stop && !f.failed) {
		if (fd != -1 && gate_read_log(fd, &off, a, gate_follow_event,
		    &f, err) == -1) {
			rv = -1;
			break;
		}
		gate_sleep_ms(GATE_FOLLOW_MS);
		if (stat(path, &pst) == -1)
			continue;
		if (fd != -1 && fstat(fd, &st) == 0 && st.st_ino ==
		    pst.st_ino && st.st_dev == pst.st_dev && st.st_size >= off)
			continue;
		/* New file, or truncated: drain the old one, read anew. */
		if (fd != -1 && gate_read_log(fd, &off, a, gate_follow_event,
		    &f, err) == -1) {
			rv = -1;
			break;
		}
		if ((nfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
			continue;
		if (fd != -1)
			close(fd);
		fd = nfd;
		off = 0;
		sbuf_reset(&a->partial);
		a->discarding = 0;
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	if (fd != -1)
		close(fd);
	sbuf_free(&f.b);
	if (f.failed && rv == 0)
		rv = aisb_errno(err, "standard output");
	return rv;
}

/* gate logs: the per-destination audit, or the refusals and their fix. */
static int
gate_logs(struct launcher *L, const struct gate_cmd *c, struct sbuf *out,
    struct aisb_error *err)
{
	char path[4096];
	struct audit a;
	off_t off = 0;
	int fd, rv = -1;

	if (gate_log_path(L, c, path, sizeof(path), err) == -1)
		return -1;
	audit_init(&a);
	a.source = path;
	a.since_ms = c->since_ms;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd == -1 && (errno != ENOENT || !c->follow)) {
		aisb_errno(err, "%s", path);
		goto out;
	}
	if (fd != -1 && gate_read_log(fd, &off, &a, NULL, NULL, err) == -1) {
		close(fd);
		goto out;
	}
	/* Following, a last line without its newline may be half-written. */
	if (!c->follow && audit_finish(&a, NULL, NULL) == AUDIT_NOMEM) {
		if (fd != -1)
			close(fd);
		aisb_err(err, "out of memory");
		goto out;
	}
	if (c->json)
		rv = audit_render_json(&a, c->denied, out);
	else if ((rv = sbuf_printf(out, "log: %s\n", path)) == 0)
		rv = c->denied ? audit_render_denied(&a, out) :
		    audit_render_table(&a, out);
	if (rv == -1) {
		if (fd != -1)
			close(fd);
		aisb_err(err, "out of memory");
		goto out;
	}
	if (!c->follow) {
		if (fd != -1)
			close(fd);
		goto out;
	}
	if (gate_flush(out) == -1) {
		if (fd != -1)
			close(fd);
		rv = aisb_errno(err, "standard output");
		goto out;
	}
	fprintf(stderr, "ai-sandbox: following %s (Ctrl-C to stop)\n", path);
	rv = gate_follow(path, fd, off, &a, c, err);
out:
	audit_free(&a);
	return rv;
}

/* gate VERB ...: the table row's exec. */
int
cmd_gate_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	struct gate_cmd c;

	if (gate_parse(L, &c, err) == -1) {
		L->exit_status = LAUNCHER_EXIT_USAGE;
		return -1;
	}
	switch (c.verb) {
	case GATE_UP:
		return gate_up(L, &c, out, err);
	case GATE_STATUS:
		return gate_status(L, &c, out, err);
	case GATE_DOWN:
		return gate_down(L, &c, out, err);
	case GATE_RELOAD:
		return gate_reload(L, &c, out, err);
	case GATE_LOGS:
		return gate_logs(L, &c, out, err);
	}
	return aisb_err(err, "gate: unknown verb");
}
