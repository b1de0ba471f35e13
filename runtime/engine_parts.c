/* engine_parts.c - events given by their parts (dogwood.h:
 * dw_engine_decide_event): the `.log` replay's entry point. */
#include "engine_int.h"

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
        engine_fault(v, "decision event has no %s in scope", in->principal ? "resource" : "principal");
        return;
    }
    const dw_action_decl *ad = schema ? dw_schema_action(schema, in->atype, in->atype_len, in->aid, in->aid_len) : NULL;
    if (schema && !ad) {
        char m[200];
        snprintf(m, sizeof m, "%.*s::\"%.*s\"", (int)in->atype_len, in->atype, (int)in->aid_len, in->aid);
        engine_fault(v, "action %s is not declared in the schema", m);
        return;
    }
    /* step 5: the Cedar context = the request-context groups (+ hoisted leaves, via the LEAF instruction) */
    dw_value empty = { .kind = DW_V_RECORD };
    const dw_value *ectx = in->context && in->context->kind == DW_V_RECORD ? in->context : &empty;
    dw_json *cj = ev_json(a, ectx, false, 0);
    if (!cj) { engine_fault(v, "request context: out of memory or nested too deeply%s", NULL); return; }
    dw_value cctx;
    dw_buf err = { 0 };
    /* without request validation the context is taken as given, like the reference's schema-less request */
    const dw_type *ctype = ad && !e->no_request_validation ? ad->context : NULL;
    if (dw_value_from_json(a, cj, ctype, &cctx, &err)) {
        engine_fault(v, "request does not conform to the schema: context: %s", err.p ? err.p : "?");
        strip_offsets(v->message);
        dw_buf_free(&err);
        return;
    }
    /* step 6: principal and resource types */
    if (ad && !e->no_request_validation) {
        bool pok = dw_type_listed(ad->principals, ad->nprincipals, in->principal);
        bool rok = dw_type_listed(ad->resources, ad->nresources, in->resource);
        if (!pok || !rok) {
            engine_fault(v, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal");
            return;
        }
    }
    /* step 7: the per-event entity store: supplied entities, then the scope
     * entities without attributes, then the schema's actions */
    size_t ne = in->nentities + 2, n = 0;
    dw_json *arr = dw_arena_alloc(a, sizeof *arr);
    dw_json **items = dw_arena_alloc(a, ne * sizeof *items);
    if (!arr || !items) { engine_fault(v, "entities: out of memory%s", NULL); return; }
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
        if (!o || !m || !uj) { engine_fault(v, "entities: out of memory%s", NULL); return; }
        size_t nm = 0;
        m[nm++] = (dw_json_member){ { "uid", 3 }, uj, 0 };
        if (attrs) {
            dw_json *aj = ev_json(a, attrs, true, 0);
            if (!aj) { engine_fault(v, "entities: out of memory or nested too deeply%s", NULL); return; }
            m[nm++] = (dw_json_member){ { "attrs", 5 }, aj, 0 };
        }
        if (np) {
            dw_json *pj = dw_arena_alloc(a, sizeof *pj);
            dw_json **pv = dw_arena_alloc(a, np * sizeof *pv);
            if (!pj || !pv) { engine_fault(v, "entities: out of memory%s", NULL); return; }
            for (uint32_t q = 0; q < np; q++)
                if (!(pv[q] = uid_json(a, parents[q]))) { engine_fault(v, "entities: out of memory%s", NULL); return; }
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
    /* without request validation the entities are taken untyped, as the reference's schema-less request */
    if ((e->no_request_validation ? dw_store_load_json_unchecked : dw_store_load_json)(&st, arr, schema, &err)) {
        engine_fault(v, "entities: %s", err.p ? err.p : "invalid");
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
    if (!req.vars[DW_VAR_A].u.uid || !ev_carry(a, ectx, &lctx, 0)) { engine_fault(v, "request: out of memory%s", NULL); dw_store_free(&st); return; }
    req.vars[DW_VAR_C] = cctx;
    dw_request_bind(&req, e->s.prog, &st);
    dw_response resp;
    int rc = engine_authorize(e, &st, &req, &lctx, &resp, v);
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

int engine_decide_event_locked(dw_engine *e, const dw_event_input *in, dw_verdict *v)
{
    engine_verdict_init(v);
    if (!e || !in || !e->s.prog) { snprintf(v->message, sizeof v->message, "no event"); return -1; }
    if (engine_refuse_lost(e, v)) return 0;
    dw_arena_reset(&e->scratch);
    built b;
    memset(&b, 0, sizeof b);
    b.ev.atype = (dw_str){ in->atype, in->atype_len };
    b.ev.aid = (dw_str){ in->aid, in->aid_len };
    b.ev.kind = (dw_str){ in->kind, in->kind_len };
    b.decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, in->kind, in->kind_len)
                         : (in->kind_len == 7 && !memcmp(in->kind, "request", 7));
    v->decided = b.decision;
    dw_value empty = { .kind = DW_V_RECORD };
    if (!ev_carry(&e->scratch, in->logged && in->logged->kind == DW_V_RECORD ? in->logged : &empty, &b.ev.logged, 0)) {
        engine_fault(v, "event: out of memory or nested too deeply%s", NULL);
        return 0;
    }
    if (e->replay_ts && in->ts != DW_TS_NOW) {
        e->last_ts = in->ts;
        e->have_ts = true;
        v->timestamp = in->ts;
    } else v->timestamp = engine_stamp(e, in->ts);
    if (engine_history_append(e, &b, v->timestamp)) { engine_history_lost(e, v); return 0; }
    if (b.decision) decide_parts(e, in, v);
    engine_history_retain(e);
    return 0;
}
