/* expression.c - see expression.h. */
#include "expression.h"
#include <stdio.h>
#include <string.h>
#include "cedar_value.h"
#include "eval_error.h"

int dw_expression_compile(dw_expression *x, const char *text, size_t len)
{
    memset(x, 0, sizeof *x);
    x->src = (dw_source){ "<expression>", text, len };
    dw_arena_init(&x->owner.arena, 4096);
    dw_diags_init(&x->diags);
    dw_policy_set *o = &x->owner;
    o->src = &x->src;
    dw_expr *e = dw_parse_expr(o, &x->src, &x->diags);
    if (!e || x->diags.nerrors) return x->diags.nerrors ? 1 : -1;
    dw_policy *p = dw_arena_alloc(&o->arena, sizeof *p);
    dw_clause *c = dw_arena_alloc(&o->arena, sizeof *c);
    if (!p || !c) return -1;
    memset(p, 0, sizeof *p);
    memset(c, 0, sizeof *c);
    c->is_when = true;
    c->body = e;
    p->effect = DW_PERMIT;
    p->clauses = c;
    p->nclauses = 1;
    o->policies = p;
    o->npolicies = 1;
    x->prog = dw_compile(o, NULL, &x->diags);
    if (!x->prog) return x->diags.nerrors ? 1 : -1;
    if (x->prog->temporal.nleaves || x->prog->provider.ncalls) {
        dw_loc l0 = { 1, 1, 0, (uint32_t)len };
        dw_error(&x->diags, &x->src, l0, "not a Cedar expression: temporal rules and provider calls need a history (dwc authorize)");
        return 1;
    }
    return 0;
}

void dw_expression_refusal(const dw_expression *x, char *buf, size_t cap)
{
    snprintf(buf, cap, "out of memory");
    for (size_t i = 0; i < x->diags.n; i++) {
        const dw_diag *g = &x->diags.v[i];
        if (g->sev != DW_SEV_ERROR) continue;
        const char *msg = g->msg;
        /* Cedar's words for a name that is no function or method (a provider's, to dwc): the
         * name is the one the message quotes, else the diagnostic's span */
        bool fn = !strncmp(msg, "unknown function", 16) || (!strncmp(msg, "provider `", 10) && strstr(msg, "is not present"));
        bool method = !strncmp(msg, "unknown method", 14);
        const char *q = strchr(msg, '`'), *qe = q ? strchr(q + 1, '`') : NULL;
        if ((fn || method) && qe)
            snprintf(buf, cap, "`%.*s` is not a valid %s", (int)(qe - q - 1), q + 1, fn ? "function" : "method");
        else if ((fn || method) && g->loc.end > g->loc.off && g->loc.end <= x->src.len)
            snprintf(buf, cap, "`%.*s` is not a valid %s", (int)(g->loc.end - g->loc.off), x->src.text + g->loc.off,
                     fn ? "function" : "method");
        else snprintf(buf, cap, "%s", msg);
        return;
    }
}

int dw_expression_eval(const dw_expression *x, const dw_store *store, dw_request *req, dw_arena *scratch,
                       dw_buf *out, dw_buf *help)
{
    const dw_program *prog = x->prog;
    dw_request_bind(req, prog, store);
    dw_value *stack = dw_arena_alloc(scratch, (prog->max_stack + 1) * sizeof *stack);
    if (!stack) return -1;
    dw_eval_ctx cx = { .prog = prog, .store = store, .req = req, .scratch = scratch, .stack = stack };
    dw_value v;
    dw_eval_status st = dw_eval_value(&cx, prog->policies[0].entry, &v);
    if (st == DW_EVAL_OK) return dw_cedar_value_text(out, &v) || dw_buf_append(out, "", 1) ? -1 : (out->len--, 0);
    if (st == DW_ERR_OOM || dw_eval_error_text(out, help, prog, &cx, st)) return -1;
    return 1;
}

void dw_expression_free(dw_expression *x)
{
    if (x->prog) dw_program_free(x->prog);
    x->prog = NULL;
    dw_diags_free(&x->diags);
    dw_arena_free(&x->owner.arena);
}
