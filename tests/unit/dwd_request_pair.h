/* dwd_request_pair.h - one dwd protocol line parsed with and without the
 * one-pass reader of the common decide line (DWD_REQ_GENERAL_ONLY): the
 * same result, the same error, the same fields.  Used by
 * tests/unit/test_dwd_protocol.c and tests/fuzz/fuzz_dwd.c. */
#ifndef DW_TEST_DWD_REQUEST_PAIR_H
#define DW_TEST_DWD_REQUEST_PAIR_H
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "runtime/dwd_protocol.h"

/* the name of the first field in which a and b differ, or NULL */
static inline const char *dwd_request_differs(const dwd_request *a, const dwd_request *b)
{
    if (a->op != b->op) return "op";
    if (strcmp(a->action, b->action)) return "action";
    if (strcmp(a->category, b->category)) return "category";
    const dwd_buf *x[] = { &a->event, &a->subject, &a->attrs, &a->request_id, &a->jsonrpc_id, &a->artifact, &a->principal };
    const dwd_buf *y[] = { &b->event, &b->subject, &b->attrs, &b->request_id, &b->jsonrpc_id, &b->artifact, &b->principal };
    static const char *const names[] = { "event", "subject", "attrs", "request_id", "jsonrpc_id", "artifact", "principal" };
    for (int k = 0; k < 7; k++)
        if (x[k]->len != y[k]->len || (x[k]->len && memcmp(x[k]->p, y[k]->p, x[k]->len))) return names[k];
    if (a->per_tool != b->per_tool) return "per_tool";
    if (a->has_parent_span != b->has_parent_span) return "has_parent_span";
    if (a->has_trace_id != b->has_trace_id) return "has_trace_id";
    return NULL;
}

/* true when line parses alike both ways under flags; else why says how not */
static inline bool dwd_parse_agrees(const char *line, size_t len, unsigned flags, char *why, size_t cap)
{
    dwd_request a, b;
    char ea[512] = "", eb[512] = "";
    int ra = dwd_parse_request(line, len, flags, &a, ea, sizeof ea);
    int rb = dwd_parse_request(line, len, flags | DWD_REQ_GENERAL_ONLY, &b, eb, sizeof eb);
    bool ok = true;
    if (ra != rb || (ra && strcmp(ea, eb))) {
        snprintf(why, cap, "flags %u: %d '%s' vs %d '%s'", flags, ra, ea, rb, eb);
        ok = false;
    } else if (!ra) {
        const char *f = dwd_request_differs(&a, &b);
        if (f) { snprintf(why, cap, "flags %u: the field %s differs", flags, f); ok = false; }
    }
    dwd_request_free(&a);
    dwd_request_free(&b);
    return ok;
}
#endif
