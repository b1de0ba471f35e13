/* ext_spelling.h - how an extension value was written, kept in the value's
 * otherwise unused `n` (vm/value.h) so `dwc evaluate` prints it as Cedar
 * does: Cedar shows a constructed value as its constructor call on the
 * argument as given (decimal("1.50"), datetime("2024-01-01T10:00:00+0100"),
 * duration("90m")) and a computed datetime or duration as
 * datetime("1970-01-01").offset(duration("…ms")) / duration("…ms").
 * Equality and order never read it (dw_value_eq / dw_value_cmp compare the
 * number alone).  0 means unknown (printed in a canonical spelling). */
#ifndef DW_EXT_SPELLING_H
#define DW_EXT_SPELLING_H
#include <stddef.h>
#include <stdint.h>
#include "value.h"

enum { DW_SPELL_UNKNOWN = 0, DW_SPELL_COMPUTED = 1 };

/* The spelling of a value of kind k that parsed from s[0..n). */
uint32_t dw_ext_spelling(dw_vkind k, const char *s, size_t n);

/* Decoders.  decimal: digits after the point (1-4), 0 unknown; digits
 * before it (leading zeros kept: "007.5"). */
static inline unsigned dw_spell_decimal_digits(uint32_t sp) { return sp & 7; }
static inline unsigned dw_spell_decimal_int_digits(uint32_t sp) { return sp >> 3; }
/* ipaddr: written with a /prefix (a host address may be written either way). */
enum { DW_SPELL_IP_PREFIX = 2, DW_SPELL_IP_BARE = 3 };
/* datetime written (sp >= 2): its form and, with an offset, the offset as
 * written (sign, hhmm). */
typedef enum dw_dt_form { DW_DT_DATE, DW_DT_Z, DW_DT_MS_Z, DW_DT_OFFSET, DW_DT_MS_OFFSET } dw_dt_form;
static inline dw_dt_form dw_spell_dt_form(uint32_t sp) { return (dw_dt_form)((sp - 2) % 8); }
static inline int dw_spell_dt_negative(uint32_t sp) { return (int)(((sp - 2) / 8) & 1); }
static inline unsigned dw_spell_dt_hhmm(uint32_t sp) { return (sp - 2) / 16; }
/* duration written (sp >= 2): the units it named, bit 0 d .. bit 4 ms. */
static inline unsigned dw_spell_duration_units(uint32_t sp) { return (sp - 2) & 31; }

#endif
