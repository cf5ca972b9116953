/* Unit tests for gate/http.c: request and response heads, renderers,
 * chunked framing. */
#include <sys/socket.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

/* Parse exactly len bytes from a private heap copy, so ASan sees overreads. */
static int
req_parse_n(const char *s, size_t len, struct http_request *r)
{
	char *copy = malloc(len ? len : 1);
	int rv;

	cr_assert_not_null(copy);
	memcpy(copy, s, len);
	rv = http_request_parse(copy, len, r);
	free(copy);
	return rv;
}

static int
req_parse(const char *s, struct http_request *r)
{
	return req_parse_n(s, strlen(s), r);
}

/* Expect HTTP_BAD with this status and this exact why. */
static void
req_bad(const char *s, int status, const char *why)
{
	static struct http_request r;
	int rv;

	rv = req_parse(s, &r);
	cr_assert_eq(rv, HTTP_BAD, "expected BAD for [%s], got %d", s, rv);
	cr_assert_eq(r.status, status, "status for [%s]: %d, want %d", s,
	    r.status, status);
	cr_assert_not_null(r.why);
	cr_assert_str_eq(r.why, why, "why for [%s]", s);
}

static void
req_ok(const char *s, struct http_request *r)
{
	int rv = req_parse(s, r);

	cr_assert_eq(rv, HTTP_OK, "expected OK for [%s], got %d (%d %s)", s,
	    rv, r->status, r->why ? r->why : "-");
	cr_assert_eq(r->head_len, strlen(s));
}

/* Every strict prefix of a head is NEED_MORE. */
static void
req_prefixes(const char *s)
{
	static struct http_request r;
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		cr_assert_eq(req_parse_n(s, i, &r), HTTP_NEED_MORE,
		    "prefix %zu of [%s]", i, s);
	cr_assert_eq(req_parse_n(s, n, &r), HTTP_OK);
}

static int
resp_parse_n(const char *s, size_t len, const char *method,
    struct http_response *r)
{
	char *copy = malloc(len ? len : 1);
	int rv;

	cr_assert_not_null(copy);
	memcpy(copy, s, len);
	rv = http_response_parse(copy, len, method, r);
	free(copy);
	return rv;
}

static void
resp_bad(const char *s, const char *method, const char *why)
{
	static struct http_response r;

	cr_assert_eq(resp_parse_n(s, strlen(s), method, &r), HTTP_BAD,
	    "expected BAD for [%s]", s);
	cr_assert_not_null(r.why);
	cr_assert_str_eq(r.why, why, "why for [%s]", s);
}

static void
resp_ok(const char *s, const char *method, struct http_response *r)
{
	int rv = resp_parse_n(s, strlen(s), method, r);

	cr_assert_eq(rv, HTTP_OK, "expected OK for [%s], got %d (%s)", s, rv,
	    r->why ? r->why : "-");
	cr_assert_eq(r->head_len, strlen(s));
}

/* A heap string of n copies of c. */
static char *
rep(char c, size_t n)
{
	char *p = malloc(n + 1);

	cr_assert_not_null(p);
	memset(p, c, n);
	p[n] = '\0';
	return p;
}

static char *
cat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *p = malloc(la + lb + lc + 1);

	cr_assert_not_null(p);
	memcpy(p, a, la);
	memcpy(p + la, b, lb);
	memcpy(p + la + lb, c, lc + 1);
	return p;
}

/* CONNECT */

Test(http_connect, name_and_port)
{
	static struct http_request r;
	const char *s = "CONNECT Registry.NPMJS.org.:443 HTTP/1.1\r\n"
	    "Host: registry.npmjs.org:443\r\nUser-Agent: t\r\n\r\n";

	req_ok(s, &r);
	cr_assert_eq(r.is_connect, 1);
	cr_assert_str_eq(r.method, "CONNECT");
	cr_assert_str_eq(r.host, "registry.npmjs.org");
	cr_assert_eq(r.host_is_ip, 0);
	cr_assert_eq(r.port, 443);
	cr_assert_eq(r.minor, 1);
	cr_assert_eq(r.nfields, 2);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	cr_assert_eq(r.keep_alive, 1);
	cr_assert_eq(r.status, 0);
	cr_assert_null(r.why);
	req_prefixes(s);
}

Test(http_connect, without_host_field_and_http10)
{
	static struct http_request r;

	req_ok("CONNECT example.com:8443 HTTP/1.1\r\n\r\n", &r);
	cr_assert_eq(r.port, 8443);
	req_ok("CONNECT example.com:443 HTTP/1.0\r\n\r\n", &r);
	cr_assert_eq(r.minor, 0);
	cr_assert_eq(r.keep_alive, 0);
	req_ok("CONNECT a.b:65535 HTTP/1.1\r\n\r\n", &r);
	cr_assert_eq(r.port, 65535);
	req_ok("CONNECT a.b:1 HTTP/1.1\r\n\r\n", &r);
	cr_assert_eq(r.port, 1);
}

Test(http_connect, ipv6_and_ipv4_literals)
{
	static struct http_request r;

	req_ok("CONNECT [::1]:443 HTTP/1.1\r\nHost: [0:0::1]:443\r\n\r\n", &r);
	cr_assert_eq(r.host_is_ip, 1);
	cr_assert_eq(r.ip.family, AF_INET6);
	cr_assert_str_eq(r.host, "::1");
	cr_assert_eq(r.ip.b[15], 1);
	req_ok("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", &r);
	cr_assert_eq(r.host_is_ip, 1);
	cr_assert_eq(r.ip.family, AF_INET);
	cr_assert_str_eq(r.host, "127.0.0.1");
	req_bad("CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400,
	    "IPv6 literal without brackets");
	req_bad("CONNECT [1.2.3.4]:443 HTTP/1.1\r\n\r\n", 400,
	    "malformed IP literal");
	req_bad("CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400,
	    "malformed IP literal");
	req_bad("CONNECT [::1]443 HTTP/1.1\r\n\r\n", 400,
	    "malformed authority");
	req_bad("CONNECT []:443 HTTP/1.1\r\n\r\n", 400, "malformed IP literal");
	req_bad("CONNECT 1.2.3.256:443 HTTP/1.1\r\n\r\n", 400,
	    "malformed IP literal");
}

Test(http_connect, port_rules)
{
	req_bad("CONNECT example.com HTTP/1.1\r\n\r\n", 400,
	    "CONNECT target without port");
	req_bad("CONNECT [::1] HTTP/1.1\r\n\r\n", 400,
	    "CONNECT target without port");
	req_bad("CONNECT example.com: HTTP/1.1\r\n\r\n", 400, "invalid port");
	req_bad("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "invalid port");
	req_bad("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400,
	    "invalid port");
	req_bad("CONNECT example.com:0443 HTTP/1.1\r\n\r\n", 400,
	    "invalid port");
	req_bad("CONNECT example.com:+443 HTTP/1.1\r\n\r\n", 400,
	    "invalid port");
	req_bad("CONNECT example.com:44a HTTP/1.1\r\n\r\n", 400,
	    "invalid port");
	req_bad("CONNECT example.com:100000 HTTP/1.1\r\n\r\n", 400,
	    "invalid port");
	req_bad("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host");
	req_bad("CONNECT u:p@example.com:443 HTTP/1.1\r\n\r\n", 400,
	    "userinfo in authority");
	req_bad("CONNECT exa_mple.com:443 HTTP/1.1\r\n\r\n", 400,
	    "invalid host");
	req_bad("CONNECT http://example.com HTTP/1.1\r\n\r\n", 400,
	    "invalid port");
	req_bad("CONNECT http://example.com:443 HTTP/1.1\r\n\r\n", 400,
	    "IPv6 literal without brackets");
}

Test(http_connect, body_refused)
{
	static struct http_request r;

	req_bad("CONNECT a.b:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 400,
	    "CONNECT with a body");
	req_bad("CONNECT a.b:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n", 400, "CONNECT with a body");
	req_ok("CONNECT a.b:443 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
}

Test(http_connect, host_field)
{
	static struct http_request r;

	req_ok("CONNECT a.b:443 HTTP/1.1\r\nHost: A.B\r\n\r\n", &r);
	req_ok("CONNECT a.b:443 HTTP/1.1\r\nHost: a.b:443\r\n\r\n", &r);
	req_bad("CONNECT a.b:443 HTTP/1.1\r\nHost: a.b:444\r\n\r\n", 400,
	    "Host does not match the request target");
	req_bad("CONNECT a.b:443 HTTP/1.1\r\nHost: c.d:443\r\n\r\n", 400,
	    "Host does not match the request target");
	req_bad("CONNECT a.b:443 HTTP/1.1\r\nHost: a.b\r\nHost: a.b\r\n\r\n",
	    400, "multiple Host fields");
	req_bad("CONNECT a.b:443 HTTP/1.1\r\nHost: \r\n\r\n", 400,
	    "invalid Host field");
}

/* Absolute-URI */

Test(http_absolute, get_with_path_and_query)
{
	static struct http_request r;
	const char *s = "GET HTTP://Deb.Debian.ORG/debian/dists?x=1&y=%20 "
	    "HTTP/1.1\r\nHost: deb.debian.org\r\nAccept: */*\r\n\r\n";

	req_ok(s, &r);
	cr_assert_eq(r.is_connect, 0);
	cr_assert_str_eq(r.method, "GET");
	cr_assert_str_eq(r.host, "deb.debian.org");
	cr_assert_eq(r.port, 80);
	cr_assert_eq(r.path_len, strlen("/debian/dists?x=1&y=%20"));
	cr_assert(memcmp(s + r.path_off, "/debian/dists?x=1&y=%20",
	    r.path_len) == 0);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	cr_assert_eq(r.keep_alive, 1);
	req_prefixes(s);
}

Test(http_absolute, ports_and_host_match)
{
	static struct http_request r;

	req_ok("GET http://a.b:8080/ HTTP/1.1\r\nHost: a.b:8080\r\n\r\n", &r);
	cr_assert_eq(r.port, 8080);
	req_ok("GET http://a.b/ HTTP/1.1\r\nHost: a.b:80\r\n\r\n", &r);
	req_ok("GET http://a.b:80/ HTTP/1.1\r\nHost: a.b\r\n\r\n", &r);
	cr_assert_eq(r.port, 80);
	req_bad("GET http://a.b:8080/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "Host does not match the request target");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b:8080\r\n\r\n", 400,
	    "Host does not match the request target");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: evil.example\r\n\r\n", 400,
	    "Host does not match the request target");
	req_bad("GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n",
	    400, "Host does not match the request target");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b:0\r\n\r\n", 400,
	    "invalid Host field");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: u@a.b\r\n\r\n", 400,
	    "invalid Host field");
	req_bad("GET http://a.b:/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid port");
}

Test(http_absolute, host_field_count)
{
	static struct http_request r;

	req_bad("GET http://a.b/ HTTP/1.1\r\n\r\n", 400, "missing Host field");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nhost: a.b\r\n\r\n",
	    400, "multiple Host fields");
	req_ok("GET http://a.b/ HTTP/1.0\r\n\r\n", &r);
	cr_assert_eq(r.minor, 0);
	req_bad("GET http://a.b/ HTTP/1.0\r\nHost: c.d\r\n\r\n", 400,
	    "Host does not match the request target");
}

Test(http_absolute, empty_path)
{
	static struct http_request r;
	const char *s = "GET http://a.b HTTP/1.1\r\nHost: a.b\r\n\r\n";

	req_ok(s, &r);
	cr_assert_eq(r.path_len, 0);
	cr_assert(r.path_off <= strlen(s));
	req_ok("GET http://a.b?q=1 HTTP/1.1\r\nHost: a.b\r\n\r\n", &r);
	cr_assert_eq(r.path_len, 4);
	req_ok("GET http://a.b:81 HTTP/1.1\r\nHost: a.b:81\r\n\r\n", &r);
	cr_assert_eq(r.path_len, 0);
	cr_assert_eq(r.port, 81);
}

Test(http_absolute, target_forms_refused)
{
	req_bad("GET https://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "https absolute-URI: use CONNECT");
	req_bad("GET HTTPS://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "https absolute-URI: use CONNECT");
	req_bad("GET / HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "origin-form request: not a proxy request");
	req_bad("GET /x?y HTTP/1.1\r\n", 400,
	    "origin-form request: not a proxy request");
	req_bad("OPTIONS * HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "asterisk-form request");
	req_bad("GET a.b:80 HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "unsupported request target");
	req_bad("GET ftp://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "unsupported request target");
	req_bad("GET http:/a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "unsupported request target");
	req_bad("GET http:///x HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "empty host");
	req_bad("GET http://u:p@a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "userinfo in authority");
	req_bad("GET http://a.b@evil.c/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "userinfo in authority");
	req_bad("GET http://a.b/x#frag HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "fragment in request target");
	req_bad("GET http://a.b/\x80 HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid character in request target");
	req_bad("GET http://a.b/\x7f HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid character in request target");
	req_bad("GET http://exa_mple.com/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid host");
	req_bad("GET http://a%2eb/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid host");
	req_bad("GET http://a.b\\@c.d/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "userinfo in authority");
	req_bad("GET http://::1/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "IPv6 literal without brackets");
}

Test(http_absolute, ip_literals)
{
	static const char *const v4[] = {
		"127.1", "0x7f.1", "2130706433", "0177.0.0.1", "127.0.0.1",
		"0x7f000001",
	};
	static struct http_request r;
	char s[256];
	size_t i;

	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		snprintf(s, sizeof(s), "GET http://%s/ HTTP/1.1\r\n"
		    "Host: 127.0.0.1\r\n\r\n", v4[i]);
		req_ok(s, &r);
		cr_assert_eq(r.host_is_ip, 1, "%s", v4[i]);
		cr_assert_eq(r.ip.family, AF_INET, "%s", v4[i]);
		cr_assert_str_eq(r.host, "127.0.0.1", "%s", v4[i]);
		cr_assert(memcmp(r.ip.b, "\x7f\0\0\x01", 4) == 0);
		/* The Host field is canonicalised the same way. */
		snprintf(s, sizeof(s), "GET http://127.0.0.1/ HTTP/1.1\r\n"
		    "Host: %s\r\n\r\n", v4[i]);
		req_ok(s, &r);
	}
	req_ok("GET http://[::1]:8080/x HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
	    &r);
	cr_assert_eq(r.host_is_ip, 1);
	cr_assert_eq(r.ip.family, AF_INET6);
	cr_assert_str_eq(r.host, "::1");
	cr_assert_eq(r.port, 8080);
	req_bad("GET http://[::1]/ HTTP/1.1\r\nHost: ::1\r\n\r\n", 400,
	    "invalid Host field");
	req_bad("GET http://1.2.3.999/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "malformed IP literal");
	req_bad("GET http://[::g]/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "malformed IP literal");
	req_bad("GET http://[a.b]/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "malformed IP literal");
}

Test(http_absolute, post_with_length_and_chunked)
{
	static struct http_request r;

	req_ok("POST http://a.b/u HTTP/1.1\r\nHost: a.b\r\n"
	    "Content-Length: 12\r\n\r\n", &r);
	cr_assert_eq(r.body, HTTP_BODY_LENGTH);
	cr_assert_eq(r.content_length, 12);
	req_ok("POST http://a.b/u HTTP/1.1\r\nHost: a.b\r\n"
	    "Content-Length: 0\r\n\r\n", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	cr_assert_eq(r.content_length, 0);
	req_ok("POST http://a.b/u HTTP/1.1\r\nHost: a.b\r\n"
	    "Transfer-Encoding: Chunked\r\n\r\n", &r);
	cr_assert_eq(r.body, HTTP_BODY_CHUNKED);
	req_ok("PUT http://a.b/u HTTP/1.1\r\nHost: a.b\r\n"
	    "Content-Length: 9007199254740992\r\n\r\n", &r);
	cr_assert_eq(r.content_length, (uint64_t)1 << 53);
}

/* Framing fields */

Test(http_framing, content_length_rules)
{
	static const char *const bad[] = {
		"+5", "-1", "5 5", "0x5", "", "5,5", "1e3", "9007199254740993",
		"00000000000000001", "99999999999999999999",
	};
	static struct http_request r;
	char s[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(s, sizeof(s), "POST http://a.b/ HTTP/1.1\r\n"
		    "Host: a.b\r\nContent-Length: %s\r\n\r\n", bad[i]);
		req_bad(s, 400, "invalid Content-Length");
	}
	req_ok("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Content-Length:  0000000000000007 \r\n\r\n", &r);
	cr_assert_eq(r.content_length, 7);
	req_bad("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\nContent-Length: 5"
	    "\r\nContent-Length: 5\r\n\r\n", 400,
	    "multiple Content-Length fields");
	req_bad("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\nContent-Length: 5"
	    "\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	    "Content-Length with Transfer-Encoding");
}

Test(http_framing, transfer_encoding_rules)
{
	req_bad("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Transfer-Encoding: gzip, chunked\r\n\r\n", 501,
	    "unsupported transfer-coding");
	req_bad("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Transfer-Encoding: identity\r\n\r\n", 501,
	    "unsupported transfer-coding");
	req_bad("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Transfer-Encoding: chunked, chunked\r\n\r\n", 501,
	    "unsupported transfer-coding");
	req_bad("POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	    400, "multiple Transfer-Encoding fields");
	req_bad("POST http://a.b/ HTTP/1.0\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400,
	    "Transfer-Encoding in HTTP/1.0");
}

Test(http_framing, upgrade_refused)
{
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: Upgrade, "
	    "HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAA\r\n\r\n",
	    400, "Upgrade refused");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nupgrade: websocket"
	    "\r\n\r\n", 400, "Upgrade refused");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nHTTP2-Settings: A"
	    "\r\n\r\n", 400, "HTTP2-Settings refused");
	req_bad("CONNECT a.b:443 HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", 400,
	    "Upgrade refused");
}

Test(http_framing, keep_alive)
{
	static struct http_request r;

	req_ok("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", &r);
	cr_assert_eq(r.keep_alive, 1);
	req_ok("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: close"
	    "\r\n\r\n", &r);
	cr_assert_eq(r.keep_alive, 0);
	req_ok("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: foo, ,"
	    "CLOSE\r\n\r\n", &r);
	cr_assert_eq(r.keep_alive, 0);
	req_ok("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: foo\r\n"
	    "Connection: Close\r\n\r\n", &r);
	cr_assert_eq(r.keep_alive, 0);
	req_ok("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: foo ,"
	    "\tclose \r\n\r\n", &r);
	cr_assert_eq(r.keep_alive, 0);
	req_ok("GET http://a.b/ HTTP/1.0\r\n\r\n", &r);
	cr_assert_eq(r.keep_alive, 0);
	req_ok("GET http://a.b/ HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
	    &r);
	cr_assert_eq(r.keep_alive, 1);
	req_ok("GET http://a.b/ HTTP/1.0\r\nConnection: keep-alive, close\r\n"
	    "\r\n", &r);
	cr_assert_eq(r.keep_alive, 0);
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: a b\r\n"
	    "\r\n", 400, "malformed Connection field");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: "
	    "Content-Length\r\n\r\n", 400,
	    "Connection names an end-to-end field");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: "
	    "close, host\r\n\r\n", 400,
	    "Connection names an end-to-end field");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nConnection: "
	    "transfer-encoding\r\n\r\n", 400,
	    "Connection names an end-to-end field");
}

/* Syntax */

Test(http_syntax, versions)
{
	static struct http_request r;

	req_bad("GET http://a.b/ HTTP/2.0\r\n\r\n", 505,
	    "unsupported HTTP version");
	req_bad("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505,
	    "unsupported HTTP version");
	req_bad("PRI * HTTP/2.0\r\n", 505, "unsupported HTTP version");
	req_bad("GET http://a.b/ HTTP/1.2\r\n\r\n", 505,
	    "unsupported HTTP version");
	req_bad("GET http://a.b/ HTTP/3\r\n\r\n", 505,
	    "unsupported HTTP version");
	req_bad("GET http://a.b/ HTTP/1.10\r\n\r\n", 505,
	    "unsupported HTTP version");
	req_bad("GET http://a.b/ http/1.1\r\n\r\n", 400,
	    "malformed HTTP version");
	req_bad("GET http://a.b/ FOO\r\n\r\n", 400, "malformed HTTP version");
	req_bad("GET /\r\n", 400, "HTTP/0.9 request");
	req_bad("GET http://a.b/\r\n", 400, "HTTP/0.9 request");
	req_ok("GET http://a.b/ HTTP/1.0\r\n\r\n", &r);
	cr_assert_eq(r.minor, 0);
}

Test(http_syntax, request_line_spacing)
{
	req_bad("GET  http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "malformed request line");
	req_bad("GET http://a.b/  HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "malformed request line");
	req_bad("GET http://a.b/ HTTP/1.1 \r\nHost: a.b\r\n\r\n", 400,
	    "malformed request line");
	req_bad(" GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid method");
	req_bad("GET\thttp://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid method");
	req_bad("GET http://a.b/\tHTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "HTTP/0.9 request");
	req_bad("GET\r\n\r\n", 400, "malformed request line");
	req_bad("GET \r\n\r\n", 400, "malformed request line");
	req_bad("\r\nGET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "empty request line");
	req_bad("G(T http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n", 400,
	    "invalid method");
}

Test(http_syntax, method_length)
{
	static struct http_request r;
	char *m31 = rep('M', HTTP_METHOD_MAX - 1), *m32 = rep('M',
	    HTTP_METHOD_MAX);
	char *ok = cat3(m31, " http://a.b/ HTTP/1.1\r\n", "Host: a.b\r\n\r\n");
	char *bad = cat3(m32, " http://a.b/ HTTP/1.1\r\n", "Host: a.b\r\n\r\n");

	req_ok(ok, &r);
	cr_assert_str_eq(r.method, m31);
	req_bad(bad, 400, "method too long");
	free(m31);
	free(m32);
	free(ok);
	free(bad);
}

Test(http_syntax, line_endings_and_nul)
{
	static const char nul[] = "GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "X: a\0b\r\n\r\n";
	static const char nul2[] = "GET http://a.b/\0 HTTP/1.1\r\n\r\n";
	static struct http_request r;

	req_bad("GET http://a.b/ HTTP/1.1\nHost: a.b\r\n\r\n", 400,
	    "bare LF in head");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\n\r\n", 400,
	    "bare LF in head");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\n", 400,
	    "bare LF in head");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX: a\rb\r\n\r\n",
	    400, "bare CR in head");
	req_bad("GET http://a.b/ HTTP/1.1\r\r\n\r\n", 400, "bare CR in head");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\r", 400,
	    "bare CR in head");
	cr_assert_eq(req_parse_n(nul, sizeof(nul) - 1, &r), HTTP_BAD);
	cr_assert_eq(r.status, 400);
	cr_assert_str_eq(r.why, "NUL in head");
	/* Refused even before the line is complete. */
	cr_assert_eq(req_parse_n(nul2, 16, &r), HTTP_BAD);
	cr_assert_str_eq(r.why, "NUL in head");
	cr_assert_eq(req_parse_n("GET http\n", 9, &r), HTTP_BAD);
	cr_assert_str_eq(r.why, "bare LF in head");
}

Test(http_syntax, field_lines)
{
	static struct http_request r;
	const char *s;

	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX: a\r\n b\r\n\r\n",
	    400, "obs-fold line");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX: a\r\n\tb\r\n\r\n",
	    400, "obs-fold line");
	req_bad("GET http://a.b/ HTTP/1.1\r\n Host: a.b\r\n\r\n", 400,
	    "obs-fold line");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost : a.b\r\n\r\n", 400,
	    "whitespace in field name");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost\t: a.b\r\n\r\n", 400,
	    "whitespace in field name");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHo st: a.b\r\n\r\n", 400,
	    "whitespace in field name");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHo(st: a.b\r\n\r\n", 400,
	    "invalid field name");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\xc3\xa9: x\r\n\r\n",
	    400, "invalid field name");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHosta.b\r\n\r\n", 400,
	    "field line without colon");
	req_bad("GET http://a.b/ HTTP/1.1\r\n: a.b\r\n\r\n", 400,
	    "empty field name");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX: a\x01" "b\r\n\r\n",
	    400, "invalid character in field value");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX: a\x7f\r\n\r\n",
	    400, "invalid character in field value");
	req_bad("GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX: \x1b[0m\r\n\r\n",
	    400, "invalid character in field value");

	s = "GET http://a.b/ HTTP/1.1\r\nHost:a.b\r\nX-T:\t v\xc3\xa9\tw \t\r\n"
	    "X-E:\r\nX-S:   \r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(r.nfields, 4);
	cr_assert_eq(r.fields[0].name_len, 4);
	cr_assert(memcmp(s + r.fields[0].value_off, "a.b", 3) == 0);
	cr_assert_eq(r.fields[0].value_len, 3);
	cr_assert(memcmp(s + r.fields[1].name_off, "X-T", 3) == 0);
	cr_assert_eq(r.fields[1].value_len, strlen("v\xc3\xa9\tw"));
	cr_assert(memcmp(s + r.fields[1].value_off, "v\xc3\xa9\tw",
	    r.fields[1].value_len) == 0);
	cr_assert_eq(r.fields[2].value_len, 0);
	cr_assert_eq(r.fields[3].value_len, 0);
}

Test(http_syntax, field_find)
{
	static struct http_request r;
	const char *s = "GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\nX-A: 1\r\n"
	    "x-a: 2\r\nX-AB: 3\r\n\r\n";

	req_ok(s, &r);
	cr_assert_eq(http_field_find(s, r.fields, r.nfields, "host"), 0);
	cr_assert_eq(http_field_find(s, r.fields, r.nfields, "X-a"), 1);
	cr_assert_eq(http_field_find(s, r.fields, r.nfields, "x-ab"), 3);
	cr_assert_eq(http_field_find(s, r.fields, r.nfields, "x-"), -1);
	cr_assert_eq(http_field_find(s, r.fields, r.nfields, "hostx"), -1);
	cr_assert_eq(http_field_find(s, r.fields, 0, "host"), -1);
}

Test(http_syntax, need_more)
{
	static struct http_request r;

	cr_assert_eq(req_parse_n("", 0, &r), HTTP_NEED_MORE);
	req_prefixes("CONNECT [::1]:443 HTTP/1.0\r\n\r\n");
	req_prefixes("POST http://a.b:8080/x HTTP/1.1\r\nHost: a.b:8080\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: close, x-y\r\n"
	    "X-Y: 1\r\n\r\n");
	req_prefixes("GET http://a.b HTTP/1.1\r\nHost: a.b\r\n\r\n");
}

Test(http_syntax, pipelined)
{
	static struct http_request r;
	const char *first = "POST http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Content-Length: 5\r\n\r\n";
	char *s = cat3(first, "hello", "GET http://a.b/ HTTP/1.1\r\n"
	    "Host: a.b\r\n\r\n");

	cr_assert_eq(req_parse(s, &r), HTTP_OK);
	cr_assert_eq(r.head_len, strlen(first));
	cr_assert_eq(r.content_length, 5);
	cr_assert_eq(r.nfields, 2);
	cr_assert_eq(req_parse(s + r.head_len + 5, &r), HTTP_OK);
	cr_assert_eq(r.head_len, strlen(s) - strlen(first) - 5);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	free(s);
	/* Garbage after a complete head is not looked at. */
	cr_assert_eq(req_parse("CONNECT a.b:443 HTTP/1.1\r\n\r\n\x16\x03\x01"
	    "\n\r\0", &r), HTTP_OK);
	cr_assert_eq(r.head_len, strlen("CONNECT a.b:443 HTTP/1.1\r\n\r\n"));
}

/* Caps */

/* A request line of exactly n bytes (CRLF excluded). */
static char *
req_line_of(size_t n)
{
	const char *pre = "GET http://a.b/", *post = " HTTP/1.1";
	char *pad = rep('a', n - strlen(pre) - strlen(post));
	char *s = cat3(pre, pad, post);

	free(pad);
	cr_assert_eq(strlen(s), n);
	return s;
}

Test(http_caps, request_line)
{
	static struct http_request r;
	char *line, *s;

	line = req_line_of(HTTP_LINE_MAX);
	s = cat3(line, "\r\n", "Host: a.b\r\n\r\n");
	req_ok(s, &r);
	cr_assert_eq(r.path_len, HTTP_LINE_MAX - strlen("GET http://a.b") -
	    strlen(" HTTP/1.1"));
	/* Exactly at the cap, no newline yet: still waiting. */
	cr_assert_eq(req_parse_n(s, HTTP_LINE_MAX, &r), HTTP_NEED_MORE);
	cr_assert_eq(req_parse_n(s, HTTP_LINE_MAX + 1, &r), HTTP_NEED_MORE);
	free(line);
	free(s);

	line = req_line_of(HTTP_LINE_MAX + 1);
	s = cat3(line, "\r\n", "Host: a.b\r\n\r\n");
	req_bad(s, 431, "line too long");
	/* One byte over and no newline: refused at once. */
	cr_assert_eq(req_parse_n(s, HTTP_LINE_MAX + 1, &r), HTTP_BAD);
	cr_assert_eq(r.status, 431);
	cr_assert_str_eq(r.why, "line too long");
	free(line);
	free(s);
}

Test(http_caps, header_line)
{
	static struct http_request r;
	const char *pre = "GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n";
	char *pad, *field, *s;

	pad = rep('v', HTTP_LINE_MAX - 3);
	field = cat3("X: ", pad, "\r\n");
	cr_assert_eq(strlen(field), HTTP_LINE_MAX + 2);
	s = cat3(pre, field, "\r\n");
	req_ok(s, &r);
	cr_assert_eq(r.fields[1].value_len, HTTP_LINE_MAX - 3);
	free(field);
	free(s);
	free(pad);

	pad = rep('v', HTTP_LINE_MAX - 2);
	field = cat3("X: ", pad, "\r\n");
	s = cat3(pre, field, "\r\n");
	req_bad(s, 431, "line too long");
	cr_assert_eq(req_parse_n(s, strlen(pre) + HTTP_LINE_MAX, &r),
	    HTTP_NEED_MORE);
	cr_assert_eq(req_parse_n(s, strlen(pre) + HTTP_LINE_MAX + 1, &r),
	    HTTP_BAD);
	cr_assert_eq(r.status, 431);
	free(field);
	free(s);
	free(pad);
}

/* A head with nf fields (Host first) and total length padded to total. */
static char *
head_build(size_t nf, size_t total)
{
	const char *line = "GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n";
	size_t i, len, fixed, per, extra;
	char *s, *p;

	s = malloc(total + HTTP_LINE_MAX + 64);
	cr_assert_not_null(s);
	len = strlen(line);
	memcpy(s, line, len);
	/* Each further field "X-nnn: " value "\r\n"; the last one pads. */
	fixed = len + 2;
	for (i = 1; i < nf; i++)
		fixed += 9;
	cr_assert(total >= fixed);
	extra = total - fixed;
	p = s + len;
	for (i = 1; i < nf; i++) {
		per = i == nf - 1 ? extra : 0;
		p += sprintf(p, "X-%03zu: ", i);
		memset(p, 'v', per);
		p += per;
		memcpy(p, "\r\n", 2);
		p += 2;
	}
	memcpy(p, "\r\n", 3);
	cr_assert_eq(strlen(s), total);
	return s;
}

Test(http_caps, field_count)
{
	static struct http_request r;
	char *s = head_build(HTTP_HEADERS_MAX, 2000), *t;
	size_t n;

	req_ok(s, &r);
	cr_assert_eq(r.nfields, HTTP_HEADERS_MAX);
	free(s);
	s = head_build(HTTP_HEADERS_MAX + 1, 2000);
	req_bad(s, 431, "too many header fields");
	/* Refused at the first byte of the 101st field. */
	t = strstr(s, "X-100");
	cr_assert_not_null(t);
	n = (size_t)(t - s);
	cr_assert_eq(req_parse_n(s, n, &r), HTTP_NEED_MORE);
	cr_assert_eq(req_parse_n(s, n + 1, &r), HTTP_BAD);
	cr_assert_eq(r.status, 431);
	free(s);
}

/* A head of exactly total bytes made of many mid-sized fields. */
static char *
head_sized(size_t total)
{
	const char *line = "GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n";
	size_t len = strlen(line), left, chunk;
	char *s = malloc(total + 1), *p;
	int i = 0;

	cr_assert_not_null(s);
	memcpy(s, line, len);
	p = s + len;
	left = total - len - 2;
	while (left > 0) {
		/* "X-nn: " (6) + value + CRLF; at least 1 byte of value. */
		chunk = left > 4000 ? 4000 : left;
		if (left - chunk != 0 && left - chunk < 9)
			chunk -= 9;
		cr_assert(chunk >= 9);
		p += sprintf(p, "X-%02d: ", i++);
		memset(p, 'v', chunk - 8);
		p += chunk - 8;
		memcpy(p, "\r\n", 2);
		p += 2;
		left -= chunk;
	}
	memcpy(p, "\r\n", 3);
	cr_assert_eq(strlen(s), total);
	return s;
}

Test(http_caps, head_total)
{
	static struct http_request r;
	char *s;

	s = head_sized(HTTP_HEAD_MAX);
	req_ok(s, &r);
	cr_assert_eq(r.head_len, HTTP_HEAD_MAX);
	free(s);
	s = head_sized(HTTP_HEAD_MAX + 1);
	req_bad(s, 431, "head too large");
	cr_assert_eq(req_parse_n(s, HTTP_HEAD_MAX - 1, &r), HTTP_NEED_MORE);
	/* The final CR is in, its LF could not be: refused now. */
	cr_assert_eq(req_parse_n(s, HTTP_HEAD_MAX, &r), HTTP_BAD);
	cr_assert_eq(r.status, 431);
	free(s);
	/* Over the cap in the middle of a field, no newline: refused. */
	s = head_sized(HTTP_HEAD_MAX + 5);
	cr_assert_eq(s[HTTP_HEAD_MAX], 'v');
	cr_assert_eq(req_parse_n(s, HTTP_HEAD_MAX, &r), HTTP_NEED_MORE);
	cr_assert_eq(req_parse_n(s, HTTP_HEAD_MAX + 1, &r), HTTP_BAD);
	cr_assert_eq(r.status, 431);
	cr_assert_str_eq(r.why, "head too large");
	free(s);
}

/* Rendering */

Test(http_render, request_bytes)
{
	static struct http_request r;
	const char *s = "POST http://a.b:8080/p?q=1 HTTP/1.1\r\n"
	    "Host: a.b:8080\r\n"
	    "Connection: keep-alive, X-Hop\r\n"
	    "X-Hop: secret\r\n"
	    "Keep-Alive: timeout=5\r\n"
	    "Proxy-Connection: keep-alive\r\n"
	    "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
	    "TE: trailers\r\n"
	    "Trailer: X-Sum\r\n"
	    "Transfer-Encoding: chunked\r\n"
	    "Accept:   */*  \r\n"
	    "x-empty:\r\n"
	    "\r\n";
	const char *want = "POST /p?q=1 HTTP/1.1\r\n"
	    "Host: a.b:8080\r\n"
	    "Transfer-Encoding: chunked\r\n"
	    "Accept: */*\r\n"
	    "x-empty: \r\n"
	    "Connection: close\r\n\r\n";
	struct sbuf out;

	req_ok(s, &r);
	sbuf_init(&out);
	cr_assert_eq(http_request_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, want);
	cr_assert_eq(out.len, strlen(want));
	sbuf_free(&out);
}

Test(http_render, request_paths_and_host)
{
	static struct http_request r;
	struct sbuf out;
	const char *s;

	sbuf_init(&out);
	s = "GET http://a.b HTTP/1.1\r\nHost: a.b\r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(http_request_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, "GET / HTTP/1.1\r\nHost: a.b\r\n"
	    "Connection: close\r\n\r\n");
	sbuf_reset(&out);
	s = "HEAD http://a.b?x HTTP/1.1\r\nHost: a.b\r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(http_request_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, "HEAD /?x HTTP/1.1\r\nHost: a.b\r\n"
	    "Connection: close\r\n\r\n");
	sbuf_reset(&out);
	/* HTTP/1.0 without Host: the next hop gets one. */
	s = "GET http://[::1]:8080/x HTTP/1.0\r\nA: b\r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(http_request_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, "GET /x HTTP/1.1\r\nHost: [::1]:8080\r\n"
	    "A: b\r\nConnection: close\r\n\r\n");
	sbuf_reset(&out);
	s = "GET http://Example.COM/ HTTP/1.0\r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(http_request_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, "GET / HTTP/1.1\r\nHost: example.com\r\n"
	    "Connection: close\r\n\r\n");
	sbuf_reset(&out);
	/* A kept upstream connection says so; the client's wish is not sent. */
	s = "GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n"
	    "Connection: close\r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(http_request_render(s, &r, 1, &out), 0);
	cr_assert_str_eq(out.p, "GET / HTTP/1.1\r\nHost: a.b\r\n"
	    "Connection: keep-alive\r\n\r\n");
	sbuf_reset(&out);
	s = "CONNECT a.b:443 HTTP/1.1\r\n\r\n";
	req_ok(s, &r);
	cr_assert_eq(http_request_render(s, &r, 0, &out), -1);
	cr_assert_eq(http_request_render(s, &r, 1, &out), -1);
	sbuf_free(&out);
}

Test(http_render, response_bytes)
{
	static struct http_response r;
	const char *s = "HTTP/1.1 200 Fine Thanks\r\n"
	    "Content-Type: text/plain\r\n"
	    "Connection: X-Srv, keep-alive\r\n"
	    "X-Srv: 1\r\n"
	    "Keep-Alive: timeout=5\r\n"
	    "Upgrade: h2,h2c\r\n"
	    "Proxy-Authenticate: Basic\r\n"
	    "Trailer: X-Sum\r\n"
	    "Transfer-Encoding: chunked\r\n"
	    "\r\n";
	struct sbuf out;

	resp_ok(s, "GET", &r);
	sbuf_init(&out);
	cr_assert_eq(http_response_render(s, &r, 1, &out), 0);
	cr_assert_str_eq(out.p, "HTTP/1.1 200 Fine Thanks\r\n"
	    "Content-Type: text/plain\r\n"
	    "Transfer-Encoding: chunked\r\n"
	    "Connection: keep-alive\r\n\r\n");
	sbuf_reset(&out);
	cr_assert_eq(http_response_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, "HTTP/1.1 200 Fine Thanks\r\n"
	    "Content-Type: text/plain\r\n"
	    "Transfer-Encoding: chunked\r\n"
	    "Connection: close\r\n\r\n");
	sbuf_reset(&out);
	s = "HTTP/1.0 404\r\nContent-Length: 0\r\n\r\n";
	resp_ok(s, "GET", &r);
	cr_assert_eq(http_response_render(s, &r, 0, &out), 0);
	cr_assert_str_eq(out.p, "HTTP/1.0 404\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n");
	sbuf_free(&out);
}

/* Responses */

Test(http_response, bodies)
{
	static struct http_response r;

	resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", "GET", &r);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.minor, 1);
	cr_assert_eq(r.body, HTTP_BODY_LENGTH);
	cr_assert_eq(r.content_length, 42);
	cr_assert_eq(r.keep_alive, 1);
	cr_assert_eq(r.nfields, 1);
	resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "POST", &r);
	cr_assert_eq(r.body, HTTP_BODY_CHUNKED);
	resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n",
	    "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_CHUNKED);
	resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_CHUNKED);
	resp_ok("HTTP/1.1 200 OK\r\nX: y\r\n\r\n", "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_CLOSE);
	cr_assert_eq(r.keep_alive, 0);
	resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", "HEAD", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	cr_assert_eq(r.keep_alive, 1);
	resp_ok("HTTP/1.1 204 No Content\r\n\r\n", "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	cr_assert_eq(r.keep_alive, 1);
	resp_ok("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
	    "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	resp_ok("HTTP/1.1 100 Continue\r\n\r\n", "POST", &r);
	cr_assert_eq(r.status, 100);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	resp_ok("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", "GET", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	resp_ok("HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT", &r);
	cr_assert_eq(r.body, HTTP_BODY_NONE);
	resp_ok("HTTP/1.1 407 No\r\nContent-Length: 3\r\n\r\n", "CONNECT", &r);
	cr_assert_eq(r.body, HTTP_BODY_LENGTH);
	resp_ok("HTTP/1.1 200 OK\r\n\r\n", NULL, &r);
	cr_assert_eq(r.body, HTTP_BODY_CLOSE);
}

Test(http_response, keep_alive)
{
	static struct http_response r;

	resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close"
	    "\r\n\r\n", "GET", &r);
	cr_assert_eq(r.keep_alive, 0);
	resp_ok("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", "GET", &r);
	cr_assert_eq(r.minor, 0);
	cr_assert_eq(r.keep_alive, 0);
	resp_ok("HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: "
	    "keep-alive\r\n\r\n", "GET", &r);
	cr_assert_eq(r.keep_alive, 1);
	resp_ok("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", "GET",
	    &r);
	cr_assert_eq(r.body, HTTP_BODY_CLOSE);
	cr_assert_eq(r.keep_alive, 0);
}

Test(http_response, status_line)
{
	static struct http_response r;

	resp_ok("HTTP/1.1 200\r\n\r\n", "GET", &r);
	cr_assert_eq(r.status, 200);
	resp_ok("HTTP/1.1 200 \r\n\r\n", "GET", &r);
	resp_ok("HTTP/1.1 599 \xc3\xa9\tx y\r\n\r\n", "GET", &r);
	cr_assert_eq(r.status, 599);
	resp_bad("HTTP/1.1 600 Nope\r\n\r\n", "GET", "status code out of range");
	resp_bad("HTTP/1.1 099 Nope\r\n\r\n", "GET", "status code out of range");
	resp_bad("HTTP/1.1 20 OK\r\n\r\n", "GET", "malformed status code");
	resp_bad("HTTP/1.1 2000 OK\r\n\r\n", "GET", "malformed status line");
	resp_bad("HTTP/1.1  200 OK\r\n\r\n", "GET", "malformed status code");
	resp_bad("HTTP/1.1 200\tOK\r\n\r\n", "GET", "malformed status line");
	resp_bad("HTTP/2 200 OK\r\n\r\n", "GET", "unsupported HTTP version");
	resp_bad("HTTP/1.2 200 OK\r\n\r\n", "GET", "unsupported HTTP version");
	resp_bad("HTTP/1.1200 OK\r\n\r\n", "GET", "unsupported HTTP version");
	resp_bad("http/1.1 200 OK\r\n\r\n", "GET", "malformed status line");
	resp_bad("ICY 200 OK\r\n\r\n", "GET", "malformed status line");
	resp_bad("HTTP/1.1 200 O\x01K\r\n\r\n", "GET",
	    "invalid character in reason");
	resp_bad("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
	    "GET", "unexpected 101 Switching Protocols");
	resp_bad("HTTP/1.1 200 OK\nX: y\r\n\r\n", "GET", "bare LF in head");
	resp_bad("HTTP/1.1 200 OK\r\nX: y\r\n\n", "GET", "bare LF in head");
	resp_bad("HTTP/1.1 200 OK\r\nX: y\ry\r\n\r\n", "GET", "bare CR in head");
	resp_bad("HTTP/1.1 200 OK\r\nX : y\r\n\r\n", "GET",
	    "whitespace in field name");
	resp_bad("HTTP/1.1 200 OK\r\nX: y\r\n z\r\n\r\n", "GET",
	    "obs-fold line");
}

Test(http_response, framing_refused)
{
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n"
	    "\r\n", "GET", "multiple Content-Length fields");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n", "GET", "Content-Length with Transfer-Encoding");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\n", "GET",
	    "invalid Content-Length");
	resp_bad("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "GET",
	    "invalid Content-Length");
	resp_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "GET",
	    "transfer-coding not chunked-final");
	resp_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	    "GET", "transfer-coding not chunked-final");
	resp_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n"
	    "\r\n", "GET", "transfer-coding not chunked-final");
	resp_bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n", "GET",
	    "transfer-coding not chunked-final");
	resp_bad("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET",
	    "Transfer-Encoding in HTTP/1.0");
	resp_bad("HTTP/1.1 200 OK\r\nConnection: content-length\r\n"
	    "Content-Length: 1\r\n\r\n", "GET",
	    "Connection names an end-to-end field");
}

Test(http_response, need_more_and_caps)
{
	static struct http_response r;
	const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX: y\r\n\r\n";
	char *pad, *big, *line;
	size_t i, n = strlen(s), off;

	for (i = 0; i < n; i++)
		cr_assert_eq(resp_parse_n(s, i, "GET", &r), HTTP_NEED_MORE,
		    "prefix %zu", i);
	cr_assert_eq(resp_parse_n(s, n, "GET", &r), HTTP_OK);

	/* Line cap, at and over, with and without the newline. */
	pad = rep('v', HTTP_LINE_MAX - 3);
	line = cat3("HTTP/1.1 200 OK\r\nX: ", pad, "\r\n\r\n");
	resp_ok(line, "GET", &r);
	free(line);
	free(pad);
	pad = rep('v', HTTP_LINE_MAX - 2);
	line = cat3("HTTP/1.1 200 OK\r\nX: ", pad, "\r\n\r\n");
	resp_bad(line, "GET", "line too long");
	cr_assert_eq(resp_parse_n(line, 17 + HTTP_LINE_MAX + 1, "GET", &r),
	    HTTP_BAD);
	free(line);
	free(pad);

	/* Head cap: 9 fields of about 8 KB are past HTTP_RESP_HEAD_MAX. */
	big = malloc(HTTP_RESP_HEAD_MAX + 2 * HTTP_LINE_MAX);
	cr_assert_not_null(big);
	off = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\n");
	while (off < HTTP_RESP_HEAD_MAX + 10) {
		off += (size_t)sprintf(big + off, "X: ");
		memset(big + off, 'v', 8000);
		off += 8000;
		memcpy(big + off, "\r\n", 2);
		off += 2;
	}
	cr_assert_eq(resp_parse_n(big, HTTP_RESP_HEAD_MAX, "GET", &r),
	    HTTP_NEED_MORE);
	cr_assert_eq(resp_parse_n(big, HTTP_RESP_HEAD_MAX + 1, "GET", &r),
	    HTTP_BAD);
	cr_assert_str_eq(r.why, "head too large");
	free(big);
}

/* Chunked framing */

static const char chunk_sample[] =
    "5\r\nhello\r\n"
    "1A;name=\"v a\";x\r\n"
    "abcdefghijklmnopqrstuvwxyz\r\n"
    "00000000000000A\r\n0123456789\r\n"
    "0;last\r\n"
    "X-Sum: 42\r\n"
    "X-Empty:\r\n"
    "\r\n";

Test(http_chunk, whole_and_trailing_bytes)
{
	struct chunk_state cs;
	size_t n = sizeof(chunk_sample) - 1;
	char *buf = cat3(chunk_sample, "GET http://a.b/ HTTP/1.1\r\n", "");

	chunk_init(&cs);
	cr_assert_eq(cs.st, CHUNK_SIZE);
	cr_assert_eq(chunk_feed(&cs, buf, strlen(buf)), (ssize_t)n);
	cr_assert_eq(cs.st, CHUNK_DONE);
	cr_assert_null(cs.why);
	cr_assert_eq(chunk_feed(&cs, "more", 4), 0);
	cr_assert_eq(chunk_feed(&cs, "", 0), 0);
	free(buf);
}

Test(http_chunk, every_split_point)
{
	struct chunk_state cs;
	size_t n = sizeof(chunk_sample) - 1, i, j, got;
	ssize_t r;
	char *buf = cat3(chunk_sample, "NEXT", "");

	for (i = 0; i <= n + 4; i++) {
		chunk_init(&cs);
		r = chunk_feed(&cs, buf, i);
		cr_assert(r >= 0 && (size_t)r <= i, "split %zu: %zd", i, r);
		got = (size_t)r;
		cr_assert_eq(got, i > n ? n : i, "split %zu", i);
		if (i < n)
			cr_assert_neq(cs.st, CHUNK_DONE, "split %zu", i);
		r = chunk_feed(&cs, buf + got, n + 4 - got);
		cr_assert_eq(r, (ssize_t)(n - got), "split %zu", i);
		cr_assert_eq(cs.st, CHUNK_DONE);
	}
	/* One byte at a time. */
	chunk_init(&cs);
	for (j = 0; j < n; j++) {
		cr_assert_neq(cs.st, CHUNK_DONE, "byte %zu", j);
		cr_assert_eq(chunk_feed(&cs, buf + j, 1), 1, "byte %zu", j);
	}
	cr_assert_eq(cs.st, CHUNK_DONE);
	cr_assert_eq(chunk_feed(&cs, buf + n, 1), 0);
	/* Three pieces at every pair of split points. */
	for (i = 0; i <= n; i += 3) {
		for (j = i; j <= n; j += 5) {
			chunk_init(&cs);
			cr_assert_eq(chunk_feed(&cs, buf, i), (ssize_t)i);
			cr_assert_eq(chunk_feed(&cs, buf + i, j - i),
			    (ssize_t)(j - i));
			cr_assert_eq(chunk_feed(&cs, buf + j, n + 4 - j),
			    (ssize_t)(n - j));
			cr_assert_eq(cs.st, CHUNK_DONE);
		}
	}
	free(buf);
}

/* Feed s in one go and expect an error with this why, also byte by byte. */
static void
chunk_bad(const char *s, size_t n, const char *why)
{
	struct chunk_state cs;
	size_t i;
	ssize_t r = 0;

	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, s, n), -1, "[%s]", s);
	cr_assert_str_eq(cs.why, why, "[%s]", s);
	cr_assert_eq(chunk_feed(&cs, "0\r\n\r\n", 5), -1);
	chunk_init(&cs);
	for (i = 0; i < n && r != -1; i++)
		r = chunk_feed(&cs, s + i, 1);
	cr_assert_eq(r, -1, "[%s] bytewise", s);
	cr_assert_str_eq(cs.why, why);
}

#define CHUNK_BAD(s, why) chunk_bad((s), sizeof(s) - 1, (why))

Test(http_chunk, errors)
{
	CHUNK_BAD("5\nhello\r\n0\r\n\r\n", "bare LF in chunk-size line");
	CHUNK_BAD("5\rhello", "bare CR in chunk-size line");
	CHUNK_BAD("\r\n", "missing chunk size");
	CHUNK_BAD(";x\r\n", "invalid chunk size");
	CHUNK_BAD("5 \r\nhello\r\n", "invalid chunk size");
	CHUNK_BAD("5 ;x\r\nhello\r\n", "invalid chunk size");
	CHUNK_BAD("-5\r\n", "invalid chunk size");
	CHUNK_BAD("0x5\r\n", "invalid chunk size");
	CHUNK_BAD("g\r\n", "invalid chunk size");
	CHUNK_BAD("00000000000000001\r\n", "chunk size too large");
	CHUNK_BAD("5;a\x01\r\n", "invalid character in chunk extension");
	CHUNK_BAD("5\r\nhelloX\r\n", "chunk data not followed by CRLF");
	CHUNK_BAD("5\r\nhello\n0\r\n", "chunk data not followed by CRLF");
	CHUNK_BAD("5\r\nhello\r\r", "chunk data not followed by CRLF");
	CHUNK_BAD("0\r\nX-A\r\n\r\n", "trailer field without colon");
	CHUNK_BAD("0\r\n: v\r\n\r\n", "empty trailer field name");
	CHUNK_BAD("0\r\nX A: v\r\n\r\n", "invalid trailer field name");
	CHUNK_BAD("0\r\nX: a\r\n b\r\n\r\n", "obs-fold in trailer");
	CHUNK_BAD("0\r\nX: a\x7f\r\n\r\n", "invalid character in trailer");
	CHUNK_BAD("0\r\nX: a\nY: b\r\n\r\n", "bare LF in trailer");
	CHUNK_BAD("0\r\n\n", "bare LF in trailer");
	CHUNK_BAD("0\r\nX: a\rb\r\n\r\n", "bare CR in trailer");
	CHUNK_BAD("0\r\n\r\r", "bare CR in trailer");
}

Test(http_chunk, caps)
{
	struct chunk_state cs;
	char *ext, *s, *pad, *tr, *many, *p;
	size_t i;

	/* 16 hex digits is the most a size may have. */
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, "ffffffffffffffff\r\nab", 20), 20);
	cr_assert_eq(cs.st, CHUNK_DATA);
	cr_assert_eq(cs.left, UINT64_MAX - 2);

	/* The size line, extensions included, is capped. */
	ext = rep('e', HTTP_CHUNK_LINE_MAX - 2);
	s = cat3("1;", ext, "\r\nx\r\n0\r\n\r\n");
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, s, strlen(s)), (ssize_t)strlen(s));
	cr_assert_eq(cs.st, CHUNK_DONE);
	free(s);
	s = cat3("1;e", ext, "\r\nx\r\n0\r\n\r\n");
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, s, strlen(s)), -1);
	cr_assert_str_eq(cs.why, "chunk-size line too long");
	/* Refused before the CRLF arrives. */
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, s, HTTP_CHUNK_LINE_MAX), HTTP_CHUNK_LINE_MAX);
	cr_assert_eq(chunk_feed(&cs, s + HTTP_CHUNK_LINE_MAX, 1), -1);
	free(s);
	free(ext);

	/* Trailer lines: HTTP_LINE_MAX each. */
	pad = rep('v', HTTP_LINE_MAX - 3);
	tr = cat3("0\r\nX: ", pad, "\r\n\r\n");
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, tr, strlen(tr)), (ssize_t)strlen(tr));
	cr_assert_eq(cs.st, CHUNK_DONE);
	free(tr);
	free(pad);
	pad = rep('v', HTTP_LINE_MAX - 2);
	tr = cat3("0\r\nX: ", pad, "\r\n\r\n");
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, tr, strlen(tr)), -1);
	cr_assert_str_eq(cs.why, "trailer line too long");
	free(tr);
	free(pad);

	/* At most HTTP_HEADERS_MAX trailer fields. */
	many = malloc(16 + (HTTP_HEADERS_MAX + 1) * 8);
	cr_assert_not_null(many);
	p = many + sprintf(many, "0\r\n");
	for (i = 0; i < HTTP_HEADERS_MAX; i++)
		p += sprintf(p, "T%03zu:\r\n", i);
	strcpy(p, "\r\n");
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, many, strlen(many)),
	    (ssize_t)strlen(many));
	cr_assert_eq(cs.st, CHUNK_DONE);
	strcpy(p, "T:\r\n\r\n");
	chunk_init(&cs);
	cr_assert_eq(chunk_feed(&cs, many, strlen(many)), -1);
	cr_assert_str_eq(cs.why, "too many trailer fields");
	free(many);
}
