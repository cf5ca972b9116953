/* IP literals, CIDRs, and the address ranges the gate refuses. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "aisb.h"

/* Longest IPv6 text inet_pton is asked to parse; longer is never valid. */
#define ADDR_V6_TEXT_MAX	64
/* Dotted IPv4 has at most four parts (inet_aton(3), WHATWG URL). */
#define ADDR_V4_PARTS		4

/* Is c a hex digit? */
static int
addr_is_xdigit(unsigned char c)
{
	return ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F'));
}

/* Value of hex digit c. */
static unsigned int
addr_xval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c - 'A' + 10;
}

/* Set out to the IPv4 address v (host order). */
static void
addr_set4(struct aisb_addr *out, uint32_t v)
{
	memset(out, 0, sizeof(*out));
	out->family = AF_INET;
	out->b[0] = (uint8_t)(v >> 24);
	out->b[1] = (uint8_t)(v >> 16);
	out->b[2] = (uint8_t)(v >> 8);
	out->b[3] = (uint8_t)v;
}

/* The four bytes at p as a host-order IPv4 value. */
static uint32_t
addr_get4(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/*
 * Is the label s (n bytes) numeric in the WHATWG URL sense ("ends in a
 * number"): all decimal digits, or 0x/0X followed by hex digits (possibly
 * none)? Such a last label makes the whole host an IPv4 literal.
 */
static int
addr_label_numeric(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return 0;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < n; i++) {
			if (!addr_is_xdigit((unsigned char)s[i]))
				return 0;
		}
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
	}
	return 1;
}

/*
 * Parse one IPv4 part: 0x hex (digits optional, as browsers accept "0x"),
 * leading-0 octal, or decimal. Values past 32 bits saturate, so the range
 * check of the caller catches them. Returns -1 on a bad digit.
 */
static int
addr_v4_part(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int base = 10, d;
	size_t i = 0;
	unsigned char c;

	if (n == 0)
		return -1;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < n; i++) {
		c = (unsigned char)s[i];
		if (base == 16 && addr_is_xdigit(c))
			d = addr_xval(c);
		else if (c >= '0' && c <= '9' && c - '0' < (int)base)
			d = c - '0';
		else
			return -1;
		if (v <= UINT32_MAX)
			v = v * base + d;
	}
	*out = v;
	return 0;
}

/* Parse s (n bytes, no trailing dot) as a one to four part IPv4 literal. */
static int
addr_parse_v4(const char *s, size_t n, struct aisb_addr *out)
{
	uint64_t part[ADDR_V4_PARTS], v;
	size_t i, start = 0, np = 0, k;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (np == ADDR_V4_PARTS)
			return -1;
		if (addr_v4_part(s + start, i - start, &part[np]) == -1)
			return -1;
		np++;
		start = i + 1;
	}
	/* Every part but the last is one byte; the last fills the rest. */
	v = 0;
	for (k = 0; k + 1 < np; k++) {
		if (part[k] > 255)
			return -1;
		v |= part[k] << (8 * (3 - k));
	}
	if (part[np - 1] > (UINT32_MAX >> (8 * (np - 1))))
		return -1;
	v |= part[np - 1];
	addr_set4(out, (uint32_t)v);
	return 0;
}

/* Parse IPv6 text (n bytes, no brackets) with inet_pton; -1 if invalid. */
static int
addr_parse_v6(const char *s, size_t n, struct aisb_addr *out)
{
	char tmp[ADDR_V6_TEXT_MAX];
	struct in6_addr a;

	/* inet_pton refuses zone ids ("%eth0") and any other junk. */
	if (n == 0 || n >= sizeof(tmp) || memchr(s, '\0', n) != NULL)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (inet_pton(AF_INET6, tmp, &a) != 1)
		return -1;
	memset(out, 0, sizeof(*out));
	out->family = AF_INET6;
	memcpy(out->b, &a, 16);
	return 0;
}

/* Decide whether s is an IP literal, as a resolver or browser would. */
int
addr_parse_literal(const char *s, size_t n, struct aisb_addr *out)
{
	const char *last;
	size_t m;

	if (s == NULL || n == 0)
		return 0;
	if (s[0] == '[') {
		if (n < 2 || s[n - 1] != ']')
			return -1;
		return addr_parse_v6(s + 1, n - 2, out) == 0 ? 1 : -1;
	}
	/* No name holds a colon: this is IPv6 or nothing. */
	if (memchr(s, ':', n) != NULL)
		return addr_parse_v6(s, n, out) == 0 ? 1 : -1;
	m = n;
	if (s[m - 1] == '.')
		m--;
	if (m == 0)
		return 0;
	last = s + m;
	while (last > s && last[-1] != '.')
		last--;
	if (!addr_label_numeric(last, (size_t)(s + m - last)))
		return 0;
	return addr_parse_v4(s, m, out) == 0 ? 1 : -1;
}

/* Is v inside net/len (all host order)? */
static int
addr_in4(uint32_t v, uint32_t net, int len)
{
	uint32_t mask = len == 0 ? 0 : UINT32_MAX << (32 - len);

	return (v & mask) == net;
}

/* The name of the refused range holding IPv4 address v, or NULL. */
static const char *
addr_classify4(uint32_t v)
{
	if (addr_in4(v, 0x00000000, 8))
		return "unspecified";
	if (addr_in4(v, 0x0a000000, 8) || addr_in4(v, 0xac100000, 12) ||
	    addr_in4(v, 0xc0a80000, 16))
		return "private";
	if (addr_in4(v, 0x7f000000, 8))
		return "loopback";
	/* Includes the cloud metadata service at 169.254.169.254. */
	if (addr_in4(v, 0xa9fe0000, 16))
		return "link-local";
	if (addr_in4(v, 0x64400000, 10))
		return "cgnat";
	if (addr_in4(v, 0xc6120000, 15))
		return "benchmarking";
	if (addr_in4(v, 0xc0000000, 24))
		return "reserved";
	if (addr_in4(v, 0xc0000200, 24) || addr_in4(v, 0xc6336400, 24) ||
	    addr_in4(v, 0xcb007100, 24))
		return "documentation";
	if (addr_in4(v, 0xe0000000, 4))
		return "multicast";
	if (v == 0xffffffff)
		return "broadcast";
	if (addr_in4(v, 0xf0000000, 4))
		return "reserved";
	return NULL;
}

/* Do the first bits of b and p match? Each holds (bits + 7) / 8 bytes. */
static int
addr_in6(const uint8_t *b, const uint8_t *p, int bits)
{
	int full = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(b, p, (size_t)full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (uint8_t)(0xff << (8 - rest));
	return (b[full] & mask) == (p[full] & mask);
}

/* The name of the refused range holding IPv6 address b, or NULL. */
static const char *
addr_classify6(const uint8_t *b)
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t nat64l[16] = { 0x00, 0x64, 0xff, 0x9b, 0, 1 };
	static const uint8_t sixto4[16] = { 0x20, 0x02 };
	static const uint8_t teredo[16] = { 0x20, 0x01, 0x00, 0x00 };
	static const uint8_t discard[16] = { 0x01, 0x00 };
	static const uint8_t bench[16] = { 0x20, 0x01, 0x00, 0x02 };
	static const uint8_t doc[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const uint8_t doc2[16] = { 0x3f, 0xff };
	static const uint8_t ll[16] = { 0xfe, 0x80 };
	static const uint8_t sl[16] = { 0xfe, 0xc0 };
	static const uint8_t ula[16] = { 0xfc };
	static const uint8_t mc[16] = { 0xff };
	static const uint8_t global[16] = { 0x20 };
	const char *r;
	uint8_t v4[4];
	int i;

	if (memcmp(b, zero, 16) == 0)
		return "unspecified";
	if (memcmp(b, zero, 15) == 0 && b[15] == 1)
		return "loopback";
	/* ::ffff:0:0/96 (mapped), ::/96 (compatible), 64:ff9b::/96 (NAT64). */
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, zero, 12) == 0 ||
	    memcmp(b, nat64, 12) == 0)
		return addr_classify4(addr_get4(b + 12));
	/*
	 * 64:ff9b:1::/48 is the local-use NAT64 prefix (RFC 8215), used as
	 * /96s inside it: the address is in the last 32 bits. Were it laid
	 * out as an RFC 6052 /48 instead, the last 32 bits are zero and the
	 * address is refused as "unspecified": still closed.
	 */
	if (memcmp(b, nat64l, 6) == 0)
		return addr_classify4(addr_get4(b + 12));
	/* 6to4 (RFC 3056): the relay's IPv4 address is in bits 16-47. */
	if (memcmp(b, sixto4, 2) == 0)
		return addr_classify4(addr_get4(b + 2));
	/*
	 * Teredo (RFC 4380 4): the server address is in bits 32-63, the
	 * client's in the last 32 bits, inverted.
	 */
	if (memcmp(b, teredo, 4) == 0) {
		for (i = 0; i < 4; i++)
			v4[i] = (uint8_t)~b[12 + i];
		if ((r = addr_classify4(addr_get4(v4))) != NULL)
			return r;
		return addr_classify4(addr_get4(b + 4));
	}
	if (addr_in6(b, discard, 64))
		return "reserved";
	if (addr_in6(b, bench, 48))
		return "benchmarking";
	/* 2001:db8::/32 (RFC 3849) and 3fff::/20 (RFC 9637). */
	if (addr_in6(b, doc, 32) || addr_in6(b, doc2, 20))
		return "documentation";
	if (addr_in6(b, ll, 10))
		return "link-local";
	if (addr_in6(b, sl, 10))
		return "site-local";
	/* Includes AWS's metadata service at fd00:ec2::254. */
	if (addr_in6(b, ula, 7))
		return "ula";
	if (addr_in6(b, mc, 8))
		return "multicast";
	/* Only 2000::/3 is allocated as global unicast (RFC 4291 2.4). */
	if (!addr_in6(b, global, 3))
		return "reserved";
	return NULL;
}

/* Name the refused range addr falls into, or NULL for public unicast. */
const char *
addr_classify(const struct aisb_addr *a)
{
	if (a->family == AF_INET)
		return addr_classify4(addr_get4(a->b));
	if (a->family == AF_INET6)
		return addr_classify6(a->b);
	return "reserved";
}

int
addr_equal(const struct aisb_addr *a, const struct aisb_addr *b)
{
	if (a->family != b->family)
		return 0;
	if (a->family == AF_INET)
		return memcmp(a->b, b->b, 4) == 0;
	return memcmp(a->b, b->b, 16) == 0;
}

const char *
addr_ntop(const struct aisb_addr *a, char buf[ADDR_STR_SIZE])
{
	if ((a->family != AF_INET && a->family != AF_INET6) ||
	    inet_ntop(a->family, a->b, buf, ADDR_STR_SIZE) == NULL)
		snprintf(buf, ADDR_STR_SIZE, "?");
	return buf;
}

/*
 * Parse a strict dotted quad: four decimal parts of 1-3 digits, each at
 * most 255, no leading zeros (which some parsers read as octal).
 */
static int
addr_parse_quad(const char *s, size_t n, struct aisb_addr *out)
{
	size_t i, start = 0, np = 0, len;
	uint32_t v = 0, part;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (s[i] < '0' || s[i] > '9')
				return -1;
			continue;
		}
		len = i - start;
		if (np == 4 || len == 0 || len > 3 ||
		    (len > 1 && s[start] == '0'))
			return -1;
		part = 0;
		for (; start < i; start++)
			part = part * 10 + (uint32_t)(s[start] - '0');
		if (part > 255)
			return -1;
		v = (v << 8) | part;
		np++;
		start = i + 1;
	}
	if (np != 4)
		return -1;
	addr_set4(out, v);
	return 0;
}

/* Parse a CIDR prefix length: plain decimal, no leading zeros, <= max. */
static int
addr_parse_prefix(const char *s, size_t n, int max)
{
	int v = 0;
	size_t i;

	if (n == 0 || n > 3 || (n > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > max ? -1 : v;
}

/* Parse "ADDR/PREFIX" or a bare address, strictly, as config text. */
int
cidr_parse(const char *s, size_t n, struct aisb_cidr *c,
    struct aisb_error *err)
{
	const char *slash;
	size_t alen, i;
	int max, bits, quoted;
	uint8_t mask;

	memset(c, 0, sizeof(*c));
	quoted = (int)(n > 128 ? 128 : n);
	if (s == NULL || n == 0)
		return aisb_err(err, "empty address");
	if (memchr(s, '\0', n) != NULL)
		return aisb_err(err, "invalid address: NUL byte");
	slash = memchr(s, '/', n);
	alen = slash != NULL ? (size_t)(slash - s) : n;
	if (memchr(s, ':', alen) != NULL) {
		if (addr_parse_v6(s, alen, &c->addr) == -1)
			return aisb_err(err, "invalid IPv6 address \"%.*s\"",
			    (int)(alen > 128 ? 128 : alen), s);
		max = 128;
	} else {
		if (addr_parse_quad(s, alen, &c->addr) == -1)
			return aisb_err(err, "invalid IPv4 address \"%.*s\" "
			    "(four decimal parts 0-255, no leading zeros)",
			    (int)(alen > 128 ? 128 : alen), s);
		max = 32;
	}
	if (slash == NULL)
		c->prefix = max;
	else if ((c->prefix = addr_parse_prefix(slash + 1, n - alen - 1,
	    max)) == -1)
		return aisb_err(err, "invalid prefix length \"%.*s\" (0-%d)",
		    (int)(n - alen - 1 > 128 ? 128 : n - alen - 1), slash + 1,
		    max);
	/* Host bits set are usually a typo for another network: refuse. */
	bits = c->prefix;
	for (i = 0; i < (size_t)max / 8; i++) {
		if (bits >= 8)
			mask = 0;
		else if (bits <= 0)
			mask = 0xff;
		else
			mask = (uint8_t)(0xff >> bits);
		if (c->addr.b[i] & mask)
			return aisb_err(err, "%.*s has host bits set", quoted,
			    s);
		bits -= 8;
	}
	return 0;
}

/* Does c contain a? IPv4-mapped IPv6 addresses match IPv4 networks. */
int
cidr_contains(const struct aisb_cidr *c, const struct aisb_addr *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	uint8_t b[16];
	int prefix = c->prefix;

	if (prefix < 0 || prefix > (c->addr.family == AF_INET ? 32 : 128))
		return 0;

	if (c->addr.family == AF_INET && a->family == AF_INET)
		return addr_in6(a->b, c->addr.b, prefix);
	if (c->addr.family == AF_INET6 && a->family == AF_INET6)
		return addr_in6(a->b, c->addr.b, prefix);
	if (c->addr.family == AF_INET && a->family == AF_INET6) {
		if (memcmp(a->b, mapped, 12) != 0)
			return 0;
		return addr_in6(a->b + 12, c->addr.b, prefix);
	}
	/*
	 * An IPv4 address against an IPv6 network: only a network inside
	 * ::ffff:0:0/96 covers it, so "::/0" does not quietly allow IPv4.
	 */
	if (c->addr.family == AF_INET6 && a->family == AF_INET) {
		if (prefix < 96 || memcmp(c->addr.b, mapped, 12) != 0)
			return 0;
		memcpy(b, mapped, 12);
		memcpy(b + 12, a->b, 4);
		return addr_in6(b, c->addr.b, prefix);
	}
	return 0;
}
