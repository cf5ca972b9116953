/* host_canon and host_is_below: the one name canonicaliser. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "aisb.h"

/* Canonicalise s (NUL-terminated); expect success with result want. */
static void
canon_ok(const char *s, const char *want)
{
	char out[HOST_CANON_SIZE];
	struct aisb_error err = { "" };

	cr_assert_eq(host_canon(s, strlen(s), out, &err), 0,
	    "\"%s\": %s", s, err.msg);
	cr_assert_str_eq(out, want, "\"%s\"", s);
}

/* Canonicalise s (n bytes); expect failure with exactly message want. */
static void
canon_bad_n(const char *s, size_t n, const char *want)
{
	char out[HOST_CANON_SIZE];
	struct aisb_error err = { "" };

	memset(out, 'X', sizeof(out));
	cr_assert_eq(host_canon(s, n, out, &err), -1, "\"%.*s\"", (int)n, s);
	cr_assert_str_eq(err.msg, want, "\"%.*s\"", (int)n, s);
	cr_assert_eq(out[0], '\0');
}

static void
canon_bad(const char *s, const char *want)
{
	canon_bad_n(s, strlen(s), want);
}

/* A label of n copies of c. */
static char *
label(char *buf, size_t n, char c)
{
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

Test(host, canon_simple)
{
	canon_ok("example.com", "example.com");
	canon_ok("a", "a");
	canon_ok("localhost", "localhost");
	canon_ok("a-b.c-d.e", "a-b.c-d.e");
	canon_ok("0.example", "0.example");
	canon_ok("123.example.com", "123.example.com");
	canon_ok("a1-2b.x", "a1-2b.x");
}

Test(host, canon_lowercase)
{
	canon_ok("ExAmPlE.COM", "example.com");
	canon_ok("API.ANTHROPIC.COM.", "api.anthropic.com");
	canon_ok("Z", "z");
}

Test(host, canon_trailing_dot)
{
	canon_ok("example.com.", "example.com");
	canon_bad("example.com..", "empty label at offset 12");
	canon_bad(".", "empty name");
	canon_bad("..", "empty label at offset 0");
}

Test(host, canon_empty)
{
	char out[HOST_CANON_SIZE];
	struct aisb_error err;

	canon_bad("", "empty name");
	cr_assert_eq(host_canon(NULL, 0, out, &err), -1);
	cr_assert_str_eq(err.msg, "empty name");
	/* A NULL error is allowed. */
	cr_assert_eq(host_canon("a b", 3, out, NULL), -1);
}

Test(host, canon_empty_labels)
{
	canon_bad("a..b", "empty label at offset 2");
	canon_bad(".example.com", "empty label at offset 0");
	canon_bad("example..com.", "empty label at offset 8");
}

Test(host, canon_punycode)
{
	canon_ok("xn--bcher-kva.example", "xn--bcher-kva.example");
	canon_ok("XN--BCHER-KVA.ch", "xn--bcher-kva.ch");
	canon_ok("xn--80ak6aa92e.com", "xn--80ak6aa92e.com");
}

Test(host, canon_hyphens)
{
	canon_bad("-a.example", "label starts with '-' at offset 0");
	canon_bad("a-.example", "label ends with '-' at offset 1");
	canon_bad("www.-x.com", "label starts with '-' at offset 4");
	canon_bad("www.x-.com", "label ends with '-' at offset 5");
	canon_bad("example.com-", "label ends with '-' at offset 11");
	canon_bad("-", "label starts with '-' at offset 0");
	canon_ok("a--b.c", "a--b.c");
}

Test(host, canon_bad_bytes)
{
	canon_bad("exa mple.com", "invalid byte 0x20 at offset 3");
	canon_bad("a%2e.com", "invalid byte 0x25 at offset 1");
	canon_bad("user@example.com", "invalid byte 0x40 at offset 4");
	canon_bad("a\\b.com", "invalid byte 0x5c at offset 1");
	canon_bad("under_score.com", "invalid byte 0x5f at offset 5");
	canon_bad("[example.com]", "invalid byte 0x5b at offset 0");
	canon_bad("example.com]", "invalid byte 0x5d at offset 11");
	canon_bad("a/b", "invalid byte 0x2f at offset 1");
	canon_bad("a:443", "invalid byte 0x3a at offset 1");
	canon_bad("a*.com", "invalid byte 0x2a at offset 1");
	canon_bad("*.example.com", "invalid byte 0x2a at offset 0");
	canon_bad("b\xc3\xbc" "cher.de", "invalid byte 0xc3 at offset 1");
	canon_bad("a\x7f", "invalid byte 0x7f at offset 1");
	canon_bad("a\tb", "invalid byte 0x09 at offset 1");
	canon_bad("a\r\n", "invalid byte 0x0d at offset 1");
	canon_bad("\xff", "invalid byte 0xff at offset 0");
	/* NUL inside the given length: no silent truncation. */
	canon_bad_n("evil.com\0.example.com", 21,
	    "invalid byte 0x00 at offset 8");
	canon_bad_n("a\0", 2, "invalid byte 0x00 at offset 1");
}

Test(host, canon_first_problem_reported)
{
	/* The empty label comes before the bad byte. */
	canon_bad("a..b_c", "empty label at offset 2");
	canon_bad("a_b..c", "invalid byte 0x5f at offset 1");
}

Test(host, canon_label_length)
{
	char l63[64], l64[65], name[300];

	label(l63, 63, 'a');
	label(l64, 64, 'b');
	snprintf(name, sizeof(name), "%s.com", l63);
	canon_ok(name, name);
	snprintf(name, sizeof(name), "%s", l63);
	canon_ok(name, name);
	snprintf(name, sizeof(name), "%s.com", l64);
	canon_bad(name, "label longer than 63 bytes at offset 0");
	snprintf(name, sizeof(name), "x.%s", l64);
	canon_bad(name, "label longer than 63 bytes at offset 2");
	snprintf(name, sizeof(name), "x.%s.", l64);
	canon_bad(name, "label longer than 63 bytes at offset 2");
}

/* A name of exactly n bytes made of 63-byte labels and a short tail. */
static void
long_name(char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (i % 64 == 63) ? '.' : 'a' + (char)(i % 26);
	/* The last byte must not be a dot. */
	if (buf[n - 1] == '.')
		buf[n - 1] = 'z';
	buf[n] = '\0';
}

Test(host, canon_name_length)
{
	char name[420], want[400], out[HOST_CANON_SIZE];
	struct aisb_error err;

	long_name(name, 253);
	canon_ok(name, name);
	cr_assert_eq(strlen(name), 253);

	/* 253 bytes and the root dot: still fine, dot removed. */
	long_name(want, 253);
	snprintf(name, sizeof(name), "%s.", want);
	canon_ok(name, want);

	long_name(name, 254);
	canon_bad(name, "name longer than 253 bytes");
	snprintf(want, sizeof(want), "%s.", name);
	canon_bad(want, "name longer than 253 bytes");

	long_name(name, 399);
	cr_assert_eq(host_canon(name, strlen(name), out, &err), -1);
	cr_assert_str_eq(err.msg, "name longer than 253 bytes");
	cr_assert_eq(out[0], '\0');
}

Test(host, canon_uses_length_not_nul)
{
	char out[HOST_CANON_SIZE];
	struct aisb_error err;

	cr_assert_eq(host_canon("example.comXYZ", 11, out, &err), 0);
	cr_assert_str_eq(out, "example.com");
}

Test(host, canon_idempotent)
{
	char out[HOST_CANON_SIZE], out2[HOST_CANON_SIZE];
	struct aisb_error err;

	cr_assert_eq(host_canon("WWW.Example.Com.", 16, out, &err), 0);
	cr_assert_eq(host_canon(out, strlen(out), out2, &err), 0);
	cr_assert_str_eq(out, out2);
}

Test(host, below)
{
	cr_assert(host_is_below("a.example.com", "example.com"));
	cr_assert(host_is_below("x.y.example.com", "example.com"));
	cr_assert(host_is_below("example.com", "example.com"));
	cr_assert(host_is_below("com", "com"));
	cr_assert(host_is_below("example.com", "com"));
	cr_assert_not(host_is_below("badexample.com", "example.com"));
	cr_assert_not(host_is_below("example.com", "a.example.com"));
	cr_assert_not(host_is_below("example.org", "example.com"));
	cr_assert_not(host_is_below("example.com.evil", "example.com"));
	cr_assert_not(host_is_below("xample.com", "example.com"));
	cr_assert_not(host_is_below(".example.com", "a.example.com"));
	cr_assert_not(host_is_below("example.com", ""));
	cr_assert_not(host_is_below("", "example.com"));
	cr_assert_not(host_is_below(NULL, "example.com"));
	cr_assert_not(host_is_below("example.com", NULL));
}
