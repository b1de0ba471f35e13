/* cedar_value.h - a value as Cedar 4.x prints an evaluation result
 * (cedar-policy's Display of EvalResult, what `cedar evaluate` prints):
 *   true, 42, "text" (Rust's escape_debug), Type::"id",
 *   [e1, e2] with the elements in Cedar's order (bool < long < string <
 *   entity < set < record < extension value; entities by type basename, then
 *   namespace, then id; extension values by their text),
 *   {"key": value, ...} by key, an extension value as its constructor call:
 *   decimal("1.50"), ip("10.0.0.0/8"), datetime("2024-01-01"),
 *   duration("1h30m"); a computed datetime as
 *   datetime("1970-01-01").offset(duration("…ms")), a computed duration as
 *   duration("…ms") (vm/ext_spelling.h keeps which was which).
 * Every text printed parses back as a Cedar expression equal to the value. */
#ifndef DW_CEDAR_VALUE_H
#define DW_CEDAR_VALUE_H
#include "../vm/value.h"

/* Append v's text to b.  0; -1 out of memory or nested too deeply. */
int dw_cedar_value_text(dw_buf *b, const dw_value *v);

/* Cedar's name of v's type in its messages: bool, long, string, set, record,
 * (entity of type `T`), decimal, ipaddr, datetime, duration. */
int dw_cedar_type_text(dw_buf *b, const dw_value *v);

#endif
