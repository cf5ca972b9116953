/*
 * DNS through c-ares, driven by the gate's libevent loop.
 *
 * Names are looked up exactly as given, fully qualified: no search list,
 * no hosts file (lookups "b"), A and AAAA. Results are always delivered
 * from the loop, never from inside dns_resolve(), so a caller is never
 * re-entered before it has stored the request handle.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ares.h>
#include <event2/event.h>

#include "gate.h"

struct dns_sock {
	ares_socket_t		 fd;
	struct event		*ev;
	struct dns_sock		*next;
};

struct dns_ctx {
	struct event_base	*base;
	ares_channel		 ch;
	struct event		*timer;
	struct dns_sock		*socks;
	int			 pending;
	int			 max;
};

struct dns_req {
	struct dns_ctx		*ctx;
	dns_cb			 cb;
	void			*arg;
	int			 cancelled;
	int			 status;
	const char		*why;
	struct aisb_addr	 addrs[GATE_ADDRS_MAX];
	size_t			 naddrs;
};

/* Schedule c-ares's next timeout on the loop. */
static void
dns_rearm(struct dns_ctx *d)
{
	struct timeval tv, *tvp;

	tvp = ares_timeout(d->ch, NULL, &tv);
	if (tvp != NULL)
		evtimer_add(d->timer, tvp);
	else
		evtimer_del(d->timer);
}

static void
dns_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_ctx *d = arg;

	ares_process_fd(d->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	dns_rearm(d);
}

static void
dns_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_ctx *d = arg;

	ares_process_fd(d->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	dns_rearm(d);
}

/* c-ares tells which of its sockets want reading or writing. */
static void
dns_sock_state(void *arg, ares_socket_t fd, int readable, int writable)
{
	struct dns_ctx *d = arg;
	struct dns_sock **pp, *s;
	short what;

	for (pp = &d->socks; (s = *pp) != NULL; pp = &s->next)
		if (s->fd == fd)
			break;
	if (!readable && !writable) {
		if (s != NULL) {
			*pp = s->next;
			event_free(s->ev);
			free(s);
		}
		return;
	}
	what = EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			return;
		s->fd = fd;
		s->next = d->socks;
		d->socks = s;
	} else
		event_free(s->ev);
	s->ev = event_new(d->base, fd, what, dns_sock_cb, d);
	if (s->ev != NULL)
		event_add(s->ev, NULL);
}

struct dns_ctx *
dns_init(struct event_base *base, const struct gate_conf *conf,
    struct aisb_error *err)
{
	struct ares_options o;
	struct dns_ctx *d;
	int rc, mask;

	if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		aisb_err(err, "c-ares: %s", ares_strerror(rc));
		return NULL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		aisb_errno(err, "dns");
		return NULL;
	}
	d->base = base;
	d->max = conf->max_dns_pending;
	memset(&o, 0, sizeof(o));
	o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	o.lookups = (char *)"b";
	o.sock_state_cb = dns_sock_state;
	o.sock_state_cb_data = d;
	/* c-ares doubles the timeout per round: t + 2t = the whole budget. */
	o.timeout = conf->dns_timeout * 1000 / 3;
	if (o.timeout < 100)
		o.timeout = 100;
	o.tries = 2;
	o.ndomains = 0;
	o.domains = NULL;
	mask = ARES_OPT_FLAGS | ARES_OPT_LOOKUPS | ARES_OPT_SOCK_STATE_CB |
	    ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_DOMAINS;
	if ((rc = ares_init_options(&d->ch, &o, mask)) != ARES_SUCCESS) {
		aisb_err(err, "c-ares: %s", ares_strerror(rc));
		free(d);
		return NULL;
	}
	if (conf->dns_servers != NULL &&
	    (rc = ares_set_servers_ports_csv(d->ch, conf->dns_servers)) !=
	    ARES_SUCCESS) {
		aisb_err(err, "--dns-server %s: %s", conf->dns_servers,
		    ares_strerror(rc));
		ares_destroy(d->ch);
		free(d);
		return NULL;
	}
	d->timer = evtimer_new(base, dns_timer_cb, d);
	return d;
}

void
dns_free(struct dns_ctx *d)
{
	struct dns_sock *s;

	if (d == NULL)
		return;
	ares_destroy(d->ch);
	while ((s = d->socks) != NULL) {
		d->socks = s->next;
		event_free(s->ev);
		free(s);
	}
	event_free(d->timer);
	free(d);
	ares_library_cleanup();
}

/* Deliver a finished request from the loop, unless it was cancelled. */
static void
dns_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct dns_req *r = arg;

	if (!r->cancelled)
		r->cb(r->arg, r->status, r->why, r->addrs, r->naddrs);
	free(r);
}

static const char *
dns_reason(int status)
{
	switch (status) {
	case ARES_ENOTFOUND:
		return "dns: no such name";
	case ARES_ENODATA:
		return "dns: no address for name";
	case ARES_ESERVFAIL:
		return "dns: server failure";
	case ARES_ETIMEOUT:
		return "dns: timeout";
	case ARES_EREFUSED:
		return "dns: query refused";
	case ARES_ECONNREFUSED:
		return "dns: server unreachable";
	case ARES_EBADRESP:
	case ARES_EFORMERR:
		return "dns: malformed answer";
	default:
		return "dns: resolver error";
	}
}

/* Append an answer's addresses, without duplicates, up to the cap. */
static void
dns_collect(struct dns_req *r, struct ares_addrinfo *res)
{
	struct ares_addrinfo_node *n;
	struct aisb_addr a;
	size_t i;

	for (n = res->nodes; n != NULL; n = n->ai_next) {
		memset(&a, 0, sizeof(a));
		if (n->ai_family == AF_INET) {
			a.family = AF_INET;
			memcpy(a.b, &((struct sockaddr_in *)n->ai_addr)->
			    sin_addr, 4);
		} else if (n->ai_family == AF_INET6) {
			a.family = AF_INET6;
			memcpy(a.b, &((struct sockaddr_in6 *)n->ai_addr)->
			    sin6_addr, 16);
		} else
			continue;
		for (i = 0; i < r->naddrs; i++)
			if (addr_equal(&r->addrs[i], &a))
				break;
		if (i == r->naddrs && r->naddrs < GATE_ADDRS_MAX)
			r->addrs[r->naddrs++] = a;
	}
}

static void
dns_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	static const struct timeval now = { 0, 0 };
	struct dns_req *r = arg;

	r->ctx->pending--;
	if (status == ARES_EDESTRUCTION) {
		/* The gate is exiting; nobody is waiting. */
		if (res != NULL)
			ares_freeaddrinfo(res);
		free(r);
		return;
	}
	r->status = status == ARES_SUCCESS ? 0 : -1;
	if (res != NULL) {
		dns_collect(r, res);
		ares_freeaddrinfo(res);
	}
	if (r->status == 0 && r->naddrs == 0) {
		r->status = -1;
		status = ARES_ENODATA;
	}
	if (r->status == -1)
		r->why = dns_reason(status);
	if (event_base_once(r->ctx->base, -1, EV_TIMEOUT, dns_deliver, r,
	    &now) == -1)
		free(r);
}

struct dns_req *
dns_resolve(struct dns_ctx *d, const char *name, dns_cb cb, void *arg)
{
	struct ares_addrinfo_hints hints;
	char fqdn[HOST_CANON_SIZE + 1];
	struct dns_req *r;

	if (d->pending >= d->max)
		return NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->ctx = d;
	r->cb = cb;
	r->arg = arg;
	/* The trailing dot makes the name absolute: no search list. */
	snprintf(fqdn, sizeof(fqdn), "%s.", name);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_flags = ARES_AI_NOSORT;
	d->pending++;
	ares_getaddrinfo(d->ch, fqdn, NULL, &hints, dns_answer, r);
	dns_rearm(d);
	return r;
}

void
dns_cancel(struct dns_req *r)
{
	if (r != NULL)
		r->cancelled = 1;
}
