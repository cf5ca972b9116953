/*
 * Fuzz allow_entry_parse: an entry that parses must re-parse from its
 * canonical text to the identical entry, and must match what it names.
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
		fprintf(stderr, "fuzz-allow-entry: %s:%d: %s\n",	\
		    __FILE__, __LINE__, #x);				\
		abort();						\
	}								\
} while (0)

/* Is every byte of s printable ASCII with no space? */
static int
fuzz_printable(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s <= 0x20 || *s >= 0x7f)
			return 0;
	}
	return 1;
}

/* The entry must allow what it names, via a one-entry list. */
static void
fuzz_match(const struct allow_entry *e)
{
	struct allowlist l;
	struct aisb_error err;
	const struct allow_entry *m;
	uint16_t port;

	allowlist_init(&l);
	CHECK(allowlist_add(&l, e->text, strlen(e->text), "fuzz", &err) == 0);
	CHECK(l.n == 1);
	CHECK(strcmp(l.v[0].origin, "fuzz") == 0);
	if (e->kind == ALLOW_KIND_NAME) {
		port = e->port != 0 ? e->port : ALLOW_PORT_HTTPS;
		m = allowlist_match_name(&l, e->name, port,
		    ALLOW_MODE_CONNECT);
		CHECK(m == &l.v[0]);
		CHECK(allowlist_match_addr(&l, &e->cidr.addr, port) == NULL);
		if (e->port == 0) {
			CHECK(allowlist_match_name(&l, e->name, ALLOW_PORT_HTTP,
			    ALLOW_MODE_FORWARD) == &l.v[0]);
			CHECK(allowlist_match_name(&l, e->name, ALLOW_PORT_HTTP,
			    ALLOW_MODE_CONNECT) == NULL);
		} else if (e->port != ALLOW_PORT_HTTPS)
			CHECK(allow_entry_is_tls(m, port) == !e->notls);
	} else {
		port = e->port != 0 ? e->port : 1;
		CHECK(allowlist_match_addr(&l, &e->cidr.addr, port) ==
		    &l.v[0]);
		CHECK(allowlist_match_name(&l, "example.com", port,
		    ALLOW_MODE_CONNECT) == NULL);
	}
	CHECK(allow_entry_is_tls(&l.v[0], ALLOW_PORT_HTTPS) == 1);
	allowlist_free(&l);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct allow_entry e, e2;
	struct aisb_error err;
	char canon[HOST_CANON_SIZE];

	memset(&err, 0, sizeof(err));
	if (allow_entry_parse((const char *)data, size, &e, &err) == -1) {
		CHECK(err.msg[0] != '\0');
		CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
		return 0;
	}
	CHECK(e.kind == ALLOW_KIND_NAME || e.kind == ALLOW_KIND_ADDR);
	CHECK(memchr(e.text, '\0', sizeof(e.text)) != NULL);
	CHECK(e.text[0] != '\0' && fuzz_printable(e.text));
	CHECK(e.origin[0] == '\0');
	CHECK(e.notls == 0 || (e.notls == 1 && e.port != 0));
	if (e.kind == ALLOW_KIND_NAME) {
		CHECK(host_canon(e.name, strlen(e.name), canon, &err) == 0);
		CHECK(strcmp(canon, e.name) == 0);
	} else {
		CHECK(e.name[0] == '\0');
		CHECK(cidr_contains(&e.cidr, &e.cidr.addr));
		/* Networks carry no port. */
		if (e.cidr.prefix != (e.cidr.addr.family == AF_INET ? 32 : 128))
			CHECK(e.port == 0);
	}
	/* The canonical text is a fixed point. */
	CHECK(allow_entry_parse(e.text, strlen(e.text), &e2, &err) == 0);
	CHECK(memcmp(&e, &e2, sizeof(e)) == 0);
	fuzz_match(&e);
	return 0;
}
