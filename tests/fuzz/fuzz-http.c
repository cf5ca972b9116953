/*
 * Fuzz target for gate/http.c: both head parsers, both renderers and the
 * chunked framing over the same input, with their invariants checked
 * (abort on violation). Builds as a libFuzzer binary and, with replay.c,
 * as the corpus replayer the test suite runs.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const fuzz_hop[] = {
	"connection", "keep-alive", "proxy-connection", "proxy-authorization",
	"proxy-authenticate", "te", "trailer", "upgrade",
};

#define CHECK(e) do { if (!(e)) abort(); } while (0)

/* Fields lie inside the head and the head inside the buffer. */
static void
fuzz_fields(const struct http_field *f, size_t n, size_t head_len)
{
	size_t i;

	CHECK(n <= HTTP_HEADERS_MAX);
	for (i = 0; i < n; i++) {
		CHECK(f[i].name_len > 0);
		CHECK(f[i].name_off + f[i].name_len <= head_len);
		CHECK(f[i].value_off + f[i].value_len <= head_len);
		CHECK(f[i].value_off > f[i].name_off + f[i].name_len);
	}
}

/* Is (s, n) named in a Connection field of the parsed head? */
static int
fuzz_conn_named(const char *buf, const struct http_field *f, size_t nf,
    const char *s, size_t n)
{
	size_t i, j, a, b, e;
	const char *v;

	for (i = 0; i < nf; i++) {
		if (f[i].name_len != 10 ||
		    strncasecmp(buf + f[i].name_off, "connection", 10) != 0)
			continue;
		v = buf + f[i].value_off;
		for (j = 0; j <= f[i].value_len; j = e + 1) {
			for (e = j; e < f[i].value_len && v[e] != ','; e++)
				;
			a = j;
			b = e;
			while (a < b && (v[a] == ' ' || v[a] == '\t'))
				a++;
			while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t'))
				b--;
			if (b - a == n && strncasecmp(v + a, s, n) == 0)
				return 1;
		}
	}
	return 0;
}

/*
 * A rendered head: CRLF lines, the first is the start line, no hop-by-hop
 * field but the final "Connection: <last>", then the empty line.
 */
static void
fuzz_rendered(const char *buf, const struct http_field *f, size_t nf,
    const struct sbuf *out, const char *last)
{
	const char *p = out->p, *end = out->p + out->len, *eol, *colon;
	size_t i, nl, want;
	int lines = 0, conn = 0;

	CHECK(out->len >= 4);
	CHECK(memcmp(end - 4, "\r\n\r\n", 4) == 0);
	CHECK(memchr(out->p, '\0', out->len) == NULL);
	while (p < end) {
		eol = memchr(p, '\r', (size_t)(end - p));
		CHECK(eol != NULL && eol + 1 < end && eol[1] == '\n');
		if (eol == p) {
			CHECK(eol + 2 == end);
			break;
		}
		if (lines++ == 0) {
			p = eol + 2;
			continue;
		}
		CHECK(!conn);	/* Connection is the last field */
		colon = memchr(p, ':', (size_t)(eol - p));
		CHECK(colon != NULL);
		nl = (size_t)(colon - p);
		for (i = 0; i < sizeof(fuzz_hop) / sizeof(fuzz_hop[0]); i++) {
			if (strlen(fuzz_hop[i]) != nl ||
			    strncasecmp(p, fuzz_hop[i], nl) != 0)
				continue;
			CHECK(i == 0);
			want = strlen(last);
			CHECK((size_t)(eol - colon) == 2 + want &&
			    memcmp(colon + 2, last, want) == 0);
			conn = 1;
		}
		if (!conn)
			CHECK(!fuzz_conn_named(buf, f, nf, p, nl));
		p = eol + 2;
	}
	CHECK(conn);
}

static void
fuzz_request(const char *buf, size_t len)
{
	static struct http_request req, again;
	struct sbuf out;
	int r;

	r = http_request_parse(buf, len, &req);
	CHECK(r == HTTP_BAD || r == HTTP_NEED_MORE || r == HTTP_OK);
	if (r == HTTP_BAD) {
		CHECK(req.why != NULL);
		CHECK(req.status == 400 || req.status == 431 ||
		    req.status == 501 || req.status == 505);
		return;
	}
	if (r == HTTP_NEED_MORE) {
		CHECK(len < HTTP_HEAD_MAX);
		return;
	}
	CHECK(req.head_len >= 4 && req.head_len <= len);
	CHECK(req.head_len <= HTTP_HEAD_MAX);
	CHECK(memcmp(buf + req.head_len - 4, "\r\n\r\n", 4) == 0);
	CHECK(req.why == NULL && req.status == 0);
	CHECK(req.host[0] != '\0');
	CHECK(strlen(req.host) < sizeof(req.host));
	CHECK(req.port != 0);
	CHECK(req.minor == 0 || req.minor == 1);
	CHECK(strlen(req.method) < HTTP_METHOD_MAX);
	fuzz_fields(req.fields, req.nfields, req.head_len);
	CHECK(req.path_off + req.path_len <= req.head_len);
	if (req.is_connect)
		CHECK(req.body == HTTP_BODY_NONE);
	CHECK(req.body != HTTP_BODY_CLOSE);
	CHECK(req.body != HTTP_BODY_LENGTH || req.content_length > 0);

	/* The head alone parses the same; one byte less is incomplete. */
	CHECK(http_request_parse(buf, req.head_len, &again) == HTTP_OK);
	CHECK(again.head_len == req.head_len && again.body == req.body);
	CHECK(http_request_parse(buf, req.head_len - 1, &again) ==
	    HTTP_NEED_MORE);

	sbuf_init(&out);
	if (req.is_connect)
		CHECK(http_request_render(buf, &req, 0, &out) == -1);
	else {
		CHECK(http_request_render(buf, &req, 0, &out) == 0);
		CHECK(strncmp(out.p, req.method, strlen(req.method)) == 0);
		CHECK(out.p[strlen(req.method)] == ' ');
		CHECK(out.p[strlen(req.method) + 1] == '/');
		fuzz_rendered(buf, req.fields, req.nfields, &out, "close");
	}
	sbuf_free(&out);
}

static void
fuzz_response(const char *buf, size_t len, const char *method)
{
	static struct http_response resp, again;
	struct sbuf out;
	int r, keep;

	r = http_response_parse(buf, len, method, &resp);
	CHECK(r == HTTP_BAD || r == HTTP_NEED_MORE || r == HTTP_OK);
	if (r == HTTP_BAD) {
		CHECK(resp.why != NULL);
		return;
	}
	if (r == HTTP_NEED_MORE) {
		CHECK(len < HTTP_RESP_HEAD_MAX);
		return;
	}
	CHECK(resp.head_len >= 4 && resp.head_len <= len);
	CHECK(resp.head_len <= HTTP_RESP_HEAD_MAX);
	CHECK(resp.status >= 100 && resp.status <= 599 && resp.status != 101);
	fuzz_fields(resp.fields, resp.nfields, resp.head_len);
	if (resp.body == HTTP_BODY_CLOSE)
		CHECK(!resp.keep_alive);
	if (resp.status < 200 || resp.status == 204 || resp.status == 304)
		CHECK(resp.body == HTTP_BODY_NONE);

	CHECK(http_response_parse(buf, resp.head_len, method, &again) ==
	    HTTP_OK);
	CHECK(again.head_len == resp.head_len);

	for (keep = 0; keep <= 1; keep++) {
		sbuf_init(&out);
		CHECK(http_response_render(buf, &resp, keep, &out) == 0);
		CHECK(strncmp(out.p, "HTTP/1.", 7) == 0);
		fuzz_rendered(buf, resp.fields, resp.nfields, &out,
		    keep ? "keep-alive" : "close");
		sbuf_free(&out);
	}
}

/* Feed in pieces of `step` bytes; the total consumed, or -1. */
static ssize_t
fuzz_chunk_steps(const char *buf, size_t len, size_t step)
{
	struct chunk_state cs;
	size_t off = 0, n;
	ssize_t r;

	chunk_init(&cs);
	while (off < len && cs.st != CHUNK_DONE) {
		n = len - off < step ? len - off : step;
		r = chunk_feed(&cs, buf + off, n);
		if (r == -1) {
			CHECK(cs.why != NULL);
			CHECK(chunk_feed(&cs, buf, len) == -1);
			return -1;
		}
		CHECK(r >= 0 && (size_t)r <= n);
		CHECK(cs.why == NULL);
		/* Short only at the end of the body. */
		if ((size_t)r < n)
			CHECK(cs.st == CHUNK_DONE);
		off += (size_t)r;
	}
	if (cs.st == CHUNK_DONE)
		CHECK(chunk_feed(&cs, buf, len) == 0);
	return (ssize_t)off;
}

static void
fuzz_chunk(const char *buf, size_t len)
{
	ssize_t whole;

	whole = fuzz_chunk_steps(buf, len, len ? len : 1);
	CHECK(whole == -1 || (size_t)whole <= len);
	/* However the bytes are split, the framing agrees. */
	CHECK(fuzz_chunk_steps(buf, len, 1) == whole);
	CHECK(fuzz_chunk_steps(buf, len, 7) == whole);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;

	fuzz_request(buf, size);
	fuzz_response(buf, size, "GET");
	fuzz_response(buf, size, "HEAD");
	fuzz_chunk(buf, size);
	return 0;
}
