/*
 * ps: the sandboxes and gates ai-sandbox started, as podman sees them now.
 *
 *	ps [--all] [--here] [--json]
 *
 * Running ones only unless --all; --here keeps those of the working
 * directory's project. Project, age and policy summary come from the
 * containers' labels (shared/render.c argv_labels); published ports from
 * podman (ai-sandbox publishes none yet).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

/* The words after "ps". */
static int
ps_parse(const struct launcher *L, struct ops_filter *f, int *json,
    struct aisb_error *err)
{
	const struct argv *a = &L->policy.args;
	size_t i;

	memset(f, 0, sizeof(*f));
	*json = 0;
	for (i = 0; i < a->n; i++) {
		if (strcmp(a->v[i], "--all") == 0)
			f->all = 1;
		else if (strcmp(a->v[i], "--here") == 0)
			f->project = L->policy.project_dir;
		else if (strcmp(a->v[i], "--json") == 0)
			*json = 1;
		else
			return aisb_err(err, "ps: %.64s: unknown %s (ps takes "
			    "--all, --here, --json)", a->v[i], a->v[i][0] == '-'
			    ? "flag" : "argument");
	}
	return 0;
}

/* Does the filter keep k? */
int
ops_filter_match(const struct ops_filter *f, const struct ops_container *k)
{
	if (!f->all && !k->running)
		return 0;
	if (f->project != NULL && strcmp(k->project, f->project) != 0)
		return 0;
	return 1;
}

/* When the container started, or was made when it never ran. */
static int64_t
ps_since(const struct ops_container *k)
{
	return k->started ? k->started : k->created;
}

/* The rows as a table, or "no ..." when there are none. */
int
ps_render_text(const struct ops_containers *c, const struct ops_filter *f,
    int64_t now, struct sbuf *out)
{
	char age[32], what[96];
	const struct ops_container *k;
	const char *gname;
	size_t i, shown = 0;

	for (i = 0; i < c->n; i++) {
		k = &c->v[i];
		if (!ops_filter_match(f, k))
			continue;
		if (shown++ == 0 && sbuf_printf(out, "%-14s %-8s %-9s %-5s "
		    "%-34s %-30s %s\n", "SESSION", "ROLE", "STATE", "AGE",
		    "POLICY", "PROJECT", "PORTS") == -1)
			return -1;
		if ((gname = ops_gate_name(k)) != NULL)
			snprintf(what, sizeof(what), "gate %s", gname);
		else
			snprintf(what, sizeof(what), "%s", k->role);
		if (sbuf_printf(out, "%-14s %-8s %-9s %-5s %-34s %-30s %s\n",
		    k->session[0] ? k->session : "-", what,
		    k->state[0] ? k->state : "-",
		    ops_age_text(now - ps_since(k), age, sizeof(age)),
		    k->policy[0] ? k->policy : "-",
		    k->project[0] ? k->project : "-",
		    k->ports[0] ? k->ports : "none") == -1)
			return -1;
	}
	if (shown == 0 && sbuf_printf(out, "no %ssandboxes or gates%s\n",
	    f->all ? "" : "running ", f->project ? " for this project" : "")
	    == -1)
		return -1;
	return 0;
}

/* The rows as one JSON array; every key in every object. */
int
ps_render_json(const struct ops_containers *c, const struct ops_filter *f,
    int64_t now, struct sbuf *out)
{
	const struct ops_container *k;
	const char *gname;
	size_t i, shown = 0;
	int rv = 0;

	rv |= sbuf_adds(out, "[");
	for (i = 0; i < c->n; i++) {
		k = &c->v[i];
		if (!ops_filter_match(f, k))
			continue;
		gname = ops_gate_name(k);
		rv |= sbuf_adds(out, shown++ ? ",\n {\"name\":" :
		    "\n {\"name\":");
		rv |= json_add_cstr(out, k->name);
		rv |= sbuf_adds(out, ",\"session\":");
		rv |= json_add_cstr(out, k->session);
		rv |= sbuf_adds(out, ",\"role\":");
		rv |= json_add_cstr(out, k->role);
		rv |= sbuf_adds(out, ",\"gate_name\":");
		rv |= json_add_cstr(out, gname);
		rv |= sbuf_adds(out, ",\"state\":");
		rv |= json_add_cstr(out, k->state);
		rv |= sbuf_printf(out, ",\"running\":%s,\"age_s\":%lld",
		    k->running ? "true" : "false",
		    (long long)(now - ps_since(k)));
		rv |= sbuf_adds(out, ",\"project\":");
		rv |= json_add_cstr(out, k->project);
		rv |= sbuf_adds(out, ",\"policy\":");
		rv |= json_add_cstr(out, k->policy);
		rv |= sbuf_adds(out, ",\"image\":");
		rv |= json_add_cstr(out, k->image);
		rv |= sbuf_adds(out, ",\"ports\":");
		rv |= json_add_cstr(out, k->ports);
		rv |= sbuf_adds(out, "}");
	}
	rv |= sbuf_adds(out, shown ? "\n]\n" : "]\n");
	return rv == 0 ? 0 : -1;
}

/* ps: list, filter, render. */
int
cmd_ps_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	struct ops_containers c;
	struct ops_filter f;
	int json, rv;

	if (ps_parse(L, &f, &json, err) == -1) {
		L->exit_status = LAUNCHER_EXIT_USAGE;
		return -1;
	}
	ops_containers_init(&c);
	if (ops_list(L, &c, err) == -1) {
		ops_containers_free(&c);
		return -1;
	}
	rv = json ? ps_render_json(&c, &f, (int64_t)time(NULL), out) :
	    ps_render_text(&c, &f, (int64_t)time(NULL), out);
	ops_containers_free(&c);
	if (rv == -1)
		return aisb_err(err, "out of memory");
	return 0;
}
