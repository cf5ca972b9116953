/* Renderings: the nftables ruleset for each allowlist shape, the podman
 * argv for each network mode, shell quoting, the init's plan. */
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"
#include "fixture.h"
#include "launcher.h"
#include "policy.h"

#define tmp	fx_tmp
#define home	fx_home
#define proj	fx_proj

static void
setup(void)
{
	fx_setup("render");
}

TestSuite(render, .init = setup, .fini = fx_teardown);

static void
load(struct launcher *L, const char *const *args, const char *const *env)
{
	struct aisb_error err;

	cr_assert_eq(fx_load(L, args, env, &err), 0, "%s", err.msg);
}

#define OUT_HEAD \
	"table inet aisb {\n" \
	"\tchain output {\n" \
	"\t\ttype filter hook output priority filter; policy drop;\n" \
	"\t\toifname \"lo\" accept\n" \
	"\t\tct state established,related accept\n"
#define IN_TAIL \
	"\t}\n" \
	"\tchain input {\n" \
	"\t\ttype filter hook input priority filter; policy drop;\n" \
	"\t\tiifname \"lo\" accept\n" \
	"\t\tct state established,related accept\n"
#define ND_OUT "\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, " \
	"nd-router-solicit } accept\n"
#define ND_IN "\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, " \
	"nd-router-advert } accept\n"
#define END "\t}\n}\n"

static void
assert_ruleset(const struct launcher *L, const char *gate, uint16_t port,
    const char *want)
{
	struct aisb_error err;
	struct sbuf b;

	sbuf_init(&b);
	cr_assert_eq(policy_render_ruleset(&L->policy, gate, port, &b, &err),
	    0, "%s", err.msg);
	cr_assert_str_eq(b.p, want);
	sbuf_free(&b);
}

Test(render, ruleset_names_only_reach_the_gate)
{
	struct launcher L;

	load(&L, ARGS("--allow", "api.anthropic.com", "--allow",
	    "registry.npmjs.org:443"), NULL);
	assert_ruleset(&L, "10.0.2.2", 0, OUT_HEAD
	    "\t\tip daddr 10.0.2.2 tcp dport GATE_PORT accept\n"
	    IN_TAIL END);
	assert_ruleset(&L, "10.0.2.2", 41234, OUT_HEAD
	    "\t\tip daddr 10.0.2.2 tcp dport 41234 accept\n"
	    IN_TAIL END);
	launcher_free(&L);
}

Test(render, ruleset_address_entries_are_direct_rules)
{
	struct launcher L;

	load(&L, ARGS("--allow", "192.0.2.7", "--allow", "198.51.100.0/24",
	    "--allow", "203.0.113.9:8443", "--allow", "name.example"), NULL);
	assert_ruleset(&L, "10.0.2.2", 0, OUT_HEAD
	    "\t\tip daddr 10.0.2.2 tcp dport GATE_PORT accept\n"
	    "\t\tip daddr 192.0.2.7 accept\n"
	    "\t\tip daddr 198.51.100.0/24 accept\n"
	    "\t\tip daddr 203.0.113.9 tcp dport 8443 accept\n"
	    IN_TAIL END);
	launcher_free(&L);
}

Test(render, ruleset_ipv6_only_with_an_ipv6_entry)
{
	struct launcher L;

	load(&L, ARGS("--allow", "2001:db8::1", "--allow", "2001:db8:1::/48",
	    "--allow", "[2001:db8::2]:443"), NULL);
	assert_ruleset(&L, "10.0.2.2", 0, OUT_HEAD
	    "\t\tip daddr 10.0.2.2 tcp dport GATE_PORT accept\n"
	    "\t\tip6 daddr 2001:db8:1::/48 accept\n"
	    "\t\tip6 daddr 2001:db8::1 accept\n"
	    "\t\tip6 daddr 2001:db8::2 tcp dport 443 accept\n"
	    ND_OUT IN_TAIL ND_IN END);
	launcher_free(&L);
}

Test(render, ruleset_without_gate_has_dns_and_pins)
{
	struct launcher L;
	struct allow_entry e;
	struct policy_origin o;
	struct aisb_error err;

	load(&L, ARGS("--no-gate", "--allow", "api.example.com", "--allow",
	    "git.example.com:22", "--allow", "192.0.2.0/25"), NULL);
	assert_ruleset(&L, NULL, 0, OUT_HEAD
	    "\t\tip daddr 192.0.2.0/25 accept\n"
	    "\t\t# api.example.com: its addresses are resolved and pinned here "
	    "when the run starts (tcp dport 80 and 443)\n"
	    "\t\t# git.example.com:22: its addresses are resolved and pinned "
	    "here when the run starts (tcp dport as given)\n"
	    "\t\tip daddr 10.0.2.3 udp dport 53 accept\n"
	    "\t\tip daddr 10.0.2.3 tcp dport 53 accept\n"
	    IN_TAIL END);
	/* At run time the pins replace the notes. */
	policy_origin_set(&o, POLICY_SRC_BUILTIN, "resolved api.example.com");
	cr_assert_eq(allow_entry_parse("93.184.216.34:443", 17, &e, &err), 0);
	cr_assert_eq(policy_allow_add(&L.policy.pinned, &e, &o, &err), 0);
	cr_assert_eq(allow_entry_parse("[2606:2800::1]:22", 17, &e, &err), 0);
	cr_assert_eq(policy_allow_add(&L.policy.pinned, &e, &o, &err), 0);
	assert_ruleset(&L, NULL, 0, OUT_HEAD
	    "\t\tip daddr 192.0.2.0/25 accept\n"
	    "\t\tip daddr 93.184.216.34 tcp dport 443 accept\n"
	    "\t\tip6 daddr 2606:2800::1 tcp dport 22 accept\n"
	    "\t\tip daddr 10.0.2.3 udp dport 53 accept\n"
	    "\t\tip daddr 10.0.2.3 tcp dport 53 accept\n"
	    ND_OUT IN_TAIL ND_IN END);
	launcher_free(&L);

	/* The resolvers given, on pasta. */
	load(&L, ARGS("--no-gate", "--allow", "192.0.2.1", "--dns-server",
	    "9.9.9.9", "--dns-server", "2620:fe::fe"),
	    ENV("AISB_NETWORK_BACKEND=pasta"));
	assert_ruleset(&L, NULL, 0, OUT_HEAD
	    "\t\tip daddr 192.0.2.1 accept\n"
	    "\t\tip6 daddr 2620:fe::fe udp dport 53 accept\n"
	    "\t\tip6 daddr 2620:fe::fe tcp dport 53 accept\n"
	    "\t\tip daddr 9.9.9.9 udp dport 53 accept\n"
	    "\t\tip daddr 9.9.9.9 tcp dport 53 accept\n"
	    ND_OUT IN_TAIL ND_IN END);
	launcher_free(&L);
	load(&L, ARGS("--no-gate", "--allow", "192.0.2.1"),
	    ENV("AISB_NETWORK_BACKEND=pasta"));
	assert_ruleset(&L, NULL, 0, OUT_HEAD
	    "\t\tip daddr 192.0.2.1 accept\n"
	    "\t\tip daddr 169.254.1.1 udp dport 53 accept\n"
	    "\t\tip daddr 169.254.1.1 tcp dport 53 accept\n"
	    IN_TAIL END);
	launcher_free(&L);
}

Test(render, ruleset_net_none_and_full)
{
	struct launcher L;
	struct aisb_error err;
	struct sbuf b;

	load(&L, ARGS("--net", "none", "--allow", "192.0.2.1"), NULL);
	assert_ruleset(&L, NULL, 0, OUT_HEAD IN_TAIL END);
	launcher_free(&L);

	load(&L, ARGS("--net", "full"), NULL);
	sbuf_init(&b);
	cr_assert_eq(policy_render_ruleset(&L.policy, NULL, 0, &b, &err), -1);
	cr_assert_str_eq(err.msg, "net=full installs no ruleset");
	sbuf_free(&b);
	launcher_free(&L);
}

Test(render, ruleset_is_deterministic_whatever_the_source_order)
{
	struct launcher A, B;
	struct aisb_error err;
	struct sbuf a, b;

	load(&A, ARGS("--allow", "192.0.2.9", "--allow", "192.0.2.1",
	    "--allow", "2001:db8::5"), NULL);
	load(&B, ARGS("--allow", "2001:db8::5", "--allow", "192.0.2.1"),
	    ENV("AISB_ALLOW=192.0.2.9"));
	sbuf_init(&a);
	sbuf_init(&b);
	cr_assert_eq(policy_render_ruleset(&A.policy, "10.0.2.2", 0, &a, &err),
	    0);
	cr_assert_eq(policy_render_ruleset(&B.policy, "10.0.2.2", 0, &b, &err),
	    0);
	cr_assert_str_eq(a.p, b.p);
	sbuf_free(&a);
	sbuf_free(&b);
	launcher_free(&A);
	launcher_free(&B);
}

/* The sandbox argv as one string of words, for strstr. */
static char *
sandbox_line(const struct launcher *L)
{
	struct render_ctx ctx;
	struct aisb_error err;
	struct argv a;
	struct sbuf b;
	char *sd, *ef;

	cr_assert_eq(cmd_run_preview_ctx(L, &ctx, &sd, &ef), 0);
	argv_init(&a);
	cr_assert_eq(policy_render_sandbox_argv(&L->policy, &ctx, &a, &err), 0,
	    "%s", err.msg);
	cr_assert_null(a.v[a.n]);
	sbuf_init(&b);
	cr_assert_eq(argv_quote_line(&a, &b), 0);
	argv_free(&a);
	free(sd);
	free(ef);
	return sbuf_steal(&b);
}

static void
has(const char *line, const char *word)
{
	cr_assert(strstr(line, word) != NULL, "missing \"%s\" in:\n%s", word,
	    line);
}

static void
hasnt(const char *line, const char *word)
{
	cr_assert(strstr(line, word) == NULL, "unexpected \"%s\" in:\n%s",
	    word, line);
}

Test(render, argv_allow_mode_slirp4netns)
{
	struct launcher L;
	char *s;

	load(&L, ARGS("--allow", "a.example", "--model", "x"), NULL);
	s = sandbox_line(&L);
	cr_assert(strncmp(s, "podman run --rm --name=aisb-SESSION "
	    "--hostname=ai-sandbox --userns=keep-id:uid=1000,gid=1000 "
	    "--user=0:0 --cap-drop=ALL --cap-add=NET_ADMIN --cap-add=SETGID "
	    "--cap-add=SETPCAP --cap-add=SETUID "
	    "--security-opt=no-new-privileges "
	    "--network=slirp4netns:allow_host_loopback=true "
	    "--pids-limit=1024 --memory=4g --memory-swap=4g --cpus=2 "
	    "--shm-size=64m --tmpfs=/tmp:rw,nosuid,nodev,size=1g,mode=1777 "
	    "--ulimit=nofile=4096:4096 --ulimit=nproc=4096:4096 "
	    "--label=aisb.session=SESSION --label=aisb.role=sandbox "
	    "--label=aisb.project=", 500) == 0, "%s", s);
	has(s, " --env=HTTP_PROXY=http://10.0.2.2:GATE_PORT ");
	has(s, " --env=https_proxy=http://10.0.2.2:GATE_PORT ");
	has(s, " --env=NO_PROXY=localhost,127.0.0.1,::1 ");
	has(s, " --label=aisb.policy=net=allow,allow=1,via=gate ");
	has(s, ":/project:rw --volume=aisb-home:/home/sandbox ");
	has(s, ":/home/sandbox --workdir=/project "
	    "--entrypoint=/usr/local/sbin/aisb-init --interactive IMAGE-TAG "
	    "--net=allow --gate=10.0.2.2:GATE_PORT --uid=1000 --gid=1000 -- "
	    "pi --model x\n");
	hasnt(s, "--tty");
	hasnt(s, "--runtime");
	hasnt(s, ",z");
	free(s);
	launcher_free(&L);
}

Test(render, argv_allow_mode_pasta)
{
	struct launcher L;
	char *s;

	load(&L, ARGS("--allow", "a.example", "--allow", "192.0.2.0/24"),
	    ENV("AISB_NETWORK_BACKEND=pasta"));
	s = sandbox_line(&L);
	has(s, " --network=pasta:--map-host-loopback,169.254.1.3 ");
	has(s, " --env=HTTP_PROXY=http://169.254.1.3:GATE_PORT ");
	has(s, " --net=allow --gate=169.254.1.3:GATE_PORT "
	    "--allow=192.0.2.0/24 --uid=1000");
	free(s);
	launcher_free(&L);
}

Test(render, argv_net_none_and_full)
{
	struct launcher L;
	char *s;

	load(&L, ARGS("--net", "none", "--allow", "192.0.2.1"), NULL);
	s = sandbox_line(&L);
	has(s, " --cap-add=NET_ADMIN ");
	has(s, " --network=none ");
	hasnt(s, "PROXY");
	hasnt(s, "--gate=");
	hasnt(s, "--allow=");
	has(s, " IMAGE-TAG --net=none --uid=1000 --gid=1000 -- pi\n");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--net", "full"), NULL);
	s = sandbox_line(&L);
	hasnt(s, "NET_ADMIN");
	has(s, " --network=slirp4netns ");
	hasnt(s, "allow_host_loopback");
	has(s, " IMAGE-TAG --net=full --uid=1000");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--net", "full"), ENV("AISB_NETWORK_BACKEND=pasta"));
	s = sandbox_line(&L);
	has(s, " --network=pasta:--no-map-gw ");
	free(s);
	launcher_free(&L);
}

Test(render, argv_no_gate_and_proxy)
{
	struct launcher L;
	char *s;

	load(&L, ARGS("--no-gate", "--allow", "a.example", "--allow",
	    "192.0.2.1:443", "--dns-server", "9.9.9.9"), NULL);
	s = sandbox_line(&L);
	has(s, " --network=slirp4netns --dns=9.9.9.9 ");
	hasnt(s, "PROXY");
	has(s, " --net=allow --allow=192.0.2.1:443 --dns=9.9.9.9 --uid=1000");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--no-gate", "--allow", "a.example"), NULL);
	s = sandbox_line(&L);
	has(s, " --network=slirp4netns --pids-limit");
	has(s, " --net=allow --dns=10.0.2.3 --uid=1000");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--proxy", "localhost:3128"), NULL);
	s = sandbox_line(&L);
	has(s, " --network=slirp4netns:allow_host_loopback=true ");
	has(s, " --env=HTTPS_PROXY=http://10.0.2.2:3128 ");
	has(s, " --net=allow --gate=10.0.2.2:3128 --uid=1000");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--proxy", "192.0.2.50:8080"), NULL);
	s = sandbox_line(&L);
	has(s, " --network=slirp4netns --pids-limit");
	has(s, " --env=HTTPS_PROXY=http://192.0.2.50:8080 ");
	has(s, " --gate=192.0.2.50:8080 ");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--proxy", "[2001:db8::7]:8080"), NULL);
	s = sandbox_line(&L);
	has(s, " '--env=HTTPS_PROXY=http://[2001:db8::7]:8080' ");
	has(s, " '--gate=[2001:db8::7]:8080' ");
	free(s);
	launcher_free(&L);
}

Test(render, argv_filesystem_and_limits)
{
	struct launcher L;
	char *s, want[512];

	load(&L, ARGS("--net", "none", "--read-only", "--ephemeral-home",
	    "--memory", "512m", "--cpus", "1.5", "--pids", "64", "--tmp-size",
	    "256m", "--shm-size", "1g", "--home-size", "2g", "--nofile", "1024",
	    "--nproc", "512", "--keep", "--mount", "/etc:/host-etc:ro"),
	    ENV("AISB_SELINUX=yes", "AISB_RUNTIME=runc"));
	s = sandbox_line(&L);
	cr_assert(strncmp(s, "podman run --runtime=runc --name=", 33) == 0,
	    "%s", s);
	has(s, " --pids-limit=64 --memory=512m --memory-swap=512m --cpus=1.5 "
	    "--shm-size=1g --tmpfs=/tmp:rw,nosuid,nodev,size=256m,mode=1777 "
	    "--ulimit=nofile=1024:1024 --ulimit=nproc=512:512 ");
	snprintf(want, sizeof(want), " --volume=%s:/project:ro,z "
	    "--volume=/home/sandbox --volume=/etc:/host-etc:ro,z "
	    "--workdir=/project ",
	    L.host.project_dir);
	has(s, want);
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--net", "none", "--no-cwd", "--no-interactive"), NULL);
	s = sandbox_line(&L);
	hasnt(s, ":/project");
	has(s, " --workdir=/home/sandbox ");
	hasnt(s, "--interactive");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--net", "none", "--workdir", "/srv"), NULL);
	s = sandbox_line(&L);
	has(s, " --workdir=/srv ");
	free(s);
	launcher_free(&L);
}

Test(render, argv_tty_only_between_two_terminals)
{
	struct launcher L;
	char *s;

	load(&L, ARGS("--net", "none"), NULL);
	L.policy.stdin_tty = L.policy.stdout_tty = 1;
	s = sandbox_line(&L);
	has(s, " --interactive --tty IMAGE-TAG");
	free(s);
	L.policy.stdout_tty = 0;
	s = sandbox_line(&L);
	has(s, " --interactive IMAGE-TAG");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--net", "none", "--no-tty"), NULL);
	L.policy.stdin_tty = L.policy.stdout_tty = 1;
	s = sandbox_line(&L);
	has(s, " --interactive IMAGE-TAG");
	free(s);
	launcher_free(&L);

	load(&L, ARGS("--net", "none", "--no-interactive"), NULL);
	L.policy.stdin_tty = L.policy.stdout_tty = 1;
	s = sandbox_line(&L);
	has(s, " --tty IMAGE-TAG");
	hasnt(s, "--interactive");
	free(s);
	launcher_free(&L);
}

Test(render, argv_escape_hatches)
{
	struct launcher L;
	char *s;

	load(&L, ARGS("--net", "none", "--insecure-keep-root",
	    "--allow-unenforced"), ENV("AISB_EXTRA_ARGS=--device /dev/fuse"));
	s = sandbox_line(&L);
	has(s, " --cap-drop=ALL --cap-add=NET_ADMIN --cap-add=SETPCAP "
	    "--security-opt=no-new-privileges ");
	hasnt(s, "SETUID");
	has(s, " --interactive --device /dev/fuse IMAGE-TAG --net=none "
	    "--keep-root --allow-unenforced -- pi\n");
	free(s);
	launcher_free(&L);
}

Test(render, gate_argv)
{
	struct launcher L;
	struct render_ctx ctx;
	struct aisb_error err;
	struct argv a;
	struct sbuf b;
	char *sd, *ef, want[2048];

	load(&L, ARGS("--allow", "a.example", "--dns-server", "9.9.9.9"),
	    ENV("AISB_STATE_DIR=/st", "AISB_SELINUX=yes"));
	cr_assert_eq(cmd_run_preview_ctx(&L, &ctx, &sd, &ef), 0);
	argv_init(&a);
	cr_assert_eq(policy_render_gate_argv(&L.policy, &ctx, &a, &err), 0);
	sbuf_init(&b);
	cr_assert_eq(argv_quote_line(&a, &b), 0);
	snprintf(want, sizeof(want), "podman run --rm --detach "
	    "--name=aisb-gate-SESSION --network=host --read-only "
	    "--userns=keep-id:uid=65534,gid=65534 --user=65534:65534 "
	    "--cap-drop=ALL --security-opt=no-new-privileges --pids-limit=64 "
	    "--memory=256m --memory-swap=256m --ulimit=nofile=4096:4096 "
	    "--ulimit=nproc=4096:4096 --label=aisb.session=SESSION "
	    "--label=aisb.role=gate --label=aisb.project=%s "
	    "--label=aisb.policy=net=allow,allow=1,via=gate "
	    "--volume=/st/sessions/SESSION/allow:/etc/aisb/allow:ro,z "
	    "--volume=/st/sessions/SESSION/log:/var/log/aisb:rw,z "
	    "--entrypoint=/usr/local/bin/aisb-gate IMAGE-TAG --listen "
	    "127.0.0.1:GATE_PORT --allow-file /etc/aisb/allow --log "
	    "/var/log/aisb/gate.log --dns-server 9.9.9.9\n",
	    L.host.project_dir);
	cr_assert_str_eq(b.p, want);
	sbuf_free(&b);
	argv_free(&a);
	free(sd);
	free(ef);
	launcher_free(&L);
}

Test(render, colon_in_a_volume_path_is_refused)
{
	struct launcher L;
	struct render_ctx ctx;
	struct aisb_error err;
	struct argv a;
	char *sd, *ef, dir[100], want[512];

	snprintf(dir, sizeof(dir), "%s/a:b", tmp);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(proj, sizeof(proj), "%s", dir);
	load(&L, ARGS("--net", "none"), NULL);
	cr_assert_eq(cmd_run_preview_ctx(&L, &ctx, &sd, &ef), 0);
	argv_init(&a);
	cr_assert_eq(policy_render_sandbox_argv(&L.policy, &ctx, &a, &err), -1);
	snprintf(want, sizeof(want), "working directory %s contains ':', which "
	    "podman's volume syntax cannot carry", dir);
	cr_assert_str_eq(err.msg, want);
	argv_free(&a);
	free(sd);
	free(ef);
	launcher_free(&L);
}

Test(render, shell_quoting)
{
	struct argv a;
	struct sbuf b;

	argv_init(&a);
	argv_add(&a, "A=b");
	argv_add(&a, "plain-word_1.2/x:y,z@%+");
	argv_add(&a, "");
	argv_add(&a, "it's");
	argv_add(&a, "a b");
	argv_add(&a, "$HOME");
	argv_add(&a, "~x");
	argv_add(&a, "k=v");
	argv_add(&a, "#c");
	argv_add(&a, "*");
	sbuf_init(&b);
	cr_assert_eq(argv_quote_line(&a, &b), 0);
	cr_assert_str_eq(b.p, "'A=b' plain-word_1.2/x:y,z@%+ '' 'it'\\''s' "
	    "'a b' '$HOME' '~x' k=v '#c' '*'\n");
	sbuf_free(&b);
	argv_free(&a);

	argv_init(&a);
	cr_assert_eq(argv_add_words(&a, "  a\tb  c ", 10), 0);
	cr_assert_eq(a.n, 3);
	cr_assert_str_eq(a.v[2], "c");
	cr_assert_eq(argv_add_words(&a, "1 2 3", 2), -1);
	argv_free(&a);
}

Test(render, entrypoint_plan)
{
	struct launcher L;
	struct render_ctx ctx;
	struct aisb_error err;
	struct sbuf b;
	char *sd, *ef;

	load(&L, ARGS("--allow", "192.0.2.1", "--", "make", "test it"), NULL);
	cr_assert_eq(cmd_run_preview_ctx(&L, &ctx, &sd, &ef), 0);
	sbuf_init(&b);
	cr_assert_eq(policy_render_entrypoint(&L.policy, &ctx, &b, &err), 0);
	cr_assert_str_eq(b.p,
	    "# What /usr/local/sbin/aisb-init does in the sandbox, in order.\n"
	    "1. As root with CAP_NET_ADMIN, install the ruleset below with "
	    "\"nft -f -\"; if that fails, stop with exit status 77.\n"
	    "2. Verify it: \"nft list table inet aisb\" must show both chains "
	    "with policy drop; if not, stop with exit status 78.\n"
	    "3. Drop privileges: empty the capability bounding set, setgroups "
	    "to none, setresgid 1000, setresuid 1000, empty the inheritable "
	    "and ambient sets; no_new_privs stays set (podman's "
	    "no-new-privileges).\n"
	    "4. Exec in /project with HOME=/home/sandbox:\n"
	    "   make 'test it'\n"
	    "\n# The nftables ruleset.\n"
	    OUT_HEAD
	    "\t\tip daddr 10.0.2.2 tcp dport GATE_PORT accept\n"
	    "\t\tip daddr 192.0.2.1 accept\n"
	    IN_TAIL END);
	sbuf_free(&b);
	free(sd);
	free(ef);
	launcher_free(&L);

	load(&L, ARGS("--net", "full", "--insecure-keep-root",
	    "--allow-unenforced"), NULL);
	cr_assert_eq(cmd_run_preview_ctx(&L, &ctx, &sd, &ef), 0);
	sbuf_init(&b);
	cr_assert_eq(policy_render_entrypoint(&L.policy, &ctx, &b, &err), 0);
	cr_assert_str_eq(b.p,
	    "# What /usr/local/sbin/aisb-init does in the sandbox, in order.\n"
	    "1. Install no ruleset: net=full leaves egress unlimited.\n"
	    "2. Keep uid 0 (insecure-keep-root); empty the bounding, "
	    "inheritable and ambient capability sets; no_new_privs stays "
	    "set.\n"
	    "3. Exec in /project with HOME=/home/sandbox:\n"
	    "   pi\n");
	sbuf_free(&b);
	free(sd);
	free(ef);
	launcher_free(&L);

	load(&L, ARGS("--net", "none", "--allow-unenforced"), NULL);
	cr_assert_eq(cmd_run_preview_ctx(&L, &ctx, &sd, &ef), 0);
	sbuf_init(&b);
	cr_assert_eq(policy_render_entrypoint(&L.policy, &ctx, &b, &err), 0);
	cr_assert(strstr(b.p, "if that fails, warn and go on "
	    "(allow-unenforced).\n2.") != NULL, "%s", b.p);
	sbuf_free(&b);
	free(sd);
	free(ef);
	launcher_free(&L);
}
