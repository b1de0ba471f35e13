/* libFuzzer target, structure-aware: the input bytes are the choices of a
 * generator of *valid* inputs, so every run gets past the parsers.  From the
 * bytes it writes
 *   - a Cedar schema (human syntax): 2-4 entity types with typed, sometimes
 *     optional attributes and an acyclic memberOf relation; 1-3 actions with
 *     appliesTo and a typed context;
 *   - 1-6 policies whose conditions are well typed against that schema:
 *     arithmetic (with overflow edges), comparisons, `like`, `has`, `in`,
 *     `is`, sets, records, if-then-else, ip/decimal/datetime/duration calls;
 *   - an entity store (JSON) and 1-4 requests (JSON), both checked against
 *     the schema by the loaders.
 * Then: source -> parse -> validate -> compile -> artifact write -> load and
 * verify -> decide each request, and checks the invariants:
 *   - the decision index on and off decide identically (decision, reasons,
 *     errors with their kinds);
 *   - the program loaded from its artifact decides exactly as the in-memory
 *     one, and as a copy of it without the load-time fast paths
 *     (vm/eval_plan.c: attribute-path plans and their memo, `like`'s rare
 *     bytes; as tests/unit/test_eval_plan.c does);
 *   - errors deny: an erroring policy is never a reason; an allow has a
 *     satisfied permit and no satisfied forbid;
 *   - a generated policy set parses and compiles (the generator writes valid
 *     Dogwood), and every generated entity store and request loads.
 * Any violation aborts (a libFuzzer crash with the input saved).  Set
 * DW_FUZZ_PRINT=1 to print the generated texts of the inputs given. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/artifact_write.h"
#include "compiler/compile.h"
#include "compiler/typecheck.h"
#include "lang/json.h"
#include "lang/schema.h"
#include "runtime/json_value.h"
#include "vm/artifact.h"
#include "vm/vm.h"

/* ---------------------------------------------------------------- choices */

typedef struct rd { const uint8_t *p; size_t n, i; } rd;

/* A choice in [0, n): one byte (two when n > 256); 0 once the input is spent. */
static unsigned pick(rd *r, unsigned n)
{
    if (n <= 1 || r->i >= r->n) return 0;
    unsigned v = r->p[r->i++];
    if (n > 256 && r->i < r->n) v = v << 8 | r->p[r->i++];
    return v % n;
}

/* ---------------------------------------------------------------- output text */

typedef struct sb { char *p; size_t n, cap; } sb;

static void put(sb *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) abort();
        if (b->p && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) abort();
        b->p = np;
        b->cap = cap;
    }
}

/* ---------------------------------------------------------------- the schema model */

typedef enum ty {
    T_BOOL, T_LONG, T_STRING, T_SETL, T_SETS, T_REC, T_IP, T_DEC, T_ENT, T__N
} ty;

typedef struct attr { char name[8]; ty t; int ent; bool opt; } attr;   /* ent: entity type when t == T_ENT */

#define MAX_ET 4
#define MAX_AT 4
#define MAX_ACT 3
#define MAX_IDS 3

typedef struct etype {
    char name[8];
    attr at[MAX_AT]; int nat;
    bool parent[MAX_ET];      /* memberOf: only types of higher index (acyclic) */
    int nids;
} etype;

typedef struct action {
    char name[8];
    bool prin[MAX_ET], res[MAX_ET];
    attr ctx[MAX_AT]; int nctx;
} action;

typedef struct model {
    etype et[MAX_ET]; int net;
    action act[MAX_ACT]; int nact;
} model;

static const char *const ids[MAX_IDS] = { "a", "b", "c" };
static const char *const strs[] = { "", "a", "b", "ab", "a*b", "\\u{e9}t\\u{e9}", "x\\ny", "\\0" };
static const char *const strs_json[] = { "", "a", "b", "ab", "a*b", "\\u00e9t\\u00e9", "x\\ny", "\\u0000" };
static const char *const patterns[] = { "*", "a*", "*b", "a\\*b", "", "?", "*\\u{e9}*", "a**b" };
static const char *const ips[] = { "10.0.0.1", "127.0.0.1", "192.168.0.0/16", "::1", "10.0.0.0/8", "ffff::/16" };
static const char *const decs[] = { "0.0", "1.5", "-2.25", "922337203685477.5807", "0.0001" };
static const char *const longs[] = { "0", "1", "-1", "2", "7", "9223372036854775807", "-9223372036854775808", "100" };
static const char *const dts[] = { "2024-01-01", "2024-01-01T12:00:00Z", "1970-01-01", "2024-02-29T23:59:59.999+0100" };
static const char *const durs[] = { "1h", "-1d2h", "0ms", "90m", "1d" };

static ty pick_attr_type(rd *r) { return (ty)pick(r, T__N); }

static void gen_model(rd *r, model *m)
{
    m->net = 2 + (int)pick(r, MAX_ET - 1);
    for (int e = 0; e < m->net; e++) {
        etype *t = &m->et[e];
        snprintf(t->name, sizeof t->name, "E%d", e);
        t->nat = (int)pick(r, MAX_AT + 1);
        for (int k = 0; k < t->nat; k++) {
            attr *a = &t->at[k];
            snprintf(a->name, sizeof a->name, "x%d", k);
            a->t = pick_attr_type(r);
            a->ent = (int)pick(r, (unsigned)m->net);
            a->opt = pick(r, 3) == 0;
        }
        for (int p = e + 1; p < m->net; p++) t->parent[p] = pick(r, 2);
        t->nids = 1 + (int)pick(r, MAX_IDS);
    }
    m->nact = 1 + (int)pick(r, MAX_ACT);
    for (int k = 0; k < m->nact; k++) {
        action *a = &m->act[k];
        snprintf(a->name, sizeof a->name, "act%d", k);
        bool any_p = false, any_r = false;
        for (int e = 0; e < m->net; e++) {
            a->prin[e] = pick(r, 2); any_p |= a->prin[e];
            a->res[e] = pick(r, 2); any_r |= a->res[e];
        }
        if (!any_p) a->prin[pick(r, (unsigned)m->net)] = true;
        if (!any_r) a->res[pick(r, (unsigned)m->net)] = true;
        a->nctx = (int)pick(r, MAX_AT + 1);
        for (int c = 0; c < a->nctx; c++) {
            snprintf(a->ctx[c].name, sizeof a->ctx[c].name, "c%d", c);
            a->ctx[c].t = pick_attr_type(r);
            a->ctx[c].ent = (int)pick(r, (unsigned)m->net);
            a->ctx[c].opt = pick(r, 4) == 0;
        }
    }
}

static void put_type(sb *b, const model *m, const attr *a)
{
    switch (a->t) {
    case T_BOOL: put(b, "Bool"); break;
    case T_LONG: put(b, "Long"); break;
    case T_STRING: put(b, "String"); break;
    case T_SETL: put(b, "Set<Long>"); break;
    case T_SETS: put(b, "Set<String>"); break;
    case T_REC: put(b, "{ a: Long, b?: String }"); break;
    case T_IP: put(b, "ipaddr"); break;
    case T_DEC: put(b, "decimal"); break;
    case T_ENT: put(b, "%s", m->et[a->ent].name); break;
    default: abort();
    }
}

static void put_attrs(sb *b, const model *m, const attr *at, int n)
{
    put(b, "{");
    for (int k = 0; k < n; k++) {
        put(b, "%s %s%s: ", k ? "," : "", at[k].name, at[k].opt ? "?" : "");
        put_type(b, m, &at[k]);
    }
    put(b, " }");
}

static void put_schema(sb *b, const model *m)
{
    for (int e = 0; e < m->net; e++) {
        const etype *t = &m->et[e];
        put(b, "entity %s", t->name);
        bool any = false;
        for (int p = 0; p < m->net; p++)
            if (t->parent[p]) { put(b, "%s%s", any ? ", " : " in [", m->et[p].name); any = true; }
        if (any) put(b, "]");
        put(b, " = ");
        put_attrs(b, m, t->at, t->nat);
        put(b, ";\n");
    }
    for (int k = 0; k < m->nact; k++) {
        const action *a = &m->act[k];
        put(b, "action \"%s\" appliesTo {\n  principal: [", a->name);
        bool first = true;
        for (int e = 0; e < m->net; e++) if (a->prin[e]) { put(b, "%s%s", first ? "" : ", ", m->et[e].name); first = false; }
        put(b, "],\n  resource: [");
        first = true;
        for (int e = 0; e < m->net; e++) if (a->res[e]) { put(b, "%s%s", first ? "" : ", ", m->et[e].name); first = false; }
        put(b, "],\n  context: ");
        put_attrs(b, m, a->ctx, a->nctx);
        put(b, "\n};\n");
    }
}

/* ---------------------------------------------------------------- well-typed expressions */

/* What a policy's condition may refer to: the action (its context type) and
 * the principal/resource types the scope pins (-1: not pinned, so their
 * attributes are out of reach). */
typedef struct env { const model *m; const action *act; int ptype, rtype; } env;

#define MAX_DEPTH 6

static void gen(rd *r, sb *b, const env *v, ty t, int ent, int depth);
static void gen_leaf(rd *r, sb *b, const env *v, ty t, int ent);

static void ent_lit(rd *r, sb *b, const model *m, int e)
{
    put(b, "%s::\"%s\"", m->et[e].name, ids[pick(r, MAX_IDS)]);
}

/* An attribute of type t reachable from the environment: writes an access
 * (guarded by `has` when optional, as validation requires) and returns true. */
static bool gen_attr(rd *r, sb *b, const env *v, ty t, int ent, int depth)
{
    struct cand { const char *base; const attr *a; } cand[3 * MAX_AT];
    int n = 0;
    const attr *ctx = v->act->ctx;
    for (int k = 0; k < v->act->nctx; k++)
        if (ctx[k].t == t && (t != T_ENT || ctx[k].ent == ent)) cand[n++] = (struct cand){ "context", &ctx[k] };
    if (v->ptype >= 0)
        for (int k = 0; k < v->m->et[v->ptype].nat; k++) {
            const attr *a = &v->m->et[v->ptype].at[k];
            if (a->t == t && (t != T_ENT || a->ent == ent)) cand[n++] = (struct cand){ "principal", a };
        }
    if (v->rtype >= 0)
        for (int k = 0; k < v->m->et[v->rtype].nat; k++) {
            const attr *a = &v->m->et[v->rtype].at[k];
            if (a->t == t && (t != T_ENT || a->ent == ent)) cand[n++] = (struct cand){ "resource", a };
        }
    if (!n) return false;
    int k = (int)pick(r, (unsigned)n);
    if (cand[k].a->opt) {
        put(b, "(if %s has %s then %s.%s else ", cand[k].base, cand[k].a->name, cand[k].base, cand[k].a->name);
        gen_leaf(r, b, v, t, ent);   /* a literal: attribute chains stay bounded */
        put(b, ")");
    } else put(b, "%s.%s", cand[k].base, cand[k].a->name);
    (void)depth;
    return true;
}

static void gen_leaf(rd *r, sb *b, const env *v, ty t, int ent)
{
    switch (t) {
    case T_BOOL: put(b, pick(r, 2) ? "true" : "false"); break;
    case T_LONG: put(b, "%s", longs[pick(r, sizeof longs / sizeof *longs)]); break;
    case T_STRING: put(b, "\"%s\"", strs[pick(r, sizeof strs / sizeof *strs)]); break;
    case T_SETL: put(b, "[%s, %s]", longs[pick(r, 4)], longs[pick(r, 4)]); break;
    case T_SETS: put(b, "[\"%s\"]", strs[pick(r, 4)]); break;
    case T_REC: put(b, "{a: %s}", longs[pick(r, 4)]); break;
    case T_IP: put(b, "ip(\"%s\")", ips[pick(r, sizeof ips / sizeof *ips)]); break;
    case T_DEC: put(b, "decimal(\"%s\")", decs[pick(r, sizeof decs / sizeof *decs)]); break;
    case T_ENT: ent_lit(r, b, v->m, ent); break;
    default: abort();
    }
}

static void gen_bool(rd *r, sb *b, const env *v, int depth)
{
    const model *m = v->m;
    switch (pick(r, 20)) {
    case 0: put(b, "!("); gen(r, b, v, T_BOOL, 0, depth + 1); put(b, ")"); return;
    case 1: case 2: {
        static const char *const ops[] = { "&&", "||" };
        put(b, "("); gen(r, b, v, T_BOOL, 0, depth + 1);
        put(b, " %s ", ops[pick(r, 2)]); gen(r, b, v, T_BOOL, 0, depth + 1); put(b, ")");
        return;
    }
    case 3: {
        static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
        put(b, "("); gen(r, b, v, T_LONG, 0, depth + 1);
        put(b, " %s ", ops[pick(r, 6)]); gen(r, b, v, T_LONG, 0, depth + 1); put(b, ")");
        return;
    }
    case 4: {
        ty t = (ty)pick(r, T__N);
        int e = (int)pick(r, (unsigned)m->net);
        put(b, "("); gen(r, b, v, t, e, depth + 1);
        put(b, pick(r, 2) ? " == " : " != "); gen(r, b, v, t, e, depth + 1); put(b, ")");
        return;
    }
    case 5: put(b, "("); gen(r, b, v, T_STRING, 0, depth + 1);
            put(b, " like \"%s\")", patterns[pick(r, sizeof patterns / sizeof *patterns)]); return;
    case 6: {   /* has: on an entity of a pinned type, on context, on a record */
        unsigned w = pick(r, 3);
        if (w == 0 && v->ptype >= 0 && m->et[v->ptype].nat) {
            put(b, "(principal has %s)", m->et[v->ptype].at[pick(r, (unsigned)m->et[v->ptype].nat)].name);
        } else if (w == 1 && v->act->nctx) {
            put(b, "(context has %s)", v->act->ctx[pick(r, (unsigned)v->act->nctx)].name);
        } else {
            put(b, "("); gen(r, b, v, T_REC, 0, depth + 1); put(b, " has %s)", pick(r, 2) ? "a" : "b");
        }
        return;
    }
    case 7: {   /* in: entity in entity, entity in set of entities */
        int e = (int)pick(r, (unsigned)m->net), f = (int)pick(r, (unsigned)m->net);
        put(b, "("); gen(r, b, v, T_ENT, e, depth + 1);
        if (pick(r, 2)) { put(b, " in "); gen(r, b, v, T_ENT, f, depth + 1); }
        else { put(b, " in ["); ent_lit(r, b, m, f); put(b, ", "); ent_lit(r, b, m, f); put(b, "]"); }
        put(b, ")");
        return;
    }
    case 8: {
        int e = (int)pick(r, (unsigned)m->net);
        put(b, "("); gen(r, b, v, T_ENT, e, depth + 1); put(b, " is %s)", m->et[pick(r, (unsigned)m->net)].name);
        return;
    }
    case 9: case 10: {
        static const char *const ms[] = { "contains", "containsAll", "containsAny", "isEmpty" };
        unsigned k = pick(r, 4);
        ty st = pick(r, 2) ? T_SETL : T_SETS;
        put(b, "("); gen(r, b, v, st, 0, depth + 1); put(b, ").%s(", ms[k]);
        if (k == 0) gen(r, b, v, st == T_SETL ? T_LONG : T_STRING, 0, depth + 1);
        else if (k < 3) gen(r, b, v, st, 0, depth + 1);
        put(b, ")");
        return;
    }
    case 11: {
        static const char *const ms[] = { "isIpv4", "isIpv6", "isLoopback", "isMulticast", "isInRange" };
        unsigned k = pick(r, 5);
        put(b, "("); gen(r, b, v, T_IP, 0, depth + 1); put(b, ").%s(", ms[k]);
        if (k == 4) gen(r, b, v, T_IP, 0, depth + 1);
        put(b, ")");
        return;
    }
    case 12: {
        static const char *const ms[] = { "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual" };
        put(b, "("); gen(r, b, v, T_DEC, 0, depth + 1); put(b, ").%s(", ms[pick(r, 4)]);
        gen(r, b, v, T_DEC, 0, depth + 1); put(b, ")");
        return;
    }
    case 13: {   /* datetime and duration: offset, durationSince, comparisons, toTime */
        static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
        const char *d1 = dts[pick(r, sizeof dts / sizeof *dts)], *d2 = dts[pick(r, sizeof dts / sizeof *dts)];
        const char *u = durs[pick(r, sizeof durs / sizeof *durs)];
        switch (pick(r, 3)) {
        case 0: put(b, "(datetime(\"%s\").offset(duration(\"%s\")) %s datetime(\"%s\"))", d1, u, ops[pick(r, 6)], d2); break;
        case 1: put(b, "(datetime(\"%s\").durationSince(datetime(\"%s\")) %s duration(\"%s\"))", d1, d2, ops[pick(r, 6)], u); break;
        default: put(b, "(datetime(\"%s\").toTime().toHours() %s ", d1, ops[pick(r, 6)]);
                 gen(r, b, v, T_LONG, 0, depth + 1); put(b, ")"); break;
        }
        return;
    }
    case 14: put(b, "(if "); gen(r, b, v, T_BOOL, 0, depth + 1); put(b, " then ");
             gen(r, b, v, T_BOOL, 0, depth + 1); put(b, " else "); gen(r, b, v, T_BOOL, 0, depth + 1); put(b, ")");
             return;
    case 15: put(b, "(principal in "); ent_lit(r, b, m, (int)pick(r, (unsigned)m->net)); put(b, ")"); return;
    case 16: put(b, "(resource in "); ent_lit(r, b, m, (int)pick(r, (unsigned)m->net)); put(b, ")"); return;
    default:
        if (!gen_attr(r, b, v, T_BOOL, 0, depth)) gen_leaf(r, b, v, T_BOOL, 0);
        return;
    }
}

static void gen(rd *r, sb *b, const env *v, ty t, int ent, int depth)
{
    if (depth >= MAX_DEPTH) {
        if (pick(r, 2) && gen_attr(r, b, v, t, ent, depth)) return;
        gen_leaf(r, b, v, t, ent);
        return;
    }
    switch (t) {
    case T_BOOL: gen_bool(r, b, v, depth); return;
    case T_LONG:
        switch (pick(r, 6)) {
        case 0: { static const char *const ops[] = { "+", "-", "*" };
                  put(b, "("); gen(r, b, v, T_LONG, 0, depth + 1); put(b, " %s ", ops[pick(r, 3)]);
                  gen(r, b, v, T_LONG, 0, depth + 1); put(b, ")"); return; }
        case 1: put(b, "(-"); gen(r, b, v, T_LONG, 0, depth + 1); put(b, ")"); return;
        case 2: put(b, "("); gen(r, b, v, T_REC, 0, depth + 1); put(b, ").a"); return;
        case 3: put(b, "(if "); gen(r, b, v, T_BOOL, 0, depth + 1); put(b, " then ");
                gen(r, b, v, T_LONG, 0, depth + 1); put(b, " else "); gen(r, b, v, T_LONG, 0, depth + 1); put(b, ")"); return;
        default: if (!gen_attr(r, b, v, t, ent, depth)) gen_leaf(r, b, v, t, ent); return;
        }
    case T_SETL: case T_SETS:
        if (pick(r, 3) == 0) {
            unsigned n = 1 + pick(r, 3);   /* `[]` has no element type */
            put(b, "[");
            for (unsigned k = 0; k < n; k++) { if (k) put(b, ", "); gen(r, b, v, t == T_SETL ? T_LONG : T_STRING, 0, depth + 1); }
            put(b, "]");
            return;
        }
        if (!gen_attr(r, b, v, t, ent, depth)) gen_leaf(r, b, v, t, ent);
        return;
    case T_REC:
        if (pick(r, 3) == 0) {
            put(b, "{a: "); gen(r, b, v, T_LONG, 0, depth + 1);
            if (pick(r, 2)) { put(b, ", b: "); gen(r, b, v, T_STRING, 0, depth + 1); }
            put(b, "}");
            return;
        }
        if (!gen_attr(r, b, v, t, ent, depth)) gen_leaf(r, b, v, t, ent);
        return;
    case T_ENT:
        if (pick(r, 3) == 0 && v->ptype == ent) { put(b, "principal"); return; }
        if (pick(r, 3) == 0 && v->rtype == ent) { put(b, "resource"); return; }
        if (!gen_attr(r, b, v, t, ent, depth)) gen_leaf(r, b, v, t, ent);
        return;
    default:
        if (pick(r, 4) && gen_attr(r, b, v, t, ent, depth)) return;
        gen_leaf(r, b, v, t, ent);
        return;
    }
}

/* A type an entity of type t can be `in`: t itself or one of its memberOf
 * types (so the scope can match); now and then any type. */
static int group_of(rd *r, const model *m, int t)
{
    int c[MAX_ET + 1], n = 0;
    c[n++] = t;
    for (int p = 0; p < m->net; p++) if (m->et[t].parent[p]) c[n++] = p;
    if (pick(r, 8) == 0) return (int)pick(r, (unsigned)m->net);
    return c[pick(r, (unsigned)n)];
}

/* One policy: a scope on one action (so the context type is known), then
 * conditions. */
static void gen_policy(rd *r, sb *b, const model *m, int i)
{
    const action *a = &m->act[pick(r, (unsigned)m->nact)];
    env v = { m, a, -1, -1 };
    int pts[MAX_ET], rts[MAX_ET], np = 0, nr = 0;
    for (int e = 0; e < m->net; e++) { if (a->prin[e]) pts[np++] = e; if (a->res[e]) rts[nr++] = e; }
    if (pick(r, 4) == 0) put(b, "@id(\"p%d\") ", i);
    put(b, "%s (\n  ", pick(r, 3) == 0 ? "forbid" : "permit");
    const char *var[2] = { "principal", "resource" };
    for (int s = 0; s < 2; s++) {
        int t = s == 0 ? pts[pick(r, (unsigned)np)] : rts[pick(r, (unsigned)nr)];
        int *pin = s == 0 ? &v.ptype : &v.rtype;
        switch (pick(r, 6)) {
        case 0: put(b, "%s", var[s]); if ((s == 0 ? np : nr) == 1) *pin = t; break;
        case 1: put(b, "%s is %s", var[s], m->et[t].name); *pin = t; break;
        case 2: put(b, "%s == ", var[s]); ent_lit(r, b, m, t); *pin = t; break;
        case 3: { int g = group_of(r, m, t);
                  put(b, "%s in ", var[s]); ent_lit(r, b, m, g);
                  if ((s == 0 ? np : nr) == 1) *pin = t; break; }
        case 4: { int g = group_of(r, m, t);
                  put(b, "%s is %s in ", var[s], m->et[t].name); ent_lit(r, b, m, g); *pin = t; break; }
        default: put(b, "%s", var[s]); if ((s == 0 ? np : nr) == 1) *pin = t; break;
        }
        put(b, s == 0 ? ",\n  " : "\n)");
        if (s == 0) {
            if (pick(r, 4) == 0 && m->nact > 1) put(b, "action in [Action::\"%s\", Action::\"%s\"],\n  ", a->name, a->name);
            else put(b, "action == Action::\"%s\",\n  ", a->name);
        }
    }
    unsigned nconds = pick(r, 3);
    for (unsigned c = 0; c < nconds; c++) {
        put(b, pick(r, 3) == 0 ? " unless { " : " when { ");
        gen(r, b, &v, T_BOOL, 0, 0);
        put(b, " }");
    }
    put(b, ";\n");
}

/* ---------------------------------------------------------------- entities and requests (JSON) */

static void json_value(rd *r, sb *b, const model *m, const attr *a)
{
    switch (a->t) {
    case T_BOOL: put(b, pick(r, 2) ? "true" : "false"); break;
    case T_LONG: put(b, "%s", longs[pick(r, sizeof longs / sizeof *longs)]); break;
    case T_STRING: put(b, "\"%s\"", strs_json[pick(r, sizeof strs_json / sizeof *strs_json)]); break;
    case T_SETL: { unsigned n = pick(r, 4); put(b, "[");
                   for (unsigned k = 0; k < n; k++) put(b, "%s%s", k ? "," : "", longs[pick(r, 5)]);
                   put(b, "]"); break; }
    case T_SETS: { unsigned n = pick(r, 4); put(b, "[");
                   for (unsigned k = 0; k < n; k++) put(b, "%s\"%s\"", k ? "," : "", strs_json[pick(r, 5)]);
                   put(b, "]"); break; }
    case T_REC: put(b, "{\"a\": %s", longs[pick(r, 5)]);
                if (pick(r, 2)) put(b, ", \"b\": \"%s\"", strs_json[pick(r, 4)]);
                put(b, "}"); break;
    case T_IP: put(b, "{\"__extn\": {\"fn\": \"ip\", \"arg\": \"%s\"}}", ips[pick(r, sizeof ips / sizeof *ips)]); break;
    case T_DEC: put(b, "{\"__extn\": {\"fn\": \"decimal\", \"arg\": \"%s\"}}", decs[pick(r, sizeof decs / sizeof *decs)]); break;
    case T_ENT: put(b, "{\"__entity\": {\"type\": \"%s\", \"id\": \"%s\"}}", m->et[a->ent].name,
                    ids[pick(r, (unsigned)m->et[a->ent].nids)]); break;
    default: abort();
    }
}

static void json_record(rd *r, sb *b, const model *m, const attr *at, int n)
{
    put(b, "{");
    bool first = true;
    for (int k = 0; k < n; k++) {
        if (at[k].opt && pick(r, 2)) continue;
        put(b, "%s\"%s\": ", first ? "" : ", ", at[k].name);
        json_value(r, b, m, &at[k]);
        first = false;
    }
    put(b, "}");
}

static void gen_entities(rd *r, sb *b, const model *m)
{
    put(b, "[");
    bool first = true;
    for (int e = 0; e < m->net; e++)
        for (int i = 0; i < m->et[e].nids; i++) {
            put(b, "%s\n{\"uid\": {\"type\": \"%s\", \"id\": \"%s\"}, \"attrs\": ", first ? "" : ",", m->et[e].name, ids[i]);
            json_record(r, b, m, m->et[e].at, m->et[e].nat);
            put(b, ", \"parents\": [");
            bool pf = true;
            for (int p = 0; p < m->net; p++)
                if (m->et[e].parent[p] && pick(r, 2)) {
                    put(b, "%s{\"type\": \"%s\", \"id\": \"%s\"}", pf ? "" : ", ", m->et[p].name, ids[pick(r, (unsigned)m->et[p].nids)]);
                    pf = false;
                }
            put(b, "]}");
            first = false;
        }
    put(b, "\n]");
}

static int gen_request(rd *r, sb *b, const model *m)
{
    const action *a = &m->act[pick(r, (unsigned)m->nact)];
    int pts[MAX_ET], rts[MAX_ET], np = 0, nr = 0;
    for (int e = 0; e < m->net; e++) { if (a->prin[e]) pts[np++] = e; if (a->res[e]) rts[nr++] = e; }
    int p = pts[pick(r, (unsigned)np)], q = rts[pick(r, (unsigned)nr)];
    put(b, "{\"principal\": {\"type\": \"%s\", \"id\": \"%s\"}, \"action\": {\"type\": \"Action\", \"id\": \"%s\"}, "
           "\"resource\": {\"type\": \"%s\", \"id\": \"%s\"}, \"context\": ",
        m->et[p].name, ids[pick(r, MAX_IDS)], a->name, m->et[q].name, ids[pick(r, MAX_IDS)]);
    json_record(r, b, m, a->ctx, a->nctx);
    put(b, "}");
    return 0;
}

/* ---------------------------------------------------------------- invariants */

static bool verbose;

static void fail(const char *what, const sb *schema, const sb *pol, const sb *ents, const char *req)
{
    fprintf(stderr, "fuzz_structured: invariant violated: %s\n--- schema\n%s--- policies\n%s--- entities\n%s\n--- request\n%s\n",
            what, schema->p, pol->p, ents->p, req ? req : "");
    abort();
}

static bool same_response(const dw_response *x, const dw_response *y)
{
    if (x->allow != y->allow || x->ndetermining != y->ndetermining || x->nerrors != y->nerrors) return false;
    for (uint32_t k = 0; k < x->ndetermining; k++) if (x->determining[k] != y->determining[k]) return false;
    for (uint32_t k = 0; k < x->nerrors; k++)
        if (x->errors[k].policy != y->errors[k].policy || x->errors[k].status != y->errors[k].status) return false;
    return true;
}

/* Cedar's decision rule, checked on the response itself. */
static const char *check_decision(const dw_program *p, const dw_response *x)
{
    uint32_t e = 0;
    bool forbid = false, permit = false;
    for (uint32_t k = 0; k < x->ndetermining; k++) {
        uint32_t pi = x->determining[k];
        if (pi >= p->npolicies) return "a reason is not a policy";
        if (k && x->determining[k - 1] >= pi) return "reasons not ascending";
        while (e < x->nerrors && x->errors[e].policy < pi) e++;
        if (e < x->nerrors && x->errors[e].policy == pi) return "an erroring policy is a reason";
        if (p->policies[pi].effect == DW_EFFECT_FORBID) forbid = true; else permit = true;
    }
    if (x->allow && (forbid || !permit)) return "allow without a satisfied permit, or with a satisfied forbid";
    if (!x->allow && permit) return "deny with permits as reasons";
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    verbose = getenv("DW_FUZZ_PRINT") != NULL;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd r = { data, size, 0 };
    model m;
    memset(&m, 0, sizeof m);
    gen_model(&r, &m);
    sb st = { 0 }, pt = { 0 }, et = { 0 };
    put_schema(&st, &m);
    unsigned npol = 1 + pick(&r, 6);
    for (unsigned i = 0; i < npol; i++) gen_policy(&r, &pt, &m, (int)i);
    gen_entities(&r, &et, &m);
    if (verbose) fprintf(stderr, "--- schema\n%s--- policies\n%s--- entities\n%s\n", st.p, pt.p, et.p);

    dw_diags d;
    dw_diags_init(&d);
    dw_source ss = { "gen.cedarschema", st.p, st.n }, ps_src = { "gen.cedar", pt.p, pt.n }, es = { "gen.entities.json", et.p, et.n };
    dw_schema *schema = dw_schema_parse(&ss, &d);
    if (!schema || d.nerrors) { dw_diags_print(&d, stderr); fail("the generated schema does not parse", &st, &pt, &et, NULL); }
    dw_policy_set *ps = dw_parse_policy_set(&ps_src, &d);
    if (!ps || d.nerrors) { dw_diags_print(&d, stderr); fail("the generated policies do not parse", &st, &pt, &et, NULL); }
    /* validation runs (and must not crash); its verdict is not an invariant */
    dw_diags vd;
    dw_diags_init(&vd);
    dw_validate_result vr = dw_validate(ps, schema, &vd);
    if (verbose) { dw_diags_print(&vd, stderr); fprintf(stderr, "validation: %zu error(s)\n", vr.nerrors); }
    dw_diags_free(&vd);
    dw_program *prog = dw_compile(ps, NULL, &d);
    if (!prog) { dw_diags_print(&d, stderr); fail("the generated policies do not compile", &st, &pt, &et, NULL); }
    dw_buf art = { 0 };
    if (dw_artifact_write(prog, 0, &art)) fail("artifact write failed", &st, &pt, &et, NULL);
    char msg[256];
    dw_program *loaded = dw_artifact_load(art.p, art.len, msg, sizeof msg);
    if (!loaded) { fprintf(stderr, "%s\n", msg); fail("the artifact of a compiled program is refused", &st, &pt, &et, NULL); }
    /* writing the loaded program gives the same bytes (deterministic output) */
    dw_buf art2 = { 0 };
    if (dw_artifact_write(loaded, 0, &art2) || art2.len != art.len || memcmp(art.p, art2.p, art.len))
        fail("artifact write -> load -> write is not the identity", &st, &pt, &et, NULL);

    dw_store store;
    dw_store_init(&store);
    dw_buf err = { 0 };
    const dw_json *ej = dw_json_parse(&store.arena, &es, &d);
    if (!ej) { dw_diags_print(&d, stderr); fail("the generated entities are not JSON", &st, &pt, &et, NULL); }
    if (dw_store_load_json(&store, ej, schema, &err)) {
        fprintf(stderr, "%s\n", err.p ? err.p : "?");
        fail("the generated entities do not load", &st, &pt, &et, NULL);
    }
    dw_arena ra, scratch;
    dw_arena_init(&ra, 4096);
    dw_arena_init(&scratch, 4096);
    unsigned nreq = 1 + pick(&r, 4);
    for (unsigned q = 0; q < nreq; q++) {
        sb rq = { 0 };
        gen_request(&r, &rq, &m);
        if (verbose) fprintf(stderr, "--- request\n%s\n", rq.p);
        dw_arena_reset(&ra);
        dw_source rs = { "gen.request.json", rq.p, rq.n };
        const dw_json *rj = dw_json_parse(&ra, &rs, &d);
        if (!rj) fail("the generated request is not JSON", &st, &pt, &et, rq.p);
        dw_request req;
        err.len = 0;
        if (dw_request_from_json(&ra, dw_json_get(rj, "principal"), dw_json_get(rj, "action"), dw_json_get(rj, "resource"),
                                 dw_json_get(rj, "context"), schema, true, &req, &err)) {
            fprintf(stderr, "%s\n", err.p ? err.p : "?");
            fail("the generated request does not load", &st, &pt, &et, rq.p);
        }
        dw_arena_reset(&scratch);
        dw_response x[5];
        dw_program plain = *loaded;          /* without the plans: every VAR and `like` runs its instructions */
        plain.var_plan = NULL;
        plain.like_rare = NULL;
        int rc = dw_authorize(prog, &store, &req, &scratch, &x[0]) | dw_authorize_all(prog, &store, &req, &scratch, &x[1]) |
                 dw_authorize(loaded, &store, &req, &scratch, &x[2]) | dw_authorize_all(loaded, &store, &req, &scratch, &x[3]) |
                 dw_authorize(&plain, &store, &req, &scratch, &x[4]);
        if (rc == 0) {
            if (verbose) fprintf(stderr, "decision: %s, %u reason(s), %u error(s)\n", x[0].allow ? "allow" : "deny",
                                 x[0].ndetermining, x[0].nerrors);
            if (!same_response(&x[0], &x[1]) || !same_response(&x[0], &x[2]) || !same_response(&x[2], &x[3]) ||
                !same_response(&x[2], &x[4]))
                for (int k = 0; k < 5; k++) {
                    fprintf(stderr, "response %d (%s, index %s): %s, reasons", k, k < 2 ? "in memory" : k < 4 ? "artifact" : "artifact, no plans",
                            k % 2 ? "off" : "on", x[k].allow ? "allow" : "deny");
                    for (uint32_t i = 0; i < x[k].ndetermining; i++) fprintf(stderr, " %u", x[k].determining[i]);
                    fprintf(stderr, ", errors");
                    for (uint32_t i = 0; i < x[k].nerrors; i++) fprintf(stderr, " %u:%d", x[k].errors[i].policy, (int)x[k].errors[i].status);
                    fprintf(stderr, "\n");
                }
            if (!same_response(&x[0], &x[1])) fail("the decision index changes the answer", &st, &pt, &et, rq.p);
            if (!same_response(&x[0], &x[2])) fail("the artifact decides differently from the in-memory program", &st, &pt, &et, rq.p);
            if (!same_response(&x[2], &x[3])) fail("the artifact's index changes the answer", &st, &pt, &et, rq.p);
            if (!same_response(&x[2], &x[4])) fail("the load-time plans change the answer", &st, &pt, &et, rq.p);
            const char *why = check_decision(prog, &x[0]);
            if (why) fail(why, &st, &pt, &et, rq.p);
        }
        free(rq.p);
    }
    dw_arena_free(&scratch);
    dw_arena_free(&ra);
    dw_buf_free(&err);
    dw_store_free(&store);
    dw_buf_free(&art);
    dw_buf_free(&art2);
    dw_program_free(loaded);
    dw_program_free(prog);
    dw_policy_set_free(ps);
    dw_schema_free(schema);
    dw_diags_free(&d);
    free(st.p); free(pt.p); free(et.p);
    return 0;
}
