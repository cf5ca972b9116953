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
/* Only the runtime part of run_detect (no podman call). */
void	 run_detect_runtime(struct policy *);
/* Why podman would ignore resource limits here, or NULL. */
const char *run_limits_unenforced(char *, size_t);
/* A loopback port that was free a moment ago. */
int	 run_free_port(uint16_t *, struct aisb_error *);
/* Run argv, wait, return its exit status (128+signal), -1 if not run. */
int	 run_argv(const struct argv *, int quiet);

/* ops.c: what ps, clean, inspect and doctor ask podman, parsed. */
#define OPS_CAPTURE_MAX		(8 * 1024 * 1024)	/* podman output kept */
#define OPS_CONTAINERS_MAX	100000	/* containers or volumes read */
#define OPS_NAMED_PREFIX	"named-"	/* a named gate's session label */

/* One container with an aisb.role label, from podman ps --format json. */
struct ops_container {
	char		*id;
	char		*name;
	char		*image;
	char		*state;		/* podman's: running, exited, created */
	char		*session;	/* the aisb.* labels; "" when missing */
	char		*role;
	char		*project;
	char		*policy;
	char		*ports;		/* "127.0.0.1:80->8080/tcp", "": none */
	int64_t		 created;	/* seconds since the epoch; 0: unknown */
	int64_t		 started;
	int		 running;
	int		 remove;	/* clean_select's verdict */
};
struct ops_containers {
	struct ops_container *v;
	size_t		 n;
	size_t		 cap;
};

struct ops_volume {
	char		*name;
	char		*role;		/* its aisb.role label, or "" */
	int		 remove;
};
struct ops_volumes {
	struct ops_volume *v;
	size_t		 n;
	size_t		 cap;
};

/* Which containers ps shows and clean removes. */
struct ops_filter {
	int		 all;		/* ps: stopped too; clean: running too */
	const char	*project;	/* --here: this project only; NULL: any */
};

/* Run argv; stdout into out, stderr into errb (NULL: dropped). The exit
 * status (128+signal), or -1 when it could not start. */
int	 ops_capture(const struct argv *, struct sbuf *, struct sbuf *);
/* The same for podman WORD... (NULL-terminated). */
int	 ops_podman(const struct launcher *, struct sbuf *, struct sbuf *, ...)
	    __attribute__((sentinel));
const char *ops_last_line(struct sbuf *);
/* "42s", "5m", "3h", "2d". */
const char *ops_age_text(int64_t, char *, size_t);
void	 ops_containers_init(struct ops_containers *);
void	 ops_containers_free(struct ops_containers *);
/* Parse podman ps's JSON (empty output: none). Pure. */
int	 ops_ps_parse(const char *, struct ops_containers *,
	    struct aisb_error *);
/* podman ps --all, the containers with an aisb.role label. */
int	 ops_list(const struct launcher *, struct ops_containers *,
	    struct aisb_error *);
/* A named gate's name (its session is "named-NAME"), else NULL. */
const char *ops_gate_name(const struct ops_container *);
int	 ops_session_valid(const char *);
void	 ops_volumes_init(struct ops_volumes *);
void	 ops_volumes_free(struct ops_volumes *);
/* Parse podman volume ls's JSON. Pure. */
int	 ops_volumes_parse(const char *, struct ops_volumes *,
	    struct aisb_error *);
/* Create the policy's home volume, labelled aisb.role=home, if missing. */
int	 ops_home_volume(const struct launcher *, struct aisb_error *);

/* cmd-ps.c: ps [--all] [--here] [--json] */
int	 cmd_ps_exec(struct launcher *, struct sbuf *, struct aisb_error *);
int	 ops_filter_match(const struct ops_filter *,
	    const struct ops_container *);
int	 ps_render_text(const struct ops_containers *,
	    const struct ops_filter *, int64_t, struct sbuf *);
int	 ps_render_json(const struct ops_containers *,
	    const struct ops_filter *, int64_t, struct sbuf *);

/* cmd-clean.c: clean [--all] [--here] [--volumes[=GLOB]] [--dry-run] */
#define CLEAN_GATE_GRACE	120	/* s a gate may wait for its sandbox */
int	 cmd_clean_exec(struct launcher *, struct sbuf *, struct aisb_error *);
/* Mark v[i].remove: stopped sandboxes (all: running ones too), gates of
 * sessions without a sandbox; never a named gate. Pure. */
void	 clean_select(struct ops_containers *, const struct ops_filter *,
	    int64_t);
/* A --volumes pattern must start with "aisb-". */
int	 clean_glob_valid(const char *, struct aisb_error *);
void	 clean_select_volumes(struct ops_volumes *, const char *);

/* cmd-inspect.c: inspect [SESSION] */
int	 cmd_inspect_exec(struct launcher *, struct sbuf *,
	    struct aisb_error *);
/* The run log line of session (NULL: the newest of project, or of any
 * project when that is NULL too), a copy; NULL when none. Pure. */
char	*inspect_find_record(const char *, size_t, const char *,
	    const char *);
int	 inspect_render_record(const char *, struct sbuf *,
	    struct aisb_error *);

/* cmd-doctor.c: doctor [--deep] [FLAG...] */
enum doctor_level {
	DOCTOR_OK,
	DOCTOR_SKIP,		/* could not be checked; says why */
	DOCTOR_WARN,		/* works, but costs or risks something */
	DOCTOR_FAIL,		/* runs will fail, or would be unsafe */
};

enum doctor_cgroup {
	DOCTOR_CGROUP_V2,
	DOCTOR_CGROUP_HYBRID,
	DOCTOR_CGROUP_V1,
};

#define DOCTOR_TEXT_MAX		768
#define DOCTOR_NPROBES		5

struct doctor_result {
	const char		*name;
	enum doctor_level	 level;
	char			 what[DOCTOR_TEXT_MAX];	/* plain words */
	char			 fix[DOCTOR_TEXT_MAX];	/* "": none */
};

/* One egress probe of doctor --deep, as the gate's log and the host saw
 * it. */
struct doctor_probe {
	int		 done;		/* the probe ran and reported */
	char		 result[160];	/* what the sandbox saw */
	char		 decision[16];	/* the gate's: allow, deny, "" none */
	char		 reason[128];
	int		 status;	/* the gate's status, -1: none */
	int		 arrived;	/* the host's listener got it */
};

/* What doctor found out about the host; the checks only read this. */
struct doctor_facts {
	unsigned int	 uid;
	char		 user[64];
	int64_t		 now;
	/* podman version */
	int		 podman_runs;
	char		 podman_version[64];
	int		 podman_major;
	char		 podman_error[256];
	/* podman info */
	int		 info_ok;
	char		 info_error[256];
	int		 rootless;
	char		 oci_runtime[64];
	char		 graph_driver[64];
	uint64_t	 uidmap_size;	/* ids podman maps, 0: unknown */
	/* the host */
	uint64_t	 subuid_count;	/* ids in /etc/subuid for the user */
	uint64_t	 subgid_count;
	uint64_t	 subuid_start;
	enum doctor_cgroup cgroup;
	int		 has_slirp;
	int		 has_pasta;
	int		 has_runc;
	int		 has_crun;
	int		 tun_exists;
	int		 tun_chr;
	unsigned int	 tun_mode;
	uint64_t	 host_nofile;	/* hard limits; UINT64_MAX: unlimited */
	uint64_t	 host_nproc;
	uint64_t	 podman_nofile;	/* podman's own processes; 0: unknown */
	uint64_t	 podman_nproc;
	char		 conf_file[256];	/* default_ulimits from, "": none */
	uint64_t	 conf_nofile;	/* their hard values, 0: not set */
	uint64_t	 conf_nproc;
	char		 limits_reason[512];	/* run_limits_unenforced, "" */
	int		 selinux_enabled;
	int		 selinux_enforcing;
	/* the project */
	int		 git_state;	/* DOCTOR_GIT_* */
	size_t		 git_dirty;
	char		 git_detail[256];
	/* the base pin */
	int		 pin_state;	/* 1 recorded, 0 none, -1 bad file */
	struct image_pin pin;
	char		 pin_error[AISB_ERR_MAX];
	size_t		 unpinned;	/* images labelled UNPINNED */
	char		 unpinned_first[128];
	/* the bind-mount round trip */
	int		 rt_state;	/* DOCTOR_RT_* */
	unsigned int	 rt_owner;
	char		 rt_detail[AISB_ERR_MAX];
	/* doctor --deep */
	int		 deep_ran;
	char		 deep_error[512];
	char		 deep_name[256];	/* the allowlisted name tried */
	struct doctor_probe probes[DOCTOR_NPROBES];
};

#define DOCTOR_GIT_NONE		0	/* git is not installed */
#define DOCTOR_GIT_CLEAN	1
#define DOCTOR_GIT_DIRTY	2
#define DOCTOR_GIT_NOREPO	3
#define DOCTOR_GIT_ERROR	4	/* git failed; git_detail says */
#define DOCTOR_GIT_NOCWD	5	/* cwd = no */

#define DOCTOR_RT_NOIMAGE	0
#define DOCTOR_RT_OK		1
#define DOCTOR_RT_OWNER		2	/* the file's owner is wrong */
#define DOCTOR_RT_FAILED	3	/* the container did not run */
#define DOCTOR_RT_NOPODMAN	4

/* The probes of doctor --deep, in probes[]. */
#define DOCTOR_PROBE_ALLOWED	0
#define DOCTOR_PROBE_UNLISTED	1
#define DOCTOR_PROBE_RAW_IP	2
#define DOCTOR_PROBE_UDP	3
#define DOCTOR_PROBE_IPV6	4

int	 cmd_doctor_exec(struct launcher *, struct sbuf *, struct aisb_error *);
/* Every check's verdict on facts; returns how many were written (at most
 * max). deep adds the egress checks. Pure. */
size_t	 doctor_check_all(const struct doctor_facts *, const struct policy *,
	    int, struct doctor_result *, size_t);
/* The report; returns 1 when the host is fit (no FAIL). */
int	 doctor_render(const struct doctor_result *, size_t, struct sbuf *);
const char *doctor_level_name(enum doctor_level);
/* Ids in the user's ranges of an /etc/subuid text (by name or uid); the
 * first range's start in *start. Pure. */
uint64_t doctor_subids(const char *, const char *, unsigned int,
	    uint64_t *);
/* The hard "Max open files" and "Max processes" of a /proc/PID/limits
 * text; 0 when missing. Pure. */
int	 doctor_proc_limits(const char *, uint64_t *, uint64_t *);
/* containers.conf's default_ulimits: 1 when set, with their hard nofile
 * and nproc (0: not named). Pure. */
int	 doctor_conf_ulimits(const char *, uint64_t *, uint64_t *);

/* cmd-help.c */
int	 cmd_help_exec(struct launcher *, struct sbuf *, struct aisb_error *);
int	 cmd_version_exec(struct launcher *, struct sbuf *,
	    struct aisb_error *);
int	 help_render(struct sbuf *);
/* Append text word-wrapped at 79 columns, every line indented. */
int	 help_wrap(struct sbuf *, int, const char *);

#endif /* LAUNCHER_H */
