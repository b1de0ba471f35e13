/* authorize.c - Cedar's decision over every policy (dogwood.md §15.2):
 * a satisfied forbid denies; otherwise a satisfied permit allows; otherwise
 * the implicit deny.  Erroring policies are skipped and reported. */
#include "vm.h"
#include <string.h>

int dw_authorize(const dw_program *prog, const dw_store *store, const dw_request *req,
                 dw_arena *scratch, dw_response *resp)
{
    memset(resp, 0, sizeof *resp);
    uint32_t n = prog->npolicies;
    dw_value *stack = dw_arena_alloc(scratch, (prog->max_stack + 1) * sizeof *stack);
    uint32_t *permits = dw_arena_alloc(scratch, (n + 1) * sizeof *permits);
    uint32_t *forbids = dw_arena_alloc(scratch, (n + 1) * sizeof *forbids);
    dw_policy_error *errs = dw_arena_alloc(scratch, (n + 1) * sizeof *errs);
    if (!stack || !permits || !forbids || !errs) return -1;
    uint32_t np = 0, nf = 0, ne = 0;
    dw_eval_ctx cx = { .prog = prog, .store = store, .req = req, .scratch = scratch, .stack = stack };
    for (uint32_t i = 0; i < n; i++) {
        bool sat = false;
        dw_eval_status st = dw_eval_policy(&cx, i, &sat);
        resp->evaluated++;
        if (st == DW_ERR_OOM) return -1;
        if (st != DW_EVAL_OK) {
            errs[ne].policy = i;
            errs[ne].status = st;
            errs[ne].detail = cx.err_detail;
            ne++;
            continue;
        }
        if (!sat) continue;
        if (prog->policies[i].effect == DW_EFFECT_FORBID) forbids[nf++] = i;
        else permits[np++] = i;
    }
    resp->errors = errs;
    resp->nerrors = ne;
    if (nf) {
        resp->allow = false;
        resp->determining = forbids;
        resp->ndetermining = nf;
    } else {
        resp->allow = np > 0;
        resp->determining = permits;
        resp->ndetermining = np;
    }
    return 0;
}
