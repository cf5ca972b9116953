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
	PREVIEW_CONTAINERFILE,	/* --print-containerfile */
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
	int			 exit_status;	/* what main() returns */
	int			 image_flags;	/* IMAGE_F_*: build, update */
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

/* image.c (issue 4): the sandbox and gate images of a policy. */
enum image_role {
	IMAGE_ROLE_SANDBOX,
	IMAGE_ROLE_GATE,
};
/* The tag the role's image would have, from the recorded base pin; no
 * network, no podman (previews). */
int	 image_tag(struct launcher *, enum image_role, char *, size_t,
	    struct aisb_error *);
/* Make sure the image exists, building it on first use; tag written. */
int	 image_ensure(struct launcher *, enum image_role, char *, size_t,
	    struct aisb_error *);

#define LAUNCHER_LOAD_IMAGE	2	/* cmd_entry.load: policy, no run checks */
#define IMAGE_F_REBUILD		0x01	/* build --rebuild */
#define IMAGE_F_REFRESH_BASE	0x02	/* build --refresh-base; update */
#define IMAGE_F_CHECK		0x04	/* update --check */
#define IMAGE_TAG_MAX		64	/* "localhost/aisb-sandbox:" + 16 */

/* A base reference's recorded digest, $cache-dir/base/NAME (0600). */
struct image_pin {
	char		 ref[256];
	char		 digest[CONTAINERFILE_DIGEST_MAX];
	int64_t		 resolved;	/* when, in seconds since the epoch */
	char		 via[16];	/* skopeo, pull, debootstrap */
};

enum image_pin_action {
	IMAGE_PIN_USE,		/* build with the recorded digest */
	IMAGE_PIN_RESOLVE,	/* ask upstream first */
};

/* The build context: every file the Containerfile copies. */
struct image_file {
	char		*path;		/* "src/gate/main.c", "ca/..." */
	char		*data;
	size_t		 len;
};
struct image_context {
	struct image_file *v;
	size_t		 n;
	size_t		 cap;
	size_t		 ca_certs;
};

/*
 * Whether a build re-resolves the base: with no pin, when asked (refresh),
 * or when the pin is older than ttl_days (0: always, -1: never) and
 * auto_update is on. Pure.
 */
enum image_pin_action image_pin_decide(const struct image_pin *, int64_t,
	    int64_t, int, int);
/* Parse a pin file's text for ref; errors say which line. */
int	 image_pin_parse(const char *, const char *, struct image_pin *,
	    struct aisb_error *);
int	 image_pin_format(const struct image_pin *, struct sbuf *);
/* $cache-dir/base/NAME for the policy's base reference. */
char	*image_pin_path(const struct policy *);
/* 1 with the pin, 0 when none is recorded, -1 on a bad file. */
int	 image_pin_load(const struct policy *, struct image_pin *,
	    struct aisb_error *);
/* Write the pin file (0600, atomically). */
int	 image_pin_store(const struct policy *, const struct image_pin *,
	    struct aisb_error *);
/*
 * mmdebstrap's sources for SUITE from the text of an apt sources file
 * (deb822 when the flag is set, else one-line): "deb URI S main" for each
 * of SUITE, SUITE-updates, SUITE-security the host names; else its Debian
 * mirror with SUITE. Appends to the argv; 0 when none was found.
 */
int	 image_mirror_lines(const char *, int, const char *, struct argv *);
void	 image_context_init(struct image_context *);
void	 image_context_free(struct image_context *);
int	 image_context_add(struct image_context *, const char *, const char *,
	    size_t, struct aisb_error *);
/* The certificates of a PEM text as ca/aisb-extra-N.crt files. */
int	 image_context_ca(struct image_context *, const char *, size_t,
	    const char *, struct aisb_error *);
/* The sources under data-dir, and the extra CA: what the build copies. */
int	 image_context_load(const struct policy *, struct image_context *,
	    struct aisb_error *);
/* SHA-256 over the sorted paths and contents, 64 hex digits. */
int	 image_context_hash(struct image_context *, char *, size_t);
/* The role's tag from the Containerfile's text. */
int	 image_tag_of(const char *, size_t, enum image_role, char *, size_t);
const char *image_role_name(enum image_role);
/* --print-containerfile: exactly what a build would build. */
int	 image_print_containerfile(struct launcher *, struct sbuf *,
	    struct aisb_error *);
/* args.c's hook for the flags of build and update: 1 taken, 0 not ours. */
int	 image_flag(struct launcher *, const char *, size_t,
	    struct aisb_error *);
/* build: both images; update: a new base pin, then both images. */
int	 image_build(struct launcher *, struct sbuf *, struct aisb_error *);
int	 image_update(struct launcher *, struct sbuf *, struct aisb_error *);

/* cmd-build.c, cmd-update.c */
int	 cmd_build_exec(struct launcher *, struct sbuf *, struct aisb_error *);
int	 cmd_update_exec(struct launcher *, struct sbuf *, struct aisb_error *);

/* cmd-gate.c: gate up|status|down|reload|logs. */
#define GATE_NAME_MAX		63	/* a container name and a directory */
int	 cmd_gate_exec(struct launcher *, struct sbuf *, struct aisb_error *);
/* Is s a valid gate name: [A-Za-z0-9][A-Za-z0-9_.-]*, at most 63 bytes. */
int	 gate_name_valid(const char *);
/* The loopback port of the running named gate, for a run's --gate NAME;
 * -1 with err when there is none or it is not running. */
int	 gate_named_port(struct launcher *, const char *, uint16_t *,
	    struct aisb_error *);

/* audit.c: the per-destination audit of a gate's JSON log lines. */
#define AUDIT_LINE_MAX		(64 * 1024)	/* a record is under 8 KiB */
#define AUDIT_DEST_MAX		10000	/* destinations itemised */
#define AUDIT_REASON_MAX	16	/* distinct refusal reasons kept */
#define AUDIT_ADDR_MAX		8	/* refused addresses kept */
#define AUDIT_BAD_KEEP		20	/* skipped lines described */
#define AUDIT_TS_SIZE		32

/* audit_line's results. */
#define AUDIT_RECORD		1	/* counted */
#define AUDIT_LEFT_OUT		0	/* blank, or before since */
#define AUDIT_SKIPPED		(-1)	/* not a gate record: see bad[] */
#define AUDIT_NOMEM		(-2)

/* What audit_suggest says besides entries. */
#define AUDIT_NOTE_IP		0x01	/* IP entries bypass the refusal */
#define AUDIT_NOTE_TLS		0x02	/* /notls may be needed */
#define AUDIT_NOTE_SELF		0x04	/* the gate's own address */
#define AUDIT_NOTE_OTHER	0x08	/* refusals no entry changes */
#define AUDIT_NOTE_NOHOST	0x10	/* refusals without a valid host */

struct audit_count {
	char		*text;
	uint64_t	 n;
};

/* One destination, host:port, as the gate logged it. */
struct audit_dest {
	char		*host;		/* NULL: the request named none */
	int		 port;		/* -1: none */
	int		 ip;		/* 4 or 6 for an IP literal, else 0 */
	uint64_t	 allowed;
	uint64_t	 denied;
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	int64_t		 first_ms;
	int64_t		 last_ms;
	char		 first[AUDIT_TS_SIZE];
	char		 last[AUDIT_TS_SIZE];
	struct audit_count reasons[AUDIT_REASON_MAX];	/* of refusals */
	size_t		 nreasons;
	uint64_t	 other_reasons;
	struct audit_count refused[AUDIT_ADDR_MAX];	/* "ADDR (RANGE)" */
	size_t		 nrefused;
	uint64_t	 other_refused;
	int		 modes;		/* CONNECT and/or forwarded refusals */
	int		 classes;	/* kinds of refusal seen */
};

struct audit_bad {
	uint64_t	 line;
	char		 why[96];
};

struct audit {
	const char	*source;	/* the log's path, for JSON */
	int64_t		 since_ms;	/* 0: every record */
	uint64_t	 lineno;
	uint64_t	 records;
	uint64_t	 allowed;
	uint64_t	 denied;
	uint64_t	 left_out;	/* before since_ms */
	uint64_t	 skipped;	/* lines that are no record */
	uint64_t	 overflow;	/* past AUDIT_DEST_MAX destinations */
	struct audit_bad bad[AUDIT_BAD_KEEP];
	size_t		 nbad;
	struct audit_dest *v;
	size_t		 n;
	size_t		 cap;
	size_t		*index;		/* hash slot: destination + 1 */
	struct sbuf	 partial;	/* a line not yet complete */
	int		 discarding;	/* inside an overlong line */
};

/* One record as read, for --follow. */
struct audit_event {
	size_t		 dest;		/* index in v, SIZE_MAX: none */
	int		 allow;
	int		 port;
	int		 status;	/* -1: null */
	int64_t		 ts_ms;
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	char		 ts[AUDIT_TS_SIZE];
	char		 method[24];
	char		 reason[128];
};

typedef void (*audit_cb)(const struct audit *, const struct audit_event *,
	    void *);

void	 audit_init(struct audit *);
void	 audit_free(struct audit *);
/* One line without its newline: AUDIT_RECORD (ev filled), AUDIT_LEFT_OUT,
 * AUDIT_SKIPPED (the reason kept in bad[]) or AUDIT_NOMEM. */
int	 audit_line(struct audit *, const char *, size_t,
	    struct audit_event *);
/* Bytes as read: whole lines go through audit_line and cb; the rest
 * waits. 0, or AUDIT_NOMEM. */
int	 audit_feed(struct audit *, const char *, size_t, audit_cb, void *);
/* End of input: a last line without a newline is read too. */
int	 audit_finish(struct audit *, audit_cb, void *);
/* RFC 3339 date-time to milliseconds since the epoch. */
int	 audit_parse_time(const char *, int64_t *);
/* --since: RFC 3339, or a duration before now_ms ("10m", "2h", "1d"). */
int	 audit_parse_since(const char *, int64_t, int64_t *,
	    struct aisb_error *);
/* The entries (without "--allow ") that would admit d's refusals, in
 * out; returns AUDIT_NOTE_* bits, or -1. */
int	 audit_suggest(const struct audit_dest *, struct argv *);
const char *audit_note_text(int);
int	 audit_dest_text(const struct audit_dest *, struct sbuf *);
int	 audit_render_table(const struct audit *, struct sbuf *);
int	 audit_render_denied(const struct audit *, struct sbuf *);
int	 audit_render_json(const struct audit *, int, struct sbuf *);
int	 audit_render_event(const struct audit *, const struct audit_event *,
	    int, struct sbuf *);

/* run.c */
#define LAUNCHER_EXIT_RUN	125	/* the sandbox could not be run */
/* The enforced run: the command's exit status, or -1 with err. */
int	 run_start(struct launcher *, struct aisb_error *);
/* Host facts into the policy: network backend, runtime, SELinux; refuses
 * limits podman would ignore and ulimits above the hard limits. */
int	 run_detect(struct policy *, struct aisb_error *);
/* Why podman would ignore resource limits here, or NULL. */
const char *run_limits_unenforced(char *, size_t);
/* A loopback port that was free a moment ago. */
int	 run_free_port(uint16_t *, struct aisb_error *);
/* Run argv, wait, return its exit status (128+signal), -1 if not run. */
int	 run_argv(const struct argv *, int quiet);

/* cmd-help.c */
int	 cmd_help_exec(struct launcher *, struct sbuf *, struct aisb_error *);
int	 cmd_version_exec(struct launcher *, struct sbuf *,
	    struct aisb_error *);
int	 help_render(struct sbuf *);
/* Append text word-wrapped at 79 columns, every line indented. */
int	 help_wrap(struct sbuf *, int, const char *);

#endif /* LAUNCHER_H */
