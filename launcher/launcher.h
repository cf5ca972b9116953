/*
 * ai-sandbox: the launcher. Private header, prototypes grouped by file.
 */
#ifndef LAUNCHER_H
#define LAUNCHER_H

#include <stddef.h>

#include "aisb.h"
#include "policy.h"

/* Exit statuses of the launcher itself (docs/configuration.md). */
#define LAUNCHER_EXIT_OK	0
#define LAUNCHER_EXIT_FAIL	1	/* a run could not be done */
#define LAUNCHER_EXIT_USAGE	2	/* a flag, key, file or variable */

/* Variables a sandbox gets without being asked for. */
#define LAUNCHER_INHERITED	"TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ"

enum launcher_preview {
	PREVIEW_NONE,
	PREVIEW_POLICY,		/* --print-policy */
	PREVIEW_DRY_RUN,	/* --dry-run */
	PREVIEW_ENTRYPOINT,	/* --print-entrypoint */
};

struct launcher;

/* One subcommand (tmux's cmd_entry, crun's commands[]). */
struct cmd_entry {
	const char	*name;
	const char	*usage;
	int		 load;		/* reads flags, config and env */
	int		(*exec)(struct launcher *, struct sbuf *,
			    struct aisb_error *);
	const char	*help;
};

struct launcher {
	const struct cmd_entry	*cmd;
	struct policy		 policy;
	int			 strict_args;
	int			 origin;	/* --origin */
	enum launcher_preview	 preview;
	const char		*preview_flag;
	char			**envp;
	struct policy_host	 host;
	char			*host_home;	/* storage behind host */
	char			*host_project;
	struct policy_envs	 inherited;	/* TERM and the like */
};

/* args.c */
/* Parse argv by the alias rule: sandbox flags until the first positional
 * or unknown flag; the rest, or what follows "--", is the command. */
int	 args_parse(struct launcher *, int, char **, struct aisb_error *);
/* The action flags (those that are not policy keys) for --help. */
int	 args_help(struct sbuf *);

/* env.c */
const char *env_get(char *const *, const char *);
/* HOME, XDG_* and the project directory from envp and cwd. */
int	 env_host(struct launcher *, const char *, struct aisb_error *);
/* Apply every AISB_* variable of envp to the policy. */
int	 env_apply(struct launcher *, struct aisb_error *);
/* Take --env values from envp, read env files, collect inherited ones. */
int	 env_resolve(struct launcher *, struct aisb_error *);
/* The sorted names the sandbox's env file will hold. */
int	 env_names(const struct launcher *, struct argv *);
/* The env file's text: NAME=value lines. Holds secrets: the caller writes
 * it 0600 and wipes the buffer. */
int	 env_file_render(const struct launcher *, struct sbuf *,
	    struct aisb_error *);
/* Parse one env file into the policy (checks mode and owner first). */
int	 env_file_load(struct policy *, const char *,
	    const struct policy_origin *, struct aisb_error *);

/* load.c */
void	 launcher_init(struct launcher *);
void	 launcher_free(struct launcher *);
/*
 * Everything before a subcommand runs: arguments, the user's and the
 * project's config, the project's allowlist, AISB_* variables, defaults,
 * checks and the values of --env variables. cwd is the working directory.
 */
int	 launcher_load(struct launcher *, int, char **, char **, const char *,
	    struct aisb_error *);

/* cmd.c */
extern const struct cmd_entry cmd_table[];
const struct cmd_entry *cmd_find(const char *);
const struct cmd_entry *cmd_default(void);

/* cmd-run.c */
int	 cmd_run_exec(struct launcher *, struct sbuf *, struct aisb_error *);
/* The placeholders a preview renders with. */
int	 cmd_run_preview_ctx(const struct launcher *, struct render_ctx *,
	    char **, char **);
int	 cmd_run_dry_run(const struct launcher *, struct sbuf *,
	    struct aisb_error *);

/* cmd-help.c */
int	 cmd_help_exec(struct launcher *, struct sbuf *, struct aisb_error *);
int	 cmd_version_exec(struct launcher *, struct sbuf *,
	    struct aisb_error *);
int	 help_render(struct sbuf *);
/* Append text word-wrapped at 79 columns, every line indented. */
int	 help_wrap(struct sbuf *, int, const char *);

#endif /* LAUNCHER_H */
