/* run: the default subcommand. This issue renders the previews; starting
 * the gate and the sandbox comes with the enforced run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

/* The render context of a preview: placeholders for run-time values. */
int
cmd_run_preview_ctx(const struct launcher *L, struct render_ctx *ctx,
    char **session_dir, char **env_file)
{
	const struct policy *p = &L->policy;

	*session_dir = *env_file = NULL;
	if (asprintf(session_dir, "%s/sessions/%s", p->state_dir,
	    AISB_PH_SESSION) < 0) {
		*session_dir = NULL;
		return -1;
	}
	if (asprintf(env_file, "%s/%s/env", p->runtime_dir,
	    AISB_PH_SESSION) < 0) {
		free(*session_dir);
		*session_dir = *env_file = NULL;
		return -1;
	}
	memset(ctx, 0, sizeof(*ctx));
	ctx->session = AISB_PH_SESSION;
	ctx->image = AISB_PH_IMAGE;
	ctx->gate_port = 0;
	ctx->session_dir = *session_dir;
	ctx->env_file = *env_file;
	return 0;
}

/* The comment lines above the commands: placeholders, the env file. */
static int
dry_run_header(const struct launcher *L, const struct render_ctx *ctx,
    struct sbuf *out)
{
	const struct policy *p = &L->policy;
	struct argv names;
	size_t i;
	int rv = -1;

	argv_init(&names);
	if (env_names(L, &names) == -1)
		goto out;
	if (sbuf_printf(out, "# The podman commands of a run, in order. %s, "
	    "%s and %s stand for values chosen when it starts.\n",
	    AISB_PH_SESSION, AISB_PH_GATE_PORT, AISB_PH_IMAGE) == -1)
		goto out;
	if (p->backend == POLICY_BACKEND_AUTO && p->net != POLICY_NET_NONE &&
	    sbuf_adds(out, "# network-backend=auto: shown as slirp4netns; a "
	    "run with podman 5 uses pasta.\n") == -1)
		goto out;
	if (p->net == POLICY_NET_ALLOW && !p->gate && sbuf_adds(out,
	    "# gate=no: the names of the allowlist are resolved when the run "
	    "starts and their addresses passed as --allow=ADDR:PORT.\n") == -1)
		goto out;
	if (sbuf_printf(out, "# %s is written with mode 0600 and removed after "
	    "the run; it holds the values of:", ctx->env_file) == -1)
		goto out;
	for (i = 0; i < names.n; i++)
		if (sbuf_printf(out, " %s", names.v[i]) == -1)
			goto out;
	if (sbuf_adds(out, names.n == 0 ? " (nothing)\n" : "\n") == -1)
		goto out;
	rv = 0;
out:
	argv_free(&names);
	return rv;
}

/* The --dry-run text: comments, then the gate's and the sandbox's argv. */
int
cmd_run_dry_run(const struct launcher *L, struct sbuf *out,
    struct aisb_error *err)
{
	struct render_ctx ctx;
	struct policy_egress eg;
	struct argv a;
	char *sdir, *efile;
	int rv = -1;

	if (cmd_run_preview_ctx(L, &ctx, &sdir, &efile) == -1)
		return aisb_err(err, "out of memory");
	argv_init(&a);
	if (dry_run_header(L, &ctx, out) == -1) {
		aisb_err(err, "out of memory");
		goto out;
	}
	policy_egress(&L->policy, &eg);
	if (eg.gate && L->policy.gate_name[0] != '\0') {
		if (sbuf_printf(out, "# The long-lived gate %s (ai-sandbox gate "
		    "up --name %s) serves this run; %s is its port.\n",
		    L->policy.gate_name, L->policy.gate_name,
		    AISB_PH_GATE_PORT) == -1)
			goto nomem;
	} else if (eg.gate) {
		if (policy_render_gate_argv(&L->policy, &ctx, &a, err) == -1)
			goto out;
		if (argv_quote_line(&a, out) == -1)
			goto nomem;
		argv_free(&a);
	}
	if (policy_render_sandbox_argv(&L->policy, &ctx, &a, err) == -1)
		goto out;
	if (argv_quote_line(&a, out) == -1)
		goto nomem;
	rv = 0;
	goto out;
nomem:
	aisb_err(err, "out of memory");
out:
	argv_free(&a);
	free(sdir);
	free(efile);
	return rv;
}

/* The --print-entrypoint text. */
static int
cmd_run_entrypoint(const struct launcher *L, struct sbuf *out,
    struct aisb_error *err)
{
	struct render_ctx ctx;
	char *sdir, *efile;
	int rv;

	if (cmd_run_preview_ctx(L, &ctx, &sdir, &efile) == -1)
		return aisb_err(err, "out of memory");
	rv = policy_render_entrypoint(&L->policy, &ctx, out, err);
	free(sdir);
	free(efile);
	return rv;
}

/* run: a preview; starting containers comes with the enforced run. */
int
cmd_run_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	switch (L->preview) {
	case PREVIEW_POLICY:
		if (policy_print(&L->policy, L->origin, out) == -1)
			return aisb_err(err, "out of memory");
		return 0;
	case PREVIEW_DRY_RUN:
		return cmd_run_dry_run(L, out, err);
	case PREVIEW_ENTRYPOINT:
		return cmd_run_entrypoint(L, out, err);
	case PREVIEW_CONTAINERFILE:
		return image_print_containerfile(L, out, err);
	case PREVIEW_NONE:
		break;
	}
	if ((L->exit_status = run_start(L, err)) == -1) {
		L->exit_status = LAUNCHER_EXIT_RUN;
		return -1;
	}
	return 0;
}
