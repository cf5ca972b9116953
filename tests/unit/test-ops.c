/* ps, clean and inspect on podman's real JSON: parsing, the filters, what
 * clean removes (never a named gate, never a gate whose sandbox may still
 * start), the volume namespace, the run log's records, the policy label. */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "launcher.h"
#include "policy.h"

#define NOW	1800000000LL

/* podman 4.3.1's `ps --all --format json`, trimmed to what is read. */
#define PS_ONE(id, name, state, started, session, role, project, ports) \
	"{\"AutoRemove\":false,\"Command\":[\"true\"],\"Created\":" #started \
	",\"Exited\":false,\"ExitedAt\":-62135596800,\"ExitCode\":0," \
	"\"Id\":\"" id "\",\"Image\":\"localhost/aisb-sandbox:abc\"," \
	"\"Labels\":{\"aisb.session\":\"" session "\",\"aisb.role\":\"" \
	role "\",\"aisb.project\":\"" project "\",\"aisb.policy\":" \
	"\"net=allow,allow=2,via=gate\"},\"Mounts\":[],\"Names\":[\"" name \
	"\"],\"Ports\":" ports ",\"StartedAt\":" #started ",\"State\":\"" \
	state "\",\"Status\":\"x\"}"

static const char ps_json[] = "[\n"
	PS_ONE("a1", "aisb-s1", "running", 1799999000, "s1", "sandbox",
	    "/p/one", "null") ",\n"
	PS_ONE("a2", "aisb-gate-s1", "running", 1799999000, "s1", "gate",
	    "/p/one", "null") ",\n"
	PS_ONE("b1", "aisb-s2", "exited", 1799990000, "s2", "sandbox",
	    "/p/two", "null") ",\n"
	PS_ONE("b2", "aisb-gate-s2", "running", 1799990000, "s2", "gate",
	    "/p/two", "null") ",\n"
	PS_ONE("c2", "aisb-gate-s3", "running", 1799999990, "s3", "gate",
	    "/p/two", "null") ",\n"
	PS_ONE("d2", "aisb-gate-s4", "exited", 1799999990, "s4", "gate",
	    "/p/one", "null") ",\n"
	PS_ONE("e2", "aisb-gate-named-team", "running", 1700000000,
	    "named-team", "gate", "/p/one",
	    "[{\"host_ip\":\"127.0.0.1\",\"container_port\":80,"
	    "\"host_port\":8080,\"range\":1,\"protocol\":\"tcp\"}]") ",\n"
	PS_ONE("f1", "other", "exited", 1700000000, "s9", "builder", "/p/one",
	    "null") "\n]\n";

static struct ops_containers C;

static void
load(void)
{
	struct aisb_error err;

	ops_containers_init(&C);
	cr_assert_eq(ops_ps_parse(ps_json, &C, &err), 0, "%s", err.msg);
}

static const struct ops_container *
byname(const char *name)
{
	size_t i;

	for (i = 0; i < C.n; i++)
		if (strcmp(C.v[i].name, name) == 0)
			return &C.v[i];
	cr_assert_fail("no %s", name);
	return NULL;
}

Test(ops, ps_parse_real_output)
{
	const struct ops_container *k;
	struct aisb_error err;

	load();
	cr_assert_eq(C.n, 8);
	k = byname("aisb-gate-named-team");
	cr_assert_str_eq(k->session, "named-team");
	cr_assert_str_eq(k->role, "gate");
	cr_assert_str_eq(k->project, "/p/one");
	cr_assert_str_eq(k->policy, "net=allow,allow=2,via=gate");
	cr_assert_str_eq(k->ports, "127.0.0.1:8080->80/tcp");
	cr_assert_str_eq(ops_gate_name(k), "team");
	cr_assert_eq(k->running, 1);
	cr_assert_eq(k->started, 1700000000);
	k = byname("aisb-s2");
	cr_assert_eq(k->running, 0);
	cr_assert_str_eq(k->state, "exited");
	cr_assert_str_eq(k->ports, "");
	cr_assert_null(ops_gate_name(k));
	cr_assert_null(ops_gate_name(byname("aisb-gate-s1")));
	ops_containers_free(&C);
	/* podman 4 prints nothing at all for no containers. */
	cr_assert_eq(ops_ps_parse("", &C, &err), 0);
	cr_assert_eq(ops_ps_parse(" \n", &C, &err), 0);
	cr_assert_eq(C.n, 0);
	cr_assert_eq(ops_ps_parse("[]", &C, &err), 0);
	cr_assert_eq(ops_ps_parse("Error: boom", &C, &err), -1);
	cr_assert_str_eq(err.msg, "podman ps: output is not JSON");
	cr_assert_eq(ops_ps_parse("{}", &C, &err), -1);
	cr_assert_str_eq(err.msg, "podman ps: output is not a JSON array");
	/* Missing labels and odd members are empty, not a crash. */
	cr_assert_eq(ops_ps_parse("[{\"Labels\":null,\"Names\":7,"
	    "\"StartedAt\":-62135596800,\"Created\":\"x\"}, 3]", &C, &err), 0);
	cr_assert_eq(C.n, 1);
	cr_assert_str_eq(C.v[0].role, "");
	cr_assert_str_eq(C.v[0].name, "");
	cr_assert_eq(C.v[0].started, 0);
	cr_assert_eq(C.v[0].created, 0);
	ops_containers_free(&C);
}

Test(ops, age_text)
{
	char b[32];

	cr_assert_str_eq(ops_age_text(-5, b, sizeof(b)), "0s");
	cr_assert_str_eq(ops_age_text(119, b, sizeof(b)), "119s");
	cr_assert_str_eq(ops_age_text(120, b, sizeof(b)), "2m");
	cr_assert_str_eq(ops_age_text(7199, b, sizeof(b)), "119m");
	cr_assert_str_eq(ops_age_text(7200, b, sizeof(b)), "2h");
	cr_assert_str_eq(ops_age_text(2 * 86400, b, sizeof(b)), "2d");
}

Test(ops, ps_render)
{
	struct ops_filter f = { 0, NULL };
	struct ops_containers none;
	struct sbuf b;

	load();
	sbuf_init(&b);
	cr_assert_eq(ps_render_text(&C, &f, NOW, &b), 0);
	cr_assert(strncmp(b.p, "SESSION        ROLE     STATE     AGE   POLICY",
	    46) == 0, "%s", b.p);
	cr_assert(strstr(b.p, "\ns1             sandbox  running   16m   "
	    "net=allow,allow=2,via=gate") != NULL, "%s", b.p);
	cr_assert(strstr(b.p, "named-team     gate team running   1157d ") !=
	    NULL, "%s", b.p);
	cr_assert(strstr(b.p, " 127.0.0.1:8080->80/tcp\n") != NULL, "%s", b.p);
	cr_assert(strstr(b.p, " /p/one                         none\n") !=
	    NULL, "%s", b.p);
	cr_assert_null(strstr(b.p, "exited"), "stopped ones only with --all");
	sbuf_reset(&b);
	f.all = 1;
	f.project = "/p/two";
	cr_assert_eq(ps_render_text(&C, &f, NOW, &b), 0);
	cr_assert(strstr(b.p, "s2             sandbox  exited") != NULL, "%s",
	    b.p);
	cr_assert_null(strstr(b.p, "/p/one"), "%s", b.p);
	sbuf_reset(&b);
	cr_assert_eq(ps_render_json(&C, &f, NOW, &b), 0);
	cr_assert(strstr(b.p, "{\"name\":\"aisb-s2\",\"session\":\"s2\","
	    "\"role\":\"sandbox\",\"gate_name\":null,\"state\":\"exited\","
	    "\"running\":false,\"age_s\":10000,\"project\":\"/p/two\","
	    "\"policy\":\"net=allow,allow=2,via=gate\",\"image\":"
	    "\"localhost/aisb-sandbox:abc\",\"ports\":\"\"}") != NULL, "%s",
	    b.p);
	ops_containers_init(&none);
	sbuf_reset(&b);
	f.all = 0;
	cr_assert_eq(ps_render_text(&none, &f, NOW, &b), 0);
	cr_assert_str_eq(b.p, "no running sandboxes or gates for this "
	    "project\n");
	sbuf_reset(&b);
	cr_assert_eq(ps_render_json(&none, &f, NOW, &b), 0);
	cr_assert_str_eq(b.p, "[]\n");
	sbuf_free(&b);
	ops_containers_free(&C);
}

Test(ops, clean_stopped_and_orphans_never_named)
{
	struct ops_filter f = { 0, NULL };

	load();
	clean_select(&C, &f, NOW);
	cr_assert_eq(byname("aisb-s1")->remove, 0, "running sandbox stays");
	cr_assert_eq(byname("aisb-gate-s1")->remove, 0, "its gate stays");
	cr_assert_eq(byname("aisb-s2")->remove, 1, "stopped sandbox goes");
	cr_assert_eq(byname("aisb-gate-s2")->remove, 1,
	    "the gate of a sandbox removed in the same pass goes");
	cr_assert_eq(byname("aisb-gate-s3")->remove, 0,
	    "a gate 10 s old may still get its sandbox");
	cr_assert_eq(byname("aisb-gate-s4")->remove, 1, "stopped gate goes");
	cr_assert_eq(byname("aisb-gate-named-team")->remove, 0,
	    "named gates are gate down's");
	cr_assert_eq(byname("other")->remove, 0, "other roles are left");
	/* A gate younger than the grace goes with its stopped sandbox. */
	((struct ops_container *)byname("aisb-gate-s2"))->started = NOW - 1;
	clean_select(&C, &f, NOW);
	cr_assert_eq(byname("aisb-gate-s2")->remove, 1);
	/* Past the grace, the lone gate is an orphan. */
	clean_select(&C, &f, 1799999990 + CLEAN_GATE_GRACE);
	cr_assert_eq(byname("aisb-gate-s3")->remove, 1);
	clean_select(&C, &f, 1799999990 + CLEAN_GATE_GRACE - 1);
	cr_assert_eq(byname("aisb-gate-s3")->remove, 0);
	ops_containers_free(&C);
}

Test(ops, clean_all_and_here)
{
	struct ops_filter f = { 1, NULL };

	load();
	clean_select(&C, &f, NOW);
	cr_assert_eq(byname("aisb-s1")->remove, 1);
	cr_assert_eq(byname("aisb-gate-s1")->remove, 1);
	cr_assert_eq(byname("aisb-gate-s3")->remove, 1);
	cr_assert_eq(byname("aisb-gate-named-team")->remove, 0,
	    "not even with --all");
	cr_assert_eq(byname("other")->remove, 0);
	f.project = "/p/one";
	clean_select(&C, &f, NOW);
	cr_assert_eq(byname("aisb-s1")->remove, 1);
	cr_assert_eq(byname("aisb-s2")->remove, 0, "another project");
	cr_assert_eq(byname("aisb-gate-s2")->remove, 0, "another project");
	f.all = 0;
	clean_select(&C, &f, NOW);
	cr_assert_eq(byname("aisb-s1")->remove, 0);
	cr_assert_eq(byname("aisb-gate-s4")->remove, 1);
	ops_containers_free(&C);
}

Test(ops, clean_volume_namespace)
{
	struct ops_volumes v;
	struct aisb_error err;

	cr_assert_eq(clean_glob_valid("aisb-*", &err), 0);
	cr_assert_eq(clean_glob_valid("aisb-home-e2e*", &err), 0);
	cr_assert_eq(clean_glob_valid("*", &err), -1);
	cr_assert_str_eq(err.msg, "clean: --volumes=*: the pattern must start "
	    "with \"aisb-\" (only ai-sandbox's volumes are removed)");
	cr_assert_eq(clean_glob_valid("ais*", &err), -1);
	cr_assert_eq(clean_glob_valid("[a]isb-*", &err), -1);
	cr_assert_eq(clean_glob_valid("aisb-/x", &err), -1);
	cr_assert_eq(clean_glob_valid("aisb-\n", &err), -1);
	ops_volumes_init(&v);
	cr_assert_eq(ops_volumes_parse("[{\"Name\":\"aisb-home\",\"Labels\":"
	    "{\"aisb.role\":\"home\"},\"MountCount\":0},{\"Name\":"
	    "\"aisb-home-0480b53c0aaf562f\",\"Labels\":{}},{\"Name\":"
	    "\"mydata\",\"Labels\":{}},{\"Name\":\"aisb-x.y\"}]", &v, &err),
	    0, "%s", err.msg);
	cr_assert_eq(v.n, 4);
	cr_assert_str_eq(v.v[0].role, "home");
	cr_assert_str_eq(v.v[1].role, "");
	clean_select_volumes(&v, "aisb-*");
	cr_assert_eq(v.v[0].remove + v.v[1].remove + v.v[2].remove +
	    v.v[3].remove, 3);
	cr_assert_eq(v.v[2].remove, 0, "outside the namespace");
	clean_select_volumes(&v, "aisb-home-*");
	cr_assert_eq(v.v[0].remove, 0);
	cr_assert_eq(v.v[1].remove, 1);
	cr_assert_eq(v.v[3].remove, 0);
	ops_volumes_free(&v);
	cr_assert_eq(ops_volumes_parse("", &v, &err), 0);
	cr_assert_eq(ops_volumes_parse("nope", &v, &err), -1);
}

#define REC(start, session, project, exit_) \
	"{\"start\":\"" start "\",\"end\":\"2026-11-29T10:00:09Z\"," \
	"\"session\":\"" session "\",\"exit\":" #exit_ ",\"project\":\"" \
	project "\",\"image\":\"localhost/aisb-sandbox:abc\",\"gate_image\":" \
	"\"localhost/aisb-gate:abc\",\"net\":\"allow\",\"gate\":true,\"allow\":" \
	"[\"127.0.0.2\",\"test.example:8080\"],\"env\":[\"API_KEY\"]," \
	"\"command\":[\"sh\",\"-c\",\"true\"],\"gate_name\":null,\"gate_log\":" \
	"\"/s/sessions/" session "/log/gate.log\",\"keep\":true}"

Test(ops, inspect_finds_the_newest_record)
{
	static const char log[] =
	    REC("2026-11-29T10:00:00Z", "aaa111", "/p/one", 0) "\n"
	    "not json\n"
	    REC("2026-11-29T10:00:01Z", "bbb222", "/p/two", 3) "\n"
	    REC("2026-11-29T10:00:02Z", "ccc333", "/p/one", 7) "\n"
	    "{\"session\":7}\n"
	    REC("2026-11-29T10:00:03Z", "ddd444", "/p/two", 0);
	char *r;

	r = inspect_find_record(log, strlen(log), "bbb222", NULL);
	cr_assert(r != NULL && strstr(r, "\"exit\":3") != NULL, "%s", r);
	free(r);
	r = inspect_find_record(log, strlen(log), NULL, "/p/one");
	cr_assert(r != NULL && strstr(r, "ccc333") != NULL, "%s", r);
	free(r);
	r = inspect_find_record(log, strlen(log), NULL, NULL);
	cr_assert(r != NULL && strstr(r, "ddd444") != NULL, "no newline at "
	    "the end: %s", r);
	free(r);
	cr_assert_null(inspect_find_record(log, strlen(log), "eee555", NULL));
	cr_assert_null(inspect_find_record(log, strlen(log), NULL, "/p/x"));
	cr_assert_null(inspect_find_record("", 0, NULL, NULL));
}

Test(ops, inspect_renders_the_policy_without_values)
{
	struct aisb_error err;
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(inspect_render_record(REC("2026-11-29T10:00:00Z",
	    "aaa111", "/p/one", 3), &b, &err), 0);
	cr_assert_str_eq(b.p,
	    "  project     /p/one\n"
	    "  started     2026-11-29T10:00:00Z\n"
	    "  ended       2026-11-29T10:00:09Z, exit status 3\n"
	    "  command     sh -c true\n"
	    "  policy      net=allow, keep\n"
	    "  allowlist   127.0.0.2, test.example:8080\n"
	    "  env names   API_KEY\n"
	    "  gate        its own (per-session)\n");
	sbuf_reset(&b);
	cr_assert_eq(inspect_render_record("{\"net\":\"none\",\"gate\":false,"
	    "\"gate_name\":\"team\"}", &b, &err), 0);
	cr_assert(strstr(b.p, "  allowlist   none\n  env names   none\n"
	    "  gate        named gate team\n") != NULL, "%s", b.p);
	sbuf_reset(&b);
	cr_assert_eq(inspect_render_record("{\"command\":[\"python3\",\"-c\","
	    "\"a\\nb 'c'\"]}", &b, &err), 0);
	cr_assert(strstr(b.p, "  command     python3 -c 'a?b '\\''c'\\'''\n")
	    != NULL, "%s", b.p);
	cr_assert_eq(inspect_render_record("{", &b, &err), -1);
	sbuf_free(&b);
}

Test(ops, policy_summary_label)
{
	struct policy p;
	char buf[96];

	memset(&p, 0, sizeof(p));
	p.net = POLICY_NET_ALLOW;
	p.gate = 1;
	p.proxy = "none";
	p.gate_name = "";
	p.allow.n = 3;
	policy_summary(&p, buf, sizeof(buf));
	cr_assert_str_eq(buf, "net=allow,allow=3,via=gate");
	p.gate_name = "team";
	policy_summary(&p, buf, sizeof(buf));
	cr_assert_str_eq(buf, "net=allow,allow=3,via=named-gate");
	p.gate = 0;
	policy_summary(&p, buf, sizeof(buf));
	cr_assert_str_eq(buf, "net=allow,allow=3,via=pinned");
	p.proxy = "127.0.0.1:3128";
	policy_summary(&p, buf, sizeof(buf));
	cr_assert_str_eq(buf, "net=allow,allow=3,via=proxy");
	p.net = POLICY_NET_NONE;
	policy_summary(&p, buf, sizeof(buf));
	cr_assert_str_eq(buf, "net=none");
	p.net = POLICY_NET_FULL;
	policy_summary(&p, buf, sizeof(buf));
	cr_assert_str_eq(buf, "net=full");
}

/* launcher_load in a fresh HOME and project; env is NULL-terminated. */
static int
load_policy(struct launcher *L, const char *dir, const char *const *env,
    const char *project_config, struct aisb_error *err)
{
	static char envbuf[8][512], *envp[9];
	char *argv[] = { "ai-sandbox", "ps", NULL };
	char path[600];
	size_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/proj/.ai-sandbox", dir);
	mkdir(path, 0700);
	if (project_config != NULL) {
		snprintf(path, sizeof(path), "%s/proj/.ai-sandbox/config", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		cr_assert_neq(fd, -1);
		cr_assert_eq(write(fd, project_config, strlen(project_config)),
		    (ssize_t)strlen(project_config));
		close(fd);
	}
	snprintf(envbuf[n], sizeof(envbuf[n]), "HOME=%s/home", dir);
	envp[n] = envbuf[n];
	for (n = 1; env != NULL && *env != NULL && n < 8; env++, n++) {
		snprintf(envbuf[n], sizeof(envbuf[n]), "%s", *env);
		envp[n] = envbuf[n];
	}
	envp[n] = NULL;
	snprintf(path, sizeof(path), "%s/proj", dir);
	launcher_init(L);
	memset(err, 0, sizeof(*err));
	return launcher_load(L, 2, argv, envp, path, err);
}

Test(ops, home_volume_key)
{
	char dir[] = "/tmp/test-ops-XXXXXX", path[600], want[64];
	const char *const none[] = { NULL };
	const char *const trust[] = { "AISB_HOME_VOLUME=aisb-home-work", NULL };
	const char *const empty[] = { "AISB_HOME_VOLUME=", NULL };
	const char *const bad[] = { "AISB_HOME_VOLUME=../x", NULL };
	struct aisb_error err;
	struct launcher L;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/home", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/proj", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	/* Default: one shared, named volume, so caches survive runs. */
	cr_assert_eq(load_policy(&L, dir, none, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.policy.home_volume, "aisb-home");
	launcher_free(&L);
	cr_assert_eq(load_policy(&L, dir, trust, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.policy.home_volume, "aisb-home-work");
	launcher_free(&L);
	/* An empty variable is unset; the user's file may name one. */
	cr_assert_eq(load_policy(&L, dir, empty, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.policy.home_volume, "aisb-home");
	launcher_free(&L);
	snprintf(want, sizeof(want), "%s/home/.config", dir);
	cr_assert_eq(mkdir(want, 0700), 0);
	snprintf(path, sizeof(path), "%s/home/.config/ai-sandbox", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	strncat(path, "/config", sizeof(path) - strlen(path) - 1);
	{
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		cr_assert_eq(write(fd, "home-volume = aisb-home-a\n", 26), 26);
		close(fd);
	}
	cr_assert_eq(load_policy(&L, dir, none, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.policy.home_volume, "aisb-home-a");
	launcher_free(&L);
	cr_assert_eq(load_policy(&L, dir, trust, NULL, &err), 0, "%s", err.msg);
	cr_assert_str_eq(L.policy.home_volume, "aisb-home-work",
	    "the variable beats the file");
	launcher_free(&L);
	/* A project cannot pick another trust level's home. */
	cr_assert_eq(load_policy(&L, dir, none, "home-volume = aisb-home-x\n",
	    &err), -1);
	cr_assert(strstr(err.msg, "home-volume") != NULL, "%s", err.msg);
	launcher_free(&L);
	snprintf(path, sizeof(path), "%s/proj/.ai-sandbox/config", dir);
	unlink(path);
	cr_assert_eq(load_policy(&L, dir, bad, NULL, &err), -1);
	cr_assert(strstr(err.msg, "AISB_HOME_VOLUME: \"../x\" is not a name")
	    != NULL, "%s", err.msg);
	launcher_free(&L);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	cr_assert_eq(system(path), 0);
}

/* A whole source file, read relative to tests/unit/data. */
static char *
source_file(const char *rel)
{
	char path[1024];
	struct sbuf b;
	char buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/../../../%s", TEST_DATA_DIR, rel);
	fd = open(path, O_RDONLY);
	cr_assert_neq(fd, -1, "%s", path);
	sbuf_init(&b);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&b, buf, (size_t)n);
	close(fd);
	return sbuf_steal(&b);
}

/* Is word in text as a whole word (blank, quote or '|' around it)? */
static int
has_word(const char *text, const char *word)
{
	const char *p = text;
	size_t l = strlen(word);

	while ((p = strstr(p, word)) != NULL) {
		if ((p == text || strchr(" \t\n\"(|", p[-1]) != NULL) &&
		    strchr(" \t\n\")|", p[l]) != NULL)
			return 1;
		p += l;
	}
	return 0;
}

/* "--memory" as roff writes it: "\-\-memory". */
static void
roff_dashes(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s != '\0' && o + 3 < len; s++) {
		if (*s == '-')
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = '\0';
}

Test(ops, completion_and_man_page_cover_every_flag_and_subcommand)
{
	char *comp = source_file("contrib/bash-completion/ai-sandbox");
	char *man = source_file("docs/ai-sandbox.1");
	char roff[128];
	const struct cmd_entry *c;
	struct sbuf h;
	const char *p, *e;
	size_t i, n = 0;

	for (i = 0; i < PK__COUNT; i++) {
		if (policy_keys[i].flag == NULL)
			continue;
		cr_assert(has_word(comp, policy_keys[i].flag), "completion "
		    "lacks %s", policy_keys[i].flag);
		roff_dashes(policy_keys[i].flag, roff, sizeof(roff));
		cr_assert(strstr(man, roff) != NULL, "ai-sandbox.1 lacks %s",
		    policy_keys[i].flag);
		n++;
	}
	cr_assert_gt(n, 25);
	sbuf_init(&h);
	cr_assert_eq(args_help(&h), 0);
	for (p = h.p, n = 0; (p = strstr(p, "\n  --")) != NULL; p = e) {
		char flag[64];

		p += 3;
		e = p + strcspn(p, "\n ");
		snprintf(flag, sizeof(flag), "%.*s", (int)(e - p), p);
		cr_assert(has_word(comp, flag), "completion lacks %s", flag);
		roff_dashes(flag, roff, sizeof(roff));
		cr_assert(strstr(man, roff) != NULL, "ai-sandbox.1 lacks %s",
		    flag);
		n++;
	}
	cr_assert_gt(n, 5);
	for (c = cmd_table; c->name != NULL; c++) {
		cr_assert(has_word(comp, c->name), "completion lacks %s",
		    c->name);
		snprintf(roff, sizeof(roff), ".B %s", c->name);
		cr_assert(strstr(man, roff) != NULL, "ai-sandbox.1 lacks %s",
		    c->name);
	}
	/* The exit codes of the table in docs/configuration.md. */
	for (i = 0; i < 6; i++) {
		static const char *const codes[] = { ".B 0\n", ".B 1\n",
		    ".B 2\n", ".B 77\n", ".B 78\n", ".B 125\n" };

		cr_assert(strstr(man, codes[i]) != NULL, "exit %s", codes[i]);
	}
	sbuf_free(&h);
	free(comp);
	free(man);
}
