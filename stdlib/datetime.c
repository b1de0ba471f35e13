/* datetime.c - Cedar's datetime and duration extension types (dogwood.md
 * §4.8, §4.9).  Both are i64 milliseconds; datetimes count from the Unix
 * epoch in UTC on the proleptic Gregorian calendar. */
#include "ext.h"

#include <stdio.h>
#include <string.h>

#define DW_MS_PER_SECOND INT64_C(1000)
#define DW_MS_PER_MINUTE INT64_C(60000)
#define DW_MS_PER_HOUR   INT64_C(3600000)
#define DW_MS_PER_DAY    INT64_C(86400000)

/* ---- datetime ---- */

/* Reads exactly `count` ASCII digits at s[pos..]; the caller has checked
 * that they are in bounds. */
static bool read_fixed_digits(const char *s, size_t pos, size_t count, unsigned *value)
{
    unsigned v = 0;
    for (size_t i = pos; i < pos + count; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *value = v;
    return true;
}

static bool is_leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t year, unsigned month)
{
    static const unsigned char lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap_year(year) ? 29 : lengths[month - 1];
}

/* Days from 1970-01-01 to y-m-d (H. Hinnant's days_from_civil), valid for
 * any year whose day count fits comfortably in i64. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t year_of_era = y - era * 400;
    int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;
}

/* Inverse of days_from_civil. */
void dw_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t day_of_era = days - era * 146097;
    int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    int64_t mp = (5 * day_of_year + 2) / 153;
    *d = (unsigned)(day_of_year - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = year_of_era + era * 400 + (*m <= 2);
}

bool dw_datetime_parse(const char *s, size_t n, int64_t *out_ms)
{
    unsigned year, month, day;
    if (n < 10 || s[4] != '-' || s[7] != '-' ||
        !read_fixed_digits(s, 0, 4, &year) || !read_fixed_digits(s, 5, 2, &month) ||
        !read_fixed_digits(s, 8, 2, &day))
        return false;
    unsigned hour = 0, minute = 0, second = 0, milli = 0;
    int64_t offset_seconds = 0;
    if (n > 10) {
        if (n < 20 || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
            !read_fixed_digits(s, 11, 2, &hour) || !read_fixed_digits(s, 14, 2, &minute) ||
            !read_fixed_digits(s, 17, 2, &second))
            return false;
        size_t pos = 19;
        if (s[pos] == '.') {
            if (n < pos + 4 || !read_fixed_digits(s, pos + 1, 3, &milli))
                return false;
            pos += 4;
        }
        if (pos < n && s[pos] == 'Z') {
            pos++;
        } else if (pos < n && (s[pos] == '+' || s[pos] == '-')) {
            unsigned offset_hours, offset_minutes;
            if (n < pos + 5 || !read_fixed_digits(s, pos + 1, 2, &offset_hours) ||
                !read_fixed_digits(s, pos + 3, 2, &offset_minutes))
                return false;
            if (offset_hours >= 24 || offset_minutes >= 60)
                return false;
            offset_seconds = (int64_t)offset_hours * 3600 + offset_minutes * 60;
            if (s[pos] == '-')
                offset_seconds = -offset_seconds;
            pos += 5;
        } else {
            return false;
        }
        if (pos != n)
            return false;
    }
    /* A leap second (:60) is refused, as Cedar cannot tell a real one. */
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour > 23 || minute > 59 || second > 59)
        return false;
    /* The text is local time; the instant is local time minus the offset.
     * Four-digit years keep every term far from i64 limits. */
    *out_ms = days_from_civil(year, month, day) * DW_MS_PER_DAY + hour * DW_MS_PER_HOUR +
              minute * DW_MS_PER_MINUTE + second * DW_MS_PER_SECOND + milli -
              offset_seconds * DW_MS_PER_SECOND;
    return true;
}

bool dw_datetime_offset(int64_t dt, int64_t dur, int64_t *out)
{
    int64_t sum;
    if (__builtin_add_overflow(dt, dur, &sum))
        return false;
    *out = sum;
    return true;
}

bool dw_datetime_duration_since(int64_t a, int64_t b, int64_t *out)
{
    int64_t difference;
    if (__builtin_sub_overflow(a, b, &difference))
        return false;
    *out = difference;
    return true;
}

bool dw_datetime_to_date(int64_t dt, int64_t *out)
{
    int64_t days = dt / DW_MS_PER_DAY;
    /* C division truncates; step back a day for instants before 1970 that
     * are not already at midnight.  Only that case can overflow. */
    if (dt % DW_MS_PER_DAY < 0)
        days--;
    int64_t midnight;
    if (__builtin_mul_overflow(days, DW_MS_PER_DAY, &midnight))
        return false;
    *out = midnight;
    return true;
}

int64_t dw_datetime_to_time(int64_t dt)
{
    int64_t remainder = dt % DW_MS_PER_DAY;
    return remainder < 0 ? remainder + DW_MS_PER_DAY : remainder;
}

void dw_datetime_format(int64_t ms, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    int64_t days = ms / DW_MS_PER_DAY;
    int64_t time = ms % DW_MS_PER_DAY;
    if (time < 0) {
        days--;
        time += DW_MS_PER_DAY;
    }
    int64_t year;
    unsigned month, day;
    dw_civil_from_days(days, &year, &month, &day);
    unsigned hour = (unsigned)(time / DW_MS_PER_HOUR);
    unsigned minute = (unsigned)(time % DW_MS_PER_HOUR / DW_MS_PER_MINUTE);
    unsigned second = (unsigned)(time % DW_MS_PER_MINUTE / DW_MS_PER_SECOND);
    unsigned milli = (unsigned)(time % DW_MS_PER_SECOND);
    /* Years before 0000 print as "-0001"; the year's magnitude never nears
     * the i64 limits, since it is a day count divided by 365. */
    const char *year_sign = year < 0 ? "-" : "";
    long long year_digits = year < 0 ? -(long long)year : (long long)year;
    if (milli != 0)
        snprintf(buf, cap, "%s%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", year_sign, year_digits,
                 month, day, hour, minute, second, milli);
    else
        snprintf(buf, cap, "%s%04lld-%02u-%02uT%02u:%02u:%02uZ", year_sign, year_digits, month,
                 day, hour, minute, second);
}

/* ---- duration ---- */

enum dw_duration_unit { DW_UNIT_D, DW_UNIT_H, DW_UNIT_M, DW_UNIT_S, DW_UNIT_MS, DW_UNIT_COUNT };

static const int64_t dw_unit_ms[DW_UNIT_COUNT] = {
    DW_MS_PER_DAY, DW_MS_PER_HOUR, DW_MS_PER_MINUTE, DW_MS_PER_SECOND, 1,
};
static const char *const dw_unit_name[DW_UNIT_COUNT] = {"d", "h", "m", "s", "ms"};

bool dw_duration_parse(const char *s, size_t n, int64_t *out_ms)
{
    size_t pos = 0;
    bool negative = false;
    if (pos < n && s[pos] == '-') {
        negative = true;
        pos++;
    }
    if (pos == n)
        return false;
    /* The magnitude is summed unsigned: every term has the sign of the whole
     * value, so the sum overflows iff some partial sum does, and a negative
     * value may reach the i64 minimum ("-9223372036854775808ms" is valid). */
    uint64_t magnitude = 0;
    int next_unit = DW_UNIT_D;
    while (pos < n) {
        size_t digits_start = pos;
        uint64_t quantity = 0;
        bool quantity_overflow = false;
        while (pos < n && s[pos] >= '0' && s[pos] <= '9') {
            quantity_overflow |= __builtin_mul_overflow(quantity, 10u, &quantity);
            quantity_overflow |= __builtin_add_overflow(quantity, (uint64_t)(s[pos] - '0'), &quantity);
            pos++;
        }
        if (pos == digits_start || pos == n)
            return false;
        int unit;
        switch (s[pos]) {
        case 'd': unit = DW_UNIT_D; break;
        case 'h': unit = DW_UNIT_H; break;
        case 's': unit = DW_UNIT_S; break;
        case 'm': unit = pos + 1 < n && s[pos + 1] == 's' ? DW_UNIT_MS : DW_UNIT_M; break;
        default: return false;
        }
        if (unit < next_unit)
            return false;
        next_unit = unit + 1;
        pos += unit == DW_UNIT_MS ? 2 : 1;
        uint64_t term;
        if (quantity_overflow ||
            __builtin_mul_overflow(quantity, (uint64_t)dw_unit_ms[unit], &term) ||
            __builtin_add_overflow(magnitude, term, &magnitude))
            return false;
    }
    return dw_int64_from_sign_magnitude(negative, magnitude, out_ms);
}

int64_t dw_duration_to(int64_t ms, int64_t unit_ms)
{
    /* Cedar only divides by positive unit sizes; anything else would be a
     * caller bug, answered with 0 rather than a trap. */
    if (unit_ms <= 0)
        return 0;
    return ms / unit_ms;
}

void dw_duration_format(int64_t ms, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    if (ms == 0) {
        snprintf(buf, cap, "0ms");
        return;
    }
    uint64_t rest = ms < 0 ? 0u - (uint64_t)ms : (uint64_t)ms;
    size_t used = 0;
    if (ms < 0)
        used += (size_t)snprintf(buf, cap, "-");
    for (int unit = DW_UNIT_D; unit < DW_UNIT_COUNT && used < cap; unit++) {
        uint64_t quantity = rest / (uint64_t)dw_unit_ms[unit];
        rest %= (uint64_t)dw_unit_ms[unit];
        if (quantity == 0)
            continue;
        int written = snprintf(buf + used, cap - used, "%llu%s", (unsigned long long)quantity,
                               dw_unit_name[unit]);
        used += written > 0 ? (size_t)written : 0;
    }
}

/* Box event times (box.md 15.2): see ext.h. */
bool dw_rfc3339_parse_ns(const char *s, size_t n, int64_t *ns)
{
    if (n < 20 || s[n - 1] != 'Z') return false;
    size_t base = 19;
    int64_t ms;
    char buf[32];
    memcpy(buf, s, base);
    buf[base] = 'Z';
    if (!dw_datetime_parse(buf, base + 1, &ms)) return false;
    int64_t frac = 0;
    size_t digits = 0;
    if (n > 20) {
        if (s[base] != '.') return false;
        for (size_t i = base + 1; i < n - 1; i++) {
            if (s[i] < '0' || s[i] > '9' || ++digits > 9) return false;
            frac = frac * 10 + (s[i] - '0');
        }
        if (!digits) return false;
        for (size_t d = digits; d < 9; d++) frac *= 10;
    }
    return !__builtin_mul_overflow(ms, 1000000, ns) && !__builtin_add_overflow(*ns, frac, ns);
}
