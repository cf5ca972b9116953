/*
 * DNS through c-ares, driven by the gate's libevent loop.
 *
 * Names are looked up exactly as given, fully qualified: no search list,
 * no hosts file (lookups "b"), A and AAAA. Results are always delivered
 * from the loop, never from inside dns_resolve(), so a caller is never
 * re-entered before it has stored the request handle.
 *
 * Answers with addresses are kept for their smallest TTL, at most
 * --dns-cache seconds, in a small direct-mapped table; a TTL of 0 is never
 * kept, failures are never kept, SIGHUP empties it. The cache holds the
 * answer as received: the caller filters it against the allowlist in
 * force on every use, cached or not.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ares.h>
#include <event2/event.h>

#include "gate.h"

struct dns_sock {
	ares_socket_t		 fd;
	struct event		*ev;
	struct dns_sock		*next;
};

#define DNS_CACHE_SLOTS	256	/* direct-mapped by a hash of the name */

struct dns_cached {
	char			 name[HOST_CANON_SIZE];
	struct aisb_addr	 addrs[GATE_ADDRS_MAX];
	size_t			 naddrs;
	time_t			 expires;	/* monotonic seconds; 0 empty */
};

struct dns_ctx {
	struct event_base	*base;
	ares_channel		 ch;
	struct event		*timer;
	struct dns_sock		*socks;
	int			 pending;
	int			 max;
	int			 cache_max;	/* seconds; 0 no cache */
	struct dns_cached	*cache;		/* DNS_CACHE_SLOTS, or NULL */
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
	int			 ttl;		/* smallest of the answer's */
	char			 name[HOST_CANON_SIZE];
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
	d->cache_max = conf->dns_cache;
	if (d->cache_max > 0 &&
	    (d->cache = calloc(DNS_CACHE_SLOTS, sizeof(*d->cache))) == NULL) {
		aisb_errno(err, "dns cache");
		dns_free(d);
		return NULL;
	}
	return d;
}

static time_t
dns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* The cache slot for a name (FNV-1a). */
static struct dns_cached *
dns_slot(struct dns_ctx *d, const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name != '\0'; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return &d->cache[h % DNS_CACHE_SLOTS];
}

/* A live cached answer for name, or NULL. */
static struct dns_cached *
dns_cache_get(struct dns_ctx *d, const char *name)
{
	struct dns_cached *c;

	if (d->cache == NULL)
		return NULL;
	c = dns_slot(d, name);
	if (c->expires == 0 || strcmp(c->name, name) != 0)
		return NULL;
	if (dns_now() >= c->expires) {
		c->expires = 0;
		return NULL;
	}
	return c;
}

/* Keep a good answer for min(its TTL, --dns-cache); a TTL of 0 is not. */
static void
dns_cache_put(struct dns_ctx *d, const struct dns_req *r)
{
	struct dns_cached *c;
	int ttl = r->ttl;

	if (d->cache == NULL || r->status != 0 || r->naddrs == 0 || ttl <= 0)
		return;
	if (ttl > d->cache_max)
		ttl = d->cache_max;
	c = dns_slot(d, r->name);
	memcpy(c->name, r->name, sizeof(c->name));
	memcpy(c->addrs, r->addrs, r->naddrs * sizeof(r->addrs[0]));
	c->naddrs = r->naddrs;
	c->expires = dns_now() + ttl;
}

void
dns_flush(struct dns_ctx *d)
{
	if (d != NULL && d->cache != NULL)
		memset(d->cache, 0, DNS_CACHE_SLOTS * sizeof(*d->cache));
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
	if (d->timer != NULL)
		event_free(d->timer);
	free(d->cache);
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
		if (r->ttl < 0 || n->ai_ttl < r->ttl)
			r->ttl = n->ai_ttl;
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
	dns_cache_put(r->ctx, r);
	if (event_base_once(r->ctx->base, -1, EV_TIMEOUT, dns_deliver, r,
	    &now) == -1)
		free(r);
}

struct dns_req *
dns_resolve(struct dns_ctx *d, const char *name, dns_cb cb, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct ares_addrinfo_hints hints;
	char fqdn[HOST_CANON_SIZE + 1];
	struct dns_cached *c;
	struct dns_req *r;

	c = dns_cache_get(d, name);
	if (c == NULL && d->pending >= d->max)
		return NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->ctx = d;
	r->cb = cb;
	r->arg = arg;
	r->ttl = -1;
	snprintf(r->name, sizeof(r->name), "%s", name);
	if (c != NULL) {
		/* Delivered from the loop all the same. */
		memcpy(r->addrs, c->addrs, c->naddrs * sizeof(c->addrs[0]));
		r->naddrs = c->naddrs;
		if (event_base_once(d->base, -1, EV_TIMEOUT, dns_deliver, r,
		    &now) == -1) {
			free(r);
			return NULL;
		}
		return r;
	}
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
