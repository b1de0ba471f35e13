/* engine_providers.c - the engine's provider pass (dogwood.md §15.1 step 4)
 * and its registry of host callbacks (dw_engine_register_provider,
 * runtime/dogwood.h).  For a decision, the call sites of every rule whose
 * scope admits the request are evaluated (D3), a registered callback first,
 * else a built-in (vm/provider.c); any failure denies with the provider's
 * error.  Callbacks see their arguments and give their result as JSON in
 * Cedar's value form (an entity {"__entity": {"type", "id"}}, a decimal
 * {"__extn": {"fn": "decimal", "arg": "1.5"}}, a set an array, Null null). */
#include "engine_int.h"
#include "json_value.h"
#include "../lang/json.h"
#include "../vm/provider.h"

typedef struct provider_entry { char *name; dw_provider_fn fn; void *ud; } provider_entry;
struct engine_providers { provider_entry *v; uint32_t n, cap; };

/* Results larger than this are an error (a callback must bound itself, §19). */
#define DW_PROVIDER_MAX_RESULT (1u << 20)

int dw_engine_register_provider(dw_engine *e, const char *name, dw_provider_fn fn, void *ud)
{
    if (!e || !name || !name[0]) return -1;
    pthread_mutex_lock(&e->mu);
    int rc = 0;
    struct engine_providers *r = e->providers;
    if (!r && !(r = e->providers = calloc(1, sizeof *r))) rc = -1;
    uint32_t i = 0;
    while (!rc && i < r->n && strcmp(r->v[i].name, name)) i++;
    if (rc) ;
    else if (i < r->n) {
        if (fn) r->v[i].fn = fn, r->v[i].ud = ud;
        else { free(r->v[i].name); r->v[i] = r->v[--r->n]; }       /* NULL fn: unregister */
    } else if (fn) {
        char *copy = strdup(name);
        if (r->n == r->cap) {
            uint32_t cap = r->cap ? r->cap * 2 : 8;
            provider_entry *v = realloc(r->v, cap * sizeof *v);
            if (v) r->v = v, r->cap = cap;
        }
        if (!copy || r->n == r->cap) { free(copy); rc = -1; }
        else r->v[r->n++] = (provider_entry){ copy, fn, ud };
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void engine_providers_free(dw_engine *e)
{
    struct engine_providers *r = e->providers;
    if (!r) return;
    for (uint32_t i = 0; i < r->n; i++) free(r->v[i].name);
    free(r->v);
    free(r);
    e->providers = NULL;
}

static int value_json(dw_buf *b, const dw_value *v, int depth)
{
    if (depth > 128) return -1;
    switch (v->kind) {
    case DW_V_BOOL: return dw_buf_printf(b, v->u.b ? "true" : "false");
    case DW_V_LONG: return dw_buf_printf(b, "%" PRId64, v->u.i);
    case DW_V_STRING: return dw_json_escape_buf(b, v->u.s, v->n, DW_JSON_REPLACE);
    case DW_V_NULL: return dw_buf_printf(b, "null");
    case DW_V_ENTITY:
        if (dw_buf_printf(b, "{\"__entity\":{\"type\":") || dw_json_escape_buf(b, v->u.uid->type, v->u.uid->tlen, DW_JSON_REPLACE) ||
            dw_buf_printf(b, ",\"id\":") || dw_json_escape_buf(b, v->u.uid->id, v->u.uid->idlen, DW_JSON_REPLACE))
            return -1;
        return dw_buf_printf(b, "}}");
    case DW_V_DECIMAL: {
        char d[40];
        dw_decimal_format(v->u.i, d, sizeof d);
        return dw_buf_printf(b, "{\"__extn\":{\"fn\":\"decimal\",\"arg\":\"%s\"}}", d);
    }
    case DW_V_SET: case DW_V_ARRAY:
        if (dw_buf_putc(b, '[')) return -1;
        for (uint32_t i = 0; i < v->n; i++)
            if ((i && dw_buf_putc(b, ',')) || value_json(b, &v->u.elems[i], depth + 1)) return -1;
        return dw_buf_putc(b, ']');
    case DW_V_RECORD:
        if (dw_buf_putc(b, '{')) return -1;
        for (uint32_t i = 0; i < v->n; i++) {
            const dw_field *f = &v->u.fields[i];
            if ((i && dw_buf_putc(b, ',')) || dw_json_escape_buf(b, f->key, f->klen, DW_JSON_REPLACE) || dw_buf_putc(b, ':') ||
                value_json(b, &f->v, depth + 1))
                return -1;
        }
        return dw_buf_putc(b, '}');
    default: {     /* ipaddr, datetime, duration: Cedar's text form through dw_value_print */
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        if (!f) return -1;
        dw_value_print(f, v);
        fclose(f);
        int rc = dw_json_escape_buf(b, s, n, DW_JSON_REPLACE);
        free(s);
        return rc;
    }
    }
}

/* The vm's host hook (vm/provider.h): look the name up, call with JSON. */
static int call_host(void *ctx, const char *name, size_t nlen, const dw_value *args, uint32_t nargs, dw_arena *a,
                     dw_value *out, char *err, size_t errcap)
{
    dw_engine *e = ctx;
    struct engine_providers *r = e->providers;
    const provider_entry *pe = NULL;
    for (uint32_t i = 0; r && i < r->n && !pe; i++)
        if (strlen(r->v[i].name) == nlen && memcmp(r->v[i].name, name, nlen) == 0) pe = &r->v[i];
    if (!pe) return 0;
    dw_buf in = { 0 };
    int rc = dw_buf_putc(&in, '[');
    for (uint32_t i = 0; !rc && i < nargs; i++) rc = (i && dw_buf_putc(&in, ',')) || value_json(&in, &args[i], 0);
    if (rc || dw_buf_putc(&in, ']') || dw_buf_putc(&in, 0)) { dw_buf_free(&in); snprintf(err, errcap, "out of memory (or arguments nested too deeply)"); return -1; }
    /* the callback is pure (§13.4), so a result too large for the buffer is asked for again */
    size_t cap = 4096;
    char *res = NULL;
    long n = -1;
    for (int tries = 0; tries < 2; tries++) {
        char *nb = dw_arena_alloc_raw(a, cap + 1);
        if (!nb) { dw_buf_free(&in); snprintf(err, errcap, "out of memory"); return -1; }
        nb[0] = 0;
        n = pe->fn(pe->ud, pe->name, in.p, in.len - 1, nb, cap);
        res = nb;
        if (n < 0 || (size_t)n < cap) break;
        if ((size_t)n > DW_PROVIDER_MAX_RESULT) break;
        cap = (size_t)n + 1;
    }
    dw_buf_free(&in);
    if (n < 0) {
        res[cap] = 0;
        snprintf(err, errcap, "%s", res[0] ? res : "the host callback failed");
        return -1;
    }
    if ((size_t)n >= cap) { snprintf(err, errcap, "the host callback's result is too large (%ld bytes)", n); return -1; }
    dw_source src = { name, res, (size_t)n };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(a, &src, &d);
    if (!j) {
        snprintf(err, errcap, "the host callback returned invalid JSON%s%s", d.n ? ": " : "", d.n ? d.v[0].msg : "");
        dw_diags_free(&d);
        return -1;
    }
    dw_diags_free(&d);
    dw_buf jerr = { 0 };
    if (dw_value_from_json(a, j, NULL, out, &jerr)) {
        snprintf(err, errcap, "the host callback returned a value dwc cannot read: %s", jerr.p ? jerr.p : "out of memory");
        dw_buf_free(&jerr);
        return -1;
    }
    dw_buf_free(&jerr);
    return 1;
}

/* Called by engine_evaluate_providers (engine_int.h) when the set has provider calls. */
int engine_provider_pass(dw_engine *e, const dw_store *store, dw_request *req, dw_verdict *v)
{
    const dw_program *p = e->s.prog;
    const dw_provider_tables *t = &p->provider;
    dw_value *vals = dw_arena_alloc_raw(&e->scratch, t->ncalls * sizeof *vals);
    dw_value *stack = dw_arena_alloc_raw(&e->scratch, (p->max_stack + 1) * sizeof *stack);
    if (!vals || !stack) { engine_fault(v, "provider evaluation: out of memory%s", NULL); return -1; }
    for (uint32_t k = 0; k < t->ncalls; k++) vals[k] = (dw_value){ .kind = DW_V_NULL };   /* not evaluated */
    req->prov_values = vals;
    req->nprov_values = t->ncalls;
    dw_eval_ctx cx = { .prog = p, .store = store, .req = req, .scratch = &e->scratch, .stack = stack };
    for (uint32_t k = 0; k < t->ncalls;) {
        uint32_t pi = t->calls[k].policy;
        const dw_policy_code *pc = &p->policies[pi];
        bool in_scope = false;
        if (dw_eval_code(&cx, pc->scope_entry, &in_scope) != DW_EVAL_OK) {
            engine_fault(v, "provider evaluation: scope test failed%s", NULL);
            return -1;
        }
        uint32_t end = pc->first_pcall + pc->npcalls;
        for (; in_scope && k < end; k++) {
            char err[200];
            if (dw_provider_eval(p, k, req, store, &e->scratch, call_host, e, &vals[k], err, sizeof err)) {
                char msg[sizeof v->message];
                snprintf(msg, sizeof msg, "provider evaluation: context.providers.policy_%u_p_%u: %s", pi, t->calls[k].ordinal, err);
                engine_fault(v, "%s", msg);
                return -1;
            }
        }
        k = end > k ? end : k;
    }
    return 0;
}
