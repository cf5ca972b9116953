/*
 * inspect: what a session ran with, asked of the machine now.
 *
 *	inspect [SESSION]
 *
 * Without SESSION: the newest session of the working directory's project.
 * The run log (state-dir/runs.jsonl, written when a run ends) gives the
 * policy; podman gives the containers (kept with --keep, or still
 * running), the image and its labels; the cache gives the base pin and
 * its age; the gate's log gives its request counts.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define INSPECT_LOG_MAX		(64 * 1024 * 1024)	/* runs.jsonl read */
#define INSPECT_GATE_LOG_MAX	(256 * 1024 * 1024)	/* gate log read */
#define INSPECT_CHUNK		65536
#define INSPECT_COMMAND_MAX	160	/* bytes of the command shown */

/* A member's string, or NULL. */
static const char *
jstr(const cJSON *o, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(j) ? j->valuestring : NULL;
}

/*
 * The run log's record for session (NULL: the newest one of project,
 * NULL too: the newest one), as a copy of its line; NULL when there is
 * none. The last matching line wins. Pure.
 */
char *
inspect_find_record(const char *text, size_t len, const char *session,
    const char *project)
{
	const char *p = text, *end = text + len, *nl, *s, *pr;
	char *line, *found = NULL;
	cJSON *o;

	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((line = strndup(p, (size_t)(nl - p))) == NULL)
			break;
		p = nl + 1;
		if ((o = cJSON_Parse(line)) == NULL) {
			free(line);
			continue;
		}
		s = jstr(o, "session");
		pr = jstr(o, "project");
		if (s != NULL && (session != NULL ? strcmp(s, session) == 0 :
		    project == NULL || (pr != NULL &&
		    strcmp(pr, project) == 0))) {
			free(found);
			found = line;
		} else
			free(line);
		cJSON_Delete(o);
	}
	return found;
}

/* Append a JSON array of strings as "a, b, c" (or none). */
static int
inspect_list(const cJSON *o, const char *key, struct sbuf *out)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key), *e;
	size_t n = 0;

	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e))
			continue;
		if (sbuf_printf(out, "%s%s", n++ ? ", " : "",
		    e->valuestring) == -1)
			return -1;
	}
	if (n == 0)
		return sbuf_adds(out, "none");
	return 0;
}

/* The command shell-quoted on one line: control bytes as '?', and cut
 * after INSPECT_COMMAND_MAX bytes. */
static int
inspect_command(const cJSON *cmd, struct sbuf *out)
{
	const cJSON *e;
	struct sbuf b;
	size_t i, n = 0;
	int rv = 0;

	sbuf_init(&b);
	cJSON_ArrayForEach(e, cmd) {
		if (!cJSON_IsString(e))
			continue;
		if (n++ > 0)
			rv |= sbuf_add(&b, " ", 1);
		rv |= shell_quote(&b, e->valuestring);
	}
	for (i = 0; i < b.len; i++)
		if ((unsigned char)b.p[i] < 0x20 || b.p[i] == 0x7f)
			b.p[i] = '?';
	if (b.len > INSPECT_COMMAND_MAX)
		rv |= sbuf_printf(out, "%.*s... (%zu bytes)",
		    INSPECT_COMMAND_MAX, b.p, b.len);
	else
		rv |= sbuf_adds(out, b.p ? b.p : "");
	sbuf_free(&b);
	return rv;
}

/* The run record's part: when, how it ended, the policy, the gate. */
int
inspect_render_record(const char *line, struct sbuf *out,
    struct aisb_error *err)
{
	const cJSON *j;
	cJSON *o;
	int rv = 0;

	if ((o = cJSON_Parse(line)) == NULL)
		return aisb_err(err, "the run log's record is not JSON");
	j = cJSON_GetObjectItemCaseSensitive(o, "exit");
	rv |= sbuf_printf(out, "  project     %s\n  started     %s\n"
	    "  ended       %s, exit status %d\n",
	    jstr(o, "project") ? jstr(o, "project") : "?",
	    jstr(o, "start") ? jstr(o, "start") : "?",
	    jstr(o, "end") ? jstr(o, "end") : "?",
	    cJSON_IsNumber(j) ? j->valueint : -1);
	rv |= sbuf_adds(out, "  command     ");
	rv |= inspect_command(cJSON_GetObjectItemCaseSensitive(o, "command"),
	    out);
	rv |= sbuf_printf(out, "\n  policy      net=%s",
	    jstr(o, "net") ? jstr(o, "net") : "?");
	j = cJSON_GetObjectItemCaseSensitive(o, "keep");
	rv |= sbuf_printf(out, "%s\n  allowlist   ", cJSON_IsTrue(j) ?
	    ", keep" : "");
	rv |= inspect_list(o, "allow", out);
	rv |= sbuf_adds(out, "\n  env names   ");
	rv |= inspect_list(o, "env", out);
	rv |= sbuf_adds(out, "\n  gate        ");
	if (jstr(o, "gate_name") != NULL)
		rv |= sbuf_printf(out, "named gate %s", jstr(o, "gate_name"));
	else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "gate")))
		rv |= sbuf_adds(out, "its own (per-session)");
	else
		rv |= sbuf_adds(out, "none");
	rv |= sbuf_adds(out, "\n");
	cJSON_Delete(o);
	return rv == 0 ? 0 : aisb_err(err, "out of memory");
}

/* Read a file of ours, at most max bytes (the tail is what counts). */
static int
inspect_read(const char *path, size_t max, struct sbuf *b)
{
	char buf[INSPECT_CHUNK];
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size > max)
		lseek(fd, st.st_size - (off_t)max, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0 && b->len < max)
		sbuf_add(b, buf, (size_t)n);
	close(fd);
	return n == -1 ? -1 : 0;
}

/* The session's containers now. */
static int
inspect_containers(const struct ops_containers *cs, const char *session,
    struct sbuf *out)
{
	char age[32];
	size_t i, n = 0;
	const char *ports = NULL;

	sbuf_adds(out, "  containers  ");
	for (i = 0; i < cs->n; i++) {
		if (strcmp(cs->v[i].session, session) != 0)
			continue;
		sbuf_printf(out, "%s%s %s (%s, %s)", n++ ? "\n              " :
		    "", cs->v[i].role, cs->v[i].name, cs->v[i].state,
		    ops_age_text(time(NULL) - (cs->v[i].started ?
		    cs->v[i].started : cs->v[i].created), age, sizeof(age)));
		if (cs->v[i].ports[0] != '\0')
			ports = cs->v[i].ports;
	}
	if (n == 0)
		sbuf_adds(out, "none (removed when the run ended; --keep "
		    "keeps them)");
	sbuf_printf(out, "\n  ports       %s\n", ports ? ports :
	    "none published (ai-sandbox publishes no ports yet)");
	return 0;
}

/* The image and its labels, from podman; the base pin from the cache. */
static void
inspect_image(struct launcher *L, const char *image, struct sbuf *out)
{
	struct sbuf pout, errb;
	struct image_pin pin;
	struct aisb_error perr;
	cJSON *root = NULL;
	const cJSON *img, *labels, *l;
	const char *ref = NULL, *digest = NULL;
	char *saved, when[64], age[32];
	struct tm tm;
	time_t t;
	int rc;

	sbuf_printf(out, "  image       %s\n", image);
	sbuf_init(&pout);
	sbuf_init(&errb);
	rc = ops_podman(L, &pout, &errb, "image", "inspect", "--format",
	    "json", image, (char *)NULL);
	if (rc != 0 || (root = cJSON_Parse(pout.p ? pout.p : "")) == NULL ||
	    (img = cJSON_GetArrayItem(root, 0)) == NULL) {
		sbuf_printf(out, "              not in podman's storage now "
		    "(%s)\n", rc == 0 ? "no answer" : ops_last_line(&errb));
		goto out;
	}
	labels = cJSON_GetObjectItemCaseSensitive(img, "Labels");
	cJSON_ArrayForEach(l, labels) {
		if (!cJSON_IsString(l) || strncmp(l->string, "aisb.", 5) != 0)
			continue;
		sbuf_printf(out, "              %s=%s\n", l->string,
		    l->valuestring);
		if (strcmp(l->string, "aisb.base-ref") == 0)
			ref = l->valuestring;
		if (strcmp(l->string, "aisb.base-digest") == 0)
			digest = l->valuestring;
	}
	if (ref == NULL) {
		sbuf_adds(out, "  base pin    unknown (the image has no "
		    "aisb.base-ref label)\n");
		goto out;
	}
	/* The pin recorded for the image's base, whatever the policy says. */
	saved = L->policy.base_image;
	L->policy.base_image = (char *)ref;
	rc = image_pin_load(&L->policy, &pin, &perr);
	L->policy.base_image = saved;
	if (rc == -1)
		sbuf_printf(out, "  base pin    %s: %s\n", ref, perr.msg);
	else if (rc == 0)
		sbuf_printf(out, "  base pin    %s: none recorded%s\n", ref,
		    digest && strcmp(digest, AISB_UNPINNED) == 0 ?
		    "; the image was built UNPINNED (run ai-sandbox update)" :
		    "");
	else {
		t = (time_t)pin.resolved;
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		sbuf_printf(out, "  base pin    %s %s, resolved %s (%s ago, "
		    "via %s)%s\n", ref, pin.digest, when,
		    ops_age_text(time(NULL) - t, age, sizeof(age)), pin.via,
		    digest && strcmp(digest, pin.digest) != 0 ?
		    "; the image was built from another pin" : "");
	}
out:
	cJSON_Delete(root);
	sbuf_free(&pout);
	sbuf_free(&errb);
}

/* Count the gate log's records, for a line of inspect. */
static void
inspect_gate_log(const char *path, const char *session, struct sbuf *out)
{
	struct audit a;
	struct sbuf b;

	sbuf_init(&b);
	if (inspect_read(path, INSPECT_GATE_LOG_MAX, &b) == -1) {
		sbuf_printf(out, "  gate log    %s: %s\n", path,
		    strerror(errno));
		sbuf_free(&b);
		return;
	}
	audit_init(&a);
	if (audit_feed(&a, b.p ? b.p : "", b.len, NULL, NULL) == 0 &&
	    audit_finish(&a, NULL, NULL) == 0)
		sbuf_printf(out, "  gate log    %s\n              %llu "
		    "requests: %llu allowed, %llu denied, %zu destinations "
		    "(ai-sandbox gate logs --session %s)\n", path,
		    (unsigned long long)a.records,
		    (unsigned long long)a.allowed,
		    (unsigned long long)a.denied, a.n, session);
	audit_free(&a);
	sbuf_free(&b);
}

/* The newest running or kept session of this project, from podman. */
static const char *
inspect_live_session(const struct ops_containers *cs, const char *project)
{
	const struct ops_container *best = NULL;
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (strcmp(cs->v[i].role, "sandbox") == 0 &&
		    strcmp(cs->v[i].project, project) == 0 &&
		    (best == NULL || cs->v[i].created > best->created))
			best = &cs->v[i];
	return best ? best->session : NULL;
}

/* inspect: the run log's record, then podman's and the cache's facts. */
int
cmd_inspect_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	const struct argv *a = &L->policy.args;
	struct ops_containers cs;
	const char *session = NULL, *image = NULL, *glog = NULL;
	char path[4096], *rec = NULL;
	struct sbuf log;
	cJSON *o = NULL;
	size_t i;
	int rv = -1;

	if (a->n > 1 || (a->n == 1 && (a->v[0][0] == '-' ||
	    !ops_session_valid(a->v[0])))) {
		L->exit_status = LAUNCHER_EXIT_USAGE;
		return aisb_err(err, "inspect: %.64s: give one session id (ai-"
		    "sandbox ps --all lists them)", a->n ? a->v[a->n > 1] : "");
	}
	if (a->n == 1)
		session = a->v[0];
	ops_containers_init(&cs);
	sbuf_init(&log);
	if (ops_list(L, &cs, err) == -1)
		goto out;
	snprintf(path, sizeof(path), "%s/runs.jsonl", L->policy.state_dir);
	if (inspect_read(path, INSPECT_LOG_MAX, &log) == -1 &&
	    errno != ENOENT) {
		aisb_errno(err, "%s", path);
		goto out;
	}
	rec = inspect_find_record(log.p ? log.p : "", log.len, session,
	    L->policy.project_dir);
	if (session == NULL) {
		/* A live session is newer than any record (written when a
		 * run ends). */
		session = inspect_live_session(&cs, L->policy.project_dir);
		if (session == NULL && rec != NULL &&
		    (o = cJSON_Parse(rec)) != NULL)
			session = jstr(o, "session");
		if (session != NULL && rec != NULL && o == NULL) {
			free(rec);
			rec = inspect_find_record(log.p ? log.p : "", log.len,
			    session, NULL);
		}
	}
	if (session == NULL) {
		aisb_err(err, "inspect: no session of %s in the run log or in "
		    "podman; give a SESSION (ai-sandbox ps --all)",
		    L->policy.project_dir);
		goto out;
	}
	for (i = 0; rec == NULL && i < cs.n; i++)
		if (strcmp(cs.v[i].session, session) == 0)
			break;
	if (rec == NULL && i == cs.n) {
		aisb_err(err, "inspect: no session %s in %s or in podman",
		    session, path);
		goto out;
	}
	sbuf_printf(out, "session %s\n", session);
	if (rec != NULL) {
		if (inspect_render_record(rec, out, err) == -1)
			goto out;
	} else
		sbuf_printf(out, "  run log     no record yet: the run is "
		    "still going (the record is written when it ends)\n");
	inspect_containers(&cs, session, out);
	if (o == NULL && rec != NULL)
		o = cJSON_Parse(rec);
	if (o != NULL) {
		image = jstr(o, "image");
		glog = jstr(o, "gate_log");
	}
	for (i = 0; i < cs.n; i++) {
		if (strcmp(cs.v[i].session, session) != 0)
			continue;
		if (image == NULL && strcmp(cs.v[i].role, "sandbox") == 0)
			image = cs.v[i].image;
		if (cs.v[i].policy[0] != '\0' && rec == NULL)
			sbuf_printf(out, "  policy      %s (%s label)\n",
			    cs.v[i].policy, cs.v[i].role);
	}
	if (image != NULL)
		inspect_image(L, image, out);
	else
		sbuf_adds(out, "  image       unknown (the run ended before "
		    "one was chosen)\n");
	if (glog != NULL)
		inspect_gate_log(glog, session, out);
	rv = 0;
out:
	cJSON_Delete(o);
	free(rec);
	sbuf_free(&log);
	ops_containers_free(&cs);
	return rv;
}
