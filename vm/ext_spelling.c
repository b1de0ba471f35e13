/* ext_spelling.c - see ext_spelling.h.  The text has already parsed, so
 * only its shape is read here. */
#include "ext_spelling.h"
#include <string.h>

static uint32_t datetime_spelling(const char *s, size_t n)
{
    if (n == 10) return 2 + DW_DT_DATE;
    bool ms = n > 19 && s[19] == '.';
    if (s[n - 1] == 'Z') return 2 + (ms ? DW_DT_MS_Z : DW_DT_Z);
    const char *o = s + n - 5;        /* (+|-)hhmm */
    unsigned hhmm = (unsigned)((o[1] - '0') * 1000 + (o[2] - '0') * 100 + (o[3] - '0') * 10 + (o[4] - '0'));
    return 2 + (ms ? DW_DT_MS_OFFSET : DW_DT_OFFSET) + 8 * ((o[0] == '-') + 2 * hhmm);
}

static uint32_t duration_spelling(const char *s, size_t n)
{
    static const char units[] = "dhms";
    unsigned mask = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 'm' && i + 1 < n && s[i + 1] == 's') { mask |= 16; i++; continue; }
        const char *u = s[i] ? strchr(units, s[i]) : NULL;
        if (u) mask |= 1u << (u - units);
    }
    return 2 + mask;
}

uint32_t dw_ext_spelling(dw_vkind k, const char *s, size_t n)
{
    switch (k) {
    case DW_V_DECIMAL: {
        const char *dot = memchr(s, '.', n);
        size_t digits = dot ? n - (size_t)(dot - s) - 1 : 0, ints = dot ? (size_t)(dot - s) - (s[0] == '-') : 0;
        return digits >= 1 && digits <= 4 && ints < 64 ? (uint32_t)(digits | ints << 3) : DW_SPELL_UNKNOWN;
    }
    case DW_V_IPADDR: return memchr(s, '/', n) ? DW_SPELL_IP_PREFIX : DW_SPELL_IP_BARE;
    case DW_V_DATETIME: return n >= 10 ? datetime_spelling(s, n) : DW_SPELL_UNKNOWN;
    case DW_V_DURATION: return duration_spelling(s, n);
    default: return DW_SPELL_UNKNOWN;
    }
}
