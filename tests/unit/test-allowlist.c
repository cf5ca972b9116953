/* Allowlist entries: every shape, every error, files, matching. */
#include <criterion/criterion.h>

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisb.h"

/* Parse s; expect success and the canonical text want. */
static struct allow_entry
entry_ok(const char *s, const char *want)
{
	struct allow_entry e;
	struct aisb_error err = { "" };

	cr_assert_eq(allow_entry_parse(s, strlen(s), &e, &err), 0,
	    "\"%s\": %s", s, err.msg);
	cr_assert_str_eq(e.text, want, "\"%s\"", s);
	cr_assert_str_eq(e.origin, "");
	return e;
}

/* Parse s (n bytes); expect failure with exactly message want. */
static void
entry_bad_n(const char *s, size_t n, const char *want)
{
	struct allow_entry e;
	struct aisb_error err = { "" };

	cr_assert_eq(allow_entry_parse(s, n, &e, &err), -1, "\"%.*s\"",
	    (int)n, s);
	cr_assert_str_eq(err.msg, want, "\"%.*s\"", (int)n, s);
}

static void
entry_bad(const char *s, const char *want)
{
	entry_bad_n(s, strlen(s), want);
}

/* Expect the address of entry e to print as addr with prefix. */
static void
entry_cidr(const struct allow_entry *e, const char *addr, int prefix)
{
	char buf[ADDR_STR_SIZE];

	cr_assert_eq(e->kind, ALLOW_KIND_ADDR);
	cr_assert_str_eq(addr_ntop(&e->cidr.addr, buf), addr);
	cr_assert_eq(e->cidr.prefix, prefix);
}

Test(entry, name)
{
	struct allow_entry e;

	e = entry_ok("example.com", "example.com");
	cr_assert_eq(e.kind, ALLOW_KIND_NAME);
	cr_assert_str_eq(e.name, "example.com");
	cr_assert_eq(e.port, 0);
	cr_assert_eq(e.notls, 0);

	e = entry_ok("API.Anthropic.COM.", "api.anthropic.com");
	cr_assert_str_eq(e.name, "api.anthropic.com");
	e = entry_ok("localhost", "localhost");
	e = entry_ok("xn--bcher-kva.example", "xn--bcher-kva.example");
	e = entry_ok("123.example.com", "123.example.com");
}

Test(entry, name_port)
{
	struct allow_entry e;

	e = entry_ok("example.com:22", "example.com:22");
	cr_assert_eq(e.kind, ALLOW_KIND_NAME);
	cr_assert_str_eq(e.name, "example.com");
	cr_assert_eq(e.port, 22);
	cr_assert_eq(e.notls, 0);

	e = entry_ok("Example.COM.:8443", "example.com:8443");
	cr_assert_eq(e.port, 8443);
	e = entry_ok("a:1", "a:1");
	cr_assert_eq(e.port, 1);
	e = entry_ok("a:65535", "a:65535");
	cr_assert_eq(e.port, 65535);
	e = entry_ok("a:443", "a:443");
	cr_assert_eq(e.port, 443);
}

Test(entry, name_port_notls)
{
	struct allow_entry e;

	e = entry_ok("example.com:22/notls", "example.com:22/notls");
	cr_assert_eq(e.kind, ALLOW_KIND_NAME);
	cr_assert_eq(e.port, 22);
	cr_assert_eq(e.notls, 1);
	e = entry_ok("GIT.example.com.:9418/notls",
	    "git.example.com:9418/notls");
	cr_assert_eq(e.notls, 1);
}

Test(entry, ipv4)
{
	struct allow_entry e;

	e = entry_ok("127.0.0.1", "127.0.0.1");
	entry_cidr(&e, "127.0.0.1", 32);
	cr_assert_eq(e.port, 0);
	e = entry_ok("203.0.113.7:5432", "203.0.113.7:5432");
	entry_cidr(&e, "203.0.113.7", 32);
	cr_assert_eq(e.port, 5432);
	e = entry_ok("10.0.0.0/8", "10.0.0.0/8");
	entry_cidr(&e, "10.0.0.0", 8);
	cr_assert_eq(e.port, 0);
	e = entry_ok("10.1.2.3/32", "10.1.2.3");
	entry_cidr(&e, "10.1.2.3", 32);
	e = entry_ok("0.0.0.0/0", "0.0.0.0/0");
	entry_cidr(&e, "0.0.0.0", 0);
	e = entry_ok("10.0.0.1:5432/notls", "10.0.0.1:5432/notls");
	cr_assert_eq(e.notls, 1);
	cr_assert_eq(e.port, 5432);
}

Test(entry, ipv6)
{
	struct allow_entry e;

	e = entry_ok("::1", "::1");
	entry_cidr(&e, "::1", 128);
	cr_assert_eq(e.port, 0);
	e = entry_ok("2001:DB8:0::1", "2001:db8::1");
	entry_cidr(&e, "2001:db8::1", 128);
	e = entry_ok("[::1]", "::1");
	entry_cidr(&e, "::1", 128);
	e = entry_ok("[::1]:8080", "[::1]:8080");
	entry_cidr(&e, "::1", 128);
	cr_assert_eq(e.port, 8080);
	e = entry_ok("[2001:db8::5]:22/notls", "[2001:db8::5]:22/notls");
	cr_assert_eq(e.port, 22);
	cr_assert_eq(e.notls, 1);
	e = entry_ok("2001:db8::/32", "2001:db8::/32");
	entry_cidr(&e, "2001:db8::", 32);
	e = entry_ok("fd00::/8", "fd00::/8");
	e = entry_ok("[2001:db8::]/32", "2001:db8::/32");
	entry_cidr(&e, "2001:db8::", 32);
	e = entry_ok("2001:db8::1/128", "2001:db8::1");
	e = entry_ok("::ffff:10.0.0.1", "::ffff:10.0.0.1");
	/* Without brackets there is no port: this is one address. */
	e = entry_ok("::1:8080", "::0.1.128.128");
	cr_assert_eq(e.port, 0);
}

Test(entry, bad_ports)
{
	entry_bad("example.com:0", "invalid port \"0\" (1-65535)");
	entry_bad("example.com:65536", "invalid port \"65536\" (1-65535)");
	entry_bad("example.com:99999", "invalid port \"99999\" (1-65535)");
	entry_bad("example.com:100000", "invalid port \"100000\" (1-65535)");
	entry_bad("example.com:+80", "invalid port \"+80\" (1-65535)");
	entry_bad("example.com:-80", "invalid port \"-80\" (1-65535)");
	entry_bad("example.com:080", "invalid port \"080\" (1-65535)");
	entry_bad("example.com:", "invalid port \"\" (1-65535)");
	entry_bad("example.com:8o", "invalid port \"8o\" (1-65535)");
	entry_bad("example.com:0x50", "invalid port \"0x50\" (1-65535)");
	entry_bad("example.com: 80", "invalid port \" 80\" (1-65535)");
	entry_bad("example.com:80 ", "invalid port \"80 \" (1-65535)");
	entry_bad("example.com:/notls", "invalid port \"\" (1-65535)");
	entry_bad("1.2.3.4:0", "invalid port \"0\" (1-65535)");
	entry_bad("[::1]:65536", "invalid port \"65536\" (1-65535)");
	entry_bad("[::1]:", "invalid port \"\" (1-65535)");
}

Test(entry, bad_markers)
{
	entry_bad("example.com/notls", "/notls needs an explicit port, as in "
	    "example.com:PORT/notls");
	entry_bad("10.0.0.1/notls", "/notls needs an explicit port, as in "
	    "10.0.0.1:PORT/notls");
	entry_bad("example.com:22/tls", "unknown marker \"/tls\" (only "
	    "/notls)");
	entry_bad("example.com:22/NOTLS", "unknown marker \"/NOTLS\" (only "
	    "/notls)");
	entry_bad("example.com:22/notls/notls", "unknown marker "
	    "\"/notls/notls\" (only /notls)");
	entry_bad("example.com:22/", "unknown marker \"/\" (only /notls)");
	entry_bad("example.com/8", "a prefix is only for IP addresses: "
	    "\"example.com/8\"");
	entry_bad("example.com/", "a prefix is only for IP addresses: "
	    "\"example.com/\"");
}

Test(entry, bad_names)
{
	entry_bad("exa mple.com", "invalid name \"exa mple.com\": invalid "
	    "byte 0x20 at offset 3");
	entry_bad("exa mple.com:443", "invalid name \"exa mple.com\": "
	    "invalid byte 0x20 at offset 3");
	entry_bad("under_score.com", "invalid name \"under_score.com\": "
	    "invalid byte 0x5f at offset 5");
	entry_bad("*.example.com", "invalid name \"*.example.com\": invalid "
	    "byte 0x2a at offset 0");
	entry_bad("a..b", "invalid name \"a..b\": empty label at offset 2");
	entry_bad(":443", "invalid name \"\": empty name");
	entry_bad("-a.com", "invalid name \"-a.com\": label starts with '-' "
	    "at offset 0");
	entry_bad("b\xc3\xbc" "cher.de", "invalid name \"b\\xc3\\xbccher.de\": "
	    "invalid byte 0xc3 at offset 1");
	entry_bad("a\"b", "invalid name \"a\\x22b\": invalid byte 0x22 at "
	    "offset 1");
	entry_bad_n("a\0b", 3, "invalid name \"a\\x00b\": invalid byte 0x00 "
	    "at offset 1");
	entry_bad(" example.com", "invalid name \" example.com\": invalid "
	    "byte 0x20 at offset 0");
	entry_bad("example.com ", "invalid name \"example.com \": invalid "
	    "byte 0x20 at offset 11");
	entry_bad("example.com\n", "invalid name \"example.com\\x0a\": "
	    "invalid byte 0x0a at offset 11");
	entry_bad("example.123", "invalid name \"example.123\": the last "
	    "label is numeric, so it is read as an IPv4 address");
	entry_bad("example.0x10", "invalid name \"example.0x10\": the last "
	    "label is numeric, so it is read as an IPv4 address");
	entry_bad("user@example.com", "invalid name \"user@example.com\": "
	    "invalid byte 0x40 at offset 4");
}

Test(entry, bad_name_quoting)
{
	char s[200];
	struct allow_entry e;
	struct aisb_error err;

	/* Long input is cut short in the message. */
	memset(s, 'a', sizeof(s));
	s[10] = '_';
	cr_assert_eq(allow_entry_parse(s, sizeof(s), &e, &err), -1);
	cr_assert(strstr(err.msg, "aaa...\": invalid byte 0x5f at offset "
	    "10") != NULL, "%s", err.msg);
}

Test(entry, bad_ipv4)
{
	entry_bad("1.2.3.999", "invalid IPv4 address \"1.2.3.999\"");
	entry_bad("256.1.1.1", "invalid IPv4 address \"256.1.1.1\"");
	entry_bad("1.2.3.4.5", "invalid IPv4 address \"1.2.3.4.5\"");
	entry_bad("1.2.3.999:80", "invalid IPv4 address \"1.2.3.999\"");
	entry_bad("0x7g.1", "invalid name \"0x7g.1\": the last label is "
	    "numeric, so it is read as an IPv4 address");
	entry_bad("0x7f.1.2.3.4", "invalid IPv4 address \"0x7f.1.2.3.4\"");
	entry_bad("127.1", "write IPv4 address \"127.1\" as a dotted quad: "
	    "127.0.0.1");
	entry_bad("127.1:80", "write IPv4 address \"127.1\" as a dotted "
	    "quad: 127.0.0.1");
	entry_bad("127.0.0.1.", "write IPv4 address \"127.0.0.1.\" as a "
	    "dotted quad: 127.0.0.1");
	entry_bad("2130706433", "write IPv4 address \"2130706433\" as a "
	    "dotted quad: 127.0.0.1");
	entry_bad("0x7f.0.0.1", "write IPv4 address \"0x7f.0.0.1\" as a "
	    "dotted quad: 127.0.0.1");
	entry_bad("0177.0.0.1", "write IPv4 address \"0177.0.0.1\" as a "
	    "dotted quad: 127.0.0.1");
	entry_bad("010.0.0.0/8", "write IPv4 address \"010.0.0.0\" as a "
	    "dotted quad: 8.0.0.0");
	entry_bad("10.0.0.1/8", "10.0.0.1/8 has host bits set");
	entry_bad("10.0.0.0/33", "invalid prefix length \"33\" (0-32)");
	entry_bad("10.0.0.0/", "invalid prefix length \"\" (0-32)");
	entry_bad("10.0.0.0/8:80", "invalid prefix length \"8:80\" (0-32)");
	entry_bad("10.0.0.0/8/notls", "invalid prefix length \"8/notls\" "
	    "(0-32)");
	/* The last label is not numeric: a (strange) name. */
	entry_ok("1.2.3.4x", "1.2.3.4x");
}

Test(entry, bad_ipv6)
{
	entry_bad("fe80::1%eth0", "invalid IPv6 address \"fe80::1%eth0\"");
	entry_bad("[fe80::1%eth0]:80", "invalid IPv6 address "
	    "\"fe80::1%eth0\"");
	entry_bad("::1::2", "invalid IPv6 address \"::1::2\"");
	entry_bad("2001:db8::1/64", "2001:db8::1/64 has host bits set");
	entry_bad("2001:db8::/129", "invalid prefix length \"129\" (0-128)");
	entry_bad("[::1", "missing ']' in \"[::1\"");
	entry_bad("[127.0.0.1]", "brackets are only for IPv6 addresses: "
	    "\"[127.0.0.1]\"");
	entry_bad("[127.0.0.1]:80", "brackets are only for IPv6 addresses: "
	    "\"[127.0.0.1]:80\"");
	entry_bad("[example.com]", "brackets are only for IPv6 addresses: "
	    "\"[example.com]\"");
	entry_bad("[]", "brackets are only for IPv6 addresses: \"[]\"");
	entry_bad("[::1]x", "unexpected \"x\" after the host");
	entry_bad("[::1]]", "unexpected \"]\" after the host");
	entry_bad("[::1]:80:90", "invalid port \"80:90\" (1-65535)");
	entry_bad("[2001:db8::]/32:443", "a network takes no port: "
	    "\"[2001:db8::]/32:443\"");
	entry_bad("[2001:db8::1]/32", "2001:db8::1/32 has host bits set");
	/* Found by fuzz-allow-entry: a prefix inside brackets, then a port. */
	entry_bad("[2001:db8::/32]:443", "invalid IPv6 address "
	    "\"2001:db8::/32\"");
	entry_bad("[2001:db8::/32]", "invalid IPv6 address \"2001:db8::/32\"");
	entry_bad("example.com:80:90", "invalid IPv6 address "
	    "\"example.com:80:90\"");
}

Test(entry, bad_lengths)
{
	char s[ALLOW_ENTRY_MAXLEN + 8];
	struct allow_entry e;
	struct aisb_error err;

	entry_bad("", "empty entry");
	cr_assert_eq(allow_entry_parse(NULL, 0, &e, &err), -1);
	cr_assert_str_eq(err.msg, "empty entry");
	memset(s, 'a', sizeof(s));
	entry_bad_n(s, ALLOW_ENTRY_MAXLEN, "entry longer than 511 bytes");
	/* 511 bytes is not too long as an entry, but too long as a name. */
	entry_bad_n(s, ALLOW_ENTRY_MAXLEN - 1, "invalid name \"aaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\": label "
	    "longer than 63 bytes at offset 0");
}

Test(entry, text_reparses)
{
	static const char *in[] = {
		"Example.COM.", "a.b:22/notls", "10.0.0.0/8", "[::1]:8080",
		"2001:db8::/32", "[2001:DB8::]/32", "1.2.3.4:443", "::1",
		"[::ffff:1.2.3.4]:80", "0.0.0.0/0", "::/0",
	};
	struct allow_entry a, b;
	struct aisb_error err;
	size_t i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		cr_assert_eq(allow_entry_parse(in[i], strlen(in[i]), &a,
		    &err), 0, "%s: %s", in[i], err.msg);
		cr_assert_eq(allow_entry_parse(a.text, strlen(a.text), &b,
		    &err), 0, "%s: %s", a.text, err.msg);
		cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0, "%s", in[i]);
	}
}

/* A list built from the entries given, origins "arg:N". */
static void
list_of(struct allowlist *l, const char **v, size_t n)
{
	struct aisb_error err;
	char origin[32];
	size_t i;

	allowlist_init(l);
	for (i = 0; i < n; i++) {
		snprintf(origin, sizeof(origin), "arg:%zu", i);
		cr_assert_eq(allowlist_add(l, v[i], strlen(v[i]), origin,
		    &err), 0, "%s: %s", v[i], err.msg);
	}
}

/* The text of the name entry matching (or "-"). */
static const char *
mname(const struct allowlist *l, const char *name, uint16_t port,
    enum allow_mode mode)
{
	const struct allow_entry *e;

	e = allowlist_match_name(l, name, port, mode);
	return e == NULL ? "-" : e->text;
}

Test(list, add_and_origin)
{
	struct allowlist l;
	struct aisb_error err;
	char big[ALLOW_ORIGIN_SIZE * 2];

	allowlist_init(&l);
	cr_assert_eq(l.n, 0);
	cr_assert_eq(allowlist_add(&l, "example.com", 11, "--allow", &err), 0);
	cr_assert_eq(allowlist_add(&l, "bad name", 8, "--allow", &err), -1);
	cr_assert_str_eq(err.msg, "invalid name \"bad name\": invalid byte "
	    "0x20 at offset 3");
	cr_assert_eq(l.n, 1);
	memset(big, 'o', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cr_assert_eq(allowlist_add(&l, "a.com", 5, big, &err), 0);
	cr_assert_eq(allowlist_add(&l, "b.com", 5, NULL, &err), 0);
	cr_assert_eq(l.n, 3);
	cr_assert_str_eq(l.v[0].origin, "--allow");
	cr_assert_str_eq(l.v[0].text, "example.com");
	cr_assert_eq(strlen(l.v[1].origin), ALLOW_ORIGIN_SIZE - 1);
	cr_assert_str_eq(l.v[2].origin, "");
	allowlist_free(&l);
	cr_assert_eq(l.n, 0);
	cr_assert_null(l.v);
	/* Free twice is harmless. */
	allowlist_free(&l);
}

Test(list, cap)
{
	struct allowlist l;
	struct aisb_error err;
	char s[32];
	int i, n;

	allowlist_init(&l);
	for (i = 0; i < ALLOW_MAX_ENTRIES; i++) {
		n = snprintf(s, sizeof(s), "h%d.example", i);
		cr_assert_eq(allowlist_add(&l, s, (size_t)n, "t", &err), 0);
	}
	cr_assert_eq(l.n, ALLOW_MAX_ENTRIES);
	cr_assert_eq(allowlist_add(&l, "one.more", 8, "t", &err), -1);
	cr_assert_str_eq(err.msg, "too many allowlist entries (at most 4096)");
	cr_assert_eq(l.n, ALLOW_MAX_ENTRIES);
	cr_assert_str_eq(l.v[ALLOW_MAX_ENTRIES - 1].name, "h4095.example");
	allowlist_free(&l);
}

Test(match, name_default_ports)
{
	static const char *v[] = { "example.com" };
	struct allowlist l;

	list_of(&l, v, 1);
	cr_assert_str_eq(mname(&l, "example.com", 443, ALLOW_MODE_CONNECT),
	    "example.com");
	cr_assert_str_eq(mname(&l, "a.example.com", 443, ALLOW_MODE_CONNECT),
	    "example.com");
	cr_assert_str_eq(mname(&l, "example.com", 80, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "example.com", 80, ALLOW_MODE_FORWARD),
	    "example.com");
	cr_assert_str_eq(mname(&l, "example.com", 443, ALLOW_MODE_FORWARD),
	    "-");
	cr_assert_str_eq(mname(&l, "example.com", 22, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "example.com", 0, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "badexample.com", 443, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "example.org", 443, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "com", 443, ALLOW_MODE_CONNECT), "-");
	cr_assert_null(allowlist_match_name(&l, NULL, 443,
	    ALLOW_MODE_CONNECT));
	allowlist_free(&l);
}

Test(match, name_explicit_port)
{
	static const char *v[] = { "git.example.com:22/notls",
	    "example.com:8443" };
	struct allowlist l;

	list_of(&l, v, 2);
	cr_assert_str_eq(mname(&l, "git.example.com", 22, ALLOW_MODE_CONNECT),
	    "git.example.com:22/notls");
	cr_assert_str_eq(mname(&l, "git.example.com", 443,
	    ALLOW_MODE_CONNECT), "-");
	cr_assert_str_eq(mname(&l, "git.example.com", 8443,
	    ALLOW_MODE_CONNECT), "example.com:8443");
	cr_assert_str_eq(mname(&l, "example.com", 8443, ALLOW_MODE_FORWARD),
	    "example.com:8443");
	cr_assert_str_eq(mname(&l, "example.com", 22, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "example.com", 443, ALLOW_MODE_CONNECT),
	    "-");
	allowlist_free(&l);
}

Test(match, name_most_specific)
{
	static const char *v[] = { "com", "example.com", "a.example.com",
	    "b.a.example.com:443", "a.example.com:443", "x.example.com" };
	struct allowlist l;
	const struct allow_entry *e;

	list_of(&l, v, 6);
	cr_assert_str_eq(mname(&l, "q.b.a.example.com", 443,
	    ALLOW_MODE_CONNECT), "b.a.example.com:443");
	/* Same length: the entry naming the port beats the default. */
	e = allowlist_match_name(&l, "z.a.example.com", 443,
	    ALLOW_MODE_CONNECT);
	cr_assert_not_null(e);
	cr_assert_str_eq(e->text, "a.example.com:443");
	cr_assert_str_eq(e->origin, "arg:4");
	/* ... but in forward mode only the default-port entry fits 80. */
	cr_assert_str_eq(mname(&l, "z.a.example.com", 80, ALLOW_MODE_FORWARD),
	    "a.example.com");
	cr_assert_str_eq(mname(&l, "y.example.com", 443, ALLOW_MODE_CONNECT),
	    "example.com");
	cr_assert_str_eq(mname(&l, "example.org", 443, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "example.net", 443, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "foo.com", 443, ALLOW_MODE_CONNECT),
	    "com");
	allowlist_free(&l);
}

Test(match, name_first_of_duplicates)
{
	static const char *v[] = { "example.com", "EXAMPLE.com." };
	struct allowlist l;
	const struct allow_entry *e;

	list_of(&l, v, 2);
	cr_assert_eq(l.n, 2);
	e = allowlist_match_name(&l, "example.com", 443, ALLOW_MODE_CONNECT);
	cr_assert_eq(e, &l.v[0]);
	allowlist_free(&l);
}

Test(match, name_ignores_addr_entries)
{
	static const char *v[] = { "127.0.0.1", "::1", "0.0.0.0/0" };
	struct allowlist l;

	list_of(&l, v, 3);
	cr_assert_str_eq(mname(&l, "localhost", 443, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(mname(&l, "127.0.0.1", 443, ALLOW_MODE_CONNECT),
	    "-");
	allowlist_free(&l);
}

/* The text of the address entry matching address text a (or "-"). */
static const char *
maddr(const struct allowlist *l, const char *a, uint16_t port)
{
	const struct allow_entry *e;
	struct aisb_addr addr;

	memset(&addr, 0, sizeof(addr));
	if (strchr(a, ':') != NULL) {
		addr.family = AF_INET6;
		cr_assert_eq(inet_pton(AF_INET6, a, addr.b), 1);
	} else {
		addr.family = AF_INET;
		cr_assert_eq(inet_pton(AF_INET, a, addr.b), 1);
	}
	e = allowlist_match_addr(l, &addr, port);
	return e == NULL ? "-" : e->text;
}

Test(match, addr)
{
	static const char *v[] = { "10.0.0.0/8", "10.1.0.0/16",
	    "10.1.2.3:5432", "192.168.1.10", "example.com", "2001:db8::/32",
	    "[2001:db8::1]:22/notls", "::ffff:172.16.0.0/108" };
	struct allowlist l;

	list_of(&l, v, 8);
	cr_assert_str_eq(maddr(&l, "10.9.9.9", 1), "10.0.0.0/8");
	cr_assert_str_eq(maddr(&l, "10.1.9.9", 443), "10.1.0.0/16");
	cr_assert_str_eq(maddr(&l, "10.1.2.3", 5432), "10.1.2.3:5432");
	cr_assert_str_eq(maddr(&l, "10.1.2.3", 5433), "10.1.0.0/16");
	cr_assert_str_eq(maddr(&l, "11.0.0.1", 443), "-");
	cr_assert_str_eq(maddr(&l, "192.168.1.10", 9999), "192.168.1.10");
	cr_assert_str_eq(maddr(&l, "192.168.1.11", 9999), "-");
	/* IPv4-mapped addresses match IPv4 entries. */
	cr_assert_str_eq(maddr(&l, "::ffff:10.1.2.3", 5432), "10.1.2.3:5432");
	cr_assert_str_eq(maddr(&l, "::ffff:10.200.0.1", 80), "10.0.0.0/8");
	cr_assert_str_eq(maddr(&l, "2001:db8::1", 22),
	    "[2001:db8::1]:22/notls");
	cr_assert_str_eq(maddr(&l, "2001:db8::1", 23), "2001:db8::/32");
	cr_assert_str_eq(maddr(&l, "2001:db9::1", 22), "-");
	/* An IPv4 address under a mapped IPv6 network. */
	cr_assert_str_eq(maddr(&l, "172.16.5.5", 443),
	    "::ffff:172.16.0.0/108");
	cr_assert_str_eq(maddr(&l, "::ffff:172.16.5.5", 443),
	    "::ffff:172.16.0.0/108");
	allowlist_free(&l);
}

Test(match, addr_longest_across_families)
{
	static const char *v[] = { "::ffff:10.0.0.0/104", "10.1.0.0/16",
	    "::ffff:10.1.2.0/120" };
	struct allowlist l;

	list_of(&l, v, 3);
	cr_assert_str_eq(maddr(&l, "10.1.2.3", 443), "::ffff:10.1.2.0/120");
	cr_assert_str_eq(maddr(&l, "10.1.3.3", 443), "10.1.0.0/16");
	cr_assert_str_eq(maddr(&l, "10.2.3.3", 443), "::ffff:10.0.0.0/104");
	allowlist_free(&l);
}

Test(match, addr_same_prefix_port_wins)
{
	static const char *v[] = { "10.0.0.1", "10.0.0.1:443" };
	struct allowlist l;

	list_of(&l, v, 2);
	cr_assert_str_eq(maddr(&l, "10.0.0.1", 443), "10.0.0.1:443");
	cr_assert_str_eq(maddr(&l, "10.0.0.1", 80), "10.0.0.1");
	allowlist_free(&l);
}

Test(match, empty_list)
{
	struct allowlist l;

	allowlist_init(&l);
	cr_assert_str_eq(mname(&l, "example.com", 443, ALLOW_MODE_CONNECT),
	    "-");
	cr_assert_str_eq(maddr(&l, "1.1.1.1", 443), "-");
}

Test(match, is_tls)
{
	struct allow_entry a, b, c;
	struct aisb_error err;

	cr_assert_eq(allow_entry_parse("example.com", 11, &a, &err), 0);
	cr_assert_eq(allow_entry_parse("example.com:22/notls", 20, &b, &err),
	    0);
	cr_assert_eq(allow_entry_parse("example.com:8443", 16, &c, &err), 0);
	cr_assert_eq(allow_entry_is_tls(&a, 443), 1);
	cr_assert_eq(allow_entry_is_tls(&a, 80), 0);
	cr_assert_eq(allow_entry_is_tls(&b, 22), 0);
	cr_assert_eq(allow_entry_is_tls(&b, 443), 1);
	cr_assert_eq(allow_entry_is_tls(&c, 8443), 1);
	cr_assert_eq(allow_entry_is_tls(&c, 8444), 0);
	cr_assert_eq(allow_entry_is_tls(NULL, 443), 1);
	cr_assert_eq(allow_entry_is_tls(NULL, 8443), 0);
	cr_assert_eq(allow_entry_parse("example.com:443/notls", 21, &b,
	    &err), 0);
	/* Port 443 is TLS whatever the entry says. */
	cr_assert_eq(allow_entry_is_tls(&b, 443), 1);
}

/* A private temp dir for file tests. */
static char tmpdir[64];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/aisb-test-allow.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

/* Remove tmpdir and the files (no subdirectories) the test made in it. */
static void
tmp_teardown(void)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	if (tmpdir[0] == '\0' || (d = opendir(tmpdir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmpdir);
}

/* Write a file in tmpdir with contents s and mode; path into buf. */
static const char *
tmp_file(char *buf, size_t size, const char *s, size_t n, mode_t mode)
{
	int fd;

	snprintf(buf, size, "%s/allow.XXXXXX", tmpdir);
	cr_assert_neq(fd = mkstemp(buf), -1);
	cr_assert_eq(write(fd, s, n), (ssize_t)n);
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
	return buf;
}

/* Load contents s (mode 0600) into l; return the result, message in err. */
static int
load(struct allowlist *l, const char *s, char *path, size_t size,
    struct aisb_error *err)
{
	tmp_file(path, size, s, strlen(s), 0600);
	return allowlist_load_file(l, path, err);
}

TestSuite(file, .init = tmp_setup, .fini = tmp_teardown);

Test(file, load_good)
{
	struct allowlist l;
	struct aisb_error err = { "" };
	char path[128], origin[160];

	allowlist_init(&l);
	cr_assert_eq(load(&l, "# the allowlist\n"
	    "example.com\n"
	    "\n"
	    "   \t  \n"
	    "  api.anthropic.com   # for pi\n"
	    "#commented.example\n"
	    "git.example.com:22/notls\r\n"
	    "10.0.0.0/8#no space before\n"
	    "\t[::1]:8080\t\n"
	    "last.example", path, sizeof(path), &err), 0, "%s", err.msg);
	cr_assert_eq(l.n, 6);
	cr_assert_str_eq(l.v[0].text, "example.com");
	cr_assert_str_eq(l.v[1].text, "api.anthropic.com");
	cr_assert_str_eq(l.v[2].text, "git.example.com:22/notls");
	cr_assert_str_eq(l.v[3].text, "10.0.0.0/8");
	cr_assert_str_eq(l.v[4].text, "[::1]:8080");
	cr_assert_str_eq(l.v[5].text, "last.example");
	snprintf(origin, sizeof(origin), "%s:2", path);
	cr_assert_str_eq(l.v[0].origin, origin);
	snprintf(origin, sizeof(origin), "%s:5", path);
	cr_assert_str_eq(l.v[1].origin, origin);
	snprintf(origin, sizeof(origin), "%s:7", path);
	cr_assert_str_eq(l.v[2].origin, origin);
	snprintf(origin, sizeof(origin), "%s:10", path);
	cr_assert_str_eq(l.v[5].origin, origin);
	allowlist_free(&l);
}

Test(file, appends_to_existing)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128];

	allowlist_init(&l);
	cr_assert_eq(allowlist_add(&l, "first.example", 13, "--allow", &err),
	    0);
	cr_assert_eq(load(&l, "second.example\nthird.example\n", path,
	    sizeof(path), &err), 0);
	cr_assert_eq(l.n, 3);
	cr_assert_str_eq(l.v[0].origin, "--allow");
	cr_assert_str_eq(l.v[2].name, "third.example");
	allowlist_free(&l);
}

Test(file, empty_and_comments_only)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128];

	allowlist_init(&l);
	cr_assert_eq(load(&l, "", path, sizeof(path), &err), 0);
	cr_assert_eq(load(&l, "# nothing\n\n  # here\n", path, sizeof(path),
	    &err), 0);
	cr_assert_eq(l.n, 0);
	allowlist_free(&l);
}

Test(file, duplicates_kept)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128];

	allowlist_init(&l);
	cr_assert_eq(load(&l, "a.example\nA.example.\n", path, sizeof(path),
	    &err), 0);
	cr_assert_eq(l.n, 2);
	allowlist_free(&l);
}

Test(file, bad_line_all_or_nothing)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128], want[256];

	allowlist_init(&l);
	cr_assert_eq(allowlist_add(&l, "keep.example", 12, "--allow", &err),
	    0);
	cr_assert_eq(load(&l, "good.example\n# c\n\nexample.com:99999\n"
	    "bad name\n", path, sizeof(path), &err), -1);
	snprintf(want, sizeof(want), "%s:4: invalid port \"99999\" (1-65535)",
	    path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 1);
	cr_assert_str_eq(l.v[0].name, "keep.example");

	cr_assert_eq(load(&l, "a.example\n  exa mple.com  # x\n", path,
	    sizeof(path), &err), -1);
	snprintf(want, sizeof(want), "%s:2: invalid name \"exa mple.com\": "
	    "invalid byte 0x20 at offset 3", path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 1);

	cr_assert_eq(load(&l, "127.1\n", path, sizeof(path), &err), -1);
	snprintf(want, sizeof(want), "%s:1: write IPv4 address \"127.1\" as "
	    "a dotted quad: 127.0.0.1", path);
	cr_assert_str_eq(err.msg, want);
	allowlist_free(&l);
}

Test(file, line_too_long)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128], want[256];
	char s[ALLOW_LINE_MAXLEN + 64];

	allowlist_init(&l);
	/* Exactly ALLOW_LINE_MAXLEN bytes, mostly comment: fine. */
	memset(s, ' ', sizeof(s));
	memcpy(s, "a.example #", 11);
	s[ALLOW_LINE_MAXLEN] = '\n';
	s[ALLOW_LINE_MAXLEN + 1] = '\0';
	cr_assert_eq(load(&l, s, path, sizeof(path), &err), 0, "%s", err.msg);
	cr_assert_eq(l.n, 1);
	/* One more byte: refused, even though it is a comment. */
	memset(s, ' ', sizeof(s));
	memcpy(s, "b.example\n#", 11);
	s[ALLOW_LINE_MAXLEN + 11] = '\0';
	cr_assert_eq(load(&l, s, path, sizeof(path), &err), -1);
	snprintf(want, sizeof(want), "%s:2: line too long (more than 1024 "
	    "bytes)", path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 1);
	allowlist_free(&l);
}

Test(file, nul_byte_in_line)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128], want[256];

	allowlist_init(&l);
	tmp_file(path, sizeof(path), "ok.example\nev\0il.example\n", 25,
	    0600);
	cr_assert_eq(allowlist_load_file(&l, path, &err), -1);
	snprintf(want, sizeof(want), "%s:2: invalid name \"ev\\x00il.example\""
	    ": invalid byte 0x00 at offset 2", path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 0);
	allowlist_free(&l);
}

Test(file, too_many_entries)
{
	struct allowlist l;
	struct aisb_error err;
	struct sbuf b;
	char path[128], want[256];
	int i;

	sbuf_init(&b);
	for (i = 0; i <= ALLOW_MAX_ENTRIES; i++)
		cr_assert_eq(sbuf_printf(&b, "h%d.example\n", i), 0);
	allowlist_init(&l);
	tmp_file(path, sizeof(path), b.p, b.len, 0600);
	cr_assert_eq(allowlist_load_file(&l, path, &err), -1);
	snprintf(want, sizeof(want), "%s:4097: too many allowlist entries "
	    "(at most 4096)", path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 0);
	sbuf_free(&b);
	allowlist_free(&l);
}

/* Expect loading a file with mode to be refused as writable by others. */
static void
load_mode_refused(mode_t mode)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128], want[512];

	allowlist_init(&l);
	tmp_file(path, sizeof(path), "example.com\n", 12, mode);
	cr_assert_eq(allowlist_load_file(&l, path, &err), -1, "%o", mode);
	snprintf(want, sizeof(want), "%s: group- or world-writable, refusing "
	    "(chmod go-w %s)", path, path);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 0);
	allowlist_free(&l);
}

Test(file, permissions)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128];

	load_mode_refused(0620);
	load_mode_refused(0602);
	load_mode_refused(0666);
	load_mode_refused(0622);
	load_mode_refused(0660);
	allowlist_init(&l);
	tmp_file(path, sizeof(path), "example.com\n", 12, 0644);
	cr_assert_eq(allowlist_load_file(&l, path, &err), 0);
	tmp_file(path, sizeof(path), "example.com\n", 12, 0400);
	cr_assert_eq(allowlist_load_file(&l, path, &err), 0, "%s", err.msg);
	cr_assert_eq(l.n, 2);
	allowlist_free(&l);
}

Test(file, symlink_followed_and_checked)
{
	struct allowlist l;
	struct aisb_error err;
	char path[128], link[160], want[512];

	allowlist_init(&l);
	tmp_file(path, sizeof(path), "example.com\n", 12, 0600);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	cr_assert_eq(symlink(path, link), 0);
	cr_assert_eq(allowlist_load_file(&l, link, &err), 0);
	cr_assert_eq(l.n, 1);
	cr_assert_eq(chmod(path, 0666), 0);
	cr_assert_eq(allowlist_load_file(&l, link, &err), -1);
	snprintf(want, sizeof(want), "%s: group- or world-writable, refusing "
	    "(chmod go-w %s)", link, link);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 1);
	allowlist_free(&l);
}

Test(file, not_regular)
{
	struct allowlist l;
	struct aisb_error err;
	char path[160], want[256];

	allowlist_init(&l);
	cr_assert_eq(allowlist_load_file(&l, tmpdir, &err), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", tmpdir);
	cr_assert_str_eq(err.msg, want);

	/* A FIFO must not hang the open. */
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(allowlist_load_file(&l, path, &err), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	cr_assert_str_eq(err.msg, want);

	cr_assert_eq(allowlist_load_file(&l, "/dev/null", &err), -1);
	cr_assert_str_eq(err.msg, "/dev/null: not a regular file");
	cr_assert_eq(l.n, 0);
}

Test(file, missing)
{
	struct allowlist l;
	struct aisb_error err;
	char path[160], want[256];

	allowlist_init(&l);
	snprintf(path, sizeof(path), "%s/nonexistent", tmpdir);
	cr_assert_eq(allowlist_load_file(&l, path, &err), -1);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(l.n, 0);
}
