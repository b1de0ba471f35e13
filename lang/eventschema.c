/* eventschema.c - the `.dwschema` parser (dogwood.md §12.1, §12.4-§12.8)
 * and the pin analysis of §8.9.  Syntax errors stop the parse (later ones
 * are usually consequences); semantic errors (selectors, pins, duplicate
 * names, max_window) are all reported.  Derivation, built-ins and the
 * printer live in eventschema_derive.c. */
#include "eventschema.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/utf8.h"

typedef enum { TK_EOF, TK_IDENT, TK_INT, TK_PUNCT } tk_kind;

/* Punctuation is one char: 'C' stands for "::" and 'E' for "...". */
typedef struct tok {
    tk_kind k;
    char p;
    uint32_t off, end;
    bool gap;               /* whitespace or a comment precedes it */
    uint64_t val;           /* TK_INT */
    bool overflow;          /* TK_INT did not fit 64 bits */
} tok;

typedef struct ep {
    dw_event_schema *es;
    const dw_source *src;
    dw_diags *d;
    tok *toks; size_t ntoks, pos;
    bool failed;            /* a syntax error: stop */
    size_t nerr0;           /* d->nerrors on entry */
    uint32_t next_id;
} ep;

static dw_loc tloc(ep *p, const tok *t) { return dw_loc_at(p->src, t->off, t->end); }
static const tok *cur(ep *p) { return &p->toks[p->pos]; }
static const tok *peek(ep *p, size_t k)
{
    size_t i = p->pos + k;
    return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}
static dw_str tstr(ep *p, const tok *t) { return (dw_str){ p->src->text + t->off, t->end - t->off }; }
static bool is_punct(const tok *t, char c) { return t->k == TK_PUNCT && t->p == c; }
static bool is_word(ep *p, const tok *t, const char *w)
{
    size_t n = strlen(w);
    return t->k == TK_IDENT && t->end - t->off == n && memcmp(p->src->text + t->off, w, n) == 0;
}

static void oom(ep *p)
{
    if (!p->failed) dw_error(p->d, p->src, dw_loc_at(p->src, 0, 0), "out of memory");
    p->failed = true;
}

/* Describe a token for "found …" in messages. */
static void describe(ep *p, const tok *t, char *buf, size_t n)
{
    if (t->k == TK_EOF) { snprintf(buf, n, "end of input"); return; }
    const char *s = p->src->text + t->off;
    int len = (int)(t->end - t->off);
    if (len > 40) len = 40;
    snprintf(buf, n, "`%.*s`", len, s);
}

static void syntax(ep *p, const tok *t, const char *hint, const char *what)
{
    if (p->failed) return;
    p->failed = true;
    char f[64];
    describe(p, t, f, sizeof f);
    if (hint) dw_error_hint(p->d, p->src, tloc(p, t), hint, "expected %s, found %s", what, f);
    else dw_error(p->d, p->src, tloc(p, t), "expected %s, found %s", what, f);
}

static bool expect(ep *p, char c, const char *what)
{
    if (p->failed) return false;
    if (is_punct(cur(p), c)) { p->pos++; return true; }
    syntax(p, cur(p), NULL, what);
    return false;
}

static bool expect_ident(ep *p, const char *what, dw_str *out, dw_loc *loc)
{
    if (p->failed) return false;
    const tok *t = cur(p);
    if (t->k != TK_IDENT) { syntax(p, t, NULL, what); return false; }
    *out = tstr(p, t);
    if (loc) *loc = tloc(p, t);
    p->pos++;
    return true;
}

/* Record the first place where §2.2's whitespace-in-composite-token
 * compatibility was used. */
static void loose(ep *p, const tok *t)
{
    if (p->es->loose_tokens) return;
    p->es->loose_tokens = true;
    p->es->loose_loc = tloc(p, t);
}

/* ---------------------------------------------------------------- lexer */

static bool lex(ep *p)
{
    const char *s = p->src->text;
    size_t n = p->src->len, i = 0, cap = 64, nt = 0;
    tok *v = malloc(cap * sizeof *v);
    if (!v) { oom(p); return false; }
    for (;;) {
        bool gap = false;
        for (;;) {
            if (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) { i++; gap = true; continue; }
            if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
                while (i < n && s[i] != '\n') i++;
                gap = true;
                continue;
            }
            break;
        }
        if (nt == cap) {
            tok *nv = realloc(v, cap * 2 * sizeof *v);
            if (!nv) { free(v); oom(p); return false; }
            v = nv;
            cap *= 2;
        }
        tok *t = &v[nt];
        memset(t, 0, sizeof *t);
        t->gap = gap;
        t->off = (uint32_t)i;
        if (i >= n) { t->k = TK_EOF; t->end = (uint32_t)i; nt++; break; }
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_') {
            while (i < n && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                             (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                i++;
            t->k = TK_IDENT;
        } else if (c >= '0' && c <= '9') {
            uint64_t val = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                unsigned dgt = (unsigned)(s[i] - '0');
                if (val > (UINT64_MAX - dgt) / 10) t->overflow = true;
                else val = val * 10 + dgt;
                i++;
            }
            t->k = TK_INT;
            t->val = val;
        } else if (c == ':' && i + 1 < n && s[i + 1] == ':') {
            t->k = TK_PUNCT; t->p = 'C'; i += 2;
        } else if (c == '.' && i + 2 < n && s[i + 1] == '.' && s[i + 2] == '.') {
            t->k = TK_PUNCT; t->p = 'E'; i += 3;
        } else if (strchr("<>{},:=().", c) && c) {
            t->k = TK_PUNCT; t->p = (char)c; i++;
        } else {
            /* Span one whole UTF-8 sequence so the caret covers the character. */
            size_t e = i + 1;
            while (e < n && dw_utf8_is_cont((unsigned char)s[e]) && e - i < 4) e++;
            dw_loc l = dw_loc_at(p->src, (uint32_t)i, (uint32_t)e);
            size_t want = dw_utf8_len((const unsigned char *)s + i, n - i);
            if (c >= 0x20 && c < 0x7F)
                dw_error(p->d, p->src, l, "unexpected character `%c` in the event schema", c);
            else if (want > 1 && e - i == want)
                dw_error(p->d, p->src, l, "unexpected character `%.*s` in the event schema", (int)want, s + i);
            else
                dw_error(p->d, p->src, l, "unexpected character (byte 0x%02X) in the event schema", c);
            p->failed = true;
            free(v);
            return false;
        }
        t->end = (uint32_t)i;
        nt++;
    }
    /* Keep the tokens in the arena so the heap copy can go now. */
    p->toks = dw_arena_alloc(&p->es->arena, nt * sizeof *v);
    if (!p->toks) { free(v); oom(p); return false; }
    memcpy(p->toks, v, nt * sizeof *v);
    p->ntoks = nt;
    free(v);
    return true;
}

/* ---------------------------------------------------------------- helpers */

/* Arena-backed growable array. */
static void *grow(ep *p, void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap * 2 : 4;
    void *nv = dw_arena_alloc(&p->es->arena, nc * size);
    if (!nv) { oom(p); return NULL; }
    if (n) memcpy(nv, v, n * size);
    *cap = nc;
    return nv;
}

static dw_str concat(dw_arena *a, dw_str x, const char *sep, dw_str y)
{
    size_t ls = strlen(sep), n = x.len + ls + y.len;
    char *b = dw_arena_alloc(a, n + 1);
    if (!b) return (dw_str){ NULL, 0 };
    if (x.len) memcpy(b, x.s, x.len);
    memcpy(b + x.len, sep, ls);
    if (y.len) memcpy(b + x.len + ls, y.s, y.len);
    return (dw_str){ b, n };
}

typedef struct name_ix { dw_str name; size_t ix; } name_ix;
static int cmp_name_ix(const void *a, const void *b)
{
    const name_ix *x = a, *y = b;
    size_t m = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = m ? memcmp(x->name.s, y->name.s, m) : 0;
    if (c) return c;
    if (x->name.len != y->name.len) return x->name.len < y->name.len ? -1 : 1;
    return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* first[i] = index of the first earlier item with the same name, or SIZE_MAX.
 * Sorting keeps this O(n log n) on hostile inputs with many fields. */
static size_t *find_duplicates(ep *p, const dw_str *(*get)(const void *, size_t), const void *items, size_t n)
{
    name_ix *v = malloc((n ? n : 1) * sizeof *v);
    size_t *first = dw_arena_alloc(&p->es->arena, (n ? n : 1) * sizeof *first);
    if (!v || !first) { free(v); oom(p); return NULL; }
    for (size_t i = 0; i < n; i++) { v[i].name = *get(items, i); v[i].ix = i; first[i] = SIZE_MAX; }
    qsort(v, n, sizeof *v, cmp_name_ix);
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        while (j > 0 && dw_str_eq(v[j - 1].name, v[i].name)) j--;
        if (j != i) first[v[i].ix] = v[j].ix;
    }
    free(v);
    return first;
}

static const dw_str *fdecl_name(const void *items, size_t i) { return &((const dw_ev_fdecl *)items)[i].name; }
static const dw_str *decl_kind(const void *items, size_t i) { return &((const dw_ev_decl *)items)[i].kind; }

static const char *SEL_NAMES[] = { "inputs", "outputs", "principalType", "resourceType" };

static bool selector_of(dw_str s, dw_ev_selector *out)
{
    for (int i = 0; i < 4; i++)
        if (dw_str_is(s, SEL_NAMES[i])) { *out = (dw_ev_selector)i; return true; }
    return false;
}

/* ---------------------------------------------------------------- fields */

/* "(" IDENT ")" after a selector: the argument must be the binder. */
static void selector_arg(ep *p, dw_str binder)
{
    dw_str arg; dw_loc l;
    if (!expect(p, '(', "`(`") || !expect_ident(p, "the action binder", &arg, &l) || !expect(p, ')', "`)`")) return;
    if (!dw_str_eq(arg, binder))
        dw_error_hint(p->d, p->src, l, NULL, "selector argument `%.*s` does not name the declared action binder `%.*s`",
                      (int)arg.len, arg.s, (int)binder.len, binder.s);
}

/* pin_ref = ("principal" | "resource") { "." IDENT } | "context" "." IDENT { "." IDENT } */
static void pin_ref(ep *p, dw_ev_pin_ref *r)
{
    const tok *t0 = cur(p);
    dw_str root;
    if (!expect_ident(p, "a pin value (`principal`, `resource` or `context.<field>`)", &root, NULL)) return;
    uint32_t end = t0->end;
    size_t nseg = 0;
    dw_buf path = { 0 };
    while (is_punct(cur(p), '.')) {
        p->pos++;
        dw_str seg; const tok *ts = cur(p);
        if (!expect_ident(p, "an attribute name after `.`", &seg, NULL)) { dw_buf_free(&path); return; }
        if (nseg++) dw_buf_putc(&path, '.');
        dw_buf_append(&path, seg.s, seg.len);
        end = ts->end;
    }
    r->loc = dw_loc_at(p->src, t0->off, end);
    r->path.s = dw_arena_memdup(&p->es->arena, path.p ? path.p : "", path.len);
    r->path.len = path.len;
    dw_buf_free(&path);
    if (!r->path.s) { oom(p); return; }
    if (dw_str_is(root, "principal")) r->root = DW_PIN_PRINCIPAL;
    else if (dw_str_is(root, "resource")) r->root = DW_PIN_RESOURCE;
    else if (dw_str_is(root, "context")) {
        r->root = DW_PIN_CONTEXT;
        if (nseg == 0)
            dw_error_hint(p->d, p->src, r->loc, "name the context field the event is keyed on, e.g. `context.sessionId`",
                          "pin value `context` must name a field: `context.<field>`");
    } else {
        dw_error_hint(p->d, p->src, r->loc, "a pin value starts with `principal`, `resource` or `context.`",
                      "`%.*s` is not an allowed pin root", (int)root.len, root.s);
        r->root = DW_PIN_CONTEXT;
    }
    r->text = nseg ? concat(&p->es->arena, root, ".", r->path) : concat(&p->es->arena, root, "", (dw_str){ "", 0 });
    if (!r->text.s) oom(p);
}

static bool field_list(ep *p, dw_str binder, int depth, dw_ev_fdecl **out, size_t *nout);

static void field(ep *p, dw_str binder, int depth, dw_ev_fdecl *f)
{
    f->id = p->next_id++;
    const tok *t = cur(p);
    bool pin_on_spread = false;
    if (is_word(p, t, "pin") && is_punct(peek(p, 1), 'E')) {
        dw_error_hint(p->d, p->src, tloc(p, t), "pin one of the leaf fields instead",
                      "a pin is allowed only on a leaf field, not on a spread");
        p->pos++;
        pin_on_spread = true;
        t = cur(p);
    }
    if (is_punct(t, 'E')) {
        p->pos++;
        const tok *ts = cur(p);
        dw_str sel;
        if (!expect_ident(p, "a selector (`inputs` or `outputs`) after `...`", &sel, NULL)) return;
        f->kind = DW_FD_SPREAD;
        f->loc = dw_loc_at(p->src, t->off, ts->end);
        dw_ev_selector s = DW_SEL_INPUTS;
        bool known = selector_of(sel, &s);
        if (!known)
            dw_error_hint(p->d, p->src, tloc(p, ts), "the selectors are `inputs`, `outputs`, `principalType` and `resourceType`",
                          "unknown selector `%.*s`", (int)sel.len, sel.s);
        else if (s == DW_SEL_PRINCIPAL_TYPE || s == DW_SEL_RESOURCE_TYPE)
            dw_error_hint(p->d, p->src, tloc(p, ts), "e.g. `callerPrincipal: principalType(A)`",
                          "`%.*s` cannot be spread (it yields entity types, not a field record); use it as a field type instead",
                          (int)sel.len, sel.s);
        f->sel = known ? s : DW_SEL_INPUTS;
        f->name = (dw_str){ s == DW_SEL_OUTPUTS ? "output" : "input", s == DW_SEL_OUTPUTS ? 6 : 5 };
        /* Already reported: name it after the selector so it cannot also
         * trip the duplicate-name check against `input`. */
        if (!known || s > DW_SEL_OUTPUTS) f->name = sel;
        selector_arg(p, binder);
        if (!p->failed && is_punct(cur(p), '=')) {
            const tok *te = cur(p);
            p->pos++;
            dw_ev_pin_ref r = { 0 };
            pin_ref(p, &r);
            if (!pin_on_spread)
                dw_error_hint(p->d, p->src, tloc(p, te), "pin one of the leaf fields instead",
                              "a pin is allowed only on a leaf field, not on a spread");
        }
        return;
    }
    if (is_word(p, t, "pin") && peek(p, 1)->k == TK_IDENT && is_punct(peek(p, 2), ':')) {
        f->pinned = true;
        p->pos++;
    }
    if (!expect_ident(p, "a field name or `...`", &f->name, &f->loc)) return;
    if (!expect(p, ':', "`:` after the field name")) return;
    const tok *tt = cur(p);
    if (is_punct(tt, '{')) {
        if (depth >= DW_EVENT_MAX_GROUP_DEPTH) {
            if (!p->failed)
                dw_error(p->d, p->src, tloc(p, tt), "field groups are nested too deeply (limit %d)", DW_EVENT_MAX_GROUP_DEPTH);
            p->failed = true;
            return;
        }
        p->pos++;
        f->kind = DW_FD_GROUP;
        f->type_loc = tloc(p, tt);
        if (!field_list(p, binder, depth + 1, &f->fields, &f->nfields)) return;
    } else if (tt->k == TK_IDENT && is_punct(peek(p, 1), '(')) {
        dw_str sel = tstr(p, tt);
        dw_ev_selector s;
        f->kind = DW_FD_SELECTOR;
        f->type_loc = tloc(p, tt);
        p->pos++;
        if (!selector_of(sel, &s)) {
            dw_error_hint(p->d, p->src, f->type_loc, "the selectors usable as a field type are `principalType` and `resourceType`",
                          "unknown selector `%.*s`", (int)sel.len, sel.s);
            s = DW_SEL_PRINCIPAL_TYPE;
        } else if (s == DW_SEL_INPUTS || s == DW_SEL_OUTPUTS) {
            char hint[64];
            snprintf(hint, sizeof hint, "spread it instead: `...%s(%.*s)`", SEL_NAMES[s], (int)(binder.len > 20 ? 20 : binder.len), binder.s);
            dw_error_hint(p->d, p->src, f->type_loc, hint, "`%s` cannot be used as a field type", SEL_NAMES[s]);
            s = DW_SEL_PRINCIPAL_TYPE;
        }
        f->sel = s;
        selector_arg(p, binder);
    } else if (tt->k == TK_IDENT) {
        f->kind = DW_FD_TYPE;
        dw_buf b = { 0 };
        uint32_t end = tt->end;
        dw_buf_append(&b, p->src->text + tt->off, tt->end - tt->off);
        p->pos++;
        while (is_punct(cur(p), 'C')) {
            const tok *tc = cur(p);
            if (tc->gap) loose(p, tc);
            p->pos++;
            const tok *ti = cur(p);
            dw_str seg;
            if (!expect_ident(p, "a name after `::`", &seg, NULL)) { dw_buf_free(&b); return; }
            if (ti->gap) loose(p, ti);
            dw_buf_append(&b, "::", 2);
            dw_buf_append(&b, seg.s, seg.len);
            end = ti->end;
        }
        f->type_loc = dw_loc_at(p->src, tt->off, end);
        f->type_name.s = dw_arena_memdup(&p->es->arena, b.p ? b.p : "", b.len);
        f->type_name.len = b.len;
        dw_buf_free(&b);
        if (!f->type_name.s) { oom(p); return; }
    } else {
        syntax(p, tt, "a field type is a Cedar type, an entity type, `principalType(A)`, `resourceType(A)` or `{ … }`",
               "a field type");
        return;
    }
    if (p->failed) return;
    bool has_ref = false;
    if (is_punct(cur(p), '=')) {
        p->pos++;
        pin_ref(p, &f->ref);
        if (p->failed) return;
        has_ref = true;
    }
    int nl = (int)f->name.len;
    if (f->kind == DW_FD_GROUP && (f->pinned || has_ref)) {
        dw_error_hint(p->d, p->src, f->loc, "pin one of the group's leaf fields instead",
                      "a pin is allowed only on a leaf field, not on the group `%.*s`", nl, f->name.s);
        f->pinned = false;
    } else if (f->pinned && !has_ref) {
        dw_error_hint(p->d, p->src, f->loc, "add the value it is pinned to, e.g. `= principal` or `= context.sessionId`",
                      "pinned field `%.*s` is missing its pin value", nl, f->name.s);
        f->pinned = false;
    } else if (!f->pinned && has_ref) {
        char hint[160];
        snprintf(hint, sizeof hint, "write `pin %.*s: … = %.*s`", nl > 40 ? 40 : nl, f->name.s,
                 (int)(f->ref.text.len > 60 ? 60 : f->ref.text.len), f->ref.text.s);
        dw_error_hint(p->d, p->src, f->ref.loc, hint, "field `%.*s` has a `= %.*s` value but is not marked `pin`",
                      nl, f->name.s, (int)f->ref.text.len, f->ref.text.s);
    }
}

/* Report duplicate names in one field list (§12.2). */
static void check_unique(ep *p, dw_ev_fdecl *v, size_t n)
{
    size_t *first = find_duplicates(p, fdecl_name, v, n);
    if (!first) return;
    for (size_t i = 0; i < n; i++) {
        if (first[i] == SIZE_MAX) continue;
        const dw_ev_fdecl *a = &v[first[i]], *b = &v[i];
        char hint[96];
        snprintf(hint, sizeof hint, "first declared at line %u, column %u", a->loc.line, a->loc.col);
        if (a->kind == DW_FD_SPREAD && b->kind == DW_FD_SPREAD)
            dw_error_hint(p->d, p->src, b->loc, hint, "the spread `...%s` appears twice", SEL_NAMES[b->sel]);
        else if (a->kind == DW_FD_SPREAD || b->kind == DW_FD_SPREAD) {
            const dw_ev_fdecl *s = a->kind == DW_FD_SPREAD ? a : b;
            snprintf(hint, sizeof hint, "the spread `...%s` at line %u produces a group named `%.*s`",
                     SEL_NAMES[s->sel], s->loc.line, (int)b->name.len, b->name.s);
            dw_error_hint(p->d, p->src, b->loc, hint, "duplicate field name `%.*s`", (int)b->name.len, b->name.s);
        } else
            dw_error_hint(p->d, p->src, b->loc, hint, "duplicate field name `%.*s`", (int)b->name.len, b->name.s);
    }
}

/* [ field { "," field } [ "," ] ] "}" — the "{" is already consumed. */
static bool field_list(ep *p, dw_str binder, int depth, dw_ev_fdecl **out, size_t *nout)
{
    dw_ev_fdecl *v = NULL;
    size_t n = 0, cap = 0;
    while (!p->failed && !is_punct(cur(p), '}')) {
        if (!(v = grow(p, v, n, &cap, sizeof *v))) return false;
        memset(&v[n], 0, sizeof v[n]);
        field(p, binder, depth, &v[n]);
        n++;
        if (p->failed) return false;
        if (is_punct(cur(p), ',')) { p->pos++; continue; }
        if (!is_punct(cur(p), '}')) { syntax(p, cur(p), NULL, "`,` or `}`"); return false; }
    }
    if (!expect(p, '}', "`}`")) return false;
    check_unique(p, v, n);
    *out = v;
    *nout = n;
    return true;
}

/* ---------------------------------------------------------------- declarations */

static void collect_pins(ep *p, dw_ev_decl *d, const dw_ev_fdecl *v, size_t n, dw_str prefix, size_t *cap)
{
    for (size_t i = 0; i < n && !p->failed; i++) {
        const dw_ev_fdecl *f = &v[i];
        dw_str path = prefix.len ? concat(&p->es->arena, prefix, ".", f->name) : f->name;
        if (!path.s) { oom(p); return; }
        if (f->kind == DW_FD_GROUP) collect_pins(p, d, f->fields, f->nfields, path, cap);
        else if (f->pinned) {
            if (!(d->pins = grow(p, d->pins, d->npins, cap, sizeof *d->pins))) return;
            d->pins[d->npins++] = (dw_ev_pin_decl){ path, f->ref, f };
        }
    }
}

static void decl(ep *p, dw_ev_decl *d)
{
    if (is_word(p, cur(p), "decision")) { d->decision = true; p->pos++; }
    if (!is_word(p, cur(p), "event")) {
        syntax(p, cur(p), NULL, d->decision ? "`event` after `decision`" : "`event`, `decision event` or `max_window`");
        return;
    }
    p->pos++;
    if (!expect(p, '<', "`<` and the action binder, as in `event <A>::request`")) return;
    if (!expect_ident(p, "the action binder name", &d->binder, NULL)) return;
    if (!expect(p, '>', "`>`")) return;
    const tok *tc = cur(p);
    if (!expect(p, 'C', "`::` and the event kind")) return;
    const tok *tk = cur(p);
    if (!expect_ident(p, "the event kind name", &d->kind, &d->loc)) return;
    if (tc->gap || tk->gap) loose(p, tc->gap ? tc : tk);
    if (!expect(p, '{', "`{`")) return;
    if (!field_list(p, d->binder, 1, &d->fields, &d->nfields)) return;
    size_t cap = 0;
    collect_pins(p, d, d->fields, d->nfields, (dw_str){ "", 0 }, &cap);
}

/* max_window "=" INTEGER UNIT */
static void max_window(ep *p, bool seen, bool first)
{
    const tok *kw = cur(p);
    p->pos++;
    dw_loc kl = tloc(p, kw);
    if (seen)
        dw_error_hint(p->d, p->src, kl, "declare it once, as the first item", "`max_window` is declared more than once");
    else if (!first)
        dw_error_hint(p->d, p->src, kl, "move it before the first event declaration", "`max_window` must be the first item of the event schema");
    if (!expect(p, '=', "`=` after `max_window`")) return;
    const tok *tn = cur(p);
    if (tn->k != TK_INT) { syntax(p, tn, "e.g. `max_window = 24h`", "an unsigned integer and a unit (`s`, `m`, `h` or `d`)"); return; }
    p->pos++;
    const tok *tu = cur(p);
    if (tu->k != TK_IDENT) { syntax(p, tu, "e.g. `max_window = 24h`", "a time unit (`s`, `m`, `h` or `d`) after the integer"); return; }
    p->pos++;
    dw_str u = tstr(p, tu);
    dw_loc span = dw_loc_at(p->src, tn->off, tu->end);
    uint64_t mul = dw_str_is(u, "s") ? 1 : dw_str_is(u, "m") ? 60 : dw_str_is(u, "h") ? 3600 : dw_str_is(u, "d") ? 86400 : 0;
    if (!mul) {
        dw_error_hint(p->d, p->src, tloc(p, tu), "the units are `s`, `m`, `h` and `d`", "unknown time unit `%.*s`", (int)u.len, u.s);
        return;
    }
    if (tu->gap) loose(p, tu);
    /* The runtime counts nanoseconds (§20 D6): the cap must fit there too. */
    const uint64_t max_s = (uint64_t)INT64_MAX / 1000000000u;
    if (tn->overflow || tn->val > max_s / mul) {
        dw_error_hint(p->d, p->src, span, "the largest accepted window is 9223372036s (about 292 years)",
                      "`max_window` is too large");
        return;
    }
    if (tn->val == 0) {
        dw_error_hint(p->d, p->src, span, "use a positive window such as `max_window = 24h`", "`max_window` must be greater than zero");
        return;
    }
    if (seen || !first) return;
    p->es->has_max_window = true;
    p->es->max_window = tn->val * mul;
    char buf[32];
    int k = snprintf(buf, sizeof buf, "%llu%.*s", (unsigned long long)tn->val, (int)u.len, u.s);
    p->es->max_window_text.s = dw_arena_memdup(&p->es->arena, buf, (size_t)k);
    p->es->max_window_text.len = (size_t)k;
    if (!p->es->max_window_text.s) oom(p);
}

/* §8.9: the pins declared identically on every kind whose ref is the
 * field's own request-side path. */
static void key_pins(ep *p)
{
    dw_event_schema *es = p->es;
    if (es->ndecls == 0) return;
    const dw_ev_decl *d0 = &es->decls[0];
    size_t cap = 0;
    for (size_t i = 0; i < d0->npins; i++) {
        const dw_ev_pin_decl *pn = &d0->pins[i];
        bool sym = (dw_str_is(pn->path, "callerPrincipal") && dw_str_is(pn->ref.text, "principal")) ||
                   (dw_str_is(pn->path, "callerResource") && dw_str_is(pn->ref.text, "resource")) ||
                   (pn->ref.root == DW_PIN_CONTEXT && dw_str_eq(pn->ref.path, pn->path));
        if (!sym) continue;
        bool universal = true;
        for (size_t k = 1; k < es->ndecls && universal; k++) {
            bool found = false;
            for (size_t j = 0; j < es->decls[k].npins && !found; j++)
                found = dw_str_eq(es->decls[k].pins[j].path, pn->path) && dw_str_eq(es->decls[k].pins[j].ref.text, pn->ref.text);
            universal = found;
        }
        if (!universal) continue;
        if (!(es->key = grow(p, es->key, es->nkey, &cap, sizeof *es->key))) return;
        es->key[es->nkey++] = *pn;
    }
}

dw_event_schema *dw_event_schema_parse(const dw_source *src, dw_diags *d)
{
    dw_event_schema *es = calloc(1, sizeof *es);
    if (!es) { dw_error(d, src, dw_loc_at(src, 0, 0), "out of memory"); return NULL; }
    dw_arena_init(&es->arena, 16 * 1024);
    es->src = src;
    es->max_window = DW_EVENT_DEFAULT_MAX_WINDOW;
    es->max_window_text = (dw_str){ "24h", 3 };
    ep P = { .es = es, .src = src, .d = d, .nerr0 = d->nerrors }, *p = &P;
    if (src->len > UINT32_MAX - 1) {
        dw_error(d, src, dw_loc_at(src, 0, 0), "the event schema is too large");
        dw_event_schema_free(es);
        return NULL;
    }
    if (!lex(p)) { dw_event_schema_free(es); return NULL; }
    if (cur(p)->k == TK_EOF) {
        dw_error_hint(d, src, dw_loc_at(src, 0, 0),
                      "declare at least one decision kind, e.g. `decision event <A>::request { ...inputs(A) }`",
                      "the event schema is empty: it declares no events, so nothing would decide");
        dw_event_schema_free(es);
        return NULL;
    }
    size_t cap = 0, kcap = 0;
    bool seen_mw = false;
    for (bool first = true; !p->failed && cur(p)->k != TK_EOF; first = false) {
        if (is_word(p, cur(p), "max_window")) {
            max_window(p, seen_mw, first);
            seen_mw = true;
            continue;
        }
        if (!(es->decls = grow(p, es->decls, es->ndecls, &cap, sizeof *es->decls))) break;
        dw_ev_decl *dc = &es->decls[es->ndecls];
        memset(dc, 0, sizeof *dc);
        decl(p, dc);
        if (p->failed) break;
        es->ndecls++;
        if (dc->decision) {
            if (!(es->decision_kinds = grow(p, es->decision_kinds, es->ndecision_kinds, &kcap, sizeof *es->decision_kinds))) break;
            es->decision_kinds[es->ndecision_kinds++] = dc->kind;
        }
    }
    if (!p->failed) {
        size_t *firstk = find_duplicates(p, decl_kind, es->decls, es->ndecls);
        for (size_t i = 0; firstk && i < es->ndecls; i++) {
            if (firstk[i] == SIZE_MAX) continue;
            const dw_ev_decl *a = &es->decls[firstk[i]], *b = &es->decls[i];
            char hint[96];
            snprintf(hint, sizeof hint, "first declared at line %u, column %u", a->loc.line, a->loc.col);
            dw_error_hint(d, src, b->loc, hint, "event kind `%.*s` is declared more than once", (int)b->kind.len, b->kind.s);
        }
    }
    if (p->failed || d->nerrors > P.nerr0) { dw_event_schema_free(es); return NULL; }
    es->nfdecls = P.next_id;
    key_pins(p);
    if (p->failed) { dw_event_schema_free(es); return NULL; }
    if (es->ndecision_kinds == 0)
        dw_diag_add(d, DW_SEV_WARNING, src, es->ndecls ? es->decls[0].loc : dw_loc_at(src, 0, 0),
                    "mark the kind that should receive verdicts, e.g. `decision event <A>::request { … }`",
                    "the event schema declares no decision kind: no event will receive a verdict");
    return es;
}

dw_event_schema *dw_event_schema_builtin(const char *name, dw_diags *d)
{
    const dw_source *src = dw_event_schema_builtin_source(name);
    return src ? dw_event_schema_parse(src, d) : NULL;
}
