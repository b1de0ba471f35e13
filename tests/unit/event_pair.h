/* event_pair.h - one Box event line for two engines: as it is (the one-pass
 * event reader, runtime/engine_event.c event_fast, takes the common shape) and
 * behind an escaped member name, which the one-pass reader never takes on and
 * the general path ignores.  Used by tests/unit/test_event_fast.c and
 * tests/fuzz/fuzz_trace.c, which check that both answer alike. */
#ifndef DW_TEST_EVENT_PAIR_H
#define DW_TEST_EVENT_PAIR_H
#include <stdbool.h>
#include <string.h>
#include "runtime/dogwood.h"

/* line behind {"zz\u005f":0, in out (cap bytes): its length, or 0 when the
 * line is not an object line (after blanks) or does not fit */
static inline size_t event_pair_general_line(const char *line, size_t len, char *out, size_t cap)
{
    size_t ws = 0;
    while (ws < len && (line[ws] == ' ' || line[ws] == '\t')) ws++;
    if (ws >= len || line[ws] != '{' || len + 16 > cap) return 0;
    bool empty = true;   /* only blanks before the closing brace: no comma after ours */
    for (size_t k = ws + 1; k < len && empty; k++)
        if (line[k] == '}') break;
        else if (line[k] != ' ' && line[k] != '\t' && line[k] != '\r' && line[k] != '\n') empty = false;
    /* copied, not printed: the line may hold a NUL, which %.*s would stop at */
    static const char head[] = "{\"zz\\u005f\":0,";
    size_t hn = sizeof head - 1 - (empty ? 1 : 0), rest = len - ws - 1;
    memcpy(out, head, hn);
    memcpy(out + hn, line + ws + 1, rest);
    out[hn + rest] = 0;
    return hn + rest;
}

/* Messages equal but for the byte offsets (the second line is longer). */
static inline bool event_pair_same_message(const char *x, const char *y)
{
    for (;;) {
        if (strcmp(x, y) == 0) return true;
        const char *px = strstr(x, " (at byte "), *py = strstr(y, " (at byte ");
        if (!px || !py || px - x != py - y || strncmp(x, y, (size_t)(px - x)) != 0) return false;
        x = strchr(px + 1, ')');
        y = strchr(py + 1, ')');
        if (!x || !y) return false;
    }
}

/* The same answer: rc, decided, verdict, cause and determining rules (the
 * messages are the caller's to compare, exactly or but for byte offsets). */
static inline bool event_pair_same_answer(int ra, const dw_verdict *a, int rb, const dw_verdict *b)
{
    return ra == rb && a->decided == b->decided && a->allow == b->allow && a->cause == b->cause &&
           a->ndetermining == b->ndetermining &&
           memcmp(a->determining, b->determining, a->ndetermining * sizeof *a->determining) == 0;
}
#endif
