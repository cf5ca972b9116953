/* Errors from library code: a message for main() to print. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "aisb.h"

/* Fill err with a formatted message; returns -1 for "return aisb_err(...)". */
int
aisb_err(struct aisb_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* Like aisb_err, with ": strerror(errno)" appended; errno is saved first. */
int
aisb_errno(struct aisb_error *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(saved));
	errno = saved;
	return -1;
}
