/*
 * The sandbox and gate images: the base pinned by digest, the build
 * context (the installed sources, the extra CA certificates), the tag (a
 * hash of the Containerfile, which names every input), podman build with
 * its progress on the terminal and its log under the state directory.
 *
 * Every program runs from an argv array (fork and exec); nothing here
 * builds a shell command line.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

extern char **environ;

/* Caps on the build context: the sources are a few hundred kilobytes. */
#define CTX_FILES_MAX	4096
#define CTX_FILE_MAX	(4 * 1024 * 1024)
#define CTX_TOTAL_MAX	(32 * 1024 * 1024)
#define CTX_DEPTH_MAX	8
#define CA_FILE_MAX	(1024 * 1024)
#define CA_CERTS_MAX	256
#define PIN_FILE_MAX	4096
#define CAPTURE_MAX	(1024 * 1024)
#define SOURCES_MAX	(1024 * 1024)	/* one apt sources file */
#define DAY		86400

#define APT_SOURCES	"/etc/apt/sources.list"
#define APT_SOURCES_D	"/etc/apt/sources.list.d"
#define DEBOOTSTRAP_TAG	"localhost/aisb-base:debootstrap-"

/* The project's sources under data-dir: these files, and every directory
 * with a meson.build but the tests (the build stage sets -Dtests=false). */
static const char *const src_files[] = { "meson.build", "meson_options.txt",
	NULL };

enum base_mode {
	BASE_PREVIEW,	/* the recorded pin only: no network, no podman */
	BASE_BUILD,	/* the TTL rule decides */
	BASE_REFRESH,	/* re-resolve now */
};

/* Everything one build needs. */
struct image_spec {
	struct image_pin	 pin;
	int			 pinned;	/* pin.digest is the base's */
	int			 had_pin;	/* a pin was recorded before */
	struct image_context	 ctx;
	struct sbuf		 cf;		/* the Containerfile */
	char			 hash[65];	/* of the context */
};

const char *
image_role_name(enum image_role role)
{
	return role == IMAGE_ROLE_GATE ? "gate" : "sandbox";
}

/* A progress line on the terminal. */
static void __attribute__((format(printf, 1, 2)))
image_say(const char *fmt, ...)
{
	va_list ap;

	fputs("ai-sandbox: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Lowercase hex of n bytes into out (2n + 1 bytes). */
static void
hex_encode(const unsigned char *md, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0x0f];
	}
	out[2 * n] = '\0';
}

/* "localhost/aisb-sandbox:" and the first 16 hex digits of the
 * Containerfile's SHA-256. */
int
image_tag_of(const char *cf, size_t len, enum image_role role, char *tag,
    size_t tagsz)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	int n;

	if (EVP_Digest(cf, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32)
		return -1;
	hex_encode(md, mdlen, hex);
	n = snprintf(tag, tagsz, "%s:%.16s", role == IMAGE_ROLE_GATE ?
	    AISB_IMAGE_GATE : AISB_IMAGE_SANDBOX, hex);
	return n < 0 || (size_t)n >= tagsz ? -1 : 0;
}

/* --- the base pin ------------------------------------------------------ */

enum image_pin_action
image_pin_decide(const struct image_pin *pin, int64_t now, int64_t ttl_days,
    int auto_update, int refresh)
{
	int64_t age;

	if (pin == NULL || refresh)
		return IMAGE_PIN_RESOLVE;
	if (!auto_update || ttl_days < 0)
		return IMAGE_PIN_USE;
	if (ttl_days == 0)
		return IMAGE_PIN_RESOLVE;
	age = now - pin->resolved;
	if (age < 0)
		age = 0;		/* a clock set back: not stale */
	return age / DAY >= ttl_days ? IMAGE_PIN_RESOLVE : IMAGE_PIN_USE;
}

/* One word of a pin line into out; -1 when empty, too long or spaced. */
static int
pin_word(const char *v, char *out, size_t outsz)
{
	size_t len = strlen(v);

	if (len == 0 || len >= outsz || strpbrk(v, " \t") != NULL)
		return -1;
	memcpy(out, v, len + 1);
	return 0;
}

/* "ref REF", "digest sha256:HEX", "resolved SECONDS", "via HOW". */
int
image_pin_parse(const char *text, const char *ref, struct image_pin *pin,
    struct aisb_error *err)
{
	const char *s = text, *nl, *sp;
	char line[512], *end;
	size_t len;
	int lineno = 0, seen = 0;
	long long t;

	memset(pin, 0, sizeof(*pin));
	while (*s != '\0') {
		lineno++;
		nl = strchr(s, '\n');
		len = nl ? (size_t)(nl - s) : strlen(s);
		if (len >= sizeof(line))
			return aisb_err(err, "line %d: too long", lineno);
		memcpy(line, s, len);
		line[len] = '\0';
		s += len + (nl != NULL);
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if ((sp = strchr(line, ' ')) == NULL)
			return aisb_err(err, "line %d: not \"KEY VALUE\"",
			    lineno);
		if (strncmp(line, "ref ", 4) == 0) {
			if (pin_word(sp + 1, pin->ref, sizeof(pin->ref)) == -1)
				goto bad;
			seen |= 1;
		} else if (strncmp(line, "digest ", 7) == 0) {
			if (!containerfile_digest_valid(sp + 1))
				goto bad;
			snprintf(pin->digest, sizeof(pin->digest), "%s", sp + 1);
			seen |= 2;
		} else if (strncmp(line, "resolved ", 9) == 0) {
			errno = 0;
			t = strtoll(sp + 1, &end, 10);
			if (errno != 0 || *end != '\0' || end == sp + 1 || t < 0)
				goto bad;
			pin->resolved = (int64_t)t;
			seen |= 4;
		} else if (strncmp(line, "via ", 4) == 0) {
			if (pin_word(sp + 1, pin->via, sizeof(pin->via)) == -1)
				goto bad;
			seen |= 8;
		} else
			return aisb_err(err, "line %d: unknown key", lineno);
	}
	if (seen != 15)
		return aisb_err(err, "incomplete: it needs ref, digest, "
		    "resolved and via");
	if (strcmp(pin->ref, ref) != 0)
		return aisb_err(err, "records %s, not %s", pin->ref, ref);
	return 0;
bad:
	return aisb_err(err, "line %d: invalid value", lineno);
}

int
image_pin_format(const struct image_pin *pin, struct sbuf *b)
{
	return sbuf_printf(b, "# ai-sandbox: the base image's recorded digest "
	    "(delete the file to re-resolve)\n"
	    "ref %s\ndigest %s\nresolved %lld\nvia %s\n", pin->ref,
	    pin->digest, (long long)pin->resolved, pin->via);
}

/* $cache-dir/base/ and the reference made a file name, with a hash. */
char *
image_pin_path(const struct policy *p)
{
	char name[128], *path;
	size_t i;
	const char *r = p->base_image;

	for (i = 0; r[i] != '\0' && i < 80; i++)
		name[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
		    "QRSTUVWXYZ0123456789.-", r[i]) != NULL ? r[i] : '_';
	snprintf(name + i, sizeof(name) - i, "-%016llx",
	    (unsigned long long)policy_hash(r));
	if (asprintf(&path, "%s/base/%s", p->cache_dir, name) < 0)
		return NULL;
	return path;
}

/* Read a small file the user owns and no one else can write. */
static int
read_own_file(const char *path, size_t max, struct sbuf *b,
    struct aisb_error *err)
{
	struct stat st;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return errno == ENOENT ? 0 : aisb_errno(err, "%s", path);
	if (fstat(fd, &st) == -1) {
		aisb_errno(err, "%s", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) != 0) {
		aisb_err(err, "%s: not a regular file of yours that only you "
		    "can write", path);
		goto fail;
	}
	if (sbuf_read_fd(b, fd, max, path, err) == -1)
		goto fail;
	close(fd);
	return 1;
fail:
	close(fd);
	return -1;
}

int
image_pin_load(const struct policy *p, struct image_pin *pin,
    struct aisb_error *err)
{
	struct sbuf b;
	char *path;
	char reason[AISB_ERR_MAX];
	int rv;

	if ((path = image_pin_path(p)) == NULL)
		return aisb_err(err, "out of memory");
	sbuf_init(&b);
	rv = read_own_file(path, PIN_FILE_MAX, &b, err);
	if (rv == 1 && image_pin_parse(b.p ? b.p : "", p->base_image, pin,
	    err) == -1) {
		snprintf(reason, sizeof(reason), "%s", err->msg);
		aisb_err(err, "%s: %s (delete it to re-resolve the base)",
		    path, reason);
		rv = -1;
	}
	sbuf_free(&b);
	free(path);
	return rv;
}

/* mkdir -p with mode 0700 for what it creates. */
static int
mkdirs(const char *path, struct aisb_error *err)
{
	char buf[PATH_MAX], *s;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return aisb_err(err, "%s: path too long", path);
	for (s = buf + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		if (*s == '/') {
			*s = '\0';
			if (mkdir(buf, 0700) == -1 && errno != EEXIST)
				return aisb_errno(err, "%s", buf);
			*s = '/';
			continue;
		}
		if (mkdir(buf, 0700) == -1 && errno != EEXIST)
			return aisb_errno(err, "%s", buf);
		return 0;
	}
}

/* Write data to path through a temporary file and rename, mode 0600. */
static int
write_file_atomic(const char *path, const char *data, size_t len,
    struct aisb_error *err)
{
	char tmp[PATH_MAX];
	ssize_t n;
	size_t off = 0;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return aisb_err(err, "%s: path too long", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return aisb_errno(err, "%s", tmp);
	while (off < len) {
		n = write(fd, data + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			aisb_errno(err, "%s", tmp);
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += (size_t)n;
	}
	if (fchmod(fd, 0600) == -1 || close(fd) == -1) {
		aisb_errno(err, "%s", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) == -1) {
		aisb_errno(err, "%s", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

int
image_pin_store(const struct policy *p, const struct image_pin *pin,
    struct aisb_error *err)
{
	struct sbuf b;
	char *path, *dir;
	int rv = -1;

	if ((path = image_pin_path(p)) == NULL)
		return aisb_err(err, "out of memory");
	if (asprintf(&dir, "%s/base", p->cache_dir) < 0) {
		free(path);
		return aisb_err(err, "out of memory");
	}
	sbuf_init(&b);
	if (mkdirs(dir, err) == -1)
		goto out;
	if (image_pin_format(pin, &b) == -1) {
		aisb_err(err, "out of memory");
		goto out;
	}
	rv = write_file_atomic(path, b.p, b.len, err);
out:
	sbuf_free(&b);
	free(dir);
	free(path);
	return rv;
}

/* --- the host's Debian mirror ------------------------------------------ */

/* One "deb" source of the host: a URI and a suite. */
struct mirror {
	char	uri[512];
	char	suite[128];
};
POLICY_VEC(mirrors, struct mirror);

static int
mirror_add(struct mirrors *m, const char *uri, size_t ulen,
    const char *suite, size_t slen)
{
	struct mirror *e;
	void *v;

	if (ulen == 0 || slen == 0 || ulen >= sizeof(e->uri) ||
	    slen >= sizeof(e->suite) || m->n >= 1024)
		return 0;
	if (m->n == m->cap) {
		if ((v = realloc(m->v, (m->cap ? m->cap * 2 : 8) *
		    sizeof(*m->v))) == NULL)
			return -1;
		m->v = v;
		m->cap = m->cap ? m->cap * 2 : 8;
	}
	e = &m->v[m->n++];
	memcpy(e->uri, uri, ulen);
	e->uri[ulen] = '\0';
	memcpy(e->suite, suite, slen);
	e->suite[slen] = '\0';
	return 0;
}

/* The next blank-separated word of [*s, end); its length, 0 at the end. */
static size_t
next_word(const char **s, const char *end, const char **word)
{
	const char *p = *s;
	size_t len;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*word = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	len = (size_t)(p - *word);
	*s = p;
	return len;
}

/* "deb [OPTIONS] URI SUITE COMPONENT...", one a line. */
static int
mirrors_oneline(const char *text, struct mirrors *m)
{
	const char *s = text, *end, *w, *uri;
	size_t len, ulen;

	for (; *s != '\0'; s = *end ? end + 1 : end) {
		end = s + strcspn(s, "\n");
		len = next_word(&s, end, &w);
		if (len != 3 || strncmp(w, "deb", 3) != 0)
			continue;
		len = next_word(&s, end, &w);
		if (len > 0 && w[0] == '[') {
			/* options up to the word that ends with ']' */
			while (len > 0 && w[len - 1] != ']')
				len = next_word(&s, end, &w);
			len = next_word(&s, end, &w);
		}
		uri = w;
		ulen = len;
		len = next_word(&s, end, &w);
		if (mirror_add(m, uri, ulen, w, len) == -1)
			return -1;
	}
	return 0;
}

/* The value of a deb822 field on one line, or NULL. */
static const char *
field(const char *line, const char *end, const char *name)
{
	size_t n = strlen(name);

	if ((size_t)(end - line) > n && strncasecmp(line, name, n) == 0 &&
	    line[n] == ':')
		return line + n + 1;
	return NULL;
}

/* Add the URIs x Suites of one deb822 stanza, when it is an enabled deb. */
static int
stanza_flush(struct mirrors *m, const struct sbuf *types,
    const struct sbuf *uris, const struct sbuf *suites, int enabled)
{
	const char *u, *s, *uw, *sw, *ue, *se;
	size_t ul, sl, tl;
	int deb = 0;

	if (!enabled || types->len == 0)
		return 0;
	for (u = types->p, ue = types->p + types->len;
	    (tl = next_word(&u, ue, &uw)) > 0;)
		if (tl == 3 && strncmp(uw, "deb", 3) == 0)
			deb = 1;
	if (!deb || uris->len == 0 || suites->len == 0)
		return 0;
	for (u = uris->p, ue = uris->p + uris->len;
	    (ul = next_word(&u, ue, &uw)) > 0;)
		for (s = suites->p, se = suites->p + suites->len;
		    (sl = next_word(&s, se, &sw)) > 0;)
			if (mirror_add(m, uw, ul, sw, sl) == -1)
				return -1;
	return 0;
}

/* Stanzas of "Types:", "URIs:", "Suites:" and "Enabled:" fields. */
static int
mirrors_deb822(const char *text, struct mirrors *m)
{
	struct sbuf types, uris, suites, *last = NULL;
	const char *s = text, *end, *v;
	int enabled = 1, rv = -1;

	sbuf_init(&types);
	sbuf_init(&uris);
	sbuf_init(&suites);
	for (;; s = end + 1) {
		end = s + strcspn(s, "\n");
		if (s == end || *s == '\0') {
			if (stanza_flush(m, &types, &uris, &suites, enabled) ==
			    -1)
				goto out;
			sbuf_reset(&types);
			sbuf_reset(&uris);
			sbuf_reset(&suites);
			enabled = 1;
			last = NULL;
		} else if (*s == '#') {
			;
		} else if (*s == ' ' || *s == '\t') {
			/* a continuation line of the last field */
			if (last != NULL && (sbuf_adds(last, " ") == -1 ||
			    sbuf_add(last, s, (size_t)(end - s)) == -1))
				goto out;
		} else {
			last = NULL;
			if ((v = field(s, end, "Types")) != NULL)
				last = &types;
			else if ((v = field(s, end, "URIs")) != NULL)
				last = &uris;
			else if ((v = field(s, end, "Suites")) != NULL)
				last = &suites;
			else if ((v = field(s, end, "Enabled")) != NULL) {
				while (v < end && (*v == ' ' || *v == '\t'))
					v++;
				enabled = !(end - v >= 2 &&
				    strncasecmp(v, "no", 2) == 0);
			}
			if (last != NULL && (sbuf_adds(last, " ") == -1 ||
			    sbuf_add(last, v, (size_t)(end - v)) == -1))
				goto out;
		}
		if (*end == '\0')
			break;
	}
	rv = stanza_flush(m, &types, &uris, &suites, enabled);
out:
	sbuf_free(&types);
	sbuf_free(&uris);
	sbuf_free(&suites);
	return rv;
}

/* Does the URI's path end in "/debian" (a Debian archive mirror)? */
static int
uri_is_debian(const char *uri)
{
	size_t len = strlen(uri);

	while (len > 0 && uri[len - 1] == '/')
		len--;
	return len > 7 && strncmp(uri + len - 7, "/debian", 7) == 0 &&
	    (strncmp(uri, "http://", 7) == 0 ||
	    strncmp(uri, "https://", 8) == 0);
}

/* The sources mmdebstrap gets: SUITE, SUITE-updates and SUITE-security
 * where the host names them, else SUITE from its Debian mirror. */
static int
mirrors_select(const struct mirrors *m, const char *suite, struct argv *out)
{
	char want[3][160];
	size_t i, j;
	int added = 0, main_found = 0;

	snprintf(want[0], sizeof(want[0]), "%s", suite);
	snprintf(want[1], sizeof(want[1]), "%s-updates", suite);
	snprintf(want[2], sizeof(want[2]), "%s-security", suite);
	for (j = 0; j < 3; j++) {
		for (i = 0; i < m->n; i++) {
			if (strcmp(m->v[i].suite, want[j]) != 0 ||
			    (strncmp(m->v[i].uri, "http://", 7) != 0 &&
			    strncmp(m->v[i].uri, "https://", 8) != 0))
				continue;
			if (argv_addf(out, "deb %s %s main", m->v[i].uri,
			    want[j]) == -1)
				return -1;
			added++;
			main_found |= j == 0;
			break;
		}
	}
	if (main_found)
		return added;
	for (i = 0; i < m->n; i++)
		if (uri_is_debian(m->v[i].uri))
			break;
	if (i == m->n)
		return added;
	/* SUITE first: it is the one mmdebstrap bootstraps from. */
	if (argv_addf(out, "deb %s %s main", m->v[i].uri, suite) == -1)
		return -1;
	if (added > 0) {
		char *first = out->v[out->n - 1];

		memmove(&out->v[out->n - added], &out->v[out->n - added - 1],
		    (size_t)added * sizeof(*out->v));
		out->v[out->n - added - 1] = first;
	}
	return added + 1;
}

/* Parse one sources text into m. */
static int
mirrors_parse(const char *text, int deb822, struct mirrors *m)
{
	return deb822 ? mirrors_deb822(text, m) : mirrors_oneline(text, m);
}

int
image_mirror_lines(const char *text, int deb822, const char *suite,
    struct argv *out)
{
	struct mirrors m;
	int rv = -1;

	memset(&m, 0, sizeof(m));
	if (mirrors_parse(text, deb822, &m) == 0)
		rv = mirrors_select(&m, suite, out);
	free(m.v);
	return rv;
}

/* Read a whole text file anyone may own: 1 read, 0 missing or unreadable. */
static int
read_file_text(const char *path, struct sbuf *b)
{
	char chunk[4096];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || b->len + (size_t)n > SOURCES_MAX ||
		    sbuf_add(b, chunk, (size_t)n) == -1)
			break;
	}
	close(fd);
	if (n != 0)
		return 0;
	return sbuf_add(b, "", 0) == 0 ? 1 : 0;
}

/* Every source the host's apt reads, in apt's order, then the choice. */
static int
host_mirror_lines(const char *suite, struct argv *out,
    struct aisb_error *err)
{
	struct dirent **names = NULL;
	struct mirrors m;
	struct sbuf b;
	char path[PATH_MAX];
	int n, i, rv = 0, deb822;
	size_t len;

	memset(&m, 0, sizeof(m));
	sbuf_init(&b);
	if (read_file_text(APT_SOURCES, &b) == 1 &&
	    mirrors_parse(b.p, 0, &m) == -1)
		rv = -1;
	n = scandir(APT_SOURCES_D, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		len = strlen(names[i]->d_name);
		deb822 = len > 8 && strcmp(names[i]->d_name + len - 8,
		    ".sources") == 0;
		if (rv == 0 && (deb822 || (len > 5 &&
		    strcmp(names[i]->d_name + len - 5, ".list") == 0))) {
			snprintf(path, sizeof(path), "%s/%s", APT_SOURCES_D,
			    names[i]->d_name);
			sbuf_reset(&b);
			if (read_file_text(path, &b) == 1 &&
			    mirrors_parse(b.p, deb822, &m) == -1)
				rv = -1;
		}
		free(names[i]);
	}
	free(names);
	sbuf_free(&b);
	if (rv == 0 && (rv = mirrors_select(&m, suite, out)) == 0)
		aisb_err(err, "no Debian mirror for %s in the host's apt "
		    "sources (" APT_SOURCES ", " APT_SOURCES_D "/): "
		    "debootstrap:%s builds from the mirror this host uses",
		    suite, suite);
	else if (rv == -1)
		aisb_err(err, "out of memory");
	free(m.v);
	return rv > 0 ? 0 : -1;
}

/* --- the build context ------------------------------------------------- */

void
image_context_init(struct image_context *c)
{
	memset(c, 0, sizeof(*c));
}

void
image_context_free(struct image_context *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].data);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Add a copy of one file; a path is relative, without "." or "..". */
int
image_context_add(struct image_context *c, const char *path,
    const char *data, size_t len, struct aisb_error *err)
{
	struct image_file *f;
	size_t total = 0, i;
	void *v;

	if (path[0] == '/' || strstr(path, "..") != NULL)
		return aisb_err(err, "%s: not a relative path", path);
	for (i = 0; i < c->n; i++)
		total += c->v[i].len;
	if (c->n >= CTX_FILES_MAX || len > CTX_FILE_MAX ||
	    total + len > CTX_TOTAL_MAX)
		return aisb_err(err, "%s: the build context would hold more "
		    "than %d files or %d bytes", path, CTX_FILES_MAX,
		    CTX_TOTAL_MAX);
	if (c->n == c->cap) {
		if ((v = realloc(c->v, (c->cap ? c->cap * 2 : 64) *
		    sizeof(*c->v))) == NULL)
			return aisb_err(err, "out of memory");
		c->v = v;
		c->cap = c->cap ? c->cap * 2 : 64;
	}
	f = &c->v[c->n];
	if ((f->path = strdup(path)) == NULL ||
	    (f->data = malloc(len ? len : 1)) == NULL) {
		free(f->path);
		return aisb_err(err, "out of memory");
	}
	if (len > 0)
		memcpy(f->data, data, len);
	f->len = len;
	c->n++;
	return 0;
}

/* Is [s, s + len) only base64 characters? */
static int
base64_line(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789+/=", s[i]) == NULL || s[i] == '\0')
			return 0;
	return 1;
}

#define PEM_BEGIN	"-----BEGIN CERTIFICATE-----"
#define PEM_END		"-----END CERTIFICATE-----"

/*
 * Each certificate of a PEM text becomes ca/aisb-extra-NN.crt, one per
 * file (update-ca-certificates links one certificate per file). Text
 * around the certificates is ignored; a private key is refused.
 */
int
image_context_ca(struct image_context *c, const char *pem, size_t len,
    const char *name, struct aisb_error *err)
{
	const char *s = pem, *end = pem + len, *nl;
	struct sbuf cert;
	char path[64];
	size_t ll;
	int in = 0, lineno = 0, rv = -1;

	if (memchr(pem, '\0', len) != NULL)
		return aisb_err(err, "%s: not a PEM text file", name);
	sbuf_init(&cert);
	for (; s < end; s = nl < end ? nl + 1 : end) {
		lineno++;
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			nl = end;
		ll = (size_t)(nl - s);
		if (ll > 0 && s[ll - 1] == '\r')
			ll--;
		if (ll >= 11 && memmem(s, ll, "PRIVATE KEY", 11) != NULL) {
			aisb_err(err, "%s:%d: a private key: give only "
			    "certificates", name, lineno);
			goto out;
		}
		if (!in) {
			if (ll == strlen(PEM_BEGIN) &&
			    memcmp(s, PEM_BEGIN, ll) == 0) {
				in = 1;
				sbuf_reset(&cert);
				if (sbuf_adds(&cert, PEM_BEGIN "\n") == -1)
					goto nomem;
			}
			continue;
		}
		if (ll == strlen(PEM_END) && memcmp(s, PEM_END, ll) == 0) {
			if (c->ca_certs >= CA_CERTS_MAX) {
				aisb_err(err, "%s: more than %d certificates",
				    name, CA_CERTS_MAX);
				goto out;
			}
			if (sbuf_adds(&cert, PEM_END "\n") == -1)
				goto nomem;
			snprintf(path, sizeof(path), "ca/aisb-extra-%03zu.crt",
			    c->ca_certs + 1);
			if (image_context_add(c, path, cert.p, cert.len,
			    err) == -1)
				goto out;
			c->ca_certs++;
			in = 0;
			continue;
		}
		if (!base64_line(s, ll)) {
			aisb_err(err, "%s:%d: not base64 inside a certificate",
			    name, lineno);
			goto out;
		}
		if (sbuf_add(&cert, s, ll) == -1 || sbuf_adds(&cert, "\n") ==
		    -1)
			goto nomem;
	}
	if (in) {
		aisb_err(err, "%s: a certificate without its END line", name);
		goto out;
	}
	if (c->ca_certs == 0) {
		aisb_err(err, "%s: no PEM certificate (" PEM_BEGIN ") in it",
		    name);
		goto out;
	}
	rv = 0;
	goto out;
nomem:
	aisb_err(err, "out of memory");
out:
	sbuf_free(&cert);
	return rv;
}

/* Read one regular file into the context as "src/REL". */
static int
ctx_add_file(struct image_context *c, const char *abs, const char *rel,
    struct aisb_error *err)
{
	struct sbuf b;
	char path[PATH_MAX];
	int fd, rv;

	if ((fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return aisb_errno(err, "%s", abs);
	sbuf_init(&b);
	rv = sbuf_read_fd(&b, fd, CTX_FILE_MAX, abs, err);
	close(fd);
	if (rv == -1) {
		sbuf_free(&b);
		return -1;
	}
	snprintf(path, sizeof(path), "src/%s", rel);
	rv = image_context_add(c, path, b.p ? b.p : "", b.len, err);
	sbuf_free(&b);
	return rv;
}

/* Every regular file below dir, skipping dot files and symbolic links. */
static int
ctx_add_dir(struct image_context *c, const char *root, const char *rel,
    int depth, struct aisb_error *err)
{
	struct dirent **names = NULL;
	struct stat st;
	char abs[PATH_MAX], sub[PATH_MAX];
	int n, i, rv = 0;

	if (depth > CTX_DEPTH_MAX)
		return aisb_err(err, "%s/%s: nested too deep", root, rel);
	snprintf(abs, sizeof(abs), "%s/%s", root, rel);
	if ((n = scandir(abs, &names, NULL, alphasort)) == -1)
		return aisb_errno(err, "%s", abs);
	for (i = 0; i < n; i++) {
		if (rv == 0 && names[i]->d_name[0] != '.') {
			if (snprintf(sub, sizeof(sub), "%s/%s", rel,
			    names[i]->d_name) >= (int)sizeof(sub) ||
			    snprintf(abs, sizeof(abs), "%s/%s", root, sub) >=
			    (int)sizeof(abs))
				rv = aisb_err(err, "%s/%s: path too long", root,
				    rel);
			else if (lstat(abs, &st) == -1)
				rv = aisb_errno(err, "%s", abs);
			else if (S_ISDIR(st.st_mode))
				rv = ctx_add_dir(c, root, sub, depth + 1, err);
			else if (S_ISREG(st.st_mode))
				rv = ctx_add_file(c, abs, sub, err);
		}
		free(names[i]);
	}
	free(names);
	return rv;
}

/* The top-level directories meson enters: those with a meson.build. */
static int
ctx_add_subdirs(struct image_context *c, const char *root,
    struct aisb_error *err)
{
	struct dirent **names = NULL;
	struct stat st;
	char abs[PATH_MAX];
	int n, i, rv = 0;

	if ((n = scandir(root, &names, NULL, alphasort)) == -1)
		return aisb_errno(err, "%s", root);
	for (i = 0; i < n; i++) {
		snprintf(abs, sizeof(abs), "%s/%s/meson.build", root,
		    names[i]->d_name);
		if (rv == 0 && names[i]->d_name[0] != '.' &&
		    strcmp(names[i]->d_name, "tests") != 0 &&
		    lstat(abs, &st) == 0 && S_ISREG(st.st_mode))
			rv = ctx_add_dir(c, root, names[i]->d_name, 0, err);
		free(names[i]);
	}
	free(names);
	return rv;
}

/* A PEM file named by extra-ca into ca/. */
static int
ctx_add_ca(struct image_context *c, const char *path, struct aisb_error *err)
{
	struct sbuf b;
	char what[PATH_MAX + 16];
	int fd, rv;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return aisb_errno(err, "extra-ca %s", path);
	snprintf(what, sizeof(what), "extra-ca %s", path);
	sbuf_init(&b);
	rv = sbuf_read_fd(&b, fd, CA_FILE_MAX, what, err);
	close(fd);
	if (rv == 0)
		rv = image_context_ca(c, b.p ? b.p : "", b.len, path, err);
	sbuf_free(&b);
	return rv;
}

int
image_context_load(const struct policy *p, struct image_context *c,
    struct aisb_error *err)
{
	char abs[PATH_MAX];
	struct stat st;
	size_t i;

	snprintf(abs, sizeof(abs), "%s/image/fetch-node", p->data_dir);
	if (stat(abs, &st) == -1)
		return aisb_err(err, "%s: the sources the image build "
		    "compiles are not there (meson install puts them there; "
		    "AISB_DATA_DIR names another place)", p->data_dir);
	for (i = 0; src_files[i] != NULL; i++) {
		snprintf(abs, sizeof(abs), "%s/%s", p->data_dir, src_files[i]);
		if (ctx_add_file(c, abs, src_files[i], err) == -1)
			return -1;
	}
	if (ctx_add_subdirs(c, p->data_dir, err) == -1)
		return -1;
	if (p->extra_ca != NULL && p->extra_ca[0] != '\0' &&
	    ctx_add_ca(c, p->extra_ca, err) == -1)
		return -1;
	return 0;
}

static int
file_cmp(const void *a, const void *b)
{
	const struct image_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* SHA-256 over each file's path, length and bytes, sorted by path. */
int
image_context_hash(struct image_context *c, char *hex, size_t hexsz)
{
	EVP_MD_CTX *md;
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	char lenbuf[32];
	size_t i;
	int ok;

	if (hexsz < 65)
		return -1;
	if (c->n > 1)
		qsort(c->v, c->n, sizeof(*c->v), file_cmp);
	if ((md = EVP_MD_CTX_new()) == NULL)
		return -1;
	ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
	for (i = 0; ok && i < c->n; i++) {
		snprintf(lenbuf, sizeof(lenbuf), "%zu", c->v[i].len);
		ok = EVP_DigestUpdate(md, c->v[i].path,
		    strlen(c->v[i].path) + 1) == 1 &&
		    EVP_DigestUpdate(md, lenbuf, strlen(lenbuf) + 1) == 1 &&
		    EVP_DigestUpdate(md, c->v[i].data, c->v[i].len) == 1;
	}
	ok = ok && EVP_DigestFinal_ex(md, d, &dlen) == 1 && dlen == 32;
	EVP_MD_CTX_free(md);
	if (!ok)
		return -1;
	hex_encode(d, dlen, hex);
	return 0;
}

/* --- running programs -------------------------------------------------- */

/* One pipe being read: kept, copied to the terminal and a log, or both. */
struct pump {
	int		 fd;		/* read end; -1 at end of file */
	struct sbuf	*into;		/* keep up to CAPTURE_MAX bytes */
	int		 tee;		/* copy to standard error */
	int		 log;		/* and to this file; -1: none */
	char		 line[512];	/* the line being read */
	size_t		 linelen;
	char		 last[512];	/* the last line that says what failed */
	char		 error[512];	/* podman's own last "Error: " line */
};

static void
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* Does a line of a build's output say why it failed? */
static int
line_telling(const char *l)
{
	return strncmp(l, "fetch-node: error: ", 19) == 0 ||
	    strncmp(l, "E: ", 3) == 0 || strncmp(l, "ERROR: ", 7) == 0 ||
	    strstr(l, ": error: ") != NULL ||
	    strstr(l, "no package holds") != NULL ||
	    strncmp(l, "mmdebstrap: error", 17) == 0;
}

/* Feed bytes through the pump's line tracker and copies. */
static void
pump_bytes(struct pump *pp, const char *buf, size_t n)
{
	size_t i;

	if (pp->into != NULL && pp->into->len + n <= CAPTURE_MAX)
		sbuf_add(pp->into, buf, n);
	if (pp->tee)
		write_all(STDERR_FILENO, buf, n);
	if (pp->log != -1)
		write_all(pp->log, buf, n);
	for (i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (pp->linelen + 1 < sizeof(pp->line))
				pp->line[pp->linelen++] = buf[i];
			continue;
		}
		pp->line[pp->linelen] = '\0';
		if (line_telling(pp->line))
			memcpy(pp->last, pp->line, pp->linelen + 1);
		else if (strncmp(pp->line, "Error: ", 7) == 0)
			memcpy(pp->error, pp->line, pp->linelen + 1);
		pp->linelen = 0;
	}
}

/* Read every pump to its end of file. */
static int
pump_run(struct pump *pp, size_t n)
{
	struct pollfd pfd[4];
	char buf[8192];
	size_t i, open;
	ssize_t r;

	if (n > 4)
		return -1;
	for (;;) {
		for (i = 0, open = 0; i < n; i++) {
			pfd[i].fd = pp[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
			open += pp[i].fd != -1;
		}
		if (open == 0)
			return 0;
		if (poll(pfd, n, -1) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (i = 0; i < n; i++) {
			if (pp[i].fd == -1 || pfd[i].revents == 0)
				continue;
			r = read(pp[i].fd, buf, sizeof(buf));
			if (r == -1 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				close(pp[i].fd);
				pp[i].fd = -1;
				continue;
			}
			pump_bytes(&pp[i], buf, (size_t)r);
		}
	}
}

static void
pump_init(struct pump *pp, int fd, struct sbuf *into, int tee, int log)
{
	memset(pp, 0, sizeof(*pp));
	pp->fd = fd;
	pp->into = into;
	pp->tee = tee;
	pp->log = log;
}

/* Fork and exec argv with fd0, fd1 and fd2 (-1: /dev/null) as 0, 1, 2. */
static pid_t
proc_spawn(const struct launcher *L, char *const *argv, int fd0, int fd1,
    int fd2)
{
	int fds[3] = { fd0, fd1, fd2 }, null, fd, i;
	pid_t pid;

	fflush(stderr);
	if ((pid = fork()) != 0)
		return pid;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (i = 0; i < 3; i++) {
		fd = fds[i] == -1 ? null : fds[i];
		if (fd == i)
			fcntl(fd, F_SETFD, 0);
		else if (dup2(fd, i) == -1)
			_exit(127);
	}
	signal(SIGPIPE, SIG_DFL);
	execvpe(argv[0], argv, L->envp != NULL ? L->envp : environ);
	dprintf(STDERR_FILENO, "ai-sandbox: %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/* The child's exit status, 128 + its signal, or -1. */
static int
proc_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Run argv: its output into out, its errors into errtext (NULL: drop). */
static int
run_capture(const struct launcher *L, char *const *argv, struct sbuf *out,
    struct sbuf *errtext)
{
	struct pump pp[2];
	int po[2], pe[2];
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) == -1)
		return -1;
	if (pipe2(pe, O_CLOEXEC) == -1) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid = proc_spawn(L, argv, -1, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	if (pid == -1) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	pump_init(&pp[0], po[0], out, 0, -1);
	pump_init(&pp[1], pe[0], errtext, 0, -1);
	pump_run(pp, 2);
	return proc_wait(pid);
}

/* Run argv with its output on the terminal and in logfd; the telling
 * line of a failure into last. */
static int
run_tee(const struct launcher *L, char *const *argv, int logfd, char *last,
    size_t lastsz)
{
	struct pump pp;
	int pfd[2], rv;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) == -1)
		return -1;
	pid = proc_spawn(L, argv, -1, pfd[1], pfd[1]);
	close(pfd[1]);
	if (pid == -1) {
		close(pfd[0]);
		return -1;
	}
	pump_init(&pp, pfd[0], NULL, 1, logfd);
	pump_run(&pp, 1);
	rv = proc_wait(pid);
	snprintf(last, lastsz, "%s", pp.last[0] ? pp.last : pp.error);
	return rv;
}

/* The last non-empty line of a text, for a message. */
static void
last_line(const struct sbuf *b, char *out, size_t outsz)
{
	const char *s = b->p, *e, *start;

	out[0] = '\0';
	if (s == NULL || b->len == 0)
		return;
	e = s + b->len;
	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		e--;
	for (start = e; start > s && start[-1] != '\n'; start--)
		;
	snprintf(out, outsz, "%.*s", (int)(e - start), start);
}

/* A Go program's log line (time="..." level=fatal msg="...") as its
 * message alone. */
static void
tidy_reason(char *s)
{
	char *m = strstr(s, "msg=\""), *o;
	const char *i;

	if (m == NULL)
		return;
	for (i = m + 5, o = s; *i != '\0' && *i != '"'; i++) {
		if (*i == '\\' && i[1] != '\0')
			i++;
		*o++ = *i;
	}
	*o = '\0';
}

/* Trim a captured output to its first line. */
static const char *
first_line(struct sbuf *b)
{
	if (b->p == NULL)
		return "";
	b->p[strcspn(b->p, "\r\n")] = '\0';
	return b->p;
}

/* Does podman have this image? */
static int
image_exists(const struct launcher *L, const char *ref)
{
	char *argv[] = { L->policy.podman, "image", "exists", (char *)ref,
		NULL };

	return run_capture(L, argv, NULL, NULL) == 0;
}

/* The policy's ulimits and runtime, for podman build's RUN steps. */
static int
build_limits(const struct policy *p, struct argv *a)
{
	if (argv_addf(a, "--ulimit=nofile=%llu:%llu",
	    (unsigned long long)p->nofile, (unsigned long long)p->nofile) ==
	    -1 ||
	    argv_addf(a, "--ulimit=nproc=%llu:%llu",
	    (unsigned long long)p->nproc, (unsigned long long)p->nproc) == -1)
		return -1;
	if (p->runtime == POLICY_RUNTIME_RUNC)
		return argv_add(a, "--runtime=runc");
	if (p->runtime == POLICY_RUNTIME_CRUN)
		return argv_add(a, "--runtime=crun");
	return 0;
}

/* A log file under state-dir/builds, opened for writing. */
static int
log_open(const struct policy *p, const char *name, char *path, size_t len,
    struct aisb_error *err)
{
	char dir[PATH_MAX];
	int fd;

	snprintf(dir, sizeof(dir), "%s/builds", p->state_dir);
	if (mkdirs(dir, err) == -1)
		return -1;
	if (snprintf(path, len, "%s/%s", dir, name) >= (int)len)
		return aisb_err(err, "%s: path too long", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return aisb_errno(err, "%s", path);
	return fd;
}

/* "$ argv" as the first line of a log. */
static void
log_argv(int fd, const struct argv *a)
{
	struct sbuf b;

	sbuf_init(&b);
	if (sbuf_adds(&b, "$ ") == 0 && argv_quote_line(a, &b) == 0)
		write_all(fd, b.p, b.len);
	sbuf_free(&b);
}

/* --- resolving the base ------------------------------------------------ */

/* "sha256:HEX" from a captured digest or image id ("HEX" alone too). */
static int
digest_take(const char *s, char *out, size_t outsz)
{
	char d[CONTAINERFILE_DIGEST_MAX];

	snprintf(d, sizeof(d), "%s%s", strncmp(s, "sha256:", 7) == 0 ? "" :
	    "sha256:", s);
	if (!containerfile_digest_valid(d))
		return -1;
	snprintf(out, outsz, "%s", d);
	return 0;
}

/* The registry's digest of ref through skopeo, which pulls nothing. */
static int
resolve_skopeo(const struct launcher *L, const char *ref,
    struct image_pin *pin, char *why, size_t whysz)
{
	struct sbuf out, errtext;
	char *target = NULL;
	int rc = -1;

	sbuf_init(&out);
	sbuf_init(&errtext);
	if (asprintf(&target, "docker://%s", ref) < 0) {
		snprintf(why, whysz, "out of memory");
		return -1;
	}
	{
		char *argv[] = { "skopeo", "--command-timeout=120s", "inspect",
			"--format={{.Digest}}", target, NULL };

		rc = run_capture(L, argv, &out, &errtext);
	}
	if (rc == 0 && digest_take(first_line(&out), pin->digest,
	    sizeof(pin->digest)) == 0)
		snprintf(pin->via, sizeof(pin->via), "skopeo");
	else {
		last_line(&errtext, why, whysz);
		tidy_reason(why);
		if (rc == 127 || why[0] == '\0')
			snprintf(why, whysz, "skopeo %s", rc == 127 ?
			    "is not installed" : "gave no digest");
		rc = -1;
	}
	free(target);
	sbuf_free(&out);
	sbuf_free(&errtext);
	return rc == 0 ? 0 : -1;
}

/* Pull ref, then read the digest podman pulled it by. */
static int
resolve_pull(const struct launcher *L, const char *ref,
    struct image_pin *pin, char *why, size_t whysz)
{
	char *pull[] = { L->policy.podman, "pull", "--quiet", (char *)ref,
		NULL };
	char *inspect[] = { L->policy.podman, "image", "inspect",
		"--format={{.Digest}}", (char *)ref, NULL };
	struct sbuf out, errtext;
	int rc;

	sbuf_init(&out);
	sbuf_init(&errtext);
	image_say("pulling %s to read its digest", ref);
	if ((rc = run_capture(L, pull, NULL, &errtext)) == 0)
		rc = run_capture(L, inspect, &out, &errtext);
	if (rc == 0 && digest_take(first_line(&out), pin->digest,
	    sizeof(pin->digest)) == 0)
		snprintf(pin->via, sizeof(pin->via), "pull");
	else {
		last_line(&errtext, why, whysz);
		if (why[0] == '\0')
			snprintf(why, whysz, "podman pull gave no digest");
		rc = -1;
	}
	sbuf_free(&out);
	sbuf_free(&errtext);
	return rc;
}

/* skopeo, then a pull unless base-pull-fallback is off. */
static int
resolve_registry(const struct launcher *L, const char *ref,
    struct image_pin *pin, char *why, size_t whysz)
{
	char why2[256];

	if (resolve_skopeo(L, ref, pin, why, whysz) == 0)
		return 0;
	if (!L->policy.base_pull_fallback)
		return -1;
	if (resolve_pull(L, ref, pin, why2, sizeof(why2)) == 0)
		return 0;
	snprintf(why + strlen(why), whysz - strlen(why), "; pull: %s", why2);
	return -1;
}

/*
 * debootstrap:SUITE: mmdebstrap builds a minbase root from the host's
 * Debian mirror without root (--mode=unshare, the user's subordinate ids)
 * and writes it as a tar to podman import. The pin is the image's id.
 */
static int
resolve_debootstrap(struct launcher *L, const char *suite,
    struct image_pin *pin, struct aisb_error *err)
{
	struct policy *p = &L->policy;
	struct argv mm, imp;
	struct pump pp[2];
	struct sbuf out;
	char logpath[PATH_MAX], name[160], last[512], id[CONTAINERFILE_DIGEST_MAX];
	int data[2] = { -1, -1 }, tee[2] = { -1, -1 }, cap[2] = { -1, -1 };
	int logfd = -1, rc_mm, rc_imp, rv = -1;
	pid_t pid_mm = -1, pid_imp = -1;
	time_t t0 = time(NULL);

	argv_init(&mm);
	argv_init(&imp);
	sbuf_init(&out);
	if (strspn(suite, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
	    strlen(suite) || suite[0] == '\0' || suite[0] == '-')
		return aisb_err(err, "debootstrap:%s: not a suite name", suite);
	if (argv_add(&mm, "mmdebstrap") == -1 ||
	    argv_add(&mm, "--mode=unshare") == -1 ||
	    argv_add(&mm, "--variant=minbase") == -1 ||
	    argv_add(&mm, "--format=tar") == -1 ||
	    argv_add(&mm, suite) == -1 || argv_add(&mm, "-") == -1)
		goto nomem;
	if (host_mirror_lines(suite, &mm, err) == -1)
		goto out;
	if (argv_add(&imp, p->podman) == -1 || argv_add(&imp, "import") == -1 ||
	    argv_addf(&imp, "--message=ai-sandbox debootstrap:%s", suite) ==
	    -1 || argv_add(&imp, "-") == -1 ||
	    argv_addf(&imp, DEBOOTSTRAP_TAG "%s", suite) == -1)
		goto nomem;
	snprintf(name, sizeof(name), "base-debootstrap-%s.log", suite);
	if ((logfd = log_open(p, name, logpath, sizeof(logpath), err)) == -1)
		goto out;
	log_argv(logfd, &mm);
	log_argv(logfd, &imp);
	image_say("building the base image debootstrap:%s from %s with "
	    "mmdebstrap (the log is %s)", suite, mm.v[6], logpath);
	if (pipe2(data, O_CLOEXEC) == -1 || pipe2(tee, O_CLOEXEC) == -1 ||
	    pipe2(cap, O_CLOEXEC) == -1) {
		aisb_errno(err, "pipe");
		goto out;
	}
	pid_mm = proc_spawn(L, mm.v, -1, data[1], tee[1]);
	close(data[1]);
	data[1] = -1;
	if (pid_mm != -1)
		pid_imp = proc_spawn(L, imp.v, data[0], cap[1], tee[1]);
	close(data[0]);
	close(tee[1]);
	close(cap[1]);
	data[0] = tee[1] = cap[1] = -1;
	pump_init(&pp[0], tee[0], NULL, 1, logfd);
	pump_init(&pp[1], cap[0], &out, 0, logfd);
	tee[0] = cap[0] = -1;
	pump_run(pp, 2);
	rc_mm = pid_mm == -1 ? -1 : proc_wait(pid_mm);
	rc_imp = pid_imp == -1 ? -1 : proc_wait(pid_imp);
	snprintf(last, sizeof(last), "%s", pp[0].last[0] ? pp[0].last :
	    pp[0].error);
	if (digest_take(first_line(&out), id, sizeof(id)) == -1)
		id[0] = '\0';
	if (rc_mm != 0) {
		if (id[0] != '\0') {
			char *rmi[] = { p->podman, "rmi", id, NULL };

			run_capture(L, rmi, NULL, NULL);
		}
		if (rc_mm == 127)
			aisb_err(err, "debootstrap:%s needs mmdebstrap, which "
			    "builds a Debian base without root: install the "
			    "package mmdebstrap", suite);
		else
			aisb_err(err, "mmdebstrap failed (exit %d; the log "
			    "is %s)%s%s", rc_mm, logpath, last[0] ? ": " : "",
			    last);
		goto out;
	}
	if (rc_imp != 0 || id[0] == '\0') {
		aisb_err(err, "podman import of debootstrap:%s failed (exit "
		    "%d; the log is %s)%s%s", suite, rc_imp, logpath,
		    last[0] ? ": " : "", last);
		goto out;
	}
	snprintf(pin->digest, sizeof(pin->digest), "%s", id);
	snprintf(pin->via, sizeof(pin->via), "debootstrap");
	image_say("imported debootstrap:%s as %s in %lds", suite, id,
	    (long)(time(NULL) - t0));
	rv = 0;
	goto out;
nomem:
	aisb_err(err, "out of memory");
out:
	if (data[0] != -1)
		close(data[0]);
	if (data[1] != -1)
		close(data[1]);
	if (tee[0] != -1)
		close(tee[0]);
	if (tee[1] != -1)
		close(tee[1]);
	if (cap[0] != -1)
		close(cap[0]);
	if (cap[1] != -1)
		close(cap[1]);
	if (logfd != -1)
		close(logfd);
	argv_free(&mm);
	argv_free(&imp);
	sbuf_free(&out);
	return rv;
}

/* A date for messages. */
static const char *
date_text(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm) == 0)
		snprintf(buf, len, "@%lld", (long long)t);
	return buf;
}

/*
 * The base's digest by the pin rules. A preview reads the recorded pin
 * only. A build uses it while it is fresh, re-resolves a stale one (and
 * keeps using it when that fails: a stale pin beats a mutable tag), and
 * without any pin resolves or, for a registry base, goes on UNPINNED.
 */
static int
base_settle(struct launcher *L, enum base_mode mode, struct image_spec *s,
    struct aisb_error *err)
{
	struct policy *p = &L->policy;
	enum containerfile_base kind = containerfile_base_kind(p->base_image);
	struct image_pin fresh;
	char why[512], when[40];
	int have;

	memset(&s->pin, 0, sizeof(s->pin));
	s->pinned = s->had_pin = 0;
	snprintf(s->pin.ref, sizeof(s->pin.ref), "%s", p->base_image);
	if (kind == CONTAINERFILE_BASE_DIGEST) {
		snprintf(s->pin.digest, sizeof(s->pin.digest), "%s",
		    strchr(p->base_image, '@') + 1);
		snprintf(s->pin.via, sizeof(s->pin.via), "reference");
		s->pinned = s->had_pin = 1;
		return 0;
	}
	if ((have = image_pin_load(p, &s->pin, err)) == -1)
		return -1;
	s->had_pin = have;
	if (mode == BASE_PREVIEW) {
		s->pinned = have;
		return 0;
	}
	if (have && kind == CONTAINERFILE_BASE_DEBOOTSTRAP &&
	    !image_exists(L, s->pin.digest + 7)) {
		image_say("the base image %s recorded for %s is no longer in "
		    "podman's storage; building a new one", s->pin.digest,
		    p->base_image);
		have = 0;
	}
	if (image_pin_decide(have ? &s->pin : NULL, (int64_t)time(NULL),
	    p->base_ttl_days, p->base_auto_update, mode == BASE_REFRESH) ==
	    IMAGE_PIN_USE) {
		s->pinned = 1;
		return 0;
	}
	memset(&fresh, 0, sizeof(fresh));
	snprintf(fresh.ref, sizeof(fresh.ref), "%s", p->base_image);
	fresh.resolved = (int64_t)time(NULL);
	if (kind == CONTAINERFILE_BASE_DEBOOTSTRAP) {
		if (resolve_debootstrap(L, containerfile_base_suite(
		    p->base_image), &fresh, err) == -1) {
			if (!have || mode == BASE_REFRESH)
				return -1;
			image_say("warning: %s: %s; building with the base "
			    "recorded %s", p->base_image, err->msg,
			    date_text(s->pin.resolved, when, sizeof(when)));
			s->pinned = 1;
			return 0;
		}
	} else if (resolve_registry(L, p->base_image, &fresh, why,
	    sizeof(why)) == -1) {
		/* Asked for a new pin: not getting one is the answer. */
		if (mode == BASE_REFRESH)
			return aisb_err(err, "%s: cannot resolve its digest: %s",
			    p->base_image, why);
		if (have) {
			image_say("%s: cannot re-resolve its digest (%s); "
			    "using %s, recorded %s", p->base_image, why,
			    s->pin.digest, date_text(s->pin.resolved, when,
			    sizeof(when)));
			s->pinned = 1;
			return 0;
		}
		image_say("warning: base %s is " AISB_UNPINNED ": no digest "
		    "could be resolved (%s) and none is recorded; building "
		    "from the mutable reference (a host that reaches no "
		    "registry can build on debootstrap:SUITE)", p->base_image,
		    why);
		return 0;
	}
	if (image_pin_store(p, &fresh, err) == -1)
		return -1;
	if (!have)
		image_say("base %s pinned to %s (%s)", p->base_image,
		    fresh.digest, fresh.via);
	else if (strcmp(fresh.digest, s->pin.digest) != 0)
		image_say("base %s: now %s (was %s)", p->base_image,
		    fresh.digest, s->pin.digest);
	else
		image_say("base %s: still %s", p->base_image, fresh.digest);
	s->pin = fresh;
	s->pinned = 1;
	return 0;
}

/* --- building ---------------------------------------------------------- */

static void
spec_init(struct image_spec *s)
{
	memset(s, 0, sizeof(*s));
	image_context_init(&s->ctx);
	sbuf_init(&s->cf);
}

static void
spec_free(struct image_spec *s)
{
	image_context_free(&s->ctx);
	sbuf_free(&s->cf);
}

/*
 * The base, the context and the Containerfile. 1 (nothing rendered) for a
 * debootstrap base with no image recorded yet: only a build makes one.
 */
static int
spec_prepare(struct launcher *L, enum base_mode mode, struct image_spec *s,
    struct aisb_error *err)
{
	struct containerfile_in in;

	if (base_settle(L, mode, s, err) == -1)
		return -1;
	if (!s->pinned && containerfile_base_kind(L->policy.base_image) ==
	    CONTAINERFILE_BASE_DEBOOTSTRAP)
		return 1;
	if (image_context_load(&L->policy, &s->ctx, err) == -1)
		return -1;
	if (image_context_hash(&s->ctx, s->hash, sizeof(s->hash)) == -1)
		return aisb_err(err, "cannot hash the build context");
	memset(&in, 0, sizeof(in));
	in.base_digest = s->pinned ? s->pin.digest : NULL;
	in.source_hash = s->hash;
	in.ca_certs = s->ctx.ca_certs;
	return containerfile_render(&L->policy, &in, &s->cf, err);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	remove(path);
	return 0;
}

/* Write the context's files and the Containerfile under dir. */
static int
ctx_write(const struct image_spec *s, const char *dir, struct aisb_error *err)
{
	char path[PATH_MAX], *slash;
	size_t i;
	int fd;

	for (i = 0; i <= s->ctx.n; i++) {
		const char *rel = i < s->ctx.n ? s->ctx.v[i].path :
		    "Containerfile";
		const char *data = i < s->ctx.n ? s->ctx.v[i].data : s->cf.p;
		size_t len = i < s->ctx.n ? s->ctx.v[i].len : s->cf.len;

		if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >=
		    (int)sizeof(path))
			return aisb_err(err, "%s/%s: path too long", dir, rel);
		if ((slash = strrchr(path, '/')) != NULL && slash > path) {
			*slash = '\0';
			if (mkdirs(path, err) == -1)
				return -1;
			*slash = '/';
		}
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0644)) == -1)
			return aisb_errno(err, "%s", path);
		write_all(fd, data, len);
		if (close(fd) == -1)
			return aisb_errno(err, "%s", path);
	}
	return 0;
}

/* podman build --target ROLE of the spec, tagged tag. */
static int
spec_build(struct launcher *L, const struct image_spec *s,
    enum image_role role, const char *tag, const char *why,
    struct aisb_error *err)
{
	struct policy *p = &L->policy;
	const char *hash = strchr(tag, ':') + 1;
	struct argv a;
	char dir[PATH_MAX], logpath[PATH_MAX], cfpath[PATH_MAX], name[96];
	char last[512], reason[AISB_ERR_MAX];
	time_t t0 = time(NULL);
	int logfd = -1, rc, rv = -1;

	argv_init(&a);
	dir[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/build", p->cache_dir);
	if (mkdirs(dir, err) == -1)
		return -1;
	snprintf(dir, sizeof(dir), "%s/build/ctx-XXXXXX", p->cache_dir);
	if (mkdtemp(dir) == NULL)
		return aisb_errno(err, "%s", dir);
	if (ctx_write(s, dir, err) == -1)
		goto out;
	snprintf(name, sizeof(name), "%s.Containerfile", hash);
	if ((logfd = log_open(p, name, cfpath, sizeof(cfpath), err)) == -1)
		goto out;
	write_all(logfd, s->cf.p, s->cf.len);
	close(logfd);
	snprintf(name, sizeof(name), "%s-%s.log", hash, image_role_name(role));
	if ((logfd = log_open(p, name, logpath, sizeof(logpath), err)) == -1)
		goto out;
	if (argv_add(&a, p->podman) == -1 || argv_add(&a, "build") == -1 ||
	    argv_addf(&a, "--target=%s", image_role_name(role)) == -1 ||
	    argv_addf(&a, "--tag=%s", tag) == -1 ||
	    argv_addf(&a, "--file=%s/Containerfile", dir) == -1 ||
	    argv_add(&a, "--layers=true") == -1 ||
	    ((L->image_flags & IMAGE_F_REBUILD) &&
	    argv_add(&a, "--no-cache") == -1) ||
	    build_limits(p, &a) == -1 || argv_add(&a, dir) == -1) {
		aisb_err(err, "out of memory");
		goto out;
	}
	log_argv(logfd, &a);
	image_say("building %s (%s); the log is %s", tag, why, logpath);
	rc = run_tee(L, a.v, logfd, last, sizeof(last));
	if (rc != 0) {
		snprintf(reason, sizeof(reason), "%s", last);
		aisb_err(err, "building %s failed (podman build exit %d; the "
		    "log is %s)%s%s", tag, rc, logpath, reason[0] ? ": " : "",
		    reason);
		goto out;
	}
	image_say("built %s in %lds", tag, (long)(time(NULL) - t0));
	rv = 0;
out:
	if (logfd != -1)
		close(logfd);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	argv_free(&a);
	return rv;
}

/* --- the interface ----------------------------------------------------- */

int
image_tag(struct launcher *L, enum image_role role, char *tag, size_t tagsz,
    struct aisb_error *err)
{
	struct image_spec s;
	int rv;

	spec_init(&s);
	rv = spec_prepare(L, BASE_PREVIEW, &s, err);
	if (rv == 1) {
		snprintf(tag, tagsz, "%s", AISB_PH_IMAGE);
		rv = 0;
	} else if (rv == 0 && image_tag_of(s.cf.p, s.cf.len, role, tag,
	    tagsz) == -1)
		rv = aisb_err(err, "cannot name the image");
	spec_free(&s);
	return rv;
}

int
image_ensure(struct launcher *L, enum image_role role, char *tag,
    size_t tagsz, struct aisb_error *err)
{
	struct image_spec s;
	int rv;

	/* The recorded pin's image, when it is there: no network. */
	spec_init(&s);
	rv = spec_prepare(L, BASE_PREVIEW, &s, err);
	if (rv == -1)
		goto out;
	if (rv == 0 && s.pinned) {
		if (image_tag_of(s.cf.p, s.cf.len, role, tag, tagsz) == -1) {
			rv = aisb_err(err, "cannot name the image");
			goto out;
		}
		if (image_exists(L, tag))
			goto out;
	}
	spec_free(&s);
	spec_init(&s);
	if ((rv = spec_prepare(L, BASE_BUILD, &s, err)) != 0)
		goto out;
	if (image_tag_of(s.cf.p, s.cf.len, role, tag, tagsz) == -1) {
		rv = aisb_err(err, "cannot name the image");
		goto out;
	}
	if (!image_exists(L, tag))
		rv = spec_build(L, &s, role, tag, "first use of this policy's "
		    "image", err);
out:
	spec_free(&s);
	return rv;
}

int
image_print_containerfile(struct launcher *L, struct sbuf *out,
    struct aisb_error *err)
{
	struct image_spec s;
	int rv;

	spec_init(&s);
	rv = spec_prepare(L, BASE_PREVIEW, &s, err);
	if (rv == 1)
		rv = aisb_err(err, "base %s: no image is recorded for it yet, "
		    "so its id (the FROM line) is not known: ai-sandbox build "
		    "makes one", L->policy.base_image);
	else if (rv == 0 && sbuf_add(out, s.cf.p, s.cf.len) == -1)
		rv = aisb_err(err, "out of memory");
	spec_free(&s);
	return rv;
}

int
image_flag(struct launcher *L, const char *a, size_t len,
    struct aisb_error *err)
{
	static const struct {
		const char	*cmd;
		const char	*flag;
		int		 bit;
	} flags[] = {
		{ "build", "--rebuild", IMAGE_F_REBUILD },
		{ "build", "--refresh-base", IMAGE_F_REFRESH_BASE },
		{ "update", "--check", IMAGE_F_CHECK },
	};
	size_t i;

	if (L->cmd == NULL)
		return 0;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strcmp(L->cmd->name, flags[i].cmd) != 0 ||
		    strlen(flags[i].flag) != len ||
		    strncmp(a, flags[i].flag, len) != 0)
			continue;
		L->image_flags |= flags[i].bit;
		return 1;
	}
	return 0;
}

/* Build the roles' images that are missing (all of them with --rebuild). */
static int
build_roles(struct launcher *L, const struct image_spec *s, const char *why,
    char tags[2][IMAGE_TAG_MAX], struct aisb_error *err)
{
	static const enum image_role roles[] = { IMAGE_ROLE_SANDBOX,
		IMAGE_ROLE_GATE };
	size_t i;

	for (i = 0; i < 2; i++) {
		if (image_tag_of(s->cf.p, s->cf.len, roles[i], tags[i],
		    IMAGE_TAG_MAX) == -1)
			return aisb_err(err, "cannot name the image");
		if (!(L->image_flags & IMAGE_F_REBUILD) &&
		    image_exists(L, tags[i])) {
			image_say("%s is up to date", tags[i]);
			continue;
		}
		if (spec_build(L, s, roles[i], tags[i], why, err) == -1)
			return -1;
	}
	return 0;
}

int
image_build(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	struct image_spec s;
	char tags[2][IMAGE_TAG_MAX];
	int rv;

	spec_init(&s);
	rv = spec_prepare(L, L->image_flags & IMAGE_F_REFRESH_BASE ?
	    BASE_REFRESH : BASE_BUILD, &s, err);
	if (rv == 0)
		rv = build_roles(L, &s, L->image_flags & IMAGE_F_REBUILD ?
		    "--rebuild" : "ai-sandbox build", tags, err);
	if (rv == 0 && sbuf_printf(out, "sandbox %s\ngate %s\n", tags[0],
	    tags[1]) == -1)
		rv = aisb_err(err, "out of memory");
	spec_free(&s);
	return rv;
}

/* update --check: the pin, what upstream has, the images; no changes. */
static int
update_check(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	struct policy *p = &L->policy;
	enum containerfile_base kind = containerfile_base_kind(p->base_image);
	struct image_spec s;
	struct image_pin up;
	struct argv lines;
	char when[40], why[512], tag[IMAGE_TAG_MAX];
	int rv, stale = 0, i;

	spec_init(&s);
	argv_init(&lines);
	if ((rv = spec_prepare(L, BASE_PREVIEW, &s, err)) == -1)
		goto out;
	rv = -1;
	if (sbuf_printf(out, "base-image %s\n", p->base_image) == -1)
		goto nomem;
	if (kind == CONTAINERFILE_BASE_DIGEST) {
		if (sbuf_printf(out, "pinned %s (by the reference)\n",
		    s.pin.digest) == -1)
			goto nomem;
	} else if (!s.had_pin) {
		if (sbuf_adds(out, "pinned none recorded: the next build "
		    "resolves it\n") == -1)
			goto nomem;
	} else {
		stale = image_pin_decide(&s.pin, (int64_t)time(NULL),
		    p->base_ttl_days, p->base_auto_update, 0) ==
		    IMAGE_PIN_RESOLVE;
		if (sbuf_printf(out, "pinned %s (%s, %s; %s)\n", s.pin.digest,
		    s.pin.via, date_text(s.pin.resolved, when, sizeof(when)),
		    stale ? "stale: the next build re-resolves it" :
		    "within base-ttl-days") == -1)
			goto nomem;
	}
	memset(&up, 0, sizeof(up));
	if (kind == CONTAINERFILE_BASE_DIGEST) {
		if (sbuf_adds(out, "upstream the reference names its digest; "
		    "nothing to update\n") == -1)
			goto nomem;
	} else if (kind == CONTAINERFILE_BASE_DEBOOTSTRAP) {
		if (host_mirror_lines(containerfile_base_suite(p->base_image),
		    &lines, err) == -1)
			goto out;
		if (sbuf_adds(out, "upstream no digest: update builds a new "
		    "base from") == -1)
			goto nomem;
		for (i = 0; i < (int)lines.n; i++)
			if (sbuf_printf(out, "%s \"%s\"", i ? "," : "",
			    lines.v[i]) == -1)
				goto nomem;
		if (sbuf_adds(out, "\n") == -1)
			goto nomem;
	} else if (resolve_skopeo(L, p->base_image, &up, why,
	    sizeof(why)) == 0) {
		if (sbuf_printf(out, "upstream %s (%s)\n", up.digest,
		    s.had_pin && strcmp(up.digest, s.pin.digest) == 0 ?
		    "the same" : "update would move to it") == -1)
			goto nomem;
	} else if (sbuf_printf(out, "upstream unknown: %s\n", why) == -1)
		goto nomem;
	for (i = 0; i < 2; i++) {
		if (s.cf.len == 0) {
			if (sbuf_printf(out, "%s not built\n", image_role_name(
			    (enum image_role)i)) == -1)
				goto nomem;
			continue;
		}
		if (image_tag_of(s.cf.p, s.cf.len, (enum image_role)i, tag,
		    sizeof(tag)) == -1) {
			aisb_err(err, "cannot name the image");
			goto out;
		}
		if (sbuf_printf(out, "%s %s (%s)\n", image_role_name(
		    (enum image_role)i), tag, image_exists(L, tag) ? "built" :
		    "not built") == -1)
			goto nomem;
	}
	rv = 0;
	goto out;
nomem:
	aisb_err(err, "out of memory");
out:
	argv_free(&lines);
	spec_free(&s);
	return rv;
}

int
image_update(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	struct image_spec s;
	char old[2][IMAGE_TAG_MAX], tags[2][IMAGE_TAG_MAX];
	size_t i;
	int rv;

	if (L->image_flags & IMAGE_F_CHECK)
		return update_check(L, out, err);
	old[0][0] = old[1][0] = '\0';
	spec_init(&s);
	if ((rv = spec_prepare(L, BASE_PREVIEW, &s, err)) == -1)
		goto out;
	if (rv == 0 && (image_tag_of(s.cf.p, s.cf.len, IMAGE_ROLE_SANDBOX,
	    old[0], sizeof(old[0])) == -1 || image_tag_of(s.cf.p, s.cf.len,
	    IMAGE_ROLE_GATE, old[1], sizeof(old[1])) == -1)) {
		rv = aisb_err(err, "cannot name the image");
		goto out;
	}
	spec_free(&s);
	spec_init(&s);
	if ((rv = spec_prepare(L, BASE_REFRESH, &s, err)) != 0 ||
	    (rv = build_roles(L, &s, "ai-sandbox update", tags, err)) != 0)
		goto out;
	for (i = 0; i < 2 && rv == 0; i++) {
		if (old[i][0] == '\0' || strcmp(old[i], tags[i]) == 0)
			rv = sbuf_printf(out, "%s %s\n", i == 0 ? "sandbox" :
			    "gate", tags[i]);
		else
			rv = sbuf_printf(out, "%s %s (was %s, kept)\n",
			    i == 0 ? "sandbox" : "gate", tags[i], old[i]);
	}
	if (rv == -1)
		aisb_err(err, "out of memory");
out:
	spec_free(&s);
	return rv;
}
