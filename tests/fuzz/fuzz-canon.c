/*
 * Fuzz the name canonicaliser and the address parsers behind it: every
 * input goes through host_canon, addr_parse_literal and cidr_parse, and
 * each result must satisfy the invariants the gate relies on.
 */
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisb.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort with the failed invariant, so the fuzzer keeps the input. */
#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "fuzz-canon: %s:%d: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

/* Is the message set and NUL-terminated? */
static int
fuzz_err_ok(const struct aisb_error *err)
{
	return err->msg[0] != '\0' &&
	    memchr(err->msg, '\0', sizeof(err->msg)) != NULL;
}

/* Check the shape of a canonical name: [a-z0-9-] labels of 1-63 bytes. */
static void
fuzz_check_canon(const char *out)
{
	size_t i, len = strlen(out), label = 0;

	CHECK(len >= 1 && len <= HOST_NAME_MAXLEN);
	for (i = 0; i < len; i++) {
		if (out[i] == '.') {
			CHECK(label >= 1 && label <= HOST_LABEL_MAXLEN);
			CHECK(out[i - 1] != '-');
			label = 0;
			continue;
		}
		CHECK((out[i] >= 'a' && out[i] <= 'z') ||
		    (out[i] >= '0' && out[i] <= '9') || out[i] == '-');
		if (label == 0)
			CHECK(out[i] != '-');
		label++;
	}
	CHECK(label >= 1 && label <= HOST_LABEL_MAXLEN);
	CHECK(out[len - 1] != '-');
}

/* Is the last label of canonical name s all decimal digits? */
static int
fuzz_last_digits(const char *s)
{
	const char *p = strrchr(s, '.');

	p = p != NULL ? p + 1 : s;
	return strspn(p, "0123456789") == strlen(p);
}

static void
fuzz_canon(const uint8_t *data, size_t size)
{
	char out[HOST_CANON_SIZE], out2[HOST_CANON_SIZE];
	struct aisb_error err;
	struct aisb_addr a;
	size_t i, len;

	memset(&err, 0, sizeof(err));
	if (host_canon((const char *)data, size, out, &err) == -1) {
		CHECK(fuzz_err_ok(&err));
		CHECK(out[0] == '\0');
		return;
	}
	fuzz_check_canon(out);
	len = strlen(out);
	/* The input, lowercased, less one trailing dot. */
	CHECK(len == size || (len + 1 == size && data[size - 1] == '.'));
	for (i = 0; i < len; i++) {
		CHECK(out[i] == data[i] || (data[i] >= 'A' &&
		    data[i] <= 'Z' && out[i] == data[i] - 'A' + 'a'));
	}
	/* Idempotent. */
	CHECK(host_canon(out, len, out2, &err) == 0);
	CHECK(strcmp(out, out2) == 0);
	CHECK(host_is_below(out, out));
	/* A name ending in a numeric label is never treated as a name. */
	if (fuzz_last_digits(out))
		CHECK(addr_parse_literal(out, len, &a) != 0);
}

/* Is r one of the range names addr_classify may return? */
static int
fuzz_known_range(const char *r)
{
	static const char *names[] = { "loopback", "private", "link-local",
	    "cgnat", "benchmarking", "reserved", "multicast", "unspecified",
	    "broadcast", "documentation", "ula", "site-local" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(r, names[i]) == 0)
			return 1;
	}
	return 0;
}

static void
fuzz_literal(const uint8_t *data, size_t size)
{
	char buf[ADDR_STR_SIZE], text[ADDR_STR_SIZE + 8];
	struct aisb_addr a, b;
	struct aisb_cidr c;
	struct aisb_error err;
	const char *r;
	int n;

	n = addr_parse_literal((const char *)data, size, &a);
	CHECK(n == -1 || n == 0 || n == 1);
	if (n != 1)
		return;
	CHECK(a.family == AF_INET || a.family == AF_INET6);
	r = addr_classify(&a);
	CHECK(r == NULL || fuzz_known_range(r));
	/* The printed form parses back to the same address ... */
	addr_ntop(&a, buf);
	CHECK(addr_parse_literal(buf, strlen(buf), &b) == 1);
	CHECK(addr_equal(&a, &b));
	/* ... also strictly, as a CIDR that contains it. */
	CHECK(cidr_parse(buf, strlen(buf), &c, &err) == 0);
	CHECK(addr_equal(&c.addr, &a));
	CHECK(c.prefix == (a.family == AF_INET ? 32 : 128));
	CHECK(cidr_contains(&c, &a));
	/* And in brackets, if IPv6. */
	if (a.family == AF_INET6) {
		snprintf(text, sizeof(text), "[%s]", buf);
		CHECK(addr_parse_literal(text, strlen(text), &b) == 1);
		CHECK(addr_equal(&a, &b));
	}
}

static void
fuzz_cidr(const uint8_t *data, size_t size)
{
	char buf[ADDR_STR_SIZE], text[ADDR_STR_SIZE + 8];
	struct aisb_cidr c, d;
	struct aisb_error err;

	memset(&err, 0, sizeof(err));
	if (cidr_parse((const char *)data, size, &c, &err) == -1) {
		CHECK(fuzz_err_ok(&err));
		return;
	}
	CHECK(c.addr.family == AF_INET || c.addr.family == AF_INET6);
	CHECK(c.prefix >= 0 &&
	    c.prefix <= (c.addr.family == AF_INET ? 32 : 128));
	/* Host bits are clear, so the network holds its own address. */
	CHECK(cidr_contains(&c, &c.addr));
	snprintf(text, sizeof(text), "%s/%d", addr_ntop(&c.addr, buf),
	    c.prefix);
	CHECK(cidr_parse(text, strlen(text), &d, &err) == 0);
	CHECK(addr_equal(&c.addr, &d.addr) && c.prefix == d.prefix);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_canon(data, size);
	fuzz_literal(data, size);
	fuzz_cidr(data, size);
	return 0;
}
