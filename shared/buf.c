/* A growable, always NUL-terminated byte buffer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"

void
sbuf_init(struct sbuf *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

void
sbuf_free(struct sbuf *b)
{
	free(b->p);
	sbuf_init(b);
}

void
sbuf_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

/* Make room for n more bytes and the terminating NUL. */
static int
sbuf_grow(struct sbuf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (n > SIZE_MAX / 2 - b->len - 1)
		return -1;
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

int
sbuf_add(struct sbuf *b, const void *data, size_t n)
{
	if (sbuf_grow(b, n) == -1)
		return -1;
	if (n > 0)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int
sbuf_adds(struct sbuf *b, const char *s)
{
	return sbuf_add(b, s, strlen(s));
}

int
sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || sbuf_grow(b, (size_t)n) == -1)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

char *
sbuf_steal(struct sbuf *b)
{
	char *p = b->p;

	if (p == NULL)
		p = strdup("");
	sbuf_init(b);
	return p;
}

/*
 * Append everything fd holds until EOF, refusing more than max bytes in all
 * (errors name path). The read buffer is wiped: callers read secrets too.
 */
int
sbuf_read_fd(struct sbuf *b, int fd, size_t max, const char *path,
    struct aisb_error *err)
{
	char chunk[4096];
	ssize_t n;
	int rv = 0;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rv = aisb_errno(err, "%s", path);
			break;
		}
		if (n == 0)
			break;
		if (b->len + (size_t)n > max) {
			rv = aisb_err(err, "%s: larger than %zu bytes", path, max);
			break;
		}
		if (sbuf_add(b, chunk, (size_t)n) == -1) {
			rv = aisb_err(err, "out of memory");
			break;
		}
	}
	explicit_bzero(chunk, sizeof(chunk));
	return rv;
}
