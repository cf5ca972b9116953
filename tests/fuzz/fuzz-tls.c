/*
 * Fuzz tls_hello_read: the input is what a client sent first. Besides not
 * crashing, a result must stay put as bytes arrive: over growing prefixes
 * it is NEED_MORE, then either BAD with the same why for good, or OK with
 * the same len and SNI for good.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

#define FUZZ_PREFIX_MAX	64	/* every prefix up to this length is read */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What one result must be on its own; aborts if it is not. */
static void
fuzz_check_one(int rv, const struct tls_hello *h, size_t len)
{
	char canon[HOST_CANON_SIZE];
	struct aisb_error err;
	struct aisb_addr addr;
	size_t n;

	switch (rv) {
	case TLS_OK:
		if (h->why != NULL || h->len == 0 || h->len > len ||
		    h->len > TLS_HELLO_WIRE_MAX)
			abort();
		if (!h->has_sni) {
			if (h->sni[0] != '\0')
				abort();
			break;
		}
		n = strnlen(h->sni, sizeof(h->sni));
		if (n == 0 || n > HOST_NAME_MAXLEN)
			abort();
		if (host_canon(h->sni, n, canon, &err) == -1 ||
		    strcmp(canon, h->sni) != 0)
			abort();
		if (addr_parse_literal(h->sni, n, &addr) != 0)
			abort();
		break;
	case TLS_NEED_MORE:
		if (h->why != NULL || h->has_sni || h->len != 0)
			abort();
		break;
	case TLS_BAD:
		if (h->why == NULL || h->has_sni || h->len != 0)
			abort();
		break;
	default:
		abort();
	}
}

/* A prefix's result against the whole input's. */
static void
fuzz_check_prefix(const uint8_t *data, size_t k, int full,
    const struct tls_hello *fh)
{
	struct tls_hello h;
	int rv;

	rv = tls_hello_read(data, k, &h);
	fuzz_check_one(rv, &h, k);
	switch (full) {
	case TLS_OK:
		if (k < fh->len) {
			if (rv != TLS_NEED_MORE)
				abort();
		} else if (rv != TLS_OK || h.len != fh->len ||
		    h.has_sni != fh->has_sni || strcmp(h.sni, fh->sni) != 0)
			abort();
		break;
	case TLS_BAD:
		if (rv == TLS_OK)
			abort();
		if (rv == TLS_BAD && strcmp(h.why, fh->why) != 0)
			abort();
		break;
	case TLS_NEED_MORE:
		if (rv != TLS_NEED_MORE)
			abort();
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_hello full;
	size_t k, lim;
	int rv;

	rv = tls_hello_read(data, size, &full);
	fuzz_check_one(rv, &full, size);

	lim = size < FUZZ_PREFIX_MAX ? size : FUZZ_PREFIX_MAX;
	for (k = 0; k < lim; k++)
		fuzz_check_prefix(data, k, rv, &full);
	/* Where an OK hello ends: one byte short, exactly, one past. */
	if (rv == TLS_OK) {
		fuzz_check_prefix(data, full.len - 1, rv, &full);
		fuzz_check_prefix(data, full.len, rv, &full);
		if (full.len < size)
			fuzz_check_prefix(data, full.len + 1, rv, &full);
	} else if (size > 0)
		fuzz_check_prefix(data, size - 1, rv, &full);
	return 0;
}
