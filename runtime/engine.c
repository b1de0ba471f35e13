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
#include "../vm/monitor.h"   /* incremental monitors (vm/monitor.h) */

typedef struct history {
    dw_event *ev;            /* events [0, n), oldest first */
    uint32_t n, cap;
    dw_arena arena;          /* logged records of every retained event */
    uint32_t dropped;        /* events dropped by retention since the arena was rebuilt */
    uint32_t scan;           /* events [0, scan) are known to be out of every leaf's reach
                                (retention's cursor: each event is tested once, not per decision) */
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
    dw_monitors *mon;        /* incremental monitors of the idiom leaves; NULL: teval only */
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
    /* monitors: optional (on OOM every leaf simply runs through teval) */
    e->mon = p->temporal.nleaves ? dw_monitors_new(p, e->tps) : NULL;
    if (e->mon && e->s.es && e->s.es->nkey) {   /* key-local (§8.9): partition the monitors' state too */
        dw_bytes kp[16];
        size_t nk = e->s.es->nkey;
        for (size_t k = 0; k < nk && k < 16; k++) kp[k] = (dw_bytes){ e->s.es->key[k].path.s, e->s.es->key[k].path.len };
        if (nk > 16 || dw_monitors_set_partition(e->mon, kp, (uint32_t)nk)) { dw_monitors_free(e->mon); e->mon = NULL; }
    }
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
    dw_monitors_free(e->mon);
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
    e->h.scan = 0;
    dw_arena_reset(&e->h.arena);
    dw_monitors_reset(e->mon);   /* monitors follow the history */
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
    /* monitors see every appended event before its decision; a failure only
     * disables them (teval takes over), it is not a fault of this event */
    if (e->mon) dw_monitors_observe(e->mon, e->s.prog, ev);
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
    /* timestamps strictly increase here, so an event out of reach stays out:
     * resume from the cursor (amortized O(1) per event, not O(window)) */
    uint32_t keep_from = h->scan < h->n ? h->scan : 0;
    while (keep_from < h->n - 1 && now - h->ev[keep_from].ts > horizon) keep_from++;
    h->scan = keep_from;
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
    h->scan = 0;
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

    /* the history view (every retained event, or only the current key's,
     * §8.9) is built only when some leaf has no monitor (teval fallback):
     * an all-idiom decision then costs O(1) in the window (vm/monitor.h) */
    const dw_event **view = NULL;
    uint32_t nv = 0;
    const dw_event *cur = &e->h.ev[e->h.n - 1];
    const dw_event_schema *es = e->s.es;
    dw_history_view hv = { NULL, 0, e->tps };
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
            bool holds = false;
            int mrc = e->mon ? dw_monitors_eval(e->mon, p, l, &anchor, cur, &holds) : DW_MON_FALLBACK;
            if (mrc == 0) { vals[l] = holds ? 1 : 0; continue; }   /* incremental */
            if (!view) {        /* first fallback of this decision: build the view */
                view = dw_arena_alloc_raw(&e->scratch, (e->h.n + 1) * sizeof *view);
                if (!view) { fault(v, "temporal evaluation: out of memory%s", NULL); return -1; }
                for (uint32_t i = 0; i < e->h.n; i++) {
                    const dw_event *ev = &e->h.ev[i];
                    bool same_key = true;
                    for (size_t q = 0; es && q < es->nkey && same_key; q++) {
                        const dw_str *path = &es->key[q].path;
                        const dw_value *a = dw_record_get(&ev->logged, path->s, path->len);
                        const dw_value *b = dw_record_get(&cur->logged, path->s, path->len);
                        same_key = (!a && !b) || (a && b && dw_value_eq(a, b));
                    }
                    if (same_key) view[nv++] = ev;
                }
                hv.ev = view;
                hv.n = nv;
            }
            dw_teval_ctx tc = {
                .t = &p->temporal, .strs = p->strs, .nstrs = p->nstrs, .consts = p->consts, .nconsts = p->nconsts,
                .h = &hv, .anchor = &anchor, .scratch = &e->scratch, .budget = 50000000,
            };
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
/* Box's JSON event form -> a built event (and its Cedar request).  *ts is
 * replaced by the event's "time" when the caller gave none.  0 on success;
 * -1 when the line is not an event (v says why); -2 when a decision event
 * fails the schema gate (v holds the deny; b->decision is set). */
static int event_from_json(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b, dw_verdict *v)
{
    dw_arena_reset(&e->scratch);
    dw_source src = { "event", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    dw_diags_free(&d);
    if (!j || j->kind != DW_JSON_OBJECT) { fault(v, "event is not a JSON object%s", NULL); return -1; }
    const dw_json *action = dw_json_get(j, "action"), *kind = dw_json_get(j, "kind"), *ns = dw_json_get(j, "namespace");
    const dw_json *time = dw_json_get(j, "time");
    if (!action || action->kind != DW_JSON_STRING || !kind || kind->kind != DW_JSON_STRING) {
        fault(v, "event needs string members \"action\" and \"kind\"%s", NULL);
        return -1;
    }
    if (ns && (ns->kind != DW_JSON_STRING || ns->u.str.len > 200)) { fault(v, "event \"namespace\" must be a short string%s", NULL); return -1; }
    char atype[256];
    snprintf(atype, sizeof atype, "%s::Action", ns ? ns->u.str.s : "Box");
    if (!*ts && time && time->kind == DW_JSON_STRING) {
        int64_t ns_time;
        if (!parse_rfc3339(time->u.str.s, time->u.str.len, &ns_time)) {
            fault(v, "event time is not RFC 3339 UTC (YYYY-MM-DDThh:mm:ss[.fffffffff]Z)%s", NULL);
            return -1;
        }
        *ts = e->tps == 1000000000 ? ns_time : ns_time / (1000000000 / e->tps);
    }
    const dw_uid *P = dw_make_uid(&e->scratch, "Box::Agent", 10, "self", 4);
    const dw_uid *R = dw_make_uid(&e->scratch, "Box::Resource", 13, "unused", 6);
    const dw_json *pj = dw_json_get(j, "principal"), *rj = dw_json_get(j, "resource");
    dw_buf err = { 0 };
    if (pj) P = dw_uid_from_json(&e->scratch, pj, &err);
    if (rj) R = dw_uid_from_json(&e->scratch, rj, &err);
    dw_buf_free(&err);
    if (build_event(e, b, atype, strlen(atype), action->u.str.s, action->u.str.len, kind->u.str.s, kind->u.str.len,
                    P, R, dw_json_get(j, "input"), dw_json_get(j, "output"), dw_json_get(j, "request_id"),
                    v->message, sizeof v->message)) {
        v->allow = false;          /* a gate failure: denied and not recorded (box.md §6.1) */
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return -2;
    }
    return 0;
}

static int decide_or_record(dw_engine *e, const char *json, size_t len, int64_t ts, dw_verdict *v, bool must_decide)
{
    memset(v, 0, sizeof *v);
    built b;
    int rc = event_from_json(e, json, len, &ts, &b, v);
    if (rc) {
        v->decided = must_decide || (rc == -2 && b.decision);
        return v->decided ? 0 : -1;
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

/* ---- events given by their parts (dogwood.h: dw_engine_decide_event) ----
 * Used by the `.log` replay (runtime/trace_log.c).  Unlike the Box forms it
 * does not mirror the scope into the logged record (§20 Q3), takes the
 * request context groups verbatim (§15.1 step 5), builds a per-event entity
 * store (step 7) and gives Cedar's verdict (§15.2) rather than Box's mapping. */

/* An event value as JSON for the schema-directed Cedar reader: entities as
 * __entity, decimals and other extension values as __extn, Null as "" (§20
 * Q15), or dropped as a record member when `drop_null` (entity attributes). */
static dw_json *ev_json(dw_arena *a, const dw_value *v, bool drop_null, int depth)
{
    dw_json *j = dw_arena_alloc(a, sizeof *j);
    if (!j || depth > 256) return NULL;
    switch (v->kind) {
    case DW_V_BOOL: j->kind = DW_JSON_BOOL; j->u.b = v->u.b; return j;
    case DW_V_LONG: j->kind = DW_JSON_INT; j->u.i = v->u.i; return j;
    case DW_V_STRING: j->kind = DW_JSON_STRING; j->u.str = (dw_str){ v->u.s, v->n }; return j;
    case DW_V_NULL: j->kind = DW_JSON_STRING; j->u.str = (dw_str){ "", 0 }; return j;
    case DW_V_ENTITY: {
        dw_json *in = dw_arena_alloc(a, sizeof *in), *t = dw_arena_alloc(a, sizeof *t), *id = dw_arena_alloc(a, sizeof *id);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        if (!in || !t || !id || !m) return NULL;
        t->kind = id->kind = DW_JSON_STRING;
        t->u.str = (dw_str){ v->u.uid->type, v->u.uid->tlen };
        id->u.str = (dw_str){ v->u.uid->id, v->u.uid->idlen };
        m[0] = (dw_json_member){ { "type", 4 }, t, 0 };
        m[1] = (dw_json_member){ { "id", 2 }, id, 0 };
        in->kind = DW_JSON_OBJECT; in->u.obj.v = m; in->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__entity", 8 }, in, 0 };
        j->kind = DW_JSON_OBJECT; j->u.obj.v = &m[2]; j->u.obj.n = 1;
        return j;
    }
    case DW_V_DECIMAL: case DW_V_IPADDR: case DW_V_DATETIME: case DW_V_DURATION: {
        char buf[64];
        const char *fn = "decimal";
        if (v->kind == DW_V_DECIMAL) dw_decimal_format(v->u.i, buf, sizeof buf);
        else if (v->kind == DW_V_IPADDR) fn = "ip", dw_ip_format(v->u.ip, buf, sizeof buf);
        else if (v->kind == DW_V_DATETIME) fn = "datetime", dw_datetime_format(v->u.i, buf, sizeof buf);
        else fn = "duration", dw_duration_format(v->u.i, buf, sizeof buf);
        dw_json *x = dw_arena_alloc(a, sizeof *x), *f = dw_arena_alloc(a, sizeof *f), *arg = dw_arena_alloc(a, sizeof *arg);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        char *text = dw_arena_memdup(a, buf, strlen(buf));
        if (!x || !f || !arg || !m || !text) return NULL;
        f->kind = arg->kind = DW_JSON_STRING;
        f->u.str = (dw_str){ fn, strlen(fn) };
        arg->u.str = (dw_str){ text, strlen(text) };
        m[0] = (dw_json_member){ { "fn", 2 }, f, 0 };
        m[1] = (dw_json_member){ { "arg", 3 }, arg, 0 };
        x->kind = DW_JSON_OBJECT; x->u.obj.v = m; x->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__extn", 6 }, x, 0 };
        j->kind = DW_JSON_OBJECT; j->u.obj.v = &m[2]; j->u.obj.n = 1;
        return j;
    }
    case DW_V_SET: case DW_V_ARRAY: {
        j->kind = DW_JSON_ARRAY;
        j->u.arr.n = v->n;
        j->u.arr.v = v->n ? dw_arena_alloc(a, v->n * sizeof *j->u.arr.v) : NULL;
        if (v->n && !j->u.arr.v) return NULL;
        for (uint32_t k = 0; k < v->n; k++)
            if (!(j->u.arr.v[k] = ev_json(a, &v->u.elems[k], drop_null, depth + 1))) return NULL;
        return j;
    }
    case DW_V_RECORD: {
        j->kind = DW_JSON_OBJECT;
        j->u.obj.v = v->n ? dw_arena_alloc(a, v->n * sizeof *j->u.obj.v) : NULL;
        if (v->n && !j->u.obj.v) return NULL;
        size_t n = 0;
        for (uint32_t k = 0; k < v->n; k++) {
            const dw_field *f = &v->u.fields[k];
            if (drop_null && f->v.kind == DW_V_NULL) continue;
            dw_json *fj = ev_json(a, &f->v, drop_null, depth + 1);
            if (!fj) return NULL;
            j->u.obj.v[n++] = (dw_json_member){ { f->key, f->klen }, fj, 0 };
        }
        j->u.obj.n = n;
        return j;
    }
    default: return NULL;
    }
}

/* A deep copy for the history in which arrays travel as DW_V_SET in their
 * given order (dw_value_clone copies sets element-wise and dw_tval_cmp reads
 * a set as an array in stored order; it does not copy DW_V_ARRAY). */
static bool ev_carry(dw_arena *a, const dw_value *v, dw_value *out, int depth)
{
    if (depth > 256) return false;
    *out = *v;
    if (v->kind == DW_V_ARRAY || v->kind == DW_V_SET) {
        out->kind = DW_V_SET;
        if (!v->n) return true;
        dw_value *el = dw_arena_alloc(a, v->n * sizeof *el);
        if (!el) return false;
        for (uint32_t k = 0; k < v->n; k++) if (!ev_carry(a, &v->u.elems[k], &el[k], depth + 1)) return false;
        out->u.elems = el;
    } else if (v->kind == DW_V_RECORD && v->n) {
        dw_field *f = dw_arena_alloc(a, v->n * sizeof *f);
        if (!f) return false;
        for (uint32_t k = 0; k < v->n; k++) {
            f[k] = v->u.fields[k];
            if (!ev_carry(a, &v->u.fields[k].v, &f[k].v, depth + 1)) return false;
        }
        out->u.fields = f;
    }
    return true;
}

static dw_json *uid_json(dw_arena *a, const dw_uid *u)
{
    dw_value v = { .kind = DW_V_ENTITY };
    v.u.uid = u;
    dw_json *j = ev_json(a, &v, false, 0);
    return j ? (dw_json *)j->u.obj.v[0].value : NULL;    /* the bare {"type","id"} */
}

/* The JSON reader's " (at byte N)" means nothing for values built in memory. */
static void strip_offsets(char *m)
{
    static const char tag[] = " (at byte 0)";
    for (char *p; (p = strstr(m, tag));) memmove(p, p + sizeof tag - 1, strlen(p + sizeof tag - 1) + 1);
}

static void errors_append(dw_verdict *v, const char *msg)
{
    size_t n = strlen(v->message);
    if (n && n + 1 < sizeof v->message) v->message[n++] = '\n';
    if (n < sizeof v->message) snprintf(v->message + n, sizeof v->message - n, "%s", msg);
}

/* Steps 3-9 of §15.1 for an appended decision event. */
static void decide_parts(dw_engine *e, const dw_event_input *in, dw_verdict *v)
{
    dw_arena *a = &e->scratch;
    const dw_schema *schema = e->s.schema;
    if (!in->principal || !in->resource) {
        fault(v, "decision event has no %s in scope", in->principal ? "resource" : "principal");
        return;
    }
    const dw_action_decl *ad = schema ? dw_schema_action(schema, in->atype, in->atype_len, in->aid, in->aid_len) : NULL;
    if (schema && !ad) {
        char m[200];
        snprintf(m, sizeof m, "%.*s::\"%.*s\"", (int)in->atype_len, in->atype, (int)in->aid_len, in->aid);
        fault(v, "action %s is not declared in the schema", m);
        return;
    }
    /* step 5: the Cedar context = the request-context groups (+ hoisted leaves, via the LEAF instruction) */
    dw_value empty = { .kind = DW_V_RECORD };
    const dw_value *ectx = in->context && in->context->kind == DW_V_RECORD ? in->context : &empty;
    dw_json *cj = ev_json(a, ectx, false, 0);
    if (!cj) { fault(v, "request context: out of memory or nested too deeply%s", NULL); return; }
    dw_value cctx;
    dw_buf err = { 0 };
    if (dw_value_from_json(a, cj, ad ? ad->context : NULL, &cctx, &err)) {
        fault(v, "request does not conform to the schema: context: %s", err.p ? err.p : "?");
        strip_offsets(v->message);
        dw_buf_free(&err);
        return;
    }
    /* step 6: principal and resource types */
    if (ad) {
        bool pok = false, rok = false;
        for (size_t k = 0; k < ad->nprincipals; k++)
            if (ad->principals[k].len == in->principal->tlen && !memcmp(ad->principals[k].s, in->principal->type, in->principal->tlen)) pok = true;
        for (size_t k = 0; k < ad->nresources; k++)
            if (ad->resources[k].len == in->resource->tlen && !memcmp(ad->resources[k].s, in->resource->type, in->resource->tlen)) rok = true;
        if (!pok || !rok) {
            fault(v, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal");
            return;
        }
    }
    /* step 7: the per-event entity store: supplied entities, then the scope
     * entities without attributes, then the schema's actions */
    size_t ne = in->nentities + 2, n = 0;
    dw_json *arr = dw_arena_alloc(a, sizeof *arr);
    dw_json **items = dw_arena_alloc(a, ne * sizeof *items);
    if (!arr || !items) { fault(v, "entities: out of memory%s", NULL); return; }
    bool have_p = false, have_r = false;
    for (uint32_t k = 0; k < in->nentities + 2; k++) {
        const dw_uid *uid;
        const dw_value *attrs = NULL;
        const dw_uid *const *parents = NULL;
        uint32_t np = 0;
        if (k < in->nentities) {
            const dw_event_entity *x = &in->entities[k];
            uid = x->uid;
            attrs = x->attrs;
            parents = x->parents;
            np = x->nparents;
            if (dw_uid_eq(uid, in->principal)) have_p = true;
            if (dw_uid_eq(uid, in->resource)) have_r = true;
        } else if (k == in->nentities) {
            if (have_p) continue;
            uid = in->principal;
            if (dw_uid_eq(uid, in->resource)) have_r = true;
        } else {
            if (have_r) continue;
            uid = in->resource;
        }
        dw_json *o = dw_arena_alloc(a, sizeof *o);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        dw_json *uj = uid_json(a, uid);
        if (!o || !m || !uj) { fault(v, "entities: out of memory%s", NULL); return; }
        size_t nm = 0;
        m[nm++] = (dw_json_member){ { "uid", 3 }, uj, 0 };
        if (attrs) {
            dw_json *aj = ev_json(a, attrs, true, 0);
            if (!aj) { fault(v, "entities: out of memory or nested too deeply%s", NULL); return; }
            m[nm++] = (dw_json_member){ { "attrs", 5 }, aj, 0 };
        }
        if (np) {
            dw_json *pj = dw_arena_alloc(a, sizeof *pj);
            dw_json **pv = dw_arena_alloc(a, np * sizeof *pv);
            if (!pj || !pv) { fault(v, "entities: out of memory%s", NULL); return; }
            for (uint32_t q = 0; q < np; q++)
                if (!(pv[q] = uid_json(a, parents[q]))) { fault(v, "entities: out of memory%s", NULL); return; }
            pj->kind = DW_JSON_ARRAY;
            pj->u.arr.v = pv;
            pj->u.arr.n = np;
            m[nm++] = (dw_json_member){ { "parents", 7 }, pj, 0 };
        }
        o->kind = DW_JSON_OBJECT;
        o->u.obj.v = m;
        o->u.obj.n = nm;
        items[n++] = o;
    }
    arr->kind = DW_JSON_ARRAY;
    arr->u.arr.v = items;
    arr->u.arr.n = n;
    dw_store st;
    dw_store_init(&st);
    if (dw_store_load_json(&st, arr, schema, &err)) {
        fault(v, "entities: %s", err.p ? err.p : "invalid");
        strip_offsets(v->message);
        dw_buf_free(&err);
        dw_store_free(&st);
        return;
    }
    dw_buf_free(&err);
    /* the request; the leaves read the event-valued context (§8.1), Cedar the converted one */
    dw_request req;
    memset(&req, 0, sizeof req);
    req.vars[DW_VAR_P].kind = DW_V_ENTITY;
    req.vars[DW_VAR_P].u.uid = in->principal;
    req.vars[DW_VAR_R].kind = DW_V_ENTITY;
    req.vars[DW_VAR_R].u.uid = in->resource;
    req.vars[DW_VAR_A].kind = DW_V_ENTITY;
    req.vars[DW_VAR_A].u.uid = dw_make_uid(a, in->atype, in->atype_len, in->aid, in->aid_len);
    dw_value lctx;
    if (!req.vars[DW_VAR_A].u.uid || !ev_carry(a, ectx, &lctx, 0)) { fault(v, "request: out of memory%s", NULL); dw_store_free(&st); return; }
    req.vars[DW_VAR_C] = lctx;
    dw_store saved = e->s.store;
    e->s.store = st;
    dw_request_bind(&req, e->s.prog, &e->s.store);
    dw_response resp;
    int rc = evaluate_leaves(e, &req, v);
    if (!rc) {
        req.vars[DW_VAR_C] = cctx;
        if (dw_authorize(e->s.prog, &e->s.store, &req, a, &resp)) { fault(v, "decision: out of memory%s", NULL); rc = -1; }
    }
    st = e->s.store;
    e->s.store = saved;
    dw_store_free(&st);
    if (rc) return;
    v->allow = resp.allow;
    v->cause = resp.allow ? DW_CAUSE_PERMITTED : resp.ndetermining ? DW_CAUSE_FORBIDDEN : DW_CAUSE_NO_MATCH;
    v->ndetermining = resp.ndetermining < DW_VERDICT_MAX_RULES ? resp.ndetermining : DW_VERDICT_MAX_RULES;
    memcpy(v->determining, resp.determining, v->ndetermining * sizeof *v->determining);
    v->nerrors = resp.nerrors;
    v->message[0] = 0;
    for (uint32_t k = 0; k < resp.nerrors; k++) {
        char m[200];
        snprintf(m, sizeof m, "policy_%u: %s%s%s", resp.errors[k].policy, dw_eval_status_name(resp.errors[k].status),
                 resp.errors[k].detail ? ": " : "", resp.errors[k].detail ? resp.errors[k].detail : "");
        errors_append(v, m);
    }
}

int dw_engine_decide_event(dw_engine *e, const dw_event_input *in, dw_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (!e || !in || !e->s.prog) return -1;
    dw_arena_reset(&e->scratch);
    built b;
    memset(&b, 0, sizeof b);
    b.ev.atype = (dw_bytes){ in->atype, in->atype_len };
    b.ev.aid = (dw_bytes){ in->aid, in->aid_len };
    b.ev.kind = (dw_bytes){ in->kind, in->kind_len };
    b.decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, in->kind, in->kind_len)
                         : (in->kind_len == 7 && !memcmp(in->kind, "request", 7));
    v->decided = b.decision;
    dw_value empty = { .kind = DW_V_RECORD };
    if (!ev_carry(&e->scratch, in->logged && in->logged->kind == DW_V_RECORD ? in->logged : &empty, &b.ev.logged, 0)) {
        fault(v, "event: out of memory or nested too deeply%s", NULL);
        return 0;
    }
    if (e->replay_ts) {
        e->last_ts = in->ts;
        e->have_ts = true;
        v->timestamp = in->ts;
    } else v->timestamp = stamp(e, in->ts);
    if (history_append(e, &b, v->timestamp)) { fault(v, "history: out of memory%s", NULL); return 0; }
    if (b.decision) decide_parts(e, in, v);
    history_retain(e);
    return 0;
}

/* ---- for the decision service (runtime/dwd_main.c) ----
 * dw_engine_observe_json: Box's JSON event form with a hook that runs after
 * the gate and before the event enters the history (dwd appends it to its
 * durable log there), or without evaluation (restoring a recovered history). */

static int64_t peek_stamp(dw_engine *e, int64_t ts)
{
    if (!ts) ts = clock_ticks(e);
    if (!e->replay_ts && e->have_ts && ts <= e->last_ts) ts = e->last_ts + 1;
    return ts;
}

int dw_engine_observe_json(dw_engine *e, const char *json, size_t len, int64_t ts, dw_observe_mode mode,
                           dw_engine_append_hook hook, void *ctx, dw_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (!e || !e->s.prog) return -1;
    v->decided = mode == DW_OBSERVE_DECIDE;
    built b;
    if (event_from_json(e, json, len, &ts, &b, v)) return 0;
    if (mode == DW_OBSERVE_DECIDE && !b.decision) { fault(v, "the event's kind is not a decision kind%s", NULL); return 0; }
    if (mode == DW_OBSERVE_RECORD && b.decision) { fault(v, "a decision kind cannot be recorded without a decision%s", NULL); return 0; }
    ts = peek_stamp(e, ts);
    v->timestamp = ts;
    if (hook && hook(ctx, ts)) { fault(v, "history: the event could not be appended to the durable log%s", NULL); return 0; }
    if (mode == DW_OBSERVE_RESTORE) {
        v->decided = false;
        v->timestamp = stamp(e, ts);
        if (history_append(e, &b, v->timestamp)) { fault(v, "history: out of memory%s", NULL); return 0; }
        history_retain(e);
        return 1;
    }
    decide_built(e, &b, ts, v);
    return 1;
}

size_t dw_engine_rule_description(dw_engine *e, uint32_t rule, char *buf, size_t cap)
{
    if (cap) buf[0] = 0;
    const dw_program *p = e->s.prog;
    if (!p || rule >= p->npolicies) return 0;
    const dw_policy_code *pc = &p->policies[rule];
    for (uint32_t k = 0; k < pc->nannots; k++)
        if (pc->annots[k].key.len == 11 && memcmp(pc->annots[k].key.s, "description", 11) == 0) {
            if (cap) snprintf(buf, cap, "%.*s", (int)pc->annots[k].value.len, pc->annots[k].value.s);
            return pc->annots[k].value.len ? pc->annots[k].value.len : 0;
        }
    return 0;
}
