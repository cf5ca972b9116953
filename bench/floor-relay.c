/*
 * floor-relay: the floor: what a relay with no checks costs; never a product.
 *
 * bench/run measures aisb-gate against this: a single-threaded, raw epoll
 * (level-triggered) CONNECT relay that parses one request line, connects to
 * the IP literal it names and copies bytes both ways through one static
 * buffer. No policy, no DNS, no logging. Loopback only, by intent: it
 * listens on and connects to loopback literals only, and exits after
 * --max-time seconds.
 */
#include <sys/epoll.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_HEAD_MAX	4096		/* request head we read */
#define FLOOR_BUF	(64 * 1024)	/* one read, one write */
#define FLOOR_EVENTS	256
#define FLOOR_ACCEPTS	64		/* accepts per listener event */
#define FLOOR_PAUSE_MS	100		/* accept pause on EMFILE */

#define FLOOR_OK	"HTTP/1.1 200 Connection established\r\n\r\n"
#define FLOOR_BAD	"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n" \
			"Connection: close\r\n\r\n"

enum relay_state {
	RELAY_HEAD,		/* reading the client's CONNECT */
	RELAY_CONNECTING,	/* upstream connect in flight */
	RELAY_OPEN,		/* copying both ways */
};

/* One end; pend is what was read here and not yet written to the other. */
struct side {
	struct relay	*r;
	int		 fd;
	uint32_t	 events;	/* interest registered with epoll */
	int		 eof;
	char		*pend;
	size_t		 pendoff;
	size_t		 pendlen;
};

struct relay {
	struct side	 s[2];		/* 0 the client, 1 the upstream */
	enum relay_state state;
	struct relay	*dead;		/* freed after the event batch */
	size_t		 headlen;
	size_t		 headend;	/* just past the CRLFCRLF */
	char		 head[FLOOR_HEAD_MAX];
};

static int		 ep = -1;
static int		 lfd = -1;
static struct relay	*deadlist;
static char		 buf[FLOOR_BUF];

/* Parse HOST:PORT or [HOST]:PORT, a loopback IP literal, into ss. */
static int
addr_parse(const char *p, size_t len, struct sockaddr_storage *ss,
    socklen_t *sl)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	char			 host[64], *colon, *end;
	unsigned long		 port;

	if (len >= sizeof(host))
		return (-1);
	memcpy(host, p, len);
	host[len] = '\0';
	if ((colon = strrchr(host, ':')) == NULL || colon - host < 1 ||
	    colon[1] < '0' || colon[1] > '9')
		return (-1);
	*colon = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port == 0 || port > 65535)
		return (-1);
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*sl = sizeof(*sin6);
		return (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) == 1 &&
		    IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) ? 0 : -1);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	*sl = sizeof(*sin);
	return (inet_pton(AF_INET, host, &sin->sin_addr) == 1 &&
	    (ntohl(sin->sin_addr.s_addr) >> 24) == 127 ? 0 : -1);
}

/* Close both ends and queue the relay to be freed after this batch. */
static void
relay_close(struct relay *r)
{
	int	i;

	for (i = 0; i < 2; i++) {
		if (r->s[i].fd != -1)
			close(r->s[i].fd);
		r->s[i].fd = -1;
		free(r->s[i].pend);
	}
	r->dead = deadlist;
	deadlist = r;
}

/* Register the interest an end needs, only if it changed. */
static int
relay_want(struct side *s, uint32_t want)
{
	struct epoll_event	ev;

	if (want == s->events)
		return (0);
	ev.events = s->events = want;
	ev.data.ptr = s;
	return (epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev));
}

/* Read an end while nothing waits to go out; write it when something does. */
static int
relay_arm(struct relay *r)
{
	int	i;

	for (i = 0; i < 2; i++) {
		if (relay_want(&r->s[i],
		    (!r->s[i].eof && r->s[i].pendlen == 0 ? EPOLLIN : 0) |
		    (r->s[1 - i].pendlen != 0 ? EPOLLOUT : 0)) == -1)
			return (-1);
	}
	return (0);
}

/* Write what was read from end d to the other end; keep a short tail. */
static int
relay_send(struct relay *r, int d, const char *p, size_t len)
{
	struct side	*s = &r->s[d];
	ssize_t		 n;

	if ((n = write(r->s[1 - d].fd, p, len)) == -1) {
		if (errno != EAGAIN)
			return (-1);
		n = 0;
	}
	if ((size_t)n == len)
		return (0);
	if (s->pend == NULL && (s->pend = malloc(FLOOR_BUF)) == NULL)
		return (-1);
	memcpy(s->pend, p + n, len - (size_t)n);
	s->pendoff = 0;
	s->pendlen = len - (size_t)n;
	return (0);
}

/* Check "CONNECT target HTTP/1.1" and start connecting to the target. */
static int
relay_connect(struct relay *r)
{
	struct sockaddr_storage	 ss;
	struct epoll_event	 ev;
	socklen_t		 sl;
	const char		*p = r->head + 8, *eol, *sp;
	int			 one = 1;

	eol = memmem(r->head, r->headend, "\r\n", 2);
	if (eol < p || memcmp(r->head, "CONNECT ", 8) != 0 ||
	    (sp = memchr(p, ' ', (size_t)(eol - p))) == NULL ||
	    eol - sp != 9 || memcmp(sp, " HTTP/1.1", 9) != 0 ||
	    addr_parse(p, (size_t)(sp - p), &ss, &sl) == -1) {
		(void)write(r->s[0].fd, FLOOR_BAD, sizeof(FLOOR_BAD) - 1);
		return (-1);
	}
	r->s[1].fd = socket(ss.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->s[1].fd == -1)
		return (-1);
	setsockopt(r->s[1].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(r->s[1].fd, (struct sockaddr *)&ss, sl) == -1 &&
	    errno != EINPROGRESS)
		return (-1);
	/* Even if it connected at once: the EPOLLOUT event says so. */
	ev.events = r->s[1].events = EPOLLOUT;
	ev.data.ptr = &r->s[1];
	r->state = RELAY_CONNECTING;
	return (epoll_ctl(ep, EPOLL_CTL_ADD, r->s[1].fd, &ev));
}

/* Read the request head; once it is complete, act on it. */
static int
relay_head(struct relay *r)
{
	const char	*end;
	size_t		 from = r->headlen > 3 ? r->headlen - 3 : 0;
	ssize_t		 n;

	n = read(r->s[0].fd, r->head + r->headlen,
	    sizeof(r->head) - r->headlen);
	if (n == -1 && errno == EAGAIN)
		return (0);
	if (n <= 0)
		return (-1);
	r->headlen += (size_t)n;
	end = memmem(r->head + from, r->headlen - from, "\r\n\r\n", 4);
	if (end == NULL)
		return (r->headlen == sizeof(r->head) ? -1 : 0);
	r->headend = (size_t)(end - r->head) + 4;
	return (relay_connect(r));
}

/* The upstream connect finished: answer 200, pass on what followed. */
static int
relay_open(struct relay *r)
{
	socklen_t	elen = sizeof(int);
	int		err = 0;

	if (getsockopt(r->s[1].fd, SOL_SOCKET, SO_ERROR, &err, &elen) == -1 ||
	    err != 0)
		return (-1);
	if (write(r->s[0].fd, FLOOR_OK, sizeof(FLOOR_OK) - 1) !=
	    (ssize_t)sizeof(FLOOR_OK) - 1)
		return (-1);
	r->state = RELAY_OPEN;
	if (r->headend < r->headlen && relay_send(r, 0, r->head + r->headend,
	    r->headlen - r->headend) == -1)
		return (-1);
	return (relay_arm(r));
}

/* Handle an event on one end of a relay; -1 closes the relay. */
static int
relay_event(struct side *s, uint32_t events)
{
	struct relay	*r = s->r;
	int		 i = s == &r->s[0] ? 0 : 1;
	struct side	*o = &r->s[1 - i];
	ssize_t		 n;

	if (r->state == RELAY_HEAD)
		return (relay_head(r));
	if (r->state == RELAY_CONNECTING && i == 1)
		return (relay_open(r));
	if (r->state == RELAY_CONNECTING)	/* the client spoke early */
		return ((events & (EPOLLERR | EPOLLHUP)) ? -1 : relay_want(s, 0));
	if (events & EPOLLERR)
		return (-1);
	if ((events & EPOLLOUT) && o->pendlen != 0) {
		if ((n = write(s->fd, o->pend + o->pendoff, o->pendlen)) == -1 &&
		    errno != EAGAIN)
			return (-1);
		if (n > 0) {
			o->pendoff += (size_t)n;
			o->pendlen -= (size_t)n;
		}
	}
	if ((events & (EPOLLIN | EPOLLHUP)) && !s->eof && s->pendlen == 0) {
		if ((n = read(s->fd, buf, sizeof(buf))) == -1 && errno != EAGAIN)
			return (-1);
		if (n > 0 && relay_send(r, i, buf, (size_t)n) == -1)
			return (-1);
		/* Half-close: pass the EOF on (close will, if both are done). */
		if (n == 0) {
			s->eof = 1;
			if (!o->eof && shutdown(o->fd, SHUT_WR) == -1)
				return (-1);
		}
	}
	if (s->eof && o->eof)
		return (-1);
	return (relay_arm(r));
}

/* Accept what waits; 1 on EMFILE and the like, to pause the listener. */
static int
floor_accept(void)
{
	struct epoll_event	 ev;
	struct relay		*r;
	int			 fd, i, one = 1;

	for (i = 0; i < FLOOR_ACCEPTS; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1 && (errno == EMFILE || errno == ENFILE ||
		    errno == ENOBUFS || errno == ENOMEM))
			return (1);
		if (fd == -1 && errno == EAGAIN)
			break;
		if (fd == -1)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if ((r = malloc(sizeof(*r))) == NULL) {
			close(fd);
			continue;
		}
		memset(r, 0, offsetof(struct relay, head));
		r->s[0].r = r->s[1].r = r;
		r->s[0].fd = fd;
		r->s[1].fd = -1;
		ev.events = r->s[0].events = EPOLLIN;
		ev.data.ptr = &r->s[0];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
			close(fd);
			free(r);
		}
	}
	return (0);
}

/* Milliseconds on the monotonic clock. */
static long long
floor_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: floor-relay --listen 127.0.0.1:PORT|[::1]:PORT "
	    "[--max-time SECS]\n\nA CONNECT relay with no checks, the floor "
	    "bench/run compares aisb-gate with.\nLoopback only; exits after "
	    "--max-time seconds (default 600).\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "max-time", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct epoll_event	 ev, evs[FLOOR_EVENTS];
	struct sockaddr_storage	 ss;
	struct side		*s;
	struct relay		*r;
	socklen_t		 sl = 0;
	char			*end;
	long long		 deadline, now, resume = 0;
	long			 maxtime = 600;
	int			 c, i, n, timeout, one = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return (0);
		}
		if (c == 'l' && addr_parse(optarg, strlen(optarg), &ss,
		    &sl) == -1)
			errx(1, "--listen: \"%s\" is not a loopback IP literal "
			    "with a port (127.0.0.1:PORT or [::1]:PORT)", optarg);
		if (c == 't' && ((maxtime = strtol(optarg, &end, 10)) < 1 ||
		    maxtime > 86400 || end == optarg || *end != '\0'))
			errx(1, "--max-time: \"%s\" is not a number of seconds "
			    "from 1 to 86400", optarg);
		if (c != 'l' && c != 't') {
			usage(stderr);
			return (1);
		}
	}
	if (optind != argc || sl == 0) {
		usage(stderr);
		return (1);
	}
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (lfd == -1 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&ss, sl) == -1 ||
	    listen(lfd, SOMAXCONN) == -1)
		err(1, "--listen");
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == -1)
		err(1, "epoll");

	deadline = floor_now() + (long long)maxtime * 1000;
	while ((now = floor_now()) < deadline) {
		if (resume != 0 && now >= resume) {
			ev.events = EPOLLIN;
			epoll_ctl(ep, EPOLL_CTL_MOD, lfd, &ev);
			resume = 0;
		}
		timeout = (int)((resume != 0 ? resume : deadline) - now);
		if ((n = epoll_wait(ep, evs, FLOOR_EVENTS, timeout)) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "epoll_wait");
		}
		for (i = 0; i < n; i++) {
			if ((s = evs[i].data.ptr) != NULL) {
				/* A relay closed earlier in this batch: skip. */
				if (s->fd != -1 &&
				    relay_event(s, evs[i].events) == -1)
					relay_close(s->r);
			} else if (resume == 0 && floor_accept() == 1) {
				ev.events = 0;
				epoll_ctl(ep, EPOLL_CTL_MOD, lfd, &ev);
				resume = floor_now() + FLOOR_PAUSE_MS;
			}
		}
		while ((r = deadlist) != NULL) {
			deadlist = r->dead;
			free(r);
		}
	}
	return (0);
}
