/* provider.c - see provider.h: argument resolution (§13.3), the built-in
 * providers (§13.5) and output conformance (§13.4). */
#include "provider.h"
#include <stdio.h>
#include <string.h>
#include "vm.h"
#include "../stdlib/regex.h"
#include "../stdlib/utf8.h"

/* Steps of regex matching one built-in call may take (stdlib/regex.h): a
 * few tens of milliseconds; beyond it the call fails (deny). */
#define DW_PROVIDER_REGEX_BUDGET 20000000u

static const char *const builtin_names[] = { "Strings::Matches", "Strings::Length", "Strings::DigitCount", "Regex::Analyze" };

bool dw_provider_is_builtin(const char *name, size_t nlen)
{
    for (size_t i = 0; i < sizeof builtin_names / sizeof builtin_names[0]; i++)
        if (strlen(builtin_names[i]) == nlen && memcmp(builtin_names[i], name, nlen) == 0) return true;
    return false;
}

/* A record of n fields (keys static text). */
static int make_rec(dw_arena *a, dw_value *out, uint32_t n, const char *const *keys, const dw_value *vals)
{
    dw_field *f = dw_arena_alloc(a, n * sizeof *f);
    if (!f) return -1;
    for (uint32_t i = 0; i < n; i++) {
        f[i].key = keys[i];
        f[i].klen = (uint32_t)strlen(keys[i]);
        f[i].khash = dw_key_hash(keys[i], f[i].klen);
        f[i].v = vals[i];
    }
    return dw_make_record(f, n, out) ? 0 : -1;
}

/* A string argument: Null is "" (§13.5); anything else is an error. */
static int text_arg(const dw_value *v, int pos, const char **s, size_t *n, char *err, size_t cap)
{
    if (v->kind == DW_V_NULL) { *s = ""; *n = 0; return 0; }
    if (v->kind != DW_V_STRING) {
        snprintf(err, cap, "argument %d is %s, expected a String", pos, dw_vkind_name((dw_vkind)v->kind));
        return -1;
    }
    *s = v->u.s;
    *n = v->n;
    return 0;
}

/* Run the pattern over the text: matched, the count of non-overlapping
 * matches (count_all) and the first match's span. */
static int regex_scan(const char *pat, size_t plen, const char *t, size_t tn, bool count_all,
                      bool *matched, int64_t *count, size_t *fs, size_t *fe, char *err, size_t cap)
{
    char rerr[160];
    dw_regex *re = dw_regex_compile(pat, plen, rerr, sizeof rerr);
    if (!re) { snprintf(err, cap, "invalid pattern: %s", rerr); return -1; }
    uint64_t budget = DW_PROVIDER_REGEX_BUDGET;
    *matched = false;
    *count = 0;
    size_t from = 0;
    int rc = 0;
    while (from <= tn) {
        size_t s, e;
        rc = dw_regex_search(re, t, tn, from, &s, &e, &budget);
        if (rc <= 0) break;
        if (!*matched) { *fs = s; *fe = e; }
        *matched = true;
        (*count)++;
        if (!count_all) break;
        if (e > s) from = e;
        else {                       /* an empty match: step over one character */
            if (e >= tn) break;
            size_t l = dw_utf8_len((const unsigned char *)t + e, tn - e);
            from = e + (l ? l : 1);
        }
    }
    dw_regex_free(re);
    if (rc < 0) {
        snprintf(err, cap, "the pattern exceeded its matching budget of %u steps (or memory ran out)", DW_PROVIDER_REGEX_BUDGET);
        return -1;
    }
    return 0;
}

int dw_provider_builtin(const char *name, size_t nlen, const dw_value *args, uint32_t nargs, dw_arena *a,
                        dw_value *out, char *err, size_t cap)
{
    int which = -1;
    for (int i = 0; i < (int)(sizeof builtin_names / sizeof builtin_names[0]); i++)
        if (strlen(builtin_names[i]) == nlen && memcmp(builtin_names[i], name, nlen) == 0) which = i;
    if (which < 0) return 0;
    const char *fn = builtin_names[which];
    uint32_t want = which == 0 || which == 3 ? 2 : 1;
    if (nargs != want) { snprintf(err, cap, "%s takes %u argument(s), got %u", fn, want, nargs); return -1; }
    const char *t, *pat = NULL;
    size_t tn, pn = 0;
    if (text_arg(&args[0], 1, &t, &tn, err, cap)) return -1;
    bool null_pattern = want == 2 && args[1].kind == DW_V_NULL;
    if (want == 2 && !null_pattern && text_arg(&args[1], 2, &pat, &pn, err, cap)) return -1;
    switch (which) {
    case 0: {                                     /* Strings::Matches */
        bool m = false;
        int64_t c;
        size_t s, e;
        if (!null_pattern && regex_scan(pat, pn, t, tn, false, &m, &c, &s, &e, err, cap)) return -1;
        static const char *const k[] = { "matched" };
        dw_value v[] = { dw_bool(m) };
        return make_rec(a, out, 1, k, v) ? -1 : 1;
    }
    case 1: {                                     /* Strings::Length: Unicode scalar values */
        int64_t n = 0;
        for (size_t i = 0; i < tn; n++) {
            size_t l = dw_utf8_len((const unsigned char *)t + i, tn - i);
            i += l ? l : 1;
        }
        static const char *const k[] = { "length" };
        dw_value v[] = { dw_long(n) };
        return make_rec(a, out, 1, k, v) ? -1 : 1;
    }
    case 2: {                                     /* Strings::DigitCount: ASCII digits */
        int64_t n = 0;
        for (size_t i = 0; i < tn; i++) n += t[i] >= '0' && t[i] <= '9';
        static const char *const k[] = { "count" };
        dw_value v[] = { dw_long(n) };
        return make_rec(a, out, 1, k, v) ? -1 : 1;
    }
    default: {                                    /* Regex::Analyze */
        bool m = false;
        int64_t c = 0;
        size_t s = 0, e = 0;
        if (!null_pattern && regex_scan(pat, pn, t, tn, true, &m, &c, &s, &e, err, cap)) return -1;
        dw_value first;
        if (!dw_make_string(a, m ? t + s : "", m ? e - s : 0, &first)) return -1;
        static const char *const k[] = { "is_match", "count", "first_match" };
        dw_value v[] = { dw_bool(m), dw_long(c), first };
        return make_rec(a, out, 3, k, v) ? -1 : 1;
    }
    }
}

/* ---- arguments (§13.3) ---- */

static const dw_value *path_in(const dw_program *p, const dw_value *v, const uint32_t *segs, uint32_t n)
{
    for (uint32_t i = 0; v && i < n; i++) {
        const dw_str *s = &p->strs[segs[i]];
        v = v->kind == DW_V_RECORD ? dw_record_get_h(v, s->s, s->len, p->str_hash[segs[i]]) : NULL;
    }
    return v;
}

static const dw_value NULL_VALUE = { .kind = DW_V_NULL };

static int resolve_arg(const dw_program *p, const dw_parg *g, const dw_request *req, dw_arena *a, dw_value *out)
{
    const uint32_t *segs = p->provider.segs + g->a;
    *out = NULL_VALUE;
    if (g->kind == DW_PARG_CONST) { *out = p->consts[g->a]; return 0; }
    if (g->kind == DW_PARG_CONTEXT) {
        const dw_value *v = path_in(p, &req->vars[DW_VAR_C], segs, g->n);
        if (!v && g->n > 1) v = path_in(p, &req->vars[DW_VAR_C], segs + g->n - 1, 1);   /* the last segment alone */
        if (v) *out = *v;
        return 0;
    }
    int var = g->kind == DW_PARG_PRINCIPAL ? 0 : 2;
    const dw_value *self = &req->vars[var];
    if (g->n == 0) { *out = *self; return 0; }
    const dw_entity *ent = req->ent[var];
    const dw_str *s0 = &p->strs[segs[0]];
    const dw_value *v = ent ? dw_record_get_h(&ent->attrs, s0->s, s0->len, p->str_hash[segs[0]]) : NULL;
    if (v) v = path_in(p, v, segs + 1, g->n - 1);
    else if (g->n == 1 && self->kind == DW_V_ENTITY && (dw_bytes_cmp(s0->s, s0->len, "id", 2) == 0 || dw_bytes_cmp(s0->s, s0->len, "type", 4) == 0)) {
        bool id = s0->len == 2;
        const dw_uid *u = self->u.uid;
        return dw_make_string(a, id ? u->id : u->type, id ? u->idlen : u->tlen, out) ? 0 : -1;
    }
    if (v) *out = *v;
    return 0;
}

/* ---- output conformance (§13.4) ---- */

static int conform(const dw_program *p, uint32_t ti, const dw_value *v, dw_arena *a, dw_value *out, int depth,
                   char *err, size_t cap)
{
    const dw_ptype *t = &p->provider.types[ti];
    static const char *const tname[DW_V__COUNT] = {
        [DW_V_BOOL] = "Bool", [DW_V_LONG] = "Long", [DW_V_STRING] = "String", [DW_V_DECIMAL] = "decimal",
        [DW_V_SET] = "a set", [DW_V_RECORD] = "a record",
    };
    if (depth > 128) { snprintf(err, cap, "the result nests too deeply"); return -1; }
    *out = *v;
    if (v->kind == t->kind && t->kind != DW_V_SET && t->kind != DW_V_RECORD) return 0;
    if (t->kind == DW_V_STRING && v->kind == DW_V_NULL) return dw_make_string(a, "", 0, out) ? 0 : -1;   /* §20 Q15 */
    if (t->kind == DW_V_DECIMAL && v->kind == DW_V_STRING) {
        int64_t d;
        if (dw_decimal_parse(v->u.s, v->n, &d)) { out->kind = DW_V_DECIMAL; out->n = 0; out->u.i = d; return 0; }
    }
    if (t->kind == DW_V_SET && (v->kind == DW_V_SET || v->kind == DW_V_ARRAY)) {
        dw_value *el = v->n ? dw_arena_alloc(a, v->n * sizeof *el) : NULL;
        if (v->n && !el) return -1;
        for (uint32_t i = 0; i < v->n; i++)
            if (conform(p, t->elem, &v->u.elems[i], a, &el[i], depth + 1, err, cap)) return -1;
        *out = dw_make_set(el, v->n);
        return 0;
    }
    if (t->kind == DW_V_RECORD && v->kind == DW_V_RECORD) {
        dw_field *f = v->n ? dw_arena_alloc(a, v->n * sizeof *f) : NULL;
        if (v->n && !f) return -1;
        for (uint32_t i = 0; i < v->n; i++) {
            const dw_field *src = &v->u.fields[i];
            const dw_pfield *d = NULL;
            for (uint32_t k = 0; k < t->nfields && !d; k++) {
                const dw_pfield *c = &p->provider.fields[t->first_field + k];
                if (dw_bytes_cmp(p->strs[c->name].s, p->strs[c->name].len, src->key, src->klen) == 0) d = c;
            }
            if (!d) { snprintf(err, cap, "the result has the undeclared attribute `%.*s`", (int)src->klen, src->key); return -1; }
            f[i] = *src;
            if (conform(p, d->type, &src->v, a, &f[i].v, depth + 1, err, cap)) return -1;
        }
        for (uint32_t k = 0; k < t->nfields; k++) {
            const dw_pfield *c = &p->provider.fields[t->first_field + k];
            if (c->required && !dw_record_get(v, p->strs[c->name].s, p->strs[c->name].len)) {
                snprintf(err, cap, "the result lacks the required attribute `%.*s`", (int)p->strs[c->name].len, p->strs[c->name].s);
                return -1;
            }
        }
        if (!dw_make_record(f, v->n, out)) { snprintf(err, cap, "the result has a duplicate attribute"); return -1; }
        return 0;
    }
    snprintf(err, cap, "the result is %s where %s is declared",
             v->kind < DW_V__COUNT && tname[v->kind] ? tname[v->kind] : dw_vkind_name((dw_vkind)v->kind), tname[t->kind]);
    return -1;
}

int dw_provider_eval(const dw_program *p, uint32_t k, const dw_request *req, const dw_store *store, dw_arena *scratch,
                     dw_provider_host_fn host, void *host_ctx, dw_value *out, char *err, size_t cap)
{
    (void)store;
    const dw_provider_tables *t = &p->provider;
    const dw_pcall *c = &t->calls[k];
    const dw_str *pname = &p->strs[t->steps[c->first_step].name];   /* verified: nsteps >= 1 */
    dw_value prev = NULL_VALUE;
    char buf[256];
    for (uint32_t s = 0; s < c->nsteps; s++) {
        const dw_pstep *st = &t->steps[c->first_step + s];
        uint32_t na = st->nargs + (s ? 1 : 0);
        dw_value *args = dw_arena_alloc(scratch, (na ? na : 1) * sizeof *args);
        if (!args) { snprintf(err, cap, "provider `%.*s`: out of memory", (int)pname->len, pname->s); return -1; }
        uint32_t o = 0;
        if (s) args[o++] = prev;
        for (uint32_t i = 0; i < st->nargs; i++)
            if (resolve_arg(p, &t->args[st->first_arg + i], req, scratch, &args[o++])) {
                snprintf(err, cap, "provider `%.*s`: out of memory", (int)pname->len, pname->s);
                return -1;
            }
        /* the callback's name: "Ns::Fn", or "Ns::Fn.m" for an output method */
        const dw_str *sn = &p->strs[st->name];
        size_t nlen = s ? pname->len + 1 + sn->len : pname->len;
        char *name = dw_arena_alloc(scratch, nlen + 1);
        if (!name) { snprintf(err, cap, "provider `%.*s`: out of memory", (int)pname->len, pname->s); return -1; }
        memcpy(name, pname->s, pname->len);
        if (s) { name[pname->len] = '.'; memcpy(name + pname->len + 1, sn->s, sn->len); }
        name[nlen] = 0;
        dw_value v;
        buf[0] = 0;
        int rc = host ? host(host_ctx, name, nlen, args, na, scratch, &v, buf, sizeof buf) : 0;
        if (rc == 0 && s == 0) rc = dw_provider_builtin(name, nlen, args, na, scratch, &v, buf, sizeof buf);
        if (rc == 0) {
            snprintf(err, cap, "provider `%s`: no implementation (register a host callback for it, dogwood.md §13.5)", name);
            return -1;
        }
        if (rc < 0) {
            snprintf(err, cap, "provider `%s` failed: %s", name, buf[0] ? buf : "(no message)");
            return -1;
        }
        if (conform(p, st->out, &v, scratch, &prev, 0, buf, sizeof buf)) {
            snprintf(err, cap, "provider `%s`: its result does not conform to the declared output type: %s", name,
                     buf[0] ? buf : "out of memory");
            return -1;
        }
    }
    *out = prev;
    return 0;
}
