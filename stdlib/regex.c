/* regex.c - see regex.h.  Parse to a small tree, emit Pike VM code
 * (CHAR, ANY, CLASS, BOL, EOL, SPLIT, JMP, MATCH), then simulate every
 * thread in lock step over the text.  Threads are kept in order of their
 * start position, and a state already on a list keeps the thread that got
 * there first (the earliest start), so each state is visited once per text
 * position: the time bound of regex.h. */
#include "regex.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"

enum { R_LIT, R_ANY, R_CLASS, R_BOL, R_EOL, R_CAT, R_ALT, R_REP, R_EMPTY };
enum { I_CHAR, I_ANY, I_CLASS, I_BOL, I_EOL, I_SPLIT, I_JMP, I_MATCH };

typedef struct rnode {
    int kind;
    uint32_t cp;                 /* LIT */
    uint32_t cls;                /* CLASS: index */
    int min, max;                /* REP: max -1 = unbounded */
    struct rnode *a, *b;         /* CAT, ALT: a then b; REP: a */
} rnode;

typedef struct rclass { uint32_t first, n; bool neg; } rclass;   /* ranges[first .. first+n) */
typedef struct insn { uint8_t op; uint32_t x, y; } insn;           /* CHAR: x cp; CLASS: x; SPLIT: x, y; JMP: x */

struct dw_regex {
    insn *code; uint32_t ncode;
    rclass *cls; uint32_t ncls;
    uint32_t *ranges; uint32_t nranges;   /* lo, hi pairs */
};

typedef struct rp {
    const unsigned char *s; size_t n, i;
    char *err; size_t errcap;
    bool failed;
    rnode *nodes; size_t nnodes, capnodes;
    dw_regex *re;
    uint32_t capcls, capranges;
    int depth;
} rp;

static void fail(rp *p, const char *msg)
{
    if (p->failed) return;
    p->failed = true;
    snprintf(p->err, p->errcap, "%s at offset %zu", msg, p->i);
}

/* Nodes are indices into one growing array (stable pointers are not needed). */
static rnode *node(rp *p, int kind)
{
    if (p->nnodes == p->capnodes) {
        size_t cap = p->capnodes ? p->capnodes * 2 : 64;
        if (cap > 1u << 20) { fail(p, "pattern too large"); return NULL; }
        rnode *v = malloc(cap * sizeof *v);
        if (!v) { fail(p, "out of memory"); return NULL; }
        /* move, re-pointing the children into the new array */
        for (size_t k = 0; k < p->nnodes; k++) {
            v[k] = p->nodes[k];
            if (v[k].a) v[k].a = v + (size_t)(p->nodes[k].a - p->nodes);
            if (v[k].b) v[k].b = v + (size_t)(p->nodes[k].b - p->nodes);
        }
        free(p->nodes);
        p->nodes = v;
        p->capnodes = cap;
    }
    rnode *r = &p->nodes[p->nnodes++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    return r;
}
/* node() may move the array: refer to nodes by index across calls */
#define IDX(p, r) ((size_t)((r) - (p)->nodes))
#define AT(p, k) (&(p)->nodes[(k)])

static uint32_t next_cp(rp *p)
{
    size_t l = dw_utf8_len(p->s + p->i, p->n - p->i);
    uint32_t cp;
    if (l == 0) { cp = p->s[p->i]; l = 1; }
    else cp = dw_utf8_get(p->s + p->i, l);
    p->i += l;
    return cp;
}

static bool add_range(rp *p, uint32_t lo, uint32_t hi)
{
    dw_regex *re = p->re;
    if (re->nranges + 2 > p->capranges) {
        uint32_t cap = p->capranges ? p->capranges * 2 : 32;
        uint32_t *v = realloc(re->ranges, cap * sizeof *v);
        if (!v) { fail(p, "out of memory"); return false; }
        re->ranges = v;
        p->capranges = cap;
    }
    re->ranges[re->nranges++] = lo;
    re->ranges[re->nranges++] = hi;
    return true;
}

static bool named_class(rp *p, const char *name, size_t len)
{
    static const struct { const char *n; const char *r; } tab[] = {
        { "alpha", "AZaz" }, { "digit", "09" }, { "alnum", "09AZaz" }, { "upper", "AZ" }, { "lower", "az" },
        { "space", "\t\r  " }, { "blank", "\t\t  " }, { "xdigit", "09AFaf" }, { "cntrl", "\0\x1f\x7f\x7f" },
        { "print", " ~" }, { "graph", "!~" }, { "punct", "!/:@[`{~" },
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        if (strlen(tab[k].n) != len || memcmp(tab[k].n, name, len)) continue;
        size_t rl = strcmp(tab[k].n, "cntrl") == 0 ? 4 : strlen(tab[k].r);
        if (strcmp(tab[k].n, "space") == 0) { if (!add_range(p, '\t', '\r')) return false; return add_range(p, ' ', ' '); }
        for (size_t j = 0; j + 1 < rl; j += 2)
            if (!add_range(p, (unsigned char)tab[k].r[j], (unsigned char)tab[k].r[j + 1])) return false;
        return true;
    }
    fail(p, "unknown character class");
    return false;
}

static rnode *new_class(rp *p, uint32_t first, bool neg)
{
    dw_regex *re = p->re;
    if (re->ncls == p->capcls) {
        uint32_t cap = p->capcls ? p->capcls * 2 : 8;
        rclass *v = realloc(re->cls, cap * sizeof *v);
        if (!v) { fail(p, "out of memory"); return NULL; }
        re->cls = v;
        p->capcls = cap;
    }
    re->cls[re->ncls] = (rclass){ first, (re->nranges - first) / 2, neg };
    rnode *r = node(p, R_CLASS);
    if (r) r->cls = re->ncls++;
    return r;
}

/* \d \w \s and their negations as a class. */
static rnode *escape_class(rp *p, char c)
{
    uint32_t first = p->re->nranges;
    char l = (char)(c | 0x20);
    bool ok = l == 'd' ? add_range(p, '0', '9')
            : l == 's' ? add_range(p, '\t', '\r') && add_range(p, ' ', ' ')
            : add_range(p, '0', '9') && add_range(p, 'A', 'Z') && add_range(p, '_', '_') && add_range(p, 'a', 'z');
    return ok ? new_class(p, first, c != l) : NULL;
}

static rnode *bracket(rp *p)
{
    bool neg = false;
    uint32_t first = p->re->nranges;
    if (p->i < p->n && p->s[p->i] == '^') { neg = true; p->i++; }
    bool firstitem = true;
    for (;;) {
        if (p->i >= p->n) { fail(p, "unterminated bracket expression"); return NULL; }
        if (p->s[p->i] == ']' && !firstitem) { p->i++; break; }
        firstitem = false;
        if (p->s[p->i] == '[' && p->i + 1 < p->n && p->s[p->i + 1] == ':') {
            size_t st = p->i + 2, e = st;
            while (e + 1 < p->n && !(p->s[e] == ':' && p->s[e + 1] == ']')) e++;
            if (e + 1 >= p->n) { fail(p, "unterminated character class name"); return NULL; }
            if (!named_class(p, (const char *)p->s + st, e - st)) return NULL;
            p->i = e + 2;
            continue;
        }
        uint32_t lo;
        if (p->s[p->i] == '\\' && p->i + 1 < p->n) {   /* an escape inside brackets: the next character (or \d...) */
            char c = (char)p->s[p->i + 1];
            if (c && strchr("dsw", c)) {
                p->i += 2;
                if (!(c == 'd' ? add_range(p, '0', '9') : c == 's' ? add_range(p, '\t', '\r') && add_range(p, ' ', ' ')
                      : add_range(p, '0', '9') && add_range(p, 'A', 'Z') && add_range(p, '_', '_') && add_range(p, 'a', 'z')))
                    return NULL;
                continue;
            }
            p->i++;
        }
        lo = next_cp(p);
        uint32_t hi = lo;
        if (p->i + 1 < p->n && p->s[p->i] == '-' && p->s[p->i + 1] != ']') {
            p->i++;
            if (p->s[p->i] == '\\' && p->i + 1 < p->n) p->i++;
            hi = next_cp(p);
            if (hi < lo) { fail(p, "invalid range in bracket expression"); return NULL; }
        }
        if (!add_range(p, lo, hi)) return NULL;
    }
    return new_class(p, first, neg);
}

static long parse_alt(rp *p);

static bool read_int(rp *p, int *out)
{
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return false;
    int v = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        v = v * 10 + (p->s[p->i++] - '0');
        if (v > 255) { fail(p, "repetition count above 255"); return false; }
    }
    *out = v;
    return true;
}

/* An atom, as a node index, or -1. */
static long parse_atom(rp *p)
{
    unsigned char c = p->s[p->i];
    rnode *r;
    switch (c) {
    case '(': {
        p->i++;
        if (++p->depth > 200) { fail(p, "pattern nested too deeply"); return -1; }
        long k = parse_alt(p);
        p->depth--;
        if (k < 0) return -1;
        if (p->i >= p->n || p->s[p->i] != ')') { fail(p, "missing `)`"); return -1; }
        p->i++;
        return k;
    }
    case ')': fail(p, "unmatched `)`"); return -1;
    case '*': case '+': case '?': case '{': fail(p, "repetition operator with nothing to repeat"); return -1;
    case '[': p->i++; r = bracket(p); break;
    case '.': p->i++; r = node(p, R_ANY); break;
    case '^': p->i++; r = node(p, R_BOL); break;
    case '$': p->i++; r = node(p, R_EOL); break;
    case '\\':
        if (p->i + 1 >= p->n) { fail(p, "trailing `\\`"); return -1; }
        p->i++;
        if (p->s[p->i] && strchr("dswDSW", p->s[p->i])) { char e = (char)p->s[p->i++]; r = escape_class(p, e); break; }
        if (p->s[p->i] == 'n' || p->s[p->i] == 't') {
            uint32_t cp = p->s[p->i++] == 'n' ? '\n' : '\t';
            if ((r = node(p, R_LIT))) r->cp = cp;
            break;
        }
        /* the escaped character itself */
        __attribute__((fallthrough));
    default: {
        uint32_t cp = next_cp(p);
        if ((r = node(p, R_LIT))) r->cp = cp;
        break;
    }
    }
    return r ? (long)IDX(p, r) : -1;
}

static long parse_repeat(rp *p)
{
    long k = parse_atom(p);
    while (k >= 0 && p->i < p->n) {
        unsigned char c = p->s[p->i];
        int mn, mx;
        if (c == '*') { mn = 0; mx = -1; p->i++; }
        else if (c == '+') { mn = 1; mx = -1; p->i++; }
        else if (c == '?') { mn = 0; mx = 1; p->i++; }
        else if (c == '{') {
            p->i++;
            if (!read_int(p, &mn)) { if (!p->failed) fail(p, "invalid repetition count"); return -1; }
            mx = mn;
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                mx = -1;
                if (p->i < p->n && p->s[p->i] != '}' && (!read_int(p, &mx) || mx < mn)) {
                    if (!p->failed) fail(p, "invalid repetition count");
                    return -1;
                }
            }
            if (p->i >= p->n || p->s[p->i] != '}') { fail(p, "missing `}`"); return -1; }
            p->i++;
        } else break;
        rnode *r = node(p, R_REP);
        if (!r) return -1;
        r->a = AT(p, k);
        r->min = mn;
        r->max = mx;
        k = (long)IDX(p, r);
    }
    return k;
}

static long parse_concat(rp *p)
{
    long acc = -1;
    while (p->i < p->n && p->s[p->i] != '|' && p->s[p->i] != ')') {
        long k = parse_repeat(p);
        if (k < 0) return -1;
        if (acc < 0) { acc = k; continue; }
        rnode *r = node(p, R_CAT);
        if (!r) return -1;
        r->a = AT(p, acc);
        r->b = AT(p, k);
        acc = (long)IDX(p, r);
    }
    if (acc < 0) { rnode *r = node(p, R_EMPTY); return r ? (long)IDX(p, r) : -1; }
    return acc;
}

static long parse_alt(rp *p)
{
    long k = parse_concat(p);
    while (k >= 0 && p->i < p->n && p->s[p->i] == '|') {
        p->i++;
        long m = parse_concat(p);
        if (m < 0) return -1;
        rnode *r = node(p, R_ALT);
        if (!r) return -1;
        r->a = AT(p, k);
        r->b = AT(p, m);
        k = (long)IDX(p, r);
    }
    return k;
}

/* ---- code generation ---- */
typedef struct cg { dw_regex *re; uint32_t cap; bool failed; } cg;

static uint32_t put(cg *g, uint8_t op, uint32_t x, uint32_t y)
{
    if (g->failed) return 0;
    if (g->re->ncode >= DW_REGEX_MAX_INSNS) { g->failed = true; return 0; }
    if (g->re->ncode == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 64;
        insn *v = realloc(g->re->code, cap * sizeof *v);
        if (!v) { g->failed = true; return 0; }
        g->re->code = v;
        g->cap = cap;
    }
    g->re->code[g->re->ncode] = (insn){ op, x, y };
    return g->re->ncode++;
}

static void emit(cg *g, const rnode *r, int depth)
{
    if (g->failed) return;
    if (depth > 400) { g->failed = true; return; }
    switch (r->kind) {
    case R_LIT: put(g, I_CHAR, r->cp, 0); break;
    case R_ANY: put(g, I_ANY, 0, 0); break;
    case R_CLASS: put(g, I_CLASS, r->cls, 0); break;
    case R_BOL: put(g, I_BOL, 0, 0); break;
    case R_EOL: put(g, I_EOL, 0, 0); break;
    case R_EMPTY: break;
    case R_CAT: emit(g, r->a, depth + 1); emit(g, r->b, depth + 1); break;
    case R_ALT: {
        uint32_t s = put(g, I_SPLIT, 0, 0);
        emit(g, r->a, depth + 1);
        uint32_t j = put(g, I_JMP, 0, 0);
        if (g->failed) return;
        g->re->code[s].x = s + 1;
        g->re->code[s].y = g->re->ncode;
        emit(g, r->b, depth + 1);
        if (!g->failed) g->re->code[j].x = g->re->ncode;
        break;
    }
    case R_REP: {
        for (int k = 0; k < r->min; k++) emit(g, r->a, depth + 1);
        if (r->max < 0) {                       /* L: split body, out; body; jmp L */
            uint32_t s = put(g, I_SPLIT, 0, 0);
            emit(g, r->a, depth + 1);
            put(g, I_JMP, s, 0);
            if (!g->failed) { g->re->code[s].x = s + 1; g->re->code[s].y = g->re->ncode; }
        } else {
            uint32_t splits[256];
            int ns = 0;
            for (int k = r->min; k < r->max && !g->failed; k++) {
                splits[ns++] = put(g, I_SPLIT, 0, 0);
                if (!g->failed) g->re->code[splits[ns - 1]].x = g->re->ncode;
                emit(g, r->a, depth + 1);
            }
            for (int k = 0; k < ns && !g->failed; k++) g->re->code[splits[k]].y = g->re->ncode;
        }
        break;
    }
    }
}

void dw_regex_free(dw_regex *re)
{
    if (!re) return;
    free(re->code);
    free(re->cls);
    free(re->ranges);
    free(re);
}

dw_regex *dw_regex_compile(const char *pat, size_t len, char *err, size_t errcap)
{
    dw_regex *re = calloc(1, sizeof *re);
    if (!re) { snprintf(err, errcap, "out of memory"); return NULL; }
    rp p = { .s = (const unsigned char *)pat, .n = len, .err = err, .errcap = errcap, .re = re };
    long root = parse_alt(&p);
    if (root >= 0 && p.i < p.n) fail(&p, "unmatched `)`");
    if (p.failed || root < 0) { free(p.nodes); dw_regex_free(re); return NULL; }
    cg g = { re, 0, false };
    emit(&g, AT(&p, root), 0);
    put(&g, I_MATCH, 0, 0);
    free(p.nodes);
    if (g.failed) {
        snprintf(err, errcap, "pattern too large (more than %d states after expanding repetitions) or out of memory",
                 DW_REGEX_MAX_INSNS);
        dw_regex_free(re);
        return NULL;
    }
    return re;
}

/* ---- the Pike VM ---- */
typedef struct tlist { uint32_t *pc; size_t *start; uint32_t n; } tlist;

static bool class_has(const dw_regex *re, const rclass *c, uint32_t cp)
{
    bool in = false;
    for (uint32_t k = 0; k < c->n && !in; k++) {
        const uint32_t *r = &re->ranges[c->first + 2 * k];
        in = cp >= r[0] && cp <= r[1];
    }
    return in != c->neg;
}

/* Follow SPLIT, JMP, BOL, EOL from pc at text position `at` (the closure),
 * adding the threads that wait on a character or match.  Iterative (an
 * explicit stack of pcs), each pc once per position (mark[] == gen). */
static void add_thread(const dw_regex *re, tlist *l, uint32_t pc0, size_t start, size_t at, size_t len,
                       uint32_t *mark, uint32_t gen, uint32_t *stack, uint64_t *steps)
{
    uint32_t sp = 0;
    stack[sp++] = pc0;
    while (sp) {
        uint32_t pc = stack[--sp];
        if (mark[pc] == gen) continue;
        mark[pc] = gen;
        (*steps)++;
        const insn *in = &re->code[pc];
        switch (in->op) {
        case I_JMP: stack[sp++] = in->x; break;
        case I_SPLIT: stack[sp++] = in->y; stack[sp++] = in->x; break;   /* x first: pushed last */
        case I_BOL: if (at == 0) stack[sp++] = pc + 1; break;
        case I_EOL: if (at == len) stack[sp++] = pc + 1; break;
        default: l->pc[l->n] = pc; l->start[l->n] = start; l->n++; break;
        }
    }
}

int dw_regex_search(const dw_regex *re, const char *text, size_t len, size_t from, size_t *ms, size_t *me,
                    uint64_t *budget)
{
    uint32_t n = re->ncode;
    /* two thread lists, their marks, and the closure stack (a pc can be pushed once per SPLIT arm) */
    size_t words = (size_t)n * 4 + 2 * (size_t)n + 2;
    uint32_t *w = calloc(words, sizeof *w);
    size_t *starts = calloc(2 * (size_t)n + 2, sizeof *starts);
    if (!w || !starts) { free(w); free(starts); return -1; }
    tlist cl = { w, starts, 0 }, nl = { w + n + 1, starts + n + 1, 0 };
    uint32_t *mark = w + 2 * (size_t)n + 2, *stack = mark + n;
    uint32_t gen = 0;
    uint64_t steps = 0;
    bool found = false;
    size_t best_s = 0, best_e = 0;
    const unsigned char *s = (const unsigned char *)text;
    int rc = 0;
    size_t i = from;
    add_thread(re, &cl, 0, i, i, len, mark, ++gen, stack, &steps);
    for (;;) {
        /* cl: the threads at position i, in order of their start (earliest first) */
        size_t step = 0;
        uint32_t cp = 0;
        if (i < len) {
            step = dw_utf8_len(s + i, len - i);
            if (step <= 1) { cp = s[i]; step = 1; }
            else cp = dw_utf8_get(s + i, step);
        }
        uint32_t ngen = ++gen;
        nl.n = 0;
        for (uint32_t t = 0; t < cl.n; t++) {
            const insn *in = &re->code[cl.pc[t]];
            size_t st = cl.start[t];
            if (found && st > best_s) continue;   /* a later start can never win */
            steps++;
            if (in->op == I_MATCH) {
                if (!found || st < best_s || (st == best_s && i > best_e)) { best_s = st; best_e = i; }
                found = true;
                continue;
            }
            if (i >= len) continue;
            bool ok = in->op == I_ANY || (in->op == I_CHAR && in->x == cp) ||
                      (in->op == I_CLASS && class_has(re, &re->cls[in->x], cp));
            if (ok) add_thread(re, &nl, cl.pc[t] + 1, st, i + step, len, mark, ngen, stack, &steps);
        }
        if (i >= len) break;
        i += step;
        if (!found) add_thread(re, &nl, 0, i, i, len, mark, ngen, stack, &steps);   /* a new start, lowest priority */
        if (nl.n == 0) break;
        tlist tmp = cl; cl = nl; nl = tmp;
        if (steps > *budget) { rc = -1; break; }
    }
    *budget = steps > *budget ? 0 : *budget - steps;
    free(w);
    free(starts);
    if (rc) return rc;
    if (!found) return 0;
    *ms = best_s;
    *me = best_e;
    return 1;
}
