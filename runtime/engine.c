/* engine.c - the stateful authorizer (dogwood.md §15.1, box.md §6): events
 * in, verdicts out, temporal leaves evaluated over the retained history.
 *
 * decide:  build the event and its Cedar request -> gate (decision kinds must
 *          conform to the schema; a non-conforming request is denied and not
 *          recorded) -> append -> evaluate the leaves of every rule whose scope
 *          admits the request -> Cedar decision -> Box's verdict.
 * record:  build the event -> append.
 * Every failure after the gate is a deny with cause internal_fault. */
#include "dogwood.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "load.h"
#include "../vm/teval.h"

typedef struct history {
    dw_event *ev;            /* events [0, n), oldest first */
    uint32_t n, cap;
    dw_arena arena;          /* logged records of every retained event */
    uint32_t dropped;        /* events dropped by retention since the arena was rebuilt */
} history;

struct dw_engine {
    dw_session s;
    int64_t tps;
    bool replay_ts;
    int64_t last_ts;
    bool have_ts;
    history h;
    dw_arena scratch;        /* per-decision */
    char **names;            /* Box rule names, built on demand */
    uint32_t *leaf_policies; uint32_t nleaf_policies;   /* policies that own temporal leaves */
};

const char *dw_cause_name(dw_cause c)
{
    switch (c) {
    case DW_CAUSE_PERMITTED: return "permitted";
    case DW_CAUSE_FORBIDDEN: return "forbidden";
    case DW_CAUSE_NO_MATCH: return "no_match";
    case DW_CAUSE_INTERNAL_FAULT: return "internal_fault";
    }
    return "internal_fault";
}

/* ---- opening ---- */

dw_engine *dw_engine_open(const dw_engine_config *cfg, char *err, size_t errcap)
{
    dw_engine *e = calloc(1, sizeof *e);
    if (!e) { snprintf(err, errcap, "out of memory"); return NULL; }
    dw_session_init(&e->s);
    dw_arena_init(&e->h.arena, 256 * 1024);
    dw_arena_init(&e->scratch, 256 * 1024);
    e->tps = cfg->ticks_per_second > 0 ? cfg->ticks_per_second : 1000000000;
    e->replay_ts = cfg->replay_timestamps;
    int rc = 0;
    if (cfg->schema_path) rc = dw_session_load_schema(&e->s, cfg->schema_path);
    if (!rc && cfg->schema_path) rc = dw_session_load_events(&e->s, cfg->events_path);
    if (!rc) rc = dw_session_load_policies(&e->s, cfg->policy_path);
    if (!rc) rc = dw_session_load_entities(&e->s, NULL);
    if (rc) {
        snprintf(err, errcap, "cannot load the policy set (diagnostics above)");
        dw_engine_close(e);
        return NULL;
    }
    const dw_program *p = e->s.prog;
    e->leaf_policies = calloc(p->npolicies + 1, sizeof *e->leaf_policies);
    if (!e->leaf_policies) { snprintf(err, errcap, "out of memory"); dw_engine_close(e); return NULL; }
    for (uint32_t i = 0; i < p->npolicies; i++)
        if (p->policies[i].nleaves) e->leaf_policies[e->nleaf_policies++] = i;
    return e;
}

void dw_engine_close(dw_engine *e)
{
    if (!e) return;
    if (e->names) {
        for (uint32_t i = 0; e->s.prog && i < e->s.prog->npolicies; i++) free(e->names[i]);
        free(e->names);
    }
    free(e->leaf_policies);
    free(e->h.ev);
    dw_arena_free(&e->h.arena);
    dw_arena_free(&e->scratch);
    dw_session_free(&e->s);
    free(e);
}

void dw_engine_reset_history(dw_engine *e)
{
    e->h.n = 0;
    e->h.dropped = 0;
    dw_arena_reset(&e->h.arena);
    e->have_ts = false;
}

uint32_t dw_engine_history_length(const dw_engine *e) { return e->h.n; }

const char *dw_engine_rule_name(dw_engine *e, uint32_t rule)
{
    const dw_program *p = e->s.prog;
    if (rule >= p->npolicies) return "<default-deny>";
    if (!e->names && !(e->names = calloc(p->npolicies, sizeof *e->names))) return "policy_?";
    if (!e->names[rule]) {
        const dw_policy_code *pc = &p->policies[rule];
        char buf[512];
        snprintf(buf, sizeof buf, "policy_%u", rule);
        for (uint32_t k = 0; k < pc->nannots; k++)
            if (pc->annots[k].key.len == 2 && memcmp(pc->annots[k].key.s, "id", 2) == 0)
                snprintf(buf, sizeof buf, "%.*s", (int)pc->annots[k].value.len, pc->annots[k].value.s);
        e->names[rule] = strdup(buf);
    }
    return e->names[rule] ? e->names[rule] : "policy_?";
}

/* ---- time ---- */

/* RFC 3339 UTC: YYYY-MM-DDThh:mm:ss[.f{1,9}]Z -> nanoseconds since the epoch. */
static bool parse_rfc3339(const char *s, size_t n, int64_t *ns)
{
    if (n < 20 || s[n - 1] != 'Z') return false;
    size_t base = 19;
    int64_t ms;
    char buf[32];
    memcpy(buf, s, base);
    buf[base] = 'Z';
    if (!dw_datetime_parse(buf, base + 1, &ms)) return false;
    int64_t frac = 0;
    size_t digits = 0;
    if (n > 20) {
        if (s[base] != '.') return false;
        for (size_t i = base + 1; i < n - 1; i++) {
            if (s[i] < '0' || s[i] > '9' || ++digits > 9) return false;
            frac = frac * 10 + (s[i] - '0');
        }
        if (!digits) return false;
        for (size_t d = digits; d < 9; d++) frac *= 10;
    }
    return !__builtin_mul_overflow(ms, 1000000, ns) && !__builtin_add_overflow(*ns, frac, ns);
}

static int64_t clock_ticks(const dw_engine *e)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return e->tps == 1000000000 ? ns : ns / (1000000000 / e->tps);
}

/* ---- building events ---- */

typedef struct built {
    dw_event ev;             /* logged record in the scratch arena until appended */
    dw_request req;          /* the Cedar request (decision kinds) */
    bool decision;
} built;

static const dw_attr_decl *record_attr(const dw_type *t, const char *name)
{
    if (!t || t->kind != DW_T_RECORD) return NULL;
    for (size_t i = 0; i < t->nattrs; i++)
        if (t->attrs[i].name.len == strlen(name) && memcmp(t->attrs[i].name.s, name, t->attrs[i].name.len) == 0)
            return &t->attrs[i];
    return NULL;
}

static bool set_field(dw_arena *a, dw_field *f, const char *key, dw_value v)
{
    f->key = key;
    f->klen = (uint32_t)strlen(key);
    f->v = v;
    (void)a;
    return true;
}

/* The common part of both event forms: identity, scope, input/output values.
 * `input_j`/`output_j` may be NULL.  Returns 0, or -1 with msg (a gate
 * failure for decision kinds). */
static int build_event(dw_engine *e, built *b, const char *atype, size_t atlen, const char *aid, size_t aidlen,
                       const char *kind, size_t klen, const dw_uid *principal, const dw_uid *resource,
                       const dw_json *input_j, const dw_json *output_j, const dw_json *request_id,
                       char *msg, size_t cap)
{
    dw_arena *a = &e->scratch;
    dw_buf err = { 0 };
    memset(b, 0, sizeof *b);
    b->ev.atype = (dw_bytes){ dw_arena_memdup(a, atype, atlen), atlen };
    b->ev.aid = (dw_bytes){ dw_arena_memdup(a, aid, aidlen), aidlen };
    b->ev.kind = (dw_bytes){ dw_arena_memdup(a, kind, klen), klen };
    b->decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, kind, klen) : (klen == 7 && !memcmp(kind, "request", 7));
    const dw_action_decl *ad = e->s.schema ? dw_schema_action(e->s.schema, atype, atlen, aid, aidlen) : NULL;
    if (e->s.schema && !ad) {
        snprintf(msg, cap, "action %.*s::\"%.*s\" is not declared in the schema", (int)atlen, atype, (int)aidlen, aid);
        return -1;
    }
    /* input and output, parsed against the declared context where there is one */
    const dw_attr_decl *in_d = ad ? record_attr(ad->context, "input") : NULL;
    const dw_attr_decl *out_d = ad ? record_attr(ad->context, "output") : NULL;
    dw_value in = { .kind = DW_V_RECORD }, out = { .kind = DW_V_RECORD };
    bool have_in = input_j != NULL, have_out = output_j != NULL;
    if (have_in && dw_value_from_json(a, input_j, b->decision && in_d ? in_d->type : NULL, &in, &err)) {
        if (b->decision) { snprintf(msg, cap, "request does not conform to the schema: input: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
        /* a record event that the schema cannot type is kept schema-free */
        err.len = 0;
        if (dw_value_from_json(a, input_j, NULL, &in, &err)) { snprintf(msg, cap, "input: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
    }
    if (have_out && dw_value_from_json(a, output_j, out_d ? out_d->type : NULL, &out, &err)) {
        err.len = 0;
        if (dw_value_from_json(a, output_j, NULL, &out, &err)) { snprintf(msg, cap, "output: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
    }
    dw_buf_free(&err);
    /* logged record: input, output, callerPrincipal, callerResource, requestId (§7.1 mirroring) */
    dw_field *lf = dw_arena_alloc(a, 5 * sizeof *lf);
    if (!lf) { snprintf(msg, cap, "out of memory"); return -1; }
    size_t nf = 0;
    if (have_in) set_field(a, &lf[nf++], "input", in);
    if (have_out) set_field(a, &lf[nf++], "output", out);
    dw_value pv = { .kind = DW_V_ENTITY }, rv = { .kind = DW_V_ENTITY };
    pv.u.uid = principal;
    rv.u.uid = resource;
    if (principal) set_field(a, &lf[nf++], "callerPrincipal", pv);
    if (resource) set_field(a, &lf[nf++], "callerResource", rv);
    if (request_id && request_id->kind == DW_JSON_STRING) {
        dw_value s;
        if (!dw_make_string(a, request_id->u.str.s, request_id->u.str.len, &s)) { snprintf(msg, cap, "out of memory"); return -1; }
        set_field(a, &lf[nf++], "requestId", s);
    }
    dw_make_record(lf, nf, &b->ev.logged);
    if (!b->decision) return 0;

    /* the Cedar request: context = { input } (box.md §15.2), checked like Box's gate */
    if (!principal || !resource) { snprintf(msg, cap, "decision event has no %s in scope", principal ? "resource" : "principal"); return -1; }
    dw_field *cf = dw_arena_alloc(a, sizeof *cf);
    if (!cf) { snprintf(msg, cap, "out of memory"); return -1; }
    size_t nc = 0;
    if (have_in) set_field(a, &cf[nc++], "input", in);
    dw_make_record(cf, nc, &b->req.vars[DW_VAR_C]);
    b->req.vars[DW_VAR_P] = pv;
    b->req.vars[DW_VAR_R] = rv;
    b->req.vars[DW_VAR_A].kind = DW_V_ENTITY;
    b->req.vars[DW_VAR_A].u.uid = dw_make_uid(a, atype, atlen, aid, aidlen);
    if (ad) {
        for (size_t k = 0; k < ad->context->nattrs; k++) {
            const dw_attr_decl *d = &ad->context->attrs[k];
            bool present = dw_record_get(&b->req.vars[DW_VAR_C], d->name.s, d->name.len) != NULL;
            if (d->required && !present) { snprintf(msg, cap, "request does not conform to the schema: context.%s is required", d->name.s); return -1; }
        }
        for (uint32_t k = 0; k < b->req.vars[DW_VAR_C].n; k++)
            if (!record_attr(ad->context, b->req.vars[DW_VAR_C].u.fields[k].key)) {
                snprintf(msg, cap, "request does not conform to the schema: context.%s is not declared", b->req.vars[DW_VAR_C].u.fields[k].key);
                return -1;
            }
        bool pok = false, rok = false;
        for (size_t k = 0; k < ad->nprincipals; k++)
            if (ad->principals[k].len == principal->tlen && !memcmp(ad->principals[k].s, principal->type, principal->tlen)) pok = true;
        for (size_t k = 0; k < ad->nresources; k++)
            if (ad->resources[k].len == resource->tlen && !memcmp(ad->resources[k].s, resource->type, resource->tlen)) rok = true;
        if (!pok || !rok) { snprintf(msg, cap, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal"); return -1; }
    }
    return 0;
}

/* ---- history ---- */

static int history_append(dw_engine *e, const built *b, int64_t ts)
{
    history *h = &e->h;
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? h->cap * 2 : 256;
        dw_event *ev = realloc(h->ev, cap * sizeof *ev);
        if (!ev) return -1;
        h->ev = ev;
        h->cap = cap;
    }
    dw_event *ev = &h->ev[h->n];
    ev->ts = ts;
    ev->atype = (dw_bytes){ dw_arena_memdup(&h->arena, b->ev.atype.s, b->ev.atype.len), b->ev.atype.len };
    ev->aid = (dw_bytes){ dw_arena_memdup(&h->arena, b->ev.aid.s, b->ev.aid.len), b->ev.aid.len };
    ev->kind = (dw_bytes){ dw_arena_memdup(&h->arena, b->ev.kind.s, b->ev.kind.len), b->ev.kind.len };
    if (!ev->atype.s || !ev->aid.s || !ev->kind.s || !dw_value_clone(&h->arena, &b->ev.logged, &ev->logged)) return -1;
    h->n++;
    return 0;
}

/* Drop events no leaf can reach any more (dogwood.md §7.3).  Only with the
 * runtime's strictly increasing timestamps; replay keeps everything. */
static void history_retain(dw_engine *e)
{
    history *h = &e->h;
    if (e->replay_ts || h->n < 1024) return;
    int64_t reach = e->s.prog->max_reach;
    int64_t horizon;
    if (__builtin_mul_overflow(reach, e->tps, &horizon)) return;
    int64_t now = h->ev[h->n - 1].ts;
    uint32_t keep_from = 0;
    while (keep_from < h->n - 1 && now - h->ev[keep_from].ts > horizon) keep_from++;
    if (keep_from < h->n / 2) return;
    /* rebuild: copy the retained events into a fresh arena */
    dw_arena fresh;
    dw_arena_init(&fresh, 256 * 1024);
    uint32_t w = 0;
    for (uint32_t i = keep_from; i < h->n; i++) {
        dw_event ev = h->ev[i];
        dw_event *d = &h->ev[w];
        d->ts = ev.ts;
        d->atype = (dw_bytes){ dw_arena_memdup(&fresh, ev.atype.s, ev.atype.len), ev.atype.len };
        d->aid = (dw_bytes){ dw_arena_memdup(&fresh, ev.aid.s, ev.aid.len), ev.aid.len };
        d->kind = (dw_bytes){ dw_arena_memdup(&fresh, ev.kind.s, ev.kind.len), ev.kind.len };
        if (!dw_value_clone(&fresh, &ev.logged, &d->logged)) { dw_arena_free(&fresh); return; }
        w++;
    }
    dw_arena_free(&h->arena);
    h->arena = fresh;
    h->n = w;
}

static int64_t stamp(dw_engine *e, int64_t ts)
{
    if (!ts) ts = clock_ticks(e);
    if (!e->replay_ts && e->have_ts && ts <= e->last_ts) ts = e->last_ts + 1;   /* strictly increasing (§7.3) */
    e->last_ts = ts;
    e->have_ts = true;
    return ts;
}

/* ---- deciding ---- */

static void fault(dw_verdict *v, const char *fmt, const char *detail)
{
    v->allow = false;
    v->cause = DW_CAUSE_INTERNAL_FAULT;
    v->ndetermining = 0;
    snprintf(v->message, sizeof v->message, fmt, detail ? detail : "");
}

/* Evaluate the leaves of every rule whose scope admits the request (D3). */
static int evaluate_leaves(dw_engine *e, dw_request *req, dw_verdict *v)
{
    const dw_program *p = e->s.prog;
    uint32_t nl = p->temporal.nleaves;
    if (!nl) return 0;
    uint8_t *vals = dw_arena_alloc_raw(&e->scratch, nl);
    if (!vals) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
    memset(vals, 2, nl);
    req->leaf_values = vals;
    req->nleaf_values = nl;

    /* the history view: every retained event, or only the current key's (§8.9) */
    const dw_event **view = dw_arena_alloc_raw(&e->scratch, (e->h.n + 1) * sizeof *view);
    if (!view) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
    uint32_t nv = 0;
    const dw_event *cur = &e->h.ev[e->h.n - 1];
    const dw_event_schema *es = e->s.es;
    for (uint32_t i = 0; i < e->h.n; i++) {
        const dw_event *ev = &e->h.ev[i];
        bool same_key = true;
        for (size_t k = 0; es && k < es->nkey && same_key; k++) {
            const dw_str *path = &es->key[k].path;
            const dw_value *a = dw_record_get(&ev->logged, path->s, path->len);
            const dw_value *b = dw_record_get(&cur->logged, path->s, path->len);
            same_key = (!a && !b) || (a && b && dw_value_eq(a, b));
        }
        if (same_key) view[nv++] = ev;
    }
    dw_history_view hv = { view, nv, e->tps };
    dw_tanchor anchor = { 0 };
    anchor.context = req->vars[DW_VAR_C];
    anchor.principal = req->vars[DW_VAR_P];
    anchor.resource = req->vars[DW_VAR_R];
    anchor.principal_attrs.kind = DW_V_RECORD;
    anchor.resource_attrs.kind = DW_V_RECORD;
    if (req->ent[0]) anchor.principal_attrs = req->ent[0]->attrs;
    if (req->ent[2]) anchor.resource_attrs = req->ent[2]->attrs;

    dw_value *stack = dw_arena_alloc_raw(&e->scratch, (p->max_stack + 1) * sizeof *stack);
    if (!stack) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
    dw_eval_ctx cx = { .prog = p, .store = &e->s.store, .req = req, .scratch = &e->scratch, .stack = stack };
    for (uint32_t k = 0; k < e->nleaf_policies; k++) {
        const dw_policy_code *pc = &p->policies[e->leaf_policies[k]];
        bool in_scope = false;
        if (dw_eval_code(&cx, pc->scope_entry, &in_scope) != DW_EVAL_OK) { fault(v, "temporal evaluation: scope test failed%s", NULL); return -1; }
        if (!in_scope) continue;
        for (uint32_t l = pc->first_leaf; l < pc->first_leaf + pc->nleaves; l++) {
            dw_teval_ctx tc = {
                .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts, .nconsts = p->nconsts,
                .h = &hv, .anchor = &anchor, .scratch = &e->scratch, .budget = 50000000,
            };
            bool holds = false;
            if (dw_teval_leaf(&tc, l, &holds)) {
                fault(v, "temporal evaluation: leaf of %s failed (work bound or memory)", dw_engine_rule_name(e, e->leaf_policies[k]));
                return -1;
            }
            vals[l] = holds ? 1 : 0;
        }
    }
    return 0;
}

static int decide_built(dw_engine *e, built *b, int64_t ts, dw_verdict *v)
{
    v->timestamp = stamp(e, ts);
    if (history_append(e, b, v->timestamp)) { fault(v, "history: out of memory%s", NULL); v->decided = b->decision; return 0; }
    if (!b->decision) { v->decided = false; history_retain(e); return 0; }
    v->decided = true;
    dw_request_bind(&b->req, e->s.prog, &e->s.store);
    if (evaluate_leaves(e, &b->req, v)) { history_retain(e); return 0; }
    dw_response resp;
    if (dw_authorize(e->s.prog, &e->s.store, &b->req, &e->scratch, &resp)) { fault(v, "decision: out of memory%s", NULL); return 0; }
    v->ndetermining = resp.ndetermining < DW_VERDICT_MAX_RULES ? resp.ndetermining : DW_VERDICT_MAX_RULES;
    memcpy(v->determining, resp.determining, v->ndetermining * sizeof *v->determining);
    v->nerrors = resp.nerrors;
    /* Box's mapping (box.md §8): any error denies */
    if (resp.nerrors) {
        v->allow = false;
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        snprintf(v->message, sizeof v->message, "%s errored: %s", dw_engine_rule_name(e, resp.errors[0].policy),
                 dw_eval_status_name(resp.errors[0].status));
    } else if (resp.allow) v->allow = true, v->cause = DW_CAUSE_PERMITTED;
    else v->allow = false, v->cause = resp.ndetermining ? DW_CAUSE_FORBIDDEN : DW_CAUSE_NO_MATCH;
    history_retain(e);
    return 0;
}

/* Box's JSON event form. */
static int decide_or_record(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v, bool must_decide)
{
    memset(v, 0, sizeof *v);
    dw_arena_reset(&e->scratch);
    dw_source src = { "event", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    if (!j || j->kind != DW_JSON_OBJECT) {
        dw_diags_free(&d);
        fault(v, "event is not a JSON object%s", NULL);
        v->decided = must_decide;
        return must_decide ? 0 : -1;
    }
    dw_diags_free(&d);
    const dw_json *action = dw_json_get(j, "action"), *kind = dw_json_get(j, "kind"), *ns = dw_json_get(j, "namespace");
    const dw_json *time = dw_json_get(j, "time");
    if (!action || action->kind != DW_JSON_STRING || !kind || kind->kind != DW_JSON_STRING) {
        fault(v, "event needs string members \"action\" and \"kind\"%s", NULL);
        v->decided = must_decide;
        return must_decide ? 0 : -1;
    }
    char atype[256];
    snprintf(atype, sizeof atype, "%s::Action", ns && ns->kind == DW_JSON_STRING ? ns->u.str.s : "Box");
    if (!ts && time && time->kind == DW_JSON_STRING) {
        int64_t ns_time;
        if (!parse_rfc3339(time->u.str.s, time->u.str.len, &ns_time)) {
            fault(v, "event time is not RFC 3339 UTC (YYYY-MM-DDThh:mm:ss[.fffffffff]Z)%s", NULL);
            v->decided = must_decide;
            return must_decide ? 0 : -1;
        }
        ts = e->tps == 1000000000 ? ns_time : ns_time / (1000000000 / e->tps);
    }
    const dw_uid *P = dw_make_uid(&e->scratch, "Box::Agent", 10, "self", 4);
    const dw_uid *R = dw_make_uid(&e->scratch, "Box::Resource", 13, "unused", 6);
    const dw_json *pj = dw_json_get(j, "principal"), *rj = dw_json_get(j, "resource");
    dw_buf err = { 0 };
    if (pj) P = dw_uid_from_json(&e->scratch, pj, &err);
    if (rj) R = dw_uid_from_json(&e->scratch, rj, &err);
    dw_buf_free(&err);
    built b;
    if (build_event(e, &b, atype, strlen(atype), action->u.str.s, action->u.str.len, kind->u.str.s, kind->u.str.len,
                    P, R, dw_json_get(j, "input"), dw_json_get(j, "output"), dw_json_get(j, "request_id"),
                    v->message, sizeof v->message)) {
        /* a gate failure: denied and not recorded (box.md §6.1) */
        v->decided = b.decision || must_decide;
        v->allow = false;
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return b.decision || must_decide ? 0 : -1;
    }
    return decide_built(e, &b, ts, v);
}

int dw_engine_decide_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
{
    return decide_or_record(e, json, len, ts, v, true);
}

int dw_engine_record_json(dw_engine *e, const char *json, size_t len, int64_t ts, char *err, size_t errcap)
{
    dw_verdict v;
    int rc = decide_or_record(e, json, len, ts, &v, false);
    if (rc && err) snprintf(err, errcap, "%s", v.message);
    return rc;
}

int dw_engine_decide_request_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->decided = true;
    dw_arena_reset(&e->scratch);
    dw_source src = { "request", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    dw_diags_free(&d);
    dw_buf err = { 0 };
    const dw_uid *P = j ? dw_uid_from_json(&e->scratch, dw_json_get(j, "principal"), &err) : NULL;
    const dw_uid *A = j ? dw_uid_from_json(&e->scratch, dw_json_get(j, "action"), &err) : NULL;
    const dw_uid *R = j ? dw_uid_from_json(&e->scratch, dw_json_get(j, "resource"), &err) : NULL;
    if (!P || !A || !R) {
        fault(v, "request: %s", err.p ? err.p : "not a Cedar request");
        dw_buf_free(&err);
        return 0;
    }
    dw_buf_free(&err);
    const dw_json *ctx = dw_json_get(j, "context");
    const dw_json *input = ctx ? dw_json_get(ctx, "input") : NULL;
    built b;
    if (build_event(e, &b, A->type, A->tlen, A->id, A->idlen, "request", 7, P, R, input, NULL, NULL, v->message, sizeof v->message)) {
        v->allow = false;
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return 0;
    }
    if (!b.decision) { fault(v, "`request` is not a decision kind of this event schema%s", NULL); return 0; }
    return decide_built(e, &b, ts, v);
}
