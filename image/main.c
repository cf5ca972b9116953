/*
 * aisb-init: see init.c.
 */
#include <stdio.h>
#include <unistd.h>

#include "init.h"

int
main(int argc, char **argv)
{
	struct aisb_error err;
	struct init_conf c;
	struct policy p;
	struct sbuf rules;

	if (init_parse(argc, argv, &c, &p, &err) == -1)
		init_fatal(INIT_EXIT_USAGE, "%s", err.msg);
	if (c.help) {
		fputs(init_usage, stdout);
		return 0;
	}
	if (c.print_ruleset) {
		sbuf_init(&rules);
		if (policy_render_ruleset(&p, c.gate_addr[0] ? c.gate_addr :
		    NULL, c.gate_port, &rules, &err) == -1)
			init_fatal(INIT_EXIT_USAGE, "%s", err.msg);
		fputs(rules.p, stdout);
		return 0;
	}
	if (c.net != POLICY_NET_FULL)
		init_ruleset(&c, &p);
	else
		init_warn("WARNING: net=full: no egress ruleset, egress is "
		    "unrestricted");
	if (c.keep_root)
		init_warn("WARNING: --insecure-keep-root: the command runs as "
		    "root inside the sandbox");
	init_drop(&c);
	init_environment(&c);
	policy_free(&p);
	if (getpid() != 1)
		init_exec(&c);
	return init_supervise(&c);
}
