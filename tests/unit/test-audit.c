/* The gate log audit: real aisb-gate records in, the per-destination
 * counts, the refusals and the --allow line for each out; garbage lines
 * counted and described, never fatal. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

/*
 * Records written by aisb-gate (this tree, with tests/integration/gate's
 * world: a fake DNS, an HTTP upstream and an echo server on 127.0.0.2),
 * one per line as in gate.log.
 */
static const char *const real_log[] = {
	"{\"ts\":\"2026-11-29T11:05:51.891Z\",\"id\":\"2.1\",\"client\":\"127.0.0.1:48218\",\"method\":\"GET\",\"host\":\"test.example\",\"port\":37995,\"sni\":null,\"decision\":\"allow\",\"reason\":\"allowlisted\",\"rule\":\"test.example:37995\",\"addr\":\"127.0.0.2:37995\",\"refused_addrs\":[],\"status\":200,\"bytes_up\":105,\"bytes_down\":382,\"duration_ms\":1,\"dns_ms\":0,\"connect_ms\":0}",
	"{\"ts\":\"2026-11-29T11:05:51.900Z\",\"id\":\"3.1\",\"client\":\"127.0.0.1:48234\",\"method\":\"POST\",\"host\":\"test.example\",\"port\":37995,\"sni\":null,\"decision\":\"allow\",\"reason\":\"allowlisted\",\"rule\":\"test.example:37995\",\"addr\":\"127.0.0.2:37995\",\"refused_addrs\":[],\"status\":200,\"bytes_up\":179,\"bytes_down\":463,\"duration_ms\":1,\"dns_ms\":0,\"connect_ms\":0}",
	"{\"ts\":\"2026-11-29T11:05:51.907Z\",\"id\":\"4.1\",\"client\":\"127.0.0.1:48250\",\"method\":\"GET\",\"host\":\"evil.example\",\"port\":80,\"sni\":null,\"decision\":\"deny\",\"reason\":\"not allowlisted\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.914Z\",\"id\":\"5.1\",\"client\":\"127.0.0.1:48266\",\"method\":\"CONNECT\",\"host\":\"evil.example\",\"port\":443,\"sni\":null,\"decision\":\"deny\",\"reason\":\"not allowlisted\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.921Z\",\"id\":\"6.1\",\"client\":\"127.0.0.1:48272\",\"method\":\"CONNECT\",\"host\":\"api.example.com\",\"port\":8443,\"sni\":null,\"decision\":\"deny\",\"reason\":\"not allowlisted\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.928Z\",\"id\":\"7.1\",\"client\":\"127.0.0.1:48286\",\"method\":\"GET\",\"host\":\"127.0.0.1\",\"port\":9,\"sni\":null,\"decision\":\"deny\",\"reason\":\"IP literal not allowlisted\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.934Z\",\"id\":\"8.1\",\"client\":\"127.0.0.1:48300\",\"method\":\"GET\",\"host\":\"::1\",\"port\":9,\"sni\":null,\"decision\":\"deny\",\"reason\":\"IP literal not allowlisted\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.940Z\",\"id\":\"9.1\",\"client\":\"127.0.0.1:48304\",\"method\":\"GET\",\"host\":\"private.example\",\"port\":80,\"sni\":null,\"decision\":\"deny\",\"reason\":\"all resolved addresses refused\",\"rule\":\"private.example\",\"addr\":null,\"refused_addrs\":[\"10.1.2.3 (private)\",\"192.168.0.9 (private)\"],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":0,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.947Z\",\"id\":\"10.1\",\"client\":\"127.0.0.1:48316\",\"method\":\"GET\",\"host\":\"meta.example\",\"port\":8080,\"sni\":null,\"decision\":\"deny\",\"reason\":\"all resolved addresses refused\",\"rule\":\"meta.example:8080\",\"addr\":null,\"refused_addrs\":[\"169.254.169.254 (link-local)\"],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":0,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.954Z\",\"id\":\"11.1\",\"client\":\"127.0.0.1:48328\",\"method\":\"GET\",\"host\":\"127.0.0.1\",\"port\":57391,\"sni\":null,\"decision\":\"deny\",\"reason\":\"the gate's own address\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":403,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	"{\"ts\":\"2026-11-29T11:05:51.959Z\",\"id\":\"12.1\",\"client\":\"127.0.0.1:48332\",\"method\":\"CONNECT\",\"host\":\"test.example\",\"port\":40177,\"sni\":null,\"decision\":\"deny\",\"reason\":\"not a TLS handshake\",\"rule\":\"test.example:40177\",\"addr\":\"127.0.0.2:40177\",\"refused_addrs\":[],\"status\":200,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":1,\"dns_ms\":0,\"connect_ms\":0}",
	"{\"ts\":\"2026-11-29T11:05:52.460Z\",\"id\":\"13.1\",\"client\":\"127.0.0.1:48334\",\"method\":null,\"host\":null,\"port\":null,\"sni\":null,\"decision\":\"deny\",\"reason\":\"invalid method\",\"rule\":null,\"addr\":null,\"refused_addrs\":[],\"status\":400,\"bytes_up\":0,\"bytes_down\":0,\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}",
	NULL,
};

/* A record with every key; fields substituted in with printf. */
#define REC(ts, method, host, port, decision, reason, refused, up, down) \
	"{\"ts\":\"" ts "\",\"id\":\"1.1\",\"client\":\"127.0.0.1:1\"," \
	"\"method\":" method ",\"host\":" host ",\"port\":" port \
	",\"sni\":null,\"decision\":\"" decision "\",\"reason\":\"" reason \
	"\",\"rule\":null,\"addr\":null,\"refused_addrs\":" refused \
	",\"status\":403,\"bytes_up\":" up ",\"bytes_down\":" down \
	",\"duration_ms\":0,\"dns_ms\":null,\"connect_ms\":null}"

static void
feed_all(struct audit *a, const char *const *lines)
{
	struct sbuf b;

	sbuf_init(&b);
	for (; *lines != NULL; lines++) {
		cr_assert_eq(sbuf_adds(&b, *lines), 0);
		cr_assert_eq(sbuf_adds(&b, "\n"), 0);
	}
	cr_assert_eq(audit_feed(a, b.p, b.len, NULL, NULL), 0);
	cr_assert_eq(audit_finish(a, NULL, NULL), 0);
	sbuf_free(&b);
}

static const struct audit_dest *
find(const struct audit *a, const char *host, int port)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (a->v[i].port != port)
			continue;
		if (host == NULL ? a->v[i].host == NULL :
		    (a->v[i].host != NULL && strcmp(a->v[i].host, host) == 0))
			return &a->v[i];
	}
	return NULL;
}

/* The suggestions for one destination as "e1|e2" and its note bits. */
static int
suggest(const struct audit *a, const char *host, int port, char *buf,
    size_t len)
{
	const struct audit_dest *d = find(a, host, port);
	struct argv e;
	size_t i;
	int notes;

	cr_assert_not_null(d, "no destination %s:%d", host, port);
	argv_init(&e);
	notes = audit_suggest(d, &e);
	cr_assert_geq(notes, 0);
	buf[0] = '\0';
	for (i = 0; i < e.n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
		    i ? "|" : "", e.v[i]);
	argv_free(&e);
	return notes;
}

Test(audit, real_log_counts)
{
	struct audit a;
	const struct audit_dest *d;

	audit_init(&a);
	feed_all(&a, real_log);
	cr_assert_eq(a.records, 12);
	cr_assert_eq(a.allowed, 2);
	cr_assert_eq(a.denied, 10);
	cr_assert_eq(a.skipped, 0);
	cr_assert_eq(a.lineno, 12);
	cr_assert_eq(a.n, 11);

	d = find(&a, "test.example", 37995);
	cr_assert_not_null(d);
	cr_assert_eq(d->allowed, 2);
	cr_assert_eq(d->denied, 0);
	cr_assert_eq(d->bytes_up, 105 + 179);
	cr_assert_eq(d->bytes_down, 382 + 463);
	cr_assert_str_eq(d->first, "2026-11-29T11:05:51.891Z");
	cr_assert_str_eq(d->last, "2026-11-29T11:05:51.900Z");
	cr_assert_eq(d->nreasons, 0);

	d = find(&a, "private.example", 80);
	cr_assert_not_null(d);
	cr_assert_eq(d->denied, 1);
	cr_assert_eq(d->nreasons, 1);
	cr_assert_str_eq(d->reasons[0].text, "all resolved addresses refused");
	cr_assert_eq(d->nrefused, 2);
	cr_assert_str_eq(d->refused[0].text, "10.1.2.3 (private)");
	cr_assert_str_eq(d->refused[1].text, "192.168.0.9 (private)");

	d = find(&a, "::1", 9);
	cr_assert_not_null(d);
	cr_assert_eq(d->ip, 6);
	d = find(&a, "127.0.0.1", 9);
	cr_assert_eq(d->ip, 4);
	d = find(&a, NULL, -1);
	cr_assert_not_null(d, "the record without host or port");
	cr_assert_str_eq(d->reasons[0].text, "invalid method");
	audit_free(&a);
}

Test(audit, suggestions_for_each_refusal)
{
	struct audit a;
	char buf[1024];
	int n;

	audit_init(&a);
	feed_all(&a, real_log);

	/* Default ports: the bare name, for forwarding and for CONNECT. */
	n = suggest(&a, "evil.example", 80, buf, sizeof(buf));
	cr_assert_str_eq(buf, "evil.example");
	cr_assert_eq(n, 0);
	n = suggest(&a, "evil.example", 443, buf, sizeof(buf));
	cr_assert_str_eq(buf, "evil.example");
	cr_assert_eq(n, 0);

	/* Another port: name:port, and the TLS note for a CONNECT. */
	n = suggest(&a, "api.example.com", 8443, buf, sizeof(buf));
	cr_assert_str_eq(buf, "api.example.com:8443");
	cr_assert_eq(n, AUDIT_NOTE_TLS);

	/* IP literals: the IP entry, bracketed for IPv6, with the warning. */
	n = suggest(&a, "127.0.0.1", 9, buf, sizeof(buf));
	cr_assert_str_eq(buf, "127.0.0.1:9");
	cr_assert_eq(n, AUDIT_NOTE_IP);
	n = suggest(&a, "::1", 9, buf, sizeof(buf));
	cr_assert_str_eq(buf, "[::1]:9");
	cr_assert_eq(n, AUDIT_NOTE_IP);

	/* Refused addresses: an IP entry for each, with the warning. */
	n = suggest(&a, "private.example", 80, buf, sizeof(buf));
	cr_assert_str_eq(buf, "10.1.2.3:80|192.168.0.9:80");
	cr_assert_eq(n, AUDIT_NOTE_IP);
	n = suggest(&a, "meta.example", 8080, buf, sizeof(buf));
	cr_assert_str_eq(buf, "169.254.169.254:8080");
	cr_assert_eq(n, AUDIT_NOTE_IP);

	/* Nothing admits the gate's own address. */
	n = suggest(&a, "127.0.0.1", 57391, buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
	cr_assert_eq(n, AUDIT_NOTE_SELF);

	/* Plain bytes on a port the gate expected TLS on: /notls. */
	n = suggest(&a, "test.example", 40177, buf, sizeof(buf));
	cr_assert_str_eq(buf, "test.example:40177/notls");
	cr_assert_eq(n, 0);

	/* A request that named no host. */
	n = suggest(&a, NULL, -1, buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
	cr_assert_eq(n, AUDIT_NOTE_OTHER);

	/* Allowed only: nothing to suggest. */
	n = suggest(&a, "test.example", 37995, buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
	cr_assert_eq(n, 0);
	audit_free(&a);
}

Test(audit, suggestion_edges)
{
	static const char *const lines[] = {
		REC("2026-01-01T00:00:00Z", "\"CONNECT\"", "\"git.example\"",
		    "22", "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"CONNECT\"", "\"plain.example\"",
		    "80", "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"GET\"", "\"web.example\"",
		    "443", "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"GET\"", "\"web.example\"",
		    "8080", "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"CONNECT\"", "\"tls.example\"",
		    "443", "deny", "not a TLS handshake", "[]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"CONNECT\"", "\"gone.example\"",
		    "443", "deny", "allowlist reloaded: entry removed", "[]",
		    "10", "20"),
		REC("2026-01-01T00:00:00Z", "\"GET\"", "\"dns.example\"",
		    "80", "deny", "dns: timeout", "[]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"GET\"", "\"self.example\"",
		    "80", "deny", "all resolved addresses refused",
		    "[\"127.0.0.1 (gate)\",\"fd00::1 (ula)\"]", "0", "0"),
		REC("2026-01-01T00:00:00Z", "\"GET\"", "\"Not_A.Name\"",
		    "80", "deny", "not allowlisted", "[]", "0", "0"),
		NULL,
	};
	struct audit a;
	char buf[1024];
	int n;

	audit_init(&a);
	feed_all(&a, lines);
	cr_assert_eq(a.skipped, 0, "%s", a.nbad ? a.bad[0].why : "");
	n = suggest(&a, "git.example", 22, buf, sizeof(buf));
	cr_assert_str_eq(buf, "git.example:22/notls");
	cr_assert_eq(n, 0);
	n = suggest(&a, "plain.example", 80, buf, sizeof(buf));
	cr_assert_str_eq(buf, "plain.example:80/notls");
	n = suggest(&a, "web.example", 443, buf, sizeof(buf));
	cr_assert_str_eq(buf, "web.example:443", "a forwarded request to 443");
	cr_assert_eq(n, 0);
	n = suggest(&a, "web.example", 8080, buf, sizeof(buf));
	cr_assert_str_eq(buf, "web.example:8080");
	cr_assert_eq(n, 0, "forwarding needs no TLS note");
	n = suggest(&a, "tls.example", 443, buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
	cr_assert_eq(n, AUDIT_NOTE_OTHER, "443 is always TLS");
	n = suggest(&a, "gone.example", 443, buf, sizeof(buf));
	cr_assert_str_eq(buf, "gone.example");
	cr_assert_eq(find(&a, "gone.example", 443)->bytes_down, 20);
	n = suggest(&a, "dns.example", 80, buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
	cr_assert_eq(n, AUDIT_NOTE_OTHER);
	n = suggest(&a, "self.example", 80, buf, sizeof(buf));
	cr_assert_str_eq(buf, "[fd00::1]:80");
	cr_assert_eq(n, AUDIT_NOTE_IP | AUDIT_NOTE_SELF);
	n = suggest(&a, "Not_A.Name", 80, buf, sizeof(buf));
	cr_assert_str_eq(buf, "");
	cr_assert_eq(n, AUDIT_NOTE_NOHOST);
	audit_free(&a);
}

Test(audit, table_text)
{
	struct audit a;
	struct sbuf b;

	audit_init(&a);
	feed_all(&a, real_log);
	sbuf_init(&b);
	cr_assert_eq(audit_render_table(&a, &b), 0);
	cr_assert(strncmp(b.p, "DESTINATION", 11) == 0, "%s", b.p);
	cr_assert_not_null(strstr(b.p, "ALLOWED   DENIED"), "%s", b.p);
	/* The destination column is as wide as api.example.com:8443. */
	cr_assert_not_null(strstr(b.p, "\ntest.example:37995          2        0"
	    "           284           845  2026-11-29T11:05:51.891Z  "
	    "2026-11-29T11:05:51.900Z\n"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "evil.example:80 "), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "[::1]:9 "), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "    denied: all resolved addresses "
	    "refused (1)\n"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "(no host)  "), "%s", b.p);
	/* Sorted by host; the record without one comes last. */
	cr_assert(strstr(b.p, "api.example.com") < strstr(b.p, "evil.example"));
	cr_assert(strstr(b.p, "test.example:40177") < strstr(b.p, "(no host)"));
	cr_assert_not_null(strstr(b.p, "12 requests: 2 allowed, 10 denied\n"),
	    "%s", b.p);
	sbuf_free(&b);
	audit_free(&a);
}

Test(audit, denied_text)
{
	struct audit a;
	struct sbuf b;

	audit_init(&a);
	feed_all(&a, real_log);
	sbuf_init(&b);
	cr_assert_eq(audit_render_denied(&a, &b), 0);
	cr_assert_null(strstr(b.p, "test.example:37995"), "allowed only: %s",
	    b.p);
	cr_assert_not_null(strstr(b.p, "evil.example:80: 1 denied, last "
	    "2026-11-29T11:05:51.907Z: not allowlisted (1)\n"
	    "  --allow evil.example\n"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "api.example.com:8443: 1 denied"),
	    "%s", b.p);
	cr_assert_not_null(strstr(b.p, "  --allow api.example.com:8443\n"
	    "  note: the gate expects TLS"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "  --allow 127.0.0.1:9\n"
	    "  warning: an IP entry admits that address even in a range the "
	    "gate refuses"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "  --allow 10.1.2.3:80\n"
	    "  --allow 192.168.0.9:80\n  warning: "), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "127.0.0.1:57391: 1 denied, last "
	    "2026-11-29T11:05:51.954Z: the gate's own address (1)\n"
	    "  note: the gate's own address is always refused"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "  --allow test.example:40177/notls\n"),
	    "%s", b.p);
	sbuf_free(&b);
	audit_free(&a);
}

Test(audit, json_output)
{
	struct audit a;
	struct sbuf b;
	cJSON *o, *dests, *d, *s;
	int found = 0;

	audit_init(&a);
	a.source = "/x/gate.log";
	feed_all(&a, real_log);
	sbuf_init(&b);
	cr_assert_eq(audit_render_json(&a, 0, &b), 0);
	cr_assert_eq(b.p[b.len - 1], '\n');
	cr_assert_null(memchr(b.p, '\n', b.len - 1), "one line");
	o = cJSON_Parse(b.p);
	cr_assert_not_null(o, "%s", b.p);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "log")->valuestring,
	    "/x/gate.log");
	cr_assert_eq(cJSON_GetObjectItem(o, "requests")->valuedouble, 12);
	cr_assert_eq(cJSON_GetObjectItem(o, "denied")->valuedouble, 10);
	dests = cJSON_GetObjectItem(o, "destinations");
	cr_assert_eq(cJSON_GetArraySize(dests), 11);
	cJSON_ArrayForEach(d, dests) {
		if (!cJSON_IsString(cJSON_GetObjectItem(d, "host")) ||
		    strcmp(cJSON_GetObjectItem(d, "host")->valuestring,
		    "api.example.com") != 0)
			continue;
		found = 1;
		cr_assert_eq(cJSON_GetObjectItem(d, "port")->valuedouble, 8443);
		cr_assert_eq(cJSON_GetObjectItem(d, "denied")->valuedouble, 1);
		cr_assert_str_eq(cJSON_GetObjectItem(d, "last_seen")->valuestring,
		    "2026-11-29T11:05:51.921Z");
		s = cJSON_GetObjectItem(d, "suggest");
		cr_assert_eq(cJSON_GetArraySize(s), 1);
		cr_assert_str_eq(cJSON_GetArrayItem(s, 0)->valuestring,
		    "--allow api.example.com:8443");
		s = cJSON_GetObjectItem(d, "denials");
		cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(s, 0),
		    "reason")->valuestring, "not allowlisted");
		cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "notes")),
		    1);
	}
	cr_assert(found);
	cJSON_Delete(o);

	/* --denied --json: only the refused destinations. */
	sbuf_reset(&b);
	cr_assert_eq(audit_render_json(&a, 1, &b), 0);
	o = cJSON_Parse(b.p);
	cr_assert_not_null(o);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o,
	    "destinations")), 10);
	cJSON_Delete(o);
	sbuf_free(&b);
	audit_free(&a);
}

Test(audit, garbage_reported_and_skipped)
{
	static const char *const lines[] = {
		"not json at all",
		"",
		"[1,2,3]",
		"{\"ts\":\"2026-11-29T11:05:51.891Z\"}",
		"{\"ts\":\"2026-11-29T11:05:51.891Z\",\"id\":\"2.1\",\"method\"",
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "80",
		    "deny", "not allowlisted", "[]", "0", "0") " trailing",
		REC("yesterday", "\"GET\"", "\"a.example\"", "80", "deny",
		    "not allowlisted", "[]", "0", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "\"80\"",
		    "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "70000",
		    "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "80",
		    "maybe", "not allowlisted", "[]", "0", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "80",
		    "deny", "not allowlisted", "[]", "-1", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "80",
		    "deny", "not allowlisted", "[]", "0", "1.5"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "42", "80",
		    "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"a.example\"", "80",
		    "deny", "not allowlisted", "{}", "0", "0"),
		"   ",
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"ok.example\"", "80",
		    "deny", "not allowlisted", "[]", "0", "0"),
		NULL,
	};
	struct audit a;
	struct sbuf b;

	audit_init(&a);
	feed_all(&a, lines);
	cr_assert_eq(a.records, 1);
	cr_assert_eq(a.denied, 1);
	cr_assert_eq(a.n, 1);
	cr_assert_str_eq(a.v[0].host, "ok.example");
	cr_assert_eq(a.skipped, 13);
	cr_assert_eq(a.nbad, 13);
	cr_assert_eq(a.bad[0].line, 1);
	cr_assert_str_eq(a.bad[0].why, "not JSON");
	cr_assert_eq(a.bad[1].line, 3, "the blank line is not reported");
	cr_assert_str_eq(a.bad[1].why, "not a JSON object");
	cr_assert_str_eq(a.bad[2].why, "\"decision\" missing or not allow/deny");
	cr_assert_str_eq(a.bad[3].why, "not JSON");
	cr_assert_str_eq(a.bad[4].why, "text after the JSON object");
	cr_assert_str_eq(a.bad[5].why, "\"ts\" missing or not a timestamp");
	cr_assert_str_eq(a.bad[6].why, "\"port\" missing or not a port");
	cr_assert_str_eq(a.bad[7].why, "\"port\" missing or not a port");
	cr_assert_str_eq(a.bad[8].why, "\"decision\" missing or not allow/deny");
	cr_assert_str_eq(a.bad[9].why, "\"bytes_up\" missing or not a count");
	cr_assert_str_eq(a.bad[10].why,
	    "\"bytes_down\" missing or not a count");
	cr_assert_str_eq(a.bad[11].why, "\"host\" missing or not a string");
	cr_assert_str_eq(a.bad[12].why,
	    "\"refused_addrs\" missing or not a list");
	cr_assert_eq(a.bad[12].line, 14);

	sbuf_init(&b);
	cr_assert_eq(audit_render_table(&a, &b), 0);
	cr_assert_not_null(strstr(b.p, "1 request: 0 allowed, 1 denied; 13 "
	    "lines skipped\n  skipped line 1: not JSON\n"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "  skipped line 14: \"refused_addrs\" "
	    "missing or not a list\n"), "%s", b.p);
	sbuf_free(&b);
	audit_free(&a);
}

Test(audit, missing_each_key)
{
	static const char *const keys[] = { "ts", "decision", "reason",
	    "host", "port", "method", "status", "bytes_up", "bytes_down",
	    "refused_addrs", NULL };
	const char *full = real_log[2];
	char line[2048], pat[64], *p, *q;
	struct audit a;
	size_t i;

	for (i = 0; keys[i] != NULL; i++) {
		/* Rename the key, so the record lacks it. */
		snprintf(line, sizeof(line), "%s", full);
		snprintf(pat, sizeof(pat), "\"%s\":", keys[i]);
		p = strstr(line, pat);
		cr_assert_not_null(p, "%s", keys[i]);
		q = p + 1;
		*q = 'X';
		audit_init(&a);
		cr_assert_eq(audit_line(&a, line, strlen(line), NULL),
		    AUDIT_SKIPPED, "without %s", keys[i]);
		cr_assert_eq(a.records, 0);
		cr_assert_not_null(strstr(a.bad[0].why, keys[i]), "%s: %s",
		    keys[i], a.bad[0].why);
		audit_free(&a);
	}
	/* Keys the audit does not use may be missing. */
	snprintf(line, sizeof(line), "%s", full);
	p = strstr(line, "\"sni\":");
	p[1] = 'X';
	audit_init(&a);
	cr_assert_eq(audit_line(&a, line, strlen(line), NULL), AUDIT_RECORD);
	audit_free(&a);
}

Test(audit, escaped_and_invalid_bytes)
{
	static const char *const lines[] = {
		/* As the gate writes them: control bytes as \u00XX, invalid
		 * UTF-8 as the five characters \\xNN. */
		REC("2026-11-29T11:05:51Z", "\"G\\u001bET\"",
		    "\"bad\\u001b[31mhost\\\\xff\"", "80", "deny",
		    "not allowlisted", "[]", "0", "0"),
		/* Raw bytes another writer might leave. */
		REC("2026-11-29T11:05:51Z", "\"GET\"", "\"raw\xff\xfe.example\"",
		    "80", "deny", "not allowlisted", "[]", "0", "0"),
		REC("2026-11-29T11:05:51Z", "\"GET\"",
		    "\"b\xc3\xbc" "cher.example\"", "80", "deny",
		    "not allowlisted", "[]", "0", "0"),
		NULL,
	};
	struct audit a;
	struct sbuf b;
	char buf[256];
	cJSON *o;

	audit_init(&a);
	feed_all(&a, lines);
	cr_assert_eq(a.records, 3, "%s", a.nbad ? a.bad[0].why : "");
	cr_assert_str_eq(a.v[0].host, "bad\x1b[31mhost\\xff");
	sbuf_init(&b);
	cr_assert_eq(audit_render_table(&a, &b), 0);
	cr_assert_null(strchr(b.p, '\x1b'), "no escape reaches a terminal");
	cr_assert_null(strchr(b.p, '\xff'));
	cr_assert_not_null(strstr(b.p, "bad\\x1b[31mhost\\xff:80"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "raw\\xff\\xfe.example:80"), "%s", b.p);
	cr_assert_not_null(strstr(b.p, "b\\xc3\\xbccher.example:80"), "%s",
	    b.p);
	/* No entry is suggested for what is no valid name. */
	cr_assert_eq(suggest(&a, "raw\xff\xfe.example", 80, buf, sizeof(buf)),
	    AUDIT_NOTE_NOHOST);
	cr_assert_str_eq(buf, "");
	sbuf_reset(&b);
	cr_assert_eq(audit_render_json(&a, 0, &b), 0);
	o = cJSON_Parse(b.p);
	cr_assert_not_null(o, "%s", b.p);
	cr_assert_not_null(strstr(b.p, "\"bad\\u001b[31mhost\\\\xff\""), "%s",
	    b.p);
	cr_assert_not_null(strstr(b.p, "\"raw\\\\xff\\\\xfe.example\""), "%s",
	    b.p);
	cJSON_Delete(o);
	sbuf_free(&b);
	audit_free(&a);
}

Test(audit, nul_and_overlong_lines)
{
	struct audit a;
	char *big;
	const char *ok = real_log[2];
	size_t biglen = AUDIT_LINE_MAX + 10;

	audit_init(&a);
	cr_assert_eq(audit_feed(&a, "{\"a\":\0}\n", 8, NULL, NULL), 0);
	cr_assert_eq(a.skipped, 1);
	cr_assert_str_eq(a.bad[0].why, "NUL byte in the line");

	big = malloc(biglen + 1);
	cr_assert_not_null(big);
	memset(big, 'x', biglen);
	big[biglen] = '\n';
	/* In pieces, so the overlong line is seen growing. */
	cr_assert_eq(audit_feed(&a, big, 1000, NULL, NULL), 0);
	cr_assert_eq(audit_feed(&a, big + 1000, biglen + 1 - 1000, NULL, NULL),
	    0);
	cr_assert_eq(a.skipped, 2);
	cr_assert_eq(a.bad[1].line, 2);
	cr_assert_str_eq(a.bad[1].why, "line longer than 65536 bytes");
	cr_assert_eq(a.partial.len, 0, "nothing of it was kept");
	cr_assert_eq(audit_feed(&a, ok, strlen(ok), NULL, NULL), 0);
	cr_assert_eq(audit_feed(&a, "\n", 1, NULL, NULL), 0);
	cr_assert_eq(a.records, 1);
	cr_assert_eq(a.lineno, 3);
	free(big);
	audit_free(&a);
}

static int events;

static void
count_event(const struct audit *a, const struct audit_event *ev, void *arg)
{
	events++;
	cr_assert_lt(ev->dest, a->n);
	cr_assert_eq(arg, (void *)&events);
}

Test(audit, split_anywhere)
{
	struct sbuf all;
	struct audit whole, a;
	size_t cut, i;
	int k;

	sbuf_init(&all);
	for (k = 0; real_log[k] != NULL; k++) {
		sbuf_adds(&all, real_log[k]);
		sbuf_adds(&all, k % 2 ? "\r\n" : "\n");
	}
	audit_init(&whole);
	cr_assert_eq(audit_feed(&whole, all.p, all.len, NULL, NULL), 0);
	cr_assert_eq(whole.records, 12);
	cr_assert_eq(whole.skipped, 0, "CRLF line ends are fine");
	for (cut = 1; cut < all.len; cut += 97) {
		audit_init(&a);
		events = 0;
		cr_assert_eq(audit_feed(&a, all.p, cut, count_event, &events),
		    0);
		cr_assert_eq(audit_feed(&a, all.p + cut, all.len - cut,
		    count_event, &events), 0);
		cr_assert_eq(a.records, 12, "cut at %zu", cut);
		cr_assert_eq(events, 12);
		cr_assert_eq(a.n, whole.n);
		for (i = 0; i < a.n; i++) {
			cr_assert_eq(a.v[i].bytes_up, whole.v[i].bytes_up);
			cr_assert_eq(a.v[i].denied, whole.v[i].denied);
		}
		audit_free(&a);
	}
	audit_free(&whole);
	sbuf_free(&all);
}

Test(audit, last_line_without_newline)
{
	struct audit a;
	const char *l = real_log[0];

	audit_init(&a);
	events = 0;
	cr_assert_eq(audit_feed(&a, l, strlen(l), count_event, &events), 0);
	cr_assert_eq(a.records, 0, "a line is read when it is complete");
	cr_assert_eq(audit_finish(&a, count_event, &events), 0);
	cr_assert_eq(a.records, 1);
	cr_assert_eq(events, 1);
	/* A half-written last line is reported, not counted. */
	cr_assert_eq(audit_feed(&a, l, 40, NULL, NULL), 0);
	cr_assert_eq(audit_finish(&a, NULL, NULL), 0);
	cr_assert_eq(a.records, 1);
	cr_assert_eq(a.skipped, 1);
	cr_assert_str_eq(a.bad[0].why, "not JSON");
	audit_free(&a);
}

Test(audit, since_leaves_out_earlier)
{
	struct audit a;

	audit_init(&a);
	cr_assert_eq(audit_parse_time("2026-11-29T11:05:51.930Z", &a.since_ms),
	    0);
	feed_all(&a, real_log);
	cr_assert_eq(a.records, 6);
	cr_assert_eq(a.left_out, 6);
	cr_assert_null(find(&a, "test.example", 37995));
	cr_assert_not_null(find(&a, "::1", 9));
	audit_free(&a);
}

Test(audit, first_and_last_by_time_not_order)
{
	static const char *const lines[] = {
		REC("2026-01-02T00:00:00Z", "\"GET\"", "\"t.example\"", "80",
		    "allow", "allowlisted", "[]", "1", "2"),
		REC("2026-01-01T00:00:00+01:00", "\"GET\"", "\"t.example\"",
		    "80", "deny", "not allowlisted", "[]", "3", "4"),
		REC("2026-01-03T00:00:00.5Z", "\"GET\"", "\"t.example\"", "80",
		    "allow", "allowlisted", "[]", "5", "6"),
		NULL,
	};
	struct audit a;

	audit_init(&a);
	feed_all(&a, lines);
	cr_assert_eq(a.n, 1);
	cr_assert_str_eq(a.v[0].first, "2026-01-01T00:00:00+01:00");
	cr_assert_str_eq(a.v[0].last, "2026-01-03T00:00:00.5Z");
	cr_assert_eq(a.v[0].allowed, 2);
	cr_assert_eq(a.v[0].denied, 1);
	cr_assert_eq(a.v[0].bytes_up, 9);
	cr_assert_eq(a.v[0].bytes_down, 12);
	audit_free(&a);
}

Test(audit, parse_time)
{
	int64_t ms;

	cr_assert_eq(audit_parse_time("1970-01-01T00:00:00Z", &ms), 0);
	cr_assert_eq(ms, 0);
	cr_assert_eq(audit_parse_time("2026-11-29T11:05:51.891Z", &ms), 0);
	cr_assert_eq(ms, INT64_C(1795950351891));
	cr_assert_eq(audit_parse_time("2026-11-29T12:05:51.891+01:00", &ms),
	    0);
	cr_assert_eq(ms, INT64_C(1795950351891));
	cr_assert_eq(audit_parse_time("2026-11-29 11:05:51.8z", &ms), 0);
	cr_assert_eq(ms, INT64_C(1795950351800));
	cr_assert_eq(audit_parse_time("2024-02-29T00:00:00-00:30", &ms), 0);
	cr_assert_eq(ms, INT64_C(1709166600000));
	cr_assert_eq(audit_parse_time("1969-12-31T23:59:59Z", &ms), 0);
	cr_assert_eq(ms, -1000);

	cr_assert_eq(audit_parse_time("2023-02-29T00:00:00Z", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-13-01T00:00:00Z", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-04-31T00:00:00Z", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-01-01T24:00:00Z", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-01-01T00:00:00", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-01-01T00:00:00ZZ", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-01-01T00:00:00.Z", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-01-01T00:00:00+0100", &ms), -1);
	cr_assert_eq(audit_parse_time("2026-1-01T00:00:00Z", &ms), -1);
	cr_assert_eq(audit_parse_time("", &ms), -1);
}

Test(audit, parse_since)
{
	struct aisb_error err;
	int64_t now = INT64_C(1795950351891), ms;

	cr_assert_eq(audit_parse_since("10m", now, &ms, &err), 0);
	cr_assert_eq(ms, now - 600000);
	cr_assert_eq(audit_parse_since("2h", now, &ms, &err), 0);
	cr_assert_eq(ms, now - 7200000);
	cr_assert_eq(audit_parse_since("1d", now, &ms, &err), 0);
	cr_assert_eq(ms, now - 86400000);
	cr_assert_eq(audit_parse_since("1h30m", now, &ms, &err), 0);
	cr_assert_eq(ms, now - 5400000);
	cr_assert_eq(audit_parse_since("30s", now, &ms, &err), 0);
	cr_assert_eq(ms, now - 30000);
	cr_assert_eq(audit_parse_since("1w", now, &ms, &err), 0);
	cr_assert_eq(ms, now - INT64_C(604800000));
	cr_assert_eq(audit_parse_since("2026-11-29T11:00:00Z", now, &ms, &err),
	    0);
	cr_assert_eq(ms, INT64_C(1795950000000));

	cr_assert_eq(audit_parse_since("10", now, &ms, &err), -1);
	cr_assert_str_eq(err.msg, "--since 10: expected an RFC 3339 time "
	    "(2024-05-01T10:00:00Z) or a duration (30s, 10m, 2h, 1d, 1w)");
	cr_assert_eq(audit_parse_since("m", now, &ms, &err), -1);
	cr_assert_eq(audit_parse_since("10x", now, &ms, &err), -1);
	cr_assert_eq(audit_parse_since("", now, &ms, &err), -1);
	cr_assert_eq(audit_parse_since("-5m", now, &ms, &err), -1);
	cr_assert_eq(audit_parse_since("1234567890s", now, &ms, &err), -1);
	cr_assert_eq(audit_parse_since("40000d", now, &ms, &err), -1);
	cr_assert_str_eq(err.msg, "--since 40000d: more than 100 years");
}

Test(audit, destinations_capped)
{
	struct audit a;
	char line[1024], host[64];
	int i;

	audit_init(&a);
	for (i = 0; i < AUDIT_DEST_MAX + 5; i++) {
		snprintf(host, sizeof(host), "h%d.example", i);
		snprintf(line, sizeof(line), REC("2026-01-01T00:00:00Z",
		    "\"GET\"", "\"%s\"", "80", "allow", "allowlisted", "[]",
		    "1", "1"), host);
		cr_assert_eq(audit_line(&a, line, strlen(line), NULL),
		    AUDIT_RECORD);
	}
	/* A known destination is still counted past the cap. */
	snprintf(line, sizeof(line), REC("2026-01-01T00:00:00Z", "\"GET\"",
	    "\"h7.example\"", "80", "deny", "not allowlisted", "[]", "1",
	    "1"));
	cr_assert_eq(audit_line(&a, line, strlen(line), NULL), AUDIT_RECORD);
	cr_assert_eq(a.n, AUDIT_DEST_MAX);
	cr_assert_eq(a.overflow, 5);
	cr_assert_eq(a.records, AUDIT_DEST_MAX + 6);
	cr_assert_eq(find(&a, "h7.example", 80)->denied, 1);
	audit_free(&a);
}

Test(audit, reasons_capped)
{
	struct audit a;
	char line[1024], reason[64];
	int i;

	audit_init(&a);
	for (i = 0; i < AUDIT_REASON_MAX + 4; i++) {
		snprintf(reason, sizeof(reason), "dns: reason %d", i);
		snprintf(line, sizeof(line), REC("2026-01-01T00:00:00Z",
		    "\"GET\"", "\"r.example\"", "80", "deny", "%s", "[]", "0",
		    "0"), reason);
		cr_assert_eq(audit_line(&a, line, strlen(line), NULL),
		    AUDIT_RECORD);
	}
	cr_assert_eq(a.v[0].nreasons, AUDIT_REASON_MAX);
	cr_assert_eq(a.v[0].other_reasons, 4);
	cr_assert_eq(a.v[0].denied, AUDIT_REASON_MAX + 4);
	audit_free(&a);
}

Test(audit, follow_event_lines)
{
	struct audit a;
	struct audit_event ev;
	struct sbuf b;
	cJSON *o;

	audit_init(&a);
	sbuf_init(&b);
	cr_assert_eq(audit_line(&a, real_log[4], strlen(real_log[4]), &ev),
	    AUDIT_RECORD);
	cr_assert_eq(audit_render_event(&a, &ev, 0, &b), 0);
	cr_assert_str_eq(b.p, "2026-11-29T11:05:51.921Z  deny   "
	    "api.example.com:8443  CONNECT 403  not allowlisted  up 0 down 0\n"
	    "  --allow api.example.com:8443\n"
	    "  note: the gate expects TLS on a port an entry names; add /notls "
	    "to the entry if this port carries another protocol\n");
	sbuf_reset(&b);
	cr_assert_eq(audit_render_event(&a, &ev, 1, &b), 0);
	o = cJSON_Parse(b.p);
	cr_assert_not_null(o, "%s", b.p);
	cr_assert_str_eq(cJSON_GetObjectItem(o, "decision")->valuestring,
	    "deny");
	cr_assert_str_eq(cJSON_GetObjectItem(o, "host")->valuestring,
	    "api.example.com");
	cr_assert_eq(cJSON_GetObjectItem(o, "port")->valuedouble, 8443);
	cJSON_Delete(o);
	sbuf_reset(&b);
	cr_assert_eq(audit_line(&a, real_log[0], strlen(real_log[0]), &ev),
	    AUDIT_RECORD);
	cr_assert_eq(audit_render_event(&a, &ev, 0, &b), 0);
	cr_assert_str_eq(b.p, "2026-11-29T11:05:51.891Z  allow  "
	    "test.example:37995  GET 200  allowlisted  up 105 down 382\n");
	sbuf_free(&b);
	audit_free(&a);
}

Test(audit, empty_log)
{
	struct audit a;
	struct sbuf b;

	audit_init(&a);
	cr_assert_eq(audit_finish(&a, NULL, NULL), 0);
	sbuf_init(&b);
	cr_assert_eq(audit_render_table(&a, &b), 0);
	cr_assert_str_eq(b.p, "0 requests: 0 allowed, 0 denied\n");
	sbuf_reset(&b);
	cr_assert_eq(audit_render_denied(&a, &b), 0);
	cr_assert_str_eq(b.p, "no refusals\n0 requests: 0 allowed, 0 denied\n");
	sbuf_free(&b);
	audit_free(&a);
}
