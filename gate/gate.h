/*
 * aisb-gate: the egress gate. Private header, prototypes grouped by file.
 */
#ifndef GATE_H
#define GATE_H

#include <sys/types.h>
#include <sys/socket.h>

#include <time.h>

#include <stddef.h>
#include <stdint.h>

#include "aisb.h"

/* http.c: HTTP/1.1 message heads (RFC 9110, 9112), pure and bounded. */

/*
 * Caps. A client that needs more is not a coding agent talking to a
 * package registry; past them the answer is 431.
 */
#define HTTP_LINE_MAX		8192	/* request line or one header line */
#define HTTP_HEADERS_MAX	100	/* header fields in one head */
#define HTTP_HEAD_MAX		32768	/* whole request head */
#define HTTP_RESP_HEAD_MAX	65536	/* whole response head */
#define HTTP_METHOD_MAX		32
#define HTTP_CHUNK_LINE_MAX	1024	/* chunk-size line with extensions */

enum http_result {
	HTTP_BAD = -1,		/* refuse: status and why are set */
	HTTP_NEED_MORE = 0,	/* no complete head yet, nothing wrong */
	HTTP_OK = 1,		/* a complete head, head_len bytes */
};

enum http_body {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,	/* Content-Length bytes */
	HTTP_BODY_CHUNKED,	/* Transfer-Encoding: chunked */
	HTTP_BODY_CLOSE,	/* response only: until the server closes */
};

struct http_field {		/* offsets into the caller's buffer */
	size_t		 name_off;
	size_t		 name_len;
	size_t		 value_off;	/* leading/trailing OWS trimmed */
	size_t		 value_len;
};

struct http_request {
	size_t		 head_len;	/* bytes up to and including CRLFCRLF */
	char		 method[HTTP_METHOD_MAX];
	int		 is_connect;
	int		 minor;		/* HTTP/1.minor */
	/* Target: canonical name, or an IP literal (host_is_ip, ip). */
	char		 host[HOST_CANON_SIZE];
	int		 host_is_ip;
	struct aisb_addr ip;
	uint16_t	 port;		/* explicit, or 80 for http:// */
	size_t		 path_off;	/* origin-form path+query, absolute-URI */
	size_t		 path_len;
	struct http_field fields[HTTP_HEADERS_MAX];
	size_t		 nfields;
	enum http_body	 body;
	uint64_t	 content_length;
	int		 keep_alive;	/* client wants the connection kept */
	/* HTTP_BAD: the status to answer and the reason for the log. */
	int		 status;
	const char	*why;
};

struct http_response {
	size_t		 head_len;
	int		 minor;
	int		 status;	/* the response's status code */
	struct http_field fields[HTTP_HEADERS_MAX];
	size_t		 nfields;
	enum http_body	 body;
	uint64_t	 content_length;
	int		 keep_alive;
	const char	*why;		/* HTTP_BAD */
};

/*
 * Parse a proxy request head from buf. CONNECT host:port and absolute-URI
 * (http://) requests are OK; origin-form, asterisk-form, HTTP/0.9, the
 * HTTP/2 preface and every malformed or oversized head are HTTP_BAD with
 * status (400, 405, 414/431, 501, 505) and why. Past HTTP_HEAD_MAX or
 * HTTP_LINE_MAX without a complete line it is HTTP_BAD 431 at once.
 */
int	 http_request_parse(const char *, size_t, struct http_request *);
/*
 * Parse a response head; req_method tells whether a body can follow
 * (HEAD, and CONNECT 2xx have none; nor do 1xx, 204, 304).
 */
int	 http_response_parse(const char *, size_t, const char *req_method,
	    struct http_response *);
/*
 * The head to send upstream: "METHOD origin-form HTTP/1.1", every field
 * except hop-by-hop ones (Connection and what it names, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Trailer,
 * Upgrade), then "Connection: keep-alive" or "Connection: close" as keep
 * says. Transfer-Encoding is kept: it frames the body.
 */
int	 http_request_render(const char *, const struct http_request *,
	    int keep, struct sbuf *);
/* The response head for the client, hop-by-hop fields removed, with
 * "Connection: keep-alive" or "Connection: close" as keep says. */
int	 http_response_render(const char *, const struct http_response *,
	    int keep, struct sbuf *);
/* Find a field by case-insensitive name; index or -1. */
int	 http_field_find(const char *, const struct http_field *, size_t,
	    const char *);

/* Streaming, strict chunked-body framing (RFC 9112 7.1): bytes pass
 * through unchanged; this only finds where the body ends. */
enum chunk_state_name {
	CHUNK_SIZE,		/* reading "hex[;ext]\r\n" */
	CHUNK_DATA,
	CHUNK_DATA_CRLF,
	CHUNK_TRAILER,		/* trailer lines until an empty one */
	CHUNK_DONE,
};
struct chunk_state {
	enum chunk_state_name	 st;
	uint64_t		 left;		/* data bytes left, CHUNK_DATA */
	size_t			 linelen;	/* current line so far */
	size_t			 trailers;	/* trailer lines so far */
	int			 sawdigit;
	int			 inext;		/* in a chunk extension */
	int			 cr;		/* saw CR, expect LF */
	uint8_t			 crlf;		/* CHUNK_DATA_CRLF progress */
	const char		*why;
};
void	 chunk_init(struct chunk_state *);
/*
 * Consume up to n bytes; returns how many belong to the body (stop at
 * CHUNK_DONE: the rest is the next message), or -1 with why set.
 */
ssize_t	 chunk_feed(struct chunk_state *, const char *, size_t);

/* tls.c: the first TLS records of a CONNECT, read before any byte goes
 * upstream. */
#define TLS_HELLO_MAX	32768	/* a ClientHello with post-quantum key
				   shares is about 1.8 KiB; 32 KiB is ample */
/*
 * Real clients send the hello in one record; more than this many records
 * for one hello is refused, so a caller never needs to buffer more than
 * TLS_HELLO_WIRE_MAX bytes (payload plus 5-byte record headers).
 */
#define TLS_HELLO_RECORDS_MAX	64
#define TLS_HELLO_WIRE_MAX	(TLS_HELLO_MAX + 5 * TLS_HELLO_RECORDS_MAX)

enum tls_result {
	TLS_BAD = -1,
	TLS_NEED_MORE = 0,
	TLS_OK = 1,
};

struct tls_hello {
	int		 has_sni;
	char		 sni[HOST_CANON_SIZE];	/* canonical */
	size_t		 len;		/* bytes of records the hello used */
	const char	*why;		/* TLS_BAD */
};

/*
 * Read the ClientHello at the start of buf, reassembled across TLS records
 * and TCP segments up to TLS_HELLO_MAX. NEED_MORE until it is whole; BAD
 * for non-TLS first bytes, another record or handshake type, a length that
 * lies, two server_name extensions, a malformed or non-canonical SNI, or a
 * hello OpenSSL refuses. OK with has_sni and sni. The SNI is taken by
 * OpenSSL (a server-mode SSL reading a memory BIO, stopped in the
 * client-hello callback; nothing it writes ever reaches the client).
 */
int	 tls_hello_read(const uint8_t *, size_t, struct tls_hello *);


/* main.c: configuration and the gate's global state. */
enum sni_mode {
	SNI_STRICT,		/* the SNI must name the CONNECT host */
	SNI_ALLOWLISTED,	/* any allowlisted name will do */
	SNI_OFF,
};

#define GATE_DNS_SERVERS_MAX	8
#define GATE_ADDRS_MAX		16	/* addresses kept from one answer */

struct gate_conf {
	char		 listen[128];
	struct sockaddr_storage listen_ss;
	socklen_t	 listen_sslen;
	struct aisb_addr listen_addr;
	uint16_t	 listen_port;
	char		**allow_args;		/* --allow, in order */
	size_t		 nallow_args;
	char		**allow_files;		/* --allow-file, in order */
	size_t		 nallow_files;
	char		*dns_servers;		/* c-ares CSV, or NULL */
	char		*log_path;		/* "-" is standard output */
	enum sni_mode	 sni;
	int		 strict_dns;
	int		 max_conns;
	int		 max_dns_pending;
	int		 head_timeout;		/* seconds */
	int		 connect_timeout;
	int		 idle_timeout;
	int		 tls_timeout;
	int		 dns_timeout;
	int		 drain_timeout;
	int		 dns_cache;		/* max seconds an answer is kept */
};

struct session;
struct dns_ctx;

struct gate {
	struct event_base	*base;
	struct gate_conf	*conf;
	struct allowlist	*allow;		/* swapped whole on reload */
	struct evconnlistener	*listener;
	struct event		*accept_timer;	/* EMFILE back-off */
	struct dns_ctx		*dns;
	int			 nsessions;
	int			 draining;
	uint64_t		 next_id;
	int			 logfd;
	int			 log_broken;	/* refuse until fixed */
	struct session		*sessions;	/* list head */
	struct sbuf		 scratch;	/* see gate_scratch() */
	struct sbuf		 logq;		/* records not yet written */
	struct event		*log_ev;	/* flushes logq, end of turn */
};

/* Build a new allowlist from --allow and --allow-file; -1 with err. */
int	 gate_load_allowlist(struct gate_conf *, struct allowlist *,
	    struct aisb_error *);

/* acl.c: the decisions, kept apart from I/O so --check and tests share
 * them. */
struct acl_result {
	int		 allow;
	int		 status;	/* for a refusal: 403, 502, ... */
	const char	*reason;
	const struct allow_entry *entry;
};
/* Decide on a request target before any DNS query. */
void	 acl_check_target(const struct allowlist *, const struct gate_conf *,
	    const char *host, int is_ip, const struct aisb_addr *,
	    uint16_t port, enum allow_mode, struct acl_result *);
/*
 * Filter a DNS answer in place: keep the addresses the gate may dial,
 * append the refused ones as JSON strings "addr (range)" to refused.
 * Returns the number kept.
 */
size_t	 acl_filter_addrs(const struct allowlist *, const struct gate_conf *,
	    struct aisb_addr *, size_t, uint16_t, struct sbuf *refused,
	    const char **why);

/* dns.c: c-ares in the gate's event loop. */
typedef void (*dns_cb)(void *, int status, const char *why,
	    const struct aisb_addr *, size_t);
struct dns_req;
struct dns_ctx *dns_init(struct event_base *, const struct gate_conf *,
	    struct aisb_error *);
void	 dns_free(struct dns_ctx *);
/* Resolve a canonical name (A and AAAA, no search list); NULL if the
 * queue is full. The callback runs once, from the loop. */
struct dns_req *dns_resolve(struct dns_ctx *, const char *, dns_cb, void *);
/* The session is gone: the callback will not be called. */
void	 dns_cancel(struct dns_req *);
/* Forget every cached answer (SIGHUP). */
void	 dns_flush(struct dns_ctx *);

/* log.c: one JSON line per request. */
struct log_rec {
	char		 id[32];
	char		 client[ADDR_STR_SIZE + 8];
	const char	*method;
	const char	*host;		/* may hold any bytes */
	size_t		 hostlen;
	int		 port;		/* -1 unknown */
	const char	*sni;
	int		 allow;
	const char	*reason;
	const char	*rule;
	char		 addr[ADDR_STR_SIZE + 8];
	struct sbuf	*refused;	/* JSON array items, comma-separated */
	int		 status;
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	struct timespec	 start;
	long		 dns_ms;	/* -1 not applicable */
	long		 connect_ms;
};
int	 log_open(struct gate *, struct aisb_error *);
/*
 * Records are queued and written together at the end of the loop turn
 * that finished them (one write(2), whole records, at most about
 * LOG_QUEUE_MAX bytes). log_start sets the base's priorities (before any
 * other event exists) and the flush event; log_flush writes now.
 */
#define LOG_PRIORITIES		3	/* default 1; the flush runs at 2 */
#define LOG_QUEUE_MAX		(64 * 1024)
int	 log_start(struct gate *, struct aisb_error *);
void	 log_flush(struct gate *);
/*
 * A buffer for building one message (a rendered head, a log record),
 * emptied on every call: whoever takes it is done with it before anything
 * else can call. Kept between calls, so a request allocates nothing for
 * it; past GATE_SCRATCH_KEEP it is freed instead.
 */
#define GATE_SCRATCH_KEEP	(16 * 1024)
struct sbuf *gate_scratch(struct gate *);
/* Queue one record; on failure the gate refuses new requests. */
void	 log_request(struct gate *, const struct log_rec *);
int	 log_format(const struct log_rec *, const struct timespec *now,
	    struct sbuf *);
long	 ms_since(const struct timespec *);

/* session.c */
void	 session_accept(struct gate *, int, struct sockaddr *, int);
/* After a reload: close tunnels the new allowlist no longer admits. */
void	 session_recheck_all(struct gate *);
/* Drain: close idle sessions (or all); the loop exits when none is left. */
void	 session_drain(struct gate *, int all);

#endif /* GATE_H */
