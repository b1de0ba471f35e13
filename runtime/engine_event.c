/* engine_event.c - events from Box's JSON form (box.md §6.1): the logged
 * record built under the event schema, its Cedar request, and the schema
 * gate a decision kind must pass before it is recorded. */
#include "engine_int.h"

static const dw_attr_decl *record_attr(const dw_type *t, const char *name)
{
    if (!t || t->kind != DW_T_RECORD) return NULL;
    for (size_t i = 0; i < t->nattrs; i++)
        if (t->attrs[i].name.len == strlen(name) && memcmp(t->attrs[i].name.s, name, t->attrs[i].name.len) == 0)
            return &t->attrs[i];
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
        while (q < d->nenum && !(d->enum_ids[q].len == j->u.str.len && !memcmp(d->enum_ids[q].s, j->u.str.s, j->u.str.len))) q++;
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
                if (t->attrs[q].name.len == mb->key.len && !memcmp(t->attrs[q].name.s, mb->key.s, mb->key.len)) ft = t->attrs[q].type;
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
    const dw_attr_decl *in_d = ad ? record_attr(ad->context, "input") : NULL;
    const dw_attr_decl *out_d = ad ? record_attr(ad->context, "output") : NULL;
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
    const dw_json *action = dw_json_get(j, "action"), *kind = dw_json_get(j, "kind"), *ns = dw_json_get(j, "namespace");
    const dw_json *time = dw_json_get(j, "time");
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
    const dw_json *pj = dw_json_get(j, "principal"), *rj = dw_json_get(j, "resource");
    dw_buf err = { 0 };
    if (pj) P = dw_uid_from_json(&e->scratch, pj, &err);
    if (rj) R = dw_uid_from_json(&e->scratch, rj, &err);
    dw_buf_free(&err);
    if (engine_build_event(e, b, atype, strlen(atype), action->u.str.s, action->u.str.len, kind->u.str.s, kind->u.str.len,
                    P, R, dw_json_get(j, "input"), dw_json_get(j, "output"), dw_json_get(j, "request_id"),
                    v->message, sizeof v->message) ||
        (e->s.box && dw_box_gate(j, P, R, v->message, sizeof v->message))) {
        v->allow = false;          /* a gate failure: denied and not recorded (box.md §6.1) */
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return -2;
    }
    return 0;
}
