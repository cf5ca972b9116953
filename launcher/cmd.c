/* The subcommand table. */
#include <string.h>

#include "aisb.h"
#include "launcher.h"

const struct cmd_entry cmd_table[] = {
	{ "run", "[FLAG...] [--] [COMMAND [ARG...]]", 1, cmd_run_exec,
	  "run the harness (or a command) in a sandbox; the default" },
	{ "build", "[--rebuild] [--refresh-base] [FLAG...]",
	  LAUNCHER_LOAD_IMAGE, cmd_build_exec,
	  "build this policy's images now (--rebuild, --refresh-base)" },
	{ "update", "[--check] [FLAG...]", LAUNCHER_LOAD_IMAGE,
	  cmd_update_exec,
	  "re-pin the base, rebuild, keep the old (--check: only look)" },
	{ "gate", "up|status|down|reload [--name NAME] | logs [OPTION...]",
	  LAUNCHER_LOAD_IMAGE, cmd_gate_exec,
	  "long-lived gates, and the per-domain audit of gate logs" },
	{ "doctor", "[--deep] [FLAG...]", LAUNCHER_LOAD_IMAGE,
	  cmd_doctor_exec,
	  "check the host: each problem and its fix (--deep: prove egress)" },
	{ "ps", "[--all] [--here] [--json]", LAUNCHER_LOAD_IMAGE, cmd_ps_exec,
	  "running sandboxes and gates (--all: stopped ones too)" },
	{ "clean", "[--all] [--here] [--volumes[=GLOB]] [--dry-run]",
	  LAUNCHER_LOAD_IMAGE, cmd_clean_exec,
	  "remove stopped sandboxes, orphaned gates, unused volumes" },
	{ "inspect", "[SESSION]", LAUNCHER_LOAD_IMAGE, cmd_inspect_exec,
	  "what a session ran with, asked of the machine now" },
	{ "help", "", 0, cmd_help_exec, "show this help" },
	{ "version", "", 0, cmd_version_exec, "show the version" },
	{ NULL, NULL, 0, NULL, NULL },
};

const struct cmd_entry *
cmd_find(const char *name)
{
	const struct cmd_entry *c;

	for (c = cmd_table; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const struct cmd_entry *
cmd_default(void)
{
	return &cmd_table[0];
}
