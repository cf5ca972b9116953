/* help and version. The help is made from the key table, so every flag,
 * key and variable is in it. */
#include <stdio.h>
#include <string.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define HELP_WIDTH	79

/* Append text word-wrapped at HELP_WIDTH, every line indented. */
int
help_wrap(struct sbuf *b, int indent, const char *text)
{
	const char *w, *s = text;
	int col = 0;
	size_t len;

	while (*s != '\0') {
		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		for (w = s; *s != '\0' && *s != ' '; s++)
			;
		len = (size_t)(s - w);
		if (col > indent && col + 1 + (int)len > HELP_WIDTH) {
			if (sbuf_add(b, "\n", 1) == -1)
				return -1;
			col = 0;
		}
		if (col == 0) {
			if (sbuf_printf(b, "%*s", indent, "") == -1)
				return -1;
			col = indent;
		} else {
			if (sbuf_add(b, " ", 1) == -1)
				return -1;
			col++;
		}
		if (sbuf_add(b, w, len) == -1)
			return -1;
		col += (int)len;
	}
	return col > 0 ? sbuf_add(b, "\n", 1) : 0;
}

/* What a key's value looks like in a file: "SIZE", "yes|no". */
static void
key_arg(const struct policy_key *k, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	if (k->type == PT_BOOL) {
		snprintf(buf, len, "yes|no");
		return;
	}
	if (k->type == PT_ENUM) {
		for (i = 0; k->names[i] != NULL; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
			    i ? "|" : "", k->names[i]);
		return;
	}
	snprintf(buf, len, "%s", k->arg ? k->arg : "VALUE");
}

/* One setting: the flag line, its help, where else it can be set. */
static int
help_key(struct sbuf *b, const struct policy_key *k)
{
	char arg[128], where[512];
	int n;

	key_arg(k, arg, sizeof(arg));
	if (k->flag != NULL)
		n = sbuf_printf(b, "  %s%s%s\n", k->flag, k->flag_value ? "" :
		    " ", k->flag_value ? "" : k->arg);
	else
		n = sbuf_printf(b, "  %s (no flag)\n", k->name);
	if (n == -1 || help_wrap(b, 8, k->help) == -1)
		return -1;
	if (k->flags & PK_ENV_ONLY)
		snprintf(where, sizeof(where), "Variable %s only; not in a "
		    "config file.", k->env);
	else
		snprintf(where, sizeof(where), "Key: %s = %s%s; variable: %s%s."
		    "%s%s%s", k->name, arg, (k->flags & PK_LIST) ?
		    " (a list: accumulates)" : "", k->env,
		    (k->flags & PK_LIST) ? " (split at blanks)" : "",
		    k->def && k->def[0] ? " Default: " : "",
		    k->def && k->def[0] ? k->def : "",
		    k->def && k->def[0] ? "." : "");
	if (help_wrap(b, 8, where) == -1)
		return -1;
	if ((k->flags & PK_USER_ONLY) && help_wrap(b, 8, "Not accepted in a "
	    "project file.") == -1)
		return -1;
	return 0;
}

static const char help_head[] =
"usage: ai-sandbox [run] [FLAG...] [--] [COMMAND [ARG...]]\n"
"       ai-sandbox help | version\n"
"\n";

static const char *const help_intro[] = {
	"Runs a coding agent (pi by default) in a rootless podman sandbox: "
	"only the working directory is mounted, only variables you name get "
	"in, the command runs without root, and egress is limited to an "
	"allowlist.",
	"",
	"Arguments follow the alias rule, so that alias pi=ai-sandbox works: "
	"sandbox flags are read until the first argument that is not one; that "
	"argument and everything after it go to the harness. \"--\" ends the "
	"flags and replaces the command (ai-sandbox --net none -- make test). "
	"With --strict-args an unknown flag is an error. A first argument that "
	"names a subcommand selects it (ai-sandbox run help passes \"help\" "
	"on).",
	NULL,
};

static const char *const help_tail[] = {
	"Configuration files hold \"key = value\" lines and \"#\" comment "
	"lines; an unknown key, a bad value or a group- or world-writable file "
	"is an error naming the file and line:",
	"  $AISB_CONFIG_DIR/config, else $XDG_CONFIG_HOME/ai-sandbox/config, "
	"else ~/.config/ai-sandbox/config (yours);",
	"  .ai-sandbox/config in the working directory (the project's);",
	"  .ai-sandbox/allow in the working directory: one allowlist entry a "
	"line, \"#\" comments.",
	"Precedence: built-in < your file < the project's files < AISB_* "
	"variables < flags. Lists (allow, dns-server, env, env-file, mount, "
	"install) accumulate across all of them. See docs/configuration.md.",
	"",
	"Environment: each AISB_* variable is listed with its key above; empty "
	"means unset. AISB_STRICT_ARGS=yes is --strict-args. HOME, "
	"XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_CACHE_HOME and XDG_RUNTIME_DIR "
	"place the directories. The sandbox gets TERM, LANG, LC_ALL, LC_CTYPE "
	"and TZ when set, and nothing else unless named with --env.",
	"",
	"Exit status: once the command runs, its own. Before: 2 for a bad "
	"flag, key, file or variable (or a refused policy, such as an empty "
	"allowlist), 1 for any other failure.",
	NULL,
};

/* The whole --help text, from the key and subcommand tables. */
int
help_render(struct sbuf *b)
{
	const struct cmd_entry *c;
	size_t i;

	if (sbuf_adds(b, help_head) == -1)
		return -1;
	for (i = 0; help_intro[i] != NULL; i++)
		if ((help_intro[i][0] ? help_wrap(b, 0, help_intro[i]) :
		    sbuf_adds(b, "\n")) == -1)
			return -1;
	if (sbuf_adds(b, "\nSubcommands:\n") == -1)
		return -1;
	for (c = cmd_table; c->name != NULL; c++)
		if (sbuf_printf(b, "  %-9s %s\n", c->name, c->help) == -1)
			return -1;
	if (sbuf_adds(b, "\nSettings (flag, config key, variable):\n") == -1)
		return -1;
	for (i = 0; i < PK__COUNT; i++)
		if (help_key(b, &policy_keys[i]) == -1)
			return -1;
	if (sbuf_adds(b, "\nOther flags:\n") == -1 || args_help(b) == -1 ||
	    sbuf_adds(b, "\n") == -1)
		return -1;
	for (i = 0; help_tail[i] != NULL; i++)
		if ((help_tail[i][0] ? help_wrap(b, help_tail[i][0] == ' ' ?
		    2 : 0, help_tail[i] + (help_tail[i][0] == ' ' ? 2 : 0)) :
		    sbuf_adds(b, "\n")) == -1)
			return -1;
	return 0;
}

int
cmd_help_exec(struct launcher *L, struct sbuf *out, struct aisb_error *err)
{
	if (help_render(out) == -1)
		return aisb_err(err, "out of memory");
	return 0;
}

int
cmd_version_exec(struct launcher *L, struct sbuf *out,
    struct aisb_error *err)
{
	if (sbuf_printf(out, "ai-sandbox %s\n", AISB_VERSION) == -1)
		return aisb_err(err, "out of memory");
	return 0;
}
