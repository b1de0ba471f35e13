/* format_dw.c - the layout of Dogwood's own items (docs/FORMAT.md), and
 * Cedar's final text pass.
 *
 * A temporal body is laid out by lines, not re-parsed: its lines keep their
 * relative indentation (the common indentation is replaced by the enclosing
 * nesting plus one indent), blank lines and trailing blanks go, and a line
 * that starts inside a multi-line string literal is kept byte for byte. */
#include "format_int.h"
#include <string.h>

#define CAT(a, b) fmt_cat(&f->d, (a), (b))
#define TXT(z) fmt_textz(&f->d, (z))

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* One body line: [b, e) of the text; in_str: it continues a string. */
typedef struct bline { uint32_t b, e; bool in_str, ends_in_str; } bline;

const fmt_doc *fmt_temporal_doc(fmt_ctx *f, uint32_t tok)
{
    const char *t = f->c->text;
    const fmt_tok *tk = &f->c->toks[tok];
    uint32_t open = tk->off, close = tk->end - 1;
    bool kw = t[open] != '{';
    if (kw) {
        open += 8;                                  /* `temporal` */
        while (open < close && (blank(t[open]) || t[open] == '\n')) open++;
        if (t[open] != '{') return fmt_tok_text(f, tok);   /* a comment before `{`: as written */
    }
    const fmt_doc *head = TXT(kw ? "temporal {" : "{");
    uint32_t b = open + 1, e = close;
    if (!memchr(t + b, '\n', e - b)) {
        fmt_span s = fmt_trim(t, b, e - b);
        if (!s.len) return CAT(head, TXT("}"));
        const fmt_doc *d = CAT(CAT(head, fmt_space()), fmt_text(&f->d, t + s.off, s.len));
        return CAT(CAT(d, fmt_space()), TXT("}"));
    }
    /* split into lines, following strings and comments across them */
    size_t cap = 16, n = 0;
    bline *L = dw_arena_alloc_or_jump(f->d.A, cap * sizeof *L, f->d.oom);
    bool in_str = false;
    for (uint32_t i = b; i <= e;) {
        uint32_t j = i;
        bool start_in = in_str, comment = false;
        while (j < e && t[j] != '\n') {
            if (comment) { j++; continue; }
            if (in_str) {
                if (t[j] == '\\' && j + 1 < e) j++;
                else if (t[j] == '"') in_str = false;
            } else if (t[j] == '"') in_str = true;
            else if (t[j] == '/' && j + 1 < e && t[j + 1] == '/') comment = true;
            j++;
        }
        if (n == cap) {
            bline *nl = dw_arena_alloc_or_jump(f->d.A, 2 * cap * sizeof *L, f->d.oom);
            memcpy(nl, L, n * sizeof *L);
            L = nl;
            cap *= 2;
        }
        L[n++] = (bline){ i, j, start_in, in_str };
        i = j + 1;
    }
    /* the common indentation of the lines that start outside strings (not the first: it follows `{`) */
    uint32_t common = UINT32_MAX;
    for (size_t k = 1; k < n; k++) {
        if (L[k].in_str) continue;
        uint32_t i = L[k].b;
        while (i < L[k].e && blank(t[i])) i++;
        if (i < L[k].e && i - L[k].b < common) common = i - L[k].b;
    }
    if (common == UINT32_MAX) common = 0;
    const fmt_doc *body = &fmt_nil_doc;
    for (size_t k = 0; k < n; k++) {
        uint32_t lb = L[k].b, le = L[k].e;
        if (L[k].in_str) {                          /* continues the previous line's string */
            body = CAT(body, TXT("\n"));
            body = CAT(body, fmt_text(&f->d, t + lb, le - lb));
            continue;
        }
        if (k == 0) while (lb < le && blank(t[lb])) lb++;
        else lb += common;
        if (!L[k].ends_in_str) while (le > lb && blank(t[le - 1])) le--;
        if (lb >= le) continue;
        body = CAT(body, fmt_hardline());
        body = CAT(body, fmt_text(&f->d, t + lb, le - lb));
    }
    return CAT(CAT(head, fmt_nest(&f->d, f->ind, body)), CAT(fmt_hardline(), TXT("}")));
}

/* def cedar NAME(?p, ...) { expr };  /  def temporal NAME(?p, ...) { body }; */
const fmt_doc *fmt_macro_doc(fmt_ctx *f, const fmt_node *x)
{
    const fmt_doc *d = fmt_tok_doc(f, x->first);
    d = CAT(CAT(d, fmt_space()), fmt_tok_doc(f, x->b->tok));
    d = CAT(CAT(d, fmt_space()), fmt_tok_doc(f, x->a->tok));
    uint32_t i = x->a->last + 1;                    /* `(` */
    d = CAT(d, fmt_tok_doc(f, i++));
    for (size_t k = 0; k < x->nw; k++) {
        if (k) d = CAT(d, fmt_space());
        d = CAT(d, fmt_tok_doc(f, x->w[k]->tok));
        i = x->w[k]->last + 1;
        if (k + 1 < x->nw) d = CAT(d, fmt_tok_doc(f, i++));
    }
    d = CAT(d, fmt_tok_doc(f, i++));                /* `)` */
    d = CAT(d, fmt_space());
    const fmt_node *body = x->c;
    if (body->kind == FN_TBLOCK) {
        d = CAT(d, fmt_add_comment(f, fmt_temporal_doc(f, body->tok), fmt_take(f, body->tok), &fmt_nil_doc));
    } else {
        const fmt_doc *open = fmt_tok_doc(f, body->first - 1);
        const fmt_doc *e = fmt_group(&f->d, fmt_expr_doc(f, body));
        const fmt_doc *close = fmt_tok_doc(f, body->last + 1);
        const fmt_doc *in = fmt_nest(&f->d, f->ind, CAT(fmt_line(), e));
        d = CAT(d, fmt_group(&f->d, CAT(open, CAT(CAT(in, fmt_line()), close))));
    }
    return CAT(d, fmt_tok_doc(f, x->last));
}

/* ---- remove_empty_lines ---- */

static bool ws_only(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == ' ' || (s[i] >= 9 && s[i] <= 13))) return false;
    return true;
}

static int interior(const char *s, size_t n, dw_buf *out)
{
    if (n && s[0] == '\n' && dw_buf_putc(out, '\n')) return -1;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) + 1 : n;
        if ((!ws_only(s + i, e - i) || !nl) && dw_buf_append(out, s + i, e - i)) return -1;
        i = e;
    }
    return 0;
}

/* Cedar's string regex "(\\.|[^"\\])*" from the quote at i: its end, or 0. */
static size_t str_match(const char *s, size_t n, size_t i)
{
    for (size_t j = i + 1; j < n; j++) {
        if (s[j] == '\\') {
            if (j + 1 >= n || s[j + 1] == '\n') return 0;
            j++;
        } else if (s[j] == '"') return j + 1;
    }
    return 0;
}

int fmt_remove_empty_lines(const char *s, size_t n, dw_buf *out)
{
    dw_buf tmp = { 0 };
    size_t i = 0;
    int rc = -1;
    while (i < n) {
        /* the earlier of the next comment and the next string literal */
        size_t cs = n, ce = n, ss = n, se = n;
        for (size_t j = i; j + 1 < n; j++)
            if (s[j] == '/' && s[j + 1] == '/') {
                cs = j;
                for (ce = j; ce < n && s[ce] != '\n' && s[ce] != '\r'; ce++) {}
                break;
            }
        for (size_t j = i; j < n && j < cs; j++)
            if (s[j] == '"' && (se = str_match(s, n, j))) { ss = j; break; }
        size_t ms = cs < ss ? cs : ss, me = cs < ss ? ce : se;
        if (ms == n) {
            if (interior(s + i, n - i, &tmp)) goto done;
            break;
        }
        if (interior(s + i, ms - i, &tmp) || dw_buf_append(&tmp, s + ms, me - ms)) goto done;
        i = me;
    }
    fmt_span t = tmp.len ? fmt_trim(tmp.p, 0, (uint32_t)tmp.len) : (fmt_span){ 0, 0 };
    rc = t.len ? dw_buf_append(out, tmp.p + t.off, t.len) : 0;
done:
    dw_buf_free(&tmp);
    return rc;
}
