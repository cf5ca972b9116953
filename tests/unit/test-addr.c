/* IP literal parsing in every encoding, range classification, CIDRs. */
#include <criterion/criterion.h>

#include <sys/socket.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "aisb.h"

/* Parse s as a literal; expect 1 and the dotted/RFC 5952 text want. */
static void
lit_ok(const char *s, const char *want)
{
	struct aisb_addr a;
	char buf[ADDR_STR_SIZE];

	memset(&a, 0xaa, sizeof(a));
	cr_assert_eq(addr_parse_literal(s, strlen(s), &a), 1, "\"%s\"", s);
	cr_assert_str_eq(addr_ntop(&a, buf), want, "\"%s\"", s);
}

/* Expect addr_parse_literal(s) to return r (0 or -1). */
static void
lit_is(const char *s, int r)
{
	struct aisb_addr a;

	cr_assert_eq(addr_parse_literal(s, strlen(s), &a), r, "\"%s\"", s);
}

/* An address from inet_pton text. */
static struct aisb_addr
A(const char *s)
{
	struct aisb_addr a;

	memset(&a, 0, sizeof(a));
	if (strchr(s, ':') != NULL) {
		a.family = AF_INET6;
		cr_assert_eq(inet_pton(AF_INET6, s, a.b), 1, "%s", s);
	} else {
		a.family = AF_INET;
		cr_assert_eq(inet_pton(AF_INET, s, a.b), 1, "%s", s);
	}
	return a;
}

/* Expect address s to classify as want (NULL: public). */
static void
cls(const char *s, const char *want)
{
	struct aisb_addr a = A(s);
	const char *got = addr_classify(&a);

	if (want == NULL)
		cr_assert_null(got, "%s: got %s, want public", s, got);
	else {
		cr_assert_not_null(got, "%s: got public, want %s", s, want);
		cr_assert_str_eq(got, want, "%s", s);
	}
}

Test(addr, literal_dotted)
{
	lit_ok("127.0.0.1", "127.0.0.1");
	lit_ok("0.0.0.0", "0.0.0.0");
	lit_ok("255.255.255.255", "255.255.255.255");
	lit_ok("1.2.3.4", "1.2.3.4");
	lit_ok("127.0.0.1.", "127.0.0.1");
}

Test(addr, literal_short_forms)
{
	lit_ok("127.1", "127.0.0.1");
	lit_ok("127.0.1", "127.0.0.1");
	lit_ok("2130706433", "127.0.0.1");
	lit_ok("2130706433.", "127.0.0.1");
	lit_ok("0", "0.0.0.0");
	lit_ok("4294967295", "255.255.255.255");
	lit_ok("10.65535", "10.0.255.255");
	lit_ok("10.16777215", "10.255.255.255");
	lit_ok("10.1.65535", "10.1.255.255");
	lit_ok("169.254.43518", "169.254.169.254");
	lit_ok("2852039166", "169.254.169.254");
}

Test(addr, literal_octal)
{
	lit_ok("0177.0.0.1", "127.0.0.1");
	lit_ok("0177.1", "127.0.0.1");
	lit_ok("017700000001", "127.0.0.1");
	lit_ok("00", "0.0.0.0");
	lit_ok("010.010.010.010", "8.8.8.8");
	lit_ok("0377.0377.0377.0377", "255.255.255.255");
	lit_is("08.0.0.1", -1);
	lit_is("1.2.3.09", -1);
	lit_is("0400.0.0.1", -1);
}

Test(addr, literal_hex)
{
	lit_ok("0x7f.0.0.1", "127.0.0.1");
	lit_ok("0X7F.0.0.1", "127.0.0.1");
	lit_ok("0x7f000001", "127.0.0.1");
	lit_ok("0x7f.1", "127.0.0.1");
	lit_ok("0xA9.0xFE.0xA9.0xFE", "169.254.169.254");
	lit_ok("0xffffffff", "255.255.255.255");
	lit_ok("0x", "0.0.0.0");
	lit_ok("0x.0x.0x.0x", "0.0.0.0");
	lit_ok("0x0000000000007f000001", "127.0.0.1");
	lit_is("0x100000000", -1);
	lit_is("0x100.0.0.1", -1);
	lit_is("0xg.0.0.1", -1);
	lit_is("1.2.3.0x", 1);
}

Test(addr, literal_mixed)
{
	lit_ok("0x7f.0.00.1", "127.0.0.1");
	lit_ok("0177.0x0.1", "127.0.0.1");
	lit_ok("127.0.0x1", "127.0.0.1");
	lit_ok("0xa9.254.0251.0xfe", "169.254.169.254");
	lit_ok("0xc0.0250.0x1", "192.168.0.1");
}

Test(addr, literal_out_of_range)
{
	lit_is("1.2.3.999", -1);
	lit_is("256.0.0.1", -1);
	lit_is("1.2.3.256", -1);
	lit_is("4294967296", -1);
	lit_is("99999999999999999999999", -1);
	lit_is("127.16777216", -1);
	lit_is("127.0.65536", -1);
	lit_is("1.2.3.4.5", -1);
	lit_is("1.2.3.4.5.", -1);
	lit_is("127.0.0.1..", 0);
	lit_is("1..1", -1);
	lit_is(".1", -1);
	lit_is("-1", 0);
	lit_is("1.-2.3", -1);
	lit_is("+1.2.3.4", -1);
	lit_is("1.2.3.+4", 0);
	lit_is("1 .2.3.4", -1);
}

Test(addr, literal_names)
{
	lit_is("example.com", 0);
	lit_is("localhost", 0);
	lit_is("1.2.3.com", 0);
	lit_is("123.example", 0);
	lit_is("0x7f.example", 0);
	lit_is("1e1", 0);
	lit_is("0xz", 0);
	lit_is("", 0);
	lit_is(".", 0);
	/* A name whose last label is numeric is never a valid name. */
	lit_is("example.123", -1);
	lit_is("example.0x1f", -1);
	lit_is("a.b.c.d.1", -1);
}

Test(addr, literal_nul_byte)
{
	struct aisb_addr a;

	cr_assert_eq(addr_parse_literal("127.0.0.1\0.2", 12, &a), -1);
	cr_assert_eq(addr_parse_literal("::1\0:2", 6, &a), -1);
	cr_assert_eq(addr_parse_literal("1\0.2", 4, &a), -1);
	/* Only len bytes are looked at. */
	cr_assert_eq(addr_parse_literal("127.0.0.1junk", 9, &a), 1);
}

Test(addr, literal_v6)
{
	lit_ok("::1", "::1");
	lit_ok("[::1]", "::1");
	lit_ok("::", "::");
	lit_ok("[::]", "::");
	lit_ok("2001:DB8::1", "2001:db8::1");
	lit_ok("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1");
	lit_ok("::ffff:127.0.0.1", "::ffff:127.0.0.1");
	lit_ok("[::ffff:169.254.169.254]", "::ffff:169.254.169.254");
	lit_ok("::ffff:7f00:1", "::ffff:127.0.0.1");
	lit_ok("fe80::1", "fe80::1");
	lit_ok("64:ff9b::7f00:1", "64:ff9b::7f00:1");
}

Test(addr, literal_v6_bad)
{
	lit_is("fe80::1%eth0", -1);
	lit_is("[fe80::1%eth0]", -1);
	lit_is("[fe80::1%25eth0]", -1);
	lit_is("[::1", -1);
	lit_is("::1]", -1);
	lit_is("[]", -1);
	lit_is("[", -1);
	lit_is("[127.0.0.1]", -1);
	lit_is("[example.com]", -1);
	lit_is("1:2:3:4:5:6:7:8:9", -1);
	lit_is(":::", -1);
	lit_is("::g", -1);
	lit_is("example.com:443", -1);
	lit_is("::ffff:127.1", -1);
	lit_is("::ffff:0x7f.0.0.1", -1);
	lit_is("[::1]:443", -1);
	lit_is("[ ::1]", -1);
	lit_is("::1.", -1);
	/* Longer than any IPv6 text. */
	lit_is("0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:"
	    "0000:0000", -1);
}

Test(addr, classify_v4_public)
{
	cls("1.1.1.1", NULL);
	cls("8.8.8.8", NULL);
	cls("93.184.216.34", NULL);
	cls("223.255.255.255", NULL);
	cls("1.0.0.0", NULL);
}

Test(addr, classify_v4_ranges)
{
	cls("0.0.0.0", "unspecified");
	cls("0.255.255.255", "unspecified");
	cls("10.0.0.0", "private");
	cls("10.255.255.255", "private");
	cls("9.255.255.255", NULL);
	cls("11.0.0.0", NULL);
	cls("172.15.255.255", NULL);
	cls("172.16.0.0", "private");
	cls("172.31.255.255", "private");
	cls("172.32.0.0", NULL);
	cls("192.167.255.255", NULL);
	cls("192.168.0.0", "private");
	cls("192.168.255.255", "private");
	cls("192.169.0.0", NULL);
	cls("127.0.0.0", "loopback");
	cls("127.0.0.1", "loopback");
	cls("127.255.255.255", "loopback");
	cls("126.255.255.255", NULL);
	cls("128.0.0.0", NULL);
	cls("169.254.0.0", "link-local");
	cls("169.254.169.254", "link-local");
	cls("169.254.255.255", "link-local");
	cls("169.253.255.255", NULL);
	cls("169.255.0.0", NULL);
	cls("100.63.255.255", NULL);
	cls("100.64.0.0", "cgnat");
	cls("100.127.255.255", "cgnat");
	cls("100.128.0.0", NULL);
	cls("198.17.255.255", NULL);
	cls("198.18.0.0", "benchmarking");
	cls("198.19.255.255", "benchmarking");
	cls("198.20.0.0", NULL);
	cls("191.255.255.255", NULL);
	cls("192.0.0.0", "reserved");
	cls("192.0.0.255", "reserved");
	cls("192.0.1.0", NULL);
	cls("192.0.2.0", "documentation");
	cls("192.0.2.255", "documentation");
	cls("192.0.3.0", NULL);
	cls("198.51.99.255", NULL);
	cls("198.51.100.0", "documentation");
	cls("198.51.100.255", "documentation");
	cls("198.51.101.0", NULL);
	cls("203.0.112.255", NULL);
	cls("203.0.113.0", "documentation");
	cls("203.0.113.255", "documentation");
	cls("203.0.114.0", NULL);
	cls("223.255.255.255", NULL);
	cls("224.0.0.0", "multicast");
	cls("239.255.255.255", "multicast");
	cls("240.0.0.0", "reserved");
	cls("255.255.255.254", "reserved");
	cls("255.255.255.255", "broadcast");
}

Test(addr, classify_v6_ranges)
{
	cls("2606:4700::1111", NULL);
	cls("2a00:1450:4001::200e", NULL);
	cls("::", "unspecified");
	cls("::1", "loopback");
	cls("fe80::", "link-local");
	cls("fe80::1", "link-local");
	cls("febf:ffff::1", "link-local");
	cls("fec0::1", "site-local");
	cls("feff:ffff::1", "site-local");
	cls("fc00::", "ula");
	cls("fd00::1", "ula");
	cls("fd00:ec2::254", "ula");
	cls("fdff:ffff::1", "ula");
	cls("fe00::1", "reserved");
	cls("fbff:ffff::1", "reserved");
	cls("ff00::", "multicast");
	cls("ff02::1", "multicast");
	cls("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast");
	cls("2001:db8::", "documentation");
	cls("2001:db8:ffff:ffff::1", "documentation");
	cls("2001:db9::1", NULL);
	cls("2001:db7:ffff::1", NULL);
	cls("3fff::1", "documentation");
	cls("3fff:fff::1", "documentation");
	cls("3fff:1000::1", NULL);
	cls("100::", "reserved");
	cls("100::ffff:ffff:ffff:ffff", "reserved");
	cls("100:0:0:1::", "reserved");
	cls("2001:2::", "benchmarking");
	cls("2001:2:0:ffff::1", "benchmarking");
	cls("2001:2:1::1", NULL);
	cls("2001:3::1", NULL);
	/* Outside 2000::/3 nothing is allocated for unicast. */
	cls("1fff:ffff::1", "reserved");
	cls("4000::1", "reserved");
	cls("2000::1", NULL);
	cls("3fff:ffff::1", NULL);
}

Test(addr, classify_v6_mapped)
{
	cls("::ffff:127.0.0.1", "loopback");
	cls("::ffff:169.254.169.254", "link-local");
	cls("::ffff:10.1.2.3", "private");
	cls("::ffff:0.0.0.0", "unspecified");
	cls("::ffff:255.255.255.255", "broadcast");
	cls("::ffff:8.8.8.8", NULL);
	/* ::fffe:... is neither mapped nor compatible. */
	cls("::fffe:7f00:1", "reserved");
}

Test(addr, classify_v6_compatible)
{
	cls("::127.0.0.1", "loopback");
	cls("::10.0.0.1", "private");
	cls("::0.0.0.2", "unspecified");
	cls("::8.8.8.8", NULL);
	cls("::1:0:0:1", "reserved");
}

Test(addr, classify_v6_nat64)
{
	cls("64:ff9b::7f00:1", "loopback");
	cls("64:ff9b::a9fe:a9fe", "link-local");
	cls("64:ff9b::808:808", NULL);
	cls("64:ff9b::c0a8:1", "private");
	cls("64:ff9b:1::7f00:1", "loopback");
	cls("64:ff9b:1::808:808", NULL);
	cls("64:ff9b:1:ffff::808:808", NULL);
	cls("64:ff9b:1:ffff::a00:1", "private");
	/* An RFC 6052 /48 layout leaves the last 32 bits zero: refused. */
	cls("64:ff9b:1:7f00:0:1::", "unspecified");
	cls("64:ff9b:1:808:8:800::", "unspecified");
	/* Just outside the /96: not NAT64, and outside 2000::/3. */
	cls("64:ff9b:0:0:0:1:7f00:1", "reserved");
}

Test(addr, classify_v6_6to4)
{
	cls("2002:7f00:1::", "loopback");
	cls("2002:7f00:1::1", "loopback");
	cls("2002:a9fe:a9fe::1", "link-local");
	cls("2002:0a00:0001::", "private");
	cls("2002:6440::1", "cgnat");
	cls("2002:e000::1", "multicast");
	cls("2002:808:808::1", NULL);
	cls("2003:7f00:1::", NULL);
}

/* A Teredo address with server s and client c (c stored inverted). */
static void
teredo(char *buf, size_t n, uint32_t s, uint32_t c)
{
	c = ~c;
	snprintf(buf, n, "2001:0:%x:%x:0:0:%x:%x", s >> 16, s & 0xffff,
	    c >> 16, c & 0xffff);
}

Test(addr, classify_v6_teredo)
{
	char t[64];

	/* Client 127.0.0.1 stored as ~0x7f000001 = 0x80fffffe. */
	cls("2001:0:808:808::80ff:fffe", "loopback");
	teredo(t, sizeof(t), 0x08080808, 0xa9fea9fe);
	cls(t, "link-local");
	teredo(t, sizeof(t), 0x08080808, 0x0a000001);
	cls(t, "private");
	teredo(t, sizeof(t), 0x08080808, 0x01010101);
	cls(t, NULL);
	/* Public client, private server. */
	teredo(t, sizeof(t), 0xc0a80001, 0x01010101);
	cls(t, "private");
	teredo(t, sizeof(t), 0x7f000001, 0x01010101);
	cls(t, "loopback");
	/* Client 0.0.0.0 stored as all ones. */
	cls("2001:0:808:808::ffff:ffff", "unspecified");
	/* 2001:1::/32 is not Teredo. */
	cls("2001:1:808:808::80ff:fffe", NULL);
}

Test(addr, classify_bad_family)
{
	struct aisb_addr a;

	memset(&a, 0, sizeof(a));
	a.family = 12345;
	cr_assert_str_eq(addr_classify(&a), "reserved");
}

Test(addr, equal)
{
	struct aisb_addr a = A("10.0.0.1"), b = A("10.0.0.1");
	struct aisb_addr c = A("10.0.0.2"), d = A("::ffff:10.0.0.1");
	struct aisb_addr e = A("::1"), f = A("::1"), g = A("::2");

	/* Bytes past the fourth do not matter for IPv4. */
	b.b[10] = 0x55;
	cr_assert(addr_equal(&a, &b));
	cr_assert_not(addr_equal(&a, &c));
	cr_assert_not(addr_equal(&a, &d));
	cr_assert(addr_equal(&e, &f));
	cr_assert_not(addr_equal(&e, &g));
	cr_assert_not(addr_equal(&a, &e));
}

Test(addr, ntop)
{
	struct aisb_addr a = A("2001:0db8:0:0:1:0:0:1");
	char buf[ADDR_STR_SIZE];

	cr_assert_str_eq(addr_ntop(&a, buf), "2001:db8::1:0:0:1");
	a = A("2001:db8:0:0:0:0:2:1");
	cr_assert_str_eq(addr_ntop(&a, buf), "2001:db8::2:1");
	a = A("203.0.113.7");
	cr_assert_str_eq(addr_ntop(&a, buf), "203.0.113.7");
	cr_assert_eq(addr_ntop(&a, buf), buf);
	a.family = 0;
	cr_assert_str_eq(addr_ntop(&a, buf), "?");
}

/* Parse s as a CIDR; expect success with address text and prefix. */
static void
cidr_ok(const char *s, const char *addr, int prefix)
{
	struct aisb_cidr c;
	struct aisb_error err = { "" };
	char buf[ADDR_STR_SIZE];

	cr_assert_eq(cidr_parse(s, strlen(s), &c, &err), 0, "%s: %s", s,
	    err.msg);
	cr_assert_str_eq(addr_ntop(&c.addr, buf), addr, "%s", s);
	cr_assert_eq(c.prefix, prefix, "%s", s);
}

/* Parse s as a CIDR; expect failure with message want. */
static void
cidr_bad(const char *s, const char *want)
{
	struct aisb_cidr c;
	struct aisb_error err = { "" };

	cr_assert_eq(cidr_parse(s, strlen(s), &c, &err), -1, "%s", s);
	cr_assert_str_eq(err.msg, want, "%s", s);
}

Test(addr, cidr_parse_good)
{
	cidr_ok("10.0.0.0/8", "10.0.0.0", 8);
	cidr_ok("10.0.0.1", "10.0.0.1", 32);
	cidr_ok("10.0.0.1/32", "10.0.0.1", 32);
	cidr_ok("0.0.0.0/0", "0.0.0.0", 0);
	cidr_ok("172.16.0.0/12", "172.16.0.0", 12);
	cidr_ok("192.168.1.128/25", "192.168.1.128", 25);
	cidr_ok("255.255.255.255", "255.255.255.255", 32);
	cidr_ok("::1", "::1", 128);
	cidr_ok("::/0", "::", 0);
	cidr_ok("2001:db8::/32", "2001:db8::", 32);
	cidr_ok("2001:DB8:0:0::/64", "2001:db8::", 64);
	cidr_ok("fe80::/10", "fe80::", 10);
	cidr_ok("::ffff:10.0.0.0/104", "::ffff:10.0.0.0", 104);
	cidr_ok("2001:db8::1/128", "2001:db8::1", 128);
}

Test(addr, cidr_parse_bad)
{
	cidr_bad("10.0.0.1/8", "10.0.0.1/8 has host bits set");
	cidr_bad("192.168.1.1/24", "192.168.1.1/24 has host bits set");
	cidr_bad("11.0.0.0/7", "11.0.0.0/7 has host bits set");
	cidr_ok("10.0.0.0/7", "10.0.0.0", 7);
	cidr_bad("2001:db8::1/64", "2001:db8::1/64 has host bits set");
	cidr_bad("fe80::/8", "fe80::/8 has host bits set");
	cidr_ok("fe80::/9", "fe80::", 9);
	cidr_bad("", "empty address");
	cidr_bad("10.0.0.0/33", "invalid prefix length \"33\" (0-32)");
	cidr_bad("::/129", "invalid prefix length \"129\" (0-128)");
	cidr_bad("10.0.0.0/", "invalid prefix length \"\" (0-32)");
	cidr_bad("10.0.0.0/08", "invalid prefix length \"08\" (0-32)");
	cidr_bad("10.0.0.0/-8", "invalid prefix length \"-8\" (0-32)");
	cidr_bad("10.0.0.0/+8", "invalid prefix length \"+8\" (0-32)");
	cidr_bad("10.0.0.0/8/8", "invalid prefix length \"8/8\" (0-32)");
	cidr_bad("10.0.0.0/0008", "invalid prefix length \"0008\" (0-32)");
	cidr_bad("127.1", "invalid IPv4 address \"127.1\" (four decimal "
	    "parts 0-255, no leading zeros)");
	cidr_bad("010.0.0.0/8", "invalid IPv4 address \"010.0.0.0\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("0x7f.0.0.1", "invalid IPv4 address \"0x7f.0.0.1\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("256.0.0.0", "invalid IPv4 address \"256.0.0.0\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("1.2.3.4.", "invalid IPv4 address \"1.2.3.4.\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("1.2.3.4.5", "invalid IPv4 address \"1.2.3.4.5\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("1.2.3.1000", "invalid IPv4 address \"1.2.3.1000\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("example.com", "invalid IPv4 address \"example.com\" (four "
	    "decimal parts 0-255, no leading zeros)");
	cidr_bad("fe80::1%eth0", "invalid IPv6 address \"fe80::1%eth0\"");
	cidr_bad("[::1]", "invalid IPv6 address \"[::1]\"");
	cidr_bad("::1::2", "invalid IPv6 address \"::1::2\"");
}

Test(addr, cidr_parse_nul)
{
	struct aisb_cidr c;
	struct aisb_error err;

	cr_assert_eq(cidr_parse("10.0.0.0\0/8", 11, &c, &err), -1);
	cr_assert_str_eq(err.msg, "invalid address: NUL byte");
	cr_assert_eq(cidr_parse("10.0.0.0/8", 8, &c, &err), 0);
	cr_assert_eq(c.prefix, 32);
}

/* Does CIDR text c contain address text a? */
static int
contains(const char *c, const char *a)
{
	struct aisb_cidr cidr;
	struct aisb_error err;
	struct aisb_addr addr = A(a);

	cr_assert_eq(cidr_parse(c, strlen(c), &cidr, &err), 0, "%s", c);
	return cidr_contains(&cidr, &addr);
}

Test(addr, cidr_contains)
{
	cr_assert(contains("10.0.0.0/8", "10.0.0.0"));
	cr_assert(contains("10.0.0.0/8", "10.255.255.255"));
	cr_assert_not(contains("10.0.0.0/8", "11.0.0.0"));
	cr_assert_not(contains("10.0.0.0/8", "9.255.255.255"));
	cr_assert(contains("192.168.1.128/25", "192.168.1.200"));
	cr_assert_not(contains("192.168.1.128/25", "192.168.1.127"));
	cr_assert(contains("0.0.0.0/0", "8.8.8.8"));
	cr_assert(contains("1.2.3.4", "1.2.3.4"));
	cr_assert_not(contains("1.2.3.4", "1.2.3.5"));
	cr_assert(contains("172.16.0.0/12", "172.31.255.255"));
	cr_assert_not(contains("172.16.0.0/12", "172.32.0.0"));
	cr_assert(contains("2001:db8::/32", "2001:db8:ffff::1"));
	cr_assert_not(contains("2001:db8::/32", "2001:db9::"));
	cr_assert(contains("fe80::/10", "febf::1"));
	cr_assert_not(contains("fe80::/10", "fec0::1"));
	cr_assert(contains("::/0", "2001:db8::1"));
	cr_assert(contains("::1", "::1"));
	cr_assert_not(contains("::1", "::2"));
}

Test(addr, cidr_contains_mapped)
{
	/* IPv4-mapped IPv6 addresses match IPv4 networks. */
	cr_assert(contains("10.0.0.0/8", "::ffff:10.1.2.3"));
	cr_assert(contains("127.0.0.1", "::ffff:127.0.0.1"));
	cr_assert_not(contains("10.0.0.0/8", "::ffff:11.1.2.3"));
	cr_assert(contains("0.0.0.0/0", "::ffff:1.2.3.4"));
	/* Other embeddings are not IPv4 for matching. */
	cr_assert_not(contains("10.0.0.0/8", "::10.1.2.3"));
	cr_assert_not(contains("127.0.0.1", "64:ff9b::7f00:1"));
	cr_assert_not(contains("0.0.0.0/0", "2001:db8::1"));
	/* An IPv4 address is inside a network within ::ffff:0:0/96 ... */
	cr_assert(contains("::ffff:10.0.0.0/104", "10.9.8.7"));
	cr_assert(contains("::ffff:0.0.0.0/96", "8.8.8.8"));
	cr_assert_not(contains("::ffff:10.0.0.0/104", "11.9.8.7"));
	/* ... but "::/0" does not quietly take IPv4 too. */
	cr_assert_not(contains("::/0", "8.8.8.8"));
	cr_assert_not(contains("::/80", "8.8.8.8"));
}
