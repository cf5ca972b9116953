/* update: re-resolve the base and rebuild both images, keeping the old
 * ones; update --check only shows what upstream has. */
#include <stdio.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

int
cmd_update_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	const struct policy *p = &L->policy;

	if (p->args.n > 0)
		return aisb_err(err, "update: unexpected argument \"%.64s\"",
		    p->args.v[0]);
	if (p->dashdash || p->shell)
		return aisb_err(err, "update: takes no command");
	if (L->preview != PREVIEW_NONE)
		return aisb_err(err, "update: not with %s (update --check "
		    "shows what would change)", L->preview_flag);
	return image_update(L, out, err);
}
