/*
 * aisb-init: the sandbox's entrypoint, PID 1 of the container.
 *
 * As root in the user namespace with CAP_NET_ADMIN it installs the egress
 * ruleset rendered by the same shared function --print-entrypoint uses,
 * reads it back and checks that both chains are in place with policy drop,
 * then drops to the sandbox user with every capability set empty and
 * no_new_privs, and runs the command as its child: it stays PID 1 only to
 * reap orphans and forward signals, with no privilege left.
 *
 * Exit status: the command's; 77 the ruleset could not be installed; 78 it
 * did not verify; 79 privileges could not be dropped; 125 bad arguments;
 * 126/127 the command could not be executed.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/capability.h>

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <nftables/libnftables.h>

#include "init.h"

const char init_usage[] =
"usage: aisb-init [--net=allow|none|full] [--gate=ADDR:PORT] [--allow=ENTRY]...\n"
"                 [--dns=ADDR]... [--uid=N --gid=N | --keep-root]\n"
"                 [--allow-unenforced] [--print-ruleset] -- COMMAND [ARG...]\n"
"\n"
"The ai-sandbox container entrypoint: installs and verifies the egress\n"
"ruleset, drops every privilege, and runs COMMAND. The launcher writes\n"
"these arguments; see ai-sandbox --print-entrypoint.\n";

void
init_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aisb-init: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
init_fatal(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aisb-init: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* Split "ADDR:PORT" or "[ADDR]:PORT". */
static int
split_gate(const char *s, char *addr, size_t addrsz, uint16_t *port)
{
	const char *colon, *a = s;
	size_t alen;
	char *end;
	long v;

	if (*s == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			return -1;
		a = s + 1;
		alen = (size_t)(colon - a);
		colon++;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return -1;
		alen = (size_t)(colon - s);
	}
	if (alen == 0 || alen >= addrsz)
		return -1;
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	v = strtol(colon + 1, &end, 10);
	if (*end != '\0' || v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* A uid or gid argument. */
static long
parse_id(const char *name, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > 65534)
		init_fatal(INIT_EXIT_USAGE, "%s: \"%s\" is not an id from 1 "
		    "to 65534", name, s);
	return v;
}

/* Read the arguments into conf and a policy the ruleset renders from. */
int
init_parse(int argc, char **argv, struct init_conf *c, struct policy *p,
    struct aisb_error *err)
{
	struct policy_origin o;
	struct allow_entry e;
	struct policy_str *ns;
	const char *a;
	int i;

	memset(c, 0, sizeof(*c));
	c->net = POLICY_NET_ALLOW;
	c->uid = -1;
	c->gid = -1;
	policy_init(p);
	memset(&o, 0, sizeof(o));
	policy_origin_set(&o, POLICY_SRC_FLAG, "aisb-init");
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0) {
			c->help = 1;
			return 0;
		} else if (strcmp(a, "--net=allow") == 0)
			c->net = POLICY_NET_ALLOW;
		else if (strcmp(a, "--net=none") == 0)
			c->net = POLICY_NET_NONE;
		else if (strcmp(a, "--net=full") == 0)
			c->net = POLICY_NET_FULL;
		else if (strncmp(a, "--gate=", 7) == 0) {
			if (split_gate(a + 7, c->gate_addr,
			    sizeof(c->gate_addr), &c->gate_port) == -1)
				return aisb_err(err, "--gate: \"%s\" is not "
				    "ADDR:PORT", a + 7);
		} else if (strncmp(a, "--allow=", 8) == 0) {
			if (allow_entry_parse(a + 8, strlen(a + 8), &e,
			    err) == -1 ||
			    policy_allow_add(&p->allow, &e, &o, err) == -1)
				return -1;
		} else if (strncmp(a, "--dns=", 6) == 0) {
			if (p->dns.n == p->dns.cap) {
				size_t cap = p->dns.cap ? p->dns.cap * 2 : 4;

				ns = realloc(p->dns.v, cap * sizeof(*ns));
				if (ns == NULL)
					return aisb_err(err, "out of memory");
				p->dns.v = ns;
				p->dns.cap = cap;
			}
			ns = &p->dns.v[p->dns.n];
			memset(ns, 0, sizeof(*ns));
			if ((ns->s = strdup(a + 6)) == NULL)
				return aisb_err(err, "out of memory");
			p->dns.n++;
		} else if (strncmp(a, "--uid=", 6) == 0)
			c->uid = parse_id("--uid", a + 6);
		else if (strncmp(a, "--gid=", 6) == 0)
			c->gid = parse_id("--gid", a + 6);
		else if (strcmp(a, "--keep-root") == 0)
			c->keep_root = 1;
		else if (strcmp(a, "--allow-unenforced") == 0)
			c->allow_unenforced = 1;
		else if (strcmp(a, "--print-ruleset") == 0)
			c->print_ruleset = 1;
		else
			return aisb_err(err, "unknown argument \"%s\"", a);
	}
	p->net = c->net;
	/* Without a gate or proxy, egress is direct: DNS must get out. */
	p->gate = c->gate_addr[0] != '\0' || p->dns.n == 0;
	if (!c->keep_root && (c->uid == -1 || c->gid == -1))
		return aisb_err(err, "--uid and --gid, or --keep-root, are "
		    "required");
	if (c->net == POLICY_NET_ALLOW && c->gate_addr[0] == '\0' &&
	    p->allow.n == 0 && p->dns.n == 0)
		return aisb_err(err, "--net=allow with no --gate, --allow or "
		    "--dns would allow nothing");
	c->cmd = argv + i;
	c->ncmd = argc - i;
	if (c->ncmd <= 0 && !c->print_ruleset)
		return aisb_err(err, "no command after --");
	return 0;
}

/* Run one nft command; its output (or error text) lands in out. */
static int
nft_run(struct nft_ctx *nft, const char *cmd, int json, const char **out)
{
	int rc;

	nft_ctx_output_set_flags(nft, json ? NFT_CTX_OUTPUT_JSON : 0);
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	rc = nft_run_cmd_from_buffer(nft, cmd);
	*out = rc == 0 ? nft_ctx_get_output_buffer(nft) :
	    nft_ctx_get_error_buffer(nft);
	return rc;
}

/*
 * Does the JSON listing of table inet aisb show a chain on hook with
 * policy drop? Reading it back is the proof that the kernel holds what
 * was installed, not what was meant.
 */
int
init_ruleset_verify(const char *json, struct aisb_error *err)
{
	const cJSON *items, *it, *ch, *f;
	int out_ok = 0, in_ok = 0;
	cJSON *root;

	if ((root = cJSON_Parse(json)) == NULL)
		return aisb_err(err, "the ruleset listing is not JSON");
	items = cJSON_GetObjectItemCaseSensitive(root, "nftables");
	cJSON_ArrayForEach(it, items) {
		ch = cJSON_GetObjectItemCaseSensitive(it, "chain");
		if (!cJSON_IsObject(ch))
			continue;
		f = cJSON_GetObjectItemCaseSensitive(ch, "table");
		if (!cJSON_IsString(f) || strcmp(f->valuestring, "aisb") != 0)
			continue;
		f = cJSON_GetObjectItemCaseSensitive(ch, "family");
		if (!cJSON_IsString(f) || strcmp(f->valuestring, "inet") != 0)
			continue;
		f = cJSON_GetObjectItemCaseSensitive(ch, "policy");
		if (!cJSON_IsString(f) || strcmp(f->valuestring, "drop") != 0)
			continue;
		f = cJSON_GetObjectItemCaseSensitive(ch, "hook");
		if (!cJSON_IsString(f))
			continue;
		if (strcmp(f->valuestring, "output") == 0)
			out_ok = 1;
		else if (strcmp(f->valuestring, "input") == 0)
			in_ok = 1;
	}
	cJSON_Delete(root);
	if (!out_ok)
		return aisb_err(err, "no output chain with policy drop in "
		    "table inet aisb");
	if (!in_ok)
		return aisb_err(err, "no input chain with policy drop in "
		    "table inet aisb");
	return 0;
}

/* Install and verify the ruleset, or stop (77, 78). */
void
init_ruleset(const struct init_conf *c, const struct policy *p)
{
	struct aisb_error err;
	struct nft_ctx *nft;
	struct sbuf rules;
	const char *out;

	sbuf_init(&rules);
	if (policy_render_ruleset(p, c->gate_addr[0] ? c->gate_addr : NULL,
	    c->gate_port, &rules, &err) == -1)
		init_fatal(INIT_EXIT_INSTALL, "cannot render the ruleset: %s",
		    err.msg);
	if ((nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL)
		init_fatal(INIT_EXIT_INSTALL, "cannot install the egress "
		    "ruleset: libnftables context");
	if (nft_run(nft, rules.p, 0, &out) != 0) {
		if (!c->allow_unenforced)
			init_fatal(INIT_EXIT_INSTALL, "cannot install the "
			    "egress ruleset (exit 77): %s", out ? out : "");
		init_warn("WARNING: the egress ruleset could not be installed "
		    "and --allow-unenforced is set: egress is NOT restricted: "
		    "%s", out ? out : "");
	} else if (nft_run(nft, "list table inet aisb", 1, &out) != 0 ||
	    init_ruleset_verify(out, &err) == -1) {
		if (!c->allow_unenforced)
			init_fatal(INIT_EXIT_VERIFY, "the egress ruleset does "
			    "not verify (exit 78): %s", err.msg);
		init_warn("WARNING: the egress ruleset does not verify and "
		    "--allow-unenforced is set: %s", err.msg);
	}
	nft_ctx_free(nft);
	sbuf_free(&rules);
}

/* The highest capability number this kernel knows. */
static int
cap_last(void)
{
	FILE *f;
	int last = 40;

	if ((f = fopen("/proc/sys/kernel/cap_last_cap", "r")) != NULL) {
		if (fscanf(f, "%d", &last) != 1)
			last = 40;
		fclose(f);
	}
	return last;
}

/* Empty the effective, permitted and inheritable sets. */
static int
caps_clear(void)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct d[2];

	memset(&h, 0, sizeof(h));
	memset(d, 0, sizeof(d));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	return (int)syscall(SYS_capset, &h, d);
}

/*
 * Check /proc/self/status: every capability set empty and no_new_privs
 * on. What the kernel says, not what the calls returned.
 */
int
init_status_verify(const char *status, struct aisb_error *err)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:",
	    "CapBnd:", "CapAmb:" };
	const char *l;
	size_t i;
	unsigned long long v;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if ((l = strstr(status, keys[i])) == NULL)
			return aisb_err(err, "%s missing", keys[i]);
		if (sscanf(l + strlen(keys[i]), "%llx", &v) != 1 || v != 0)
			return aisb_err(err, "%s not empty", keys[i]);
	}
	if ((l = strstr(status, "NoNewPrivs:")) == NULL ||
	    strtol(l + 11, NULL, 10) != 1)
		return aisb_err(err, "no_new_privs is not set");
	return 0;
}

static void
privs_verify(void)
{
	struct aisb_error err;
	char buf[8192];
	size_t n;
	FILE *f;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		init_fatal(INIT_EXIT_PRIVS, "/proc/self/status: %s",
		    strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (init_status_verify(buf, &err) == -1)
		init_fatal(INIT_EXIT_PRIVS, "privileges not dropped: %s",
		    err.msg);
}

/* Drop to uid/gid with no capability and no way back (79 on failure). */
void
init_drop(const struct init_conf *c)
{
	int cap, last = cap_last();

	/* The bounding set first: it needs CAP_SETPCAP, gone after setuid. */
	for (cap = 0; cap <= last; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno != EINVAL)
			init_fatal(INIT_EXIT_PRIVS, "dropping capability %d "
			    "from the bounding set: %s", cap, strerror(errno));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		init_fatal(INIT_EXIT_PRIVS, "clearing ambient capabilities: "
		    "%s", strerror(errno));
	if (!c->keep_root) {
		if (setgroups(0, NULL) == -1)
			init_fatal(INIT_EXIT_PRIVS, "setgroups: %s",
			    strerror(errno));
		if (setresgid((gid_t)c->gid, (gid_t)c->gid, (gid_t)c->gid) ==
		    -1)
			init_fatal(INIT_EXIT_PRIVS, "setresgid %ld: %s",
			    c->gid, strerror(errno));
		if (setresuid((uid_t)c->uid, (uid_t)c->uid, (uid_t)c->uid) ==
		    -1)
			init_fatal(INIT_EXIT_PRIVS, "setresuid %ld: %s",
			    c->uid, strerror(errno));
	}
	/* setuid clears permitted and effective, not inheritable. */
	if (caps_clear() == -1)
		init_fatal(INIT_EXIT_PRIVS, "capset: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		init_fatal(INIT_EXIT_PRIVS, "no_new_privs: %s",
		    strerror(errno));
	if (!c->keep_root && (getuid() != (uid_t)c->uid ||
	    geteuid() != (uid_t)c->uid || getgid() != (gid_t)c->gid ||
	    getgroups(0, NULL) != 0))
		init_fatal(INIT_EXIT_PRIVS, "still not uid %ld gid %ld",
		    c->uid, c->gid);
	privs_verify();
}

/* HOME, PATH and the proxy variables pointing at the gate. */
void
init_environment(const struct init_conf *c)
{
	char url[128];

	setenv("HOME", AISB_HOME, 1);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
	    "/sbin:/bin", 0);
	if (c->gate_addr[0] == '\0')
		return;
	snprintf(url, sizeof(url), strchr(c->gate_addr, ':') ?
	    "http://[%s]:%u" : "http://%s:%u", c->gate_addr, c->gate_port);
	setenv("HTTP_PROXY", url, 1);
	setenv("HTTPS_PROXY", url, 1);
	setenv("http_proxy", url, 1);
	setenv("https_proxy", url, 1);
	setenv("NO_PROXY", "localhost,127.0.0.1,::1", 1);
	setenv("no_proxy", "localhost,127.0.0.1,::1", 1);
}

void
init_exec(const struct init_conf *c)
{
	int e;

	execvp(c->cmd[0], c->cmd);
	e = errno;
	fprintf(stderr, "aisb-init: %s: %s\n", c->cmd[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

/*
 * As PID 1: run the command as a child, forward signals to it, reap
 * every orphan, and exit with the command's status.
 */
int
init_supervise(const struct init_conf *c)
{
	static const int fwd[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1,
	    SIGUSR2, SIGWINCH, SIGCONT };
	sigset_t set, old;
	siginfo_t si;
	pid_t child, w;
	size_t i;
	int status;

	sigemptyset(&set);
	for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaddset(&set, fwd[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	if ((child = fork()) == -1)
		init_fatal(126, "fork: %s", strerror(errno));
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Its own process group, in the foreground of a terminal. */
		setpgid(0, 0);
		if (isatty(STDIN_FILENO)) {
			signal(SIGTTOU, SIG_IGN);
			tcsetpgrp(STDIN_FILENO, getpid());
			signal(SIGTTOU, SIG_DFL);
		}
		init_exec(c);
	}
	for (;;) {
		if (sigwaitinfo(&set, &si) == -1)
			continue;
		if (si.si_signo != SIGCHLD) {
			kill(child, si.si_signo);
			continue;
		}
		while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
			if (w != child)
				continue;
			if (WIFEXITED(status))
				return WEXITSTATUS(status);
			if (WIFSIGNALED(status))
				return 128 + WTERMSIG(status);
		}
	}
}
