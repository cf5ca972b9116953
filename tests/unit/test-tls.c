/*
 * tls.c: ClientHello reassembly and SNI, on real captures (see
 * data/README) and on variants of them built here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <openssl/err.h>

#include "gate.h"

#define CAP_MAX		4096
#define EXT_MAX		64
#define WIRE_MAX	(TLS_HELLO_MAX * 2 + 1024)

/* A capture taken apart: the fixed fields and the extension list. */
struct hello {
	uint8_t		 pre[512];	/* legacy_version..compression */
	size_t		 prelen;
	size_t		 sid_off;	/* offsets of length bytes in pre */
	size_t		 cs_off;
	size_t		 comp_off;
	int		 noext;		/* leave the extensions block out */
	size_t		 next;
	uint16_t	 type[EXT_MAX];
	uint8_t		*data[EXT_MAX];
	size_t		 len[EXT_MAX];
};

static uint8_t	 wire[WIRE_MAX];
static uint8_t	 hsbuf[WIRE_MAX];

static size_t
load(const char *name, uint8_t *buf, size_t cap)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	n = fread(buf, 1, cap, f);
	fclose(f);
	cr_assert(n > 0 && n < cap, "%s: %zu bytes", path, n);
	return n;
}

static uint32_t
get16(const uint8_t *p)
{
	return ((uint32_t)p[0] << 8) | p[1];
}

static void
put16(uint8_t *p, size_t v)
{
	p[0] = (v >> 8) & 0xff;
	p[1] = v & 0xff;
}

static void
put24(uint8_t *p, size_t v)
{
	p[0] = (v >> 16) & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = v & 0xff;
}

static void
ext_add(struct hello *h, uint16_t type, const uint8_t *data, size_t len)
{
	cr_assert(h->next < EXT_MAX);
	h->type[h->next] = type;
	h->data[h->next] = malloc(len ? len : 1);
	cr_assert_not_null(h->data[h->next]);
	if (len)
		memcpy(h->data[h->next], data, len);
	h->len[h->next] = len;
	h->next++;
}

static void
ext_del(struct hello *h, size_t i)
{
	free(h->data[i]);
	memmove(&h->type[i], &h->type[i + 1],
	    (h->next - i - 1) * sizeof(h->type[0]));
	memmove(&h->data[i], &h->data[i + 1],
	    (h->next - i - 1) * sizeof(h->data[0]));
	memmove(&h->len[i], &h->len[i + 1],
	    (h->next - i - 1) * sizeof(h->len[0]));
	h->next--;
}

static int
ext_find(const struct hello *h, uint16_t type)
{
	size_t i;

	for (i = 0; i < h->next; i++)
		if (h->type[i] == type)
			return (int)i;
	return -1;
}

static void
hello_free(struct hello *h)
{
	while (h->next > 0)
		ext_del(h, h->next - 1);
}

/* Take apart a one-record capture. */
static void
hello_load(const char *name, struct hello *h)
{
	uint8_t cap[CAP_MAX];
	const uint8_t *b;
	size_t n, o, end, elen;

	memset(h, 0, sizeof(*h));
	n = load(name, cap, sizeof(cap));
	cr_assert_eq(cap[0], 22);
	cr_assert_eq(get16(cap + 3), n - 5, "%s is not one record", name);
	cr_assert_eq(cap[5], 1);
	b = cap + 9;
	end = n - 9;
	o = 2 + 32;
	h->sid_off = o;
	o += 1 + b[o];
	h->cs_off = o;
	o += 2 + get16(b + o);
	h->comp_off = o;
	o += 1 + b[o];
	cr_assert(o < end);
	memcpy(h->pre, b, o);
	h->prelen = o;
	elen = get16(b + o);
	o += 2;
	cr_assert_eq(o + elen, end);
	while (o < end) {
		ext_add(h, get16(b + o), b + o + 4, get16(b + o + 2));
		o += 4 + get16(b + o + 2);
	}
}

/* The handshake message (with its 4-byte header) into out. */
static size_t
hello_build(const struct hello *h, uint8_t *out)
{
	size_t i, o = 4, elen = 0;

	memcpy(out + o, h->pre, h->prelen);
	o += h->prelen;
	if (!h->noext) {
		for (i = 0; i < h->next; i++)
			elen += 4 + h->len[i];
		put16(out + o, elen);
		o += 2;
		for (i = 0; i < h->next; i++) {
			put16(out + o, h->type[i]);
			put16(out + o + 2, h->len[i]);
			memcpy(out + o + 4, h->data[i], h->len[i]);
			o += 4 + h->len[i];
		}
	}
	out[0] = 1;
	put24(out + 1, o - 4);
	return o;
}

/*
 * Wrap handshake bytes in records whose payload sizes are sizes[0..n-1],
 * the last record taking the rest; with n == 0, records of at most 16384.
 */
static size_t
frame(const uint8_t *hs, size_t hslen, const size_t *sizes, size_t n,
    uint8_t *out)
{
	size_t i = 0, o = 0, left = hslen, take;

	while (left > 0) {
		if (n == 0)
			take = left > 16384 ? 16384 : left;
		else if (i + 1 < n)
			take = sizes[i];
		else
			take = left;
		cr_assert(take <= left);
		out[o] = 22;
		out[o + 1] = 3;
		out[o + 2] = 1;
		put16(out + o + 3, take);
		memcpy(out + o + 5, hs, take);
		o += 5 + take;
		hs += take;
		left -= take;
		i++;
	}
	return o;
}

/* The hello as one record (or as few of 16384 as it takes) in wire. */
static size_t
hello_wire(const struct hello *h)
{
	size_t n = hello_build(h, hsbuf);

	return frame(hsbuf, n, NULL, 0, wire);
}

/* A server_name extension body holding one host_name entry. */
static size_t
sni_body(const char *name, size_t len, uint8_t *out)
{
	put16(out, len + 3);
	out[2] = 0;
	put16(out + 3, len);
	memcpy(out + 5, name, len);
	return len + 5;
}

/* Replace (or add) the body of the extension of this type. */
static void
hello_set_ext(struct hello *h, uint16_t type, const uint8_t *b, size_t n)
{
	int i = ext_find(h, type);

	if (i == -1) {
		ext_add(h, type, b, n);
		return;
	}
	free(h->data[i]);
	h->data[i] = malloc(n ? n : 1);
	cr_assert_not_null(h->data[i]);
	memcpy(h->data[i], b, n);
	h->len[i] = n;
}

static void
hello_set_sni(struct hello *h, const char *name, size_t len)
{
	uint8_t b[1024];

	cr_assert(len < sizeof(b) - 5);
	hello_set_ext(h, 0, b, sni_body(name, len, b));
}

static void
expect_ok(const uint8_t *b, size_t n, const char *sni, size_t len)
{
	struct tls_hello out;
	int rv;

	rv = tls_hello_read(b, n, &out);
	cr_assert_eq(rv, TLS_OK, "rv %d why %s", rv,
	    out.why ? out.why : "(null)");
	cr_assert_eq(out.len, len, "len %zu, want %zu", out.len, len);
	if (sni == NULL)
		cr_assert_eq(out.has_sni, 0, "has_sni with %s", out.sni);
	else {
		cr_assert_eq(out.has_sni, 1);
		cr_assert_str_eq(out.sni, sni);
	}
	cr_assert_null(out.why);
}

static void
expect_bad(const uint8_t *b, size_t n, const char *why)
{
	struct tls_hello out;
	int rv;

	rv = tls_hello_read(b, n, &out);
	cr_assert_eq(rv, TLS_BAD, "rv %d, want BAD \"%s\"", rv, why);
	cr_assert_not_null(out.why);
	cr_assert_str_eq(out.why, why);
	cr_assert_eq(out.has_sni, 0);
	cr_assert_eq(out.len, 0);
}

static void
expect_need(const uint8_t *b, size_t n)
{
	struct tls_hello out;
	int rv;

	rv = tls_hello_read(b, n, &out);
	cr_assert_eq(rv, TLS_NEED_MORE, "%zu bytes: rv %d why %s", n, rv,
	    out.why ? out.why : "(null)");
	cr_assert_null(out.why);
	cr_assert_eq(out.has_sni, 0);
}

/* A hello with this name as its SNI, read from one record. */
static int
read_with_sni(const char *name, size_t len, struct tls_hello *out)
{
	struct hello h;
	size_t n;
	int rv;

	hello_load("hello-curl.bin", &h);
	hello_set_sni(&h, name, len);
	n = hello_wire(&h);
	rv = tls_hello_read(wire, n, out);
	hello_free(&h);
	return rv;
}

static void
sni_bad(const char *name, size_t len, const char *why)
{
	struct tls_hello out;
	int rv;

	rv = read_with_sni(name, len, &out);
	cr_assert_eq(rv, TLS_BAD, "SNI \"%.*s\": rv %d", (int)len, name, rv);
	cr_assert_str_eq(out.why, why, "SNI \"%.*s\": %s", (int)len, name,
	    out.why);
}

static void
sni_ok(const char *name, const char *want)
{
	struct tls_hello out;
	int rv;

	rv = read_with_sni(name, strlen(name), &out);
	cr_assert_eq(rv, TLS_OK, "SNI \"%s\": %s", name,
	    out.why ? out.why : "?");
	cr_assert_eq(out.has_sni, 1);
	cr_assert_str_eq(out.sni, want);
}

struct capture {
	const char	*file;
	const char	*sni;
	size_t		 size;
};

static const struct capture captures[] = {
	{ "hello-curl.bin", "example.test", 517 },
	{ "hello-openssl.bin", "api.example.com", 321 },
	{ "hello-nosni.bin", NULL, 297 },
	{ "hello-tls12.bin", "registry.npmjs.org", 215 },
	{ "hello-upper.bin", "api.example.com", 322 },
	{ "hello-python.bin", "pypi.org", 517 },
};
#define NCAPTURES (sizeof(captures) / sizeof(captures[0]))

Test(tls, captures)
{
	uint8_t b[CAP_MAX];
	size_t i, n;

	for (i = 0; i < NCAPTURES; i++) {
		n = load(captures[i].file, b, sizeof(b));
		cr_assert_eq(n, captures[i].size, "%s", captures[i].file);
		expect_ok(b, n, captures[i].sni, n);
	}
}

Test(tls, every_prefix_needs_more)
{
	uint8_t b[CAP_MAX];
	size_t i, k, n;

	for (i = 0; i < NCAPTURES; i++) {
		n = load(captures[i].file, b, sizeof(b));
		for (k = 0; k < n; k++)
			expect_need(b, k);
	}
	expect_need(NULL, 0);
}

/* Early data, the next record or any other bytes may follow the hello. */
Test(tls, bytes_after_hello)
{
	static const uint8_t appdata[] = { 23, 3, 3, 0, 2, 0xab, 0xcd };
	uint8_t b[CAP_MAX];
	size_t n;

	n = load("hello-curl.bin", b, sizeof(b));
	memcpy(b + n, appdata, sizeof(appdata));
	expect_ok(b, n + sizeof(appdata), "example.test", n);
	memcpy(b + n, "GET / HTTP/1.1\r\n", 16);
	expect_ok(b, n + 16, "example.test", n);
	expect_ok(b, n + 1, "example.test", n);
	/* A second hello: only the first is read. */
	n = load("hello-openssl.bin", b, sizeof(b));
	memcpy(b + n, b, n);
	expect_ok(b, 2 * n, "api.example.com", n);
}

Test(tls, two_records_every_split)
{
	struct hello h;
	size_t hslen, n, i;

	hello_load("hello-curl.bin", &h);
	hslen = hello_build(&h, hsbuf);
	for (i = 1; i < hslen; i++) {
		n = frame(hsbuf, hslen, &i, 2, wire);
		cr_assert_eq(n, hslen + 10);
		expect_ok(wire, n, "example.test", n);
	}
	hello_free(&h);
}

Test(tls, three_records)
{
	struct hello h;
	size_t hslen, n, i, j, k, sz[3];

	hello_load("hello-openssl.bin", &h);
	hslen = hello_build(&h, hsbuf);
	for (i = 1; i < hslen - 1; i += 7) {
		for (j = 1; i + j < hslen; j += 11) {
			sz[0] = i;
			sz[1] = j;
			n = frame(hsbuf, hslen, sz, 3, wire);
			cr_assert_eq(n, hslen + 15);
			expect_ok(wire, n, "api.example.com", n);
		}
	}
	/* The header itself split 1+2+rest, and every prefix of that. */
	sz[0] = 1;
	sz[1] = 2;
	n = frame(hsbuf, hslen, sz, 3, wire);
	for (k = 0; k < n; k++)
		expect_need(wire, k);
	expect_ok(wire, n, "api.example.com", n);
	hello_free(&h);
}

Test(tls, record_count_cap)
{
	struct hello h;
	size_t hslen, n, sz[TLS_HELLO_RECORDS_MAX + 1], i;

	hello_load("hello-curl.bin", &h);
	hslen = hello_build(&h, hsbuf);
	for (i = 0; i < TLS_HELLO_RECORDS_MAX + 1; i++)
		sz[i] = 4;
	n = frame(hsbuf, hslen, sz, TLS_HELLO_RECORDS_MAX, wire);
	cr_assert(n <= TLS_HELLO_WIRE_MAX);
	expect_ok(wire, n, "example.test", n);
	n = frame(hsbuf, hslen, sz, TLS_HELLO_RECORDS_MAX + 1, wire);
	expect_bad(wire, n, "ClientHello in too many records");
	/* Decided as soon as the 65th header starts. */
	expect_bad(wire, 64 * 9 + 1, "ClientHello in too many records");
	hello_free(&h);
}

Test(tls, record_version)
{
	uint8_t b[CAP_MAX];
	size_t n;
	int minor;

	n = load("hello-curl.bin", b, sizeof(b));
	for (minor = 1; minor <= 3; minor++) {
		b[2] = minor;
		expect_ok(b, n, "example.test", n);
	}
	b[2] = 0;			/* SSL 3.0 */
	expect_bad(b, n, "bad TLS record version");
	expect_bad(b, 3, "bad TLS record version");
	b[2] = 4;			/* 1.3 never appears in a record */
	expect_bad(b, n, "bad TLS record version");
	b[2] = 1;
	b[1] = 2;
	expect_bad(b, 2, "bad TLS record version");
	b[1] = 0x80;
	expect_bad(b, n, "bad TLS record version");
}

Test(tls, record_length_lies)
{
	uint8_t b[CAP_MAX];
	size_t n, rlen;

	n = load("hello-curl.bin", b, sizeof(b));
	rlen = n - 5;
	/* Zero, and past 2^14. */
	put16(b + 3, 0);
	expect_bad(b, 5, "bad TLS record length");
	expect_bad(b, n, "bad TLS record length");
	put16(b + 3, 16385);
	expect_bad(b, 5, "bad TLS record length");
	put16(b + 3, 0xffff);
	expect_bad(b, n, "bad TLS record length");
	put16(b + 3, 16384);
	expect_need(b, 5);
	/* Longer than the hello: the hello ends inside its record. */
	put16(b + 3, rlen + 1);
	expect_bad(b, n, "data after ClientHello in its record");
	memcpy(b + n, "\x17\x03\x03\x00\x01", 5);
	expect_bad(b, n + 5, "data after ClientHello in its record");
	/* Shorter: hello bytes are then taken for the next header. */
	put16(b + 3, rlen - 1);
	expect_bad(b, n, "record other than handshake inside ClientHello");
	put16(b + 3, rlen - 100);
	expect_need(b, 5 + rlen - 100);
	cr_assert_eq(tls_hello_read(b, n, &(struct tls_hello){ 0 }), TLS_BAD);
}

Test(tls, handshake_length_lies)
{
	uint8_t b[CAP_MAX];
	size_t n, hlen;

	n = load("hello-curl.bin", b, sizeof(b));
	hlen = n - 9;
	/* Longer: the record ends, the hello waits for another one. */
	put24(b + 6, hlen + 1);
	expect_need(b, n);
	memcpy(b + n, "\x15\x03\x03\x00\x02\x02\x28", 7);
	expect_bad(b, n + 7, "record other than handshake inside ClientHello");
	/* Shorter: the record holds more than the hello. */
	put24(b + 6, hlen - 1);
	expect_bad(b, n, "data after ClientHello in its record");
	/* Past the cap, as soon as the length is there. */
	put24(b + 6, TLS_HELLO_MAX - 3);
	expect_bad(b, 9, "ClientHello too large");
	put24(b + 6, 0xffffff);
	expect_bad(b, 9, "ClientHello too large");
	put24(b + 6, TLS_HELLO_MAX - 4);
	expect_need(b, n);
	/* Zero: an empty ClientHello. */
	put24(b + 6, 0);
	put16(b + 3, 4);
	expect_bad(b, 9, "bad ClientHello version");
}

Test(tls, hello_fields_lie)
{
	struct hello h;
	size_t n, o;

	hello_load("hello-curl.bin", &h);
	n = hello_wire(&h);
	expect_ok(wire, n, "example.test", n);
	o = 9 + h.sid_off;
	wire[o] = 33;
	expect_bad(wire, n, "bad session_id length");
	wire[o] = 32;
	o = 9 + h.cs_off;
	put16(wire + o, get16(wire + o) - 1);
	expect_bad(wire, n, "bad cipher_suites length");
	put16(wire + o, 0);
	expect_bad(wire, n, "bad cipher_suites length");
	put16(wire + o, 0xfffe);
	expect_bad(wire, n, "bad cipher_suites length");
	n = hello_wire(&h);
	o = 9 + h.comp_off;
	wire[o] = 0;
	expect_bad(wire, n, "bad compression_methods length");
	/* Longer: it eats the extensions, whose length is then wrong. */
	wire[o] = 2;
	expect_bad(wire, n, "extensions length mismatch");
	wire[o] = 0xff;
	expect_bad(wire, n, "extensions length mismatch");
	/* Past the end of the hello. */
	put24(wire + 6, h.comp_off + 2);
	put16(wire + 3, h.comp_off + 6);
	expect_bad(wire, 9 + h.comp_off + 2, "bad compression_methods length");
	n = hello_wire(&h);
	wire[9] = 2;
	expect_bad(wire, n, "bad ClientHello version");
	/* Cut in the random. */
	wire[9] = 3;
	put24(wire + 6, 20);
	put16(wire + 3, 24);
	expect_bad(wire, 29, "truncated ClientHello");
	hello_free(&h);
}

Test(tls, extensions_length_lies)
{
	struct hello h;
	size_t n, o, last;

	hello_load("hello-curl.bin", &h);
	n = hello_wire(&h);
	o = 9 + h.prelen;
	put16(wire + o, get16(wire + o) + 1);
	expect_bad(wire, n, "extensions length mismatch");
	put16(wire + o, get16(wire + o) - 2);
	expect_bad(wire, n, "extensions length mismatch");
	/* One byte of extensions block: its length cannot even be read. */
	put24(wire + 6, h.prelen + 1);
	put16(wire + 3, h.prelen + 5);
	expect_bad(wire, 9 + h.prelen + 1, "extensions length mismatch");

	/* An extension running past the block. */
	n = hello_wire(&h);
	last = n - 4 - h.len[h.next - 1];
	put16(wire + last + 2, h.len[h.next - 1] + 1);
	expect_bad(wire, n, "bad extension length");
	/* A stray byte after the last extension, inside the block. */
	n = hello_wire(&h);
	wire[n++] = 0;
	put16(wire + 3, n - 5);
	put24(wire + 6, n - 9);
	put16(wire + 9 + h.prelen, get16(wire + 9 + h.prelen) + 1);
	expect_bad(wire, n, "bad extension length");
	hello_free(&h);
}

Test(tls, no_extensions_block)
{
	struct hello h;
	size_t n;

	hello_load("hello-tls12.bin", &h);
	h.noext = 1;
	n = hello_wire(&h);
	expect_ok(wire, n, NULL, n);
	hello_free(&h);
}

Test(tls, sni_removed)
{
	struct hello h;
	size_t n;

	hello_load("hello-curl.bin", &h);
	ext_del(&h, ext_find(&h, 0));
	n = hello_wire(&h);
	expect_ok(wire, n, NULL, n);
	hello_free(&h);
}

Test(tls, two_server_name_extensions)
{
	struct hello h;
	size_t n;
	int i;

	hello_load("hello-curl.bin", &h);
	i = ext_find(&h, 0);
	cr_assert_eq(i, 0);
	ext_add(&h, 0, h.data[i], h.len[i]);
	n = hello_wire(&h);
	expect_bad(wire, n, "two server_name extensions");
	/* Even when the second names another host. */
	hello_free(&h);
	hello_load("hello-openssl.bin", &h);
	ext_add(&h, 0, (const uint8_t *)"\x00\x0c\x00\x00\x09" "evil.test",
	    14);
	n = hello_wire(&h);
	expect_bad(wire, n, "two server_name extensions");
	hello_free(&h);
}

Test(tls, server_name_list)
{
	struct hello h;
	uint8_t b[64];
	size_t n;

	hello_load("hello-curl.bin", &h);
	/* Two host_name entries in one list. */
	memcpy(b, "\x00\x10\x00\x00\x05" "a.com" "\x00\x00\x05" "b.com", 18);
	hello_set_ext(&h, 0, b, 18);
	n = hello_wire(&h);
	expect_bad(wire, n, "two host_name entries");
	/* Another name_type. */
	memcpy(b, "\x00\x08\x01\x00\x05" "a.com", 10);
	hello_set_ext(&h, 0, b, 10);
	n = hello_wire(&h);
	expect_bad(wire, n, "unknown server_name type");
	/* The list shorter or longer than the extension. */
	memcpy(b, "\x00\x07\x00\x00\x05" "a.com", 10);
	hello_set_ext(&h, 0, b, 10);
	n = hello_wire(&h);
	expect_bad(wire, n, "bad server_name list length");
	memcpy(b, "\x00\x09\x00\x00\x05" "a.com", 10);
	hello_set_ext(&h, 0, b, 10);
	n = hello_wire(&h);
	expect_bad(wire, n, "bad server_name list length");
	/* The name longer than the list. */
	memcpy(b, "\x00\x08\x00\x00\x06" "a.com", 10);
	hello_set_ext(&h, 0, b, 10);
	n = hello_wire(&h);
	expect_bad(wire, n, "bad server_name list length");
	/* Empty extension, empty list. */
	hello_set_ext(&h, 0, b, 0);
	n = hello_wire(&h);
	expect_bad(wire, n, "bad server_name list length");
	hello_set_ext(&h, 0, (const uint8_t *)"\x00\x00", 2);
	n = hello_wire(&h);
	expect_bad(wire, n, "bad server_name list length");
	/* A good list again. */
	memcpy(b, "\x00\x08\x00\x00\x05" "A.cOm", 10);
	hello_set_ext(&h, 0, b, 10);
	n = hello_wire(&h);
	expect_ok(wire, n, "a.com", n);
	hello_free(&h);
}

Test(tls, sni_names)
{
	char name[300];
	int i;

	sni_ok("example.com", "example.com");
	sni_ok("EXAMPLE.Com.", "example.com");
	sni_ok("xn--bcher-kva.example", "xn--bcher-kva.example");
	sni_ok("a", "a");
	memset(name, 'a', 63);
	strcpy(name + 63, ".com");
	sni_ok(name, name);
	memset(name, 'a', 64);
	strcpy(name + 64, ".com");
	sni_bad(name, strlen(name), "malformed SNI");
	sni_bad("exa mple.com", 12, "malformed SNI");
	sni_bad("under_score.com", 15, "malformed SNI");
	sni_bad("ex%61mple.com", 13, "malformed SNI");
	sni_bad("ex\0mple.com", 11, "malformed SNI");
	sni_bad("caf\xc3\xa9.com", 9, "malformed SNI");
	sni_bad("a..com", 6, "malformed SNI");
	sni_bad(".", 1, "malformed SNI");
	sni_bad("-a.com", 6, "malformed SNI");
	sni_bad("a.com\n", 6, "malformed SNI");
	sni_bad("", 0, "bad host_name length");
	memset(name, 'a', sizeof(name));
	sni_bad(name, 256, "bad host_name length");
	/* 255 bytes pass the length check but not host_canon's 253. */
	for (i = 63; i < 255; i += 64)
		name[i] = '.';
	sni_bad(name, 255, "malformed SNI");
}

Test(tls, sni_ip_literal)
{
	sni_bad("127.0.0.1", 9, "SNI is an IP address");
	sni_bad("1.2.3.4.", 8, "SNI is an IP address");
	sni_bad("8.8.8.8", 7, "SNI is an IP address");
	sni_bad("2130706433", 10, "SNI is an IP address");
	sni_bad("::1", 3, "SNI is an IP address");
	sni_bad("[::1]", 5, "SNI is an IP address");
	sni_ok("1.2.3.example", "1.2.3.example");
}

Test(tls, record_type)
{
	uint8_t b[CAP_MAX];
	size_t n;
	int t;

	n = load("hello-curl.bin", b, sizeof(b));
	for (t = 0; t < 256; t++) {
		if (t == 22)
			continue;
		b[0] = t;
		expect_bad(b, 1, "not a TLS handshake");
		expect_bad(b, n, "not a TLS handshake");
	}
}

Test(tls, later_record_type)
{
	struct hello h;
	size_t hslen, n, split = 100;

	hello_load("hello-curl.bin", &h);
	hslen = hello_build(&h, hsbuf);
	n = frame(hsbuf, hslen, &split, 2, wire);
	wire[5 + split] = 23;
	expect_bad(wire, 5 + split + 1,
	    "record other than handshake inside ClientHello");
	wire[5 + split] = 21;
	expect_bad(wire, n, "record other than handshake inside ClientHello");
	wire[5 + split] = 20;		/* change_cipher_spec */
	expect_bad(wire, n, "record other than handshake inside ClientHello");
	hello_free(&h);
}

Test(tls, handshake_type)
{
	uint8_t b[CAP_MAX];
	size_t n;

	n = load("hello-curl.bin", b, sizeof(b));
	b[5] = 2;			/* ServerHello */
	expect_bad(b, 6, "not a ClientHello");
	expect_bad(b, n, "not a ClientHello");
	b[5] = 0;
	expect_bad(b, n, "not a ClientHello");
}

Test(tls, not_tls)
{
	static const char *lines[] = {
		"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"SSH-2.0-OpenSSH_9.2\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\n\r\n",
		"\x80\x2e\x01\x03\x01",		/* SSLv2-style hello */
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		expect_bad((const uint8_t *)lines[i], strlen(lines[i]),
		    "not a TLS handshake");
		expect_bad((const uint8_t *)lines[i], 1,
		    "not a TLS handshake");
	}
}

/* A padding extension makes the handshake message exactly size bytes. */
static size_t
hello_sized(struct hello *h, size_t size)
{
	static uint8_t pad[TLS_HELLO_MAX];
	size_t base;
	int i;

	if ((i = ext_find(h, 21)) != -1)
		ext_del(h, i);
	base = hello_build(h, hsbuf);
	cr_assert(size >= base + 4);
	ext_add(h, 21, pad, size - base - 4);
	cr_assert_eq(hello_build(h, hsbuf), size);
	return size;
}

Test(tls, size_cap)
{
	struct hello h;
	size_t hslen, n, k;

	hello_load("hello-curl.bin", &h);
	hslen = hello_sized(&h, TLS_HELLO_MAX);
	n = frame(hsbuf, hslen, NULL, 0, wire);
	cr_assert_eq(n, TLS_HELLO_MAX + 10);	/* two full records */
	expect_ok(wire, n, "example.test", n);
	for (k = 0; k < n; k += 997)
		expect_need(wire, k);

	hslen = hello_sized(&h, TLS_HELLO_MAX + 1);
	n = frame(hsbuf, hslen, NULL, 0, wire);
	expect_bad(wire, n, "ClientHello too large");
	expect_bad(wire, 9, "ClientHello too large");

	/* A hello that fills one record exactly. */
	hslen = hello_sized(&h, 16384);
	n = frame(hsbuf, hslen, NULL, 0, wire);
	cr_assert_eq(n, 16384 + 5);
	expect_ok(wire, n, "example.test", n);
	hello_free(&h);
}

/*
 * The cursor only refuses a repeated server_name; OpenSSL refuses every
 * repeated extension before its callback runs.
 */
Test(tls, rejected_by_openssl)
{
	struct hello h;
	size_t n;
	int i;

	hello_load("hello-curl.bin", &h);
	i = ext_find(&h, 10);		/* supported_groups */
	cr_assert(i >= 0);
	ext_add(&h, 10, h.data[i], h.len[i]);
	n = hello_wire(&h);
	expect_bad(wire, n, "ClientHello rejected by TLS library");
	cr_assert_eq(ERR_peek_error(), 0);
	hello_free(&h);

	/* pre_shared_key must be the last extension (RFC 8446 4.2.11). */
	hello_load("hello-curl.bin", &h);
	ext_add(&h, 41, (const uint8_t *)"\x00\x00\x00\x00", 4);
	ext_add(&h, 0xfafa, NULL, 0);
	n = hello_wire(&h);
	expect_bad(wire, n, "ClientHello rejected by TLS library");
	hello_free(&h);
}

/* No state is kept between calls: results repeat, errors do not pile up. */
Test(tls, calls_independent)
{
	uint8_t good[CAP_MAX], bad[CAP_MAX];
	struct hello h;
	size_t n, nb, i;
	int j;

	n = load("hello-openssl.bin", good, sizeof(good));
	hello_load("hello-curl.bin", &h);
	j = ext_find(&h, 10);
	ext_add(&h, 10, h.data[j], h.len[j]);
	nb = hello_wire(&h);
	memcpy(bad, wire, nb);
	for (i = 0; i < 50; i++) {
		expect_ok(good, n, "api.example.com", n);
		expect_bad(bad, nb, "ClientHello rejected by TLS library");
		expect_need(good, n - 1);
		cr_assert_eq(ERR_peek_error(), 0);
	}
	hello_free(&h);
}

/* out is reset on every call, whatever it held. */
Test(tls, out_reset)
{
	struct tls_hello out;
	uint8_t b[CAP_MAX];
	size_t n;

	n = load("hello-curl.bin", b, sizeof(b));
	memset(&out, 0x5a, sizeof(out));
	cr_assert_eq(tls_hello_read(b, n, &out), TLS_OK);
	cr_assert_str_eq(out.sni, "example.test");
	cr_assert_eq(tls_hello_read(b, 3, &out), TLS_NEED_MORE);
	cr_assert_eq(out.has_sni, 0);
	cr_assert_eq(out.len, 0);
	cr_assert_null(out.why);
	cr_assert_eq(tls_hello_read((const uint8_t *)"G", 1, &out), TLS_BAD);
	cr_assert_eq(out.has_sni, 0);
	cr_assert_str_eq(out.sni, "");
}
