/* test_ext.c - unit tests for stdlib/ext.h: decimal, ipaddr and like
 * (datetime and duration are tests/unit/test_ext_time.c).  Expected values
 * follow Cedar's own implementation (cedar-policy-core extensions) and
 * dogwood.md §4.4, §4.6-§4.9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stdlib/ext.h"
#include "tests/unit/ext_check.h"

/* ---- helpers ---- */

#define DEC_OK(lit, expected) ext_check_ok("decimal", dw_decimal_parse, 12345, TEXT(lit), (expected), __LINE__)
#define DEC_BAD(lit) ext_check_bad("decimal", dw_decimal_parse, 12345, TEXT(lit), __LINE__)

static dw_ipaddr parse_ip(const char *s)
{
    dw_ipaddr ip;
    if (!dw_ip_parse(s, strlen(s), &ip))
        fail_msg("ip(\"%s\") rejected", s);
    return ip;
}

static void check_ip_bad(const char *s, size_t n, int line)
{
    dw_ipaddr ip;
    memset(&ip, 0xab, sizeof ip);
    if (dw_ip_parse(s, n, &ip))
        fail_msg("line %d: ip(\"%.*s\") accepted", line, (int)n, s);
    assert_int_equal(ip.v6, 0xab);
    assert_int_equal(ip.prefix, 0xab);
}

#define IP_BAD(lit) check_ip_bad(TEXT(lit), __LINE__)

static void check_ip_format(const char *s, const char *expected)
{
    dw_ipaddr ip = parse_ip(s);
    char buf[48];
    dw_ip_format(&ip, buf, sizeof buf);
    assert_string_equal(buf, expected);
    /* The printed form parses back to the same value. */
    dw_ipaddr again = parse_ip(buf);
    assert_true(dw_ip_equal(&ip, &again));
}

static bool ip_in_range(const char *a, const char *b)
{
    dw_ipaddr x = parse_ip(a), y = parse_ip(b);
    return dw_ip_in_range(&x, &y);
}

static bool ip_loopback(const char *a)
{
    dw_ipaddr x = parse_ip(a);
    return dw_ip_is_loopback(&x);
}

static bool ip_multicast(const char *a)
{
    dw_ipaddr x = parse_ip(a);
    return dw_ip_is_multicast(&x);
}

static bool ip_equal(const char *a, const char *b)
{
    dw_ipaddr x = parse_ip(a), y = parse_ip(b);
    return dw_ip_equal(&x, &y);
}

static int ip_compare(const char *a, const char *b)
{
    dw_ipaddr x = parse_ip(a), y = parse_ip(b);
    return dw_ip_compare(&x, &y);
}

/* Builds a like pattern from text where every '*' is a wildcard (test-only:
 * a literal star is tested with a hand-built pattern). */
typedef struct {
    dw_str seg[64];
    dw_like_pattern pattern;
} star_pattern;

static const dw_like_pattern *make_pattern(star_pattern *sp, const char *text)
{
    size_t nseg = 0;
    const char *start = text;
    for (const char *c = text;; c++) {
        if (*c == '*' || *c == '\0') {
            assert_true(nseg < 64);
            sp->seg[nseg].s = start;
            sp->seg[nseg].len = (size_t)(c - start);
            nseg++;
            start = c + 1;
            if (*c == '\0')
                break;
        }
    }
    sp->pattern.nseg = nseg;
    sp->pattern.seg = sp->seg;
    return &sp->pattern;
}

static bool like(const char *text, const char *pattern)
{
    star_pattern sp;
    return dw_like_match(make_pattern(&sp, pattern), text, strlen(text));
}

/* ---- decimal ---- */

static void test_decimal_parse_valid(void **state)
{
    DEC_OK("1.0", 10000);
    DEC_OK("-1.0", -10000);
    DEC_OK("123.456", 1234560);
    DEC_OK("0.1234", 1234);
    DEC_OK("-0.0123", -123);
    DEC_OK("55.1", 551000);
    DEC_OK("0.0", 0);
    DEC_OK("-0.0", 0);
    DEC_OK("-0.5", -5000); /* sign from the text, not from the integer part */
    DEC_OK("-0.0001", -1);
    DEC_OK("1.50", 15000);
    DEC_OK("00001.5", 15000);
    DEC_OK("000000000000000000000000001.0001", 10001);
    DEC_OK("922337203685477.5807", INT64_MAX);
    DEC_OK("-922337203685477.5808", INT64_MIN);
    DEC_OK("922337203685477.0", INT64_C(9223372036854770000));
    DEC_OK("-922337203685477.0", INT64_C(-9223372036854770000));
}

static void test_decimal_parse_invalid(void **state)
{
    DEC_BAD("922337203685477.5808");
    DEC_BAD("-922337203685477.5809");
    DEC_BAD("922337203685478.0");
    DEC_BAD("99999999999999999999.0"); /* integer part beyond u64 */
    DEC_BAD("-22440011991199802363.1057");
    DEC_BAD("1");
    DEC_BAD("1.");
    DEC_BAD(".5");
    DEC_BAD("-.5");
    DEC_BAD("-");
    DEC_BAD("-.");
    DEC_BAD("");
    DEC_BAD(".");
    DEC_BAD("1.12345");
    DEC_BAD("0.00000");
    DEC_BAD("+1.0");
    DEC_BAD("--1.0");
    DEC_BAD(" 1.0");
    DEC_BAD("1.0 ");
    DEC_BAD("1,0");
    DEC_BAD("1.0.0");
    DEC_BAD("1e2.0");
    DEC_BAD("1.0e2");
    DEC_BAD("0x1.0");
    DEC_BAD("1.-5");
    DEC_BAD("1.\0");
    DEC_BAD("1.5\0");
    DEC_BAD("\0" "1.5");
    DEC_BAD("\xd9\xa1.\xd9\xa0"); /* Arabic-Indic digits are not ASCII digits */
    int64_t v = 9;
    assert_false(dw_decimal_parse(NULL, 0, &v));
    assert_int_equal(v, 9);
}

static void check_decimal_format(int64_t v, const char *expected)
{
    char buf[32];
    dw_decimal_format(v, buf, sizeof buf);
    assert_string_equal(buf, expected);
    int64_t back;
    assert_true(dw_decimal_parse(buf, strlen(buf), &back));
    assert_int_equal(back, v);
}

static void test_decimal_format(void **state)
{
    check_decimal_format(15000, "1.5");
    check_decimal_format(-1, "-0.0001");
    check_decimal_format(120000, "12.0");
    check_decimal_format(0, "0.0");
    check_decimal_format(10005, "1.0005");
    check_decimal_format(-5000, "-0.5");
    check_decimal_format(1234560, "123.456");
    check_decimal_format(INT64_MAX, "922337203685477.5807");
    check_decimal_format(INT64_MIN, "-922337203685477.5808");
    char tiny[4];
    dw_decimal_format(INT64_MIN, tiny, sizeof tiny); /* truncates, no overflow */
    assert_string_equal(tiny, "-92");
}

/* ---- ipaddr ---- */

static void test_ip_parse_ipv4(void **state)
{
    dw_ipaddr ip = parse_ip("192.168.0.1");
    assert_int_equal(ip.v6, 0);
    assert_int_equal(ip.prefix, 32);
    assert_memory_equal(ip.addr, "\xc0\xa8\x00\x01", 4);
    ip = parse_ip("10.0.0.1/8");
    assert_int_equal(ip.prefix, 8);
    assert_memory_equal(ip.addr, "\x0a\x00\x00\x01", 4); /* host bits kept */
    assert_int_equal(parse_ip("0.0.0.0/0").prefix, 0);
    assert_int_equal(parse_ip("255.255.255.255/32").prefix, 32);
    assert_int_equal(parse_ip("1.2.3.4/9").prefix, 9);
    assert_int_equal(parse_ip("0.0.0.0").prefix, 32);

    IP_BAD("01.2.3.4");
    IP_BAD("1.2.3.00");
    IP_BAD("0.00.0");
    IP_BAD("42.214.00.0");
    IP_BAD("08.111.111.0");
    IP_BAD("1.2.3");
    IP_BAD("1.2.3.4.5");
    IP_BAD("256.0.0.1");
    IP_BAD("1.2.3.1000");
    IP_BAD("174.1744.174.0");
    IP_BAD("1..2.3");
    IP_BAD("1.2.3.");
    IP_BAD(".1.2.3");
    IP_BAD("1.2.3.4/");
    IP_BAD("1.2.3.4/33");
    IP_BAD("1.2.3.4/01");
    IP_BAD("1.2.3.4/00");
    IP_BAD("1.2.3.4/+1");
    IP_BAD("1.2.3.4/-1");
    IP_BAD("1.2.3.4/032");
    IP_BAD("1.2.3.4/300");
    IP_BAD("1.2.3.4//5");
    IP_BAD("1.2.3.4/8/8");
    IP_BAD("1.2.3.4/ 8");
    IP_BAD("+1.2.3.4");
    IP_BAD("-1.2.3.4");
    IP_BAD(" 1.2.3.4");
    IP_BAD("1.2.3.4 ");
    IP_BAD("1.2.3.4\n");
    IP_BAD("1.2.3.4:80");
    IP_BAD("0x1.2.3.4");
    IP_BAD("1.2.3.4\0");
    IP_BAD("61.11\0.14.14");
    IP_BAD("");
    IP_BAD("/8");
    IP_BAD(".");
    IP_BAD("0");
    IP_BAD("A");
}

static void test_ip_parse_ipv6(void **state)
{
    dw_ipaddr ip = parse_ip("::");
    assert_int_equal(ip.v6, 1);
    assert_int_equal(ip.prefix, 128);
    assert_memory_equal(ip.addr, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    ip = parse_ip("::1");
    assert_memory_equal(ip.addr, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
    ip = parse_ip("1::");
    assert_memory_equal(ip.addr, "\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    ip = parse_ip("ffff::");
    assert_memory_equal(ip.addr, "\xff\xff\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    ip = parse_ip("1:2:3:4:5:6:7:8");
    assert_memory_equal(ip.addr, "\0\1\0\2\0\3\0\4\0\5\0\6\0\7\0\x8", 16);
    ip = parse_ip("1:2:3:4:5:6:7::"); /* `::` may stand for a single group */
    assert_memory_equal(ip.addr, "\0\1\0\2\0\3\0\4\0\5\0\6\0\7\0\0", 16);
    ip = parse_ip("::2:3:4:5:6:7:8");
    assert_memory_equal(ip.addr, "\0\0\0\2\0\3\0\4\0\5\0\6\0\7\0\x8", 16);
    ip = parse_ip("1:2::7:8");
    assert_memory_equal(ip.addr, "\0\1\0\2\0\0\0\0\0\0\0\0\0\7\0\x8", 16);
    ip = parse_ip("ABcd:EF01::/32");
    assert_memory_equal(ip.addr, "\xab\xcd\xef\x01\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    assert_int_equal(ip.prefix, 32);
    assert_int_equal(parse_ip("::/0").prefix, 0);
    assert_int_equal(parse_ip("::/128").prefix, 128);
    assert_int_equal(parse_ip("::ff/42").prefix, 42);
    assert_int_equal(parse_ip("0000:0000:0000:0000:0000:0000:0000:0000/128").prefix, 128);
    assert_int_equal(parse_ip("::ffff:ff00:1").v6, 1); /* mapped, but written in hex: fine */
    assert_int_equal(parse_ip("0:f701::f7:fe2d:0").v6, 1);
    assert_int_equal(parse_ip("0001:0002:0003:0004:0005:0006:0007:0008").v6, 1);

    /* No IPv4 tails in any form: >= 2 ':' and >= 2 '.' is refused outright. */
    IP_BAD("::ffff:1.2.3.4");
    IP_BAD("::1.2.3.4");
    IP_BAD("1:2:3:4:5:6:1.2.3.4");
    IP_BAD("::ffff:255.255.255.255");
    IP_BAD("::1.2");
    IP_BAD("::/1.2");
    IP_BAD("1:2::3.4");
    IP_BAD("fe80::1%eth0");
    IP_BAD("[::1]");
    IP_BAD("[::1]/128");
    IP_BAD(" ::1");
    IP_BAD("::1 ");
    IP_BAD(":::");
    IP_BAD("::::");
    IP_BAD(":");
    IP_BAD(":1::");
    IP_BAD("1:");
    IP_BAD("1::2::3");
    IP_BAD("1:::2");
    IP_BAD("1:2:3:4:5:6:7");
    IP_BAD("1:2:3:4:5:6:7:8:9");
    IP_BAD("1:2:3:4:5:6:7:8::");
    IP_BAD("::1:2:3:4:5:6:7:8");
    IP_BAD("1:2:3:4::5:6:7:8");
    IP_BAD("12345::");
    IP_BAD("::12345");
    IP_BAD("0:73:fffd:ffa33:1ff:89ff:895b:8989/8");
    IP_BAD("g::");
    IP_BAD("::/");
    IP_BAD("::/129");
    IP_BAD("::/0128");
    IP_BAD("::/01");
    IP_BAD("::/1280");
    IP_BAD("::/-0");
    IP_BAD("::1/+1");
    IP_BAD("2525:2f2f:ffff:ffff:ffff::ffff:ffff:ffff/37"); /* `::` plus 7 groups */
    /* 44 bytes: over Cedar's length limit even though otherwise well formed. */
    IP_BAD("0000:0000:0000:0000:0000:0000:0000:0000/0128");
    IP_BAD("00000:0000:0000:0000:0000:0000:0000:0000/12");

    dw_ipaddr untouched;
    assert_false(dw_ip_parse(NULL, 0, &untouched));
}

static void test_ip_loopback(void **state)
{
    assert_true(ip_loopback("127.0.0.1"));
    assert_true(ip_loopback("127.255.255.255"));
    assert_true(ip_loopback("127.0.0.0/8"));
    assert_true(ip_loopback("127.1.2.3/8"));
    assert_true(ip_loopback("127.1.2.3/24"));
    assert_false(ip_loopback("127.0.0.1/7"));
    assert_false(ip_loopback("127.0.0.1/0"));
    assert_false(ip_loopback("126.0.0.1"));
    assert_false(ip_loopback("128.0.0.1"));
    assert_true(ip_loopback("::1"));
    assert_true(ip_loopback("::1/128"));
    assert_false(ip_loopback("::1/127"));
    assert_false(ip_loopback("::"));
    assert_false(ip_loopback("::2"));
    assert_false(ip_loopback("1::1"));
    assert_false(ip_loopback("::ffff:7f00:1")); /* IPv4-mapped is still IPv6 */
}

static void test_ip_multicast(void **state)
{
    assert_true(ip_multicast("224.0.0.1"));
    assert_true(ip_multicast("239.255.255.255"));
    assert_true(ip_multicast("224.0.0.0/4"));
    assert_true(ip_multicast("230.1.2.3/16"));
    assert_false(ip_multicast("224.0.0.0/3"));
    assert_false(ip_multicast("223.255.255.255"));
    assert_false(ip_multicast("240.0.0.0"));
    assert_false(ip_multicast("255.255.255.255"));
    assert_true(ip_multicast("ff00::"));
    assert_true(ip_multicast("ff02::1"));
    assert_true(ip_multicast("ff00::/8"));
    assert_true(ip_multicast("ffff::/16"));
    assert_false(ip_multicast("ff00::/7"));
    assert_false(ip_multicast("fe00::"));
    assert_false(ip_multicast("::"));
}

static void test_ip_in_range(void **state)
{
    assert_true(ip_in_range("10.1.2.3", "10.0.0.0/8"));
    assert_true(ip_in_range("10.0.0.0/8", "10.1.2.3/8"));
    assert_true(ip_in_range("10.0.0.0/8", "10.0.0.0/8"));
    assert_true(ip_in_range("10.0.0.1/8", "10.0.0.0/8"));
    assert_true(ip_in_range("10.0.0.0/8", "10.0.0.1/8"));
    assert_false(ip_in_range("10.0.0.0/7", "10.0.0.0/8"));
    assert_true(ip_in_range("10.0.0.0/8", "10.0.0.0/7"));
    assert_false(ip_in_range("11.0.0.0", "10.0.0.0/8"));
    assert_true(ip_in_range("10.0.0.128/25", "10.0.0.0/24"));
    assert_false(ip_in_range("10.0.1.0/25", "10.0.0.0/24"));
    assert_false(ip_in_range("128.0.0.0", "0.0.0.0/1"));
    assert_true(ip_in_range("127.255.255.255", "0.0.0.0/1"));
    assert_true(ip_in_range("0.0.0.0/0", "1.2.3.4/0"));
    assert_true(ip_in_range("1.2.3.4", "1.2.3.4"));
    assert_false(ip_in_range("1.2.3.5", "1.2.3.4"));
    assert_false(ip_in_range("1.2.3.4/31", "1.2.3.4"));
    assert_true(ip_in_range("1.2.3.4", "1.2.3.5/31"));
    assert_true(ip_in_range("::1", "::/0"));
    assert_true(ip_in_range("2001:db8::1", "2001:db8::/32"));
    assert_false(ip_in_range("2001:db9::1", "2001:db8::/32"));
    assert_false(ip_in_range("2001:db8::/31", "2001:db8::/32"));
    assert_true(ip_in_range("2001:db8:8000::/33", "2001:db8::/32"));
    assert_true(ip_in_range("::1", "::1"));
    assert_false(ip_in_range("::1", "::2"));
    assert_true(ip_in_range("::3", "::2/127"));
    assert_false(ip_in_range("::4", "::2/127"));
    /* Different families are never in each other's range. */
    assert_false(ip_in_range("1.2.3.4", "::/0"));
    assert_false(ip_in_range("::", "0.0.0.0/0"));
    assert_false(ip_in_range("::102:304", "1.2.3.4"));
}

static void test_ip_equal_compare(void **state)
{
    assert_false(ip_equal("10.0.0.1/8", "10.0.0.0/8"));
    assert_true(ip_equal("10.0.0.1/8", "10.0.0.1/8"));
    assert_true(ip_equal("1.2.3.4", "1.2.3.4/32"));
    assert_true(ip_equal("::1", "0:0:0:0:0:0:0:1"));
    assert_true(ip_equal("::FFFF", "::ffff"));
    assert_true(ip_equal("::", "::/128"));
    assert_false(ip_equal("::", "::/0"));
    assert_false(ip_equal("1.2.3.4", "::102:304"));
    assert_false(ip_equal("0.0.0.0", "::"));
    assert_true(ip_compare("255.255.255.255", "::") < 0);
    assert_true(ip_compare("::", "1.2.3.4") > 0);
    assert_true(ip_compare("1.2.3.4", "1.2.3.5") < 0);
    assert_true(ip_compare("1.2.3.4/8", "1.2.3.4/9") < 0);
    assert_true(ip_compare("1.2.3.4/9", "1.2.3.3/32") > 0);
    assert_true(ip_compare("::1", "::2") < 0);
    assert_true(ip_compare("ff::", "::ff") > 0);
    assert_int_equal(ip_compare("::1", "::1/128"), 0);
}

static void test_ip_format(void **state)
{
    check_ip_format("10.0.0.1/8", "10.0.0.1/8");
    check_ip_format("0.0.0.0", "0.0.0.0/32");
    check_ip_format("255.255.255.255/0", "255.255.255.255/0");
    check_ip_format("::1", "::1/128");
    check_ip_format("::", "::/128");
    check_ip_format("::/0", "::/0");
    check_ip_format("1::", "1::/128");
    check_ip_format("2001:DB8:0:0:0:0:0:1", "2001:db8::1/128");
    check_ip_format("1:0:0:2:0:0:0:3", "1:0:0:2::3/128");
    check_ip_format("1:0:0:2:0:0:3:4", "1::2:0:0:3:4/128"); /* first of equal runs */
    check_ip_format("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0/128"); /* one zero: no `::` */
    check_ip_format("0:1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7/128");
    check_ip_format("ABCD:EF01:2345:6789:ABCD:EF01:2345:6789/128",
                    "abcd:ef01:2345:6789:abcd:ef01:2345:6789/128");
    check_ip_format("::ffff:ff00:1", "::ffff:ff00:1/128");
    char tiny[5];
    dw_ipaddr ip = parse_ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128");
    dw_ip_format(&ip, tiny, sizeof tiny);
    assert_string_equal(tiny, "ffff");
}

/* ---- like ---- */

static void test_like_basics(void **state)
{
    /* Empty pattern: one empty segment, matches only the empty string. */
    assert_true(like("", ""));
    assert_false(like("a", ""));
    /* "*" and "**" match anything. */
    assert_true(like("", "*"));
    assert_true(like("anything at all", "*"));
    assert_true(like("", "**"));
    assert_true(like("xyz", "**"));
    assert_true(like("xyz", "***"));
    /* Literals. */
    assert_true(like("abc", "abc"));
    assert_false(like("abcd", "abc"));
    assert_false(like("ab", "abc"));
    assert_false(like("ABC", "abc"));
    /* Leading, trailing and middle wildcards. */
    assert_true(like("hello", "*llo"));
    assert_true(like("llo", "*llo"));
    assert_false(like("hellO", "*llo"));
    assert_true(like("hello", "he*"));
    assert_true(like("he", "he*"));
    assert_false(like("h", "he*"));
    assert_true(like("hello", "h*o"));
    assert_true(like("ho", "h*o"));
    assert_false(like("h", "h*o"));
    assert_false(like("o", "h*o"));
    assert_true(like("hello world", "*lo w*"));
    assert_false(like("hello world", "*low*"));
    assert_true(like("abc", "a*b*c"));
    assert_true(like("aXXbYYc", "a*b*c"));
    assert_false(like("acb", "a*b*c"));
    assert_true(like("abc", "*a*b*c*"));
    assert_true(like("xaxbxcx", "*a*b*c*"));
    assert_false(like("xcxbxax", "*a*b*c*"));
    /* Prefix and suffix must not overlap. */
    assert_false(like("a", "a*a"));
    assert_true(like("aa", "a*a"));
    assert_true(like("aba", "a*a"));
    assert_false(like("aba", "ab*ba"));
    assert_true(like("abba", "ab*ba"));
    /* Middle segments must not eat into the suffix. */
    assert_false(like("abc", "*bc*c"));
    assert_true(like("abcc", "*bc*c"));
    assert_true(like("abab", "*ab*ab"));
    assert_false(like("aa", "*a*a*a*"));
    assert_true(like("aaa", "*a*a*a*"));
    assert_true(like("mississippi", "m*iss*ppi"));
    assert_true(like("mississippi", "*ss*ss*"));
    assert_false(like("mississippi", "*ss*ss*ss*"));
    /* A middle segment is found with memchr + compare up to 16 bytes, memmem beyond: at the last
     * start before the suffix, after false starts on its first byte, at 16 and 17 bytes. */
    assert_true(like("xxxabcz", "x*abc*z"));
    assert_false(like("xxxabz", "x*abc*z"));
    assert_true(like("aaaaaab", "*aab*"));
    assert_true(like("-0123456789abcdef-", "-*0123456789abcdef*-"));
    assert_false(like("-0123456789abcdeX-", "-*0123456789abcdef*-"));
    assert_true(like("--0123456789abcdefg-", "-*0123456789abcdefg*-"));
    assert_false(like("--0123456789abcdef-", "-*0123456789abcdefg*-"));
    assert_true(like("~/project/.env.local", "*/.env.*"));
    assert_false(like("~/project/src/main.c", "*/.env.*"));
}

static void test_like_literal_star_and_nul(void **state)
{
    /* A literal `*` lives inside a segment (from the escape `\*`). */
    dw_str star_seg[] = {{"a*b", 3}};
    dw_like_pattern star_literal = {1, star_seg};
    assert_true(dw_like_match(&star_literal, "a*b", 3));
    assert_false(dw_like_match(&star_literal, "axb", 3));
    dw_str star_then_wild[] = {{"*", 1}, {"", 0}};
    dw_like_pattern starts_with_star = {2, star_then_wild};
    assert_true(dw_like_match(&starts_with_star, "*abc", 4));
    assert_false(dw_like_match(&starts_with_star, "abc", 3));

    /* NUL bytes are ordinary characters. */
    dw_str around_nul[] = {{"a", 1}, {"b", 1}};
    dw_like_pattern a_star_b = {2, around_nul};
    assert_true(dw_like_match(&a_star_b, "a\0b", 3));
    assert_true(dw_like_match(&a_star_b, "ab", 2));
    assert_false(dw_like_match(&a_star_b, "a\0c", 3));
    dw_str nul_seg[] = {{"a\0b", 3}};
    dw_like_pattern nul_literal = {1, nul_seg};
    assert_true(dw_like_match(&nul_literal, "a\0b", 3));
    assert_false(dw_like_match(&nul_literal, "a", 1));
    assert_false(dw_like_match(&nul_literal, "a\0c", 3));
    dw_str nul_middle[] = {{"", 0}, {"\0", 1}, {"", 0}};
    dw_like_pattern contains_nul = {3, nul_middle};
    assert_true(dw_like_match(&contains_nul, "xy\0z", 4));
    assert_false(dw_like_match(&contains_nul, "xyz", 3));

    /* The empty string may arrive as NULL; empty segments may have NULL. */
    dw_str empty_segs[] = {{NULL, 0}, {NULL, 0}};
    dw_like_pattern any = {2, empty_segs};
    assert_true(dw_like_match(&any, NULL, 0));
    dw_like_pattern only_empty = {1, empty_segs};
    assert_true(dw_like_match(&only_empty, NULL, 0));
    assert_false(dw_like_match(&only_empty, "x", 1));
    dw_like_pattern no_segments = {0, NULL};
    assert_false(dw_like_match(&no_segments, "x", 1));
}

static void test_like_utf8(void **state)
{
    assert_true(like("h\xc3\xa9llo", "h*o"));            /* héllo */
    assert_true(like("h\xc3\xa9llo", "h\xc3\xa9*"));
    assert_false(like("hello", "h\xc3\xa9*"));
    assert_true(like("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "*\xe6\x9c\xac*")); /* 日本語 */
    assert_false(like("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "*\xe8\xaa\x9e*\xe6\x9c\xac*"));
    assert_true(like("\xf0\x9f\x98\x80 smile", "\xf0\x9f\x98\x80*e")); /* emoji */
}

static void test_like_no_backtracking_blowup(void **state)
{
    /* 200k 'a's against "*a*a*...*a*b": exponential backtracking would never
     * finish; the greedy scan answers at once. */
    enum { TEXT_LEN = 200000, SEGMENTS = 60 };
    static char text[TEXT_LEN];
    memset(text, 'a', sizeof text);
    dw_str segs[SEGMENTS];
    segs[0] = (dw_str){"", 0};
    for (int i = 1; i < SEGMENTS - 1; i++)
        segs[i] = (dw_str){"a", 1};
    segs[SEGMENTS - 1] = (dw_str){"b", 1};
    dw_like_pattern p = {SEGMENTS, segs};
    clock_t start = clock();
    assert_false(dw_like_match(&p, text, sizeof text));
    text[TEXT_LEN - 1] = 'b';
    assert_true(dw_like_match(&p, text, sizeof text));
    segs[SEGMENTS - 1] = (dw_str){"", 0};
    segs[SEGMENTS - 2] = (dw_str){"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 31};
    assert_true(dw_like_match(&p, text, sizeof text));
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    assert_true(seconds < 5.0);
}

/* Reference matcher: dynamic programming over (pattern element, text
 * position), where a pattern element is a byte or a wildcard. */
static bool reference_like(const char *pattern, const char *text)
{
    size_t pn = strlen(pattern), tn = strlen(text);
    bool table[16][16] = {{false}}; /* table[i][j]: pattern[i..] matches text[j..] */
    assert_true(pn < 16 && tn < 16);
    table[pn][tn] = true;
    for (size_t i = pn; i-- > 0;) {
        for (size_t j = tn + 1; j-- > 0;) {
            if (pattern[i] == '*')
                table[i][j] = table[i + 1][j] || (j < tn && table[i][j + 1]);
            else
                table[i][j] = j < tn && pattern[i] == text[j] && table[i + 1][j + 1];
        }
    }
    return table[0][0];
}

static void test_like_against_reference(void **state)
{
    uint32_t seed = 12345; /* deterministic LCG */
    for (int round = 0; round < 200000; round++) {
        char pattern[10], text[12];
        seed = seed * 1103515245u + 12345u;
        size_t pn = (seed >> 16) % 9;
        seed = seed * 1103515245u + 12345u;
        size_t tn = (seed >> 16) % 11;
        for (size_t i = 0; i < pn; i++) {
            seed = seed * 1103515245u + 12345u;
            pattern[i] = "ab**"[(seed >> 16) % 4];
        }
        pattern[pn] = '\0';
        for (size_t i = 0; i < tn; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = "ab"[(seed >> 16) % 2];
        }
        text[tn] = '\0';
        if (like(text, pattern) != reference_like(pattern, text))
            fail_msg("\"%s\" like \"%s\": got %d", text, pattern, like(text, pattern));
    }
}

/* Reference containment: bit by bit over the shorter prefix. */
static bool reference_in_range(const dw_ipaddr *a, const dw_ipaddr *r)
{
    if (a->v6 != r->v6 || a->prefix < r->prefix)
        return false;
    for (unsigned bit = 0; bit < r->prefix; bit++) {
        unsigned mask = 0x80u >> (bit % 8);
        if ((a->addr[bit / 8] & mask) != (r->addr[bit / 8] & mask))
            return false;
    }
    return true;
}

static void test_ip_in_range_against_reference(void **state)
{
    uint32_t seed = 777;
    for (int round = 0; round < 200000; round++) {
        dw_ipaddr ip[2];
        memset(ip, 0, sizeof ip);
        seed = seed * 1103515245u + 12345u;
        uint8_t v6 = (seed >> 16) & 1;
        for (int k = 0; k < 2; k++) {
            ip[k].v6 = v6;
            /* Few distinct bytes so that ranges often nest. */
            for (int b = 0; b < (v6 ? 16 : 4); b++) {
                seed = seed * 1103515245u + 12345u;
                ip[k].addr[b] = (uint8_t)((seed >> 16) % 3 == 0 ? 0x80 : 0);
            }
            seed = seed * 1103515245u + 12345u;
            ip[k].prefix = (uint8_t)((seed >> 16) % (v6 ? 129 : 33));
        }
        assert_int_equal(dw_ip_in_range(&ip[0], &ip[1]), reference_in_range(&ip[0], &ip[1]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decimal_parse_valid),
        cmocka_unit_test(test_decimal_parse_invalid),
        cmocka_unit_test(test_decimal_format),
        cmocka_unit_test(test_ip_parse_ipv4),
        cmocka_unit_test(test_ip_parse_ipv6),
        cmocka_unit_test(test_ip_loopback),
        cmocka_unit_test(test_ip_multicast),
        cmocka_unit_test(test_ip_in_range),
        cmocka_unit_test(test_ip_equal_compare),
        cmocka_unit_test(test_ip_format),
        cmocka_unit_test(test_like_basics),
        cmocka_unit_test(test_like_literal_star_and_nul),
        cmocka_unit_test(test_like_utf8),
        cmocka_unit_test(test_like_no_backtracking_blowup),
        cmocka_unit_test(test_like_against_reference),
        cmocka_unit_test(test_ip_in_range_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
