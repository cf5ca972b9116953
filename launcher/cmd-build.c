/* build: the sandbox and gate images of this policy, now. */
#include <stdio.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

/* Refuse what build does not take: a command, or a run's preview. */
static int
image_cmd_check(struct launcher *L, struct aisb_error *err)
{
	const struct policy *p = &L->policy;

	if (p->args.n > 0)
		return aisb_err(err, "%s: unexpected argument \"%.64s\"",
		    L->cmd->name, p->args.v[0]);
	if (p->dashdash || p->shell)
		return aisb_err(err, "%s: takes no command", L->cmd->name);
	if (L->preview != PREVIEW_NONE &&
	    L->preview != PREVIEW_CONTAINERFILE &&
	    L->preview != PREVIEW_POLICY)
		return aisb_err(err, "%s: not with %s", L->cmd->name,
		    L->preview_flag);
	return 0;
}

/* A preview a build command takes: the Containerfile or the policy. */
static int
image_cmd_preview(struct launcher *L, struct sbuf *out,
    struct aisb_error *err)
{
	if (L->preview == PREVIEW_CONTAINERFILE)
		return image_print_containerfile(L, out, err);
	if (policy_print(&L->policy, L->origin, out) == -1)
		return aisb_err(err, "out of memory");
	return 0;
}

int
cmd_build_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	if (image_cmd_check(L, err) == -1)
		return -1;
	if (L->preview != PREVIEW_NONE)
		return image_cmd_preview(L, out, err);
	return image_build(L, out, err);
}
