/* json_add_str/json_add_cstr and the sbuf they write into. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"

/* Encode s (n bytes) and expect exactly want (with its quotes). */
static void
enc_n(const char *s, size_t n, const char *want)
{
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(json_add_str(&b, s, n), 0);
	cr_assert_str_eq(b.p, want);
	cr_assert_eq(b.len, strlen(want));
	sbuf_free(&b);
}

static void
enc(const char *s, const char *want)
{
	enc_n(s, strlen(s), want);
}

Test(json, plain)
{
	enc("", "\"\"");
	enc("hello world", "\"hello world\"");
	enc("example.com:443", "\"example.com:443\"");
	enc("/path?q=1&r=2 <tag> 'x'", "\"/path?q=1&r=2 <tag> 'x'\"");
	enc("~}|{", "\"~}|{\"");
}

Test(json, quotes_and_backslash)
{
	enc("a\"b", "\"a\\\"b\"");
	enc("a\\b", "\"a\\\\b\"");
	enc("\"\\\"", "\"\\\"\\\\\\\"\"");
	enc("/", "\"/\"");
}

Test(json, control_bytes)
{
	enc("\n", "\"\\u000a\"");
	enc("a\r\nb", "\"a\\u000d\\u000ab\"");
	enc("\t", "\"\\u0009\"");
	enc("\x01\x1f", "\"\\u0001\\u001f\"");
	enc("\x1b[31m", "\"\\u001b[31m\"");
	enc("\x7f", "\"\\u007f\"");
	enc(" ", "\" \"");
	enc_n("a\0b", 3, "\"a\\u0000b\"");
	enc_n("\0", 1, "\"\\u0000\"");
}

Test(json, utf8_valid)
{
	/* U+00FC, U+20AC, U+1F600, and the edges of each length. */
	enc("b\xc3\xbc" "cher", "\"b\xc3\xbc" "cher\"");
	enc("\xe2\x82\xac", "\"\xe2\x82\xac\"");
	enc("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	enc("\xc2\x80", "\"\xc2\x80\"");
	enc("\xdf\xbf", "\"\xdf\xbf\"");
	enc("\xe0\xa0\x80", "\"\xe0\xa0\x80\"");
	enc("\xef\xbf\xbf", "\"\xef\xbf\xbf\"");
	enc("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");	/* U+D7FF */
	enc("\xee\x80\x80", "\"\xee\x80\x80\"");	/* U+E000 */
	enc("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"");
	enc("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");	/* U+10FFFF */
}

Test(json, utf8_overlong)
{
	enc("\xc0\xaf", "\"\\\\xc0\\\\xaf\"");
	enc("\xc1\xbf", "\"\\\\xc1\\\\xbf\"");
	enc("\xe0\x80\xaf", "\"\\\\xe0\\\\x80\\\\xaf\"");
	enc("\xe0\x9f\xbf", "\"\\\\xe0\\\\x9f\\\\xbf\"");
	enc("\xf0\x80\x80\xaf", "\"\\\\xf0\\\\x80\\\\x80\\\\xaf\"");
	enc("\xf0\x8f\xbf\xbf", "\"\\\\xf0\\\\x8f\\\\xbf\\\\xbf\"");
}

Test(json, utf8_surrogates_and_range)
{
	enc("\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\"");	/* U+D800 */
	enc("\xed\xbf\xbf", "\"\\\\xed\\\\xbf\\\\xbf\"");	/* U+DFFF */
	enc("\xf4\x90\x80\x80", "\"\\\\xf4\\\\x90\\\\x80\\\\x80\"");
	enc("\xf5\x80\x80\x80", "\"\\\\xf5\\\\x80\\\\x80\\\\x80\"");
	enc("\xff", "\"\\\\xff\"");
	enc("\xfe", "\"\\\\xfe\"");
}

Test(json, utf8_truncated_and_stray)
{
	enc("\xc3", "\"\\\\xc3\"");
	enc("\xe2\x82", "\"\\\\xe2\\\\x82\"");
	enc("\xf0\x9f\x98", "\"\\\\xf0\\\\x9f\\\\x98\"");
	/* Truncated by the next ASCII byte, which survives. */
	enc("\xe2\x82" "A", "\"\\\\xe2\\\\x82A\"");
	enc("\xc3" "\"", "\"\\\\xc3\\\"\"");
	enc("\x80", "\"\\\\x80\"");
	enc("a\xbf" "b", "\"a\\\\xbfb\"");
	/* A valid sequence right after an invalid byte is kept. */
	enc("\xff\xc3\xbc", "\"\\\\xff\xc3\xbc\"");
	/* Truncated by the length given, not by a NUL. */
	enc_n("\xe2\x82\xac", 2, "\"\\\\xe2\\\\x82\"");
}

Test(json, cstr)
{
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(json_add_cstr(&b, NULL), 0);
	cr_assert_str_eq(b.p, "null");
	cr_assert_eq(json_add_cstr(&b, ","), 0);
	cr_assert_eq(json_add_cstr(&b, "x\"y"), 0);
	cr_assert_str_eq(b.p, "null\",\"\"x\\\"y\"");
	sbuf_free(&b);
}

Test(json, appends)
{
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(sbuf_adds(&b, "{\"k\":"), 0);
	cr_assert_eq(json_add_str(&b, "v\n", 2), 0);
	cr_assert_eq(sbuf_adds(&b, "}"), 0);
	cr_assert_str_eq(b.p, "{\"k\":\"v\\u000a\"}");
	sbuf_free(&b);
}

Test(json, every_byte_one_line)
{
	struct sbuf b;
	char all[256];
	size_t i;

	for (i = 0; i < sizeof(all); i++)
		all[i] = (char)i;
	sbuf_init(&b);
	cr_assert_eq(json_add_str(&b, all, sizeof(all)), 0);
	cr_assert_eq(strlen(b.p), b.len);
	for (i = 0; i < b.len; i++) {
		cr_assert((unsigned char)b.p[i] >= 0x20, "byte %zu", i);
		cr_assert((unsigned char)b.p[i] < 0x7f, "byte %zu", i);
	}
	sbuf_free(&b);
}

Test(sbuf, basics)
{
	struct sbuf b;
	char *p;

	sbuf_init(&b);
	cr_assert_null(b.p);
	cr_assert_eq(b.len, 0);
	cr_assert_eq(sbuf_add(&b, "", 0), 0);
	cr_assert_not_null(b.p);
	cr_assert_str_eq(b.p, "");
	cr_assert_eq(sbuf_add(&b, "abc", 2), 0);
	cr_assert_eq(sbuf_adds(&b, "cd"), 0);
	cr_assert_eq(sbuf_printf(&b, "-%d-%s", 42, "x"), 0);
	cr_assert_str_eq(b.p, "abcd-42-x");
	cr_assert_eq(b.len, 9);
	sbuf_reset(&b);
	cr_assert_eq(b.len, 0);
	cr_assert_str_eq(b.p, "");
	cr_assert_eq(sbuf_printf(&b, "%s", ""), 0);
	cr_assert_str_eq(b.p, "");
	cr_assert_eq(sbuf_adds(&b, "kept"), 0);
	p = sbuf_steal(&b);
	cr_assert_str_eq(p, "kept");
	cr_assert_null(b.p);
	cr_assert_eq(b.len, 0);
	free(p);
	p = sbuf_steal(&b);
	cr_assert_str_eq(p, "");
	free(p);
	sbuf_free(&b);
	sbuf_reset(&b);
}

Test(sbuf, grows)
{
	struct sbuf b;
	size_t i;

	sbuf_init(&b);
	for (i = 0; i < 10000; i++)
		cr_assert_eq(sbuf_add(&b, "0123456789", 10), 0);
	cr_assert_eq(b.len, 100000);
	cr_assert(b.cap > b.len);
	cr_assert_eq(b.p[b.len], '\0');
	cr_assert_eq(memcmp(b.p + 99990, "0123456789", 10), 0);
	cr_assert_eq(sbuf_printf(&b, "%0500d", 7), 0);
	cr_assert_eq(b.len, 100500);
	cr_assert_eq(b.p[100499], '7');
	cr_assert_eq(b.p[100000], '0');
	sbuf_free(&b);
}

Test(sbuf, binary)
{
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(sbuf_add(&b, "a\0b", 3), 0);
	cr_assert_eq(b.len, 3);
	cr_assert_eq(memcmp(b.p, "a\0b", 4), 0);
	sbuf_free(&b);
}

Test(sbuf, refuses_huge)
{
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(sbuf_add(&b, "x", 1), 0);
	/* The size check fires before any memory is touched. */
	cr_assert_eq(sbuf_add(&b, "x", SIZE_MAX - 1), -1);
	cr_assert_eq(sbuf_add(&b, "x", SIZE_MAX / 2), -1);
	cr_assert_eq(b.len, 1);
	cr_assert_str_eq(b.p, "x");
	sbuf_free(&b);
}

/* sbuf_read_fd: a file of exactly max bytes reads; one more is refused,
 * naming the file. */
static int
pipe_with(size_t n)
{
	char buf[9000];
	int fds[2];

	cr_assert_lt(n, sizeof(buf));
	memset(buf, 'x', n);
	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(write(fds[1], buf, n), (ssize_t)n);
	close(fds[1]);
	return fds[0];
}

Test(buf, read_fd_at_and_past_the_cap)
{
	struct aisb_error err;
	struct sbuf b;
	int fd;

	sbuf_init(&b);
	fd = pipe_with(5000);
	cr_assert_eq(sbuf_read_fd(&b, fd, 5000, "f", &err), 0);
	cr_assert_eq(b.len, 5000);
	close(fd);
	sbuf_free(&b);
	fd = pipe_with(5001);
	cr_assert_eq(sbuf_read_fd(&b, fd, 5000, "some/file", &err), -1);
	cr_assert_str_eq(err.msg, "some/file: larger than 5000 bytes");
	close(fd);
	sbuf_free(&b);
}
