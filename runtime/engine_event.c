/* engine_event.c - events from Box's JSON form (box.md §6.1): the logged
 * record built under the event schema, its Cedar request, and the schema
 * gate a decision kind must pass before it is recorded. */
#include "engine_int.h"

static const dw_attr_decl *record_attr(const dw_type *t, dw_str name)
{
    if (!t || t->kind != DW_T_RECORD) return NULL;
    for (size_t i = 0; i < t->nattrs; i++)
        if (dw_str_eq(t->attrs[i].name, name)) return &t->attrs[i];
    return NULL;
}


/* Box lets callers give an enumerated entity as its bare id ("read_content"
 * for Box::FsReadOperation::"read_content"; issue 7, box.md §6): where the
 * schema expects an enum entity type and the JSON has a string, the string
 * becomes {"__entity":{"type":T,"id":s}}; a string that is not one of the
 * enum's ids sets *bad (the request fails the gate).  Returns j itself when
 * nothing changes, NULL on OOM. */
static const dw_json *enum_strings(dw_arena *a, const dw_schema *sc, const dw_type *t, const dw_json *j, int depth,
                                   const dw_json **bad)
{
    if (!t || !j || depth > 64) return j;
    if (t->kind == DW_T_ENTITY && j->kind == DW_JSON_STRING) {
        const dw_entity_decl *d = dw_schema_entity(sc, t->name.s, t->name.len);
        if (!d || !d->is_enum) return j;
        size_t q = 0;
        while (q < d->nenum && !dw_str_eq(d->enum_ids[q], j->u.str)) q++;
        if (q == d->nenum) { *bad = j; return j; }
        dw_json *o = dw_arena_alloc(a, sizeof *o), *in = dw_arena_alloc(a, sizeof *in);
        dw_json *ty = dw_arena_alloc(a, sizeof *ty), *id = dw_arena_alloc(a, sizeof *id);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        if (!o || !in || !ty || !id || !m) return NULL;
        *ty = (dw_json){ .kind = DW_JSON_STRING, .off = j->off, .end = j->end };
        ty->u.str = t->name;
        *id = *j;
        m[0] = (dw_json_member){ { "type", 4 }, ty, j->off };
        m[1] = (dw_json_member){ { "id", 2 }, id, j->off };
        *in = (dw_json){ .kind = DW_JSON_OBJECT, .off = j->off, .end = j->end };
        in->u.obj.v = m;
        in->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__entity", 8 }, in, j->off };
        *o = (dw_json){ .kind = DW_JSON_OBJECT, .off = j->off, .end = j->end };
        o->u.obj.v = &m[2];
        o->u.obj.n = 1;
        return o;
    }
    if (t->kind == DW_T_SET && j->kind == DW_JSON_ARRAY) {
        dw_json *c = NULL;
        for (size_t k = 0; k < j->u.arr.n; k++) {
            const dw_json *x = enum_strings(a, sc, t->elem, j->u.arr.v[k], depth + 1, bad);
            if (!x) return NULL;
            if (x == j->u.arr.v[k]) continue;
            if (!c) {
                if (!(c = dw_arena_alloc(a, sizeof *c))) return NULL;
                *c = *j;
                if (!(c->u.arr.v = dw_arena_alloc(a, j->u.arr.n * sizeof *c->u.arr.v))) return NULL;
                memcpy(c->u.arr.v, j->u.arr.v, j->u.arr.n * sizeof *c->u.arr.v);
            }
            c->u.arr.v[k] = (dw_json *)x;
        }
        return c ? c : j;
    }
    if (t->kind == DW_T_RECORD && j->kind == DW_JSON_OBJECT) {
        dw_json *c = NULL;
        for (size_t k = 0; k < j->u.obj.n; k++) {
            const dw_json_member *mb = &j->u.obj.v[k];
            const dw_type *ft = NULL;
            for (size_t q = 0; q < t->nattrs && !ft; q++)
                if (dw_str_eq(t->attrs[q].name, mb->key)) ft = t->attrs[q].type;
            const dw_json *x = enum_strings(a, sc, ft, mb->value, depth + 1, bad);
            if (!x) return NULL;
            if (x == mb->value) continue;
            if (!c) {
                if (!(c = dw_arena_alloc(a, sizeof *c))) return NULL;
                *c = *j;
                if (!(c->u.obj.v = dw_arena_alloc(a, j->u.obj.n * sizeof *c->u.obj.v))) return NULL;
                memcpy(c->u.obj.v, j->u.obj.v, j->u.obj.n * sizeof *c->u.obj.v);
            }
            c->u.obj.v[k].value = (dw_json *)x;
        }
        return c ? c : j;
    }
    return j;
}

/* The logged record's own member names (§7.1): static, so a history copy
 * of a record built here shares them instead of duplicating each. */
static const char K_INPUT[] = "input", K_OUTPUT[] = "output", K_PRINCIPAL[] = "callerPrincipal",
                  K_RESOURCE[] = "callerResource", K_REQUEST_ID[] = "requestId";

static bool set_field(dw_arena *a, dw_field *f, const char *key, dw_value v)
{
    f->key = key;
    f->klen = (uint32_t)strlen(key);
    f->v = v;
    (void)a;
    return true;
}

/* A deep copy of a logged record into a (the history's arena), sharing what
 * lives as long as the engine: the member names above and Box's fixed scope
 * entities (box_self, box_unused).  Anything else is copied. */
bool engine_clone_logged(dw_engine *e, dw_arena *a, const dw_value *logged, dw_value *out)
{
    if (logged->kind != DW_V_RECORD || !logged->n) return dw_value_clone(a, logged, out);
    dw_field *f = dw_arena_alloc_raw(a, logged->n * sizeof *f);
    if (!f) return false;
    for (uint32_t i = 0; i < logged->n; i++) {
        const dw_field *src = &logged->u.fields[i];
        f[i] = *src;
        const char *k = src->key;
        if (k != K_INPUT && k != K_OUTPUT && k != K_PRINCIPAL && k != K_RESOURCE && k != K_REQUEST_ID &&
            !(f[i].key = dw_arena_memdup(a, k, src->klen)))
            return false;
        if (src->v.kind == DW_V_ENTITY && (src->v.u.uid == &e->box_self || src->v.u.uid == &e->box_unused)) continue;
        if (!dw_value_clone(a, &src->v, &f[i].v)) return false;
    }
    *out = *logged;
    out->u.fields = f;
    return true;
}

/* The common part of both event forms: identity, scope, input/output values.
 * `input_j`/`output_j` may be NULL.  Returns 0, or -1 with msg (a gate
 * failure for decision kinds). */
int engine_build_event(dw_engine *e, built *b, const char *atype, size_t atlen, const char *aid, size_t aidlen,
                       const char *kind, size_t klen, const dw_uid *principal, const dw_uid *resource,
                       const dw_json *input_j, const dw_json *output_j, const dw_json *request_id,
                       char *msg, size_t cap)
{
    dw_arena *a = &e->scratch;
    dw_buf err = { 0 };
    memset(b, 0, sizeof *b);
    /* aid and kind are NUL-terminated strings of the scratch arena already
     * (the event's JSON or its request's uid): only atype is copied */
    b->ev.atype = (dw_str){ dw_arena_memdup(a, atype, atlen), atlen };
    b->ev.aid = (dw_str){ aid, aidlen };
    b->ev.kind = (dw_str){ kind, klen };
    b->decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, kind, klen) : (klen == 7 && !memcmp(kind, "request", 7));
    const dw_action_decl *ad = e->s.schema ? dw_schema_action(e->s.schema, atype, atlen, aid, aidlen) : NULL;
    if (e->s.schema && !ad) {
        snprintf(msg, cap, "action %.*s::\"%.*s\" is not declared in the schema", (int)atlen, atype, (int)aidlen, aid);
        return -1;
    }
    /* input and output, parsed against the declared context where there is one */
    const dw_attr_decl *in_d = ad ? record_attr(ad->context, (dw_str){ "input", 5 }) : NULL;
    const dw_attr_decl *out_d = ad ? record_attr(ad->context, (dw_str){ "output", 6 }) : NULL;
    dw_value in = { .kind = DW_V_RECORD }, out = { .kind = DW_V_RECORD };
    bool have_in = input_j != NULL, have_out = output_j != NULL;
    const dw_json *bad_enum = NULL;
    if (in_d && !(input_j = enum_strings(a, e->s.schema, in_d->type, input_j, 0, &bad_enum)) && have_in) { snprintf(msg, cap, "out of memory"); return -1; }
    if (out_d && !(output_j = enum_strings(a, e->s.schema, out_d->type, output_j, 0, &bad_enum)) && have_out) { snprintf(msg, cap, "out of memory"); return -1; }
    if (bad_enum && b->decision) {
        snprintf(msg, cap, "request does not conform to the schema: \"%.*s\" is not a value of its enumerated entity type",
                 (int)(bad_enum->u.str.len > 64 ? 64 : bad_enum->u.str.len), bad_enum->u.str.s);
        return -1;
    }
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
    if (have_in) set_field(a, &lf[nf++], K_INPUT, in);
    if (have_out) set_field(a, &lf[nf++], K_OUTPUT, out);
    dw_value pv = { .kind = DW_V_ENTITY }, rv = { .kind = DW_V_ENTITY };
    pv.u.uid = principal;
    rv.u.uid = resource;
    if (principal) set_field(a, &lf[nf++], K_PRINCIPAL, pv);
    if (resource) set_field(a, &lf[nf++], K_RESOURCE, rv);
    if (request_id && request_id->kind == DW_JSON_STRING) {
        dw_value s;
        if (!dw_make_string(a, request_id->u.str.s, request_id->u.str.len, &s)) { snprintf(msg, cap, "out of memory"); return -1; }
        set_field(a, &lf[nf++], K_REQUEST_ID, s);
    }
    dw_make_record(lf, nf, &b->ev.logged);
    if (!b->decision) return 0;

    /* the Cedar request: context = { input } (box.md §15.2), checked like Box's gate */
    if (!principal || !resource) { snprintf(msg, cap, "decision event has no %s in scope", principal ? "resource" : "principal"); return -1; }
    dw_field *cf = dw_arena_alloc(a, sizeof *cf);
    if (!cf) { snprintf(msg, cap, "out of memory"); return -1; }
    size_t nc = 0;
    if (have_in) set_field(a, &cf[nc++], K_INPUT, in);
    dw_make_record(cf, nc, &b->req.vars[DW_VAR_C]);
    b->req.vars[DW_VAR_P] = pv;
    b->req.vars[DW_VAR_R] = rv;
    b->req.vars[DW_VAR_A].kind = DW_V_ENTITY;
    dw_uid *au = dw_arena_alloc_raw(a, sizeof *au);
    if (!au || !b->ev.atype.s) { snprintf(msg, cap, "out of memory"); return -1; }
    *au = (dw_uid){ .type = b->ev.atype.s, .tlen = (uint32_t)atlen, .id = aid, .idlen = (uint32_t)aidlen,
                    .hash = dw_uid_hash(atype, atlen, aid, aidlen) };
    b->req.vars[DW_VAR_A].u.uid = au;
    if (ad) {
        for (size_t k = 0; k < ad->context->nattrs; k++) {
            const dw_attr_decl *d = &ad->context->attrs[k];
            bool present = dw_record_get(&b->req.vars[DW_VAR_C], d->name.s, d->name.len) != NULL;
            if (d->required && !present) { snprintf(msg, cap, "request does not conform to the schema: context.%s is required", d->name.s); return -1; }
        }
        for (uint32_t k = 0; k < b->req.vars[DW_VAR_C].n; k++)
            if (!record_attr(ad->context, (dw_str){ b->req.vars[DW_VAR_C].u.fields[k].key, b->req.vars[DW_VAR_C].u.fields[k].klen })) {
                snprintf(msg, cap, "request does not conform to the schema: context.%s is not declared", b->req.vars[DW_VAR_C].u.fields[k].key);
                return -1;
            }
        bool pok = dw_type_listed(ad->principals, ad->nprincipals, principal), rok = dw_type_listed(ad->resources, ad->nresources, resource);
        if (!pok || !rok) { snprintf(msg, cap, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal"); return -1; }
    }
    return 0;
}

/* Box's JSON event form -> a built event (and its Cedar request).  *ts is
 * replaced by the event's "time" when the caller gave none.  0 on success;
 * -1 when the line is not an event (v says why); -2 when a decision event
 * fails the schema gate (v holds the deny; b->decision is set). */
int engine_event_from_json(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b, dw_verdict *v)
{
    dw_arena_reset(&e->scratch);
    dw_source src = { "event", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    dw_diags_free(&d);
    if (!j || j->kind != DW_JSON_OBJECT) { engine_fault(v, "event is not a JSON object%s", NULL); return -1; }
    /* the members an event may have, in one pass (the first of a name counts, as dw_json_get) */
    enum { M_ACTION, M_KIND, M_NAMESPACE, M_TIME, M_PRINCIPAL, M_RESOURCE, M_INPUT, M_OUTPUT, M_REQUEST_ID, M__N };
    static const dw_str names[M__N] = {
        { "action", 6 }, { "kind", 4 }, { "namespace", 9 }, { "time", 4 }, { "principal", 9 },
        { "resource", 8 }, { "input", 5 }, { "output", 6 }, { "request_id", 10 },
    };
    const dw_json *m[M__N] = { 0 };
    for (size_t i = 0; i < j->u.obj.n; i++)
        for (int k = 0; k < M__N; k++)
            if (!m[k] && dw_str_eq(j->u.obj.v[i].key, names[k])) { m[k] = j->u.obj.v[i].value; break; }
    const dw_json *action = m[M_ACTION], *kind = m[M_KIND], *ns = m[M_NAMESPACE], *time = m[M_TIME];
    if (!action || action->kind != DW_JSON_STRING || !kind || kind->kind != DW_JSON_STRING) {
        engine_fault(v, "event needs string members \"action\" and \"kind\"%s", NULL);
        return -1;
    }
    if (ns && (ns->kind != DW_JSON_STRING || ns->u.str.len > 200)) { engine_fault(v, "event \"namespace\" must be a short string%s", NULL); return -1; }
    char atype[256];                         /* NS::Action; a NUL in NS ends it, as %s did */
    size_t nslen = ns ? strnlen(ns->u.str.s, ns->u.str.len) : 3;
    memcpy(atype, ns ? ns->u.str.s : "Box", nslen);
    memcpy(atype + nslen, "::Action", sizeof "::Action");
    if (*ts == DW_TS_NOW && time && time->kind == DW_JSON_STRING) {
        int64_t ns_time;
        if (!dw_rfc3339_parse_ns(time->u.str.s, time->u.str.len, &ns_time)) {
            engine_fault(v, "event time is not RFC 3339 UTC (YYYY-MM-DDThh:mm:ss[.fffffffff]Z)%s", NULL);
            return -1;
        }
        *ts = e->tps == 1000000000 ? ns_time : ns_time / (1000000000 / e->tps);
    }
    const dw_uid *P = &e->box_self, *R = &e->box_unused;
    const dw_json *pj = m[M_PRINCIPAL], *rj = m[M_RESOURCE];
    dw_buf err = { 0 };
    if (pj) P = dw_uid_from_json(&e->scratch, pj, &err);
    if (rj) R = dw_uid_from_json(&e->scratch, rj, &err);
    dw_buf_free(&err);
    if (engine_build_event(e, b, atype, strlen(atype), action->u.str.s, action->u.str.len, kind->u.str.s, kind->u.str.len,
                    P, R, m[M_INPUT], m[M_OUTPUT], m[M_REQUEST_ID],
                    v->message, sizeof v->message) ||
        (e->s.box && dw_box_gate(j, json, len, P, R, v->message, sizeof v->message))) {
        v->allow = false;          /* a gate failure: denied and not recorded (box.md §6.1) */
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return -2;
    }
    return 0;
}
