/*
 * aisb-bench: a single-threaded epoll load generator for bench/run.
 *
 * It talks HTTP/1.1 to an origin directly, through a proxy's CONNECT
 * tunnels (optionally with TLS inside them), or through a proxy's
 * absolute-URI forwarding, and prints one line of key=value results. It
 * also times a proxy's start-up and answers DNS for one name, so the gate
 * can be measured with a name as well as with an IP literal.
 *
 * Loopback only, by intent: every address it is given must be 127.0.0.0/8
 * or ::1. Every loop is bounded by a count and a deadline.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define BENCH_HEAD_MAX		16384	/* response head we accept */
#define BENCH_SCRATCH		(256 * 1024)
#define BENCH_CONNS_MAX		20000
#define BENCH_LAT_MAX		(4u * 1024 * 1024)	/* samples kept */
#define BENCH_REQ_TIMEOUT_NS	(10ull * 1000000000ull)
#define BENCH_SWEEP_NS		(100ull * 1000000ull)
#define BENCH_EVENTS		256
#define NS			1000000000ull

enum bench_workload {
	BENCH_NEW,		/* new connection (and tunnel) per request */
	BENCH_KEEPALIVE,	/* requests on long-lived connections */
	BENCH_BULK,		/* a large body, few connections, N bytes */
	BENCH_IDLE,		/* open N tunnels, leave them idle, RSS */
};

enum bench_via {
	BENCH_DIRECT,
	BENCH_TUNNEL,		/* CONNECT, then origin-form inside */
	BENCH_FORWARD,		/* absolute-URI to the proxy */
};

enum conn_state {
	CONN_CONNECTING,
	CONN_SEND_CONNECT,
	CONN_READ_CONNECT,
	CONN_TLS,
	CONN_SEND,
	CONN_READ_HEAD,
	CONN_READ_BODY,
	CONN_IDLE,		/* idle workload: established, waiting */
	CONN_FREE,
};

struct conn {
	int		 fd;
	int		 slot;
	enum conn_state	 st;
	SSL		*ssl;
	const char	*out;
	size_t		 outlen;
	size_t		 outoff;
	char		 in[BENCH_HEAD_MAX];
	size_t		 inlen;
	uint64_t	 body_left;
	int		 body_to_eof;
	int		 resp_close;	/* the server will close after this */
	int		 fresh;		/* no request done on it yet */
	int		 reused;	/* a response already came on it */
	uint64_t	 t0;		/* this request's start */
	uint64_t	 deadline;
};

struct bench {
	enum bench_workload	 workload;
	enum bench_via		 via;
	struct sockaddr_storage	 dst;	/* proxy, or origin when direct */
	socklen_t		 dstlen;
	char			 authority[300];	/* host:port */
	char			 sni[300];
	char			 path[256];
	int			 tls;
	int			 conns;
	double			 duration;
	double			 warmup;
	uint64_t		 max_reqs;
	uint64_t		 bulk_bytes;
	int			 idle_n;
	pid_t			 pid;
	double			 max_time;

	char			 req[1024];
	size_t			 reqlen;
	char			 connect_req[700];
	size_t			 connect_reqlen;

	int			 epfd;
	SSL_CTX			*ctx;
	struct conn		*c;
	int			 nconns;	/* slots in use */
	int			 nidle;
	int			 nstarted;	/* idle workload: opened */

	uint64_t		 t_begin;
	uint64_t		 t_measure;	/* warm-up over */
	uint64_t		 t_stop;
	uint64_t		 t_end;
	int			 measuring;
	int			 stopping;
	uint64_t		 done;
	uint64_t		 errors;
	uint64_t		 reconnects;
	uint64_t		 body_bytes;
	char			 first_error[160];
	uint32_t		*lat;
	size_t			 nlat;
	double			 cpu0;
	double			 cpu1;
	double			 sys0;		/* of which in the kernel */
	double			 sys1;
	double			 self0;		/* the load generator's own */
	double			 self1;
	long			 rss0;
	long			 rss1;
};

static struct bench	 B;
static char		 scratch[BENCH_SCRATCH];
static volatile sig_atomic_t stop_signal;

static void	conn_start(int);
static void	conn_io(struct conn *);

static void __attribute__((noreturn, format(printf, 1, 2)))
bench_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "aisb-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void
bench_on_signal(int sig)
{
	stop_signal = sig;
}

/* Parse ADDR:PORT or [ADDR]:PORT; loopback only. */
static void
bench_parse_addr(const char *flag, const char *s, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char host[128];
	const char *colon;
	char *end;
	long port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			bench_fatal("%s: \"%s\" is not [ADDR]:PORT", flag, s);
		hl = (size_t)(colon - s - 1);
		if (hl >= sizeof(host))
			bench_fatal("%s: address too long", flag);
		memcpy(host, s + 1, hl);
		colon++;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			bench_fatal("%s: \"%s\" is not ADDR:PORT", flag, s);
		hl = (size_t)(colon - s);
		if (hl >= sizeof(host))
			bench_fatal("%s: address too long", flag);
		memcpy(host, s, hl);
	}
	host[hl] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port < 1 || port > 65535)
		bench_fatal("%s: bad port in \"%s\"", flag, s);
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		if ((ntohl(sin->sin_addr.s_addr) >> 24) != 127)
			bench_fatal("%s: %s is not a loopback address", flag,
			    host);
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			bench_fatal("%s: %s is not a loopback address", flag,
			    host);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
	} else
		bench_fatal("%s: \"%s\" is not an IP address", flag, host);
}

/* utime+stime of a process in seconds (its stime in *sys); -1 if unknown. */
static double
proc_cpu(pid_t pid, double *sys)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	double hz = (double)sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, i;

	*sys = -1;
	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* Fields after the command name, which may hold spaces. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	p++;
	for (i = 0; i < 11 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %lu %lu", &ut, &st) != 2)
		return -1;
	*sys = (double)st / hz;
	return (double)(ut + st) / hz;
}

/* This process's CPU time in seconds. */
static double
self_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return -1;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* VmRSS of a process in KiB; -1 if unknown. */
static long
proc_rss(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;
	int i;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	for (i = 0; i < 100 && fgets(line, sizeof(line), f) != NULL; i++) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kib;
}

/* Record an error on a connection (only the first message is kept). */
static void
bench_error(const char *fmt, ...)
{
	va_list ap;

	if (B.measuring || B.workload == BENCH_IDLE ||
	    B.workload == BENCH_BULK)
		B.errors++;
	if (B.first_error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(B.first_error, sizeof(B.first_error), fmt, ap);
	va_end(ap);
}

/* Close a connection's socket and TLS state; the slot stays. */
static void
conn_close(struct conn *c)
{
	if (c->ssl != NULL) {
		SSL_free(c->ssl);
		c->ssl = NULL;
	}
	if (c->fd != -1) {
		close(c->fd);
		c->fd = -1;
	}
	if (c->st == CONN_IDLE)
		B.nidle--;
	c->st = CONN_FREE;
}

/* A connection failed: count it, and start its slot again. */
static void
conn_fail(struct conn *c, const char *what, int err)
{
	if (err != 0)
		bench_error("%s: %s", what, strerror(err));
	else
		bench_error("%s", what);
	conn_close(c);
	if (!B.stopping && B.workload != BENCH_IDLE)
		conn_start(c->slot);
}

/* Queue bytes to send on c. */
static void
conn_out(struct conn *c, const char *p, size_t len)
{
	c->out = p;
	c->outlen = len;
	c->outoff = 0;
}

/* Send the queued bytes: 1 done, 0 would block, -1 error. */
static int
conn_flush(struct conn *c)
{
	ssize_t n;
	int r, e;

	while (c->outoff < c->outlen) {
		if (c->ssl != NULL) {
			ERR_clear_error();
			r = SSL_write(c->ssl, c->out + c->outoff,
			    (int)(c->outlen - c->outoff));
			if (r <= 0) {
				e = SSL_get_error(c->ssl, r);
				if (e == SSL_ERROR_WANT_WRITE ||
				    e == SSL_ERROR_WANT_READ)
					return 0;
				conn_fail(c, "tls write failed", 0);
				return -1;
			}
			n = r;
		} else {
			n = send(c->fd, c->out + c->outoff,
			    c->outlen - c->outoff, MSG_NOSIGNAL);
			if (n == -1) {
				if (errno == EAGAIN || errno == EINTR)
					return 0;
				conn_fail(c, "send", errno);
				return -1;
			}
		}
		c->outoff += (size_t)n;
	}
	return 1;
}

/* Read: >0 bytes, 0 EOF, -1 would block, -2 error (c failed). */
static ssize_t
conn_read(struct conn *c, char *buf, size_t len)
{
	ssize_t n;
	int r, e;

	if (c->ssl != NULL) {
		ERR_clear_error();
		r = SSL_read(c->ssl, buf, (int)(len > INT_MAX ? INT_MAX : len));
		if (r > 0)
			return r;
		e = SSL_get_error(c->ssl, r);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			return -1;
		if (e == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (e == SSL_ERROR_SYSCALL && r == 0)
			return 0;
		conn_fail(c, "tls read failed", 0);
		return -2;
	}
	n = recv(c->fd, buf, len, 0);
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EINTR)
		return -1;
	conn_fail(c, "recv", errno);
	return -2;
}

/* Where the head ends (after CRLFCRLF) in c->in, or 0. */
static size_t
head_end(const char *p, size_t len)
{
	const char *e;

	if (len < 4)
		return 0;
	e = memmem(p, len, "\r\n\r\n", 4);
	return e == NULL ? 0 : (size_t)(e - p) + 4;
}

/* Status code of a response head, or -1. */
static int
head_status(const char *p, size_t len)
{
	if (len < 12 || strncmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' ||
	    !isdigit((unsigned char)p[9]) || !isdigit((unsigned char)p[10]) ||
	    !isdigit((unsigned char)p[11]))
		return -1;
	return (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
}

/*
 * Framing of a response head: Content-Length (else to EOF), whether the
 * server closes afterwards. Chunked bodies are refused: the origin serves
 * static files with a length.
 */
static int
head_framing(struct conn *c, const char *p, size_t len)
{
	const char *line = p, *end = p + len, *nl, *v;
	int http10 = len > 8 && p[7] == '0';
	int have_len = 0, saw_conn = 0;
	size_t ll;

	c->resp_close = http10;
	c->body_left = 0;
	while (line < end && (nl = memchr(line, '\n', (size_t)(end - line)))
	    != NULL) {
		ll = (size_t)(nl - line);
		if (ll > 15 && strncasecmp(line, "content-length:", 15) == 0) {
			c->body_left = strtoull(line + 15, NULL, 10);
			have_len = 1;
		} else if (ll > 18 &&
		    strncasecmp(line, "transfer-encoding:", 18) == 0)
			return -1;
		else if (ll > 11 && strncasecmp(line, "connection:", 11) == 0) {
			for (v = line + 11; v < nl && *v == ' '; v++)
				;
			saw_conn = 1;
			if ((size_t)(nl - v) >= 5 &&
			    strncasecmp(v, "close", 5) == 0)
				c->resp_close = 1;
			else if ((size_t)(nl - v) >= 10 &&
			    strncasecmp(v, "keep-alive", 10) == 0)
				c->resp_close = 0;
		}
		line = nl + 1;
	}
	(void)saw_conn;
	c->body_to_eof = !have_len;
	if (!have_len)
		c->resp_close = 1;
	return 0;
}

/* The next request on c: the GET (its start is the clock's start). */
static void
conn_request(struct conn *c)
{
	if (!c->fresh)
		c->t0 = now_ns();
	c->reused = !c->fresh;
	c->fresh = 0;
	c->deadline = c->t0 + BENCH_REQ_TIMEOUT_NS;
	c->inlen = 0;
	conn_out(c, B.req, B.reqlen);
	c->st = CONN_SEND;
}

/* A response is complete: count it, go on as the workload says. */
static void
conn_done(struct conn *c)
{
	uint64_t t = now_ns();

	if (B.measuring) {
		B.done++;
		if (B.lat != NULL && B.nlat < BENCH_LAT_MAX) {
			uint64_t us = (t - c->t0) / 1000;

			B.lat[B.nlat++] = us > UINT32_MAX ? UINT32_MAX :
			    (uint32_t)us;
		}
	}
	if (B.workload == BENCH_IDLE) {
		c->st = CONN_IDLE;
		B.nidle++;
		return;
	}
	if (B.max_reqs > 0 && B.done >= B.max_reqs)
		B.stopping = 1;
	if (B.workload == BENCH_BULK && B.body_bytes >= B.bulk_bytes) {
		B.stopping = 1;
		B.t_end = t;
	}
	if (B.stopping) {
		conn_close(c);
		return;
	}
	if (B.workload == BENCH_NEW || c->resp_close) {
		if (B.workload != BENCH_NEW && B.measuring)
			B.reconnects++;
		conn_close(c);
		conn_start(c->slot);
		return;
	}
	conn_request(c);
}

/* Set up TLS on an established byte stream. */
static int
conn_tls_begin(struct conn *c)
{
	if ((c->ssl = SSL_new(B.ctx)) == NULL ||
	    SSL_set_fd(c->ssl, c->fd) != 1 ||
	    SSL_set_tlsext_host_name(c->ssl, B.sni) != 1) {
		conn_fail(c, "SSL_new failed", 0);
		return -1;
	}
	SSL_set_connect_state(c->ssl);
	c->st = CONN_TLS;
	return 0;
}

/* The body bytes in hand after a head; 1 if the response is complete. */
static int
conn_body_take(struct conn *c, size_t n)
{
	B.body_bytes += n;
	if (c->body_to_eof)
		return 0;
	if (n > c->body_left) {
		conn_fail(c, "more bytes than the response's length", 0);
		return -1;
	}
	c->body_left -= n;
	return c->body_left == 0;
}

/* Drive a connection as far as it goes without blocking. */
static void
conn_io(struct conn *c)
{
	socklen_t elen;
	ssize_t n;
	size_t he;
	int err, r, status;

	for (;;) {
		switch (c->st) {
		case CONN_CONNECTING:
			elen = sizeof(err);
			if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err,
			    &elen) == -1)
				err = errno;
			if (err == EINPROGRESS)
				return;
			if (err != 0) {
				conn_fail(c, "connect", err);
				return;
			}
			/*
			 * The first edge of a connecting socket is its
			 * completion: SO_ERROR says how it ended.
			 */
			if (B.via == BENCH_TUNNEL) {
				conn_out(c, B.connect_req, B.connect_reqlen);
				c->st = CONN_SEND_CONNECT;
			} else if (B.tls) {
				if (conn_tls_begin(c) == -1)
					return;
			} else
				conn_request(c);
			break;
		case CONN_SEND_CONNECT:
			if ((r = conn_flush(c)) <= 0)
				return;
			c->inlen = 0;
			c->st = CONN_READ_CONNECT;
			break;
		case CONN_READ_CONNECT:
			n = conn_read(c, c->in + c->inlen,
			    sizeof(c->in) - c->inlen);
			if (n == -1 || n == -2)
				return;
			if (n == 0) {
				conn_fail(c, "proxy closed before 200", 0);
				return;
			}
			c->inlen += (size_t)n;
			if ((he = head_end(c->in, c->inlen)) == 0) {
				if (c->inlen == sizeof(c->in)) {
					conn_fail(c, "CONNECT answer too long",
					    0);
					return;
				}
				break;
			}
			status = head_status(c->in, c->inlen);
			if (status != 200) {
				char why[64];

				snprintf(why, sizeof(why), "CONNECT answered "
				    "%d", status);
				conn_fail(c, why, 0);
				return;
			}
			if (he != c->inlen) {
				conn_fail(c, "bytes after the CONNECT answer",
				    0);
				return;
			}
			if (B.tls) {
				if (conn_tls_begin(c) == -1)
					return;
			} else
				conn_request(c);
			break;
		case CONN_TLS:
			ERR_clear_error();
			r = SSL_do_handshake(c->ssl);
			if (r != 1) {
				err = SSL_get_error(c->ssl, r);
				if (err == SSL_ERROR_WANT_READ ||
				    err == SSL_ERROR_WANT_WRITE)
					return;
				conn_fail(c, "tls handshake failed", 0);
				return;
			}
			conn_request(c);
			break;
		case CONN_SEND:
			if ((r = conn_flush(c)) <= 0)
				return;
			c->inlen = 0;
			c->st = CONN_READ_HEAD;
			break;
		case CONN_READ_HEAD:
			n = conn_read(c, c->in + c->inlen,
			    sizeof(c->in) - c->inlen);
			if (n == -1 || n == -2)
				return;
			if (n == 0 && c->inlen == 0 && c->reused) {
				/*
				 * A kept-alive connection the server closed
				 * without saying so: retry on a new one, as
				 * clients do, and count it.
				 */
				uint64_t t0 = c->t0;

				if (B.measuring)
					B.reconnects++;
				conn_close(c);
				conn_start(c->slot);
				c->t0 = t0;
				return;
			}
			if (n == 0) {
				conn_fail(c, "closed before a response", 0);
				return;
			}
			c->inlen += (size_t)n;
			if ((he = head_end(c->in, c->inlen)) == 0) {
				if (c->inlen == sizeof(c->in)) {
					conn_fail(c, "response head too long",
					    0);
					return;
				}
				break;
			}
			status = head_status(c->in, c->inlen);
			if (status != 200) {
				char why[64];

				snprintf(why, sizeof(why), "GET answered %d",
				    status);
				conn_fail(c, why, 0);
				return;
			}
			if (head_framing(c, c->in, he) == -1) {
				conn_fail(c, "chunked response", 0);
				return;
			}
			c->st = CONN_READ_BODY;
			if ((r = conn_body_take(c, c->inlen - he)) == -1)
				return;
			if (r == 1) {
				conn_done(c);
				if (c->st == CONN_FREE || c->st == CONN_IDLE)
					return;
			}
			break;
		case CONN_READ_BODY:
			n = conn_read(c, scratch, sizeof(scratch));
			if (n == -1 || n == -2)
				return;
			if (n == 0) {
				if (c->body_to_eof) {
					conn_done(c);
					if (c->st == CONN_FREE ||
					    c->st == CONN_IDLE)
						return;
					break;
				}
				conn_fail(c, "closed inside a body", 0);
				return;
			}
			if ((r = conn_body_take(c, (size_t)n)) == -1)
				return;
			if (r == 1) {
				conn_done(c);
				if (c->st == CONN_FREE || c->st == CONN_IDLE)
					return;
			}
			break;
		case CONN_IDLE:
			n = recv(c->fd, scratch, sizeof(scratch), 0);
			if (n == -1 && (errno == EAGAIN || errno == EINTR))
				return;
			conn_fail(c, "idle tunnel closed by the proxy",
			    n == -1 ? errno : 0);
			return;
		case CONN_FREE:
			return;
		}
	}
}

/* Open slot i's connection. */
static void
conn_start(int i)
{
	struct conn *c = &B.c[i];
	struct epoll_event ev;
	int one = 1;

	if (B.stopping)
		return;
	memset(c, 0, offsetof(struct conn, in));
	c->slot = i;
	c->fd = -1;
	c->fresh = 1;
	c->t0 = now_ns();
	c->deadline = c->t0 + BENCH_REQ_TIMEOUT_NS;
	c->st = CONN_CONNECTING;
	c->fd = socket(B.dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (c->fd == -1) {
		bench_error("socket: %s", strerror(errno));
		c->st = CONN_FREE;
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ev.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP;
	ev.data.u32 = (uint32_t)i;
	if (epoll_ctl(B.epfd, EPOLL_CTL_ADD, c->fd, &ev) == -1) {
		conn_fail(c, "epoll_ctl", errno);
		return;
	}
	if (connect(c->fd, (struct sockaddr *)&B.dst, B.dstlen) == -1 &&
	    errno != EINPROGRESS) {
		/* Do not restart at once: a refused port would spin. */
		bench_error("connect: %s", strerror(errno));
		close(c->fd);
		c->fd = -1;
		c->st = CONN_FREE;
		return;
	}
}

/* Fail connections past their deadline; restart free slots. */
static void
bench_sweep(uint64_t t)
{
	struct conn *c;
	int i;

	for (i = 0; i < B.nconns; i++) {
		c = &B.c[i];
		if (c->st == CONN_FREE) {
			if (B.workload != BENCH_IDLE && !B.stopping)
				conn_start(i);
			continue;
		}
		if (c->st != CONN_IDLE && t > c->deadline)
			conn_fail(c, "request timed out (10 s)", 0);
	}
}

static int
lat_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile of the sorted samples, in microseconds. */
static uint32_t
lat_pct(double p)
{
	size_t i;

	if (B.nlat == 0)
		return 0;
	i = (size_t)(p / 100.0 * (double)(B.nlat - 1) + 0.5);
	return B.lat[i];
}

/* Print the result line. */
static void
bench_report(void)
{
	double secs, cpu = -1, sys = -1;
	const char *w = "";

	switch (B.workload) {
	case BENCH_NEW:
		w = "new";
		break;
	case BENCH_KEEPALIVE:
		w = "keepalive";
		break;
	case BENCH_BULK:
		w = "bulk";
		break;
	case BENCH_IDLE:
		w = "idle";
		break;
	}
	if (B.cpu0 >= 0 && B.cpu1 >= 0) {
		cpu = B.cpu1 - B.cpu0;
		sys = B.sys1 - B.sys0;
	}
	printf("workload=%s", w);
	if (B.workload == BENCH_IDLE) {
		printf(" tunnels=%d established=%d rss_before_kib=%ld "
		    "rss_after_kib=%ld rss_per_tunnel_bytes=%.0f",
		    B.idle_n, B.nidle, B.rss0, B.rss1,
		    B.nidle > 0 && B.rss0 >= 0 && B.rss1 >= 0 ?
		    (double)(B.rss1 - B.rss0) * 1024.0 / B.nidle : -1.0);
	} else if (B.workload == BENCH_BULK) {
		secs = (double)(B.t_end - B.t_begin) / 1e9;
		printf(" bytes=%" PRIu64 " secs=%.3f mbps=%.1f cpu_s=%.2f "
		    "cpu_s_per_gib=%.3f", B.body_bytes, secs,
		    secs > 0 ? (double)B.body_bytes / secs / 1e6 : 0, cpu,
		    cpu >= 0 && B.body_bytes > 0 ?
		    cpu / ((double)B.body_bytes / (1024.0 * 1024 * 1024)) : -1);
	} else {
		secs = (double)(B.t_end - B.t_measure) / 1e9;
		qsort(B.lat, B.nlat, sizeof(*B.lat), lat_cmp);
		printf(" reqs=%" PRIu64 " secs=%.3f rps=%.0f p50_us=%u "
		    "p99_us=%u cpu_s=%.2f cpu_us_per_req=%.1f reconnects=%"
		    PRIu64, B.done, secs, secs > 0 ? (double)B.done / secs : 0,
		    lat_pct(50), lat_pct(99), cpu,
		    cpu >= 0 && B.done > 0 ? cpu * 1e6 / (double)B.done : -1,
		    B.reconnects);
	}
	if (B.workload != BENCH_IDLE)
		printf(" cpu_sys_s=%.2f", sys);
	if (B.workload == BENCH_NEW || B.workload == BENCH_KEEPALIVE)
		printf(" self_cpu_us_per_req=%.1f", B.done > 0 ?
		    (B.self1 - B.self0) * 1e6 / (double)B.done : -1.0);
	printf(" errors=%" PRIu64, B.errors);
	if (B.first_error[0] != '\0')
		printf(" first_error=\"%s\"", B.first_error);
	printf("\n");
	fflush(stdout);
}

/* Run a load workload to its end. */
static void
bench_run(void)
{
	struct epoll_event evs[BENCH_EVENTS];
	uint64_t t, last_sweep, hard_end;
	int i, n, timeout;

	if ((B.epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		bench_fatal("epoll_create1: %s", strerror(errno));
	B.nconns = B.workload == BENCH_IDLE ? B.idle_n : B.conns;
	if ((B.c = calloc((size_t)B.nconns, sizeof(*B.c))) == NULL)
		bench_fatal("out of memory");
	for (i = 0; i < B.nconns; i++) {
		B.c[i].fd = -1;
		B.c[i].st = CONN_FREE;
		B.c[i].slot = i;
	}
	if (B.workload == BENCH_NEW || B.workload == BENCH_KEEPALIVE) {
		if ((B.lat = malloc(BENCH_LAT_MAX * sizeof(*B.lat))) == NULL)
			bench_fatal("out of memory");
	}
	B.t_begin = now_ns();
	hard_end = B.t_begin + (uint64_t)(B.max_time * 1e9);
	if (B.workload == BENCH_NEW || B.workload == BENCH_KEEPALIVE) {
		B.t_measure = B.t_begin + (uint64_t)(B.warmup * 1e9);
		B.t_stop = B.t_measure + (uint64_t)(B.duration * 1e9);
		if (B.t_stop > hard_end)
			B.t_stop = hard_end;
	} else {
		B.measuring = 1;
		B.rss0 = proc_rss(B.pid);
		B.cpu0 = proc_cpu(B.pid, &B.sys0);
		B.self0 = self_cpu();
		B.t_measure = B.t_begin;
		B.t_stop = hard_end;
	}
	/* The idle workload opens its tunnels a batch at a time. */
	if (B.workload == BENCH_IDLE) {
		for (i = 0; i < B.conns && B.nstarted < B.idle_n; i++)
			conn_start(B.nstarted++);
	} else {
		for (i = 0; i < B.nconns; i++)
			conn_start(i);
	}
	last_sweep = B.t_begin;
	while (!B.stopping && !stop_signal) {
		t = now_ns();
		if (!B.measuring && t >= B.t_measure) {
			B.measuring = 1;
			B.cpu0 = proc_cpu(B.pid, &B.sys0);
			B.self0 = self_cpu();
		}
		if (t >= B.t_stop) {
			/* The end of a timed run; an unfinished bulk fails. */
			if (B.workload == BENCH_BULK)
				bench_error("stopped at the time limit");
			break;
		}
		timeout = (int)((B.t_stop - t) / 1000000) + 1;
		if (timeout > 100)
			timeout = 100;
		n = epoll_wait(B.epfd, evs, BENCH_EVENTS, timeout);
		if (n == -1 && errno != EINTR)
			bench_fatal("epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			struct conn *c = &B.c[evs[i].data.u32];

			if (c->st != CONN_FREE)
				conn_io(c);
		}
		if (B.workload == BENCH_IDLE) {
			int busy = 0;

			for (i = 0; i < B.nstarted; i++)
				if (B.c[i].st != CONN_IDLE &&
				    B.c[i].st != CONN_FREE)
					busy++;
			while (busy < B.conns && B.nstarted < B.idle_n) {
				conn_start(B.nstarted++);
				busy++;
			}
			if (B.nstarted == B.idle_n && busy == 0)
				break;
		}
		t = now_ns();
		if (t - last_sweep >= BENCH_SWEEP_NS) {
			last_sweep = t;
			bench_sweep(t);
		}
	}
	if (B.t_end == 0)
		B.t_end = now_ns();
	if (B.workload == BENCH_IDLE) {
		/* Let the proxy settle, then read its memory. */
		struct timespec ts = { 0, 500000000 };

		nanosleep(&ts, NULL);
		B.rss1 = proc_rss(B.pid);
		B.cpu1 = proc_cpu(B.pid, &B.sys1);
		/* Count tunnels the proxy closed while we waited. */
		n = epoll_wait(B.epfd, evs, BENCH_EVENTS, 0);
		for (i = 0; i < n; i++) {
			struct conn *c = &B.c[evs[i].data.u32];

			if (c->st == CONN_IDLE)
				conn_io(c);
		}
	} else
		B.cpu1 = proc_cpu(B.pid, &B.sys1);
	B.self1 = self_cpu();
	B.stopping = 1;
	bench_report();
	for (i = 0; i < B.nconns; i++)
		if (B.c[i].st != CONN_FREE)
			conn_close(&B.c[i]);
	close(B.epfd);
	free(B.c);
	free(B.lat);
}

/* Build the request texts once. */
static void
bench_requests(void)
{
	int n;

	if (B.via == BENCH_FORWARD)
		n = snprintf(B.req, sizeof(B.req), "GET http://%s%s HTTP/1.1"
		    "\r\nHost: %s\r\nUser-Agent: aisb-bench\r\nAccept: */*"
		    "\r\n\r\n", B.authority, B.path, B.authority);
	else
		n = snprintf(B.req, sizeof(B.req), "GET %s HTTP/1.1\r\n"
		    "Host: %s\r\nUser-Agent: aisb-bench\r\nAccept: */*\r\n"
		    "\r\n", B.path, B.authority);
	if (n < 0 || (size_t)n >= sizeof(B.req))
		bench_fatal("request too long");
	B.reqlen = (size_t)n;
	n = snprintf(B.connect_req, sizeof(B.connect_req), "CONNECT %s "
	    "HTTP/1.1\r\nHost: %s\r\nUser-Agent: aisb-bench\r\n\r\n",
	    B.authority, B.authority);
	if (n < 0 || (size_t)n >= sizeof(B.connect_req))
		bench_fatal("CONNECT request too long");
	B.connect_reqlen = (size_t)n;
}

/* --- startup --------------------------------------------------------- */

/*
 * Start a proxy (argv) pinned to cpu, and time how long until it first
 * accepts a connection (listen_ms) and first answers a request through it
 * (first_ms). The child is stopped by its PID before returning.
 */
static int
bench_startup(char **argv, int cpu)
{
	uint64_t t0, t_listen = 0, t_first = 0, limit;
	struct timespec pause = { 0, 100000 };
	char buf[512];
	size_t got;
	ssize_t n;
	pid_t pid;
	int fd, status = -1, i, wst;

	t0 = now_ns();
	if ((pid = fork()) == -1)
		bench_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		if (cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "aisb-bench: exec %s: %s\n", argv[0],
		    strerror(errno));
		_exit(127);
	}
	limit = t0 + 10 * NS;
	/* Bounded: at most 10 s of attempts, 100 us apart. */
	while (t_first == 0 && now_ns() < limit) {
		if (waitpid(pid, &wst, WNOHANG) == pid) {
			fprintf(stderr, "aisb-bench: the proxy exited during "
			    "start-up\n");
			return 1;
		}
		fd = socket(B.dst.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1)
			bench_fatal("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&B.dst, B.dstlen) == -1) {
			close(fd);
			nanosleep(&pause, NULL);
			continue;
		}
		if (t_listen == 0)
			t_listen = now_ns();
		if (B.via == BENCH_TUNNEL)
			n = send(fd, B.connect_req, B.connect_reqlen,
			    MSG_NOSIGNAL);
		else
			n = send(fd, B.req, B.reqlen, MSG_NOSIGNAL);
		got = 0;
		for (i = 0; i < 1000 && n > 0 && got < 12; i++) {
			struct pollfd pfd = { fd, POLLIN, 0 };

			if (poll(&pfd, 1, 5) <= 0)
				continue;
			n = recv(fd, buf + got, sizeof(buf) - got, 0);
			if (n > 0)
				got += (size_t)n;
		}
		close(fd);
		if (got >= 12) {
			t_first = now_ns();
			status = head_status(buf, got);
		} else
			nanosleep(&pause, NULL);
	}
	kill(pid, SIGTERM);
	for (i = 0; i < 500; i++) {
		if (waitpid(pid, &wst, WNOHANG) == pid)
			break;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	if (i == 500) {
		kill(pid, SIGKILL);
		waitpid(pid, &wst, 0);
	}
	printf("workload=startup listen_ms=%.2f first_ms=%.2f status=%d "
	    "errors=%d\n", t_listen ? (double)(t_listen - t0) / 1e6 : -1.0,
	    t_first ? (double)(t_first - t0) / 1e6 : -1.0, status,
	    t_first == 0 || status != 200);
	return t_first == 0;
}

/* --- dns --------------------------------------------------------------- */

/*
 * Answer A queries for one name with one address, AAAA with no data, and
 * everything else with NXDOMAIN (RFC 1035 4.1). UDP only; the answers are
 * small. Runs until SIGTERM or max_time.
 */
static int
bench_dns(const char *name, const char *addr, double max_time)
{
	struct sockaddr_storage peer;
	socklen_t plen;
	struct in_addr a;
	uint8_t q[512], r[600];
	char qname[256];
	size_t off, qend, ql, rl;
	uint16_t qtype;
	uint64_t end;
	ssize_t n;
	int fd, i;

	if (inet_pton(AF_INET, addr, &a) != 1 ||
	    (ntohl(a.s_addr) >> 24) != 127)
		bench_fatal("--dns-addr: %s is not a loopback IPv4 address",
		    addr);
	fd = socket(B.dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd == -1 || bind(fd, (struct sockaddr *)&B.dst, B.dstlen) == -1)
		bench_fatal("dns: bind: %s", strerror(errno));
	printf("dns: ready\n");
	fflush(stdout);
	end = now_ns() + (uint64_t)(max_time * 1e9);
	while (!stop_signal && now_ns() < end) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		plen = sizeof(peer);
		n = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&peer,
		    &plen);
		if (n < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1)
			continue;
		/* The question's name, label by label, bounded. */
		off = 12;
		ql = 0;
		for (i = 0; i < 128 && off < (size_t)n && q[off] != 0; i++) {
			size_t l = q[off];

			if (l > 63 || off + 1 + l >= (size_t)n ||
			    ql + l + 1 >= sizeof(qname))
				break;
			if (ql > 0)
				qname[ql++] = '.';
			memcpy(qname + ql, q + off + 1, l);
			ql += l;
			off += 1 + l;
		}
		if (off >= (size_t)n || q[off] != 0 || off + 5 > (size_t)n)
			continue;
		qname[ql] = '\0';
		qtype = (uint16_t)(q[off + 1] << 8 | q[off + 2]);
		qend = off + 5;
		memcpy(r, q, qend);
		r[2] = (uint8_t)(0x80 | (q[2] & 0x79) | 0x04);	/* QR AA RD */
		r[3] = 0x80;					/* RA */
		r[6] = r[7] = r[8] = r[9] = r[10] = r[11] = 0;
		rl = qend;
		if (strcasecmp(qname, name) != 0)
			r[3] |= 3;				/* NXDOMAIN */
		else if (qtype == 1) {
			static const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1,
			    0, 0, 0, 60, 0, 4 };

			r[7] = 1;
			memcpy(r + rl, rr, sizeof(rr));
			rl += sizeof(rr);
			memcpy(r + rl, &a, 4);
			rl += 4;
		}
		sendto(fd, r, rl, 0, (struct sockaddr *)&peer, plen);
	}
	close(fd);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr,
"usage: aisb-bench [options] new|keepalive|bulk|idle\n"
"       aisb-bench [options] startup -- PROXY-COMMAND [ARG...]\n"
"       aisb-bench --listen ADDR:PORT --dns-name NAME --dns-addr IP dns\n"
"  --origin ADDR:PORT   the origin (connected to when --via direct)\n"
"  --proxy ADDR:PORT    the proxy (--via tunnel or forward)\n"
"  --via direct|tunnel|forward\n"
"  --host HOST:PORT     authority for CONNECT, Host and the URL\n"
"                       (default: the origin's address)\n"
"  --path PATH          (default /small)\n"
"  --tls                TLS to the origin, SNI from --host\n"
"  -c N                 concurrent connections (default 64; idle: opened\n"
"                       at once)\n"
"  -d SECS -w SECS      measured time and warm-up (default 5, 1)\n"
"  -n N                 stop after N measured requests\n"
"  --bytes N            bulk: stop after N body bytes (default 1 GiB)\n"
"  --tunnels N          idle: tunnels to hold open (default 2000)\n"
"  --pid PID            the proxy: report its CPU time and RSS\n"
"  --cpu N              startup: pin the proxy to CPU N\n"
"  --max-time SECS      hard bound on the whole run (default 120)\n");
	exit(2);
}

static double
arg_num(const char *flag, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		bench_fatal("%s: \"%s\" is not a number in [%g, %g]", flag, s,
		    lo, hi);
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "origin", required_argument, NULL, 'o' },
		{ "proxy", required_argument, NULL, 'p' },
		{ "listen", required_argument, NULL, 'L' },
		{ "via", required_argument, NULL, 'v' },
		{ "host", required_argument, NULL, 'H' },
		{ "path", required_argument, NULL, 'P' },
		{ "tls", no_argument, NULL, 'T' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "tunnels", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, 'i' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "max-time", required_argument, NULL, 'm' },
		{ "dns-name", required_argument, NULL, 'N' },
		{ "dns-addr", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 }
	};
	struct sockaddr_storage origin, proxy;
	socklen_t originlen = 0, proxylen = 0;
	const char *workload, *dns_name = NULL, *dns_addr = NULL;
	char host[128];
	int ch, cpu = -1;

	memset(&B, 0, sizeof(B));
	B.conns = 64;
	B.duration = 5;
	B.warmup = 1;
	B.bulk_bytes = 1ull << 30;
	B.idle_n = 2000;
	B.max_time = 120;
	B.cpu0 = B.cpu1 = -1;
	snprintf(B.path, sizeof(B.path), "/small");
	while ((ch = getopt_long(argc, argv, "c:d:w:n:", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			bench_parse_addr("--origin", optarg, &origin,
			    &originlen);
			break;
		case 'p':
		case 'L':
			bench_parse_addr(ch == 'p' ? "--proxy" : "--listen",
			    optarg, &proxy, &proxylen);
			break;
		case 'v':
			if (strcmp(optarg, "direct") == 0)
				B.via = BENCH_DIRECT;
			else if (strcmp(optarg, "tunnel") == 0)
				B.via = BENCH_TUNNEL;
			else if (strcmp(optarg, "forward") == 0)
				B.via = BENCH_FORWARD;
			else
				bench_fatal("--via: \"%s\" is not direct, "
				    "tunnel or forward", optarg);
			break;
		case 'H':
			if (strlen(optarg) >= sizeof(B.authority))
				bench_fatal("--host: too long");
			snprintf(B.authority, sizeof(B.authority), "%s",
			    optarg);
			break;
		case 'P':
			if (optarg[0] != '/' || strlen(optarg) >= sizeof(B.path))
				bench_fatal("--path: must start with / and be "
				    "short");
			snprintf(B.path, sizeof(B.path), "%s", optarg);
			break;
		case 'T':
			B.tls = 1;
			break;
		case 'c':
			B.conns = (int)arg_num("-c", optarg, 1,
			    BENCH_CONNS_MAX);
			break;
		case 'd':
			B.duration = arg_num("-d", optarg, 0.1, 600);
			break;
		case 'w':
			B.warmup = arg_num("-w", optarg, 0, 60);
			break;
		case 'n':
			B.max_reqs = (uint64_t)arg_num("-n", optarg, 1, 1e12);
			break;
		case 'b':
			B.bulk_bytes = (uint64_t)arg_num("--bytes", optarg, 1,
			    1e13);
			break;
		case 't':
			B.idle_n = (int)arg_num("--tunnels", optarg, 1,
			    BENCH_CONNS_MAX);
			break;
		case 'i':
			B.pid = (pid_t)arg_num("--pid", optarg, 1, INT_MAX);
			break;
		case 'C':
			cpu = (int)arg_num("--cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'm':
			B.max_time = arg_num("--max-time", optarg, 1, 1200);
			break;
		case 'N':
			dns_name = optarg;
			break;
		case 'A':
			dns_addr = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	workload = argv[optind++];
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, bench_on_signal);
	signal(SIGINT, bench_on_signal);

	if (strcmp(workload, "dns") == 0) {
		if (proxylen == 0 || dns_name == NULL || dns_addr == NULL)
			bench_fatal("dns needs --listen, --dns-name and "
			    "--dns-addr");
		B.dst = proxy;
		B.dstlen = proxylen;
		return bench_dns(dns_name, dns_addr, B.max_time);
	}
	if (originlen == 0)
		bench_fatal("--origin is required");
	if (B.authority[0] == '\0') {
		if (origin.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&origin;

			inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
			snprintf(B.authority, sizeof(B.authority), "[%s]:%u",
			    host, ntohs(s6->sin6_port));
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&origin;

			inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
			snprintf(B.authority, sizeof(B.authority), "%s:%u",
			    host, ntohs(s4->sin_port));
		}
	}
	/* SNI: the authority's host part. */
	snprintf(B.sni, sizeof(B.sni), "%s", B.authority);
	if (strrchr(B.sni, ':') != NULL && B.sni[0] != '[')
		*strrchr(B.sni, ':') = '\0';
	if (B.via == BENCH_DIRECT) {
		B.dst = origin;
		B.dstlen = originlen;
	} else {
		if (proxylen == 0)
			bench_fatal("--via tunnel/forward needs --proxy");
		B.dst = proxy;
		B.dstlen = proxylen;
	}
	if (B.tls && B.via == BENCH_FORWARD)
		bench_fatal("--tls goes with --via direct or tunnel");
	bench_requests();
	if (B.tls) {
		if ((B.ctx = SSL_CTX_new(TLS_client_method())) == NULL)
			bench_fatal("SSL_CTX_new failed");
		/* A self-signed origin; every handshake a full one. */
		SSL_CTX_set_verify(B.ctx, SSL_VERIFY_NONE, NULL);
		SSL_CTX_set_session_cache_mode(B.ctx, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_options(B.ctx, SSL_OP_NO_TICKET);
	}

	if (strcmp(workload, "startup") == 0) {
		if (optind >= argc)
			bench_fatal("startup needs -- PROXY-COMMAND");
		if (B.via == BENCH_DIRECT)
			bench_fatal("startup needs --via tunnel or forward");
		return bench_startup(argv + optind, cpu);
	}
	if (strcmp(workload, "new") == 0)
		B.workload = BENCH_NEW;
	else if (strcmp(workload, "keepalive") == 0)
		B.workload = BENCH_KEEPALIVE;
	else if (strcmp(workload, "bulk") == 0) {
		B.workload = BENCH_BULK;
		if (strcmp(B.path, "/small") == 0)
			snprintf(B.path, sizeof(B.path), "/large");
		bench_requests();
	} else if (strcmp(workload, "idle") == 0) {
		B.workload = BENCH_IDLE;
		if (B.via != BENCH_TUNNEL)
			bench_fatal("idle needs --via tunnel");
	} else
		usage();
	bench_run();
	if (B.ctx != NULL)
		SSL_CTX_free(B.ctx);
	return 0;
}
