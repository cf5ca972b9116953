/*
 * aisb-gate: an HTTP CONNECT and forward proxy that lets a request through
 * only to an allowlisted name. See aisb-gate --help and docs/gate.md.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "gate.h"

static const char usage_text[] =
"usage: aisb-gate --listen ADDR:PORT [--allow ENTRY]... [--allow-file FILE]...\n"
"                 [--dns-server ADDR[:PORT]]... [--log FILE|-]\n"
"                 [--sni strict|allowlisted|off] [--strict-dns] [limits]\n"
"       aisb-gate -n [--allow ENTRY]... [--allow-file FILE]...\n"
"       aisb-gate --check HOST[:PORT] [--allow ENTRY]... [--allow-file FILE]...\n"
"\n"
"An HTTP/1.1 CONNECT and absolute-URI forward proxy that lets a request\n"
"through only to a name or address the allowlist names.\n"
"\n"
"  --listen ADDR:PORT     address to serve on, e.g. 127.0.0.1:3128, [::1]:3128\n"
"  --allow ENTRY          allow ENTRY (repeatable): example.com (and names\n"
"                         below it; CONNECT 443, forward 80), example.com:22\n"
"                         (that port; add /notls for a non-TLS port), an IP\n"
"                         address, IP:PORT, [IPv6]:PORT or a CIDR\n"
"  --allow-file FILE      read entries from FILE, one per line, # comments;\n"
"                         refused if group- or world-writable\n"
"  --dns-server A[:P]     resolver to ask (repeatable; default: resolv.conf)\n"
"  --log FILE|-           JSON line per request to FILE (default -: stdout)\n"
"  --sni MODE             CONNECT to a TLS port: strict (SNI must name the\n"
"                         CONNECT host, default), allowlisted (any allowed\n"
"                         name), off (no check)\n"
"  --strict-dns           refuse a name whose answer holds any refused address\n"
"  -n                     check the configuration and exit\n"
"  --check HOST[:PORT]    print the decision for a CONNECT to HOST:PORT\n"
"                         (default port 443) and the entry behind it; exit 0\n"
"                         when allowed, 1 when refused; no DNS, no serving\n"
"  --help, --version\n"
"\n"
"Limits (seconds unless stated; defaults in brackets):\n"
"  --max-conns N [512]    concurrent connections; 503 beyond\n"
"  --max-dns-pending N [256]\n"
"  --head-timeout S [10]  whole request head, from its first byte\n"
"  --connect-timeout S [10]\n"
"  --idle-timeout S [300] no bytes either way\n"
"  --tls-timeout S [10]   ClientHello after the 200\n"
"  --dns-timeout S [5]\n"
"  --drain-timeout S [10] on SIGTERM/SIGINT, before open tunnels are cut\n"
"  --dns-cache S [60]     keep an answer this long at most, never past its\n"
"                         TTL; 0 asks the resolver for every request\n"
"\n"
"Signals: SIGHUP reloads the allowlist (a bad file keeps the old list) and\n"
"reopens the log; SIGTERM and SIGINT stop accepting and drain.\n"
"Exit status: 0 ok, 1 refused (--check) or runtime failure, 2 usage or\n"
"configuration error.\n";

enum {
	OPT_LISTEN = 256, OPT_ALLOW, OPT_ALLOW_FILE, OPT_DNS_SERVER, OPT_LOG,
	OPT_SNI, OPT_STRICT_DNS, OPT_CHECK, OPT_HELP, OPT_VERSION,
	OPT_MAX_CONNS, OPT_MAX_DNS, OPT_HEAD_TO, OPT_CONNECT_TO, OPT_IDLE_TO,
	OPT_TLS_TO, OPT_DNS_TO, OPT_DRAIN_TO, OPT_DNS_CACHE,
};

static const struct option longopts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "allow-file", required_argument, NULL, OPT_ALLOW_FILE },
	{ "dns-server", required_argument, NULL, OPT_DNS_SERVER },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "sni", required_argument, NULL, OPT_SNI },
	{ "strict-dns", no_argument, NULL, OPT_STRICT_DNS },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
	{ "max-dns-pending", required_argument, NULL, OPT_MAX_DNS },
	{ "head-timeout", required_argument, NULL, OPT_HEAD_TO },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TO },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TO },
	{ "tls-timeout", required_argument, NULL, OPT_TLS_TO },
	{ "dns-timeout", required_argument, NULL, OPT_DNS_TO },
	{ "drain-timeout", required_argument, NULL, OPT_DRAIN_TO },
	{ "dns-cache", required_argument, NULL, OPT_DNS_CACHE },
	{ NULL, 0, NULL, 0 },
};

static __attribute__((noreturn)) void
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aisb-gate: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'aisb-gate --help'.\n");
	exit(2);
}

/* A bounded decimal in [min, max] for option name, or exit 2. */
static int
parse_num(const char *name, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	if (*s < '0' || *s > '9')
		usage_error("--%s: \"%s\" is not a number", name, s);
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		usage_error("--%s: \"%s\" is not a number from %d to %d",
		    name, s, min, max);
	return (int)v;
}

/* Split "host:port" or "[v6]:port"; port may be absent when dflt > 0. */
static int
split_hostport(const char *s, char *host, size_t hostsz, uint16_t *port,
    int dflt)
{
	const char *colon, *p;
	size_t hlen;
	char *end;
	long v;

	if (*s == '[') {
		if ((p = strchr(s, ']')) == NULL)
			return -1;
		hlen = (size_t)(p - s - 1);
		s++;
		colon = p[1] == ':' ? p + 1 : (p[1] == '\0' ? NULL : p);
		if (colon == p)
			return -1;
	} else {
		colon = strrchr(s, ':');
		if (colon != NULL && strchr(s, ':') != colon)
			colon = NULL;	/* a bare IPv6 address */
		hlen = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (hlen == 0 || hlen >= hostsz)
		return -1;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (colon == NULL) {
		if (dflt <= 0)
			return -1;
		*port = (uint16_t)dflt;
		return 0;
	}
	if (colon[1] < '1' || colon[1] > '9')
		return -1;
	v = strtol(colon + 1, &end, 10);
	if (*end != '\0' || v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* --listen: a numeric address and a port. */
static void
conf_listen(struct gate_conf *c, const char *arg)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&c->listen_ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&c->listen_ss;
	char host[128];
	uint16_t port;

	if (split_hostport(arg, host, sizeof(host), &port, 0) == -1)
		usage_error("--listen: \"%s\" is not ADDR:PORT", arg);
	memset(&c->listen_ss, 0, sizeof(c->listen_ss));
	memset(&c->listen_addr, 0, sizeof(c->listen_addr));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		c->listen_sslen = sizeof(*sin);
		c->listen_addr.family = AF_INET;
		memcpy(c->listen_addr.b, &sin->sin_addr, 4);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		c->listen_sslen = sizeof(*sin6);
		c->listen_addr.family = AF_INET6;
		memcpy(c->listen_addr.b, &sin6->sin6_addr, 16);
	} else
		usage_error("--listen: \"%s\" is not a numeric address", host);
	c->listen_port = port;
	snprintf(c->listen, sizeof(c->listen), "%s", arg);
}

/* --dns-server: validate and append to the c-ares CSV list. */
static void
conf_dns_server(struct gate_conf *c, const char *arg, int *n)
{
	struct aisb_addr a;
	char host[128], item[160];
	uint16_t port;
	size_t len;

	if (split_hostport(arg, host, sizeof(host), &port, 53) == -1 ||
	    addr_parse_literal(host, strlen(host), &a) != 1 ||
	    strchr(host, '%') != NULL)
		usage_error("--dns-server: \"%s\" is not ADDR[:PORT]", arg);
	if (++*n > GATE_DNS_SERVERS_MAX)
		usage_error("--dns-server: at most %d servers",
		    GATE_DNS_SERVERS_MAX);
	if (a.family == AF_INET6)
		snprintf(item, sizeof(item), "[%s]:%u", host, port);
	else
		snprintf(item, sizeof(item), "%s:%u", host, port);
	len = c->dns_servers ? strlen(c->dns_servers) : 0;
	c->dns_servers = realloc(c->dns_servers, len + strlen(item) + 2);
	if (c->dns_servers == NULL)
		usage_error("out of memory");
	snprintf(c->dns_servers + len, strlen(item) + 2, "%s%s",
	    len ? "," : "", item);
}

static char **
strv_add(char **v, size_t *n, const char *s)
{
	if ((v = realloc(v, (*n + 1) * sizeof(*v))) == NULL ||
	    (v[*n] = strdup(s)) == NULL)
		usage_error("out of memory");
	(*n)++;
	return v;
}

/* Free what the command line allocated. */
static void
conf_free(struct gate_conf *c)
{
	size_t i;

	for (i = 0; i < c->nallow_args; i++)
		free(c->allow_args[i]);
	for (i = 0; i < c->nallow_files; i++)
		free(c->allow_files[i]);
	free(c->allow_args);
	free(c->allow_files);
	free(c->dns_servers);
}

int
gate_load_allowlist(struct gate_conf *c, struct allowlist *al,
    struct aisb_error *err)
{
	size_t i;

	allowlist_init(al);
	for (i = 0; i < c->nallow_args; i++)
		if (allowlist_add(al, c->allow_args[i], strlen(c->allow_args[i]),
		    "--allow", err) == -1) {
			char msg[AISB_ERR_MAX];

			snprintf(msg, sizeof(msg), "%s", err->msg);
			aisb_err(err, "--allow: %s", msg);
			allowlist_free(al);
			return -1;
		}
	for (i = 0; i < c->nallow_files; i++)
		if (allowlist_load_file(al, c->allow_files[i], err) == -1) {
			allowlist_free(al);
			return -1;
		}
	return 0;
}

/* --check: the decision for a CONNECT, without DNS. */
static int
gate_check(struct gate_conf *c, struct allowlist *al, const char *arg)
{
	char host[HOST_CANON_SIZE + 8], canon[HOST_CANON_SIZE];
	char abuf[ADDR_STR_SIZE];
	struct aisb_error err;
	struct acl_result r;
	struct aisb_addr a;
	uint16_t port;
	int isip;

	if (split_hostport(arg, host, sizeof(host), &port, 443) == -1)
		usage_error("--check: \"%s\" is not HOST[:PORT]", arg);
	isip = addr_parse_literal(host, strlen(host), &a);
	if (isip == -1)
		usage_error("--check: \"%s\": malformed IP address", host);
	if (isip == 1)
		snprintf(canon, sizeof(canon), "%s", addr_ntop(&a, abuf));
	else if (host_canon(host, strlen(host), canon, &err) == -1)
		usage_error("--check: \"%s\": %s", host, err.msg);
	acl_check_target(al, c, canon, isip, &a, port, ALLOW_MODE_CONNECT,
	    &r);
	if (!r.allow) {
		printf("deny %s%s%s:%u reason=%s\n", isip && a.family ==
		    AF_INET6 ? "[" : "", canon, isip && a.family == AF_INET6 ?
		    "]" : "", port, r.reason);
		return 1;
	}
	printf("allow %s%s%s:%u rule=%s origin=%s%s\n", isip && a.family ==
	    AF_INET6 ? "[" : "", canon, isip && a.family == AF_INET6 ? "]" :
	    "", port, r.entry->text, r.entry->origin,
	    !isip && addr_parse_literal(canon, strlen(canon), &a) == 0 ?
	    " (addresses are checked when resolved)" : "");
	return 0;
}

static void
gate_sighup(evutil_socket_t sig, short what, void *arg)
{
	struct gate *g = arg;
	struct allowlist *nal;
	struct aisb_error err;

	dns_flush(g->dns);	/* names are resolved afresh after a reload */
	if ((nal = malloc(sizeof(*nal))) == NULL)
		return;
	if (gate_load_allowlist(g->conf, nal, &err) == -1) {
		fprintf(stderr, "aisb-gate: reload failed, keeping the old "
		    "allowlist: %s\n", err.msg);
		free(nal);
	} else {
		allowlist_free(g->allow);
		free(g->allow);
		g->allow = nal;
		fprintf(stderr, "aisb-gate: allowlist reloaded: %zu entries\n",
		    nal->n);
		session_recheck_all(g);
	}
	log_flush(g);		/* what was finished goes to the old file */
	if (log_open(g, &err) == -1)
		fprintf(stderr, "aisb-gate: %s\n", err.msg);
}

static void
gate_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct gate *g = arg;

	event_base_loopexit(g->base, NULL);
}

static void
gate_sigterm(evutil_socket_t sig, short what, void *arg)
{
	struct gate *g = arg;
	struct timeval tv = { g->conf->drain_timeout, 0 };

	if (g->draining) {
		event_base_loopexit(g->base, NULL);
		return;
	}
	fprintf(stderr, "aisb-gate: signal %d: draining %d connections\n",
	    (int)sig, g->nsessions);
	g->draining = 1;
	evconnlistener_disable(g->listener);
	session_drain(g, 0);
	if (g->nsessions == 0)
		event_base_loopexit(g->base, NULL);
	else
		event_base_once(g->base, -1, EV_TIMEOUT, gate_drain_timeout,
		    g, &tv);
}

static void
gate_accept(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	session_accept(arg, fd, sa, salen);
}

static void
gate_accept_resume(evutil_socket_t fd, short what, void *arg)
{
	struct gate *g = arg;

	if (!g->draining)
		evconnlistener_enable(g->listener);
}

/* On EMFILE pause accepting for a moment instead of spinning (relayd). */
static void
gate_accept_error(struct evconnlistener *l, void *arg)
{
	struct gate *g = arg;
	struct timeval tv = { 1, 0 };
	int e = EVUTIL_SOCKET_ERROR();

	fprintf(stderr, "aisb-gate: accept: %s\n", strerror(e));
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		evconnlistener_disable(l);
		evtimer_add(g->accept_timer, &tv);
	}
}

/*
 * The event base. epoll's changelist folds the event_del/event_add pairs
 * of one loop turn into one epoll_ctl, or none (about 10 to 4 per new
 * tunnel, 6 to 2 per forwarded request; docs/performance.md). It is unsafe
 * only for dup(2)ed fds, and the gate never dups one.
 */
static struct event_base *
gate_base_new(void)
{
	struct event_config *cfg;
	struct event_base *base;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

int
main(int argc, char **argv)
{
	struct event *ev_hup = NULL, *ev_term = NULL, *ev_int = NULL;
	struct gate_conf conf;
	struct gate g;
	struct aisb_error err;
	const char *check = NULL;
	int ch, nflag = 0, ndns = 0, rv = 0;

	memset(&conf, 0, sizeof(conf));
	memset(&g, 0, sizeof(g));
	conf.log_path = "-";
	conf.sni = SNI_STRICT;
	conf.max_conns = 512;
	conf.max_dns_pending = 256;
	conf.head_timeout = 10;
	conf.connect_timeout = 10;
	conf.idle_timeout = 300;
	conf.tls_timeout = 10;
	conf.dns_timeout = 5;
	conf.drain_timeout = 10;
	conf.dns_cache = 60;

	while ((ch = getopt_long(argc, argv, "n", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			nflag = 1;
			break;
		case OPT_LISTEN:
			conf_listen(&conf, optarg);
			break;
		case OPT_ALLOW:
			conf.allow_args = strv_add(conf.allow_args,
			    &conf.nallow_args, optarg);
			break;
		case OPT_ALLOW_FILE:
			conf.allow_files = strv_add(conf.allow_files,
			    &conf.nallow_files, optarg);
			break;
		case OPT_DNS_SERVER:
			conf_dns_server(&conf, optarg, &ndns);
			break;
		case OPT_LOG:
			conf.log_path = optarg;
			break;
		case OPT_SNI:
			if (strcmp(optarg, "strict") == 0)
				conf.sni = SNI_STRICT;
			else if (strcmp(optarg, "allowlisted") == 0)
				conf.sni = SNI_ALLOWLISTED;
			else if (strcmp(optarg, "off") == 0)
				conf.sni = SNI_OFF;
			else
				usage_error("--sni: \"%s\" is not strict, "
				    "allowlisted or off", optarg);
			break;
		case OPT_STRICT_DNS:
			conf.strict_dns = 1;
			break;
		case OPT_CHECK:
			check = optarg;
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return 0;
		case OPT_VERSION:
			printf("aisb-gate %s\n", AISB_VERSION);
			return 0;
		case OPT_DNS_CACHE:
			conf.dns_cache = parse_num("dns-cache", optarg, 0,
			    86400);
			break;
		case OPT_MAX_CONNS:
			conf.max_conns = parse_num("max-conns", optarg, 1,
			    65536);
			break;
		case OPT_MAX_DNS:
			conf.max_dns_pending = parse_num("max-dns-pending",
			    optarg, 1, 65536);
			break;
		case OPT_HEAD_TO:
			conf.head_timeout = parse_num("head-timeout", optarg,
			    1, 3600);
			break;
		case OPT_CONNECT_TO:
			conf.connect_timeout = parse_num("connect-timeout",
			    optarg, 1, 3600);
			break;
		case OPT_IDLE_TO:
			conf.idle_timeout = parse_num("idle-timeout", optarg,
			    1, 86400);
			break;
		case OPT_TLS_TO:
			conf.tls_timeout = parse_num("tls-timeout", optarg,
			    1, 3600);
			break;
		case OPT_DNS_TO:
			conf.dns_timeout = parse_num("dns-timeout", optarg,
			    1, 300);
			break;
		case OPT_DRAIN_TO:
			conf.drain_timeout = parse_num("drain-timeout", optarg,
			    0, 3600);
			break;
		default:
			fprintf(stderr, "Try 'aisb-gate --help'.\n");
			return 2;
		}
	}
	if (optind != argc)
		usage_error("unexpected argument \"%s\"", argv[optind]);

	if ((g.allow = malloc(sizeof(*g.allow))) == NULL)
		usage_error("out of memory");
	if (gate_load_allowlist(&conf, g.allow, &err) == -1) {
		fprintf(stderr, "aisb-gate: %s\n", err.msg);
		free(g.allow);
		conf_free(&conf);
		return 2;
	}
	if (check != NULL || nflag) {
		if (check != NULL)
			rv = gate_check(&conf, g.allow, check);
		else
			printf("aisb-gate: configuration OK: %zu allowlist "
			    "entries\n", g.allow->n);
		allowlist_free(g.allow);
		free(g.allow);
		conf_free(&conf);
		return rv;
	}
	if (conf.listen_sslen == 0)
		usage_error("--listen ADDR:PORT is required");
	if (g.allow->n == 0)
		fprintf(stderr, "aisb-gate: warning: the allowlist is empty; "
		    "every request will be refused\n");
	if (geteuid() == 0)
		fprintf(stderr, "aisb-gate: warning: running as root; the "
		    "gate needs no privileges\n");

	signal(SIGPIPE, SIG_IGN);
	g.conf = &conf;
	g.logfd = -1;
	if (log_open(&g, &err) == -1) {
		fprintf(stderr, "aisb-gate: %s\n", err.msg);
		rv = 1;
		goto out;
	}
	if ((g.base = gate_base_new()) == NULL) {
		fprintf(stderr, "aisb-gate: event_base_new failed\n");
		rv = 1;
		goto out;
	}
	if (log_start(&g, &err) == -1) {
		fprintf(stderr, "aisb-gate: %s\n", err.msg);
		rv = 1;
		goto out;
	}
	if ((g.dns = dns_init(g.base, &conf, &err)) == NULL) {
		fprintf(stderr, "aisb-gate: %s\n", err.msg);
		rv = 1;
		goto out;
	}
	g.listener = evconnlistener_new_bind(g.base, gate_accept, &g,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
	    128, (struct sockaddr *)&conf.listen_ss, (int)conf.listen_sslen);
	if (g.listener == NULL) {
		fprintf(stderr, "aisb-gate: --listen %s: %s\n", conf.listen,
		    strerror(errno));
		rv = 1;
		goto out;
	}
	evconnlistener_set_error_cb(g.listener, gate_accept_error);
	g.accept_timer = evtimer_new(g.base, gate_accept_resume, &g);
	ev_hup = evsignal_new(g.base, SIGHUP, gate_sighup, &g);
	ev_term = evsignal_new(g.base, SIGTERM, gate_sigterm, &g);
	ev_int = evsignal_new(g.base, SIGINT, gate_sigterm, &g);
	evsignal_add(ev_hup, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_int, NULL);
	fprintf(stderr, "aisb-gate %s: listening on %s, %zu allowlist "
	    "entries\n", AISB_VERSION, conf.listen, g.allow->n);

	event_base_dispatch(g.base);

	session_drain(&g, 1);
	log_flush(&g);
	fprintf(stderr, "aisb-gate: stopped\n");
out:
	if (g.listener != NULL)
		evconnlistener_free(g.listener);
	if (g.accept_timer != NULL)
		event_free(g.accept_timer);
	if (ev_hup != NULL) {
		event_free(ev_hup);
		event_free(ev_term);
		event_free(ev_int);
	}
	dns_free(g.dns);
	if (g.log_ev != NULL)
		event_free(g.log_ev);
	if (g.base != NULL)
		event_base_free(g.base);
	sbuf_free(&g.scratch);
	sbuf_free(&g.logq);
	allowlist_free(g.allow);
	free(g.allow);
	if (g.logfd > STDERR_FILENO)
		close(g.logfd);
	conf_free(&conf);
	return rv;
}
