/* test_ext_time.c - unit tests for stdlib/ext.h's datetime and duration
 * (decimal, ipaddr and like are tests/unit/test_ext.c).  Expected values
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

#define DT_OK(lit, expected) ext_check_ok("datetime", dw_datetime_parse, 777, TEXT(lit), (expected), __LINE__)
#define DT_BAD(lit) ext_check_bad("datetime", dw_datetime_parse, 777, TEXT(lit), __LINE__)

#define DUR_OK(lit, expected) ext_check_ok("duration", dw_duration_parse, 777, TEXT(lit), (expected), __LINE__)
#define DUR_BAD(lit) ext_check_bad("duration", dw_duration_parse, 777, TEXT(lit), __LINE__)

#define MS_DAY INT64_C(86400000)
#define MS_HOUR INT64_C(3600000)
#define MS_MINUTE INT64_C(60000)


/* ---- datetime ---- */

static void test_datetime_parse_valid(void **state)
{
    DT_OK("1970-01-01", 0);
    DT_OK("1970-01-01T00:00:00Z", 0);
    DT_OK("1970-01-01T00:00:00.000Z", 0);
    DT_OK("1970-01-01T00:00:00+0000", 0);
    DT_OK("1970-01-01T00:00:00-0000", 0);
    DT_OK("1970-01-01T00:00:00.001Z", 1);
    DT_OK("1969-12-31T23:59:59.999Z", -1);
    DT_OK("2024-10-15", INT64_C(1728950400000));
    DT_OK("2024-10-15T11:38:02Z", INT64_C(1728950400000) + 11 * MS_HOUR + 38 * MS_MINUTE + 2000);
    DT_OK("2024-10-15T11:38:02.101Z",
          INT64_C(1728950400000) + 11 * MS_HOUR + 38 * MS_MINUTE + 2101);
    /* The text is local time; UTC is local time minus the offset. */
    DT_OK("2024-10-15T11:38:02.101+1134", INT64_C(1728950642101));
    DT_OK("2024-10-15T11:38:02.101-1134", INT64_C(1729033922101));
    DT_OK("2024-10-15T11:38:02+1134", INT64_C(1728950642000));
    DT_OK("2024-10-15T23:59:00+2359", INT64_C(1728950400000));
    DT_OK("2024-10-15T00:00:00-2359", INT64_C(1728950400000) + 23 * MS_HOUR + 59 * MS_MINUTE);
    DT_OK("1970-01-01T00:00:00+0100", -MS_HOUR);
    DT_OK("2024-02-29", INT64_C(1709164800000));
    DT_OK("2000-02-29", INT64_C(951782400000));
    DT_OK("0001-01-01", INT64_C(-62135596800000));
    DT_OK("0000-01-01", INT64_C(-62167219200000)); /* year 0 exists, and is leap */
    DT_OK("0000-02-29", INT64_C(-62167219200000) + 59 * MS_DAY);
    DT_OK("0000-01-01T00:00:00+2359", INT64_C(-62167219200000) - 23 * MS_HOUR - 59 * MS_MINUTE);
    DT_OK("9999-12-31T23:59:59.999Z", INT64_C(253402300799999));
    DT_OK("9999-12-31T23:59:59.999-2359", INT64_C(253402300799999) + 23 * MS_HOUR + 59 * MS_MINUTE);
    DT_OK("2023-12-31T23:59:59Z", INT64_C(1704067199000));
}

static void test_datetime_parse_invalid(void **state)
{
    DT_BAD("2023-02-29");
    DT_BAD("1900-02-29");
    DT_BAD("2024-02-30");
    DT_BAD("2024-04-31");
    DT_BAD("2024-13-01");
    DT_BAD("2024-00-01");
    DT_BAD("2024-01-00");
    DT_BAD("2024-01-32");
    DT_BAD("2024-01-99");
    DT_BAD("10000-01-01");
    DT_BAD("999-01-01");
    DT_BAD("+2024-01-01");
    DT_BAD("-2024-01-01");
    DT_BAD("2024-1-01");
    DT_BAD("2024-01-1");
    DT_BAD("2024/01/01");
    DT_BAD("20240101");
    DT_BAD("");
    DT_BAD("a");
    DT_BAD("-");
    DT_BAD("11-12-13");
    DT_BAD("2024-10-15Z");
    DT_BAD("2024-01-01T");
    DT_BAD("2024-01-01T01:02");
    DT_BAD("2024-01-01T01:02:03");
    DT_BAD("2024-01-01T00:00:00");
    DT_BAD("2024-01-01T1:02:03Z");
    DT_BAD("2024-01-01T01::02:03");
    DT_BAD("2024-01-01 00:00:00Z");
    DT_BAD("2024-01-01t00:00:00Z");
    DT_BAD("2024-01-01T00:00:00z");
    DT_BAD("2024-01-01T24:00:00Z");
    DT_BAD("2024-01-01T31:02:03Z");
    DT_BAD("2024-01-01T01:60:03Z");
    DT_BAD("2016-12-31T23:59:60Z");
    DT_BAD("2016-12-31T23:59:60.000Z");
    DT_BAD("2016-12-31T23:59:61Z");
    DT_BAD("2024-01-01T00:00:00ZZ");
    DT_BAD("2024-01-01T00:00:00.001ZZ");
    DT_BAD("2024-01-01T00:00:00.01Z");
    DT_BAD("2024-01-01T00:00:00.0001Z");
    DT_BAD("2024-01-01T00:00:00.Z");
    DT_BAD("2024-01-01T00:00:00.abcZ");
    DT_BAD("2024-01-01T00:00:00x001Z");
    DT_BAD("2024-01-01T00:00:00.001");
    DT_BAD("2024-01-01T00:00:00+2400");
    DT_BAD("2024-01-01T00:00:00-2400");
    DT_BAD("2024-01-01T00:00:00+0060");
    DT_BAD("2024-01-01T00:00:00+9999");
    DT_BAD("2024-01-01T00:00:00+01:00");
    DT_BAD("2024-01-01T00:00:00+01");
    DT_BAD("2024-01-01T00:00:00+010");
    DT_BAD("2024-01-01T00:00:00+01000");
    DT_BAD("2024-01-01T00:00:00 +0100");
    DT_BAD("2024-01-01T00:00:00Z+0100");
    DT_BAD("2024-01-01T00:00:00.001+0000Z");
    DT_BAD("2024-01-01T00:00:00\xe2\x9e\x95" "0000"); /* U+2795 HEAVY PLUS SIGN */
    DT_BAD("2024-01-01\0");
    DT_BAD("2024-01-01T00:00:00Z\0");
    DT_BAD("2024-01-01T00:00:00\0");
    DT_BAD(" 2024-01-01");
    DT_BAD("2024-01-01 ");
    int64_t v = 5;
    assert_false(dw_datetime_parse(NULL, 0, &v));
    assert_int_equal(v, 5);
}

static void test_datetime_arithmetic(void **state)
{
    int64_t out = 42;
    assert_true(dw_datetime_offset(1000, -3000, &out));
    assert_int_equal(out, -2000);
    assert_true(dw_datetime_offset(INT64_MAX, 0, &out));
    assert_int_equal(out, INT64_MAX);
    out = 42;
    assert_false(dw_datetime_offset(INT64_MAX, 1, &out));
    assert_false(dw_datetime_offset(INT64_MIN, -1, &out));
    assert_int_equal(out, 42);
    assert_true(dw_datetime_offset(INT64_MIN, INT64_MAX, &out));
    assert_int_equal(out, -1);

    assert_true(dw_datetime_duration_since(5000, 7000, &out));
    assert_int_equal(out, -2000);
    out = 42;
    assert_false(dw_datetime_duration_since(INT64_MIN, 1, &out));
    assert_false(dw_datetime_duration_since(INT64_MAX, -1, &out));
    assert_false(dw_datetime_duration_since(0, INT64_MIN, &out));
    assert_int_equal(out, 42);
    assert_true(dw_datetime_duration_since(-1, INT64_MIN, &out));
    assert_int_equal(out, INT64_MAX);
}

static void test_datetime_to_date_time(void **state)
{
    int64_t out = 42;
    assert_true(dw_datetime_to_date(0, &out));
    assert_int_equal(out, 0);
    assert_true(dw_datetime_to_date(MS_DAY - 1, &out));
    assert_int_equal(out, 0);
    assert_true(dw_datetime_to_date(MS_DAY, &out));
    assert_int_equal(out, MS_DAY);
    /* Before 1970, round toward negative infinity. */
    assert_true(dw_datetime_to_date(-1, &out));
    assert_int_equal(out, -MS_DAY);
    assert_true(dw_datetime_to_date(-MS_DAY, &out));
    assert_int_equal(out, -MS_DAY);
    assert_true(dw_datetime_to_date(-MS_DAY - 1, &out));
    assert_int_equal(out, -2 * MS_DAY);
    assert_true(dw_datetime_to_date(INT64_C(1728950642101), &out));
    assert_int_equal(out, INT64_C(1728950400000));
    assert_true(dw_datetime_to_date(INT64_MAX, &out));
    assert_int_equal(out, INT64_MAX / MS_DAY * MS_DAY);
    /* The midnight before the i64 minimum is not representable. */
    out = 42;
    assert_false(dw_datetime_to_date(INT64_MIN, &out));
    assert_int_equal(out, 42);
    int64_t lowest_midnight = (INT64_MIN / MS_DAY) * MS_DAY;
    assert_true(dw_datetime_to_date(lowest_midnight, &out));
    assert_int_equal(out, lowest_midnight);
    assert_false(dw_datetime_to_date(lowest_midnight - 1, &out));

    assert_int_equal(dw_datetime_to_time(0), 0);
    assert_int_equal(dw_datetime_to_time(MS_DAY - 1), MS_DAY - 1);
    assert_int_equal(dw_datetime_to_time(MS_DAY), 0);
    assert_int_equal(dw_datetime_to_time(-1), MS_DAY - 1);
    assert_int_equal(dw_datetime_to_time(-MS_DAY), 0);
    assert_int_equal(dw_datetime_to_time(INT64_C(1728950642101)), 242101);
    assert_int_equal(dw_datetime_to_time(INT64_MIN), INT64_C(60424192));
    assert_int_equal(dw_datetime_to_time(INT64_MAX), INT64_MAX % MS_DAY);
}

static void check_datetime_format(int64_t ms, const char *expected)
{
    char buf[64];
    dw_datetime_format(ms, buf, sizeof buf);
    assert_string_equal(buf, expected);
}

static void test_datetime_format(void **state)
{
    check_datetime_format(0, "1970-01-01T00:00:00Z");
    check_datetime_format(-1, "1969-12-31T23:59:59.999Z");
    check_datetime_format(INT64_C(1728950642101), "2024-10-15T00:04:02.101Z");
    check_datetime_format(INT64_C(-62167219200000), "0000-01-01T00:00:00Z");
    check_datetime_format(INT64_C(253402300799999), "9999-12-31T23:59:59.999Z");
    /* Round trip for instants that parse back. */
    const int64_t samples[] = {0, 1, -1, 951782400000, 1709164800000, -62135596800000,
                               253402300799999, 1704067199000};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char buf[64];
        int64_t back;
        dw_datetime_format(samples[i], buf, sizeof buf);
        assert_true(dw_datetime_parse(buf, strlen(buf), &back));
        assert_int_equal(back, samples[i]);
    }
    check_datetime_format(INT64_C(-62167219200000) - 1, "-0001-12-31T23:59:59.999Z");
    /* Extreme values print without trouble. */
    char buf[64];
    dw_datetime_format(INT64_MIN, buf, sizeof buf);
    assert_string_equal(buf, "-292275055-05-16T16:47:04.192Z");
    dw_datetime_format(INT64_MAX, buf, sizeof buf);
    assert_string_equal(buf, "292278994-08-17T07:12:55.807Z");
}

/* Cross-check the calendar arithmetic against the C library for every day
 * in a wide span (timegm is a GNU extension, available with _GNU_SOURCE). */
static void test_datetime_calendar_sweep(void **state)
{
    for (int year = 1600; year <= 2400; year++) {
        for (int month = 1; month <= 12; month++) {
            for (int day = 1; day <= 31; day++) {
                char text[48];
                snprintf(text, sizeof text, "%04d-%02d-%02d", year, month, day);
                struct tm tm = {0};
                tm.tm_year = year - 1900;
                tm.tm_mon = month - 1;
                tm.tm_mday = day;
                time_t t = timegm(&tm);
                bool exists = tm.tm_mday == day && tm.tm_mon == month - 1;
                int64_t ms = 0;
                bool parsed = dw_datetime_parse(text, strlen(text), &ms);
                if (parsed != exists)
                    fail_msg("%s: parsed=%d exists=%d", text, parsed, exists);
                if (parsed) {
                    assert_int_equal(ms, (int64_t)t * 1000);
                    char back[64];
                    dw_datetime_format(ms, back, sizeof back);
                    assert_memory_equal(back, text, 10);
                }
            }
        }
    }
}

/* ---- duration ---- */

static void test_duration_parse_valid(void **state)
{
    DUR_OK("1d2h3m4s5ms", MS_DAY + 2 * MS_HOUR + 3 * MS_MINUTE + 4005);
    DUR_OK("-2d", -2 * MS_DAY);
    DUR_OK("1h30m", 90 * MS_MINUTE);
    DUR_OK("-1h30m", -90 * MS_MINUTE); /* the sign covers the whole value */
    DUR_OK("500ms", 500);
    DUR_OK("-500ms", -500);
    DUR_OK("0ms", 0);
    DUR_OK("-0ms", 0);
    DUR_OK("0d", 0);
    DUR_OK("1ms", 1);
    DUR_OK("1s", 1000);
    DUR_OK("1m", MS_MINUTE);
    DUR_OK("1h", MS_HOUR);
    DUR_OK("1d", MS_DAY);
    DUR_OK("1s1ms", 1001);
    DUR_OK("1m1ms", MS_MINUTE + 1);
    DUR_OK("1d1ms", MS_DAY + 1);
    DUR_OK("2h5s", 2 * MS_HOUR + 5000);
    DUR_OK("00001d", MS_DAY);
    DUR_OK("00000000000000000000000000000001ms", 1);
    DUR_OK("9223372036854775807ms", INT64_MAX);
    DUR_OK("-9223372036854775807ms", -INT64_MAX);
    DUR_OK("-9223372036854775808ms", INT64_MIN);
    DUR_OK("-1s9223372036854774808ms", INT64_MIN);
    DUR_OK("106751991167d", INT64_C(106751991167) * MS_DAY);
    DUR_OK("106751991167d7h12m55s807ms", INT64_MAX);
    DUR_OK("-106751991167d7h12m55s808ms", INT64_MIN);
    DUR_OK("9223372036854775s807ms", INT64_MAX);
}

static void test_duration_parse_invalid(void **state)
{
    DUR_BAD("");
    DUR_BAD("-");
    DUR_BAD("--1d");
    DUR_BAD("1");
    DUR_BAD("-1");
    DUR_BAD("d");
    DUR_BAD("ms");
    DUR_BAD("-d");
    DUR_BAD("1h-30m");
    DUR_BAD("+1d");
    DUR_BAD("1m1h");
    DUR_BAD("1ms1s");
    DUR_BAD("1s1m");
    DUR_BAD("1d1d");
    DUR_BAD("1ms1ms");
    DUR_BAD("1m1m");
    DUR_BAD("1D");
    DUR_BAD("1H");
    DUR_BAD("1MS");
    DUR_BAD("1mS");
    DUR_BAD("1us");
    DUR_BAD("1y");
    DUR_BAD("1w");
    DUR_BAD("1.5h");
    DUR_BAD(" 1d");
    DUR_BAD("1d ");
    DUR_BAD("1 d");
    DUR_BAD("1d 2h");
    DUR_BAD("1d2");
    DUR_BAD("1dh");
    DUR_BAD("1msms");
    DUR_BAD("1d\0");
    DUR_BAD("1\0d");
    DUR_BAD("9223372036854775808ms");
    DUR_BAD("-9223372036854775809ms");
    DUR_BAD("18446744073709551616ms"); /* beyond u64 */
    DUR_BAD("99999999999999999999999ms");
    DUR_BAD("106751991168d");
    DUR_BAD("106751991167d7h12m55s808ms");
    DUR_BAD("-106751991167d7h12m55s809ms");
    DUR_BAD("1s9223372036854774808ms");
    DUR_BAD("2562047788015216h");
    DUR_BAD("\xd9\xa1" "d"); /* non-ASCII digit */
    int64_t v = 3;
    assert_false(dw_duration_parse(NULL, 0, &v));
    assert_int_equal(v, 3);
}

static void test_duration_conversions(void **state)
{
    assert_int_equal(dw_duration_to(1500, 1), 1500);
    assert_int_equal(dw_duration_to(1500, 1000), 1);
    assert_int_equal(dw_duration_to(-1500, 1000), -1); /* toward zero */
    assert_int_equal(dw_duration_to(-999, 1000), 0);
    assert_int_equal(dw_duration_to(90 * MS_MINUTE, MS_MINUTE), 90);
    assert_int_equal(dw_duration_to(90 * MS_MINUTE, MS_HOUR), 1);
    assert_int_equal(dw_duration_to(-90 * MS_MINUTE, MS_HOUR), -1);
    assert_int_equal(dw_duration_to(2 * MS_DAY - 1, MS_DAY), 1);
    assert_int_equal(dw_duration_to(-2 * MS_DAY + 1, MS_DAY), -1);
    assert_int_equal(dw_duration_to(INT64_MIN, 1), INT64_MIN);
    assert_int_equal(dw_duration_to(INT64_MIN, MS_DAY), INT64_MIN / MS_DAY);
    assert_int_equal(dw_duration_to(INT64_MAX, 1000), INT64_MAX / 1000);
    /* Cedar chains the divisions (ms -> s -> m -> h -> d); truncating once
     * by the product gives the same answer. */
    const int64_t samples[] = {0, 1, -1, 59999, -59999, 86399999, -86399999, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        int64_t s = samples[i] / 1000, m = s / 60, h = m / 60, d = h / 24;
        assert_int_equal(dw_duration_to(samples[i], 1000), s);
        assert_int_equal(dw_duration_to(samples[i], MS_MINUTE), m);
        assert_int_equal(dw_duration_to(samples[i], MS_HOUR), h);
        assert_int_equal(dw_duration_to(samples[i], MS_DAY), d);
    }
    /* Nonsense units do not trap. */
    assert_int_equal(dw_duration_to(INT64_MIN, -1), 0);
    assert_int_equal(dw_duration_to(5, 0), 0);
}

static void check_duration_format(int64_t ms, const char *expected)
{
    char buf[64];
    dw_duration_format(ms, buf, sizeof buf);
    assert_string_equal(buf, expected);
    int64_t back;
    assert_true(dw_duration_parse(buf, strlen(buf), &back));
    assert_int_equal(back, ms);
}

static void test_duration_format(void **state)
{
    check_duration_format(90 * MS_MINUTE, "1h30m");
    check_duration_format(-500, "-500ms");
    check_duration_format(0, "0ms");
    check_duration_format(MS_DAY + 2 * MS_HOUR + 3 * MS_MINUTE + 4005, "1d2h3m4s5ms");
    check_duration_format(-2 * MS_DAY, "-2d");
    check_duration_format(1001, "1s1ms");
    check_duration_format(INT64_MAX, "106751991167d7h12m55s807ms");
    check_duration_format(INT64_MIN, "-106751991167d7h12m55s808ms");
    char tiny[3];
    dw_duration_format(INT64_MIN, tiny, sizeof tiny);
    assert_string_equal(tiny, "-1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datetime_parse_valid),
        cmocka_unit_test(test_datetime_parse_invalid),
        cmocka_unit_test(test_datetime_arithmetic),
        cmocka_unit_test(test_datetime_to_date_time),
        cmocka_unit_test(test_datetime_format),
        cmocka_unit_test(test_datetime_calendar_sweep),
        cmocka_unit_test(test_duration_parse_valid),
        cmocka_unit_test(test_duration_parse_invalid),
        cmocka_unit_test(test_duration_conversions),
        cmocka_unit_test(test_duration_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
