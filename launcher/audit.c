/*
 * The per-destination audit of a gate's request log (docs/gate-log.md):
 * JSON lines in, counts per host:port out, and for each refusal the
 * allowlist entry that would admit it. Pure: bytes in, text out; a line
 * that is not a gate record is counted and described, never fatal.
 */
#include <sys/socket.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define AUDIT_INDEX_SIZE	32768	/* slots; a power of two, > 3 * max */
#define AUDIT_STR_MAX		1024	/* any string a record holds */
#define AUDIT_MAX_INT		9007199254740992.0	/* 2^53, exact */

/* Why a request was refused, as far as an allowlist entry matters. */
#define AUDIT_DENY_NAME		0x01	/* no entry for the name */
#define AUDIT_DENY_IP		0x02	/* IP literal, no IP entry */
#define AUDIT_DENY_REFUSED	0x04	/* every resolved address refused */
#define AUDIT_DENY_NOTLS	0x08	/* a TLS port that carried no TLS */
#define AUDIT_DENY_SELF		0x10	/* the gate's own address */
#define AUDIT_DENY_OTHER	0x20	/* no entry changes it */

#define AUDIT_MODE_CONNECT	0x01
#define AUDIT_MODE_FORWARD	0x02

static const struct {
	int		 bit;
	const char	*text;
} audit_notes[] = {
	{ AUDIT_NOTE_IP, "warning: an IP entry admits that address even in a "
	  "range the gate refuses (loopback, private, link-local, cloud "
	  "metadata); add one only for an address you trust" },
	{ AUDIT_NOTE_TLS, "note: the gate expects TLS on a port an entry "
	  "names; add /notls to the entry if this port carries another "
	  "protocol" },
	{ AUDIT_NOTE_SELF, "note: the gate's own address is always refused; "
	  "no entry admits it" },
	{ AUDIT_NOTE_OTHER, "note: some refusals are not for want of an "
	  "entry (resolver, upstream, TLS or request errors); no --allow line "
	  "changes them" },
	{ AUDIT_NOTE_NOHOST, "note: some refused requests named no valid "
	  "host; no --allow line admits them" },
};

void
audit_init(struct audit *a)
{
	memset(a, 0, sizeof(*a));
	sbuf_init(&a->partial);
}

static void
audit_counts_free(struct audit_count *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].text);
}

void
audit_free(struct audit *a)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		free(a->v[i].host);
		audit_counts_free(a->v[i].reasons, a->v[i].nreasons);
		audit_counts_free(a->v[i].refused, a->v[i].nrefused);
	}
	free(a->v);
	free(a->index);
	sbuf_free(&a->partial);
	memset(a, 0, sizeof(*a));
}

/* Remember why line number a->lineno was skipped. */
static int
audit_bad(struct audit *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
audit_bad(struct audit *a, const char *fmt, ...)
{
	va_list ap;

	a->skipped++;
	if (a->nbad < AUDIT_BAD_KEEP) {
		a->bad[a->nbad].line = a->lineno;
		va_start(ap, fmt);
		vsnprintf(a->bad[a->nbad].why, sizeof(a->bad[a->nbad].why),
		    fmt, ap);
		va_end(ap);
		a->nbad++;
	}
	return AUDIT_SKIPPED;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t
audit_days(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n decimal digits at s into *v. */
static int
audit_digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/*
 * An RFC 3339 date-time ("2024-05-01T10:00:00Z", with an optional
 * fraction and a numeric offset; 't', 'z' and a space accepted as RFC 3339
 * 5.6 allows) as milliseconds since the epoch.
 */
int
audit_parse_time(const char *s, int64_t *ms)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int y, mo, d, h, mi, sec, frac = 0, i, oh, om, leap;
	int64_t off = 0;

	if (strlen(s) < 20 || audit_digits(s, 4, &y) == -1 || s[4] != '-' ||
	    audit_digits(s + 5, 2, &mo) == -1 || s[7] != '-' ||
	    audit_digits(s + 8, 2, &d) == -1 ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    audit_digits(s + 11, 2, &h) == -1 || s[13] != ':' ||
	    audit_digits(s + 14, 2, &mi) == -1 || s[16] != ':' ||
	    audit_digits(s + 17, 2, &sec) == -1)
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 || sec > 60)
		return -1;
	s += 19;
	if (*s == '.') {
		for (i = 0, s++; *s >= '0' && *s <= '9'; s++, i++) {
			if (i < 3)
				frac = frac * 10 + (*s - '0');
			if (i > 9)
				return -1;
		}
		if (i == 0)
			return -1;
		for (; i < 3; i++)
			frac *= 10;
	}
	if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
		off = 0;
	else if ((*s == '+' || *s == '-') && strlen(s) == 6 &&
	    audit_digits(s + 1, 2, &oh) == 0 && s[3] == ':' &&
	    audit_digits(s + 4, 2, &om) == 0 && oh <= 23 && om <= 59)
		off = (*s == '-' ? -1 : 1) * ((int64_t)oh * 3600 + om * 60);
	else
		return -1;
	if (sec == 60)
		sec = 59;	/* a leap second sorts with its minute */
	*ms = ((audit_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) -
	    off) * 1000 + frac;
	return 0;
}

/*
 * --since: an RFC 3339 time, or a duration before now made of NUMBER UNIT
 * pairs ("10m", "2h", "1d", "1h30m"; units s, m, h, d, w).
 */
int
audit_parse_since(const char *s, int64_t now_ms, int64_t *ms,
    struct aisb_error *err)
{
	const char *p = s;
	int64_t total = 0, n, unit;
	int digits;

	if (audit_parse_time(s, ms) == 0)
		return 0;
	if (*p == '\0')
		goto bad;
	while (*p != '\0') {
		for (n = 0, digits = 0; *p >= '0' && *p <= '9'; p++) {
			if (++digits > 9)
				goto bad;
			n = n * 10 + (*p - '0');
		}
		if (digits == 0)
			goto bad;
		switch (*p++) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		case 'w':
			unit = 7 * 86400;
			break;
		default:
			goto bad;
		}
		total += n * unit;
		if (total > (int64_t)100 * 366 * 86400)
			return aisb_err(err, "--since %.64s: more than 100 years",
			    s);
	}
	*ms = now_ms - total * 1000;
	return 0;
bad:
	return aisb_err(err, "--since %.64s: expected an RFC 3339 time "
	    "(2024-05-01T10:00:00Z) or a duration (30s, 10m, 2h, 1d, 1w)", s);
}

/* The member key of o, or NULL. */
static const cJSON *
audit_member(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A count or size: a non-negative integer cJSON holds exactly. */
static int
audit_uint(const cJSON *j, uint64_t *v)
{
	double d;

	if (!cJSON_IsNumber(j))
		return -1;
	d = j->valuedouble;
	if (!(d >= 0 && d <= AUDIT_MAX_INT) || d != (double)(uint64_t)d)
		return -1;
	*v = (uint64_t)d;
	return 0;
}

/* FNV-1a of a destination key. */
static size_t
audit_hash(const char *host, int port)
{
	uint64_t h = 1469598103934665603ULL;
	const unsigned char *s;

	if (host != NULL)
		for (s = (const unsigned char *)host; *s != '\0'; s++)
			h = (h ^ *s) * 1099511628211ULL;
	else
		h = (h ^ 0xffu) * 1099511628211ULL;
	h = (h ^ (uint64_t)(port + 1)) * 1099511628211ULL;
	return (size_t)(h & (AUDIT_INDEX_SIZE - 1));
}

static int
audit_same(const struct audit_dest *d, const char *host, int port)
{
	if (d->port != port)
		return 0;
	if (d->host == NULL || host == NULL)
		return d->host == host;
	return strcmp(d->host, host) == 0;
}

/*
 * The destination host:port, added when new: its index in *out (SIZE_MAX
 * past AUDIT_DEST_MAX destinations); -1 out of memory.
 */
static int
audit_dest(struct audit *a, const char *host, int port, size_t *out)
{
	struct audit_dest *d, *v;
	struct aisb_addr ad;
	size_t slot, cap;

	if (a->index == NULL &&
	    (a->index = calloc(AUDIT_INDEX_SIZE, sizeof(*a->index))) == NULL)
		return -1;
	/* The table is never full: it has more slots than destinations. */
	for (slot = audit_hash(host, port); a->index[slot] != 0;
	    slot = (slot + 1) & (AUDIT_INDEX_SIZE - 1))
		if (audit_same(&a->v[a->index[slot] - 1], host, port)) {
			*out = a->index[slot] - 1;
			return 0;
		}
	if (a->n >= AUDIT_DEST_MAX) {
		*out = SIZE_MAX;
		return 0;
	}
	if (a->n == a->cap) {
		cap = a->cap ? a->cap * 2 : 32;
		if ((v = realloc(a->v, cap * sizeof(*v))) == NULL)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	d = &a->v[a->n];
	memset(d, 0, sizeof(*d));
	d->port = port;
	if (host != NULL) {
		if ((d->host = strdup(host)) == NULL)
			return -1;
		if (addr_parse_literal(host, strlen(host), &ad) == 1)
			d->ip = ad.family == AF_INET6 ? 6 : 4;
	}
	a->index[slot] = ++a->n;
	*out = a->n - 1;
	return 0;
}

/* Count text in a small table; past max, *other counts it. */
static int
audit_count_add(struct audit_count *v, size_t *n, size_t max,
    uint64_t *other, const char *text)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i].text, text) == 0) {
			v[i].n++;
			return 0;
		}
	if (*n >= max) {
		(*other)++;
		return 0;
	}
	if ((v[*n].text = strdup(text)) == NULL)
		return -1;
	v[*n].n = 1;
	(*n)++;
	return 0;
}

/* What kind of refusal a reason is, for the entry that would admit it. */
static int
audit_class(const char *reason, int ip)
{
	if (strcmp(reason, "not allowlisted") == 0 ||
	    strcmp(reason, "allowlist reloaded: entry removed") == 0)
		return ip ? AUDIT_DENY_IP : AUDIT_DENY_NAME;
	if (strcmp(reason, "IP literal not allowlisted") == 0)
		return AUDIT_DENY_IP;
	if (strcmp(reason, "all resolved addresses refused") == 0 ||
	    strcmp(reason, "answer holds refused addresses (--strict-dns)") ==
	    0)
		return AUDIT_DENY_REFUSED;
	if (strcmp(reason, "the gate's own address") == 0)
		return AUDIT_DENY_SELF;
	if (strcmp(reason, "not a TLS handshake") == 0)
		return AUDIT_DENY_NOTLS;
	return AUDIT_DENY_OTHER;
}

/* A string or null member that must be present; -1 when it is neither. */
static int
audit_str_or_null(const cJSON *o, const char *key, const char **v)
{
	const cJSON *j = audit_member(o, key);

	*v = NULL;
	if (j == NULL)
		return -1;
	if (cJSON_IsNull(j))
		return 0;
	if (!cJSON_IsString(j) || j->valuestring == NULL ||
	    strlen(j->valuestring) > AUDIT_STR_MAX)
		return -1;
	*v = j->valuestring;
	return 0;
}

/* Fold one parsed record into the destination at index di. */
static int
audit_add(struct audit *a, size_t di, const struct audit_event *ev,
    const char *method, const cJSON *refused, uint64_t up, uint64_t down)
{
	struct audit_dest *d = &a->v[di];
	const cJSON *r;
	int cls;

	if (d->allowed + d->denied == 0 || ev->ts_ms < d->first_ms) {
		d->first_ms = ev->ts_ms;
		memcpy(d->first, ev->ts, sizeof(d->first));
	}
	if (d->allowed + d->denied == 0 || ev->ts_ms >= d->last_ms) {
		d->last_ms = ev->ts_ms;
		memcpy(d->last, ev->ts, sizeof(d->last));
	}
	d->bytes_up += up;
	d->bytes_down += down;
	if (ev->allow) {
		d->allowed++;
		return 0;
	}
	d->denied++;
	if (audit_count_add(d->reasons, &d->nreasons, AUDIT_REASON_MAX,
	    &d->other_reasons, ev->reason) == -1)
		return -1;
	cls = audit_class(ev->reason, d->ip);
	d->classes |= cls;
	if (method != NULL)
		d->modes |= strcmp(method, "CONNECT") == 0 ?
		    AUDIT_MODE_CONNECT : AUDIT_MODE_FORWARD;
	if (cls != AUDIT_DENY_REFUSED)
		return 0;
	cJSON_ArrayForEach(r, refused) {
		if (!cJSON_IsString(r) || r->valuestring == NULL ||
		    strlen(r->valuestring) > AUDIT_STR_MAX)
			continue;
		if (audit_count_add(d->refused, &d->nrefused, AUDIT_ADDR_MAX,
		    &d->other_refused, r->valuestring) == -1)
			return -1;
	}
	return 0;
}

/* The members of a record, checked; 0 or a skip with the reason. */
static int
audit_record(struct audit *a, const cJSON *o, struct audit_event *ev)
{
	const cJSON *j, *refused;
	const char *ts, *decision, *reason, *host, *method;
	uint64_t up, down, port = 0, status = 0;
	int port_null = 1, status_null = 1;
	size_t di;

	if (audit_str_or_null(o, "ts", &ts) == -1 || ts == NULL ||
	    strlen(ts) >= sizeof(ev->ts) ||
	    audit_parse_time(ts, &ev->ts_ms) == -1)
		return audit_bad(a, "\"ts\" missing or not a timestamp");
	if (audit_str_or_null(o, "decision", &decision) == -1 ||
	    decision == NULL || (strcmp(decision, "allow") != 0 &&
	    strcmp(decision, "deny") != 0))
		return audit_bad(a, "\"decision\" missing or not allow/deny");
	if (audit_str_or_null(o, "reason", &reason) == -1 || reason == NULL)
		return audit_bad(a, "\"reason\" missing or not a string");
	if (audit_str_or_null(o, "host", &host) == -1)
		return audit_bad(a, "\"host\" missing or not a string");
	if (audit_str_or_null(o, "method", &method) == -1)
		return audit_bad(a, "\"method\" missing or not a string");
	j = audit_member(o, "port");
	if (j == NULL || (!(port_null = cJSON_IsNull(j)) &&
	    (audit_uint(j, &port) == -1 || port > 65535)))
		return audit_bad(a, "\"port\" missing or not a port");
	j = audit_member(o, "status");
	if (j == NULL || (!(status_null = cJSON_IsNull(j)) &&
	    (audit_uint(j, &status) == -1 || status > 999)))
		return audit_bad(a, "\"status\" missing or not a status");
	if (audit_uint(audit_member(o, "bytes_up"), &up) == -1)
		return audit_bad(a, "\"bytes_up\" missing or not a count");
	if (audit_uint(audit_member(o, "bytes_down"), &down) == -1)
		return audit_bad(a, "\"bytes_down\" missing or not a count");
	refused = audit_member(o, "refused_addrs");
	if (!cJSON_IsArray(refused))
		return audit_bad(a, "\"refused_addrs\" missing or not a list");

	if (a->since_ms != 0 && ev->ts_ms < a->since_ms) {
		a->left_out++;
		return AUDIT_LEFT_OUT;
	}
	snprintf(ev->ts, sizeof(ev->ts), "%s", ts);
	snprintf(ev->method, sizeof(ev->method), "%s", method ? method : "");
	snprintf(ev->reason, sizeof(ev->reason), "%s", reason);
	ev->allow = strcmp(decision, "allow") == 0;
	ev->status = status_null ? -1 : (int)status;
	ev->port = port_null ? -1 : (int)port;
	ev->bytes_up = up;
	ev->bytes_down = down;
	a->records++;
	if (ev->allow)
		a->allowed++;
	else
		a->denied++;
	if (audit_dest(a, host, ev->port, &di) == -1)
		return AUDIT_NOMEM;
	ev->dest = di;
	if (di == SIZE_MAX) {
		a->overflow++;
		return AUDIT_RECORD;
	}
	if (audit_add(a, di, ev, method, refused, up, down) == -1)
		return AUDIT_NOMEM;
	return AUDIT_RECORD;
}

/* One line, without its newline. */
int
audit_line(struct audit *a, const char *line, size_t len,
    struct audit_event *ev)
{
	struct audit_event tmp;
	const char *end = NULL;
	cJSON *o;
	size_t i;
	int rv;

	a->lineno++;
	if (ev == NULL)
		ev = &tmp;
	memset(ev, 0, sizeof(*ev));
	ev->dest = SIZE_MAX;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return AUDIT_LEFT_OUT;
	if (len > AUDIT_LINE_MAX)
		return audit_bad(a, "line longer than %d bytes",
		    AUDIT_LINE_MAX);
	if (memchr(line, '\0', len) != NULL)
		return audit_bad(a, "NUL byte in the line");
	o = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (o == NULL)
		return audit_bad(a, "not JSON");
	for (; end != NULL && end < line + len; end++)
		if (*end != ' ' && *end != '\t') {
			cJSON_Delete(o);
			return audit_bad(a, "text after the JSON object");
		}
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return audit_bad(a, "not a JSON object");
	}
	rv = audit_record(a, o, ev);
	cJSON_Delete(o);
	return rv;
}

/*
 * Feed bytes as they come from the file: complete lines are read and
 * passed to cb; a partial last line waits for the rest (or audit_finish).
 * A line over AUDIT_LINE_MAX is skipped without being kept.
 */
int
audit_feed(struct audit *a, const char *p, size_t len, audit_cb cb,
    void *arg)
{
	struct audit_event ev;
	const char *nl;
	size_t seg;
	int rv;

	while (len > 0) {
		nl = memchr(p, '\n', len);
		seg = nl != NULL ? (size_t)(nl - p) : len;
		if (!a->discarding) {
			if (a->partial.len + seg > AUDIT_LINE_MAX) {
				a->discarding = 1;
				a->lineno++;
				audit_bad(a, "line longer than %d bytes",
				    AUDIT_LINE_MAX);
				sbuf_reset(&a->partial);
			} else if (seg > 0 &&
			    sbuf_add(&a->partial, p, seg) == -1)
				return AUDIT_NOMEM;
		}
		if (nl == NULL)
			break;
		if (a->discarding)
			a->discarding = 0;
		else {
			rv = audit_line(a, a->partial.p ? a->partial.p : "",
			    a->partial.len, &ev);
			sbuf_reset(&a->partial);
			if (rv == AUDIT_NOMEM)
				return AUDIT_NOMEM;
			if (rv == AUDIT_RECORD && cb != NULL)
				cb(a, &ev, arg);
		}
		p += seg + 1;
		len -= seg + 1;
	}
	return 0;
}

/* The end of the input: a last line without a newline is read too. */
int
audit_finish(struct audit *a, audit_cb cb, void *arg)
{
	struct audit_event ev;
	int rv;

	if (a->discarding) {
		a->discarding = 0;
		return 0;
	}
	if (a->partial.len == 0)
		return 0;
	rv = audit_line(a, a->partial.p, a->partial.len, &ev);
	sbuf_reset(&a->partial);
	if (rv == AUDIT_NOMEM)
		return AUDIT_NOMEM;
	if (rv == AUDIT_RECORD && cb != NULL)
		cb(a, &ev, arg);
	return 0;
}

/* Append s with every byte outside printable ASCII as \xNN. */
static int
audit_put(struct sbuf *b, const char *s)
{
	const unsigned char *u;

	for (u = (const unsigned char *)s; *u != '\0'; u++) {
		if (*u >= 0x20 && *u < 0x7f) {
			if (sbuf_add(b, u, 1) == -1)
				return -1;
		} else if (sbuf_printf(b, "\\x%02x", *u) == -1)
			return -1;
	}
	return 0;
}

/* "host:port", "[v6]:port", "host", or "(no host)", unescaped. */
static void
audit_dest_raw(const char *host, int port, int ip, char *buf, size_t len)
{
	if (host == NULL)
		snprintf(buf, len, "(no host)%s", port >= 0 ? ":" : "");
	else if (port < 0)
		snprintf(buf, len, "%s", host);
	else if (ip == 6)
		snprintf(buf, len, "[%s]", host);
	else
		snprintf(buf, len, "%s", host);
	if (port >= 0)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%d",
		    host != NULL ? ":" : "", port);
}

/* The destination as text: "host:port" with unprintable bytes escaped. */
int
audit_dest_text(const struct audit_dest *d, struct sbuf *b)
{
	char buf[AUDIT_STR_MAX + 32];

	audit_dest_raw(d->host, d->port, d->ip, buf, sizeof(buf));
	return audit_put(b, buf);
}

/* Destinations in order: host (none last), then port. */
static int
audit_cmp(const void *x, const void *y)
{
	const struct audit_dest *a = *(const struct audit_dest *const *)x;
	const struct audit_dest *b = *(const struct audit_dest *const *)y;
	int c;

	if (a->host == NULL || b->host == NULL) {
		if (a->host != b->host)
			return a->host == NULL ? 1 : -1;
	} else if ((c = strcmp(a->host, b->host)) != 0)
		return c;
	return a->port < b->port ? -1 : a->port > b->port;
}

static const struct audit_dest **
audit_sorted(const struct audit *a)
{
	const struct audit_dest **v;
	size_t i;

	if ((v = calloc(a->n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < a->n; i++)
		v[i] = &a->v[i];
	qsort(v, a->n, sizeof(*v), audit_cmp);
	return v;
}

/* Add entry text to the list unless it is there. */
static int
audit_entry_add(struct argv *out, const char *text)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		if (strcmp(out->v[i], text) == 0)
			return 0;
	return argv_add(out, text);
}

/* The entry for a name on a port, seen in the modes of its refusals. */
static int
audit_name_entry(const struct audit_dest *d, struct argv *out, int *notes)
{
	char buf[ALLOW_ENTRY_MAXLEN];
	int notls = (d->classes & AUDIT_DENY_NOTLS) != 0;

	if (d->port == 22 || (d->port == ALLOW_PORT_HTTP &&
	    (d->modes & AUDIT_MODE_CONNECT)))
		notls = 1;
	if (notls && d->port == ALLOW_PORT_HTTPS) {
		/* 443 is always checked for TLS; nothing admits plain text. */
		*notes |= AUDIT_NOTE_OTHER;
		return 0;
	}
	if (d->port < 0 ||
	    (d->port == ALLOW_PORT_HTTPS && d->modes == AUDIT_MODE_CONNECT) ||
	    (d->port == ALLOW_PORT_HTTP && d->modes == AUDIT_MODE_FORWARD))
		snprintf(buf, sizeof(buf), "%s", d->host);
	else
		snprintf(buf, sizeof(buf), "%s:%d%s", d->host, d->port,
		    notls ? "/notls" : "");
	if (!notls && d->port != ALLOW_PORT_HTTPS &&
	    (d->modes & AUDIT_MODE_CONNECT))
		*notes |= AUDIT_NOTE_TLS;
	return audit_entry_add(out, buf);
}

/* The IP entry for an address text on the destination's port. */
static int
audit_ip_entry(const char *addr, int port, struct argv *out)
{
	char buf[ALLOW_ENTRY_MAXLEN];
	struct aisb_addr ad;

	if (addr_parse_literal(addr, strlen(addr), &ad) != 1)
		return 0;
	if (port < 0)
		snprintf(buf, sizeof(buf), "%s", addr);
	else if (ad.family == AF_INET6)
		snprintf(buf, sizeof(buf), "[%s]:%d", addr, port);
	else
		snprintf(buf, sizeof(buf), "%s:%d", addr, port);
	return audit_entry_add(out, buf);
}

/*
 * The allowlist entries (without "--allow ") that would admit the
 * destination's refusals, and AUDIT_NOTE_* bits for what to tell the user.
 * Returns the notes, or -1 out of memory.
 */
int
audit_suggest(const struct audit_dest *d, struct argv *out)
{
	char canon[HOST_CANON_SIZE], addr[AUDIT_STR_MAX + 1];
	struct aisb_error e;
	const char *sp;
	size_t i;
	int notes = 0;

	if (d->denied == 0)
		return 0;
	if (d->classes & AUDIT_DENY_OTHER)
		notes |= AUDIT_NOTE_OTHER;
	if (d->classes & AUDIT_DENY_SELF)
		notes |= AUDIT_NOTE_SELF;
	if ((d->classes & (AUDIT_DENY_NAME | AUDIT_DENY_NOTLS |
	    AUDIT_DENY_IP | AUDIT_DENY_REFUSED)) && (d->host == NULL ||
	    (!d->ip && (host_canon(d->host, strlen(d->host), canon, &e) ==
	    -1 || strcmp(canon, d->host) != 0)))) {
		/* The gate logs names canonical; anything else is no name. */
		return notes | AUDIT_NOTE_NOHOST;
	}
	if ((d->classes & (AUDIT_DENY_NAME | AUDIT_DENY_NOTLS)) && !d->ip &&
	    audit_name_entry(d, out, &notes) == -1)
		return -1;
	if ((d->classes & (AUDIT_DENY_IP | AUDIT_DENY_NAME)) && d->ip) {
		if (audit_ip_entry(d->host, d->port, out) == -1)
			return -1;
		notes |= AUDIT_NOTE_IP;
	}
	for (i = 0; i < d->nrefused; i++) {
		/* "ADDR (RANGE)"; the gate's own address has range "gate". */
		sp = strstr(d->refused[i].text, " (");
		if (sp == NULL || (size_t)(sp - d->refused[i].text) >=
		    sizeof(addr))
			continue;
		if (strcmp(sp, " (gate)") == 0) {
			notes |= AUDIT_NOTE_SELF;
			continue;
		}
		memcpy(addr, d->refused[i].text, (size_t)(sp -
		    d->refused[i].text));
		addr[sp - d->refused[i].text] = '\0';
		if (audit_ip_entry(addr, d->port, out) == -1)
			return -1;
		notes |= AUDIT_NOTE_IP;
	}
	return notes;
}

const char *
audit_note_text(int bit)
{
	size_t i;

	for (i = 0; i < sizeof(audit_notes) / sizeof(audit_notes[0]); i++)
		if (audit_notes[i].bit == bit)
			return audit_notes[i].text;
	return NULL;
}

/* "reason (N), reason (M)" of a destination's refusals. */
static int
audit_reasons_text(const struct audit_dest *d, struct sbuf *b)
{
	size_t i;

	for (i = 0; i < d->nreasons; i++) {
		if ((i > 0 && sbuf_adds(b, ", ") == -1) ||
		    audit_put(b, d->reasons[i].text) == -1 ||
		    sbuf_printf(b, " (%" PRIu64 ")", d->reasons[i].n) == -1)
			return -1;
	}
	if (d->other_reasons > 0 && sbuf_printf(b, ", other reasons (%"
	    PRIu64 ")", d->other_reasons) == -1)
		return -1;
	return 0;
}

/* The summary line under a table or a --denied list. */
static int
audit_summary(const struct audit *a, struct sbuf *b)
{
	size_t i;

	if (sbuf_printf(b, "%" PRIu64 " request%s: %" PRIu64 " allowed, %"
	    PRIu64 " denied", a->records, a->records == 1 ? "" : "s",
	    a->allowed, a->denied) == -1)
		return -1;
	if (a->left_out > 0 && sbuf_printf(b, "; %" PRIu64 " earlier left "
	    "out", a->left_out) == -1)
		return -1;
	if (a->overflow > 0 && sbuf_printf(b, "; %" PRIu64 " to destinations "
	    "past the first %d not itemised", a->overflow, AUDIT_DEST_MAX) ==
	    -1)
		return -1;
	if (a->skipped > 0 && sbuf_printf(b, "; %" PRIu64 " line%s skipped",
	    a->skipped, a->skipped == 1 ? "" : "s") == -1)
		return -1;
	if (sbuf_adds(b, "\n") == -1)
		return -1;
	for (i = 0; i < a->nbad; i++)
		if (sbuf_printf(b, "  skipped line %" PRIu64 ": %s\n",
		    a->bad[i].line, a->bad[i].why) == -1)
			return -1;
	if (a->skipped > a->nbad && sbuf_printf(b, "  and %" PRIu64 " more "
	    "skipped lines\n", a->skipped - a->nbad) == -1)
		return -1;
	return 0;
}

/* Append n spaces. */
static int
audit_pad(struct sbuf *b, size_t n)
{
	while (n-- > 0)
		if (sbuf_add(b, " ", 1) == -1)
			return -1;
	return 0;
}

/*
 * The per-destination table: allowed and denied counts, bytes each way,
 * first and last seen, and under a destination with refusals their
 * reasons.
 */
int
audit_render_table(const struct audit *a, struct sbuf *b)
{
	const struct audit_dest **v;
	struct sbuf t;
	size_t i, w = strlen("DESTINATION");
	int rv = -1;

	if ((v = audit_sorted(a)) == NULL)
		return -1;
	sbuf_init(&t);
	for (i = 0; i < a->n; i++) {
		sbuf_reset(&t);
		if (audit_dest_text(v[i], &t) == -1)
			goto out;
		if (t.len > w)
			w = t.len > 64 ? 64 : t.len;
	}
	if (a->n > 0 && (sbuf_adds(b, "DESTINATION") == -1 ||
	    audit_pad(b, w - strlen("DESTINATION")) == -1 ||
	    sbuf_printf(b, "  %7s  %7s  %12s  %12s  %-24s  %s\n", "ALLOWED",
	    "DENIED", "BYTES UP", "BYTES DOWN", "FIRST SEEN", "LAST SEEN") ==
	    -1))
		goto out;
	for (i = 0; i < a->n; i++) {
		sbuf_reset(&t);
		if (audit_dest_text(v[i], &t) == -1 ||
		    sbuf_add(b, t.p, t.len) == -1 ||
		    audit_pad(b, t.len < w ? w - t.len : 0) == -1 ||
		    sbuf_printf(b, "  %7" PRIu64 "  %7" PRIu64 "  %12" PRIu64
		    "  %12" PRIu64 "  ", v[i]->allowed, v[i]->denied,
		    v[i]->bytes_up, v[i]->bytes_down) == -1 ||
		    audit_put(b, v[i]->first) == -1 ||
		    audit_pad(b, strlen(v[i]->first) < 24 ?
		    24 - strlen(v[i]->first) : 0) == -1 ||
		    sbuf_adds(b, "  ") == -1 || audit_put(b, v[i]->last) == -1 ||
		    sbuf_adds(b, "\n") == -1)
			goto out;
		if (v[i]->denied > 0 && (sbuf_adds(b, "    denied: ") == -1 ||
		    audit_reasons_text(v[i], b) == -1 ||
		    sbuf_adds(b, "\n") == -1))
			goto out;
	}
	rv = audit_summary(a, b);
out:
	sbuf_free(&t);
	free(v);
	return rv;
}

/* The entries and notes under one refused destination, indented. */
static int
audit_render_hints(const struct audit_dest *d, struct sbuf *b)
{
	struct argv e;
	size_t i;
	int notes, rv = -1, bit;

	argv_init(&e);
	if ((notes = audit_suggest(d, &e)) == -1)
		goto out;
	for (i = 0; i < e.n; i++)
		if (sbuf_adds(b, "  --allow ") == -1 ||
		    audit_put(b, e.v[i]) == -1 || sbuf_adds(b, "\n") == -1)
			goto out;
	for (bit = 1; bit <= AUDIT_NOTE_NOHOST; bit <<= 1)
		if ((notes & bit) && sbuf_printf(b, "  %s\n",
		    audit_note_text(bit)) == -1)
			goto out;
	rv = 0;
out:
	argv_free(&e);
	return rv;
}

/* --denied: each refused destination, its reasons, the entry to add. */
int
audit_render_denied(const struct audit *a, struct sbuf *b)
{
	const struct audit_dest **v;
	size_t i;
	int rv = -1;

	if ((v = audit_sorted(a)) == NULL)
		return -1;
	for (i = 0; i < a->n; i++) {
		if (v[i]->denied == 0)
			continue;
		if (audit_dest_text(v[i], b) == -1 ||
		    sbuf_printf(b, ": %" PRIu64 " denied, last ",
		    v[i]->denied) == -1 || audit_put(b, v[i]->last) == -1 ||
		    sbuf_adds(b, ": ") == -1 ||
		    audit_reasons_text(v[i], b) == -1 ||
		    sbuf_adds(b, "\n") == -1 ||
		    audit_render_hints(v[i], b) == -1)
			goto out;
	}
	if (a->denied == 0 && sbuf_adds(b, "no refusals\n") == -1)
		goto out;
	rv = audit_summary(a, b);
out:
	free(v);
	return rv;
}

/* "key":count. */
static int
audit_json_num(struct sbuf *b, const char *key, uint64_t v, int comma)
{
	return sbuf_printf(b, "%s\"%s\":%" PRIu64, comma ? "," : "", key, v);
}

/* One destination as a JSON object. */
static int
audit_json_dest(const struct audit_dest *d, struct sbuf *b)
{
	struct argv e;
	size_t i;
	int notes, bit, n, rv = -1;
	char buf[ALLOW_ENTRY_MAXLEN + 16];

	argv_init(&e);
	if (sbuf_adds(b, "{\"host\":") == -1 || json_add_cstr(b, d->host) ==
	    -1 || (d->port < 0 ? sbuf_adds(b, ",\"port\":null") :
	    sbuf_printf(b, ",\"port\":%d", d->port)) == -1 ||
	    audit_json_num(b, "allowed", d->allowed, 1) == -1 ||
	    audit_json_num(b, "denied", d->denied, 1) == -1 ||
	    audit_json_num(b, "bytes_up", d->bytes_up, 1) == -1 ||
	    audit_json_num(b, "bytes_down", d->bytes_down, 1) == -1 ||
	    sbuf_adds(b, ",\"first_seen\":") == -1 ||
	    json_add_cstr(b, d->first) == -1 ||
	    sbuf_adds(b, ",\"last_seen\":") == -1 ||
	    json_add_cstr(b, d->last) == -1 ||
	    sbuf_adds(b, ",\"denials\":[") == -1)
		goto out;
	for (i = 0; i < d->nreasons; i++)
		if (sbuf_adds(b, i ? ",{\"reason\":" : "{\"reason\":") == -1 ||
		    json_add_cstr(b, d->reasons[i].text) == -1 ||
		    audit_json_num(b, "count", d->reasons[i].n, 1) == -1 ||
		    sbuf_adds(b, "}") == -1)
			goto out;
	if (d->other_reasons > 0 && (sbuf_printf(b, "%s{\"reason\":null",
	    d->nreasons ? "," : "") == -1 || audit_json_num(b, "count",
	    d->other_reasons, 1) == -1 || sbuf_adds(b, "}") == -1))
		goto out;
	if ((notes = audit_suggest(d, &e)) == -1 ||
	    sbuf_adds(b, "],\"suggest\":[") == -1)
		goto out;
	for (i = 0; i < e.n; i++) {
		snprintf(buf, sizeof(buf), "--allow %s", e.v[i]);
		if ((i > 0 && sbuf_adds(b, ",") == -1) ||
		    json_add_cstr(b, buf) == -1)
			goto out;
	}
	if (sbuf_adds(b, "],\"notes\":[") == -1)
		goto out;
	for (bit = 1, n = 0; bit <= AUDIT_NOTE_NOHOST; bit <<= 1)
		if ((notes & bit) && ((n++ > 0 && sbuf_adds(b, ",") == -1) ||
		    json_add_cstr(b, audit_note_text(bit)) == -1))
			goto out;
	rv = sbuf_adds(b, "]}");
out:
	argv_free(&e);
	return rv;
}

/* The audit as one JSON object and a newline; denied: refusals only. */
int
audit_render_json(const struct audit *a, int denied, struct sbuf *b)
{
	const struct audit_dest **v;
	size_t i, n = 0;
	int rv = -1;

	if ((v = audit_sorted(a)) == NULL)
		return -1;
	if (sbuf_adds(b, "{\"log\":") == -1 ||
	    json_add_cstr(b, a->source) == -1 ||
	    audit_json_num(b, "requests", a->records, 1) == -1 ||
	    audit_json_num(b, "allowed", a->allowed, 1) == -1 ||
	    audit_json_num(b, "denied", a->denied, 1) == -1 ||
	    audit_json_num(b, "left_out", a->left_out, 1) == -1 ||
	    audit_json_num(b, "not_itemised", a->overflow, 1) == -1 ||
	    audit_json_num(b, "skipped", a->skipped, 1) == -1 ||
	    sbuf_adds(b, ",\"destinations\":[") == -1)
		goto out;
	for (i = 0; i < a->n; i++) {
		if (denied && v[i]->denied == 0)
			continue;
		if ((n++ > 0 && sbuf_adds(b, ",") == -1) ||
		    audit_json_dest(v[i], b) == -1)
			goto out;
	}
	if (sbuf_adds(b, "],\"skipped_lines\":[") == -1)
		goto out;
	for (i = 0; i < a->nbad; i++)
		if (sbuf_printf(b, "%s{\"line\":%" PRIu64 ",\"why\":",
		    i ? "," : "", a->bad[i].line) == -1 ||
		    json_add_cstr(b, a->bad[i].why) == -1 ||
		    sbuf_adds(b, "}") == -1)
			goto out;
	rv = sbuf_adds(b, "]}\n");
out:
	free(v);
	return rv;
}

/* One record as it arrives (--follow): a text line, or JSON with json. */
int
audit_render_event(const struct audit *a, const struct audit_event *ev,
    int json, struct sbuf *b)
{
	const struct audit_dest *d = ev->dest < a->n ? &a->v[ev->dest] : NULL;

	if (json) {
		if (sbuf_adds(b, "{\"ts\":") == -1 ||
		    json_add_cstr(b, ev->ts) == -1 ||
		    sbuf_printf(b, ",\"decision\":\"%s\",\"host\":",
		    ev->allow ? "allow" : "deny") == -1 ||
		    json_add_cstr(b, d ? d->host : NULL) == -1 ||
		    (ev->port < 0 ? sbuf_adds(b, ",\"port\":null") :
		    sbuf_printf(b, ",\"port\":%d", ev->port)) == -1 ||
		    sbuf_adds(b, ",\"method\":") == -1 ||
		    json_add_cstr(b, ev->method[0] ? ev->method : NULL) == -1 ||
		    (ev->status < 0 ? sbuf_adds(b, ",\"status\":null") :
		    sbuf_printf(b, ",\"status\":%d", ev->status)) == -1 ||
		    sbuf_adds(b, ",\"reason\":") == -1 ||
		    json_add_cstr(b, ev->reason) == -1 ||
		    audit_json_num(b, "bytes_up", ev->bytes_up, 1) == -1 ||
		    audit_json_num(b, "bytes_down", ev->bytes_down, 1) == -1)
			return -1;
		return sbuf_adds(b, "}\n");
	}
	if (audit_put(b, ev->ts) == -1 || sbuf_adds(b, ev->allow ?
	    "  allow  " : "  deny   ") == -1)
		return -1;
	if (d != NULL) {
		if (audit_dest_text(d, b) == -1)
			return -1;
	} else if (sbuf_adds(b, "(not itemised)") == -1)
		return -1;
	if (sbuf_adds(b, "  ") == -1 || audit_put(b, ev->method[0] ?
	    ev->method : "-") == -1 || (ev->status < 0 ? sbuf_adds(b, " -") :
	    sbuf_printf(b, " %d", ev->status)) == -1 ||
	    sbuf_adds(b, "  ") == -1 || audit_put(b, ev->reason) == -1 ||
	    sbuf_printf(b, "  up %" PRIu64 " down %" PRIu64 "\n",
	    ev->bytes_up, ev->bytes_down) == -1)
		return -1;
	if (!ev->allow && d != NULL)
		return audit_render_hints(d, b);
	return 0;
}
