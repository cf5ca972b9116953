/*
 * HTTP/1.1 message heads for the gate (RFC 9110, RFC 9112): a strict,
 * bounded parser for proxy requests and upstream responses, the renderers
 * that drop hop-by-hop fields, and streaming chunked-body framing.
 *
 * The parsers are stateless: the caller hands in everything received so
 * far and gets NEED_MORE, BAD or OK. Like OpenBSD httpd they refuse as soon
 * as the bytes pass a cap, before a newline has arrived.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "gate.h"

/*
 * Content-Length above 2^53 is refused: no registry serves such a body,
 * and every consumer (JSON logs included) can still hold the number.
 */
#define HTTP_CL_MAX		((uint64_t)1 << 53)
#define HTTP_CL_DIGITS_MAX	16
#define HTTP_PORT_DEFAULT	80
/* 16 hex digits fill a uint64_t; a longer chunk-size is refused. */
#define CHUNK_DIGITS_MAX	16

/* One pass over the lines of a head, bounded by the caps. */
struct head_scan {
	const char	*buf;
	size_t		 len;
	size_t		 off;		/* start of the next line */
	size_t		 head_max;
	int		 status;	/* on -1 */
	const char	*why;
};

/* A parsed authority: host[:port] or [IPv6][:port]. */
struct authority {
	char		 host[HOST_CANON_SIZE];
	int		 is_ip;
	struct aisb_addr ip;
	int		 port;		/* -1 when absent */
};

/* Fields a proxy never forwards (RFC 9110 7.6.1), lowercase. */
static const char *const http_hop_fields[] = {
	"connection",
	"keep-alive",
	"proxy-connection",
	"proxy-authorization",
	"proxy-authenticate",
	"te",
	"trailer",
	"upgrade",
};

/*
 * Fields that frame the message or name its target: a Connection field
 * naming one of them would make the renderer drop it, and the next hop
 * would read a different message than the gate did.
 */
static const char *const http_e2e_fields[] = {
	"host",
	"content-length",
	"transfer-encoding",
};

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

/* RFC 9110 5.6.2 tchar. */
static int
http_is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return 1;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'':
	case '*': case '+': case '-': case '.': case '^': case '_':
	case '`': case '|': case '~':
		return 1;
	}
	return 0;
}

/* A field-value byte: VCHAR, SP, HTAB or obs-text. */
static int
http_is_vbyte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static int
http_is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* Case-insensitive compare of (s, n) with the NUL-terminated lowercase t. */
static int
http_eq(const char *s, size_t n, const char *t)
{
	return strlen(t) == n && strncasecmp(s, t, n) == 0;
}

/* Is (s, n) a non-empty token? */
static int
http_is_token(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!http_is_tchar((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Next element of a comma-separated list (RFC 9110 5.6.1), OWS trimmed,
 * empty elements skipped: 1 with (*ts, *tl), 0 at the end.
 */
static int
http_list_next(const char *v, size_t n, size_t *pos, size_t *ts, size_t *tl)
{
	size_t s, e;

	while (*pos < n) {
		s = *pos;
		while (*pos < n && v[*pos] != ',')
			(*pos)++;
		e = *pos;
		if (*pos < n)
			(*pos)++;
		while (s < e && http_is_ows((unsigned char)v[s]))
			s++;
		while (e > s && http_is_ows((unsigned char)v[e - 1]))
			e--;
		if (e > s) {
			*ts = s;
			*tl = e - s;
			return 1;
		}
	}
	return 0;
}

/* Bounded decimal: 1-16 digits and at most HTTP_CL_MAX; -1 otherwise. */
static int
http_parse_length(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > HTTP_CL_DIGITS_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > HTTP_CL_MAX)
		return -1;
	*out = v;
	return 0;
}

/* A port: 1-65535 in plain decimal, no sign, no leading zero. */
static int
http_parse_port(const char *s, size_t n)
{
	int v = 0;
	size_t i;

	if (n == 0 || n > 5 || s[0] == '0')
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	return v;
}

/* Parse host[:port] or [IPv6][:port]; NULL or the reason it is bad. */
static const char *
authority_parse(const char *s, size_t n, struct authority *a)
{
	const char *hs, *ps = NULL, *rb;
	size_t hl, pl = 0, i;
	char ntop[ADDR_STR_SIZE];
	struct aisb_error err;
	int r;

	memset(a, 0, sizeof(*a));
	a->port = -1;
	if (n == 0)
		return "empty host";
	if (memchr(s, '@', n) != NULL)
		return "userinfo in authority";
	if (s[0] == '[') {
		if ((rb = memchr(s, ']', n)) == NULL)
			return "malformed IP literal";
		hs = s + 1;
		hl = (size_t)(rb - hs);
		i = (size_t)(rb + 1 - s);
		if (i < n) {
			if (s[i] != ':')
				return "malformed authority";
			ps = s + i + 1;
			pl = n - i - 1;
		}
		if (hl == 0 || addr_parse_literal(hs, hl, &a->ip) != 1 ||
		    a->ip.family != AF_INET6)
			return "malformed IP literal";
		a->is_ip = 1;
	} else {
		hs = s;
		hl = n;
		for (i = n; i > 0; i--) {
			if (s[i - 1] == ':') {
				hl = i - 1;
				ps = s + i;
				pl = n - i;
				break;
			}
		}
		if (hl == 0)
			return "empty host";
		if (memchr(hs, ':', hl) != NULL)
			return "IPv6 literal without brackets";
		r = addr_parse_literal(hs, hl, &a->ip);
		if (r == -1)
			return "malformed IP literal";
		if (r == 1)
			a->is_ip = 1;
		else if (host_canon(hs, hl, a->host, &err) == -1)
			return "invalid host";
	}
	if (a->is_ip) {
		if (addr_ntop(&a->ip, ntop) == NULL ||
		    strlen(ntop) >= sizeof(a->host))
			return "malformed IP literal";
		memcpy(a->host, ntop, strlen(ntop) + 1);
	}
	if (ps != NULL && (a->port = http_parse_port(ps, pl)) == -1)
		return "invalid port";
	return NULL;
}

static void
head_scan_init(struct head_scan *hs, const char *buf, size_t len,
    size_t head_max)
{
	memset(hs, 0, sizeof(*hs));
	hs->buf = buf;
	hs->len = len;
	hs->head_max = head_max;
}

static int
head_fail(struct head_scan *hs, int status, const char *why)
{
	hs->status = status;
	hs->why = why;
	return -1;
}

/*
 * The next complete line: 1 with its content (CRLF excluded) at *start,
 * *n bytes; 0 when it is incomplete and within the caps; -1 with status
 * and why. A line or head past its cap is refused at the first byte over,
 * newline or not.
 */
static int
head_line(struct head_scan *hs, size_t *start, size_t *n)
{
	unsigned char c;
	size_t i;

	for (i = hs->off; i < hs->len; i++) {
		if (i >= hs->head_max)
			return head_fail(hs, 431, "head too large");
		c = (unsigned char)hs->buf[i];
		if (c == '\0')
			return head_fail(hs, 400, "NUL in head");
		if (c == '\n')
			return head_fail(hs, 400, "bare LF in head");
		if (c == '\r') {
			if (i + 1 >= hs->head_max)
				return head_fail(hs, 431, "head too large");
			if (i + 1 == hs->len)
				return 0;
			if (hs->buf[i + 1] != '\n')
				return head_fail(hs, 400, "bare CR in head");
			*start = hs->off;
			*n = i - hs->off;
			hs->off = i + 2;
			return 1;
		}
		if (i - hs->off + 1 > HTTP_LINE_MAX)
			return head_fail(hs, 431, "line too long");
	}
	return 0;
}

/* Split one field line into name and trimmed value; NULL or the reason. */
static const char *
field_parse(const char *buf, size_t ls, size_t ll, struct http_field *f)
{
	const char *p = buf + ls;
	size_t i, colon, vs, ve;

	if (http_is_ows((unsigned char)p[0]))
		return "obs-fold line";
	for (i = 0; i < ll && p[i] != ':'; i++) {
		if (http_is_ows((unsigned char)p[i]))
			return "whitespace in field name";
		if (!http_is_tchar((unsigned char)p[i]))
			return "invalid field name";
	}
	if (i == ll)
		return "field line without colon";
	if (i == 0)
		return "empty field name";
	colon = i;
	for (i = colon + 1; i < ll; i++)
		if (!http_is_vbyte((unsigned char)p[i]))
			return "invalid character in field value";
	vs = colon + 1;
	ve = ll;
	while (vs < ve && http_is_ows((unsigned char)p[vs]))
		vs++;
	while (ve > vs && http_is_ows((unsigned char)p[ve - 1]))
		ve--;
	f->name_off = ls;
	f->name_len = colon;
	f->value_off = ls + vs;
	f->value_len = ve - vs;
	return NULL;
}

/*
 * Read field lines up to the empty line: 1 at the end of the head, 0 for
 * more, -1 with status and why. A 101st field is refused at its first byte.
 */
static int
head_fields(struct head_scan *hs, struct http_field *fields, size_t *nfields)
{
	const char *why;
	size_t ls, ll;
	int r;

	for (;;) {
		if (*nfields == HTTP_HEADERS_MAX && hs->off < hs->len &&
		    hs->buf[hs->off] != '\r')
			return head_fail(hs, 431, "too many header fields");
		if ((r = head_line(hs, &ls, &ll)) != 1)
			return r;
		if (ll == 0)
			return 1;
		if ((why = field_parse(hs->buf, ls, ll,
		    &fields[*nfields])) != NULL)
			return head_fail(hs, 400, why);
		(*nfields)++;
	}
}

/*
 * Walk the Connection fields: set *close and *keep from their tokens, -1
 * with why for a non-token element or one naming a framing field.
 */
static int
conn_scan(const char *buf, const struct http_field *fields, size_t n,
    int *close, int *keep, const char **why)
{
	size_t i, j, pos, ts, tl;
	const char *v;

	*close = *keep = 0;
	for (i = 0; i < n; i++) {
		if (!http_eq(buf + fields[i].name_off, fields[i].name_len,
		    "connection"))
			continue;
		v = buf + fields[i].value_off;
		pos = 0;
		while (http_list_next(v, fields[i].value_len, &pos, &ts, &tl)) {
			if (!http_is_token(v + ts, tl)) {
				*why = "malformed Connection field";
				return -1;
			}
			for (j = 0; j < nitems(http_e2e_fields); j++) {
				if (http_eq(v + ts, tl, http_e2e_fields[j])) {
					*why = "Connection names an "
					    "end-to-end field";
					return -1;
				}
			}
			if (http_eq(v + ts, tl, "close"))
				*close = 1;
			else if (http_eq(v + ts, tl, "keep-alive"))
				*keep = 1;
		}
	}
	return 0;
}

/* Is field name (s, n) listed in a Connection field's token list? */
static int
conn_names(const char *buf, const struct http_field *fields, size_t n,
    const char *s, size_t sl)
{
	size_t i, pos, ts, tl;
	const char *v;

	for (i = 0; i < n; i++) {
		if (!http_eq(buf + fields[i].name_off, fields[i].name_len,
		    "connection"))
			continue;
		v = buf + fields[i].value_off;
		pos = 0;
		while (http_list_next(v, fields[i].value_len, &pos, &ts, &tl))
			if (tl == sl && strncasecmp(v + ts, s, sl) == 0)
				return 1;
	}
	return 0;
}

/* Is field i hop-by-hop: a fixed one, or named by Connection? */
static int
field_is_hop(const char *buf, const struct http_field *fields, size_t n,
    size_t i)
{
	const char *name = buf + fields[i].name_off;
	size_t j, nl = fields[i].name_len;

	for (j = 0; j < nitems(http_hop_fields); j++)
		if (http_eq(name, nl, http_hop_fields[j]))
			return 1;
	return conn_names(buf, fields, n, name, nl);
}

/* Append every end-to-end field as "Name: value". */
static int
fields_render(const char *buf, const struct http_field *fields, size_t n,
    struct sbuf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (field_is_hop(buf, fields, n, i))
			continue;
		if (sbuf_add(out, buf + fields[i].name_off,
		    fields[i].name_len) == -1 ||
		    sbuf_add(out, ": ", 2) == -1 ||
		    sbuf_add(out, buf + fields[i].value_off,
		    fields[i].value_len) == -1 ||
		    sbuf_add(out, "\r\n", 2) == -1)
			return -1;
	}
	return 0;
}

static int
req_fail(struct http_request *req, int status, const char *why)
{
	req->status = status;
	req->why = why;
	return HTTP_BAD;
}

/* Method, target and version of a request line. */
static int
request_line(const char *buf, size_t ls, size_t ll, struct http_request *req)
{
	const char *p = buf + ls, *sp1, *sp2, *t, *v, *path, *why;
	struct authority a;
	size_t ml, tl, vl, i, al;

	if ((sp1 = memchr(p, ' ', ll)) == NULL)
		return req_fail(req, 400, "malformed request line");
	ml = (size_t)(sp1 - p);
	if (!http_is_token(p, ml))
		return req_fail(req, 400, "invalid method");
	if (ml >= HTTP_METHOD_MAX)
		return req_fail(req, 400, "method too long");
	t = sp1 + 1;
	if ((sp2 = memchr(t, ' ', ll - ml - 1)) == NULL) {
		if (ll - ml - 1 > 0)
			return req_fail(req, 400, "HTTP/0.9 request");
		return req_fail(req, 400, "malformed request line");
	}
	tl = (size_t)(sp2 - t);
	v = sp2 + 1;
	vl = ll - (size_t)(v - p);
	if (tl == 0 || memchr(v, ' ', vl) != NULL)
		return req_fail(req, 400, "malformed request line");
	if (vl == 8 && memcmp(v, "HTTP/1.", 7) == 0 &&
	    (v[7] == '0' || v[7] == '1'))
		req->minor = v[7] - '0';
	else if (vl >= 5 && memcmp(v, "HTTP/", 5) == 0)
		return req_fail(req, 505, "unsupported HTTP version");
	else
		return req_fail(req, 400, "malformed HTTP version");
	memcpy(req->method, p, ml);
	req->method[ml] = '\0';

	for (i = 0; i < tl; i++) {
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			return req_fail(req, 400,
			    "invalid character in request target");
		if (t[i] == '#')
			return req_fail(req, 400, "fragment in request target");
	}

	if (strcmp(req->method, "CONNECT") == 0) {
		req->is_connect = 1;
		if ((why = authority_parse(t, tl, &a)) != NULL)
			return req_fail(req, 400, why);
		if (a.port == -1)
			return req_fail(req, 400, "CONNECT target without port");
	} else {
		if (t[0] == '/')
			return req_fail(req, 400,
			    "origin-form request: not a proxy request");
		if (tl == 1 && t[0] == '*')
			return req_fail(req, 400, "asterisk-form request");
		if (tl >= 8 && strncasecmp(t, "https://", 8) == 0)
			return req_fail(req, 400,
			    "https absolute-URI: use CONNECT");
		if (tl < 7 || strncasecmp(t, "http://", 7) != 0)
			return req_fail(req, 400, "unsupported request target");
		/* The authority ends at the path or the query. */
		for (al = 7; al < tl && t[al] != '/' && t[al] != '?'; al++)
			;
		if ((why = authority_parse(t + 7, al - 7, &a)) != NULL)
			return req_fail(req, 400, why);
		if (a.port == -1)
			a.port = HTTP_PORT_DEFAULT;
		path = t + al;
		req->path_off = (size_t)(path - buf);
		req->path_len = tl - al;
	}
	memcpy(req->host, a.host, sizeof(req->host));
	req->host_is_ip = a.is_ip;
	req->ip = a.ip;
	req->port = (uint16_t)a.port;
	return HTTP_OK;
}

/* Does the Host field agree with the request target? */
static int
request_host_check(const char *buf, struct http_request *req,
    const struct http_field *f)
{
	struct authority a;

	if (authority_parse(buf + f->value_off, f->value_len, &a) != NULL)
		return req_fail(req, 400, "invalid Host field");
	if (a.is_ip != req->host_is_ip || strcmp(a.host, req->host) != 0)
		return req_fail(req, 400,
		    "Host does not match the request target");
	if (req->is_connect) {
		if (a.port != -1 && a.port != req->port)
			return req_fail(req, 400,
			    "Host does not match the request target");
	} else {
		if (a.port == -1)
			a.port = HTTP_PORT_DEFAULT;
		if (a.port != req->port)
			return req_fail(req, 400,
			    "Host does not match the request target");
	}
	return HTTP_OK;
}

/* Whole-head rules: Host, framing, upgrades, persistence. */
static int
request_check(const char *buf, struct http_request *req)
{
	const struct http_field *f, *host = NULL, *cl = NULL, *te = NULL;
	size_t i, nhost = 0, ncl = 0, nte = 0;
	const char *name, *why;
	int close, keep;

	for (i = 0; i < req->nfields; i++) {
		f = &req->fields[i];
		name = buf + f->name_off;
		if (http_eq(name, f->name_len, "host")) {
			host = f;
			nhost++;
		} else if (http_eq(name, f->name_len, "content-length")) {
			cl = f;
			ncl++;
		} else if (http_eq(name, f->name_len, "transfer-encoding")) {
			te = f;
			nte++;
		} else if (http_eq(name, f->name_len, "upgrade"))
			return req_fail(req, 400, "Upgrade refused");
		else if (http_eq(name, f->name_len, "http2-settings"))
			return req_fail(req, 400, "HTTP2-Settings refused");
	}
	if (conn_scan(buf, req->fields, req->nfields, &close, &keep,
	    &why) == -1)
		return req_fail(req, 400, why);

	if (nhost > 1)
		return req_fail(req, 400, "multiple Host fields");
	if (nhost == 0 && !req->is_connect && req->minor == 1)
		return req_fail(req, 400, "missing Host field");
	if (host != NULL && request_host_check(buf, req, host) != HTTP_OK)
		return HTTP_BAD;

	if (ncl > 1)
		return req_fail(req, 400, "multiple Content-Length fields");
	if (nte > 1)
		return req_fail(req, 400, "multiple Transfer-Encoding fields");
	if (cl != NULL && te != NULL)
		return req_fail(req, 400,
		    "Content-Length with Transfer-Encoding");
	req->body = HTTP_BODY_NONE;
	if (te != NULL) {
		if (req->minor == 0)
			return req_fail(req, 400,
			    "Transfer-Encoding in HTTP/1.0");
		if (req->is_connect)
			return req_fail(req, 400, "CONNECT with a body");
		if (!http_eq(buf + te->value_off, te->value_len, "chunked"))
			return req_fail(req, 501, "unsupported transfer-coding");
		req->body = HTTP_BODY_CHUNKED;
	}
	if (cl != NULL) {
		if (http_parse_length(buf + cl->value_off, cl->value_len,
		    &req->content_length) == -1)
			return req_fail(req, 400, "invalid Content-Length");
		if (req->is_connect && req->content_length > 0)
			return req_fail(req, 400, "CONNECT with a body");
		if (req->content_length > 0)
			req->body = HTTP_BODY_LENGTH;
	}

	if (req->minor == 1)
		req->keep_alive = !close;
	else
		req->keep_alive = keep && !close;
	return HTTP_OK;
}

int
http_request_parse(const char *buf, size_t len, struct http_request *req)
{
	struct head_scan hs;
	size_t ls, ll;
	int r;

	memset(req, 0, sizeof(*req));
	head_scan_init(&hs, buf, len, HTTP_HEAD_MAX);
	if ((r = head_line(&hs, &ls, &ll)) != 1)
		goto scan;
	if (ll == 0)
		return req_fail(req, 400, "empty request line");
	if (request_line(buf, ls, ll, req) != HTTP_OK)
		return HTTP_BAD;
	if ((r = head_fields(&hs, req->fields, &req->nfields)) != 1)
		goto scan;
	req->head_len = hs.off;
	if (request_check(buf, req) != HTTP_OK) {
		req->head_len = 0;
		return HTTP_BAD;
	}
	return HTTP_OK;

scan:
	if (r == 0)
		return HTTP_NEED_MORE;
	return req_fail(req, hs.status, hs.why);
}

static int
resp_fail(struct http_response *resp, const char *why)
{
	resp->why = why;
	return HTTP_BAD;
}

/* "HTTP/1.x SSS reason", or "HTTP/1.x SSS" without the space. */
static int
status_line(const char *p, size_t ll, struct http_response *resp)
{
	size_t i;

	if (ll < 12 || memcmp(p, "HTTP/", 5) != 0)
		return resp_fail(resp, "malformed status line");
	if (memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') ||
	    p[8] != ' ')
		return resp_fail(resp, "unsupported HTTP version");
	resp->minor = p[7] - '0';
	for (i = 9; i < 12; i++)
		if (p[i] < '0' || p[i] > '9')
			return resp_fail(resp, "malformed status code");
	resp->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	if (resp->status < 100 || resp->status > 599)
		return resp_fail(resp, "status code out of range");
	if (ll > 12 && p[12] != ' ')
		return resp_fail(resp, "malformed status line");
	for (i = 13; i < ll; i++)
		if (!http_is_vbyte((unsigned char)p[i]))
			return resp_fail(resp, "invalid character in reason");
	/*
	 * The gate never forwards an Upgrade, so a switch is a protocol
	 * error (RFC 9110 15.2.2), not a tunnel to open.
	 */
	if (resp->status == 101)
		return resp_fail(resp, "unexpected 101 Switching Protocols");
	return HTTP_OK;
}

/* The response's framing: a body, and how it ends (RFC 9112 6.3). */
static int
response_body(const char *buf, struct http_response *resp)
{
	const struct http_field *f, *cl = NULL;
	size_t i, ncl = 0, nte = 0, pos, ts, tl;
	int chunked_final = 0, chunked_early = 0;
	const char *v;

	for (i = 0; i < resp->nfields; i++) {
		f = &resp->fields[i];
		if (http_eq(buf + f->name_off, f->name_len, "content-length")) {
			cl = f;
			ncl++;
		} else if (http_eq(buf + f->name_off, f->name_len,
		    "transfer-encoding")) {
			nte++;
			v = buf + f->value_off;
			pos = 0;
			while (http_list_next(v, f->value_len, &pos, &ts,
			    &tl)) {
				if (chunked_final)
					chunked_early = 1;
				chunked_final = http_eq(v + ts, tl, "chunked");
			}
		}
	}
	if (ncl > 1)
		return resp_fail(resp, "multiple Content-Length fields");
	if (ncl > 0 && nte > 0)
		return resp_fail(resp, "Content-Length with Transfer-Encoding");
	if (nte > 0) {
		if (resp->minor == 0)
			return resp_fail(resp, "Transfer-Encoding in HTTP/1.0");
		if (!chunked_final || chunked_early)
			return resp_fail(resp,
			    "transfer-coding not chunked-final");
		resp->body = HTTP_BODY_CHUNKED;
		return HTTP_OK;
	}
	if (cl != NULL) {
		if (http_parse_length(buf + cl->value_off, cl->value_len,
		    &resp->content_length) == -1)
			return resp_fail(resp, "invalid Content-Length");
		resp->body = resp->content_length > 0 ? HTTP_BODY_LENGTH :
		    HTTP_BODY_NONE;
		return HTTP_OK;
	}
	resp->body = HTTP_BODY_CLOSE;
	return HTTP_OK;
}

int
http_response_parse(const char *buf, size_t len, const char *req_method,
    struct http_response *resp)
{
	struct head_scan hs;
	size_t ls, ll;
	int r, close, keep, nobody;
	const char *why;

	memset(resp, 0, sizeof(*resp));
	head_scan_init(&hs, buf, len, HTTP_RESP_HEAD_MAX);
	if ((r = head_line(&hs, &ls, &ll)) != 1)
		goto scan;
	if (status_line(buf + ls, ll, resp) != HTTP_OK)
		return HTTP_BAD;
	if ((r = head_fields(&hs, resp->fields, &resp->nfields)) != 1)
		goto scan;
	resp->head_len = hs.off;
	if (conn_scan(buf, resp->fields, resp->nfields, &close, &keep,
	    &why) == -1)
		goto bad;

	nobody = resp->status < 200 || resp->status == 204 ||
	    resp->status == 304;
	if (req_method != NULL) {
		if (strcmp(req_method, "HEAD") == 0)
			nobody = 1;
		if (strcmp(req_method, "CONNECT") == 0 &&
		    resp->status / 100 == 2)
			nobody = 1;
	}
	resp->body = HTTP_BODY_NONE;
	if (!nobody && response_body(buf, resp) != HTTP_OK) {
		why = resp->why;
		goto bad;
	}
	if (resp->minor == 1)
		resp->keep_alive = !close;
	else
		resp->keep_alive = keep && !close;
	if (resp->body == HTTP_BODY_CLOSE)
		resp->keep_alive = 0;
	return HTTP_OK;

bad:
	resp->head_len = 0;
	return resp_fail(resp, why);
scan:
	if (r == 0)
		return HTTP_NEED_MORE;
	return resp_fail(resp, hs.why);
}

int
http_request_render(const char *buf, const struct http_request *req,
    int keep, struct sbuf *out)
{
	const char *path = buf + req->path_off;

	if (req->is_connect || req->head_len == 0)
		return -1;
	if (sbuf_adds(out, req->method) == -1 || sbuf_add(out, " ", 1) == -1)
		return -1;
	/* An empty path is "/" (RFC 9112 3.2.1); so is one with only "?q". */
	if ((req->path_len == 0 || path[0] != '/') &&
	    sbuf_add(out, "/", 1) == -1)
		return -1;
	if (sbuf_add(out, path, req->path_len) == -1 ||
	    sbuf_adds(out, " HTTP/1.1\r\n") == -1)
		return -1;
	/* An HTTP/1.0 client may omit Host; the next hop speaks 1.1. */
	if (http_field_find(buf, req->fields, req->nfields, "host") == -1) {
		if (sbuf_printf(out, req->host_is_ip &&
		    req->ip.family == AF_INET6 ? "Host: [%s]" : "Host: %s",
		    req->host) == -1)
			return -1;
		if (req->port != HTTP_PORT_DEFAULT &&
		    sbuf_printf(out, ":%u", (unsigned)req->port) == -1)
			return -1;
		if (sbuf_add(out, "\r\n", 2) == -1)
			return -1;
	}
	if (fields_render(buf, req->fields, req->nfields, out) == -1)
		return -1;
	return sbuf_adds(out, keep ? "Connection: keep-alive\r\n\r\n" :
	    "Connection: close\r\n\r\n");
}

int
http_response_render(const char *buf, const struct http_response *resp,
    int keep, struct sbuf *out)
{
	const char *cr;

	if (resp->head_len == 0 ||
	    (cr = memchr(buf, '\r', resp->head_len)) == NULL)
		return -1;
	if (sbuf_add(out, buf, (size_t)(cr - buf)) == -1 ||
	    sbuf_add(out, "\r\n", 2) == -1)
		return -1;
	if (fields_render(buf, resp->fields, resp->nfields, out) == -1)
		return -1;
	return sbuf_adds(out, keep ? "Connection: keep-alive\r\n\r\n" :
	    "Connection: close\r\n\r\n");
}

int
http_field_find(const char *buf, const struct http_field *fields, size_t n,
    const char *name)
{
	size_t i, nl = strlen(name);

	for (i = 0; i < n; i++)
		if (fields[i].name_len == nl &&
		    strncasecmp(buf + fields[i].name_off, name, nl) == 0)
			return (int)i;
	return -1;
}

void
chunk_init(struct chunk_state *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->st = CHUNK_SIZE;
}

/* The one place the framing state changes; a new line starts clean. */
static void
chunk_set_state(struct chunk_state *cs, enum chunk_state_name st)
{
	cs->st = st;
	cs->linelen = 0;
	cs->sawdigit = 0;
	cs->inext = 0;
	cs->cr = 0;
	cs->crlf = 0;
}

static int
chunk_fail(struct chunk_state *cs, const char *why)
{
	cs->why = why;
	return -1;
}

static int
chunk_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte of "hex[;ext]\r\n". */
static int
chunk_size_byte(struct chunk_state *cs, unsigned char c)
{
	int h;

	if (cs->cr) {
		if (c != '\n')
			return chunk_fail(cs, "bare CR in chunk-size line");
		if (cs->left == 0) {
			chunk_set_state(cs, CHUNK_TRAILER);
			cs->trailers = 0;
		} else
			chunk_set_state(cs, CHUNK_DATA);
		return 0;
	}
	if (c == '\r') {
		if (!cs->sawdigit)
			return chunk_fail(cs, "missing chunk size");
		cs->cr = 1;
		return 0;
	}
	if (c == '\n')
		return chunk_fail(cs, "bare LF in chunk-size line");
	if (++cs->linelen > HTTP_CHUNK_LINE_MAX)
		return chunk_fail(cs, "chunk-size line too long");
	if (cs->inext) {
		if (!http_is_vbyte(c))
			return chunk_fail(cs,
			    "invalid character in chunk extension");
		return 0;
	}
	if ((h = chunk_hex(c)) != -1) {
		if (cs->sawdigit >= CHUNK_DIGITS_MAX)
			return chunk_fail(cs, "chunk size too large");
		cs->left = (cs->left << 4) | (uint64_t)h;
		cs->sawdigit++;
		return 0;
	}
	if (c == ';' && cs->sawdigit) {
		cs->inext = 1;
		return 0;
	}
	return chunk_fail(cs, "invalid chunk size");
}

/* One byte of the trailer section; inext means the colon was seen. */
static int
chunk_trailer_byte(struct chunk_state *cs, unsigned char c)
{
	if (cs->cr) {
		if (c != '\n')
			return chunk_fail(cs, "bare CR in trailer");
		if (cs->linelen == 0) {
			chunk_set_state(cs, CHUNK_DONE);
			return 0;
		}
		cs->trailers++;
		cs->linelen = 0;
		cs->inext = 0;
		cs->cr = 0;
		return 0;
	}
	if (c == '\r') {
		if (cs->linelen > 0 && !cs->inext)
			return chunk_fail(cs, "trailer field without colon");
		cs->cr = 1;
		return 0;
	}
	if (c == '\n')
		return chunk_fail(cs, "bare LF in trailer");
	if (cs->linelen == 0) {
		if (cs->trailers >= HTTP_HEADERS_MAX)
			return chunk_fail(cs, "too many trailer fields");
		if (http_is_ows(c))
			return chunk_fail(cs, "obs-fold in trailer");
	}
	if (++cs->linelen > HTTP_LINE_MAX)
		return chunk_fail(cs, "trailer line too long");
	if (cs->inext) {
		if (!http_is_vbyte(c))
			return chunk_fail(cs, "invalid character in trailer");
	} else if (c == ':') {
		if (cs->linelen == 1)
			return chunk_fail(cs, "empty trailer field name");
		cs->inext = 1;
	} else if (!http_is_tchar(c))
		return chunk_fail(cs, "invalid trailer field name");
	return 0;
}

ssize_t
chunk_feed(struct chunk_state *cs, const char *p, size_t n)
{
	size_t i = 0, take;
	unsigned char c;

	if (cs->why != NULL)
		return -1;
	if (n > SSIZE_MAX)
		n = SSIZE_MAX;
	while (i < n && cs->st != CHUNK_DONE) {
		switch (cs->st) {
		case CHUNK_DATA:
			take = n - i;
			if (take > cs->left)
				take = (size_t)cs->left;
			i += take;
			cs->left -= take;
			if (cs->left == 0)
				chunk_set_state(cs, CHUNK_DATA_CRLF);
			break;
		case CHUNK_DATA_CRLF:
			c = (unsigned char)p[i++];
			if (cs->crlf == 0 && c == '\r')
				cs->crlf = 1;
			else if (cs->crlf == 1 && c == '\n')
				chunk_set_state(cs, CHUNK_SIZE);
			else
				return chunk_fail(cs,
				    "chunk data not followed by CRLF");
			break;
		case CHUNK_SIZE:
			if (chunk_size_byte(cs, (unsigned char)p[i++]) == -1)
				return -1;
			break;
		case CHUNK_TRAILER:
			if (chunk_trailer_byte(cs,
			    (unsigned char)p[i++]) == -1)
				return -1;
			break;
		case CHUNK_DONE:
			break;
		}
	}
	return (ssize_t)i;
}
