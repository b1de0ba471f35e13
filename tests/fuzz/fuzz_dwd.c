/* fuzz_dwd.c - libFuzzer target for one dwd protocol line: parse it (with and
 * without client time) and, when it parses, format every reply and a
 * decision-log line from it.  Nothing may crash, leak or read out of bounds.
 * The one-pass reader of the common decide line must agree with the general
 * path byte for byte (the same result, the same error, the same fields), as
 * tests/unit/test_dwd_protocol.c checks on its own lines. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/dwd_protocol.h"

static bool same_buf(const dwd_buf *a, const dwd_buf *b) { return a->len == b->len && (!a->len || !memcmp(a->p, b->p, a->len)); }

/* the line parsed with and without the one-pass reader: abort if they differ */
static void fast_agrees(const char *line, size_t len, unsigned flags)
{
    dwd_request a, b;
    char ea[512] = "", eb[512] = "";
    int ra = dwd_parse_request(line, len, flags, &a, ea, sizeof ea);
    int rb = dwd_parse_request(line, len, flags | DWD_REQ_GENERAL_ONLY, &b, eb, sizeof eb);
    if (ra != rb || (ra && strcmp(ea, eb))) abort();
    if (!ra) {
        if (a.op != b.op || strcmp(a.action, b.action) || strcmp(a.category, b.category) ||
            a.per_tool != b.per_tool || a.has_parent_span != b.has_parent_span || a.has_trace_id != b.has_trace_id) abort();
        const dwd_buf *x[] = { &a.event, &a.subject, &a.attrs, &a.request_id, &a.jsonrpc_id, &a.artifact, &a.principal };
        const dwd_buf *y[] = { &b.event, &b.subject, &b.attrs, &b.request_id, &b.jsonrpc_id, &b.artifact, &b.principal };
        for (int k = 0; k < 7; k++) if (!same_buf(x[k], y[k])) abort();
    }
    dwd_request_free(&a);
    dwd_request_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (unsigned fl = 0; fl < 4; fl++) fast_agrees((const char *)data, size, fl);
    char err[512];
    for (int allow_time = 0; allow_time < 2; allow_time++) {
        dwd_request rq;
        dwd_buf out = { 0 };
        if (dwd_parse_request((const char *)data, size, (allow_time ? DWD_REQ_ALLOW_TIME : 0) | DWD_REQ_LOG_ATTRS, &rq, err, sizeof err) == 0) {
            const char *ids[2] = { "a", "policy_1" };
            const char *descs[2] = { "First reason.", NULL };
            dwd_decision d = { .allow = false, .cause = "forbidden", .rule = "a", .description = descs[0],
                               .ndetermining = 2, .ids = ids, .descs = descs };
            dwd_buf msg = { 0 };
            dwd_denial_message(&msg, rq.subject.p ? rq.subject.p : "", &d);
            dwd_reply_decision(&out, &d, msg.p ? msg.p : "");
            dwd_log_info li = { "box", "run", 1, 2, 3, 4 };
            dwd_log_line(&out, &li, &rq, &d, msg.p ? msg.p : "");
            d.allow = true;
            d.cause = "permitted";
            dwd_log_line(&out, &li, &rq, &d, "");
            dwd_buf_free(&msg);
            /* the event must be one JSON object */
            if (rq.op <= DWD_OP_RECORD && (!rq.event.p || rq.event.p[0] != '{' || rq.event.p[rq.event.len - 1] != '}')) abort();
        } else {
            if (!err[0]) abort();
            dwd_reply_error(&out, err);
        }
        dwd_request_free(&rq);
        dwd_buf_free(&out);
    }
    return 0;
}
