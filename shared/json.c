/* JSON string output that stays one valid line whatever the input bytes. */
#include <stdio.h>
#include <string.h>

#include "aisb.h"

/* Length of the valid UTF-8 sequence at s (RFC 3629), or 0 if invalid. */
static size_t
utf8_seqlen(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

int
json_add_str(struct sbuf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	char esc[8];
	size_t i, l;

	if (sbuf_add(b, "\"", 1) == -1)
		return -1;
	for (i = 0; i < n; i += l) {
		l = 1;
		if (s[i] == '"' || s[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)s[i];
			if (sbuf_add(b, esc, 2) == -1)
				return -1;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", s[i]);
			if (sbuf_add(b, esc, 6) == -1)
				return -1;
		} else if (s[i] < 0x80) {
			if (sbuf_add(b, &s[i], 1) == -1)
				return -1;
		} else if ((l = utf8_seqlen(s + i, n - i)) > 0) {
			if (sbuf_add(b, &s[i], l) == -1)
				return -1;
		} else {
			l = 1;
			snprintf(esc, sizeof(esc), "\\\\x%02x", s[i]);
			if (sbuf_add(b, esc, 5) == -1)
				return -1;
		}
	}
	return sbuf_add(b, "\"", 1);
}

int
json_add_cstr(struct sbuf *b, const char *s)
{
	if (s == NULL)
		return sbuf_add(b, "null", 4);
	return json_add_str(b, s, strlen(s));
}
