/* est_read.c - Cedar's JSON policy format to Cedar text (est.h).  The text is
 * Cedar 4.x's printed form of a policy it read from JSON (cedar-wasm's
 * policyToText; checked over the corpus by tests/diff/est.js):
 *   - a condition body, an `if`'s parts, set elements, record values and
 *     call arguments are printed bare; an operand of an operator, `!`, a
 *     receiver and the left of has/like/is are parenthesised unless they are
 *     a literal, variable, slot, set, record, attribute or call;
 *   - a chain of one associative operator (`a && b && c`, `1 + 2 + 3`) is
 *     printed flat on its left; `-` is always `-(…)`, a negative literal `(-1)`;
 *   - strings, ids and attributes are escaped as Rust's escape_debug does
 *     (\n \t \r \\ \" \' \0, \u{…} for what is not printable and for a
 *     combining mark that starts the string); attributes and record keys are
 *     bare when they are identifiers;
 *   - annotations and record members in key order, one annotation a line.
 * The reader is as strict as Cedar's: unknown members, a second key in an
 * expression object, duplicate record keys, a slot in a static policy, a
 * float and an unknown extension function are errors at their JSON position. */
#include <stdlib.h>
#include "est.h"
#include "rust_escape.h"

typedef struct est_r {
    const dw_source *src;
    dw_diags *diags;
    dw_buf *b;
    int err;
    bool for_parse;            /* the text is parsed back: print only forms dwc's parser reads */
    bool slots_ok;             /* a template: ?principal / ?resource may appear */
} est_r;

static void fail(est_r *r, const dw_json *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(est_r *r, const dw_json *at, const char *fmt, ...)
{
    if (r->err) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dw_error(r->diags, r->src, dw_loc_at(r->src, at ? at->off : 0, at ? at->end : 0), "%s", msg);
    r->err = 1;
}

static void put(est_r *r, const char *s, size_t n) { if (!r->err && dw_buf_append(r->b, s, n)) r->err = -1; }
static void puts_(est_r *r, const char *s) { put(r, s, strlen(s)); }

/* Cedar's identifier syntax; reserved words included (an annotation key may be one) */
static bool is_any_ident(dw_str s)
{
    if (!s.len || !(s.s[0] == '_' || ((s.s[0] | 32) >= 'a' && (s.s[0] | 32) <= 'z'))) return false;
    for (size_t i = 1; i < s.len; i++) {
        char c = s.s[i];
        if (!(c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'))) return false;
    }
    return true;
}

static bool is_ident(dw_str s)
{
    static const char *const reserved[] = { "true", "false", "if", "then", "else", "in", "is", "like", "has" };
    if (!is_any_ident(s)) return false;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) if (dw_str_is(s, reserved[i])) return false;
    return !memmem(s.s, s.len, "__cedar", 7);
}

static void esc(est_r *r, dw_str s, bool pattern)
{
    if (r->err) return;
    int rc = dw_rust_escape_debug(r->b, s.s, s.len, pattern);
    if (rc > 0) fail(r, NULL, "a string is not UTF-8");   /* the JSON reader refuses this first */
    else if (rc) r->err = -1;
}

static void quoted(est_r *r, dw_str s) { puts_(r, "\""); esc(r, s, false); puts_(r, "\""); }

static const dw_json *member(est_r *r, const dw_json *o, const char *k, dw_json_kind kind, bool required)
{
    const dw_json *v = dw_json_get(o, k);
    if (!v) { if (required) fail(r, o, "missing field `%s`", k); return NULL; }
    if (dw_json_count(o, k) > 1) { fail(r, v, "duplicate field `%s`", k); return NULL; }
    if (v->kind != kind) { fail(r, v, "`%s` must be a JSON %s, not %s", k, dw_json_kind_name(kind), dw_json_kind_name(v->kind)); return NULL; }
    return v;
}

/* Every member of o is one of the NULL-terminated names. */
static bool only(est_r *r, const dw_json *o, const char *const *names)
{
    for (size_t i = 0; i < o->u.obj.n; i++) {
        bool ok = false;
        for (const char *const *n = names; *n; n++) ok |= dw_str_is(o->u.obj.v[i].key, *n);
        if (!ok) {
            fail(r, o->u.obj.v[i].value, "unknown field `%.*s`", (int)o->u.obj.v[i].key.len, o->u.obj.v[i].key.s);
            return false;
        }
    }
    return true;
}

static void type_name(est_r *r, const dw_json *t)
{
    dw_str s = t->u.str;
    for (size_t i = 0, j; i <= s.len; i = j + 2) {     /* each `::` segment an identifier */
        j = i;
        while (j < s.len && !(s.s[j] == ':' && j + 1 < s.len && s.s[j + 1] == ':')) j++;
        if (!is_ident((dw_str){ s.s + i, j - i })) { fail(r, t, "`%.*s` is not an entity type name", (int)s.len, s.s); return; }
        if (j >= s.len) break;
    }
    put(r, s.s, s.len);
}

/* {"type": T, "id": I} or {"__entity": {…}} */
static void euid(est_r *r, const dw_json *o)
{
    if (o->kind != DW_JSON_OBJECT) { fail(r, o, "expected an entity uid {\"type\": …, \"id\": …}"); return; }
    const dw_json *inner = dw_json_get(o, "__entity");
    if (inner && o->u.obj.n == 1) { euid(r, inner); return; }
    static const char *const names[] = { "type", "id", NULL };
    if (!only(r, o, names)) return;
    const dw_json *t = member(r, o, "type", DW_JSON_STRING, true), *id = member(r, o, "id", DW_JSON_STRING, true);
    if (!t || !id) return;
    type_name(r, t);
    puts_(r, "::");
    quoted(r, id->u.str);
}

static void value(est_r *r, const dw_json *v);

static int member_cmp(const void *a, const void *b)
{
    return dw_str_cmp((*(const dw_json_member *const *)a)->key, (*(const dw_json_member *const *)b)->key);
}

/* An object's members in key order (Cedar's maps are sorted); duplicates refused.  NULL: failed. */
static const dw_json_member **sorted_members(est_r *r, const dw_json *o)
{
    size_t n = o->u.obj.n;
    const dw_json_member **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) { r->err = -1; return NULL; }
    for (size_t i = 0; i < n; i++) v[i] = &o->u.obj.v[i];
    if (n > 1) qsort(v, n, sizeof *v, member_cmp);
    for (size_t i = 1; i < n; i++)
        if (!member_cmp(&v[i - 1], &v[i])) { fail(r, v[i]->value, "duplicate key `%.*s`", (int)v[i]->key.len, v[i]->key.s); free(v); return NULL; }
    return v;
}

/* A Cedar value in JSON ("Value": …): Cedar prints record keys quoted here. */
static void value(est_r *r, const dw_json *v)
{
    char n[32];
    switch (v->kind) {
    case DW_JSON_BOOL: puts_(r, v->u.b ? "true" : "false"); return;
    case DW_JSON_INT:
        snprintf(n, sizeof n, v->u.i < 0 ? "(%lld)" : "%lld", (long long)v->u.i);
        puts_(r, n);
        return;
    case DW_JSON_STRING: quoted(r, v->u.str); return;
    case DW_JSON_ARRAY:
        puts_(r, "[");
        for (size_t i = 0; i < v->u.arr.n && !r->err; i++) { if (i) puts_(r, ", "); value(r, v->u.arr.v[i]); }
        puts_(r, "]");
        return;
    case DW_JSON_OBJECT: {
        const dw_json *e = dw_json_get(v, "__entity"), *x = dw_json_get(v, "__extn");
        if (e && v->u.obj.n == 1) { euid(r, e); return; }
        if (x && v->u.obj.n == 1) {
            static const char *const names[] = { "fn", "arg", NULL };
            if (x->kind != DW_JSON_OBJECT || !only(r, x, names)) { if (!r->err) fail(r, x, "`__extn` must be {\"fn\": …, \"arg\": …}"); return; }
            const dw_json *fn = member(r, x, "fn", DW_JSON_STRING, true), *arg = member(r, x, "arg", DW_JSON_STRING, true);
            if (!fn || !arg) return;
            static const char *const ctors[] = { "decimal", "ip", "datetime", "duration" };
            bool known = false;
            for (size_t i = 0; i < 4; i++) known |= dw_str_is(fn->u.str, ctors[i]);
            if (!known) { fail(r, fn, "unknown extension function `%.*s`", (int)fn->u.str.len, fn->u.str.s); return; }
            put(r, fn->u.str.s, fn->u.str.len); puts_(r, "("); quoted(r, arg->u.str); puts_(r, ")");
            return;
        }
        const dw_json_member **m = sorted_members(r, v);
        if (!m) return;
        puts_(r, "{");
        for (size_t i = 0; i < v->u.obj.n && !r->err; i++) {
            if (i) puts_(r, ", ");
            quoted(r, m[i]->key); puts_(r, ": "); value(r, m[i]->value);
        }
        puts_(r, "}");
        free(m);
        return;
    }
    case DW_JSON_NULL: fail(r, v, "null is not a Cedar value"); return;
    case DW_JSON_FLOAT: fail(r, v, "Cedar has no floating-point numbers; a Long is a 64-bit integer"); return;
    }
}

/* ---- expressions ---- */
typedef enum { K_BAD, K_VALUE, K_VAR, K_SLOT, K_NOT, K_NEG, K_BIN, K_METHOD2, K_ISEMPTY, K_GETATTR, K_HAS, K_LIKE, K_IS, K_IF, K_SET, K_RECORD, K_EXT } ekind;
static const char *const bin_ops[] = { "==", "!=", "in", "<", "<=", ">", ">=", "&&", "||", "+", "-", "*", NULL };
static const char *const methods2[] = { "contains", "containsAll", "containsAny", "getTag", "hasTag", NULL };
static const char *const ext_fns[] = { "decimal", "ip", "datetime", "duration", NULL };
static const char *const ext_methods[] = { "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual",
    "isIpv4", "isIpv6", "isLoopback", "isMulticast", "isInRange",
    "offset", "durationSince", "toDate", "toTime", "toMilliseconds", "toSeconds", "toMinutes", "toHours", "toDays", NULL };

static bool in_list(dw_str k, const char *const *l) { for (; *l; l++) if (dw_str_is(k, *l)) return true; return false; }

static ekind kind_of(const dw_json *e, dw_str *k)
{
    if (e->kind != DW_JSON_OBJECT || e->u.obj.n != 1) return K_BAD;
    *k = e->u.obj.v[0].key;
    static const struct { const char *k; ekind v; } tab[] = {
        { "Value", K_VALUE }, { "Var", K_VAR }, { "Slot", K_SLOT }, { "!", K_NOT }, { "neg", K_NEG },
        { "isEmpty", K_ISEMPTY }, { ".", K_GETATTR }, { "has", K_HAS }, { "like", K_LIKE }, { "is", K_IS },
        { "if-then-else", K_IF }, { "Set", K_SET }, { "Record", K_RECORD },
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) if (dw_str_is(*k, tab[i].k)) return tab[i].v;
    if (in_list(*k, bin_ops)) return K_BIN;
    if (in_list(*k, methods2)) return K_METHOD2;
    if (in_list(*k, ext_fns) || in_list(*k, ext_methods)) return K_EXT;
    return K_BAD;
}

static void expr(est_r *r, const dw_json *e);

/* printed without parentheses in an operand's place */
static bool is_simple(const dw_json *e)
{
    dw_str k;
    switch (kind_of(e, &k)) {
    case K_VALUE: case K_VAR: case K_SLOT: case K_SET: case K_RECORD: case K_GETATTR: case K_METHOD2: case K_ISEMPTY: case K_EXT: return true;
    default: return false;
    }
}

static void operand(est_r *r, const dw_json *e)
{
    if (is_simple(e)) { expr(r, e); return; }
    puts_(r, "(");
    expr(r, e);
    puts_(r, ")");
}

/* {"op": {"left": …, <second>: …}}: the two members, checked */
static bool two(est_r *r, const dw_json *body, const char *second, dw_json_kind kind2, const dw_json **l, const dw_json **x)
{
    if (body->kind != DW_JSON_OBJECT) { fail(r, body, "expected {\"left\": …, \"%s\": …}", second); return false; }
    const char *names[] = { "left", second, NULL };
    if (!only(r, body, names)) return false;
    *l = member(r, body, "left", DW_JSON_OBJECT, true);
    *x = member(r, body, second, kind2, true);
    return *l && *x;
}

static const dw_json *arg1(est_r *r, const dw_json *body)
{
    static const char *const names[] = { "arg", NULL };
    if (body->kind != DW_JSON_OBJECT) { fail(r, body, "expected {\"arg\": …}"); return NULL; }
    if (!only(r, body, names)) return NULL;
    return member(r, body, "arg", DW_JSON_OBJECT, true);
}

static void attr_name(est_r *r, const dw_json *a)
{
    if (a->kind != DW_JSON_STRING) { fail(r, a, "an attribute name must be a string"); return; }
    if (is_ident(a->u.str)) put(r, a->u.str.s, a->u.str.len);
    else quoted(r, a->u.str);
}

static void has_expr(est_r *r, const dw_json *l, const dw_json *a)
{
    if (a->kind == DW_JSON_STRING) { operand(r, l); puts_(r, " has "); attr_name(r, a); return; }
    if (a->kind != DW_JSON_ARRAY || !a->u.arr.n) { fail(r, a, "`attr` must be a string or a non-empty list of strings"); return; }
    bool plain = true;
    for (size_t i = 0; i < a->u.arr.n; i++) {
        if (a->u.arr.v[i]->kind != DW_JSON_STRING) { fail(r, a->u.arr.v[i], "an attribute name must be a string"); return; }
        plain &= is_ident(a->u.arr.v[i]->u.str);
    }
    if (plain || !r->for_parse) {       /* Cedar's form: `e has a.b.c` (it quotes a segment that is no identifier) */
        operand(r, l); puts_(r, " has ");
        for (size_t i = 0; i < a->u.arr.n; i++) { if (i) puts_(r, "."); attr_name(r, a->u.arr.v[i]); }
        return;
    }
    /* the same test spelt out, for a path no parser reads: e has "a b" && e["a b"] has c */
    for (size_t k = 0; k < a->u.arr.n; k++) {
        if (k) puts_(r, " && ");
        puts_(r, "(");
        operand(r, l);
        for (size_t j = 0; j < k; j++) { puts_(r, "["); quoted(r, a->u.arr.v[j]->u.str); puts_(r, "]"); }
        puts_(r, " has "); quoted(r, a->u.arr.v[k]->u.str); puts_(r, ")");
    }
}

static void like_expr(est_r *r, const dw_json *l, const dw_json *p)
{
    operand(r, l);
    puts_(r, " like \"");
    for (size_t i = 0; i < p->u.arr.n && !r->err; i++) {
        const dw_json *el = p->u.arr.v[i];
        if (el->kind == DW_JSON_STRING && dw_str_is(el->u.str, "Wildcard")) { puts_(r, "*"); continue; }
        const dw_json *lit = el->kind == DW_JSON_OBJECT && el->u.obj.n == 1 ? dw_json_get(el, "Literal") : NULL;
        if (!lit || lit->kind != DW_JSON_STRING) { fail(r, el, "a pattern element is \"Wildcard\" or {\"Literal\": \"…\"}"); return; }
        esc(r, lit->u.str, true);
    }
    puts_(r, "\"");
}

static void args_list(est_r *r, const dw_json *a, size_t from)
{
    for (size_t i = from; i < a->u.arr.n && !r->err; i++) { if (i > from) puts_(r, ", "); expr(r, a->u.arr.v[i]); }
}

static void expr(est_r *r, const dw_json *e)
{
    if (r->err) return;
    dw_str k;
    ekind kind = kind_of(e, &k);
    if (kind == K_BAD) {
        if (e->kind != DW_JSON_OBJECT) fail(r, e, "expected a JSON object representing an expression");
        else if (e->u.obj.n != 1) fail(r, e, e->u.obj.n ? "a JSON object representing an expression has exactly one key" : "an empty map is not a valid expression");
        else fail(r, e->u.obj.v[0].value, "unknown expression kind `%.*s`", (int)k.len, k.s);
        return;
    }
    const dw_json *body = e->u.obj.v[0].value, *l, *x;
    switch (kind) {
    case K_BAD: return;
    case K_VALUE: value(r, body); return;
    case K_VAR:
        if (body->kind != DW_JSON_STRING || !(dw_str_is(body->u.str, "principal") || dw_str_is(body->u.str, "action") ||
                                             dw_str_is(body->u.str, "resource") || dw_str_is(body->u.str, "context"))) {
            fail(r, body, "`Var` is one of \"principal\", \"action\", \"resource\", \"context\"");
            return;
        }
        put(r, body->u.str.s, body->u.str.len);
        return;
    case K_SLOT:
        if (body->kind != DW_JSON_STRING || !(dw_str_is(body->u.str, "?principal") || dw_str_is(body->u.str, "?resource"))) {
            fail(r, body, "`Slot` is \"?principal\" or \"?resource\"");
            return;
        }
        if (!r->slots_ok) { fail(r, body, "expected a static policy, got a template containing the slot %.*s", (int)body->u.str.len, body->u.str.s); return; }
        put(r, body->u.str.s, body->u.str.len);
        return;
    case K_NOT: if ((l = arg1(r, body))) { puts_(r, "!"); operand(r, l); } return;
    case K_NEG: if ((l = arg1(r, body))) { puts_(r, "-("); expr(r, l); puts_(r, ")"); } return;
    case K_ISEMPTY: if ((l = arg1(r, body))) { operand(r, l); puts_(r, ".isEmpty()"); } return;
    case K_BIN: {
        if (!two(r, body, "right", DW_JSON_OBJECT, &l, &x)) return;
        dw_str lk;
        bool assoc = dw_str_is(k, "&&") || dw_str_is(k, "||") || dw_str_is(k, "+") || dw_str_is(k, "-") || dw_str_is(k, "*");
        if (assoc && kind_of(l, &lk) == K_BIN && dw_str_eq(lk, k)) expr(r, l);   /* a chain, flat on its left */
        else operand(r, l);
        puts_(r, " "); put(r, k.s, k.len); puts_(r, " ");
        operand(r, x);
        return;
    }
    case K_METHOD2:
        if (!two(r, body, "right", DW_JSON_OBJECT, &l, &x)) return;
        operand(r, l); puts_(r, "."); put(r, k.s, k.len); puts_(r, "("); expr(r, x); puts_(r, ")");
        return;
    case K_GETATTR:
        if (!two(r, body, "attr", DW_JSON_STRING, &l, &x)) return;
        operand(r, l);
        if (is_ident(x->u.str)) { puts_(r, "."); put(r, x->u.str.s, x->u.str.len); }
        else { puts_(r, "["); quoted(r, x->u.str); puts_(r, "]"); }
        return;
    case K_HAS: {
        static const char *const names[] = { "left", "attr", NULL };
        if (body->kind != DW_JSON_OBJECT) { fail(r, body, "expected {\"left\": …, \"attr\": …}"); return; }
        if (!only(r, body, names)) return;
        l = member(r, body, "left", DW_JSON_OBJECT, true);
        x = dw_json_get(body, "attr");
        if (!x) fail(r, body, "missing field `attr`");
        if (l && x) has_expr(r, l, x);
        return;
    }
    case K_LIKE: if (two(r, body, "pattern", DW_JSON_ARRAY, &l, &x)) like_expr(r, l, x); return;
    case K_IS: {
        static const char *const names[] = { "left", "entity_type", "in", NULL };
        if (body->kind != DW_JSON_OBJECT) { fail(r, body, "expected {\"left\": …, \"entity_type\": …}"); return; }
        if (!only(r, body, names)) return;
        l = member(r, body, "left", DW_JSON_OBJECT, true);
        x = member(r, body, "entity_type", DW_JSON_STRING, true);
        const dw_json *in = dw_json_get(body, "in") ? member(r, body, "in", DW_JSON_OBJECT, true) : NULL;
        if (!l || !x || r->err) return;
        operand(r, l); puts_(r, " is "); type_name(r, x);
        if (in) { puts_(r, " in "); operand(r, in); }
        return;
    }
    case K_IF: {
        static const char *const names[] = { "if", "then", "else", NULL };
        if (body->kind != DW_JSON_OBJECT) { fail(r, body, "expected {\"if\": …, \"then\": …, \"else\": …}"); return; }
        if (!only(r, body, names)) return;
        const dw_json *c = member(r, body, "if", DW_JSON_OBJECT, true), *t = member(r, body, "then", DW_JSON_OBJECT, true),
                      *f = member(r, body, "else", DW_JSON_OBJECT, true);
        if (!c || !t || !f) return;
        puts_(r, "if "); expr(r, c); puts_(r, " then "); expr(r, t); puts_(r, " else "); expr(r, f);
        return;
    }
    case K_SET:
        if (body->kind != DW_JSON_ARRAY) { fail(r, body, "`Set` must be a JSON array"); return; }
        puts_(r, "["); args_list(r, body, 0); puts_(r, "]");
        return;
    case K_RECORD: {
        if (body->kind != DW_JSON_OBJECT) { fail(r, body, "`Record` must be a JSON object"); return; }
        const dw_json_member **m = sorted_members(r, body);
        if (!m) return;
        puts_(r, "{");
        for (size_t i = 0; i < body->u.obj.n && !r->err; i++) {
            if (i) puts_(r, ", ");
            if (is_ident(m[i]->key)) put(r, m[i]->key.s, m[i]->key.len);
            else quoted(r, m[i]->key);
            puts_(r, ": ");
            expr(r, m[i]->value);
        }
        puts_(r, "}");
        free(m);
        return;
    }
    case K_EXT:
        if (body->kind != DW_JSON_ARRAY) { fail(r, body, "the arguments of `%.*s` must be a JSON array", (int)k.len, k.s); return; }
        if (in_list(k, ext_methods) && body->u.arr.n) {
            operand(r, body->u.arr.v[0]); puts_(r, "."); put(r, k.s, k.len); puts_(r, "("); args_list(r, body, 1); puts_(r, ")");
        } else {
            put(r, k.s, k.len); puts_(r, "("); args_list(r, body, 0); puts_(r, ")");
        }
        return;
    }
}

/* ---- policies ---- */
static void scope(est_r *r, const char *var, const dw_json *c)
{
    puts_(r, var);
    if (!c || r->err) return;
    static const char *const names[] = { "op", "entity", "entities", "slot", "entity_type", "in", NULL };
    if (c->kind != DW_JSON_OBJECT) { fail(r, c, "a scope constraint must be a JSON object with `op`"); return; }
    if (!only(r, c, names)) return;
    const dw_json *op = member(r, c, "op", DW_JSON_STRING, true);
    if (!op) return;
    const dw_json *ent = dw_json_get(c, "entity"), *slot = dw_json_get(c, "slot"), *list = dw_json_get(c, "entities");
    bool is_action = !strcmp(var, "action");
    if (dw_str_is(op->u.str, "All") || dw_str_is(op->u.str, "all")) return;
    if (dw_str_is(op->u.str, "is")) {
        if (is_action) { fail(r, op, "`is` is not allowed in the action scope"); return; }
        const dw_json *t = member(r, c, "entity_type", DW_JSON_STRING, true);
        if (!t) return;
        puts_(r, " is "); type_name(r, t);
        const dw_json *in = dw_json_get(c, "in");
        if (!in) return;
        if (in->kind != DW_JSON_OBJECT) { fail(r, in, "`in` must be {\"entity\": …} or {\"slot\": …}"); return; }
        puts_(r, " in ");
        ent = dw_json_get(in, "entity");
        slot = dw_json_get(in, "slot");
    } else if (dw_str_is(op->u.str, "==") || dw_str_is(op->u.str, "in")) {
        puts_(r, " "); put(r, op->u.str.s, op->u.str.len); puts_(r, " ");
        if (list && is_action && dw_str_is(op->u.str, "in")) {
            if (list->kind != DW_JSON_ARRAY) { fail(r, list, "`entities` must be a JSON array"); return; }
            puts_(r, "[");
            for (size_t i = 0; i < list->u.arr.n && !r->err; i++) { if (i) puts_(r, ", "); euid(r, list->u.arr.v[i]); }
            puts_(r, "]");
            return;
        }
    } else {
        fail(r, op, "unknown variant `%.*s`, expected one of `All`, `all`, `==`, `in`, `is`", (int)op->u.str.len, op->u.str.s);
        return;
    }
    if (ent) { euid(r, ent); return; }
    if (slot && !is_action) {
        bool want = dw_str_is(slot->u.str, !strcmp(var, "principal") ? "?principal" : "?resource");
        if (slot->kind != DW_JSON_STRING || !want) { fail(r, slot, "the %s scope's slot is ?%s", var, var); return; }
        if (!r->slots_ok) { fail(r, slot, "expected a static policy, got a template containing the slot ?%s", var); return; }
        put(r, slot->u.str.s, slot->u.str.len);
        return;
    }
    fail(r, c, "the constraint needs `entity`%s", is_action ? " or `entities`" : " or `slot`");
}

static bool has_slot(const dw_json *j)
{
    if (j->kind == DW_JSON_OBJECT) {
        for (size_t i = 0; i < j->u.obj.n; i++) {
            if ((dw_str_is(j->u.obj.v[i].key, "Slot") || dw_str_is(j->u.obj.v[i].key, "slot")) && j->u.obj.v[i].value->kind == DW_JSON_STRING) return true;
            if (has_slot(j->u.obj.v[i].value)) return true;
        }
    } else if (j->kind == DW_JSON_ARRAY) {
        for (size_t i = 0; i < j->u.arr.n; i++) if (has_slot(j->u.arr.v[i])) return true;
    }
    return false;
}

static void policy(est_r *r, const dw_json *p, bool template_ok)
{
    static const char *const names[] = { "effect", "principal", "action", "resource", "conditions", "annotations", NULL };
    if (p->kind != DW_JSON_OBJECT) { fail(r, p, "a policy must be a JSON object"); return; }
    if (!only(r, p, names)) return;
    r->slots_ok = template_ok;
    const dw_json *eff = member(r, p, "effect", DW_JSON_STRING, true);
    const dw_json *pr = member(r, p, "principal", DW_JSON_OBJECT, true), *ac = member(r, p, "action", DW_JSON_OBJECT, true),
                  *re = member(r, p, "resource", DW_JSON_OBJECT, true), *co = member(r, p, "conditions", DW_JSON_ARRAY, true);
    const dw_json *an = dw_json_get(p, "annotations") ? member(r, p, "annotations", DW_JSON_OBJECT, true) : NULL;
    if (r->err) return;
    if (!dw_str_is(eff->u.str, "permit") && !dw_str_is(eff->u.str, "forbid")) { fail(r, eff, "`effect` is \"permit\" or \"forbid\""); return; }
    if (an) {
        const dw_json_member **m = sorted_members(r, an);
        if (!m) return;
        for (size_t i = 0; i < an->u.obj.n && !r->err; i++) {
            if (!is_any_ident(m[i]->key)) { fail(r, m[i]->value, "an annotation key must be an identifier"); break; }
            puts_(r, "@"); put(r, m[i]->key.s, m[i]->key.len);
            if (m[i]->value->kind == DW_JSON_STRING) { puts_(r, "("); quoted(r, m[i]->value->u.str); puts_(r, ")"); }
            else if (m[i]->value->kind != DW_JSON_NULL) { fail(r, m[i]->value, "an annotation value is a string or null"); break; }
            puts_(r, "\n");
        }
        free(m);
    }
    put(r, eff->u.str.s, eff->u.str.len);
    puts_(r, "(");
    scope(r, "principal", pr); puts_(r, ", ");
    scope(r, "action", ac); puts_(r, ", ");
    scope(r, "resource", re); puts_(r, ")");
    for (size_t i = 0; i < co->u.arr.n && !r->err; i++) {
        const dw_json *c = co->u.arr.v[i];
        static const char *const cn[] = { "kind", "body", NULL };
        if (c->kind != DW_JSON_OBJECT) { fail(r, c, "a condition is {\"kind\": …, \"body\": …}"); return; }
        if (!only(r, c, cn)) return;
        const dw_json *kind = member(r, c, "kind", DW_JSON_STRING, true), *body = member(r, c, "body", DW_JSON_OBJECT, true);
        if (!kind || !body) return;
        if (!dw_str_is(kind->u.str, "when") && !dw_str_is(kind->u.str, "unless")) { fail(r, kind, "`kind` is \"when\" or \"unless\""); return; }
        puts_(r, " "); put(r, kind->u.str.s, kind->u.str.len); puts_(r, " { ");
        expr(r, body);
        puts_(r, " }");
    }
    puts_(r, ";");
}

/* ---- the input: one policy or template, or a policy set ---- */
typedef struct entry { dw_str id; const dw_json *p; bool tpl; } entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->tpl != y->tpl) return x->tpl ? 1 : -1;          /* Cedar prints the policies, then the templates */
    return dw_str_cmp(x->id, y->id);
}

static int id_cmp(const void *a, const void *b) { return dw_str_cmp(((const entry *)a)->id, ((const entry *)b)->id); }

static bool str_dup(dw_arena *a, dw_str in, dw_str *out)
{
    char *s = dw_arena_memdup(a, in.s ? in.s : "", in.len);
    if (!s) return false;
    *out = (dw_str){ s, in.len };
    return true;
}

/* One templateLinks entry: {"templateId", "newId", "values": {"?principal": uid, …}} */
static void link_entry(est_r *r, const dw_json *l, dw_template_link *out, dw_arena *a)
{
    static const char *const names[] = { "templateId", "newId", "values", NULL };
    if (l->kind != DW_JSON_OBJECT) { fail(r, l, "a template link is {\"templateId\": …, \"newId\": …, \"values\": …}"); return; }
    if (!only(r, l, names)) return;
    const dw_json *t = member(r, l, "templateId", DW_JSON_STRING, true), *n = member(r, l, "newId", DW_JSON_STRING, true),
                  *v = member(r, l, "values", DW_JSON_OBJECT, true);
    if (r->err) return;
    memset(out, 0, sizeof *out);
    out->loc = dw_loc_at(r->src, l->off, l->end);
    if (!str_dup(a, t->u.str, &out->template_id) || !str_dup(a, n->u.str, &out->link_id)) { r->err = -1; return; }
    for (size_t i = 0; i < v->u.obj.n && !r->err; i++) {
        dw_str k = v->u.obj.v[i].key;
        const dw_json *u = v->u.obj.v[i].value;
        bool pr = dw_str_is(k, "?principal");
        if (!pr && !dw_str_is(k, "?resource")) { fail(r, u, "unknown slot `%.*s`: expected ?principal or ?resource", (int)k.len, k.s); return; }
        if (u->kind == DW_JSON_OBJECT && dw_json_get(u, "__entity") && u->u.obj.n == 1) u = dw_json_get(u, "__entity");
        const dw_json *ty = u->kind == DW_JSON_OBJECT ? dw_json_get(u, "type") : NULL, *id = u->kind == DW_JSON_OBJECT ? dw_json_get(u, "id") : NULL;
        if (!ty || !id || ty->kind != DW_JSON_STRING || id->kind != DW_JSON_STRING || u->u.obj.n != 2) {
            fail(r, u, "the value of %.*s must be an entity uid {\"type\": …, \"id\": …}", (int)k.len, k.s);
            return;
        }
        dw_euid_lit e = { .loc = dw_loc_at(r->src, u->off, u->end) };
        if (!str_dup(a, ty->u.str, &e.type) || !str_dup(a, id->u.str, &e.id)) { r->err = -1; return; }
        dw_buf text = { 0 };                               /* T::"id", as a links file writes it */
        dw_buf *keep = r->b;
        r->b = &text;
        type_name(r, ty); puts_(r, "::"); quoted(r, id->u.str);
        r->b = keep;
        dw_str tx = { text.p, text.len };
        bool ok = r->err || str_dup(a, tx, pr ? &out->principal_text : &out->resource_text);
        dw_buf_free(&text);
        if (!ok) { r->err = -1; return; }
        if (pr) { out->principal = e; out->has_principal = true; }
        else { out->resource = e; out->has_resource = true; }
    }
}

static bool any_member(const dw_json *o, const char *const *names)
{
    for (; *names; names++) if (dw_json_get(o, *names)) return true;
    return false;
}

int dw_est_to_cedar(const dw_source *src, bool for_parse, dw_est_text *out, dw_diags *diags)
{
    memset(out, 0, sizeof *out);
    dw_arena_init(&out->arena, 0);
    dw_json *root = dw_json_parse(&out->arena, src, diags);
    if (!root) return diags->nerrors ? 1 : -1;
    est_r r = { .src = src, .diags = diags, .b = &out->text, .for_parse = for_parse };
    static const char *const set_names[] = { "staticPolicies", "templates", "templateLinks", NULL };
    static const char *const pol_names[] = { "action", "effect", "principal", "resource", "conditions", NULL };
    bool is_set = root->kind == DW_JSON_OBJECT && any_member(root, set_names);
    bool is_pol = root->kind == DW_JSON_OBJECT && any_member(root, pol_names);
    if (is_set == is_pol) {
        fail(&r, root, is_set ? "cannot determine if json policy is a single policy or a policy set. Found matching properties from both formats"
                              : "cannot determine if json policy is a single policy or a policy set. Found no matching properties from either format");
        return 1;
    }
    entry *ev = NULL;
    size_t n = 0;
    if (is_pol) {
        if (!(ev = calloc(1, sizeof *ev))) return -1;
        ev[0] = (entry){ { "policy0", 7 }, root, has_slot(root) };
        n = 1;
    } else {
        if (!only(&r, root, set_names)) return 1;
        const dw_json *st = dw_json_get(root, "staticPolicies") ? member(&r, root, "staticPolicies", DW_JSON_OBJECT, true) : NULL;
        const dw_json *tp = dw_json_get(root, "templates") ? member(&r, root, "templates", DW_JSON_OBJECT, true) : NULL;
        const dw_json *lk = dw_json_get(root, "templateLinks") ? member(&r, root, "templateLinks", DW_JSON_ARRAY, true) : NULL;
        if (r.err) return r.err;
        size_t cap = (st ? st->u.obj.n : 0) + (tp ? tp->u.obj.n : 0);
        if (cap && !(ev = calloc(cap, sizeof *ev))) return -1;
        for (int t = 0; t < 2; t++) {
            const dw_json *m = t ? tp : st;
            for (size_t i = 0; m && i < m->u.obj.n; i++) ev[n++] = (entry){ m->u.obj.v[i].key, m->u.obj.v[i].value, t == 1 };
        }
        if (lk && lk->u.arr.n) {
            if (!(out->links = dw_arena_alloc(&out->arena, lk->u.arr.n * sizeof *out->links))) { free(ev); return -1; }
            for (size_t i = 0; i < lk->u.arr.n && !r.err; i++) link_entry(&r, lk->u.arr.v[i], &out->links[i], &out->arena);
            out->nlinks = lk->u.arr.n;
        }
    }
    if (n > 1) qsort(ev, n, sizeof *ev, id_cmp);    /* one id space for policies and templates */
    for (size_t i = 1; i < n && !r.err; i++)
        if (dw_str_eq(ev[i - 1].id, ev[i].id)) fail(&r, ev[i].p, "duplicate policy id `%.*s`", (int)ev[i].id.len, ev[i].id.s);
    if (n > 1) qsort(ev, n, sizeof *ev, entry_cmp);
    if (n && !r.err && !(out->ids = dw_arena_alloc(&out->arena, n * sizeof *out->ids))) r.err = -1;
    for (size_t i = 0; i < n && !r.err; i++) {
        if (i) puts_(&r, for_parse ? "\n" : "\n\n");
        policy(&r, ev[i].p, ev[i].tpl);
        if (!r.err && !str_dup(&out->arena, ev[i].id, &out->ids[i])) r.err = -1;
        out->nids = i + 1;
    }
    free(ev);
    return r.err;
}

void dw_est_text_free(dw_est_text *t)
{
    dw_buf_free(&t->text);
    dw_arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}
