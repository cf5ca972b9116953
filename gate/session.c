/*
 * One client connection: read a request head, decide, resolve, connect,
 * then tunnel (CONNECT) or forward one exchange and loop (keep-alive).
 *
 * Ownership: every pointer is NULL and every fd -1 before anything can
 * fail, so session_close() tears down any half-built state. A function
 * that may have freed the session returns at once without touching it.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "gate.h"

/* Stop reading a side while the other side has this much queued. */
#define SESSION_HIGH_WATER	(256 * 1024)
#define SESSION_LOW_WATER	(64 * 1024)
/* One read of a tunnel relay, and what makes a direction bulk. */
#define RELAY_BUF_SIZE		(64 * 1024)
/* A bulk direction's pipe: more per splice(2), fewer calls per GiB. */
#define RELAY_PIPE_SIZE		(1024 * 1024)

enum session_state {
	SESSION_HEAD,		/* reading a request head */
	SESSION_DNS,
	SESSION_CONNECTING,
	SESSION_TLS_HELLO,	/* 200 sent, reading the ClientHello */
	SESSION_TUNNEL,
	SESSION_FORWARD,	/* one request/response exchange */
	SESSION_FLUSH,		/* last bytes to the client, then close */
};

/* One direction of an established tunnel: read src, write dst. */
struct relay_dir {
	struct session		*s;
	int			 src;
	int			 dst;
	struct event		*rev;		/* persistent, off while pending */
	struct event		*wev;		/* armed only on EAGAIN */
	char			*pend;		/* read, not yet written */
	size_t			 plen;
	size_t			 poff;
	int			 pipe[2];	/* splice(2), -1 until bulk */
	size_t			 inpipe;	/* pending in the pipe */
	int			 eof;		/* src hit EOF */
	int			 shut;		/* shutdown(dst, SHUT_WR) done */
	uint64_t		*count;
};

/*
 * What a kept upstream connection was opened to: the next forwarded
 * request may use it only for the same target, on an address still
 * admitted.
 */
struct upstream_kept {
	char			 host[HOST_CANON_SIZE];
	int			 is_ip;
	uint16_t		 port;
	struct aisb_addr	 addr;
	char			 addrstr[ADDR_STR_SIZE + 8];
};

/*
 * What the current request is for: the log record and the reload check
 * read it after the parsed head is gone (a tunnel keeps only this).
 */
struct target {
	char			 method[HTTP_METHOD_MAX];
	char			 host[HOST_CANON_SIZE];
	struct aisb_addr	 ip;
	uint16_t		 port;
	int			 is_ip;
};

/* The tunnel once established: the session's fds, without bufferevents. */
struct relay {
	struct relay_dir	 dir[2];	/* 0 client->upstream, 1 back */
	int			 cfd;
	int			 ufd;
};

struct session {
	struct session		*next;
	struct session		*prev;
	struct gate		*g;
	uint64_t		 cid;
	unsigned int		 nreq;
	enum session_state	 state;
	struct bufferevent	*cbev;
	struct bufferevent	*ubev;
	struct event		*timer;
	struct dns_req		*dns;
	int			 head_timer_armed;
	size_t			 head_scanned;	/* bytes seen by the parser */
	size_t			 head_line;	/* where the last line began */

	/* The current request; its parse state is freed once it tunnels. */
	struct http_request	*req;
	struct target		 tgt;
	char			*head;		/* a copy of its head bytes */
	size_t			 head_cap;	/* kept between requests */
	enum allow_mode		 mode;
	char			 rule[ALLOW_ENTRY_MAXLEN];
	int			 rule_is_addr;
	int			 tls;		/* CONNECT to a TLS port */
	struct aisb_addr	 addrs[GATE_ADDRS_MAX];
	size_t			 naddrs;
	size_t			 nextaddr;
	struct timespec		 t_dns;
	struct timespec		 t_connect;

	/* The log record, open while rec_open. */
	int			 rec_open;
	struct log_rec		 rec;
	struct sbuf		 refused;
	char			 sni[HOST_CANON_SIZE];

	/* Forwarding. */
	uint64_t		 req_left;
	struct chunk_state	 req_chunk;
	int			 req_done;
	int			 resp_head_done;
	struct http_response	*resp;		/* SESSION_FORWARD only */
	uint64_t		 resp_left;
	struct chunk_state	 resp_chunk;
	int			 resp_done;
	int			 keep;
	int			 up_reusable;	/* upstream may serve another */
	int			 up_idle;	/* ubev kept, between requests */
	int			 up_reused;	/* this request reuses it */
	struct upstream_kept	*up;		/* what ubev was opened to */

	int			 passed;	/* bytes went upstream */

	/* The established tunnel, SESSION_TUNNEL only. */
	struct relay		*relay;
};

static void	session_readcb(struct bufferevent *, void *);
static void	session_eventcb(struct bufferevent *, short, void *);
static void	upstream_readcb(struct bufferevent *, void *);
static void	upstream_writecb(struct bufferevent *, void *);
static void	upstream_eventcb(struct bufferevent *, short, void *);
static void	client_writecb(struct bufferevent *, void *);
static void	session_timer_cb(evutil_socket_t, short, void *);
static int	session_next_request(struct session *);
static int	session_reuse(struct session *);
static void	session_route(struct session *);
static void	relay_free(struct relay *);

static const char *
session_state_name(enum session_state st)
{
	switch (st) {
	case SESSION_HEAD:
		return "head";
	case SESSION_DNS:
		return "dns";
	case SESSION_CONNECTING:
		return "connecting";
	case SESSION_TLS_HELLO:
		return "tls-hello";
	case SESSION_TUNNEL:
		return "tunnel";
	case SESSION_FORWARD:
		return "forward";
	case SESSION_FLUSH:
		return "flush";
	}
	return "unknown";
}

/* The one state setter, so a debug build can log every transition. */
static void
session_set_state(struct session *s, enum session_state st)
{
	static int debug = -1;

	if (debug == -1)
		debug = getenv("AISB_GATE_DEBUG") != NULL;
	if (debug)
		fprintf(stderr, "aisb-gate: %llu: state %s -> %s\n",
		    (unsigned long long)s->cid, session_state_name(s->state),
		    session_state_name(st));
	s->state = st;
}

/*
 * Relayed bytes go out at once: Nagle plus the peer's delayed ACK stalled
 * small exchanges for 40 ms (measured with bench/run).
 */
static void
session_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void
session_timer(struct session *s, int seconds)
{
	struct timeval tv = { seconds, 0 };

	evtimer_add(s->timer, &tv);
}

/* Start a log record for a new request. */
static void
session_rec_begin(struct session *s)
{
	char client[sizeof(s->rec.client)];

	memcpy(client, s->rec.client, sizeof(client));
	memset(&s->rec, 0, sizeof(s->rec));
	memcpy(s->rec.client, client, sizeof(client));
	sbuf_reset(&s->refused);
	s->rec.refused = &s->refused;
	s->rec.port = -1;
	s->rec.dns_ms = -1;
	s->rec.connect_ms = -1;
	s->rec.status = -1;
	s->sni[0] = '\0';
	s->rule[0] = '\0';
	s->passed = 0;
	s->nreq++;
	snprintf(s->rec.id, sizeof(s->rec.id), "%llu.%u",
	    (unsigned long long)s->cid, s->nreq);
	clock_gettime(CLOCK_MONOTONIC, &s->rec.start);
	s->rec_open = 1;
}

/* Finish the open record, if any. */
static void
session_rec_end(struct session *s, int allow, const char *reason)
{
	if (!s->rec_open)
		return;
	s->rec.allow = allow;
	if (s->rec.reason == NULL || !allow)
		s->rec.reason = reason;
	s->rec.rule = s->rule[0] ? s->rule : NULL;
	s->rec.sni = s->sni[0] ? s->sni : NULL;
	log_request(s->g, &s->rec);
	s->rec_open = 0;
}

static void
session_unlink(struct session *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		s->g->sessions = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
}

static void
session_free_upstream(struct session *s)
{
	if (s->ubev != NULL) {
		bufferevent_free(s->ubev);
		s->ubev = NULL;
	}
	s->up_idle = 0;
}

/*
 * Tear down the session in whatever state it is. An open record is
 * logged: as allowed when the exchange had been allowed and only ended
 * (reason NULL), else as denied with reason.
 */
static void
session_close(struct session *s, int allow, const char *reason)
{
	struct gate *g = s->g;

	session_rec_end(s, allow, reason ? reason : "closed");
	if (s->relay != NULL)
		relay_free(s->relay);
	if (s->dns != NULL)
		dns_cancel(s->dns);
	session_free_upstream(s);
	if (s->cbev != NULL)
		bufferevent_free(s->cbev);
	if (s->timer != NULL)
		event_free(s->timer);
	sbuf_free(&s->refused);
	free(s->resp);
	free(s->head);
	free(s->up);
	free(s->req);
	session_unlink(s);
	free(s);
	g->nsessions--;
	if (g->draining && g->nsessions == 0)
		event_base_loopexit(g->base, NULL);
}

static const char *
status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Error";
}

/*
 * Answer the client with an error, log the refusal, and close once the
 * answer is flushed. May free the session.
 */
static void
session_refuse(struct session *s, int status, const char *reason)
{
	struct evbuffer *out;

	session_free_upstream(s);
	if (s->dns != NULL) {
		dns_cancel(s->dns);
		s->dns = NULL;
	}
	s->rec.status = status;
	session_rec_end(s, 0, reason);
	out = bufferevent_get_output(s->cbev);
	evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: %zu\r\n"
	    "X-Aisb-Reason: %s\r\n"
	    "Connection: close\r\n"
	    "\r\n"
	    "aisb-gate: %d %s: %s\n",
	    status, status_text(status),
	    strlen("aisb-gate: 000 : \n") + strlen(status_text(status)) +
	    strlen(reason), reason, status, status_text(status), reason);
	session_set_state(s, SESSION_FLUSH);
	bufferevent_disable(s->cbev, EV_READ);
	bufferevent_enable(s->cbev, EV_WRITE);
	bufferevent_setcb(s->cbev, NULL, client_writecb, session_eventcb, s);
	session_timer(s, 5);
}

/* Flush done (or a forward exchange's output drained). */
static void
client_writecb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	if (s->state == SESSION_FLUSH) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			session_close(s, 0, NULL);
		return;
	}
	/* Backpressure released: the upstream may be read again. */
	if (s->ubev != NULL && s->state == SESSION_FORWARD)
		bufferevent_enable(s->ubev, EV_READ);
}

/* Move up to n bytes from src's input to dst's output. */
static size_t
session_move(struct session *s, struct bufferevent *src,
    struct bufferevent *dst, size_t n)
{
	struct evbuffer *in = bufferevent_get_input(src);
	struct evbuffer *out = bufferevent_get_output(dst);
	int moved;

	moved = evbuffer_remove_buffer(in, out, n);
	if (moved < 0)
		moved = 0;
	if (src == s->cbev)
		s->rec.bytes_up += (size_t)moved;
	else
		s->rec.bytes_down += (size_t)moved;
	return (size_t)moved;
}

/*
 * Write bev's output now, not on the next loop turn: the write event's
 * add and delete cost two epoll_ctl per forwarded message. The event is
 * enabled only while bytes wait; a write error is left for the
 * bufferevent to meet and report through the event callback. A socket
 * bufferevent keeps its output's front frozen against writes other than
 * its own; it is thawed for this one, as the bufferevent does.
 */
static void
session_send(struct bufferevent *bev)
{
	struct evbuffer *out = bufferevent_get_output(bev);
	int fd = bufferevent_getfd(bev);

	evbuffer_unfreeze(out, 1);
	while (evbuffer_get_length(out) > 0 && evbuffer_write(out, fd) > 0)
		;
	evbuffer_freeze(out, 1);
	if (evbuffer_get_length(out) > 0)
		bufferevent_enable(bev, EV_WRITE);
	else
		bufferevent_disable(bev, EV_WRITE);
}

/*
 * Send what was moved to dst; while dst holds too much, stop reading src
 * (dst's write callback, at the low water mark, reads it again).
 */
static void
session_push(struct bufferevent *src, struct bufferevent *dst)
{
	session_send(dst);
	if (evbuffer_get_length(bufferevent_get_output(dst)) >=
	    SESSION_HIGH_WATER)
		bufferevent_disable(src, EV_READ);
}

/* Is the target still admitted by the current allowlist? */
static int
session_still_allowed(struct session *s)
{
	struct acl_result r;

	acl_check_target(s->g->allow, s->g->conf, s->tgt.host, s->tgt.is_ip,
	    &s->tgt.ip, s->tgt.port, s->mode, &r);
	if (!r.allow)
		return 0;
	/* An address admitted only by an IP entry must still be covered. */
	if (s->nextaddr > 0 && !s->tgt.is_ip &&
	    addr_classify(&s->addrs[s->nextaddr - 1]) != NULL &&
	    allowlist_match_addr(s->g->allow, &s->addrs[s->nextaddr - 1],
	    s->tgt.port) == NULL)
		return 0;
	return 1;
}

/* --- Tunnel -------------------------------------------------------- */

/*
 * An established tunnel is relayed on the raw fds: a bufferevent pair
 * cost 10 syscalls per small exchange where 4 do (docs/performance.md).
 * Per direction one persistent read event; the write event is armed only
 * when a write would block, and reading stops while bytes are pending.
 */

/* Free the relay: its events, pending bytes, pipes and both fds. */
static void
relay_free(struct relay *r)
{
	struct relay_dir *d;
	int i;

	for (i = 0; i < 2; i++) {
		d = &r->dir[i];
		if (d->rev != NULL)
			event_free(d->rev);
		if (d->wev != NULL)
			event_free(d->wev);
		free(d->pend);
		if (d->pipe[0] != -1)
			close(d->pipe[0]);
		if (d->pipe[1] != -1)
			close(d->pipe[1]);
	}
	if (r->cfd != -1)
		close(r->cfd);
	if (r->ufd != -1)
		close(r->ufd);
	free(r);
}

/* Why to log when a direction's fd failed. */
static const char *
relay_why(struct relay_dir *d, int fd)
{
	if (fd == d->s->relay->cfd)
		return "client closed the connection";
	return "upstream closed the connection";
}

/* Write out d's pending bytes: 1 all gone, 0 would block, -1 error. */
static int
relay_push(struct relay_dir *d)
{
	ssize_t n;

	while (d->poff < d->plen) {
		n = write(d->dst, d->pend + d->poff, d->plen - d->poff);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		d->poff += (size_t)n;
	}
	free(d->pend);
	d->pend = NULL;
	d->plen = d->poff = 0;
	while (d->inpipe > 0) {
		n = splice(d->pipe[0], NULL, d->dst, NULL, d->inpipe,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		if (n == 0)
			return -1;
		d->inpipe -= (size_t)n;
	}
	return 1;
}

/* Nothing pending in d: read again, or pass its EOF on. May free. */
static void
relay_drained(struct relay_dir *d)
{
	struct session *s = d->s;
	struct relay *r = s->relay;

	if (!d->eof) {
		event_add(d->rev, NULL);
		return;
	}
	if (!d->shut) {
		shutdown(d->dst, SHUT_WR);
		d->shut = 1;
	}
	if (r->dir[0].shut && r->dir[1].shut)
		session_close(s, 1, NULL);
}

/* Push d's pending bytes and arm what comes next; may free the session. */
static void
relay_flush(struct relay_dir *d)
{
	switch (relay_push(d)) {
	case -1:
		session_close(d->s, 1, relay_why(d, d->dst));
		return;
	case 0:
		event_del(d->rev);
		event_add(d->wev, NULL);
		return;
	}
	event_del(d->wev);
	relay_drained(d);
}

/* Keep the tail of a short write until dst can take it. */
static int
relay_keep(struct relay_dir *d, const char *p, size_t len)
{
	if ((d->pend = malloc(len)) == NULL)
		return -1;
	memcpy(d->pend, p, len);
	d->plen = len;
	d->poff = 0;
	return 0;
}

/*
 * Bulk goes through a pipe with splice(2), so the bytes never cross user
 * space; the pipe is made only once a read filled the buffer, so short
 * exchanges pay nothing for it.
 */
static void
relay_pipe(struct relay_dir *d)
{
	if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) == -1) {
		d->pipe[0] = d->pipe[1] = -1;
		return;
	}
	/* Past fs.pipe-max-size it stays at 64 KiB, which works too. */
	fcntl(d->pipe[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
}

/* src is readable; may free the session. */
static void
relay_readcb(evutil_socket_t fd, short what, void *arg)
{
	static char buf[RELAY_BUF_SIZE];
	struct relay_dir *d = arg;
	struct session *s = d->s;
	ssize_t n, w;

	if (d->pipe[0] != -1)
		n = splice(d->src, NULL, d->pipe[1], NULL, RELAY_PIPE_SIZE,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	else
		n = read(d->src, buf, sizeof(buf));
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		session_close(s, 1, relay_why(d, d->src));
		return;
	}
	session_timer(s, s->g->conf->idle_timeout);
	if (n == 0) {
		d->eof = 1;
		event_del(d->rev);
		relay_drained(d);
		return;
	}
	*d->count += (uint64_t)n;
	if (d->pipe[0] != -1) {
		d->inpipe = (size_t)n;
		relay_flush(d);
		return;
	}
	do
		w = write(d->dst, buf, (size_t)n);
	while (w == -1 && errno == EINTR);
	if (w == -1 && errno != EAGAIN && errno != EWOULDBLOCK) {
		session_close(s, 1, relay_why(d, d->dst));
		return;
	}
	if (w == -1)
		w = 0;
	if (n == (ssize_t)sizeof(buf))
		relay_pipe(d);
	if (w == n)
		return;
	if (relay_keep(d, buf + w, (size_t)(n - w)) == -1) {
		session_close(s, 1, "out of memory");
		return;
	}
	event_del(d->rev);
	event_add(d->wev, NULL);
}

/* dst is writable again; may free the session. */
static void
relay_writecb(evutil_socket_t fd, short what, void *arg)
{
	relay_flush(arg);
}

/* Take the bytes a bufferevent still holds; -1 out of memory. */
static int
relay_take(struct relay_dir *d, struct evbuffer *b)
{
	size_t len = evbuffer_get_length(b);
	char *p;

	if (len == 0)
		return 0;
	if ((p = realloc(d->pend, d->plen + len)) == NULL)
		return -1;
	d->pend = p;
	evbuffer_copyout(b, d->pend + d->plen, len);
	d->plen += len;
	return 0;
}

/* Free a bufferevent but keep its fd, which the relay owns now. */
static int
relay_unwrap(struct bufferevent *bev)
{
	int fd = bufferevent_getfd(bev);

	bufferevent_disable(bev, EV_READ | EV_WRITE);
	bufferevent_setfd(bev, -1);
	return fd;
}

/* Both directions move bytes now; may free the session. */
static void
tunnel_start(struct session *s)
{
	struct relay *r;
	struct relay_dir *d;
	int i;

	session_set_state(s, SESSION_TUNNEL);
	s->passed = 1;
	session_timer(s, s->g->conf->idle_timeout);
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		session_close(s, 1, "out of memory");
		return;
	}
	for (i = 0; i < 2; i++)
		r->dir[i].pipe[0] = r->dir[i].pipe[1] = -1;
	r->cfd = r->ufd = -1;
	s->relay = r;

	/* Bytes already read were not counted yet; written ones were. */
	s->rec.bytes_up += evbuffer_get_length(bufferevent_get_input(s->cbev));
	s->rec.bytes_down +=
	    evbuffer_get_length(bufferevent_get_input(s->ubev));
	r->cfd = relay_unwrap(s->cbev);
	r->ufd = relay_unwrap(s->ubev);
	if (relay_take(&r->dir[0], bufferevent_get_output(s->ubev)) == -1 ||
	    relay_take(&r->dir[0], bufferevent_get_input(s->cbev)) == -1 ||
	    relay_take(&r->dir[1], bufferevent_get_output(s->cbev)) == -1 ||
	    relay_take(&r->dir[1], bufferevent_get_input(s->ubev)) == -1) {
		session_close(s, 1, "out of memory");
		return;
	}
	bufferevent_free(s->cbev);
	s->cbev = NULL;
	session_free_upstream(s);
	free(s->head);
	s->head = NULL;
	s->head_cap = 0;
	free(s->req);
	s->req = NULL;
	free(s->resp);
	s->resp = NULL;

	r->dir[0].src = r->dir[1].dst = r->cfd;
	r->dir[0].dst = r->dir[1].src = r->ufd;
	r->dir[0].count = &s->rec.bytes_up;
	r->dir[1].count = &s->rec.bytes_down;
	for (i = 0; i < 2; i++) {
		d = &r->dir[i];
		d->s = s;
		d->rev = event_new(s->g->base, d->src, EV_READ | EV_PERSIST,
		    relay_readcb, d);
		d->wev = event_new(s->g->base, d->dst, EV_WRITE | EV_PERSIST,
		    relay_writecb, d);
		if (d->rev == NULL || d->wev == NULL) {
			session_close(s, 1, "out of memory");
			return;
		}
	}
	/* The 200 and any early bytes go out now, without a loop turn. */
	for (i = 0; i < 2; i++) {
		if (relay_push(&r->dir[i]) == -1) {
			d = &r->dir[i];
			session_close(s, 1, relay_why(d, d->dst));
			return;
		}
	}
	for (i = 0; i < 2; i++) {
		d = &r->dir[i];
		event_add(d->plen > 0 ? d->wev : d->rev, NULL);
	}
}

/* Check the ClientHello received so far; may free the session. */
static void
tunnel_hello(struct session *s)
{
	struct evbuffer *in = bufferevent_get_input(s->cbev);
	size_t len = evbuffer_get_length(in);
	struct tls_hello h;
	const uint8_t *p;
	int rc;

	if (len > TLS_HELLO_WIRE_MAX)
		len = TLS_HELLO_WIRE_MAX;
	p = evbuffer_pullup(in, (ssize_t)len);
	rc = tls_hello_read(p, len, &h);
	if (rc == TLS_NEED_MORE)
		return;
	if (rc == TLS_BAD) {
		session_close(s, 0, h.why);
		return;
	}
	if (h.has_sni)
		memcpy(s->sni, h.sni, sizeof(s->sni));
	if (!h.has_sni) {
		session_close(s, 0, "tls: no SNI in ClientHello");
		return;
	}
	if (s->g->conf->sni == SNI_STRICT && strcmp(h.sni, s->req->host) != 0) {
		session_close(s, 0, "tls: SNI does not match CONNECT host");
		return;
	}
	if (s->g->conf->sni == SNI_ALLOWLISTED &&
	    allowlist_match_name(s->g->allow, h.sni, s->req->port,
	    ALLOW_MODE_CONNECT) == NULL) {
		session_close(s, 0, "tls: SNI not allowlisted");
		return;
	}
	tunnel_start(s);
}

/* --- Forwarding ---------------------------------------------------- */

/* Move the request body bytes that have arrived; sets req_done. */
static int
forward_request_body(struct session *s)
{
	struct evbuffer *in = bufferevent_get_input(s->cbev);
	size_t avail;
	ssize_t n;
	const char *p;

	while (!s->req_done && (avail = evbuffer_get_length(in)) > 0) {
		if (s->req->body == HTTP_BODY_LENGTH) {
			s->req_left -= session_move(s, s->cbev, s->ubev,
			    s->req_left < avail ? s->req_left : avail);
			s->req_done = s->req_left == 0;
			continue;
		}
		if (avail > 65536)
			avail = 65536;
		p = (const char *)evbuffer_pullup(in, (ssize_t)avail);
		if ((n = chunk_feed(&s->req_chunk, p, avail)) < 0)
			return -1;
		session_move(s, s->cbev, s->ubev, (size_t)n);
		s->req_done = s->req_chunk.st == CHUNK_DONE;
		if (n == 0)
			break;
	}
	session_push(s->cbev, s->ubev);
	return 0;
}

/*
 * May the upstream connection serve the client's next request? Only when
 * the client stays, the upstream said it would, and its response ended
 * exactly where its bytes did: nothing may be left over to be taken for
 * the next response.
 */
static int
forward_keep_upstream(struct session *s)
{
	return s->keep && s->up_reusable && !s->g->draining &&
	    s->ubev != NULL && s->up != NULL &&
	    evbuffer_get_length(bufferevent_get_input(s->ubev)) == 0 &&
	    evbuffer_get_length(bufferevent_get_output(s->ubev)) == 0;
}

/* The exchange is over: log it and go on with the next request or close. */
static void
forward_done(struct session *s)
{
	session_rec_end(s, 1, NULL);
	if (forward_keep_upstream(s)) {
		/* Idle: any byte or close from it now drops it. */
		s->up_idle = 1;
		bufferevent_enable(s->ubev, EV_READ);
	} else
		session_free_upstream(s);
	/* The response's parse state and the head buffer serve the next. */
	if (!s->keep || s->g->draining) {
		session_set_state(s, SESSION_FLUSH);
		bufferevent_disable(s->cbev, EV_READ);
		bufferevent_setcb(s->cbev, NULL, client_writecb,
		    session_eventcb, s);
		session_timer(s, 5);
		if (evbuffer_get_length(bufferevent_get_output(s->cbev)) == 0)
			session_close(s, 0, NULL);
		else
			bufferevent_enable(s->cbev, EV_WRITE);
		return;
	}
	session_set_state(s, SESSION_HEAD);
	s->head_timer_armed = 0;
	session_timer(s, s->g->conf->idle_timeout);
	bufferevent_enable(s->cbev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_input(s->cbev)) > 0)
		session_next_request(s);
}

/* Move the response bytes that have arrived; -1 if the session is gone. */
static int
forward_response_move(struct session *s)
{
	struct evbuffer *in = bufferevent_get_input(s->ubev);
	struct evbuffer *out = bufferevent_get_output(s->cbev);
	struct sbuf *b;
	size_t avail;
	ssize_t n;
	const char *p;
	int rc;

	while (!s->resp_head_done) {
		avail = evbuffer_get_length(in);
		if (avail == 0)
			return 0;
		if (avail > HTTP_RESP_HEAD_MAX + 1)
			avail = HTTP_RESP_HEAD_MAX + 1;
		p = (const char *)evbuffer_pullup(in, (ssize_t)avail);
		rc = http_response_parse(p, avail, s->req->method, s->resp);
		if (rc == HTTP_NEED_MORE)
			return 0;
		if (rc == HTTP_BAD || s->resp->status == 101) {
			session_refuse(s, 502, s->resp->why ? s->resp->why :
			    "upstream: protocol upgrade refused");
			return -1;
		}
		b = gate_scratch(s->g);
		if (s->resp->status >= 100 && s->resp->status < 200) {
			/* Interim response: pass it on, wait for the next. */
			http_response_render(p, s->resp, 1, b);
		} else {
			/*
			 * The client's connection lives on whenever this
			 * response's end is known; the upstream's too, if
			 * it did not say close.
			 */
			s->keep = s->req->keep_alive &&
			    s->resp->body != HTTP_BODY_CLOSE;
			s->up_reusable = s->resp->keep_alive &&
			    s->resp->body != HTTP_BODY_CLOSE;
			http_response_render(p, s->resp, s->keep, b);
			s->resp_head_done = 1;
			s->rec.status = s->resp->status;
			s->resp_left = s->resp->content_length;
			chunk_init(&s->resp_chunk);
			if (s->resp->body == HTTP_BODY_NONE ||
			    (s->resp->body == HTTP_BODY_LENGTH &&
			    s->resp_left == 0))
				s->resp_done = 1;
		}
		evbuffer_drain(in, s->resp->head_len);
		evbuffer_add(out, b->p, b->len);
		s->rec.bytes_down += b->len;
	}
	while (!s->resp_done && (avail = evbuffer_get_length(in)) > 0) {
		switch (s->resp->body) {
		case HTTP_BODY_LENGTH:
			s->resp_left -= session_move(s, s->ubev, s->cbev,
			    s->resp_left < avail ? s->resp_left : avail);
			if (s->resp_left == 0)
				s->resp_done = 1;
			break;
		case HTTP_BODY_CHUNKED:
			if (avail > 65536)
				avail = 65536;
			p = (const char *)evbuffer_pullup(in, (ssize_t)avail);
			if ((n = chunk_feed(&s->resp_chunk, p, avail)) < 0) {
				session_close(s, 1, NULL);
				return -1;
			}
			session_move(s, s->ubev, s->cbev, (size_t)n);
			if (s->resp_chunk.st == CHUNK_DONE)
				s->resp_done = 1;
			break;
		case HTTP_BODY_CLOSE:
			session_move(s, s->ubev, s->cbev, avail);
			break;
		case HTTP_BODY_NONE:
			s->resp_done = 1;
			break;
		}
	}
	return 0;
}

/* Relay response bytes from upstream; may free the session. */
static void
forward_response(struct session *s)
{
	if (forward_response_move(s) == -1)
		return;
	session_push(s->ubev, s->cbev);
	if (s->resp_done && s->req_done)
		forward_done(s);
}

/* Upstream is connected: send the head, then the body as it comes. */
static void
forward_start(struct session *s)
{
	struct sbuf *b = gate_scratch(s->g);

	/* Allocated once a session forwards; the parser resets it. */
	if ((s->resp == NULL &&
	    (s->resp = calloc(1, sizeof(*s->resp))) == NULL) ||
	    http_request_render(s->head, s->req, 1, b) == -1) {
		session_refuse(s, 502, "out of memory");
		return;
	}
	evbuffer_add(bufferevent_get_output(s->ubev), b->p, b->len);
	s->rec.bytes_up += b->len;
	session_set_state(s, SESSION_FORWARD);
	s->passed = 1;
	session_timer(s, s->g->conf->idle_timeout);
	s->req_left = s->req->content_length;
	s->req_done = s->req->body == HTTP_BODY_NONE ||
	    (s->req->body == HTTP_BODY_LENGTH && s->req_left == 0);
	chunk_init(&s->req_chunk);
	s->resp_head_done = s->resp_done = 0;
	s->up_reusable = 0;
	if (forward_request_body(s) == -1) {
		session_refuse(s, 400, s->req_chunk.why);
		return;
	}
	bufferevent_enable(s->ubev, EV_READ);
	bufferevent_enable(s->cbev, EV_READ);
}

/*
 * A kept connection the upstream closed just as this request went out
 * (it cannot be told from an idle close in time): a request without a
 * body and with a safe method (RFC 9110 9.2.1) is sent again once, on a
 * connection made as for a new request. 1 if that is under way.
 */
static int
forward_retry(struct session *s)
{
	const char *m = s->req->method;

	if (!s->up_reused || s->req->body != HTTP_BODY_NONE ||
	    s->rec.bytes_down > 0 || (strcmp(m, "GET") != 0 &&
	    strcmp(m, "HEAD") != 0 && strcmp(m, "OPTIONS") != 0))
		return 0;
	s->up_reused = 0;
	session_free_upstream(s);
	s->rec.addr[0] = '\0';
	s->rec.bytes_up = 0;
	s->passed = 0;
	bufferevent_disable(s->cbev, EV_READ);
	session_route(s);
	return 1;
}

/* --- Connecting ---------------------------------------------------- */

static void
session_connected(struct session *s)
{
	char a[ADDR_STR_SIZE];
	const struct aisb_addr *addr = &s->addrs[s->nextaddr - 1];

	s->rec.connect_ms = ms_since(&s->t_connect);
	if (addr->family == AF_INET6)
		snprintf(s->rec.addr, sizeof(s->rec.addr), "[%s]:%u",
		    addr_ntop(addr, a), s->req->port);
	else
		snprintf(s->rec.addr, sizeof(s->rec.addr), "%s:%u",
		    addr_ntop(addr, a), s->req->port);
	session_nodelay(bufferevent_getfd(s->ubev));
	bufferevent_setwatermark(s->ubev, EV_WRITE, SESSION_LOW_WATER, 0);
	bufferevent_setwatermark(s->cbev, EV_WRITE, SESSION_LOW_WATER, 0);
	if (!s->req->is_connect) {
		if (s->up == NULL)
			s->up = malloc(sizeof(*s->up));
		if (s->up != NULL) {
			memcpy(s->up->host, s->req->host, sizeof(s->up->host));
			s->up->is_ip = s->req->host_is_ip;
			s->up->port = s->req->port;
			s->up->addr = *addr;
			memcpy(s->up->addrstr, s->rec.addr,
			    sizeof(s->up->addrstr));
		}
		forward_start(s);
		return;
	}
	evbuffer_add_printf(bufferevent_get_output(s->cbev),
	    "HTTP/1.1 200 Connection established\r\n\r\n");
	s->rec.status = 200;
	if (s->tls && s->g->conf->sni != SNI_OFF && !s->rule_is_addr) {
		session_send(s->cbev);
		session_set_state(s, SESSION_TLS_HELLO);
		session_timer(s, s->g->conf->tls_timeout);
		bufferevent_enable(s->cbev, EV_READ);
		if (evbuffer_get_length(bufferevent_get_input(s->cbev)) > 0)
			tunnel_hello(s);
		return;
	}
	tunnel_start(s);
}

/* Dial the next checked address; may free the session. */
static void
session_dial(struct session *s)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	const struct aisb_addr *a;
	socklen_t sslen;

	session_free_upstream(s);
	if (s->nextaddr >= s->naddrs) {
		session_refuse(s, 502, "upstream: connection failed");
		return;
	}
	a = &s->addrs[s->nextaddr++];
	memset(&ss, 0, sizeof(ss));
	if (a->family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(s->req->port);
		memcpy(&sin->sin_addr, a->b, 4);
		sslen = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(s->req->port);
		memcpy(&sin6->sin6_addr, a->b, 16);
		sslen = sizeof(*sin6);
	}
	s->ubev = bufferevent_socket_new(s->g->base, -1,
	    BEV_OPT_CLOSE_ON_FREE);
	if (s->ubev == NULL) {
		session_refuse(s, 503, "out of memory");
		return;
	}
	bufferevent_setcb(s->ubev, upstream_readcb, upstream_writecb,
	    upstream_eventcb, s);
	session_set_state(s, SESSION_CONNECTING);
	session_timer(s, s->g->conf->connect_timeout);
	clock_gettime(CLOCK_MONOTONIC, &s->t_connect);
	/* The address dialled is the address checked: no name here. */
	if (bufferevent_socket_connect(s->ubev, (struct sockaddr *)&ss,
	    (int)sslen) == -1)
		session_dial(s);
}

/* DNS answered: keep only addresses the gate may dial. */
static void
session_resolved(void *arg, int status, const char *why,
    const struct aisb_addr *addrs, size_t n)
{
	struct session *s = arg;
	const char *range;
	size_t kept;

	s->dns = NULL;
	s->rec.dns_ms = ms_since(&s->t_dns);
	if (status != 0) {
		session_refuse(s, 502, why);
		return;
	}
	memcpy(s->addrs, addrs, n * sizeof(*addrs));
	kept = acl_filter_addrs(s->g->allow, s->g->conf, s->addrs, n,
	    s->req->port, &s->refused, &range);
	if (kept == 0 || (s->g->conf->strict_dns && kept != n)) {
		session_refuse(s, 403, kept == 0 ?
		    "all resolved addresses refused" :
		    "answer holds refused addresses (--strict-dns)");
		return;
	}
	s->naddrs = kept;
	s->nextaddr = 0;
	session_dial(s);
}

/* --- Requests ------------------------------------------------------ */

/* A complete head is in s->req: decide, then resolve or dial. */
static void
session_request(struct session *s, const char *p)
{
	struct acl_result r;
	const struct allow_entry *e;

	memcpy(s->tgt.method, s->req->method, sizeof(s->tgt.method));
	memcpy(s->tgt.host, s->req->host, sizeof(s->tgt.host));
	s->tgt.ip = s->req->ip;
	s->tgt.port = s->req->port;
	s->tgt.is_ip = s->req->host_is_ip;
	s->rec.method = s->tgt.method;
	s->rec.host = s->tgt.host;
	s->rec.hostlen = strlen(s->tgt.host);
	s->rec.port = s->tgt.port;
	if (s->req->head_len > s->head_cap) {
		free(s->head);
		s->head_cap = 0;
		if ((s->head = malloc(s->req->head_len)) == NULL) {
			session_refuse(s, 503, "out of memory");
			return;
		}
		s->head_cap = s->req->head_len;
	}
	memcpy(s->head, p, s->req->head_len);
	/* Fields point into s->head from now on; the input holds the body. */
	evbuffer_drain(bufferevent_get_input(s->cbev), s->req->head_len);
	s->head_scanned = s->head_line = 0;
	s->mode = s->req->is_connect ? ALLOW_MODE_CONNECT : ALLOW_MODE_FORWARD;
	acl_check_target(s->g->allow, s->g->conf, s->req->host,
	    s->req->host_is_ip, &s->req->ip, s->req->port, s->mode, &r);
	if (r.entry != NULL)
		snprintf(s->rule, sizeof(s->rule), "%s", r.entry->text);
	if (!r.allow) {
		session_refuse(s, r.status, r.reason);
		return;
	}
	e = r.entry;
	s->rule_is_addr = e->kind == ALLOW_KIND_ADDR;
	s->tls = s->req->is_connect && allow_entry_is_tls(e, s->req->port);
	s->rec.reason = "allowlisted";
	s->up_reused = 0;
	if (session_reuse(s)) {
		s->up_reused = 1;
		forward_start(s);
		return;
	}
	/* No more reading until this exchange is under way. */
	bufferevent_disable(s->cbev, EV_READ);
	session_route(s);
}

/*
 * The upstream kept from the last exchange serves this request only for
 * the same host and port, and only if its address passes the filter a
 * fresh DNS answer would (the allowlist may have changed). Else it goes.
 */
static int
session_reuse(struct session *s)
{
	struct upstream_kept *u = s->up;
	struct aisb_addr a;
	struct sbuf scratch;
	const char *why;
	size_t kept;

	if (!s->up_idle)
		return 0;
	s->up_idle = 0;
	if (s->req->is_connect || u->is_ip != s->req->host_is_ip ||
	    u->port != s->req->port || strcmp(u->host, s->req->host) != 0) {
		session_free_upstream(s);
		return 0;
	}
	if (!u->is_ip) {
		a = u->addr;
		sbuf_init(&scratch);
		kept = acl_filter_addrs(s->g->allow, s->g->conf, &a, 1,
		    u->port, &scratch, &why);
		sbuf_free(&scratch);
		if (kept != 1) {
			session_free_upstream(s);
			return 0;
		}
	}
	s->addrs[0] = u->addr;
	s->naddrs = s->nextaddr = 1;
	memcpy(s->rec.addr, u->addrstr, sizeof(s->rec.addr));
	return 1;
}

/* Resolve the target, or dial an IP literal at once; may free. */
static void
session_route(struct session *s)
{
	if (s->req->host_is_ip) {
		s->addrs[0] = s->req->ip;
		s->naddrs = 1;
		s->nextaddr = 0;
		session_dial(s);
		return;
	}
	session_set_state(s, SESSION_DNS);
	session_timer(s, s->g->conf->dns_timeout + 2);
	clock_gettime(CLOCK_MONOTONIC, &s->t_dns);
	s->dns = dns_resolve(s->g->dns, s->req->host, session_resolved, s);
	if (s->dns == NULL)
		session_refuse(s, 503, "dns: too many pending queries");
}

/* Parse the next head from the client's input; may free the session. */
static int
session_next_request(struct session *s)
{
	struct evbuffer *in = bufferevent_get_input(s->cbev);
	size_t len = evbuffer_get_length(in);
	const char *p, *nl;
	int rc;

	if (len == 0)
		return 0;
	if (!s->head_timer_armed) {
		/* The head deadline runs from its first byte (slowloris). */
		s->head_timer_armed = 1;
		session_timer(s, s->g->conf->head_timeout);
	}
	if (len > HTTP_HEAD_MAX + 1)
		len = HTTP_HEAD_MAX + 1;
	p = (const char *)evbuffer_pullup(in, (ssize_t)len);
	/*
	 * The parser re-reads the whole head: run it only when a line ended
	 * or a cap may have been passed, so a client sending one byte at a
	 * time costs linear, not quadratic, work.
	 */
	nl = len > s->head_scanned ? memrchr(p + s->head_scanned, '\n',
	    len - s->head_scanned) : NULL;
	s->head_scanned = len;
	if (nl != NULL)
		s->head_line = (size_t)(nl - p) + 1;
	else if (len - s->head_line <= HTTP_LINE_MAX && len <= HTTP_HEAD_MAX)
		return 0;
	rc = http_request_parse(p, len, s->req);	/* it clears *s->req */
	if (rc == HTTP_NEED_MORE)
		return 0;
	session_rec_begin(s);
	if (rc == HTTP_BAD) {
		if (s->req->method[0] != '\0')
			s->rec.method = s->req->method;
		if (s->req->host[0] != '\0') {
			s->rec.host = s->req->host;
			s->rec.hostlen = strlen(s->req->host);
		}
		session_refuse(s, s->req->status, s->req->why);
		return -1;
	}
	if (s->g->log_broken) {
		session_refuse(s, 503, "log cannot be written");
		return -1;
	}
	session_request(s, p);
	return 0;
}

/* --- Callbacks ----------------------------------------------------- */

static void
session_readcb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	switch (s->state) {
	case SESSION_HEAD:
		session_next_request(s);
		break;
	case SESSION_TLS_HELLO:
		tunnel_hello(s);
		break;
	case SESSION_FORWARD:
		session_timer(s, s->g->conf->idle_timeout);
		if (forward_request_body(s) == -1) {
			session_close(s, 0, s->req_chunk.why);
			return;
		}
		if (s->req_done && s->resp_done)
			forward_done(s);
		else if (s->req_done)
			bufferevent_disable(s->cbev, EV_READ);
		break;
	default:
		/* Reading is off in the other states; keep bytes queued. */
		break;
	}
}

static void
session_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;

	/*
	 * A client may half-close once its request is complete (RFC 9112
	 * 9.6): answer it, then close. Anything else is an abort.
	 */
	if ((what & BEV_EVENT_EOF) && !s->req->is_connect && s->rec_open &&
	    (s->state == SESSION_DNS || s->state == SESSION_CONNECTING ||
	    (s->state == SESSION_FORWARD && s->req_done)) &&
	    (s->req->body == HTTP_BODY_NONE || s->state == SESSION_FORWARD)) {
		s->req->keep_alive = 0;
		s->keep = 0;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	if (s->passed)
		session_close(s, 1, "client closed the connection");
	else
		session_close(s, 0, "client closed the connection");
}

static void
upstream_readcb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	if (s->up_idle) {
		/* Bytes nobody asked for: it cannot be trusted again. */
		session_free_upstream(s);
		return;
	}
	session_timer(s, s->g->conf->idle_timeout);
	if (s->state == SESSION_FORWARD)
		forward_response(s);
	else
		bufferevent_disable(bev, EV_READ);	/* hold until ready */
}

/* Upstream's output drained below the low water mark. */
static void
upstream_writecb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	if (s->state == SESSION_FORWARD && !s->req_done)
		bufferevent_enable(s->cbev, EV_READ);
}

static void
upstream_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;

	if (s->up_idle) {
		session_free_upstream(s);	/* closed while idle */
		return;
	}
	if (s->state == SESSION_CONNECTING) {
		if (what & BEV_EVENT_CONNECTED) {
			session_connected(s);
			return;
		}
		session_dial(s);	/* try the next checked address */
		return;
	}
	if (s->state == SESSION_FORWARD) {
		if ((what & BEV_EVENT_EOF) && s->resp_head_done &&
		    s->resp->body == HTTP_BODY_CLOSE) {
			s->resp_done = 1;
			s->keep = 0;
			if (!s->req_done)
				s->req_done = 1;
			forward_done(s);
			return;
		}
		if (!s->resp_head_done && forward_retry(s))
			return;
		if (!s->resp_head_done) {
			session_refuse(s, 502, "upstream closed before "
			    "responding");
			return;
		}
	}
	session_close(s, s->passed, "upstream closed the connection");
}

static void
session_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	switch (s->state) {
	case SESSION_HEAD:
		if (s->head_timer_armed) {
			session_rec_begin(s);
			session_refuse(s, 408, "request head timeout");
		} else
			session_close(s, 0, NULL);
		break;
	case SESSION_DNS:
		session_refuse(s, 502, "dns: timeout");
		break;
	case SESSION_CONNECTING:
		session_refuse(s, 504, "upstream: connect timeout");
		break;
	case SESSION_TLS_HELLO:
		session_close(s, 0, "tls: no ClientHello before deadline");
		break;
	case SESSION_FLUSH:
		session_close(s, 0, NULL);
		break;
	default:
		session_close(s, 1, "idle timeout");
		break;
	}
}

/* --- Accept, reload, drain ----------------------------------------- */

void
session_accept(struct gate *g, int fd, struct sockaddr *sa, int salen)
{
	struct session *s;
	struct aisb_addr a;
	char buf[ADDR_STR_SIZE];
	uint16_t port = 0;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		close(fd);
		return;
	}
	s->g = g;
	s->cid = ++g->next_id;
	sbuf_init(&s->refused);
	memset(&a, 0, sizeof(a));
	if (sa->sa_family == AF_INET) {
		a.family = AF_INET;
		memcpy(a.b, &((struct sockaddr_in *)sa)->sin_addr, 4);
		port = ntohs(((struct sockaddr_in *)sa)->sin_port);
		snprintf(s->rec.client, sizeof(s->rec.client), "%s:%u",
		    addr_ntop(&a, buf), port);
	} else if (sa->sa_family == AF_INET6) {
		a.family = AF_INET6;
		memcpy(a.b, &((struct sockaddr_in6 *)sa)->sin6_addr, 16);
		port = ntohs(((struct sockaddr_in6 *)sa)->sin6_port);
		snprintf(s->rec.client, sizeof(s->rec.client), "[%s]:%u",
		    addr_ntop(&a, buf), port);
	}
	s->next = g->sessions;
	if (g->sessions != NULL)
		g->sessions->prev = s;
	g->sessions = s;
	g->nsessions++;
	session_nodelay(fd);
	s->cbev = bufferevent_socket_new(g->base, fd, BEV_OPT_CLOSE_ON_FREE);
	s->timer = evtimer_new(g->base, session_timer_cb, s);
	s->req = calloc(1, sizeof(*s->req));
	if (s->cbev == NULL || s->timer == NULL || s->req == NULL) {
		if (s->cbev == NULL)
			close(fd);
		session_close(s, 0, NULL);
		return;
	}
	bufferevent_setcb(s->cbev, session_readcb, client_writecb,
	    session_eventcb, s);
	/* Bound what one client can queue in the gate. */
	bufferevent_setwatermark(s->cbev, EV_READ, 0, HTTP_HEAD_MAX + 4096);
	session_set_state(s, SESSION_HEAD);
	if (g->nsessions > g->conf->max_conns) {
		session_rec_begin(s);
		session_refuse(s, 503, "too many connections");
		return;
	}
	s->head_timer_armed = 1;
	session_timer(s, g->conf->head_timeout);
	bufferevent_enable(s->cbev, EV_READ);
}

void
session_recheck_all(struct gate *g)
{
	struct session *s, *next;

	for (s = g->sessions; s != NULL; s = next) {
		next = s->next;
		if (s->up_idle)
			session_free_upstream(s);	/* decide afresh */
		if (s->state == SESSION_HEAD || s->state == SESSION_FLUSH)
			continue;
		if (!session_still_allowed(s))
			session_close(s, 0, "allowlist reloaded: entry removed");
	}
}

void
session_drain(struct gate *g, int all)
{
	struct session *s, *next;

	for (s = g->sessions; s != NULL; s = next) {
		next = s->next;
		if (all)
			session_close(s, s->passed, "gate stopping");
		else if (s->state == SESSION_HEAD &&
		    evbuffer_get_length(bufferevent_get_input(s->cbev)) == 0)
			session_close(s, 0, NULL);
	}
}
