/* plower.c - lowering a provider invocation to a call site (vm/provider.h):
 * its steps (the provider, then each output method), its arguments as
 * constants or attribute paths (§13.3), and the declared output types the
 * engine checks results against (§13.4).  The bytecode reads the site with
 * PROV k, the `context.providers.policy_<i>_p_<k>` of §14.3. */
#include <stdio.h>
#include <string.h>
#include "emit.h"
#include "provcheck.h"
#include "../lang/providers.h"

/* The type's index; its element and field types first (vm/provider.h). */
static uint32_t lower_type(compiler *c, const dw_type *t, int depth)
{
    dw_ptype pt = { 0 };
    if (depth > DW_SCHEMA_MAX_DEPTH + 2) { dw_compile_oom(c); return 0; }
    switch (t->kind) {
    case DW_T_BOOL: pt.kind = DW_V_BOOL; break;
    case DW_T_LONG: pt.kind = DW_V_LONG; break;
    case DW_T_DECIMAL: pt.kind = DW_V_DECIMAL; break;
    case DW_T_SET: pt.kind = DW_V_SET; pt.elem = lower_type(c, t->elem, depth + 1); break;
    case DW_T_RECORD: {
        pt.kind = DW_V_RECORD;
        uint32_t sub[t->nattrs ? t->nattrs : 1];
        for (size_t i = 0; i < t->nattrs; i++) sub[i] = lower_type(c, t->attrs[i].type, depth + 1);
        pt.first_field = c->pfields.n;
        pt.nfields = (uint32_t)t->nattrs;
        for (size_t i = 0; i < t->nattrs; i++) {
            dw_pfield f = { dw_emit_str(c, t->attrs[i].name.s, t->attrs[i].name.len), sub[i], t->attrs[i].required };
            if (dw_vec_push(&c->pfields, &f, sizeof f)) dw_compile_oom(c);
        }
        break;
    }
    default: pt.kind = DW_V_STRING; break;   /* provider types are string/long/bool/decimal/set/record (§13.2) */
    }
    if (dw_vec_push(&c->ptypes, &pt, sizeof pt)) dw_compile_oom(c);
    return c->ptypes.n - 1;
}

static void perror_at(compiler *c, dw_loc loc, const char *hint, const char *fmt, dw_str name, const char *detail)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, (int)name.len, name.s, detail);
    dw_compile_error(c, loc, hint, msg);
}

/* The step's arguments into pargs; false after an error. */
static bool lower_args(compiler *c, dw_str pname, dw_expr *const *args, size_t nargs, size_t want, dw_loc loc)
{
    if (nargs != want) {
        char d[64];
        snprintf(d, sizeof d, "expected %zu argument%s, got %zu", want, want == 1 ? "" : "s", nargs);
        perror_at(c, loc, NULL, "provider `%.*s`: %s", pname, d);
        return false;
    }
    for (size_t i = 0; i < nargs; i++) {
        const dw_expr *a = args[i];
        const char *why = dw_provider_arg_form_error(a);
        if (why) {
            perror_at(c, a->loc, "pass an attribute path such as `context.input.text`, or a literal",
                      "provider `%.*s`: argument not allowed: %s", pname, why);
            return false;
        }
        dw_parg g = { 0 };
        dw_value v;
        if (dw_compile_literal(c, a, &v)) {
            g.kind = DW_PARG_CONST;
            g.a = dw_emit_const(c, v);
        } else {
            const dw_expr *segs[DW_MAX_EXPR_DEPTH + 2];
            size_t n = 0;
            while (a->kind == DW_E_GETATTR && n < DW_MAX_EXPR_DEPTH) { segs[n++] = a; a = a->u.attr.kids0; }
            if (a->kind != DW_E_VAR) { perror_at(c, args[i]->loc, NULL, "provider `%.*s`: argument not allowed%s", pname, ""); return false; }
            g.kind = a->u.var == DW_VAR_CONTEXT ? DW_PARG_CONTEXT : a->u.var == DW_VAR_PRINCIPAL ? DW_PARG_PRINCIPAL : DW_PARG_RESOURCE;
            g.a = c->psegs.n;
            g.n = (uint32_t)n;
            for (size_t k = n; k-- > 0;) {
                uint32_t s = dw_emit_str(c, segs[k]->u.attr.attr.s, segs[k]->u.attr.attr.len);
                if (dw_vec_push(&c->psegs, &s, sizeof s)) dw_compile_oom(c);
            }
        }
        if (dw_vec_push(&c->pargs, &g, sizeof g)) dw_compile_oom(c);
    }
    return true;
}

uint32_t dw_lower_provider(compiler *c, const dw_expr *e)
{
    const dw_expr *chain[64];
    size_t n = 0;
    while (e->kind == DW_E_METHOD && n < 63) { chain[n++] = e; e = e->u.call.recv; }
    dw_str pname = e->kind == DW_E_CALL ? e->u.call.name : (dw_str){ "?", 1 };
    if (e->kind != DW_E_CALL || e->u.call.nsegs < 2) {
        dw_compile_error(c, chain[0]->u.call.name_loc, "only Cedar methods may be called here; provider output methods follow a `Ns::Fn(...)` call",
                         "unknown method (not a Cedar method, and not on a provider call)");
        return UINT32_MAX;
    }
#ifdef DW_NO_PROVIDERS
    perror_at(c, e->u.call.name_loc, "this dwc was built with providers switched off (make PROVIDERS=0)",
              "information providers are not enabled in this build: the policy calls `%.*s`%s", pname, "");
    return UINT32_MAX;
#endif
    const dw_providers *decls = c->opt ? c->opt->providers : NULL;
    const dw_provider_decl *d = dw_providers_find(decls, pname.s, pname.len);
    if (!d) {
        perror_at(c, e->u.call.name_loc, "declare it in the provider declarations (--providers FILE), or use a built-in provider",
                  "provider `%.*s` is not present in the provider declarations%s", pname, "");
        return UINT32_MAX;
    }
    char perr[160];
    const dw_expr *pat = dw_provider_pattern_error(d, e, perr, sizeof perr);
    if (pat) {
        perror_at(c, pat->loc, "the pattern is a POSIX extended regular expression", "provider `%.*s`: invalid pattern: %s", pname, perr);
        return UINT32_MAX;
    }
    dw_pcall call = { c->cur_policy, c->psteps.n, 0, c->leaf_ordinal++ };
    dw_pstep st = { dw_emit_str(c, pname.s, pname.len), c->pargs.n, (uint32_t)e->u.call.nargs, lower_type(c, d->out, 0) };
    if (!lower_args(c, pname, e->u.call.args, e->u.call.nargs, d->nargs, e->loc)) return UINT32_MAX;
    if (dw_vec_push(&c->psteps, &st, sizeof st)) dw_compile_oom(c);
    for (size_t s = n; s-- > 0;) {
        const dw_expr *m = chain[s];
        const dw_provider_method *pm = dw_provider_method_find(d, m->u.call.name.s, m->u.call.name.len);
        if (!pm) {
            char det[128];
            snprintf(det, sizeof det, " has no output method `%.*s`", (int)m->u.call.name.len, m->u.call.name.s);
            perror_at(c, m->u.call.name_loc, "declare it under the provider's `availableMethods`", "provider `%.*s`%s", pname, det);
            return UINT32_MAX;
        }
        dw_pstep ms = { dw_emit_str(c, m->u.call.name.s, m->u.call.name.len), c->pargs.n, (uint32_t)m->u.call.nargs,
                        lower_type(c, pm->out, 0) };
        if (!lower_args(c, pname, m->u.call.args, m->u.call.nargs, pm->nargs, m->loc)) return UINT32_MAX;
        if (dw_vec_push(&c->psteps, &ms, sizeof ms)) dw_compile_oom(c);
    }
    call.nsteps = c->psteps.n - call.first_step;
    if (dw_vec_push(&c->pcalls, &call, sizeof call)) { dw_compile_oom(c); return UINT32_MAX; }
    return c->pcalls.n - 1;
}
