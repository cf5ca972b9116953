/*
 * ops: what ps, clean, inspect and doctor ask podman, and the parsers of
 * its answers. Podman is exec'd with argv arrays only; its JSON output is
 * read with cJSON into plain structs, which the pure functions below work
 * on (tests/unit/test-ops.c).
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define OPS_READ_CHUNK	8192

/* Append n bytes to b unless that would pass max (the rest is dropped). */
static void
ops_keep(struct sbuf *b, const char *p, size_t n, size_t max)
{
	if (b == NULL || b->len >= max)
		return;
	if (n > max - b->len)
		n = max - b->len;
	sbuf_add(b, p, n);
}

/*
 * Run argv with standard output into out and standard error into errb
 * (either may be NULL: dropped), each kept up to OPS_CAPTURE_MAX. Returns
 * the exit status (128+signal), or -1 when it could not be started.
 */
int
ops_capture(const struct argv *a, struct sbuf *out, struct sbuf *errb)
{
	struct pollfd pfd[2];
	char buf[OPS_READ_CHUNK];
	int o[2], e[2], status, fd, open_fds, i;
	ssize_t n;
	pid_t pid;

	if (pipe2(o, O_CLOEXEC) == -1)
		return -1;
	if (pipe2(e, O_CLOEXEC) == -1) {
		close(o[0]);
		close(o[1]);
		return -1;
	}
	if ((pid = fork()) == -1) {
		close(o[0]);
		close(o[1]);
		close(e[0]);
		close(e[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(o[1], STDOUT_FILENO);
		dup2(e[1], STDERR_FILENO);
		if ((fd = open("/dev/null", O_RDONLY)) != -1)
			dup2(fd, STDIN_FILENO);
		execvp(a->v[0], a->v);
		dprintf(STDERR_FILENO, "%s: %s\n", a->v[0], strerror(errno));
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	pfd[0].fd = o[0];
	pfd[1].fd = e[0];
	pfd[0].events = pfd[1].events = POLLIN;
	open_fds = 2;
	while (open_fds > 0) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			ops_keep(i == 0 ? out : errb, buf, (size_t)n,
			    OPS_CAPTURE_MAX);
		}
	}
	for (i = 0; i < 2; i++)
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* podman WORD... (NULL-terminated), output and errors captured. */
int
ops_podman(const struct launcher *L, struct sbuf *out, struct sbuf *errb,
    ...)
{
	struct argv a;
	va_list ap;
	const char *w;
	int rv = 0;

	argv_init(&a);
	if (argv_add(&a, L->policy.podman) == -1)
		rv = -1;
	va_start(ap, errb);
	while (rv == 0 && (w = va_arg(ap, const char *)) != NULL)
		if (argv_add(&a, w) == -1)
			rv = -1;
	va_end(ap);
	if (rv == 0)
		rv = ops_capture(&a, out, errb);
	argv_free(&a);
	return rv;
}

/* The last non-empty line of captured output, for a message. */
const char *
ops_last_line(struct sbuf *b)
{
	char *p;

	if (b == NULL || b->p == NULL)
		return "no output";
	while (b->len > 0 && (b->p[b->len - 1] == '\n' ||
	    b->p[b->len - 1] == '\r' || b->p[b->len - 1] == ' '))
		b->p[--b->len] = '\0';
	if (b->len == 0)
		return "no output";
	p = strrchr(b->p, '\n');
	return p ? p + 1 : b->p;
}

/* "42s", "5m", "3h", "2d": a short age. */
const char *
ops_age_text(int64_t secs, char *buf, size_t len)
{
	if (secs < 0)
		secs = 0;
	if (secs < 120)
		snprintf(buf, len, "%llds", (long long)secs);
	else if (secs < 2 * 3600)
		snprintf(buf, len, "%lldm", (long long)(secs / 60));
	else if (secs < 2 * 86400)
		snprintf(buf, len, "%lldh", (long long)(secs / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(secs / 86400));
	return buf;
}

/* An empty list. */
void
ops_containers_init(struct ops_containers *c)
{
	memset(c, 0, sizeof(*c));
}

/* Free one container's strings. */
static void
ops_container_free(struct ops_container *k)
{
	free(k->id);
	free(k->name);
	free(k->image);
	free(k->state);
	free(k->session);
	free(k->role);
	free(k->project);
	free(k->policy);
	free(k->ports);
}

/* Free the list and every container in it. */
void
ops_containers_free(struct ops_containers *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		ops_container_free(&c->v[i]);
	free(c->v);
	ops_containers_init(c);
}

/* A string member, or "" (always a fresh copy; NULL when out of memory). */
static char *
ops_str(const cJSON *o, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsString(j) && j->valuestring != NULL)
		return strdup(j->valuestring);
	return strdup("");
}

/* A number member as seconds since the epoch; 0 when absent or before
 * 1970 (podman says -62135596800 for "never"). */
static int64_t
ops_time(const cJSON *o, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(j) || j->valuedouble <= 0 ||
	    j->valuedouble > 1e12)
		return 0;
	return (int64_t)j->valuedouble;
}

/* Podman's Ports list as "127.0.0.1:8080->80/tcp, ..."; "" for none. */
static char *
ops_ports(const cJSON *o)
{
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(o, "Ports");
	const cJSON *p, *ip, *hp, *cp, *proto;
	struct sbuf b;

	sbuf_init(&b);
	sbuf_adds(&b, "");
	if (!cJSON_IsArray(ports))
		return sbuf_steal(&b);
	cJSON_ArrayForEach(p, ports) {
		ip = cJSON_GetObjectItemCaseSensitive(p, "host_ip");
		hp = cJSON_GetObjectItemCaseSensitive(p, "host_port");
		cp = cJSON_GetObjectItemCaseSensitive(p, "container_port");
		proto = cJSON_GetObjectItemCaseSensitive(p, "protocol");
		if (!cJSON_IsNumber(hp) || !cJSON_IsNumber(cp))
			continue;
		sbuf_printf(&b, "%s%s%s%d->%d/%s", b.len ? ", " : "",
		    cJSON_IsString(ip) && ip->valuestring[0] ?
		    ip->valuestring : "", cJSON_IsString(ip) &&
		    ip->valuestring[0] ? ":" : "", hp->valueint, cp->valueint,
		    cJSON_IsString(proto) ? proto->valuestring : "tcp");
	}
	return sbuf_steal(&b);
}

/* One element of podman ps's JSON array. */
static int
ops_container_parse(const cJSON *o, struct ops_container *k)
{
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(o, "Labels");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "Names");
	const cJSON *n;

	memset(k, 0, sizeof(*k));
	k->id = ops_str(o, "Id");
	k->image = ops_str(o, "Image");
	k->state = ops_str(o, "State");
	k->session = ops_str(labels, "aisb.session");
	k->role = ops_str(labels, "aisb.role");
	k->project = ops_str(labels, "aisb.project");
	k->policy = ops_str(labels, "aisb.policy");
	k->ports = ops_ports(o);
	n = cJSON_IsArray(names) ? cJSON_GetArrayItem(names, 0) : NULL;
	k->name = strdup(cJSON_IsString(n) ? n->valuestring : "");
	k->created = ops_time(o, "Created");
	k->started = ops_time(o, "StartedAt");
	if (k->id == NULL || k->image == NULL || k->state == NULL ||
	    k->session == NULL || k->role == NULL || k->project == NULL ||
	    k->policy == NULL || k->ports == NULL || k->name == NULL) {
		ops_container_free(k);
		return -1;
	}
	k->running = strcmp(k->state, "running") == 0;
	return 0;
}

/* Parse `podman ps --all --format json` into c, in podman's order. */
int
ops_ps_parse(const char *text, struct ops_containers *c,
    struct aisb_error *err)
{
	cJSON *root;
	const cJSON *o;
	struct ops_container *v;
	size_t cap;

	if (text == NULL || text[strspn(text, " \t\r\n")] == '\0')
		return 0;	/* podman 4 prints nothing for no containers */
	if ((root = cJSON_Parse(text)) == NULL)
		return aisb_err(err, "podman ps: output is not JSON");
	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return aisb_err(err, "podman ps: output is not a JSON array");
	}
	cJSON_ArrayForEach(o, root) {
		if (!cJSON_IsObject(o))
			continue;
		if (c->n >= OPS_CONTAINERS_MAX)
			break;
		if (c->n == c->cap) {
			cap = c->cap ? c->cap * 2 : 16;
			if ((v = realloc(c->v, cap * sizeof(*v))) == NULL)
				goto nomem;
			c->v = v;
			c->cap = cap;
		}
		if (ops_container_parse(o, &c->v[c->n]) == -1)
			goto nomem;
		c->n++;
	}
	cJSON_Delete(root);
	return 0;
nomem:
	cJSON_Delete(root);
	return aisb_err(err, "out of memory");
}

/* Every container ai-sandbox made (those with an aisb.role label). */
int
ops_list(const struct launcher *L, struct ops_containers *c,
    struct aisb_error *err)
{
	struct sbuf out, errb;
	int rc, rv;

	sbuf_init(&out);
	sbuf_init(&errb);
	rc = ops_podman(L, &out, &errb, "ps", "--all", "--format", "json",
	    "--filter", "label=aisb.role", (char *)NULL);
	if (rc != 0)
		rv = aisb_err(err, "%s ps: %s", L->policy.podman, rc == -1 ?
		    strerror(errno) : ops_last_line(&errb));
	else
		rv = ops_ps_parse(out.p, c, err);
	sbuf_free(&out);
	sbuf_free(&errb);
	return rv;
}

/* A named gate's session label is "named-NAME" (cmd-gate.c). */
const char *
ops_gate_name(const struct ops_container *k)
{
	if (strcmp(k->role, "gate") == 0 &&
	    strncmp(k->session, OPS_NAMED_PREFIX,
	    strlen(OPS_NAMED_PREFIX)) == 0)
		return k->session + strlen(OPS_NAMED_PREFIX);
	return NULL;
}

/* Is s a session id as run.c makes them, or a named gate's session? */
int
ops_session_valid(const char *s)
{
	return policy_name_valid(s);
}

/* An empty list. */
void
ops_volumes_init(struct ops_volumes *v)
{
	memset(v, 0, sizeof(*v));
}

/* Free the list and every name in it. */
void
ops_volumes_free(struct ops_volumes *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].role);
	}
	free(v->v);
	ops_volumes_init(v);
}

/* Parse `podman volume ls --format json` into v. */
int
ops_volumes_parse(const char *text, struct ops_volumes *v,
    struct aisb_error *err)
{
	cJSON *root;
	const cJSON *o, *labels;
	struct ops_volume *nv;
	size_t cap;

	if (text == NULL || text[strspn(text, " \t\r\n")] == '\0')
		return 0;
	if ((root = cJSON_Parse(text)) == NULL || !cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return aisb_err(err, "podman volume ls: output is not a JSON "
		    "array");
	}
	cJSON_ArrayForEach(o, root) {
		if (!cJSON_IsObject(o))
			continue;
		if (v->n >= OPS_CONTAINERS_MAX)
			break;
		if (v->n == v->cap) {
			cap = v->cap ? v->cap * 2 : 16;
			if ((nv = realloc(v->v, cap * sizeof(*nv))) == NULL)
				goto nomem;
			v->v = nv;
			v->cap = cap;
		}
		labels = cJSON_GetObjectItemCaseSensitive(o, "Labels");
		memset(&v->v[v->n], 0, sizeof(v->v[v->n]));
		v->v[v->n].name = ops_str(o, "Name");
		v->v[v->n].role = ops_str(labels, "aisb.role");
		v->n++;
		if (v->v[v->n - 1].name == NULL || v->v[v->n - 1].role == NULL)
			goto nomem;
	}
	cJSON_Delete(root);
	return 0;
nomem:
	cJSON_Delete(root);
	return aisb_err(err, "out of memory");
}

/*
 * The run's home volume: created, labelled aisb.role=home, when podman does
 * not have it yet (podman would make an unlabelled one on first use). An
 * ephemeral home is an anonymous volume that --rm removes: nothing to do.
 */
int
ops_home_volume(const struct launcher *L, struct aisb_error *err)
{
	const struct policy *p = &L->policy;
	struct sbuf errb;
	int rc;

	if (p->ephemeral_home || p->home_volume == NULL)
		return 0;
	if (ops_podman(L, NULL, NULL, "volume", "exists", p->home_volume,
	    (char *)NULL) == 0)
		return 0;
	sbuf_init(&errb);
	rc = ops_podman(L, NULL, &errb, "volume", "create", "--label",
	    "aisb.role=home", p->home_volume, (char *)NULL);
	/* Another run may have made it in between: that one is fine too. */
	if (rc != 0 && ops_podman(L, NULL, NULL, "volume", "exists",
	    p->home_volume, (char *)NULL) != 0) {
		aisb_err(err, "podman volume create %s: %s", p->home_volume,
		    ops_last_line(&errb));
		sbuf_free(&errb);
		return -1;
	}
	sbuf_free(&errb);
	return 0;
}
