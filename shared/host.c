/* DNS names: the one canonicaliser every allowlist decision goes through. */
#include <string.h>

#include "aisb.h"

/* Is c a letter, digit or hyphen (RFC 1035 2.3.1, RFC 1123 2.1)? */
static int
host_is_ldh(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-');
}

/* Check the label of n bytes at s + start (offset off in the input). */
static int
host_check_label(const char *s, size_t start, size_t n, size_t off,
    struct aisb_error *err)
{
	if (n == 0)
		return aisb_err(err, "empty label at offset %zu", off);
	if (n > HOST_LABEL_MAXLEN)
		return aisb_err(err, "label longer than %d bytes at offset %zu",
		    HOST_LABEL_MAXLEN, off);
	if (s[start] == '-')
		return aisb_err(err, "label starts with '-' at offset %zu",
		    off);
	if (s[start + n - 1] == '-')
		return aisb_err(err, "label ends with '-' at offset %zu",
		    off + n - 1);
	return 0;
}

/*
 * Canonicalise a host name. The bytes are checked in order, so the first
 * problem in the name is the one reported; the total length is checked
 * last and out is written only once the whole name is known to be good.
 */
int
host_canon(const char *s, size_t len, char out[HOST_CANON_SIZE],
    struct aisb_error *err)
{
	unsigned char c;
	size_t i, start = 0;

	out[0] = '\0';
	if (s == NULL || len == 0)
		return aisb_err(err, "empty name");
	/* One trailing dot names the root and is dropped (RFC 1034 3.1). */
	if (s[len - 1] == '.')
		len--;
	if (len == 0)
		return aisb_err(err, "empty name");
	for (i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			if (host_check_label(s, start, i - start, start,
			    err) == -1)
				return -1;
			start = i + 1;
			continue;
		}
		c = (unsigned char)s[i];
		if (!host_is_ldh(c))
			return aisb_err(err, "invalid byte 0x%02x at offset "
			    "%zu", c, i);
	}
	if (len > HOST_NAME_MAXLEN)
		return aisb_err(err, "name longer than %d bytes",
		    HOST_NAME_MAXLEN);
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		out[i] = (char)c;
	}
	out[len] = '\0';
	return 0;
}

/* Is canonical name a equal to or below canonical name b? */
int
host_is_below(const char *a, const char *b)
{
	size_t la, lb;

	if (a == NULL || b == NULL)
		return 0;
	la = strlen(a);
	lb = strlen(b);
	if (lb == 0 || la < lb)
		return 0;
	if (la == lb)
		return memcmp(a, b, la) == 0;
	/* "badexample.com" is not below "example.com": need a dot. */
	return a[la - lb - 1] == '.' && memcmp(a + la - lb, b, lb) == 0;
}
