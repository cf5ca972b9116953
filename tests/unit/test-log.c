/*
 * The gate's request log record: every key, in order, nulls, escaping.
 * docs/gate-log.md is the schema these strings pin down.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate.h"

/* 2026-11-29T13:45:06.789Z */
static const struct timespec wall = { 1795959906, 789000000 };

/* A record whose duration is about d ms; start is taken from now. */
static void
rec_init(struct log_rec *r, long d)
{
	memset(r, 0, sizeof(*r));
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	r->start.tv_sec -= d / 1000;
}

/* Render r and split it at "duration_ms": what comes before and after. */
static void
render(const struct log_rec *r, struct sbuf *b, char *head, size_t hlen,
    const char **tail)
{
	const char *d;

	sbuf_init(b);
	cr_assert_eq(log_format(r, &wall, b), 0);
	cr_assert_eq(b->len, strlen(b->p), "a NUL inside the record");
	cr_assert_eq(b->p[b->len - 1], '\n');
	cr_assert_null(memchr(b->p, '\n', b->len - 1), "two lines: %s", b->p);
	d = strstr(b->p, ",\"duration_ms\":");
	cr_assert_not_null(d, "%s", b->p);
	cr_assert_lt((size_t)(d - b->p), hlen);
	memcpy(head, b->p, (size_t)(d - b->p));
	head[d - b->p] = '\0';
	d += strlen(",\"duration_ms\":");
	while (*d >= '0' && *d <= '9')
		d++;
	*tail = d;
}

Test(log, allowed_tunnel_every_key)
{
	struct log_rec r;
	struct sbuf refused, b;
	char head[1024];
	const char *tail;

	rec_init(&r, 2000);
	sbuf_init(&refused);
	snprintf(r.id, sizeof(r.id), "12.3");
	snprintf(r.client, sizeof(r.client), "127.0.0.1:5678");
	r.method = "CONNECT";
	r.host = "registry.npmjs.org";
	r.hostlen = strlen(r.host);
	r.port = 443;
	r.sni = "registry.npmjs.org";
	r.allow = 1;
	r.reason = "allowlisted";
	r.rule = "registry.npmjs.org";
	snprintf(r.addr, sizeof(r.addr), "[2606:4700::1]:443");
	json_add_cstr(&refused, "10.0.0.1 (private)");
	sbuf_add(&refused, ",", 1);
	json_add_cstr(&refused, "127.0.0.1 (loopback)");
	r.refused = &refused;
	r.status = 200;
	r.bytes_up = 1234;
	r.bytes_down = 18446744073709551615ULL >> 1;
	r.dns_ms = 0;
	r.connect_ms = 17;
	render(&r, &b, head, sizeof(head), &tail);
	cr_assert_str_eq(head, "{\"ts\":\"2026-11-29T13:45:06.789Z\","
	    "\"id\":\"12.3\",\"client\":\"127.0.0.1:5678\","
	    "\"method\":\"CONNECT\",\"host\":\"registry.npmjs.org\","
	    "\"port\":443,\"sni\":\"registry.npmjs.org\","
	    "\"decision\":\"allow\",\"reason\":\"allowlisted\","
	    "\"rule\":\"registry.npmjs.org\",\"addr\":\"[2606:4700::1]:443\","
	    "\"refused_addrs\":[\"10.0.0.1 (private)\","
	    "\"127.0.0.1 (loopback)\"],\"status\":200,\"bytes_up\":1234,"
	    "\"bytes_down\":9223372036854775807");
	cr_assert_str_eq(tail, ",\"dns_ms\":0,\"connect_ms\":17}\n");
	/* The duration is the time since start, in ms. */
	cr_assert(strstr(b.p, "\"duration_ms\":2000,") != NULL ||
	    strstr(b.p, "\"duration_ms\":2001,") != NULL, "%s", b.p);
	sbuf_free(&b);
	sbuf_free(&refused);
}

Test(log, refusal_with_nulls)
{
	struct log_rec r;
	struct sbuf b;
	char head[1024];
	const char *tail;

	rec_init(&r, 0);
	snprintf(r.id, sizeof(r.id), "1.1");
	snprintf(r.client, sizeof(r.client), "[::1]:40000");
	r.port = -1;
	r.allow = 0;
	r.reason = "request head timeout";
	r.status = -1;
	r.dns_ms = -1;
	r.connect_ms = -1;
	render(&r, &b, head, sizeof(head), &tail);
	cr_assert_str_eq(head, "{\"ts\":\"2026-11-29T13:45:06.789Z\","
	    "\"id\":\"1.1\",\"client\":\"[::1]:40000\",\"method\":null,"
	    "\"host\":null,\"port\":null,\"sni\":null,\"decision\":\"deny\","
	    "\"reason\":\"request head timeout\",\"rule\":null,\"addr\":null,"
	    "\"refused_addrs\":[],\"status\":null,\"bytes_up\":0,"
	    "\"bytes_down\":0");
	cr_assert_str_eq(tail, ",\"dns_ms\":null,\"connect_ms\":null}\n");
	sbuf_free(&b);
}

Test(log, hostile_host_bytes_stay_one_json_line)
{
	struct log_rec r;
	struct sbuf b;
	char head[1024];
	const char *tail;
	static const char host[] = "a\"b\\c\n\x01\xff" "d";

	rec_init(&r, 0);
	snprintf(r.id, sizeof(r.id), "7.1");
	snprintf(r.client, sizeof(r.client), "127.0.0.1:1");
	r.method = "GET";
	r.host = host;
	r.hostlen = sizeof(host) - 1;
	r.port = 80;
	r.reason = "not allowlisted";
	r.status = 403;
	r.dns_ms = r.connect_ms = -1;
	render(&r, &b, head, sizeof(head), &tail);
	cr_assert(strstr(head, "\"host\":\"a\\\"b\\\\c\\u000a\\u0001\\\\xffd\","
	    "\"port\":80,") != NULL, "%s", head);
	cr_assert(strstr(head, "\"status\":403,") != NULL, "%s", head);
	sbuf_free(&b);
}
