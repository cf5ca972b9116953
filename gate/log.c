/*
 * The request log: one JSON object per line, written when a request ends.
 * The schema is documented in docs/gate-log.md; keys are always present.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "gate.h"

/* Open (or reopen, after SIGHUP) the log; "-" is standard output. */
int
log_open(struct gate *g, struct aisb_error *err)
{
	int fd;

	if (strcmp(g->conf->log_path, "-") == 0) {
		g->logfd = STDOUT_FILENO;
		g->log_broken = 0;
		return 0;
	}
	fd = open(g->conf->log_path,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd == -1)
		return aisb_errno(err, "--log %s", g->conf->log_path);
	if (g->logfd > STDERR_FILENO)
		close(g->logfd);
	g->logfd = fd;
	g->log_broken = 0;
	return 0;
}

/* Milliseconds since t, on the monotonic clock. */
long
ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)((now.tv_sec - t->tv_sec) * 1000 +
	    (now.tv_nsec - t->tv_nsec) / 1000000);
}

/*
 * Keys and numbers are appended without printf: a record is written per
 * request, and format parsing was a tenth of the gate's user time per
 * forwarded request (perf, docs/performance.md).
 */

/* Append ,"key": */
static void
log_key(struct sbuf *b, const char *key)
{
	sbuf_add(b, ",\"", 2);
	sbuf_adds(b, key);
	sbuf_add(b, "\":", 2);
}

/* Append "key":value for a number, or null when v < 0. */
static void
log_num(struct sbuf *b, const char *key, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = (unsigned long long)v;

	log_key(b, key);
	if (v < 0) {
		sbuf_add(b, "null", 4);
		return;
	}
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	sbuf_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* Append "key":"value" (escaped), or null. */
static void
log_str(struct sbuf *b, const char *key, const char *v, size_t len)
{
	log_key(b, key);
	if (v == NULL || (len == 0 && *v == '\0'))
		sbuf_add(b, "null", 4);
	else
		json_add_str(b, v, len);
}

/* Render one record as a JSON line (with its newline). */
int
log_format(const struct log_rec *r, const struct timespec *wall,
    struct sbuf *b)
{
	char ts[64];
	struct tm tm;
	size_t n;

	gmtime_r(&wall->tv_sec, &tm);
	n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", wall->tv_nsec / 1000000);
	sbuf_add(b, "{\"ts\":\"", 7);
	sbuf_adds(b, ts);
	sbuf_add(b, "\"", 1);
	log_str(b, "id", r->id, strlen(r->id));
	log_str(b, "client", r->client, strlen(r->client));
	log_str(b, "method", r->method, r->method ? strlen(r->method) : 0);
	log_str(b, "host", r->host, r->hostlen);
	log_num(b, "port", r->port);
	log_str(b, "sni", r->sni, r->sni ? strlen(r->sni) : 0);
	sbuf_adds(b, r->allow ? ",\"decision\":\"allow\"" :
	    ",\"decision\":\"deny\"");
	log_str(b, "reason", r->reason, r->reason ? strlen(r->reason) : 0);
	log_str(b, "rule", r->rule, r->rule ? strlen(r->rule) : 0);
	log_str(b, "addr", r->addr, strlen(r->addr));
	log_key(b, "refused_addrs");
	sbuf_add(b, "[", 1);
	if (r->refused != NULL && r->refused->p != NULL)
		sbuf_add(b, r->refused->p, r->refused->len);
	sbuf_add(b, "]", 1);
	log_num(b, "status", r->status);
	log_num(b, "bytes_up", (long long)r->bytes_up);
	log_num(b, "bytes_down", (long long)r->bytes_down);
	log_num(b, "duration_ms", ms_since(&r->start));
	log_num(b, "dns_ms", r->dns_ms);
	log_num(b, "connect_ms", r->connect_ms);
	return sbuf_add(b, "}\n", 2);
}

struct sbuf *
gate_scratch(struct gate *g)
{
	/* A response head can make it 64 KiB: that is not kept around. */
	if (g->scratch.cap > GATE_SCRATCH_KEEP)
		sbuf_free(&g->scratch);
	sbuf_reset(&g->scratch);
	return &g->scratch;
}

/*
 * Write the queued records with one write(2). O_APPEND and whole records
 * per write: lines never interleave. A failure refuses new requests until
 * a later flush succeeds.
 */
void
log_flush(struct gate *g)
{
	struct sbuf *q = &g->logq;
	ssize_t n;

	if (q->len == 0)
		return;
	do {
		n = write(g->logfd, q->p, q->len);
	} while (n == -1 && errno == EINTR);
	if (n != (ssize_t)q->len) {
		if (!g->log_broken)
			fprintf(stderr, "aisb-gate: log %s: %s; refusing new "
			    "requests until it can be written\n",
			    g->conf->log_path,
			    n == -1 ? strerror(errno) : "short write");
		g->log_broken = 1;
	} else if (g->log_broken) {
		fprintf(stderr, "aisb-gate: log %s writable again\n",
		    g->conf->log_path);
		g->log_broken = 0;
	}
	if (q->cap > LOG_QUEUE_MAX * 2)
		sbuf_free(q);
	sbuf_reset(q);
}

static void
log_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	log_flush(arg);
}

/*
 * The flush runs once per loop turn, after every other callback of the
 * turn (the lowest priority), so the records a turn finished share one
 * write(2): a file append per request was a tenth of a forwarded
 * request's cost (docs/performance.md).
 */
int
log_start(struct gate *g, struct aisb_error *err)
{
	if (event_base_priority_init(g->base, LOG_PRIORITIES) == -1 ||
	    (g->log_ev = event_new(g->base, -1, 0, log_flush_cb, g)) == NULL ||
	    event_priority_set(g->log_ev, LOG_PRIORITIES - 1) == -1)
		return aisb_err(err, "log: cannot set up the flush event");
	return 0;
}

void
log_request(struct gate *g, const struct log_rec *r)
{
	struct timespec wall;
	struct sbuf *q = &g->logq;
	size_t before = q->len;

	clock_gettime(CLOCK_REALTIME, &wall);
	if (log_format(r, &wall, q) == -1) {
		/* Not one byte of a broken record may reach the file. */
		q->len = before;
		if (q->p != NULL)
			q->p[before] = '\0';
		g->log_broken = 1;
		return;
	}
	if (g->log_ev == NULL || q->len >= LOG_QUEUE_MAX)
		log_flush(g);
	else if (before == 0)
		event_active(g->log_ev, EV_TIMEOUT, 0);
}
