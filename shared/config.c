/* Config files: "key = value" lines applied to a policy. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "policy.h"

#define CONFIG_LINES_MAX	10000	/* a config file is read by humans */

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Split "key = value"; blank and comment lines give 0. */
int
config_parse_line(char *line, char **key, char **value,
    struct aisb_error *err)
{
	char *s = line, *eq, *e;

	while (is_blank(*s))
		s++;
	if (*s == '\0' || *s == '#')
		return 0;
	if (strlen(line) > CONFIG_LINE_MAX)
		return aisb_err(err, "line longer than %d bytes",
		    CONFIG_LINE_MAX);
	if ((eq = strchr(s, '=')) == NULL)
		return aisb_err(err, "expected \"key = value\"");
	for (e = eq; e > s && is_blank(e[-1]); e--)
		;
	*e = '\0';
	for (e = s; *e != '\0'; e++)
		if (!((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9') ||
		    *e == '-'))
			return aisb_err(err, "invalid key \"%.64s\"", s);
	if (*s == '\0')
		return aisb_err(err, "missing key before '='");
	*key = s;
	s = eq + 1;
	while (is_blank(*s))
		s++;
	for (e = s + strlen(s); e > s && is_blank(e[-1]); e--)
		;
	*e = '\0';
	if (*s == '\0')
		return aisb_err(err, "%s: missing value", *key);
	*value = s;
	return 1;
}

/* Refuse a file others could have written, or not a regular one. */
int
config_check_file(const char *path, int fd, struct aisb_error *err)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return aisb_errno(err, "%s", path);
	if (!S_ISREG(st.st_mode))
		return aisb_err(err, "%s: not a regular file", path);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return aisb_err(err, "%s: group- or world-writable (mode "
		    "%04o); fix it with chmod go-w", path,
		    (unsigned int)(st.st_mode & 07777));
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return aisb_err(err, "%s: owned by uid %u, not by you", path,
		    (unsigned int)st.st_uid);
	if (st.st_size > CONFIG_FILE_MAX)
		return aisb_err(err, "%s: larger than %d bytes", path,
		    CONFIG_FILE_MAX);
	return 0;
}

/* Read a whole file (after the checks) into a NUL-terminated buffer. */
static char *
config_read(const char *path, int *missing, struct aisb_error *err)
{
	struct sbuf b;
	int fd;

	*missing = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1) {
		if (errno == ENOENT) {
			*missing = 1;
			return NULL;
		}
		aisb_errno(err, "%s", path);
		return NULL;
	}
	if (config_check_file(path, fd, err) == -1) {
		close(fd);
		return NULL;
	}
	sbuf_init(&b);
	if (sbuf_read_fd(&b, fd, CONFIG_FILE_MAX, path, err) == -1)
		goto fail;
	close(fd);
	if (b.len > 0 && memchr(b.p, '\0', b.len) != NULL) {
		aisb_err(err, "%s: contains a NUL byte", path);
		sbuf_free(&b);
		return NULL;
	}
	return sbuf_steal(&b);
fail:
	close(fd);
	sbuf_free(&b);
	return NULL;
}

/* Apply one line; errors come back as "FILE:LINE: reason". */
static int
config_apply_line(struct policy *p, const char *path, size_t lineno,
    char *line, enum policy_source src, struct aisb_error *err)
{
	const struct policy_key *k;
	struct policy_origin o;
	char *key, *value;
	int rv;

	policy_origin_set(&o, src, "%s:%zu", path, lineno);
	if ((rv = config_parse_line(line, &key, &value, err)) <= 0) {
		if (rv == -1) {
			char reason[AISB_ERR_MAX];

			snprintf(reason, sizeof(reason), "%s", err->msg);
			return aisb_err(err, "%s: %s", o.where, reason);
		}
		return 0;
	}
	if ((k = policy_key_by_name(key)) == NULL)
		return aisb_err(err, "%s: unknown key \"%s\"", o.where, key);
	return policy_set(p, k, value, &o, err);
}

/* Apply every line of a file; the first error stops it. */
int
config_load_file(struct policy *p, const char *path, enum policy_source src,
    struct aisb_error *err)
{
	char *buf, *line, *nl;
	size_t lineno = 0;
	int missing, rv = 0;

	if ((buf = config_read(path, &missing, err)) == NULL)
		return missing ? 0 : -1;
	for (line = buf; *line != '\0' && rv == 0; line = nl + 1) {
		if (++lineno > CONFIG_LINES_MAX) {
			rv = aisb_err(err, "%s: more than %d lines", path,
			    CONFIG_LINES_MAX);
			break;
		}
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (strlen(line) > 0 && line[strlen(line) - 1] == '\r')
			line[strlen(line) - 1] = '\0';
		rv = config_apply_line(p, path, lineno, line, src, err);
		if (nl == NULL)
			break;
	}
	free(buf);
	return rv;
}
