/* The command line, by the alias rule: `alias pi=ai-sandbox` must work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

/* A flag that is an action, not a policy key. */
struct action_flag {
	const char	*name;
	int		(*fn)(struct launcher *, const char *,
			    struct aisb_error *);
	int		 stop;		/* parsing ends here (--help) */
	const char	*help;
};

static int act_help(struct launcher *, const char *, struct aisb_error *);
static int act_version(struct launcher *, const char *, struct aisb_error *);
static int act_strict(struct launcher *, const char *, struct aisb_error *);
static int act_shell(struct launcher *, const char *, struct aisb_error *);
static int act_preview(struct launcher *, const char *, struct aisb_error *);
static int act_origin(struct launcher *, const char *, struct aisb_error *);

static const struct action_flag action_flags[] = {
	{ "--help", act_help, 1, "show this help and exit" },
	{ "--version", act_version, 1, "show the version and exit" },
	{ "--strict-args", act_strict, 0,
	  "an unknown flag is an error instead of the harness's first "
	  "argument (also AISB_STRICT_ARGS=yes)" },
	{ "--shell", act_shell, 0,
	  "run bash in the same sandbox instead of the harness" },
	{ "--print-policy", act_preview, 0,
	  "print the effective policy as sorted key=value lines and exit" },
	{ "--origin", act_origin, 0,
	  "with --print-policy: add where each value came from" },
	{ "--dry-run", act_preview, 0,
	  "print the podman commands a run would execute, secrets redacted, "
	  "and exit" },
	{ "--print-entrypoint", act_preview, 0,
	  "print what the in-container init will do, with the nftables "
	  "ruleset, and exit" },
	{ "--print-containerfile", act_preview, 0,
	  "print the Containerfile the images are built from, and exit" },
};

#define NACTIONS (sizeof(action_flags) / sizeof(action_flags[0]))

static int
act_help(struct launcher *L, const char *flag, struct aisb_error *err)
{
	L->cmd = cmd_find("help");
	return 0;
}

static int
act_version(struct launcher *L, const char *flag, struct aisb_error *err)
{
	L->cmd = cmd_find("version");
	return 0;
}

static int
act_strict(struct launcher *L, const char *flag, struct aisb_error *err)
{
	L->strict_args = 1;
	return 0;
}

static int
act_shell(struct launcher *L, const char *flag, struct aisb_error *err)
{
	L->policy.shell = 1;
	return 0;
}

static int
act_origin(struct launcher *L, const char *flag, struct aisb_error *err)
{
	L->origin = 1;
	return 0;
}

/* One preview at a time. */
static int
act_preview(struct launcher *L, const char *flag, struct aisb_error *err)
{
	enum launcher_preview pv;

	if (strcmp(flag, "--print-policy") == 0)
		pv = PREVIEW_POLICY;
	else if (strcmp(flag, "--dry-run") == 0)
		pv = PREVIEW_DRY_RUN;
	else if (strcmp(flag, "--print-containerfile") == 0)
		pv = PREVIEW_CONTAINERFILE;
	else
		pv = PREVIEW_ENTRYPOINT;
	if (L->preview != PREVIEW_NONE && L->preview != pv)
		return aisb_err(err, "%s: cannot be combined with %s", flag,
		    L->preview_flag);
	L->preview = pv;
	L->preview_flag = flag;
	return 0;
}

static const struct action_flag *
action_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NACTIONS; i++)
		if (strlen(action_flags[i].name) == len &&
		    strncmp(action_flags[i].name, name, len) == 0)
			return &action_flags[i];
	return NULL;
}

/* A value of a policy flag: "--flag=value" or the next argument. */
static int
flag_value(const struct policy_key *k, const char *eq, int argc, char **argv,
    int *i, const char **value, struct aisb_error *err)
{
	if (k->flag_value != NULL) {
		if (eq != NULL)
			return aisb_err(err, "%s: takes no argument", k->flag);
		*value = k->flag_value;
		return 0;
	}
	if (eq != NULL) {
		*value = eq + 1;
		return 0;
	}
	if (*i + 1 >= argc)
		return aisb_err(err, "%s: missing argument %s", k->flag,
		    k->arg);
	*value = argv[++*i];
	return 0;
}

/*
 * One argument that starts with "--": 1 when it was a sandbox flag (its
 * value consumed too), 0 when it is not ours, -1 on an error.
 */
static int
args_flag(struct launcher *L, int argc, char **argv, int *i,
    struct aisb_error *err)
{
	const char *a = argv[*i], *eq = strchr(a, '='), *value = NULL;
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const struct action_flag *act;
	const struct policy_key *k;
	struct policy_origin o;
	int rv;

	if (eq == NULL && (rv = image_flag(L, a, len, err)) != 0)
		return rv;
	if ((act = action_find(a, len)) != NULL) {
		if (eq != NULL)
			return aisb_err(err, "%s: takes no argument",
			    act->name);
		if (act->fn(L, act->name, err) == -1)
			return -1;
		return act->stop ? 2 : 1;
	}
	if ((k = policy_key_by_flag(a, len)) == NULL)
		return 0;
	if (flag_value(k, eq, argc, argv, i, &value, err) == -1)
		return -1;
	policy_origin_set(&o, POLICY_SRC_FLAG, "%s", k->flag);
	if (policy_set(&L->policy, k, value, &o, err) == -1)
		return -1;
	return 1;
}

/* Refuse an unknown flag under --strict-args, naming it but not a value. */
static int
args_unknown(const struct launcher *L, const char *a, struct aisb_error *err)
{
	const char *eq = strchr(a, '=');
	int len = eq ? (int)(eq - a) : (int)strlen(a);

	if (len > 64)
		len = 64;
	return aisb_err(err, "%.*s: unknown flag (with --strict-args, give the "
	    "harness's flags after --)", len, a);
}

/* The alias rule: our flags until a positional, an unknown flag or "--". */
int
args_parse(struct launcher *L, int argc, char **argv, struct aisb_error *err)
{
	struct policy *p = &L->policy;
	const struct cmd_entry *cmd;
	int i = 1, rv;

	L->cmd = cmd_default();
	if (argc > 1 && (cmd = cmd_find(argv[1])) != NULL) {
		L->cmd = cmd;
		i = 2;
	}
	for (; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			p->dashdash = 1;
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		rv = a[1] == '-' ? args_flag(L, argc, argv, &i, err) : 0;
		if (rv == -1)
			return -1;
		if (rv == 2)
			return 0;
		if (rv == 1)
			continue;
		if (L->strict_args)
			return args_unknown(L, a, err);
		break;
	}
	if (!L->cmd->load && i < argc)
		return aisb_err(err, "%s: takes no arguments", L->cmd->name);
	if (p->dashdash && p->shell)
		return aisb_err(err, "--shell: cannot be combined with -- "
		    "(both give the command)");
	if (L->origin && L->preview != PREVIEW_POLICY)
		return aisb_err(err, "--origin: only with --print-policy");
	for (; i < argc; i++)
		if (argv_add(&p->args, argv[i]) == -1)
			return aisb_err(err, "out of memory");
	if (p->args.n > POLICY_ARGS_MAX)
		return aisb_err(err, "more than %d arguments", POLICY_ARGS_MAX);
	return 0;
}

/* The action flags' part of --help. */
int
args_help(struct sbuf *b)
{
	size_t i;

	for (i = 0; i < NACTIONS; i++)
		if (sbuf_printf(b, "  %s\n", action_flags[i].name) == -1 ||
		    help_wrap(b, 8, action_flags[i].help) == -1)
			return -1;
	return 0;
}
