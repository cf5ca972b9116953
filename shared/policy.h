/*
 * The sandbox policy: every setting of a run in one typed struct, the table
 * that says how each setting is named on the command line, in a config file
 * and in the environment, and the renderers that turn a policy into what
 * runs (the nftables ruleset, the podman argv, the init's plan).
 *
 * Precedence is by source rank, not by reading order: a value from a
 * higher source (flag > environment > project file > user file > built-in)
 * is never replaced by one from a lower source, and built-in defaults are
 * filled in by policy_fill_defaults() only after every source was read.
 * Lists accumulate across sources.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "aisb.h"

/* Fixed facts of the sandbox image and the network backends. */
#define AISB_SANDBOX_UID	1000
#define AISB_SANDBOX_GID	1000
#define AISB_GATE_UID		65534
#define AISB_GATE_GID		65534
#define AISB_HOME		"/home/sandbox"
#define AISB_PROJECT_MNT	"/project"
#define AISB_INIT_PATH		"/usr/local/sbin/aisb-init"
#define AISB_GATE_PATH		"/usr/local/bin/aisb-gate"
#define AISB_GATE_ALLOW_FILE	"/etc/aisb/allow"
#define AISB_GATE_LOG_DIR	"/var/log/aisb"
#define AISB_GATE_LOG_FILE	"/var/log/aisb/gate.log"
/* slirp4netns:allow_host_loopback=true maps 10.0.2.2 to host 127.0.0.1. */
#define AISB_SLIRP_HOST		"10.0.2.2"
#define AISB_SLIRP_DNS		"10.0.2.3"
/*
 * pasta maps the address given to --map-host-loopback to host 127.0.0.1;
 * podman 5 already gives 169.254.1.2 to host.containers.internal (the
 * host's routable addresses), so the loopback gets the next one.
 */
#define AISB_PASTA_HOST		"169.254.1.3"
#define AISB_PASTA_DNS		"169.254.1.1"

/* Preview placeholders for what is only known when a run starts. */
#define AISB_PH_SESSION		"SESSION"
#define AISB_PH_IMAGE		"IMAGE-TAG"
#define AISB_PH_GATE_PORT	"GATE_PORT"

/* Caps on what a source can give. */
#define POLICY_VALUE_MAX	4096	/* one value, as a config line would */
#define POLICY_LIST_MAX		1024	/* entries in one list */
#define POLICY_WORDS_MAX	256	/* words in harness, extra-args */
#define POLICY_ARGS_MAX		4096	/* words in the command */
#define POLICY_ORIGIN_SIZE	ALLOW_ORIGIN_SIZE
#define POLICY_ENV_NAME_MAX	255

/* render.c: an argv under construction, always NULL-terminated. */
struct argv {
	char	**v;
	size_t	  n;
	size_t	  cap;
};

/* Where a value came from; the enum order is the precedence order. */
enum policy_source {
	POLICY_SRC_UNSET,
	POLICY_SRC_BUILTIN,
	POLICY_SRC_USER,	/* the user's config file */
	POLICY_SRC_PROJECT,	/* .ai-sandbox/config and .ai-sandbox/allow */
	POLICY_SRC_ENV,		/* AISB_* */
	POLICY_SRC_FLAG,
};

struct policy_origin {
	enum policy_source	 src;
	char			 where[POLICY_ORIGIN_SIZE];
					/* "FILE:LINE", "AISB_NET", "--net" */
};

enum policy_net {
	POLICY_NET_ALLOW,
	POLICY_NET_NONE,
	POLICY_NET_FULL,
};

enum policy_backend {
	POLICY_BACKEND_AUTO,
	POLICY_BACKEND_SLIRP4NETNS,
	POLICY_BACKEND_PASTA,
};

enum policy_tristate {
	POLICY_AUTO,
	POLICY_YES,
	POLICY_NO,
};

enum policy_runtime {
	POLICY_RUNTIME_AUTO,
	POLICY_RUNTIME_RUNC,
	POLICY_RUNTIME_CRUN,
};

struct policy_allow {
	struct allow_entry	 e;
	struct policy_origin	 origin;
};

struct policy_str {
	char			*s;
	struct policy_origin	 origin;
};

enum policy_env_kind {
	POLICY_ENV_HOST,	/* --env NAME: the launcher's environment */
	POLICY_ENV_LITERAL,	/* --env NAME=value */
	POLICY_ENV_FILE,	/* a line of an --env-file */
};

struct policy_env {
	char			*name;
	char			*value;	/* secret: never printed; NULL until
					   env_resolve() for POLICY_ENV_HOST */
	enum policy_env_kind	 kind;
	struct policy_origin	 origin;
};

struct policy_mount {
	char			*src;	/* absolute after policy_finish */
	char			*dst;	/* NULL: same as src */
	int			 ro;
	struct policy_origin	 origin;
};

#define POLICY_VEC(name, type)						\
	struct name {							\
		type	*v;						\
		size_t	 n;						\
		size_t	 cap;						\
	}
POLICY_VEC(policy_allows, struct policy_allow);
POLICY_VEC(policy_strs, struct policy_str);
POLICY_VEC(policy_envs, struct policy_env);
POLICY_VEC(policy_mounts, struct policy_mount);

/* The keys, in the order of policy_keys[]. */
enum policy_key_id {
	PK_HARNESS,
	PK_NET,
	PK_ALLOW,
	PK_GATE,
	PK_GATE_NAME,
	PK_PROXY,
	PK_DNS_SERVER,
	PK_ENV,
	PK_ENV_FILE,
	PK_MOUNT,
	PK_CWD,
	PK_READ_ONLY,
	PK_EPHEMERAL_HOME,
	PK_WORKDIR,
	PK_MEMORY,
	PK_CPUS,
	PK_PIDS,
	PK_TMP_SIZE,
	PK_SHM_SIZE,
	PK_HOME_SIZE,
	PK_NOFILE,
	PK_NPROC,
	PK_INSTALL,
	PK_BASE_IMAGE,
	PK_KEEP,
	PK_TTY,
	PK_INTERACTIVE,
	PK_ALLOW_UNENFORCED,
	PK_ALLOW_UNENFORCED_LIMITS,
	PK_INSECURE_KEEP_ROOT,
	PK_EXTRA_ARGS,
	PK_NETWORK_BACKEND,
	PK_SELINUX,
	PK_RUNTIME,
	PK_PODMAN,
	PK_STATE_DIR,
	PK_CACHE_DIR,
	PK_CONFIG_DIR,
	PK_RUNTIME_DIR,
	PK_EXTRA_CA,		/* image.c (issue 4) from here */
	PK_NODE_VERSION,
	PK_NODE_INTEGRITY,
	PK_PI_VERSION,
	PK_BASE_TTL_DAYS,
	PK_BASE_AUTO_UPDATE,
	PK_BASE_PULL_FALLBACK,
	PK_DATA_DIR,
	PK_HOME_VOLUME,		/* issue 6 */
	PK__COUNT
};

struct policy {
	/* Settings, one per key. */
	char			*harness;
	int			 net;		/* enum policy_net */
	struct policy_allows	 allow;
	int			 gate;
	char			*gate_name;	/* "": a gate per session */
	char			*proxy;		/* "none" or ADDR:PORT */
	struct aisb_addr	 proxy_addr;
	uint16_t		 proxy_port;
	struct policy_strs	 dns;		/* canonical addresses */
	struct policy_envs	 env;
	struct policy_strs	 env_files;
	struct policy_mounts	 mounts;
	int			 cwd;
	int			 read_only;
	int			 ephemeral_home;
	char			*workdir;
	uint64_t		 memory;
	uint64_t		 cpus;		/* thousandths of a CPU */
	uint64_t		 pids;
	uint64_t		 tmp_size;
	uint64_t		 shm_size;
	uint64_t		 home_size;
	uint64_t		 nofile;
	uint64_t		 nproc;
	struct policy_strs	 install;
	char			*base_image;
	int			 keep;
	int			 tty;
	int			 interactive;
	int			 allow_unenforced;
	int			 allow_unenforced_limits;
	int			 insecure_keep_root;
	char			*extra_args;
	int			 backend;	/* enum policy_backend */
	int			 selinux;	/* enum policy_tristate */
	int			 runtime;	/* enum policy_runtime */
	char			*podman;
	char			*state_dir;
	char			*cache_dir;
	char			*config_dir;
	char			*runtime_dir;
	char			*extra_ca;	/* PEM file, or "" */
	char			*node_version;
	char			*node_integrity; /* "": the registry's */
	char			*pi_version;
	int64_t			 base_ttl_days;	/* -1: never stale */
	int			 base_auto_update;
	int			 base_pull_fallback;
	char			*data_dir;	/* the sources images build */
	struct policy_origin	 origin[PK__COUNT];	/* scalar keys */

	/* What the command line says to run (launcher/args.c). */
	int			 shell;		/* --shell */
	int			 dashdash;	/* "--" replaced the command */
	struct argv		 args;		/* after the sandbox flags */
	struct policy_origin	 command_origin;

	/* Derived by policy_finish(). */
	char			*project_dir;
	char			*home_volume;	/* home-volume (a key) */
	struct argv		 command;
	struct argv		 extra;		/* extra_args split */

	/* Run-time inputs; previews leave them empty. */
	int			 stdin_tty;
	int			 stdout_tty;
	int			 selinux_enforcing; /* when selinux=auto */
	int			 rootful;	/* podman runs as root */
	struct policy_allows	 pinned;	/* --no-gate: resolved names */
	int			 image_only;	/* build, update: no run checks */

	/* Messages for main() to print on every run. */
	struct policy_strs	 warnings;
};

/* What the launcher knows about its host, for defaults. */
struct policy_host {
	const char	*home;		/* absolute */
	const char	*xdg_config_home; /* NULL when unset or relative */
	const char	*xdg_state_home;
	const char	*xdg_cache_home;
	const char	*xdg_runtime_dir;
	const char	*project_dir;	/* the working directory, resolved */
};

/* policy.c: the key table. */
enum policy_type {
	PT_WORDS,	/* string of blank-separated words */
	PT_ENUM,	/* one of names[], stored as int */
	PT_BOOL,
	PT_SIZE,	/* bytes, with b/k/m/g/t suffixes */
	PT_CPUS,
	PT_COUNT,
	PT_PATH,	/* absolute path */
	PT_IMAGE,
	PT_COMMAND,	/* a program name or absolute path */
	PT_PROXY,
	PT_ALLOW,	/* lists from here */
	PT_DNS,
	PT_ENV,
	PT_ENV_FILE,
	PT_MOUNT,
	PT_INSTALL,
	PT_VERSION,	/* "22.23.5", "0.73.1-beta.1" */
	PT_INTEGRITY,	/* "sha512-BASE64", or empty */
	PT_DAYS,	/* -1 or a number of days, int64_t */
	PT_OPTPATH,	/* an absolute path, or empty for none */
	PT_NAME,	/* a gate name (policy_name_valid), or empty */
};

#define PK_LIST		0x01	/* accumulates across sources */
#define PK_ENV_ONLY	0x02	/* not accepted in config files */
#define PK_USER_ONLY	0x04	/* not accepted in the project file */

struct policy_key {
	enum policy_key_id	 id;
	const char		*name;		/* config key, print name */
	const char		*flag;		/* "--memory", or NULL */
	const char		*flag_value;	/* value of an argument-less
						   flag ("no" for --no-gate) */
	const char		*env;		/* "AISB_MEMORY", or NULL */
	const char		*arg;		/* "SIZE" for help */
	enum policy_type	 type;
	size_t			 off;		/* offsetof(struct policy, x) */
	const char *const	*names;		/* PT_ENUM */
	uint64_t		 min;		/* PT_SIZE, PT_COUNT, PT_CPUS */
	uint64_t		 max;
	int			 flags;		/* PK_* */
	const char		*def;		/* built-in default, or NULL:
						   computed or empty list */
	const char		*help;
};

extern const struct policy_key policy_keys[PK__COUNT];

const struct policy_key *policy_key_by_name(const char *);
const struct policy_key *policy_key_by_flag(const char *, size_t);
const struct policy_key *policy_key_by_env(const char *, size_t);

void	 policy_init(struct policy *);
void	 policy_free(struct policy *);
/*
 * Set key k from one source. A scalar already set from a higher source is
 * left alone (returns 0); lists accumulate. Errors name the source:
 * "--memory: ...", "AISB_MEMORY: ...", "FILE:LINE: memory: ...".
 */
int	 policy_set(struct policy *, const struct policy_key *, const char *,
	    const struct policy_origin *, struct aisb_error *);
void	 policy_origin_set(struct policy_origin *, enum policy_source,
	    const char *, ...) __attribute__((format(printf, 3, 4)));
/* "builtin", "FILE:LINE", "env AISB_X", "flag --x". */
const char *policy_origin_text(const struct policy_origin *, char *,
	    size_t);
/* Merge one parsed allowlist entry; a duplicate keeps the higher origin. */
int	 policy_allow_add(struct policy_allows *, const struct allow_entry *,
	    const struct policy_origin *, struct aisb_error *);
/* The user config directory: config-dir if set, else from XDG. */
char	*policy_default_config_dir(const struct policy_host *);
/* Fill every key no source set from its built-in or computed default. */
int	 policy_fill_defaults(struct policy *, const struct policy_host *,
	    struct aisb_error *);
/*
 * After every source: defaults, the command, mounts resolved and checked,
 * lists sorted, cross-key checks (the empty allowlist), warnings.
 */
int	 policy_finish(struct policy *, const struct policy_host *,
	    struct aisb_error *);
/* Add a warning for main() to print. */
int	 policy_warn(struct policy *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Sorted "key=value" lines; with origin, "\t# origin" after each. */
int	 policy_print(const struct policy *, int, struct sbuf *);
/* Format a size the way the parser reads it back: "4g", "1536m". */
void	 policy_size_text(uint64_t, char *, size_t);
void	 policy_cpus_text(uint64_t, char *, size_t);
int	 policy_env_name_valid(const char *, size_t);
#define POLICY_NAME_MAX	63
/* A name for a long-lived gate: letters and digits, then also "_.-". */
int	 policy_name_valid(const char *);
/* Add or replace variable name (a higher source wins, the later one at the
 * same level); value NULL until taken from the environment. */
int	 policy_env_add(struct policy *, const char *, const char *,
	    enum policy_env_kind, const struct policy_origin *,
	    struct aisb_error *);
uint64_t policy_hash(const char *);

/* config.c: "key = value" files. */
#define CONFIG_FILE_MAX		(1024 * 1024)
#define CONFIG_LINE_MAX		4096
/*
 * Split one line (no newline) into key and value, both trimmed. Returns 1
 * with key and value set (pointing into line, which is modified), 0 for a
 * blank or comment line, -1 with the reason.
 */
int	 config_parse_line(char *, char **, char **, struct aisb_error *);
/*
 * Apply every line of a config file to p with source src. A missing file
 * is not an error (returns 0); a group- or world-writable one, one owned by
 * another user, an unknown key, a key the source cannot set or a bad value
 * is, as "FILE:LINE: reason".
 */
int	 config_load_file(struct policy *, const char *, enum policy_source,
	    struct aisb_error *);
/* Refuse a file another user could have written (relayd's check). */
int	 config_check_file(const char *, int, struct aisb_error *);

/* render.c */
void	 argv_init(struct argv *);
void	 argv_free(struct argv *);
int	 argv_add(struct argv *, const char *);
int	 argv_addf(struct argv *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Split at blanks (no quoting) and append each word; -1 past max words. */
int	 argv_add_words(struct argv *, const char *, size_t);
/* Append s quoted for a POSIX shell. */
int	 shell_quote(struct sbuf *, const char *);
/* Append the argv as one shell-quoted line with a newline. */
int	 argv_quote_line(const struct argv *, struct sbuf *);

/* What a run knows only when it starts; previews use the placeholders. */
struct render_ctx {
	const char	*session;	/* AISB_PH_SESSION */
	const char	*image;		/* AISB_PH_IMAGE */
	const char	*gate_image;	/* NULL: image */
	uint16_t	 gate_port;	/* 0: AISB_PH_GATE_PORT */
	const char	*session_dir;	/* state-dir/sessions/SESSION */
	const char	*env_file;	/* runtime-dir/SESSION/env, 0600 */
};

/* Where the sandbox's egress goes, from the network mode and backend. */
struct policy_egress {
	int		 gate;		/* a gate container runs */
	int		 host_loopback;	/* network maps host loopback */
	int		 ruleset;	/* the init installs a ruleset */
	int		 dns;		/* the ruleset allows DNS */
	char		 addr[ADDR_STR_SIZE];	/* gate/proxy, sandbox side */
	uint16_t	 port;		/* proxy port; 0 with a gate */
};
int	 policy_egress(const struct policy *, struct policy_egress *);
/* The backend a run uses: auto is taken as slirp4netns until detected. */
enum policy_backend policy_backend_effective(const struct policy *);
int	 policy_selinux_effective(const struct policy *);
/*
 * The nftables ruleset the init installs: table inet aisb with output and
 * input chains, policy drop, loopback, established/related, the gate's
 * address and port (gate_addr NULL: none), IP/CIDR allowlist entries and
 * pinned addresses as direct rules, DNS to the resolvers only without the
 * gate. gate_port 0 renders the preview placeholder. Deterministic.
 */
int	 policy_render_ruleset(const struct policy *, const char *gate_addr,
	    uint16_t gate_port, struct sbuf *, struct aisb_error *);
/* The podman argv of the gate container (egress.gate must be true). */
int	 policy_render_gate_argv(const struct policy *,
	    const struct render_ctx *, struct argv *, struct aisb_error *);
/* The podman argv of the sandbox container. */
int	 policy_render_sandbox_argv(const struct policy *,
	    const struct render_ctx *, struct argv *, struct aisb_error *);
/* The init's arguments after the image name, up to and with the command. */
int	 policy_render_init_args(const struct policy *,
	    const struct render_ctx *, struct argv *, struct aisb_error *);
/* What the init will do, in words, then the ruleset. */
int	 policy_render_entrypoint(const struct policy *,
	    const struct render_ctx *, struct sbuf *, struct aisb_error *);
/* The DNS resolvers the ruleset allows without the gate. */
int	 policy_dns_targets(const struct policy *, struct policy_strs *);
/* "net=allow,allow=3,via=gate": the aisb.policy label, for ps. */
void	 policy_summary(const struct policy *, char *, size_t);

/* containerfile.c: the images' Containerfile, rendered from the policy. */
#define AISB_NODE_VERSION_DEFAULT	"22.23.5"
#define AISB_NPM_VERSION		"10.9.9"	/* npm of Node.js 22 */
#define AISB_PI_PACKAGE			"@mariozechner/pi-coding-agent"
#define AISB_PI_VERSION_DEFAULT		"0.73.1"
#define AISB_IMAGE_SANDBOX		"localhost/aisb-sandbox"
#define AISB_IMAGE_GATE			"localhost/aisb-gate"
#define AISB_BASE_DEBOOTSTRAP		"debootstrap:"
#define AISB_UNPINNED			"UNPINNED"
#define AISB_SRC_DIR			"/usr/src/ai-sandbox"	/* build stage */
#define AISB_NODE_FETCH			"/usr/local/libexec/ai-sandbox/fetch-node"
#define AISB_EXTRA_CA_DIR		"/usr/local/share/ca-certificates/aisb"
#define AISB_EXTRA_CA_PEM		"/etc/aisb/extra-ca.pem"
#define AISB_MANIFEST			"/etc/aisb/manifest.txt"
#define CONTAINERFILE_DIGEST_MAX	80	/* "sha256:" and 64 hex */

enum containerfile_base {
	CONTAINERFILE_BASE_REGISTRY,	/* resolved to REPO@DIGEST */
	CONTAINERFILE_BASE_DIGEST,	/* the reference names its digest */
	CONTAINERFILE_BASE_DEBOOTSTRAP,	/* debootstrap:SUITE, an image id */
};

/* What the Containerfile says besides the policy. */
struct containerfile_in {
	const char	*base_digest;	/* "sha256:HEX", NULL: UNPINNED */
	const char	*source_hash;	/* 64 hex: the build context's files */
	size_t		 ca_certs;	/* ca/aisb-extra-N.crt files, 0: none */
};

enum containerfile_base containerfile_base_kind(const char *);
/* The suite of "debootstrap:SUITE", or NULL. */
const char *containerfile_base_suite(const char *);
/* "sha256:HEX" with 64 lowercase hex digits? */
int	 containerfile_digest_valid(const char *);
/*
 * What FROM names: REPO@DIGEST for a registry reference (its tag dropped),
 * the image id for debootstrap, the reference itself when it carries its
 * digest or when there is none (UNPINNED). -1 when it does not fit.
 */
int	 containerfile_base_from(const char *, const char *, char *, size_t);
/*
 * The multi-stage Containerfile: os (the pinned base, CA certificates),
 * build (aisb-gate and aisb-init from src/ against the base's libraries),
 * node (Node.js and npm, checksums verified), gate and sandbox. Every label
 * and version is in the text, so its hash names the image. Deterministic.
 */
int	 containerfile_render(const struct policy *,
	    const struct containerfile_in *, struct sbuf *,
	    struct aisb_error *);

#endif /* POLICY_H */
