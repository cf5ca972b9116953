/*
 * libaisb: code both aisb-gate and ai-sandbox link.
 *
 * Pure code: bytes or structs in, bytes or structs out. No event loop, no
 * exit(), no printing. Functions that can fail return a negative value and
 * fill a struct aisb_error; only main() prints.
 */
#ifndef AISB_H
#define AISB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define AISB_VERSION "0.1.0"

/* error.c */
#define AISB_ERR_MAX 512
struct aisb_error {
	char	msg[AISB_ERR_MAX];
};
int	 aisb_err(struct aisb_error *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 aisb_errno(struct aisb_error *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

/* buf.c: a growable byte buffer, always NUL-terminated. */
struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};
void	 sbuf_init(struct sbuf *);
void	 sbuf_free(struct sbuf *);
void	 sbuf_reset(struct sbuf *);
int	 sbuf_add(struct sbuf *, const void *, size_t);
int	 sbuf_adds(struct sbuf *, const char *);
int	 sbuf_printf(struct sbuf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Append fd's bytes until EOF, at most max in all; errors name path. */
int	 sbuf_read_fd(struct sbuf *, int, size_t, const char *,
	    struct aisb_error *);
/* Free the buffer and return its bytes to the caller, who frees them. */
char	*sbuf_steal(struct sbuf *);

/* json.c */
/*
 * Append s (len bytes, any content) as a JSON string with its quotes.
 * Control bytes become \u00XX, '"' and '\' are escaped, valid UTF-8 passes
 * through, and each byte of an invalid UTF-8 sequence becomes the five
 * characters \\xNN (an escaped backslash, then xNN), so a record is always
 * one valid JSON line and the original bytes can be read back.
 */
int	 json_add_str(struct sbuf *, const char *, size_t);
int	 json_add_cstr(struct sbuf *, const char *);	/* NULL gives null */

/* host.c */
#define HOST_NAME_MAXLEN	253	/* RFC 1035 2.3.4, without the root dot */
#define HOST_LABEL_MAXLEN	63
#define HOST_CANON_SIZE		(HOST_NAME_MAXLEN + 1)
/*
 * The one canonicaliser: ASCII lowercase, one trailing dot removed, LDH
 * labels of 1-63 bytes (no leading or trailing hyphen), at most 253 bytes.
 * Punycode (xn--) is LDH and so allowed. Any other byte (NUL, %, @, \,
 * space, '_', non-ASCII, brackets) is invalid. Writes out (NUL-terminated)
 * and returns 0, or -1 with the reason in err.
 */
int	 host_canon(const char *, size_t, char out[HOST_CANON_SIZE],
	    struct aisb_error *);
/* Is canonical name a equal to or below canonical name b? */
int	 host_is_below(const char *a, const char *b);

/* addr.c */
struct aisb_addr {
	int	 family;	/* AF_INET or AF_INET6 */
	uint8_t	 b[16];		/* network order; 4 bytes used for AF_INET */
};
struct aisb_cidr {
	struct aisb_addr addr;	/* host bits cleared */
	int	 prefix;	/* 0-32 or 0-128 */
};
#define ADDR_STR_SIZE 64
/*
 * Parse an IP literal in any encoding a resolver or a URL parser accepts:
 * IPv4 dotted, one to four parts, each decimal, octal (leading 0) or hex
 * (0x); IPv6 with or without brackets, with embedded IPv4. Returns 1 with
 * out filled when s is an IP literal, 0 when it is not (a name), -1 when it
 * looks like an IPv4 literal (last label numeric) but is malformed, for
 * example an out-of-range part.
 */
int	 addr_parse_literal(const char *, size_t, struct aisb_addr *);
/*
 * NULL when the address is a public unicast destination; otherwise the name
 * of the range that makes it one the gate refuses: "loopback", "private",
 * "link-local", "cgnat", "benchmarking", "reserved", "multicast",
 * "unspecified", "broadcast", "documentation", "ula", "site-local". IPv6
 * forms embedding an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64
 * 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32) are
 * classified by the embedded address.
 */
const char *addr_classify(const struct aisb_addr *);
int	 addr_equal(const struct aisb_addr *, const struct aisb_addr *);
/* Format as dotted quad or RFC 5952 text (no brackets). */
const char *addr_ntop(const struct aisb_addr *, char buf[ADDR_STR_SIZE]);
/* Parse "ADDR/PREFIX" or a bare address (full-length prefix). */
int	 cidr_parse(const char *, size_t, struct aisb_cidr *,
	    struct aisb_error *);
/* IPv4-mapped IPv6 addresses match IPv4 CIDRs. */
int	 cidr_contains(const struct aisb_cidr *, const struct aisb_addr *);

/* allowlist.c */
#define ALLOW_ENTRY_MAXLEN	512	/* a name, a port and a marker fit */
#define ALLOW_LINE_MAXLEN	1024
#define ALLOW_MAX_ENTRIES	4096	/* an allowlist is read by humans */
#define ALLOW_ORIGIN_SIZE	256
#define ALLOW_PORT_HTTPS	443
#define ALLOW_PORT_HTTP		80

enum allow_kind {
	ALLOW_KIND_NAME,	/* a DNS name and every name below it */
	ALLOW_KIND_ADDR,	/* an address or CIDR */
};

enum allow_mode {
	ALLOW_MODE_CONNECT,	/* default port 443 */
	ALLOW_MODE_FORWARD,	/* default port 80 */
};

struct allow_entry {
	enum allow_kind	 kind;
	char		 name[HOST_CANON_SIZE];	/* KIND_NAME */
	struct aisb_cidr cidr;			/* KIND_ADDR */
	uint16_t	 port;		/* 0: default ports (name), any (addr) */
	int		 notls;		/* "/notls": port is not TLS */
	char		 text[ALLOW_ENTRY_MAXLEN]; /* canonical form, for logs */
	char		 origin[ALLOW_ORIGIN_SIZE]; /* "FILE:LINE" or "--allow" */
};

struct allowlist {
	struct allow_entry *v;
	size_t		 n;
	size_t		 cap;
};

/*
 * Parse one entry: "name", "name:port", "name:port/notls", "IPv4",
 * "IPv4:port", "IPv4/prefix", "IPv6", "[IPv6]:port", "IPv6/prefix".
 * Ports are 1-65535 in plain decimal. Returns 0 or -1 with err.
 */
int	 allow_entry_parse(const char *, size_t, struct allow_entry *,
	    struct aisb_error *);
void	 allowlist_init(struct allowlist *);
void	 allowlist_free(struct allowlist *);
/* Parse and append one entry; origin is copied for messages and logs. */
int	 allowlist_add(struct allowlist *, const char *, size_t,
	    const char *origin, struct aisb_error *);
/*
 * Append every entry of a file: one per line, '#' starts a comment, blank
 * lines ignored. Refuses a group- or world-writable file, and reports
 * "FILE:LINE: reason" for the first bad line (nothing appended then).
 */
int	 allowlist_load_file(struct allowlist *, const char *,
	    struct aisb_error *);
/* The entry that allows canonical name on port in mode, or NULL. */
const struct allow_entry *allowlist_match_name(const struct allowlist *,
	    const char *, uint16_t, enum allow_mode);
/* The address entry covering addr on port, or NULL. */
const struct allow_entry *allowlist_match_addr(const struct allowlist *,
	    const struct aisb_addr *, uint16_t);
/*
 * Is a CONNECT to port, allowed by entry e, expected to carry TLS?
 * Port 443 always, a port an entry names unless it says /notls.
 */
int	 allow_entry_is_tls(const struct allow_entry *, uint16_t);

#endif /* AISB_H */
