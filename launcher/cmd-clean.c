/*
 * clean: remove what sessions left behind.
 *
 *	clean [--all] [--here] [--volumes[=GLOB]] [--dry-run]
 *
 * Stopped sandboxes (--keep, or a crash) and orphaned per-session gates
 * (their session's sandbox is gone) are removed; --all removes running
 * sandboxes and gates too. A named gate (gate up) is never removed here:
 * that is `gate down`'s job. --here keeps to the working directory's
 * project. --volumes also removes the volumes in the aisb- namespace
 * (matching GLOB, default aisb-*) that no container references; podman
 * refuses to remove a volume in use, and so does this, twice.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define CLEAN_VOLUME_NS		"aisb-"
#define CLEAN_GLOB_MAX		128

struct clean_cmd {
	struct ops_filter	 f;
	int			 volumes;
	const char		*glob;
	int			 dry_run;
};

/* Is GLOB confined to the aisb- namespace? Its first five bytes must be
 * "aisb-" literally, so no pattern can reach another tool's volume. */
int
clean_glob_valid(const char *glob, struct aisb_error *err)
{
	size_t i;

	if (strlen(glob) > CLEAN_GLOB_MAX)
		return aisb_err(err, "clean: --volumes: the pattern is longer "
		    "than %d bytes", CLEAN_GLOB_MAX);
	if (strncmp(glob, CLEAN_VOLUME_NS, strlen(CLEAN_VOLUME_NS)) != 0)
		return aisb_err(err, "clean: --volumes=%.64s: the pattern must "
		    "start with \"%s\" (only ai-sandbox's volumes are removed)",
		    glob, CLEAN_VOLUME_NS);
	for (i = 0; glob[i] != '\0'; i++)
		if (glob[i] == '/' || (unsigned char)glob[i] < 0x20)
			return aisb_err(err, "clean: --volumes: a volume "
			    "pattern has no '/' or control characters");
	return 0;
}

/* The words after "clean". */
static int
clean_parse(const struct launcher *L, struct clean_cmd *c,
    struct aisb_error *err)
{
	const struct argv *a = &L->policy.args;
	const char *w;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->dry_run = L->preview == PREVIEW_DRY_RUN;
	if (L->preview != PREVIEW_NONE && !c->dry_run)
		return aisb_err(err, "clean: %s does not apply",
		    L->preview_flag);
	for (i = 0; i < a->n; i++) {
		w = a->v[i];
		if (strcmp(w, "--all") == 0)
			c->f.all = 1;
		else if (strcmp(w, "--here") == 0)
			c->f.project = L->policy.project_dir;
		else if (strcmp(w, "--dry-run") == 0)
			c->dry_run = 1;
		else if (strcmp(w, "--volumes") == 0) {
			c->volumes = 1;
			c->glob = CLEAN_VOLUME_NS "*";
		} else if (strncmp(w, "--volumes=", 10) == 0) {
			c->volumes = 1;
			c->glob = w + 10;
			if (clean_glob_valid(c->glob, err) == -1)
				return -1;
		} else
			return aisb_err(err, "clean: %.64s: unknown %s (clean "
			    "takes --all, --here, --volumes[=GLOB], --dry-run)",
			    w, w[0] == '-' ? "flag" : "argument");
	}
	return 0;
}

/* The session's sandbox: 2 when one stays after the marked removals, 1
 * when there is one but it goes, 0 when there is none. */
static int
clean_sandbox_of(const struct ops_containers *c, const char *session)
{
	size_t i;
	int rv = 0;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->v[i].role, "sandbox") == 0 &&
		    strcmp(c->v[i].session, session) == 0)
			rv = c->v[i].remove ? (rv ? rv : 1) : 2;
	return rv;
}

/*
 * Mark what clean removes. Sandboxes: stopped ones, with all running ones
 * too. Per-session gates: with all, every one; else a stopped one, one
 * whose sandbox goes now (the run is over), or one with no sandbox at all
 * that has run for CLEAN_GATE_GRACE seconds (a run starts its gate before
 * its sandbox). Named gates and containers of other roles are never
 * marked. Pure.
 */
void
clean_select(struct ops_containers *c, const struct ops_filter *f,
    int64_t now)
{
	struct ops_container *k;
	int64_t since;
	size_t i;

	for (i = 0; i < c->n; i++) {
		k = &c->v[i];
		k->remove = 0;
		if (f->project != NULL && strcmp(k->project, f->project) != 0)
			continue;
		if (strcmp(k->role, "sandbox") == 0)
			k->remove = f->all || !k->running;
	}
	for (i = 0; i < c->n; i++) {
		k = &c->v[i];
		if (strcmp(k->role, "gate") != 0 || ops_gate_name(k) != NULL ||
		    k->session[0] == '\0')
			continue;
		if (f->project != NULL && strcmp(k->project, f->project) != 0)
			continue;
		if (f->all || !k->running) {
			k->remove = 1;
			continue;
		}
		since = k->started ? k->started : k->created;
		switch (clean_sandbox_of(c, k->session)) {
		case 2:
			k->remove = 0;
			break;
		case 1:
			k->remove = 1;
			break;
		default:
			k->remove = now - since >= CLEAN_GATE_GRACE;
		}
	}
}

/* Mark the volumes clean removes: in the namespace, matching glob. */
void
clean_select_volumes(struct ops_volumes *v, const char *glob)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		v->v[i].remove = strncmp(v->v[i].name, CLEAN_VOLUME_NS,
		    strlen(CLEAN_VOLUME_NS)) == 0 &&
		    fnmatch(glob, v->v[i].name, FNM_PERIOD) == 0;
}

/* Remove the marked containers, sandboxes before gates. */
static int
clean_containers(struct launcher *L, const struct clean_cmd *c,
    struct ops_containers *cs, struct sbuf *out, size_t *failed)
{
	static const char *const order[] = { "sandbox", "gate" };
	struct ops_container *k;
	struct sbuf errb;
	size_t i, j, n = 0;
	char age[32];
	int rc;

	for (j = 0; j < 2; j++) {
		for (i = 0; i < cs->n; i++) {
			k = &cs->v[i];
			if (!k->remove || strcmp(k->role, order[j]) != 0)
				continue;
			n++;
			ops_age_text(time(NULL) - (k->started ? k->started :
			    k->created), age, sizeof(age));
			if (c->dry_run) {
				sbuf_printf(out, "would remove %s %s (%s, "
				    "%s)\n", k->role, k->name, k->state, age);
				continue;
			}
			sbuf_init(&errb);
			/* --volumes: a kept --ephemeral-home goes too. */
			rc = ops_podman(L, NULL, &errb, "rm", "--force",
			    "--volumes", "--time=2", k->name, (char *)NULL);
			if (rc == 0)
				sbuf_printf(out, "removed %s %s (%s, %s)\n",
				    k->role, k->name, k->state, age);
			else {
				sbuf_printf(out, "could not remove %s %s: %s\n",
				    k->role, k->name, ops_last_line(&errb));
				(*failed)++;
			}
			sbuf_free(&errb);
		}
	}
	return (int)n;
}

/* Remove the marked volumes that podman lists as dangling. */
static int
clean_volumes(struct launcher *L, const struct clean_cmd *c,
    struct sbuf *out, size_t *failed, struct aisb_error *err)
{
	struct ops_volumes v;
	struct sbuf lout, errb;
	size_t i, n = 0;
	int rc;

	ops_volumes_init(&v);
	sbuf_init(&lout);
	sbuf_init(&errb);
	rc = ops_podman(L, &lout, &errb, "volume", "ls", "--format", "json",
	    "--filter", "dangling=true", (char *)NULL);
	if (rc != 0) {
		aisb_err(err, "%s volume ls: %s", L->policy.podman,
		    ops_last_line(&errb));
		goto fail;
	}
	if (ops_volumes_parse(lout.p, &v, err) == -1)
		goto fail;
	clean_select_volumes(&v, c->glob);
	for (i = 0; i < v.n; i++) {
		if (!v.v[i].remove)
			continue;
		n++;
		if (c->dry_run) {
			sbuf_printf(out, "would remove volume %s\n",
			    v.v[i].name);
			continue;
		}
		sbuf_reset(&errb);
		/* No --force: podman refuses a volume a container uses. */
		rc = ops_podman(L, NULL, &errb, "volume", "rm", v.v[i].name,
		    (char *)NULL);
		if (rc == 0)
			sbuf_printf(out, "removed volume %s\n", v.v[i].name);
		else {
			sbuf_printf(out, "kept volume %s: %s\n", v.v[i].name,
			    ops_last_line(&errb));
			(*failed)++;
		}
	}
	if (n == 0)
		sbuf_printf(out, "no unused volumes match %s\n", c->glob);
	ops_volumes_free(&v);
	sbuf_free(&lout);
	sbuf_free(&errb);
	return 0;
fail:
	ops_volumes_free(&v);
	sbuf_free(&lout);
	sbuf_free(&errb);
	return -1;
}

/* clean: list, select, remove containers, then volumes. */
int
cmd_clean_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	struct ops_containers cs;
	struct clean_cmd c;
	size_t failed = 0;
	int n;

	if (clean_parse(L, &c, err) == -1) {
		L->exit_status = LAUNCHER_EXIT_USAGE;
		return -1;
	}
	ops_containers_init(&cs);
	if (ops_list(L, &cs, err) == -1) {
		ops_containers_free(&cs);
		return -1;
	}
	clean_select(&cs, &c.f, (int64_t)time(NULL));
	n = clean_containers(L, &c, &cs, out, &failed);
	ops_containers_free(&cs);
	if (n == 0)
		sbuf_printf(out, "no %scontainers to remove%s\n",
		    c.f.all ? "" : "stopped or orphaned ",
		    c.f.project ? " for this project" : "");
	if (c.volumes && clean_volumes(L, &c, out, &failed, err) == -1)
		return -1;
	if (failed > 0)
		return aisb_err(err, "clean: %zu could not be removed", failed);
	return 0;
}
