/* Allowlist entries: parsing, loading from files, and matching. */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"

/*
 * A file holds at most ALLOW_MAX_ENTRIES useful lines; allowing as many
 * again for comments and blank lines bounds what one load reads.
 */
#define ALLOW_FILE_MAXSIZE	(2 * ALLOW_MAX_ENTRIES * ALLOW_LINE_MAXLEN)
/* How much of a bad entry a message quotes. */
#define ALLOW_QUOTE_MAX		64
#define ALLOW_QUOTE_SIZE	(ALLOW_QUOTE_MAX * 4 + 4)

/*
 * Copy s (n bytes) into out for a message: printable ASCII as is, other
 * bytes as \xNN, at most ALLOW_QUOTE_MAX input bytes then "...".
 */
static const char *
allow_quote(const char *s, size_t n, char out[ALLOW_QUOTE_SIZE])
{
	size_t i, o = 0;
	unsigned char c;

	for (i = 0; i < n && i < ALLOW_QUOTE_MAX; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			out[o++] = (char)c;
		else {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		}
	}
	if (i < n) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

/* Parse a port: plain decimal 1-65535, no sign, no leading zero. */
static int
allow_parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 5 || s[0] == '0')
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/*
 * Parse what follows the host: "" or ":PORT" or ":PORT/notls". Sets the
 * port and notls of e; a '/' without a port is for the caller to judge.
 */
static int
allow_parse_tail(const char *s, size_t n, struct allow_entry *e,
    struct aisb_error *err)
{
	char q[ALLOW_QUOTE_SIZE];
	const char *slash;
	size_t plen;

	if (n == 0)
		return 0;
	if (s[0] != ':')
		return aisb_err(err, "unexpected \"%s\" after the host",
		    allow_quote(s, n, q));
	slash = memchr(s, '/', n);
	plen = (slash != NULL ? (size_t)(slash - s) : n) - 1;
	if (allow_parse_port(s + 1, plen, &e->port) == -1)
		return aisb_err(err, "invalid port \"%s\" (1-65535)",
		    allow_quote(s + 1, plen, q));
	if (slash == NULL)
		return 0;
	if ((size_t)(s + n - slash) != 6 || memcmp(slash, "/notls", 6) != 0)
		return aisb_err(err, "unknown marker \"%s\" (only /notls)",
		    allow_quote(slash, (size_t)(s + n - slash), q));
	e->notls = 1;
	return 0;
}

/* Append ":PORT" and "/notls" as e has them to the text so far. */
static void
allow_text_tail(struct allow_entry *e)
{
	size_t n = strlen(e->text);

	if (e->port != 0)
		snprintf(e->text + n, sizeof(e->text) - n, ":%u%s",
		    (unsigned int)e->port, e->notls ? "/notls" : "");
}

/* Parse "[IPv6]", "[IPv6]:PORT[/notls]" or "[IPv6]/PREFIX". */
static int
allow_parse_bracket(const char *s, size_t n, struct allow_entry *e,
    struct aisb_error *err)
{
	char q[ALLOW_QUOTE_SIZE], a[ADDR_STR_SIZE], net[ALLOW_ENTRY_MAXLEN];
	const char *close;
	size_t alen;

	if ((close = memchr(s, ']', n)) == NULL)
		return aisb_err(err, "missing ']' in \"%s\"",
		    allow_quote(s, n, q));
	alen = (size_t)(close - s) - 1;
	if (memchr(s + 1, ':', alen) == NULL)
		return aisb_err(err, "brackets are only for IPv6 addresses: "
		    "\"%s\"", allow_quote(s, n, q));
	/* A prefix goes after the brackets, where it takes no port. */
	if (memchr(s + 1, '/', alen) != NULL)
		return aisb_err(err, "invalid IPv6 address \"%s\"",
		    allow_quote(s + 1, alen, q));
	e->kind = ALLOW_KIND_ADDR;
	if (close + 1 < s + n && close[1] == '/') {
		/* "[2001:db8::]/32": the same network as without brackets. */
		if (memchr(close + 1, ':', (size_t)(s + n - close - 1)) != NULL)
			return aisb_err(err, "a network takes no port: \"%s\"",
			    allow_quote(s, n, q));
		memcpy(net, s + 1, alen);
		memcpy(net + alen, close + 1, (size_t)(s + n - close - 1));
		if (cidr_parse(net, n - 2, &e->cidr, err) == -1)
			return -1;
	} else {
		if (cidr_parse(s + 1, alen, &e->cidr, err) == -1)
			return -1;
		if (allow_parse_tail(close + 1, (size_t)(s + n - close - 1), e,
		    err) == -1)
			return -1;
	}
	addr_ntop(&e->cidr.addr, a);
	if (e->cidr.prefix != 128)
		snprintf(e->text, sizeof(e->text), "%s/%d", a, e->cidr.prefix);
	else if (e->port != 0)
		snprintf(e->text, sizeof(e->text), "[%s]", a);
	else
		snprintf(e->text, sizeof(e->text), "%s", a);
	allow_text_tail(e);
	return 0;
}

/* Parse a bare IPv6 address or network: "::1", "2001:db8::/32". */
static int
allow_parse_v6(const char *s, size_t n, struct allow_entry *e,
    struct aisb_error *err)
{
	char a[ADDR_STR_SIZE];

	e->kind = ALLOW_KIND_ADDR;
	if (cidr_parse(s, n, &e->cidr, err) == -1)
		return -1;
	addr_ntop(&e->cidr.addr, a);
	if (e->cidr.prefix != 128)
		snprintf(e->text, sizeof(e->text), "%s/%d", a, e->cidr.prefix);
	else
		snprintf(e->text, sizeof(e->text), "%s", a);
	return 0;
}

/*
 * Parse an IPv4 host (n bytes) with rest being what follows it: a port,
 * a prefix or nothing. Config wants the strict dotted quad, so shorthand
 * a resolver would accept ("127.1", "0x7f.0.0.1") is refused with the
 * dotted form it means.
 */
static int
allow_parse_v4(const char *s, size_t n, const char *rest, size_t rn,
    struct allow_entry *e, struct aisb_error *err)
{
	char q[ALLOW_QUOTE_SIZE], a[ADDR_STR_SIZE];
	struct aisb_addr lit;
	struct aisb_error e2;

	e->kind = ALLOW_KIND_ADDR;
	if (addr_parse_literal(s, n, &lit) != 1)
		return aisb_err(err, "invalid IPv4 address \"%s\"",
		    allow_quote(s, n, q));
	if (cidr_parse(s, n, &e->cidr, &e2) == -1)
		return aisb_err(err, "write IPv4 address \"%s\" as a dotted "
		    "quad: %s", allow_quote(s, n, q), addr_ntop(&lit, a));
	if (rn == 6 && memcmp(rest, "/notls", 6) == 0)
		return aisb_err(err, "/notls needs an explicit port, as in "
		    "%s:PORT/notls", allow_quote(s, n, q));
	if (rn > 0 && rest[0] == '/') {
		if (cidr_parse(s, n + rn, &e->cidr, err) == -1)
			return -1;
	} else if (allow_parse_tail(rest, rn, e, err) == -1)
		return -1;
	addr_ntop(&e->cidr.addr, a);
	if (e->cidr.prefix != 32)
		snprintf(e->text, sizeof(e->text), "%s/%d", a, e->cidr.prefix);
	else
		snprintf(e->text, sizeof(e->text), "%s", a);
	allow_text_tail(e);
	return 0;
}

/*
 * Does the host start with a numeric label (digits, or 0x and hex)? Tells
 * a malformed IPv4 address ("1.2.3.999") from a name that only ends like
 * one ("example.123") for the message.
 */
static int
allow_first_numeric(const char *s, size_t n)
{
	size_t i = 0;
	int hex = 0;
	char c;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		hex = 1;
		i = 2;
	}
	for (; i < n && s[i] != '.'; i++) {
		c = s[i];
		if (c >= '0' && c <= '9')
			continue;
		if (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			continue;
		return 0;
	}
	return i > 0;
}

/* Parse one allowlist entry; see aisb.h for the shapes. */
int
allow_entry_parse(const char *s, size_t n, struct allow_entry *e,
    struct aisb_error *err)
{
	char q[ALLOW_QUOTE_SIZE];
	struct aisb_addr lit;
	struct aisb_error e2;
	size_t colons = 0, i, hlen;
	int r;

	memset(e, 0, sizeof(*e));
	if (s == NULL || n == 0)
		return aisb_err(err, "empty entry");
	if (n >= ALLOW_ENTRY_MAXLEN)
		return aisb_err(err, "entry longer than %d bytes",
		    ALLOW_ENTRY_MAXLEN - 1);
	if (s[0] == '[')
		return allow_parse_bracket(s, n, e, err);
	for (i = 0; i < n; i++) {
		if (s[i] == ':')
			colons++;
	}
	if (colons > 1)
		return allow_parse_v6(s, n, e, err);

	for (hlen = 0; hlen < n; hlen++) {
		if (s[hlen] == ':' || s[hlen] == '/')
			break;
	}
	/* A name whose last label is numeric is an IPv4 literal or bad. */
	r = addr_parse_literal(s, hlen, &lit);
	if (r == -1 && allow_first_numeric(s, hlen))
		return aisb_err(err, "invalid IPv4 address \"%s\"",
		    allow_quote(s, hlen, q));
	if (r == -1)
		return aisb_err(err, "invalid name \"%s\": the last label is "
		    "numeric, so it is read as an IPv4 address",
		    allow_quote(s, hlen, q));
	if (r == 1)
		return allow_parse_v4(s, hlen, s + hlen, n - hlen, e, err);

	e->kind = ALLOW_KIND_NAME;
	if (host_canon(s, hlen, e->name, &e2) == -1)
		return aisb_err(err, "invalid name \"%s\": %s",
		    allow_quote(s, hlen, q), e2.msg);
	if (hlen < n && s[hlen] == '/') {
		if (n - hlen == 6 && memcmp(s + hlen, "/notls", 6) == 0)
			return aisb_err(err, "/notls needs an explicit port, "
			    "as in %s:PORT/notls", e->name);
		return aisb_err(err, "a prefix is only for IP addresses: "
		    "\"%s\"", allow_quote(s, n, q));
	}
	if (allow_parse_tail(s + hlen, n - hlen, e, err) == -1)
		return -1;
	snprintf(e->text, sizeof(e->text), "%s", e->name);
	allow_text_tail(e);
	return 0;
}

void
allowlist_init(struct allowlist *l)
{
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}

void
allowlist_free(struct allowlist *l)
{
	free(l->v);
	allowlist_init(l);
}

/* Parse one entry and append it with its origin. */
int
allowlist_add(struct allowlist *l, const char *s, size_t n,
    const char *origin, struct aisb_error *err)
{
	struct allow_entry e, *v;
	size_t cap;

	if (allow_entry_parse(s, n, &e, err) == -1)
		return -1;
	if (l->n >= ALLOW_MAX_ENTRIES)
		return aisb_err(err, "too many allowlist entries (at most %d)",
		    ALLOW_MAX_ENTRIES);
	if (l->n == l->cap) {
		cap = l->cap == 0 ? 16 : l->cap * 2;
		if (cap > ALLOW_MAX_ENTRIES)
			cap = ALLOW_MAX_ENTRIES;
		if ((v = reallocarray(l->v, cap, sizeof(*v))) == NULL)
			return aisb_errno(err, "allowlist");
		l->v = v;
		l->cap = cap;
	}
	snprintf(e.origin, sizeof(e.origin), "%s",
	    origin != NULL ? origin : "");
	l->v[l->n++] = e;
	return 0;
}

/* Is c blank for the purpose of trimming a line? */
static int
allow_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Read the whole of fd (at most ALLOW_FILE_MAXSIZE) into *out. */
static int
allow_read_fd(int fd, const char *path, char **out, size_t *len,
    struct aisb_error *err)
{
	char *p, *np;
	size_t n = 0, cap = 4096;
	ssize_t r;

	if ((p = malloc(cap)) == NULL)
		return aisb_errno(err, "%s", path);
	for (;;) {
		if (n == cap) {
			if (cap > ALLOW_FILE_MAXSIZE) {
				free(p);
				return aisb_err(err, "%s: larger than %d bytes",
				    path, ALLOW_FILE_MAXSIZE);
			}
			cap *= 2;
			if ((np = realloc(p, cap)) == NULL) {
				free(p);
				return aisb_errno(err, "%s", path);
			}
			p = np;
		}
		r = read(fd, p + n, cap - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			aisb_errno(err, "%s", path);
			free(p);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > ALLOW_FILE_MAXSIZE) {
		free(p);
		return aisb_err(err, "%s: larger than %d bytes", path,
		    ALLOW_FILE_MAXSIZE);
	}
	*out = p;
	*len = n;
	return 0;
}

/* Parse the lines of a file's contents into l; all or nothing. */
static int
allow_load_lines(struct allowlist *l, const char *path, const char *p,
    size_t len, struct aisb_error *err)
{
	char origin[ALLOW_ORIGIN_SIZE];
	struct aisb_error e2;
	const char *line, *nl, *hash;
	size_t n0 = l->n, lineno = 0, ll;

	for (line = p; line < p + len; line = nl + 1) {
		lineno++;
		if ((nl = memchr(line, '\n', (size_t)(p + len - line))) ==
		    NULL)
			nl = p + len;
		ll = (size_t)(nl - line);
		if (ll > ALLOW_LINE_MAXLEN) {
			l->n = n0;
			return aisb_err(err, "%s:%zu: line too long (more "
			    "than %d bytes)", path, lineno, ALLOW_LINE_MAXLEN);
		}
		if ((hash = memchr(line, '#', ll)) != NULL)
			ll = (size_t)(hash - line);
		while (ll > 0 && allow_is_space(line[ll - 1]))
			ll--;
		while (ll > 0 && allow_is_space(line[0])) {
			line++;
			ll--;
		}
		if (ll == 0)
			continue;
		snprintf(origin, sizeof(origin), "%s:%zu", path, lineno);
		/*
		 * Duplicate entries are kept: they are harmless, matching
		 * reports the first, and dropping them would hide a line.
		 */
		if (allowlist_add(l, line, ll, origin, &e2) == -1) {
			l->n = n0;
			return aisb_err(err, "%s:%zu: %s", path, lineno,
			    e2.msg);
		}
	}
	return 0;
}

/*
 * Append the entries of a file. Symlinks are followed, but the checks are
 * made on the opened descriptor, so what is checked is what is read.
 */
int
allowlist_load_file(struct allowlist *l, const char *path,
    struct aisb_error *err)
{
	struct stat st;
	char *p = NULL;
	size_t len = 0;
	int fd, r;

	/* O_NONBLOCK so a FIFO cannot hang the open; it is refused below. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1)
		return aisb_errno(err, "%s", path);
	if (fstat(fd, &st) == -1) {
		aisb_errno(err, "%s", path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return aisb_err(err, "%s: not a regular file", path);
	}
	/* As relayd's check_file_secrecy: others must not edit the policy. */
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		return aisb_err(err, "%s: group- or world-writable, refusing "
		    "(chmod go-w %s)", path, path);
	}
	r = allow_read_fd(fd, path, &p, &len, err);
	close(fd);
	if (r == -1)
		return -1;
	r = allow_load_lines(l, path, p, len, err);
	free(p);
	return r;
}

/* Does entry e allow port, given the default port of mode? */
static int
allow_port_ok(const struct allow_entry *e, uint16_t port,
    enum allow_mode mode)
{
	if (e->port != 0)
		return port == e->port;
	if (mode == ALLOW_MODE_CONNECT)
		return port == ALLOW_PORT_HTTPS;
	return port == ALLOW_PORT_HTTP;
}

/*
 * The name entry allowing canon on port: the longest matching name wins,
 * then an entry naming the port over one relying on the default, then the
 * first, so logs name the entry that decided.
 */
const struct allow_entry *
allowlist_match_name(const struct allowlist *l, const char *canon,
    uint16_t port, enum allow_mode mode)
{
	const struct allow_entry *e, *best = NULL;
	size_t i, len, bestlen = 0;

	if (canon == NULL)
		return NULL;
	for (i = 0; i < l->n; i++) {
		e = &l->v[i];
		if (e->kind != ALLOW_KIND_NAME || !allow_port_ok(e, port, mode))
			continue;
		if (!host_is_below(canon, e->name))
			continue;
		len = strlen(e->name);
		if (best == NULL || len > bestlen ||
		    (len == bestlen && best->port == 0 && e->port != 0)) {
			best = e;
			bestlen = len;
		}
	}
	return best;
}

/* Prefix length of c counted in IPv6 bits, to compare across families. */
static int
allow_prefix6(const struct aisb_cidr *c)
{
	return c->addr.family == AF_INET ? c->prefix + 96 : c->prefix;
}

/* The address entry covering addr on port: longest prefix wins. */
const struct allow_entry *
allowlist_match_addr(const struct allowlist *l, const struct aisb_addr *a,
    uint16_t port)
{
	const struct allow_entry *e, *best = NULL;
	size_t i;
	int p, bestp = -1;

	for (i = 0; i < l->n; i++) {
		e = &l->v[i];
		if (e->kind != ALLOW_KIND_ADDR)
			continue;
		if (e->port != 0 && e->port != port)
			continue;
		if (!cidr_contains(&e->cidr, a))
			continue;
		p = allow_prefix6(&e->cidr);
		if (best == NULL || p > bestp ||
		    (p == bestp && best->port == 0 && e->port != 0)) {
			best = e;
			bestp = p;
		}
	}
	return best;
}

/* Is a CONNECT to port under entry e expected to carry TLS? */
int
allow_entry_is_tls(const struct allow_entry *e, uint16_t port)
{
	if (port == ALLOW_PORT_HTTPS)
		return 1;
	return e != NULL && e->port == port && !e->notls;
}
