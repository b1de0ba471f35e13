/* fuzz_dwd.c - libFuzzer target for one dwd protocol line: parse it (with and
 * without client time) and, when it parses, format every reply and a
 * decision-log line from it.  Nothing may crash, leak or read out of bounds.
 * The one-pass reader of the common decide line must agree with the general
 * path byte for byte (the same result, the same error, the same fields), as
 * tests/unit/test_dwd_protocol.c checks on its own lines. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "runtime/dwd_protocol.h"
#include "tests/unit/dwd_request_pair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[1200];
    for (unsigned fl = 0; fl < 4; fl++)
        if (!dwd_parse_agrees((const char *)data, size, fl, why, sizeof why)) { fprintf(stderr, "fuzz_dwd: %s\n", why); abort(); }
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
