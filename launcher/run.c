/*
 * The enforced run: a session directory, the 0600 env file, the gate
 * container on a free loopback port, the sandbox in the foreground, and
 * cleanup however the run ends. Podman is always exec'd with an argv
 * rendered from the policy; no shell ever sees user input.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define RUN_GATE_WAIT_MS	20000	/* first start may load the image */
#define RUN_SESSION_LEN		12

struct run {
	struct launcher	*L;
	char		 session[RUN_SESSION_LEN + 1];
	char		*session_dir;
	char		*runtime_dir;
	char		*env_file;
	char		 image[256];
	char		 gate_image[256];
	uint16_t	 gate_port;
	int		 gate_started;
	time_t		 start;
	time_t		 end;
	int		 status;
};

static volatile sig_atomic_t run_signal;
static volatile pid_t run_child = -1;

/* Forward a signal to the sandbox's podman, remember it for cleanup. */
static void
run_sighandler(int sig)
{
	run_signal = sig;
	if (run_child > 0)
		kill(run_child, sig);
}

/* A random session id: 12 lowercase hex digits. */
static int
run_session_id(char *out)
{
	unsigned char b[RUN_SESSION_LEN / 2];
	size_t i;
	int fd;
	ssize_t n;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, b, sizeof(b));
	close(fd);
	if (n != (ssize_t)sizeof(b))
		return -1;
	for (i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* mkdir -p with mode for every component created. */
static int
run_mkdirs(const char *path, mode_t mode, struct aisb_error *err)
{
	char buf[4096], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return aisb_err(err, "%s: path too long", path);
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return aisb_errno(err, "mkdir %s", buf);
		*p = '/';
	}
	if (mkdir(buf, mode) == -1 && errno != EEXIST)
		return aisb_errno(err, "mkdir %s", buf);
	return 0;
}

/* Create a new file (never an existing one or a link) with data. */
static int
run_write_new(const char *path, const void *data, size_t len, mode_t mode,
    struct aisb_error *err)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (fd == -1)
		return aisb_errno(err, "%s", path);
	n = len ? write(fd, data, len) : 0;
	if (n != (ssize_t)len || fsync(fd) == -1) {
		aisb_errno(err, "write %s", path);
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

/* A loopback port free a moment ago. */
int
run_free_port(uint16_t *port, struct aisb_error *err)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return aisb_errno(err, "socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		aisb_errno(err, "choosing a gate port");
		close(fd);
		return -1;
	}
	close(fd);
	*port = ntohs(sin.sin_port);
	return 0;
}

/*
 * Run argv and wait; stdout/stderr go to devnull when quiet. Returns the
 * exit status (128+signal), or -1 if it could not start.
 */
int
run_argv(const struct argv *a, int quiet)
{
	pid_t pid;
	int status, fd;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (quiet && (fd = open("/dev/null", O_WRONLY)) != -1) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(a->v[0], a->v);
		fprintf(stderr, "ai-sandbox: %s: %s\n", a->v[0],
		    strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* podman rm -f NAME, quietly. */
static void
run_podman_rm(const struct policy *p, const char *name)
{
	struct argv a;

	argv_init(&a);
	if (argv_add(&a, p->podman) == 0 && argv_add(&a, "rm") == 0 &&
	    argv_add(&a, "--force") == 0 && argv_add(&a, "--time=2") == 0 &&
	    argv_add(&a, name) == 0)
		run_argv(&a, 1);
	argv_free(&a);
}

/* Show the gate container's log after it failed to come up. */
static void
run_gate_logs(struct run *r)
{
	struct argv a;

	argv_init(&a);
	if (argv_add(&a, r->L->policy.podman) == 0 &&
	    argv_add(&a, "logs") == 0 &&
	    argv_addf(&a, "aisb-gate-%s", r->session) == 0)
		run_argv(&a, 0);
	argv_free(&a);
}

/* Poll until the gate accepts on its port. */
static int
run_gate_wait(struct run *r, struct aisb_error *err)
{
	struct sockaddr_in sin;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int fd, waited;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(r->gate_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (waited = 0; waited < RUN_GATE_WAIT_MS; waited += 50) {
		if (run_signal)
			return aisb_err(err, "interrupted");
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1)
			return aisb_errno(err, "socket");
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			close(fd);
			return 0;
		}
		close(fd);
		nanosleep(&ts, NULL);
	}
	run_gate_logs(r);
	return aisb_err(err, "the gate did not accept connections on "
	    "127.0.0.1:%u within %d s", r->gate_port, RUN_GATE_WAIT_MS / 1000);
}

/* The gate's allowlist: every entry, canonical, one per line. */
static int
run_gate_files(struct run *r, struct aisb_error *err)
{
	const struct policy *p = &r->L->policy;
	struct sbuf b;
	char path[4096];
	size_t i;
	int rv;

	sbuf_init(&b);
	sbuf_printf(&b, "# ai-sandbox session %s\n", r->session);
	for (i = 0; i < p->allow.n; i++)
		sbuf_printf(&b, "%s\n", p->allow.v[i].e.text);
	snprintf(path, sizeof(path), "%s/allow", r->session_dir);
	rv = run_write_new(path, b.p, b.len, 0600, err);
	sbuf_free(&b);
	if (rv == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/log", r->session_dir);
	if (mkdir(path, 0700) == -1)
		return aisb_errno(err, "mkdir %s", path);
	/* Rootful: the gate's user is host uid 65534; it reads the allowlist
	 * and writes its log, nothing else of the session. */
	if (p->rootful && (chown(path, AISB_GATE_UID, AISB_GATE_GID) == -1 ||
	    chown((snprintf(path, sizeof(path), "%s/allow", r->session_dir),
	    path), AISB_GATE_UID, AISB_GATE_GID) == -1 ||
	    chmod(r->session_dir, 0711) == -1))
		return aisb_errno(err, "handing %s to the gate's user", path);
	return 0;
}

/* Pin a name entry's addresses (--no-gate): resolved here, once. */
static int
run_pin_entry(struct policy *p, const struct policy_allow *pa,
    struct aisb_error *err)
{
	struct addrinfo hints, *res, *ai;
	struct allow_entry e;
	struct aisb_addr a;
	char buf[ALLOW_ENTRY_MAXLEN], abuf[ADDR_STR_SIZE];
	const uint16_t dflt[] = { ALLOW_PORT_HTTPS, ALLOW_PORT_HTTP };
	size_t i, nports;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(pa->e.name, NULL, &hints, &res)) != 0)
		return aisb_err(err, "--no-gate: resolving %s: %s", pa->e.name,
		    gai_strerror(rc));
	nports = pa->e.port ? 1 : 2;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		memset(&a, 0, sizeof(a));
		a.family = ai->ai_family;
		if (ai->ai_family == AF_INET)
			memcpy(a.b, &((struct sockaddr_in *)ai->ai_addr)->
			    sin_addr, 4);
		else if (ai->ai_family == AF_INET6)
			memcpy(a.b, &((struct sockaddr_in6 *)ai->ai_addr)->
			    sin6_addr, 16);
		else
			continue;
		for (i = 0; i < nports; i++) {
			addr_ntop(&a, abuf);
			snprintf(buf, sizeof(buf), a.family == AF_INET6 ?
			    "[%s]:%u" : "%s:%u", abuf,
			    pa->e.port ? pa->e.port : dflt[i]);
			if (allow_entry_parse(buf, strlen(buf), &e, err) == -1 ||
			    policy_allow_add(&p->pinned, &e, &pa->origin,
			    err) == -1) {
				freeaddrinfo(res);
				return -1;
			}
		}
	}
	freeaddrinfo(res);
	return 0;
}

static int
run_pin_names(struct policy *p, struct aisb_error *err)
{
	size_t i;

	for (i = 0; i < p->allow.n; i++)
		if (p->allow.v[i].e.kind == ALLOW_KIND_NAME &&
		    run_pin_entry(p, &p->allow.v[i], err) == -1)
			return -1;
	return 0;
}

/* Read a podman template field ("{{.Client.Version}}") into buf. */
static int
run_podman_query(const struct policy *p, const char *what, const char *fmt,
    char *buf, size_t len)
{
	int fds[2], status;
	ssize_t n;
	size_t off = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		if ((status = open("/dev/null", O_WRONLY)) != -1)
			dup2(status, STDERR_FILENO);
		execlp(p->podman, p->podman, what, "--format", fmt,
		    (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (off + 1 < len &&
	    (n = read(fds[0], buf + off, len - off - 1)) > 0)
		off += (size_t)n;
	close(fds[0]);
	buf[off] = '\0';
	while (off > 0 && (buf[off - 1] == '\n' || buf[off - 1] == ' '))
		buf[--off] = '\0';
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Is w one of the blank-separated words of list? */
static int
word_in(const char *list, const char *w)
{
	size_t wl = strlen(w);
	const char *p = list;

	while ((p = strstr(p, w)) != NULL) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n'))
			return 1;
		p += wl;
	}
	return 0;
}

/*
 * Would podman apply memory, cpus and pids here? Rootless podman on cgroup
 * v1 ignores them with only a warning (measured); on cgroup v2 it needs
 * the controllers delegated to the user's systemd slice. NULL if they hold,
 * else the reason, in buf.
 */
const char *
run_limits_unenforced(char *buf, size_t len)
{
	static const char *const need[] = { "memory", "pids", "cpu" };
	char path[256], ctl[512];
	struct stat st;
	size_t i, n;
	uid_t uid = geteuid();
	int fd;

	if (uid == 0)
		return NULL;	/* rootful podman enforces them, v1 and v2 */
	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == -1) {
		snprintf(buf, len, "this host uses cgroup v1 (or hybrid), where "
		    "rootless podman ignores resource limits with only a "
		    "warning");
		return buf;
	}
	snprintf(path, sizeof(path), "/sys/fs/cgroup/user.slice/"
	    "user-%u.slice/user@%u.service/cgroup.controllers",
	    (unsigned)uid, (unsigned)uid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(buf, len, "no cgroup v2 delegation for uid %u (%s is "
		    "missing: log in through systemd, or enable lingering)",
		    (unsigned)uid, path);
		return buf;
	}
	n = (size_t)read(fd, ctl, sizeof(ctl) - 1);
	close(fd);
	ctl[n < sizeof(ctl) ? n : 0] = '\0';
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!word_in(ctl, need[i])) {
			snprintf(buf, len, "the %s controller is not delegated "
			    "to uid %u (%s); add it to the user's Delegate= "
			    "setting", need[i], (unsigned)uid, path);
			return buf;
		}
	}
	return NULL;
}

/* crun refuses hybrid cgroup hosts (measured): auto means runc there. */
void
run_detect_runtime(struct policy *p)
{
	struct stat st;

	if (p->runtime == POLICY_RUNTIME_AUTO &&
	    stat("/sys/fs/cgroup/cgroup.controllers", &st) == -1)
		p->runtime = POLICY_RUNTIME_RUNC;
}

/*
 * What only the host can tell: the network backend (pasta needs podman
 * 5), the OCI runtime (crun refuses hybrid cgroup hosts, measured), SELinux
 * enforcement, and the hard limits the ulimits must stay within.
 */
int
run_detect(struct policy *p, struct aisb_error *err)
{
	struct rlimit rl;
	char buf[128], reason[512];
	int fd;

	if (run_podman_query(p, "version", "{{.Client.Version}}", buf,
	    sizeof(buf)) == -1)
		return aisb_err(err, "%s does not run: is podman installed? "
		    "(ai-sandbox doctor says more)", p->podman);
	if (p->backend == POLICY_BACKEND_AUTO)
		p->backend = atoi(buf) >= 5 ? POLICY_BACKEND_PASTA :
		    POLICY_BACKEND_SLIRP4NETNS;
	run_detect_runtime(p);
	p->rootful = geteuid() == 0;
	if (run_limits_unenforced(reason, sizeof(reason)) != NULL &&
	    !p->allow_unenforced_limits)
		return aisb_err(err, "refusing to run: --memory, --cpus and "
		    "--pids would not be enforced: %s. Run rootful podman or on "
		    "a cgroup v2 host with delegation, or pass "
		    "--allow-unenforced-limits to run without them", reason);
	if ((fd = open("/sys/fs/selinux/enforce", O_RDONLY)) != -1) {
		if (read(fd, buf, 1) == 1 && buf[0] == '1')
			p->selinux_enforcing = 1;
		close(fd);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max !=
	    RLIM_INFINITY && p->nofile > rl.rlim_max)
		return aisb_err(err, "nofile %llu is above this host's hard "
		    "limit %llu; podman would fail with \"setrlimit: operation "
		    "not permitted\" (set --nofile %llu or lower)",
		    (unsigned long long)p->nofile,
		    (unsigned long long)rl.rlim_max,
		    (unsigned long long)rl.rlim_max);
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_max !=
	    RLIM_INFINITY && p->nproc > rl.rlim_max)
		return aisb_err(err, "nproc %llu is above this host's hard "
		    "limit %llu (set --nproc %llu or lower)",
		    (unsigned long long)p->nproc,
		    (unsigned long long)rl.rlim_max,
		    (unsigned long long)rl.rlim_max);
	return 0;
}

/* One JSON line per run under the state directory; no secret values. */
static void
run_log(struct run *r)
{
	const struct policy *p = &r->L->policy;
	static const char *const nets[] = { "allow", "none", "full" };
	char path[4096], ts[32], te[32];
	struct tm tm;
	struct sbuf b;
	size_t i;
	int fd;

	gmtime_r(&r->start, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gmtime_r(&r->end, &tm);
	strftime(te, sizeof(te), "%Y-%m-%dT%H:%M:%SZ", &tm);
	sbuf_init(&b);
	sbuf_printf(&b, "{\"start\":\"%s\",\"end\":\"%s\",\"session\":\"%s\","
	    "\"exit\":%d,\"project\":", ts, te, r->session, r->status);
	json_add_cstr(&b, p->project_dir);
	sbuf_adds(&b, ",\"image\":");
	json_add_cstr(&b, r->image[0] ? r->image : NULL);
	sbuf_adds(&b, ",\"gate_image\":");
	json_add_cstr(&b, r->gate_image[0] ? r->gate_image : NULL);
	sbuf_printf(&b, ",\"net\":\"%s\",\"gate\":%s,\"allow\":[",
	    nets[p->net], r->gate_started ? "true" : "false");
	for (i = 0; i < p->allow.n; i++) {
		if (i > 0)
			sbuf_add(&b, ",", 1);
		json_add_cstr(&b, p->allow.v[i].e.text);
	}
	sbuf_adds(&b, "],\"env\":[");
	for (i = 0; i < p->env.n; i++) {
		if (i > 0)
			sbuf_add(&b, ",", 1);
		json_add_cstr(&b, p->env.v[i].name);	/* names only */
	}
	sbuf_adds(&b, "],\"command\":[");
	for (i = 0; i < p->command.n; i++) {
		if (i > 0)
			sbuf_add(&b, ",", 1);
		json_add_cstr(&b, p->command.v[i]);
	}
	if (p->gate_name[0] != '\0')
		snprintf(path, sizeof(path), "%s/gates/%s/log/gate.log",
		    p->state_dir, p->gate_name);
	else
		snprintf(path, sizeof(path), "%s/log/gate.log", r->session_dir);
	sbuf_adds(&b, "],\"gate_name\":");
	json_add_cstr(&b, p->gate_name[0] ? p->gate_name : NULL);
	sbuf_adds(&b, ",\"gate_log\":");
	json_add_cstr(&b, r->gate_started || (p->gate_name[0] && r->gate_port)
	    ? path : NULL);
	sbuf_printf(&b, ",\"keep\":%s}\n", p->keep ? "true" : "false");
	snprintf(path, sizeof(path), "%s/runs.jsonl", p->state_dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd == -1 || write(fd, b.p, b.len) != (ssize_t)b.len)
		fprintf(stderr, "ai-sandbox: warning: run log %s: %s\n", path,
		    strerror(errno));
	if (fd != -1)
		close(fd);
	sbuf_free(&b);
}

/* The env file, 0600, in a 0700 directory of the runtime dir. */
static int
run_env_file(struct run *r, struct aisb_error *err)
{
	struct sbuf b;
	int rv;

	if (run_mkdirs(r->runtime_dir, 0700, err) == -1)
		return -1;
	sbuf_init(&b);
	if (env_file_render(r->L, &b, err) == -1) {
		sbuf_free(&b);
		return -1;
	}
	rv = run_write_new(r->env_file, b.p ? b.p : "", b.len, 0600, err);
	if (b.p != NULL)
		explicit_bzero(b.p, b.len);
	sbuf_free(&b);
	return rv;
}

/* Remove what must not outlive the run; --keep leaves the containers. */
static void
run_cleanup(struct run *r)
{
	const struct policy *p = &r->L->policy;
	char path[4096];

	/* The secrets go, whatever --keep says. */
	if (r->env_file != NULL)
		unlink(r->env_file);
	if (r->runtime_dir != NULL)
		rmdir(r->runtime_dir);
	if (p->keep) {
		if (r->gate_started)
			fprintf(stderr, "ai-sandbox: --keep: gate container "
			    "aisb-gate-%s and sandbox aisb-%s left in place; "
			    "session directory %s\n", r->session, r->session,
			    r->session_dir);
		return;
	}
	if (r->gate_started)
		run_podman_rm(p, (snprintf(path, sizeof(path), "aisb-gate-%s",
		    r->session), path));
	if (r->session_dir != NULL) {
		snprintf(path, sizeof(path), "%s/allow", r->session_dir);
		unlink(path);
	}
}

/* Start the gate and wait until it serves. */
static int
run_gate(struct run *r, const struct render_ctx *ctx, struct aisb_error *err)
{
	struct argv a;
	int rc;

	if (run_gate_files(r, err) == -1)
		return -1;
	argv_init(&a);
	if (policy_render_gate_argv(&r->L->policy, ctx, &a, err) == -1) {
		argv_free(&a);
		return -1;
	}
	rc = run_argv(&a, 1);
	argv_free(&a);
	r->gate_started = 1;	/* even half-started, it is removed */
	if (rc != 0) {
		run_gate_logs(r);
		return aisb_err(err, "the gate container did not start "
		    "(podman exit %d)", rc);
	}
	return run_gate_wait(r, err);
}

/* The sandbox in the foreground; its exit status is the run's. */
static int
run_sandbox(struct run *r, const struct render_ctx *ctx,
    struct aisb_error *err)
{
	struct argv a;
	int status;
	pid_t pid;

	argv_init(&a);
	if (policy_render_sandbox_argv(&r->L->policy, ctx, &a, err) == -1) {
		argv_free(&a);
		return -1;
	}
	if ((pid = fork()) == -1) {
		argv_free(&a);
		return aisb_errno(err, "fork");
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(a.v[0], a.v);
		fprintf(stderr, "ai-sandbox: %s: %s\n", a.v[0],
		    strerror(errno));
		_exit(127);
	}
	run_child = pid;
	argv_free(&a);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return aisb_errno(err, "waitpid");
	run_child = -1;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
	return 0;
}

/* The run: returns the command's exit status, or -1 with err. */
int
run_start(struct launcher *L, struct aisb_error *err)
{
	struct policy *p = &L->policy;
	struct policy_egress eg;
	struct render_ctx ctx;
	struct sigaction sa;
	struct run r;
	int rv = -1;

	memset(&r, 0, sizeof(r));
	r.L = L;
	r.status = -1;
	r.start = time(NULL);
	if (p->gate_name[0] != '\0' && !gate_name_valid(p->gate_name))
		return aisb_err(err, "--gate: \"%.64s\" is not a gate name",
		    p->gate_name);
	if (run_detect(p, err) == -1)
		return -1;
	if (p->net == POLICY_NET_ALLOW && !p->gate &&
	    (p->proxy == NULL || strcmp(p->proxy, "none") == 0) &&
	    run_pin_names(p, err) == -1)
		return -1;
	policy_egress(p, &eg);
	if (run_session_id(r.session) == -1)
		return aisb_errno(err, "session id");
	if (asprintf(&r.session_dir, "%s/sessions/%s", p->state_dir,
	    r.session) < 0 || asprintf(&r.runtime_dir, "%s/%s",
	    p->runtime_dir, r.session) < 0 || asprintf(&r.env_file, "%s/env",
	    r.runtime_dir) < 0)
		return aisb_err(err, "out of memory");
	if (run_mkdirs(r.session_dir, 0700, err) == -1)
		goto out;
	if (image_ensure(L, IMAGE_ROLE_SANDBOX, r.image, sizeof(r.image),
	    err) == -1)
		goto out;
	if (eg.gate && p->gate_name[0] == '\0' && image_ensure(L,
	    IMAGE_ROLE_GATE, r.gate_image, sizeof(r.gate_image), err) == -1)
		goto out;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_sighandler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (run_env_file(&r, err) == -1 || ops_home_volume(L, err) == -1)
		goto out;
	memset(&ctx, 0, sizeof(ctx));
	ctx.session = r.session;
	ctx.image = r.image;
	ctx.gate_image = r.gate_image[0] ? r.gate_image : NULL;
	ctx.session_dir = r.session_dir;
	ctx.env_file = r.env_file;
	if (eg.gate && p->gate_name[0] != '\0') {
		/* A long-lived gate (ai-sandbox gate up) serves this run. */
		if (gate_named_port(L, p->gate_name, &r.gate_port, err) == -1)
			goto out;
		ctx.gate_port = r.gate_port;
	} else if (eg.gate) {
		if (run_free_port(&r.gate_port, err) == -1)
			goto out;
		ctx.gate_port = r.gate_port;
		if (run_gate(&r, &ctx, err) == -1)
			goto out;
	}
	if (run_signal) {
		aisb_err(err, "interrupted by signal %d", (int)run_signal);
		goto out;
	}
	if (run_sandbox(&r, &ctx, err) == -1)
		goto out;
	rv = r.status;
out:
	r.end = time(NULL);
	run_cleanup(&r);
	run_log(&r);
	free(r.session_dir);
	free(r.runtime_dir);
	free(r.env_file);
	return rv;
}
