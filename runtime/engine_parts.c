/* engine_parts.c - events given by their parts (dogwood.h:
 * dw_engine_decide_event): the `.log` replay's entry point. */
#include "engine_int.h"
#include "value_conform.h"

/* ---- events given by their parts (dogwood.h: dw_engine_decide_event) ----
 * Used by the `.log` replay (runtime/trace_log.c).  Unlike the Box forms it
 * does not mirror the scope into the logged record (§20 Q3), takes the
 * request context groups verbatim (§15.1 step 5), builds a per-event entity
 * store (step 7) and gives Cedar's verdict (§15.2) rather than Box's mapping. */

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
    dw_value cctx;
    dw_buf err = { 0 };
    /* without request validation the context is taken as given, like the reference's schema-less request */
    const dw_type *ctype = ad && !e->no_request_validation ? ad->context : NULL;
    int crc = dw_value_conform(a, ectx, ctype, false, &cctx, &err);
    if (crc) {
        if (crc == -2) engine_fault(v, "request context: out of memory or nested too deeply%s", NULL);
        else engine_fault(v, "request does not conform to the schema: context: %s", err.p ? err.p : "?");
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
     * entities without attributes, then the schema's actions; without request
     * validation the entities are taken untyped, as the reference's schema-less request */
    dw_store st;
    dw_store_init(&st);
    int src = dw_store_load_event_entities(&st, in->entities, in->nentities, in->principal, in->resource, schema,
                                           !e->no_request_validation, &err);
    if (src) {
        engine_fault(v, "entities: %s", src == -2 ? "out of memory or nested too deeply" : err.p ? err.p : "invalid");
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
