/* lsp_diag.c - textDocument/publishDiagnostics: a policy document gets
 * `dwc check --lint-only`'s findings (runtime/check_lint.h: everything but
 * the Z3 proofs, attributed, @suppress and `disable` applied), under check's
 * rule ids; a schema document
 * its parser's errors.  Changes are debounced (the configured debounce_ms
 * after the last one); open and save publish at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_lint.h"
#include "lsp_int.h"

void dw_lsp_schedule(dw_lsp *s, dw_lsp_doc *d, bool now)
{
    d->due = true;
    d->due_ms = now ? s->now_ms : s->now_ms + s->cfg.debounce_ms;
}

void dw_lsp_schedule_all(dw_lsp *s)
{
    for (size_t i = 0; i < s->ndocs; i++) dw_lsp_schedule(s, s->docs[i], true);
}

int64_t dw_lsp_due_in(const dw_lsp *s, int64_t now_ms)
{
    int64_t best = -1;
    for (size_t i = 0; i < s->ndocs; i++) {
        const dw_lsp_doc *d = s->docs[i];
        if (!d->due) continue;
        int64_t in = d->due_ms > now_ms ? d->due_ms - now_ms : 0;
        if (best < 0 || in < best) best = in;
    }
    return best;
}

int dw_lsp_run_due(dw_lsp *s, int64_t now_ms)
{
    s->now_ms = now_ms;
    for (size_t i = 0; i < s->ndocs && !s->dead; i++)
        if (s->docs[i]->due && s->docs[i]->due_ms <= now_ms) dw_lsp_publish(s, s->docs[i]);
    return s->dead ? -1 : 0;
}

void dw_lsp_w_diag(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, size_t off, size_t end, int sev, const char *code,
                   const char *msg, const char *hint)
{
    dw_jw_raw(w, *first ? "{\"range\":" : ",{\"range\":");
    *first = false;
    dw_lsp_w_range(w, s, d, off, end);
    dw_jw_printf(w, ",\"severity\":%d,\"source\":\"dwc\"", sev);
    if (code) { dw_jw_raw(w, ",\"code\":"); dw_jw_strz(w, code); }
    dw_jw_raw(w, ",\"message\":");
    if (hint) {
        size_t ml = strlen(msg), hl = strlen(hint);
        char *t = malloc(ml + hl + 8);
        if (!t) { w->oom = true; return; }
        snprintf(t, ml + hl + 8, "%s\nhint: %s", msg, hint);
        dw_jw_strz(w, t);
        free(t);
    } else dw_jw_strz(w, msg);
    dw_jw_raw(w, "}");
}

static void send_diags(dw_lsp *s, dw_lsp_doc *d, dw_jw *list)
{
    dw_jw w = { 0 };
    dw_jw_raw(&w, "{\"uri\":");
    dw_jw_strz(&w, d->uri);
    dw_jw_printf(&w, ",\"version\":%lld,\"diagnostics\":[", (long long)d->version);
    dw_jw_rawn(&w, list->b.p ? list->b.p : "", list->b.len);
    dw_jw_raw(&w, "]}");
    if (w.oom || list->oom) dw_lsp_fail(s);
    else dw_lsp_notify(s, "textDocument/publishDiagnostics", w.b.p, w.b.len);
    dw_buf_free(&w.b);
}

/* A schema or event-schema document: its parser's diagnostics. */
static void schema_diags(dw_lsp *s, dw_lsp_doc *d, dw_jw *w, bool *first)
{
    dw_diags g;
    dw_diags_init(&g);
    if (d->kind == DW_DOC_SCHEMA) {
        dw_schema *sc = dw_schema_parse(&d->src, &g);
        if (sc) dw_schema_free(sc);
    } else {
        dw_event_schema *es = dw_event_schema_parse(&d->src, &g);
        if (es) dw_event_schema_free(es);
    }
    for (size_t i = 0; i < g.n; i++) {
        const dw_diag *x = &g.v[i];
        int sev = x->sev == DW_SEV_ERROR ? 1 : x->sev == DW_SEV_WARNING ? 2 : 3;
        dw_lsp_w_diag(w, s, d, first, x->loc.off, x->loc.end, sev, x->code, x->msg, x->hint);
    }
    dw_diags_free(&g);
}

int dw_lsp_sev(dw_lint_sev v) { return v == DW_LINT_ERROR ? 1 : v == DW_LINT_WARNING ? 2 : 3; }

void dw_lsp_publish(dw_lsp *s, dw_lsp_doc *d)
{
    d->due = false;
    dw_jw w = { 0 };
    bool first = true;
    if (s->config_error[0]) dw_lsp_w_diag(&w, s, d, &first, 0, 0, 1, "dwc-lsp-config", s->config_error, "fix dwc.toml / .dwcrc or the editor's initializationOptions (docs/EDITORS.md)");
    if (d->kind != DW_DOC_POLICY) {
        schema_diags(s, d, &w, &first);
        send_diags(s, d, &w);
        dw_buf_free(&w.b);
        return;
    }
    dw_findings f = { 0 };
    dw_cli_list dis = { (const char **)s->cfg.disable, s->cfg.ndisable, s->cfg.ndisable };
    dw_check_lint_options opt = { .schema = s->sess_ok ? s->sess.schema : NULL, .dv = s->sess_ok ? s->sess.dv : NULL,
                                  .box = s->cfg.box, .home = s->cfg.home, .disable = &dis };
    if (dw_check_lint(&d->src, &opt, &f) < 0) {
        dw_findings_free(&f);
        dw_buf_free(&w.b);
        dw_lsp_show(s, 1, "dwc lsp: out of memory checking the document; its diagnostics are stale");
        return;
    }
    for (size_t i = 0; i < f.n; i++) {
        const dw_finding *g = &f.v[i];
        if (g->src && g->src != &d->src) {
            const dw_policy_set *ps = dw_lsp_doc_policies(d);   /* parsed only for these */
            /* in another file (the macro library): shown at its policy, named */
            char m[1200];
            snprintf(m, sizeof m, "%s:%u:%u: %s", g->src->name, g->loc.line, g->loc.col, g->msg);
            uint32_t at = ps && g->policy >= 0 && (size_t)g->policy < ps->npolicies ? ps->policies[g->policy].loc.off : 0;
            dw_lsp_w_diag(&w, s, d, &first, at, at, dw_lsp_sev(g->sev), g->rule, m, g->hint);
            continue;
        }
        dw_lsp_w_diag(&w, s, d, &first, g->loc.off, g->loc.end, dw_lsp_sev(g->sev), g->rule, g->msg, g->hint);
    }
    dw_findings_free(&d->findings);
    d->findings = f;
    d->findings_version = d->version;
    d->have_findings = true;
    send_diags(s, d, &w);
    dw_buf_free(&w.b);
}

void dw_lsp_publish_empty(dw_lsp *s, const char *uri)
{
    dw_jw w = { 0 };
    dw_jw_raw(&w, "{\"uri\":");
    dw_jw_strz(&w, uri);
    dw_jw_raw(&w, ",\"diagnostics\":[]}");
    if (w.oom) dw_lsp_fail(s);
    else dw_lsp_notify(s, "textDocument/publishDiagnostics", w.b.p, w.b.len);
    dw_buf_free(&w.b);
}
