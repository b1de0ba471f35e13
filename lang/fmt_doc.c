/* fmt_doc.c - document constructors and the layout algorithm (fmt_doc.h).
 * The renderer is the `pretty` crate's: a stack of (indent, mode, doc)
 * commands; at a group in break mode it measures, in flat mode, the group
 * and then whatever follows it up to the next possible line break, and
 * prints the group flat if that stays within the width. */
#include "fmt_doc.h"
#include <stdlib.h>
#include <string.h>
#include "../stdlib/utf8.h"
#include <unicode/uchar.h>

const fmt_doc fmt_nil_doc = { .kind = FMT_NIL };
static const fmt_doc hard_doc = { .kind = FMT_HARD };
static const fmt_doc space_doc = { .kind = FMT_TEXT, .s = " ", .len = 1, .width = 1 };
static const fmt_doc line_doc = { .kind = FMT_ALT, .a = &hard_doc, .b = &space_doc };
static const fmt_doc line0_doc = { .kind = FMT_ALT, .a = &hard_doc, .b = &fmt_nil_doc };

const fmt_doc *fmt_space(void) { return &space_doc; }
const fmt_doc *fmt_hardline(void) { return &hard_doc; }
const fmt_doc *fmt_line(void) { return &line_doc; }
const fmt_doc *fmt_line_(void) { return &line0_doc; }

static fmt_doc *node(fmt_docs *d, fmt_doc_kind k)
{
    fmt_doc *n = dw_arena_alloc_or_jump(d->A, sizeof *n, d->oom);
    n->kind = k;
    return n;
}

/* Decode the UTF-8 character at s (n > 0 bytes left); *len its length.
 * A byte that starts no valid sequence stands for itself, one column. */
static UChar32 utf8_at(const unsigned char *s, size_t n, size_t *len)
{
    size_t k = dw_utf8_len(s, n);
    *len = k ? k : 1;
    return k ? (UChar32)dw_utf8_get(s, k) : (UChar32)s[0];
}

/* The display width Cedar's renderer gives a character (the unicode-width
 * crate's rules, as measured against cedar-wasm): 0 for combining and
 * default-ignorable characters, 2 for East Asian wide and fullwidth ones,
 * else 1 (control characters included). */
/* Where the unicode-width crate (Unicode 16 and later) and this ICU's tables
 * disagree, as measured: characters whose width changed or that ICU does not
 * know yet, and the crate's special cases. */
static const struct { UChar32 lo, hi; int w; } width_fixes[] = {
    { 0x0605, 0x0605, 0 }, { 0x070F, 0x070F, 0 }, { 0x0890, 0x0891, 0 }, { 0x08E2, 0x08E2, 0 },
    { 0x115F, 0x115F, 2 }, { 0x1715, 0x1715, 0 }, { 0x1734, 0x1734, 0 }, { 0x17A4, 0x17A4, 2 },
    { 0x17D8, 0x17D8, 3 }, { 0x1ACF, 0x1ADD, 0 }, { 0x1AE0, 0x1AEB, 0 }, { 0x1B35, 0x1B35, 0 },
    { 0x1B3B, 0x1B3B, 0 }, { 0x1B3D, 0x1B3D, 0 }, { 0x1B43, 0x1B44, 0 }, { 0x1BAA, 0x1BAA, 0 },
    { 0x1BF2, 0x1BF3, 0 }, { 0x2630, 0x2637, 2 }, { 0x268A, 0x268F, 2 }, { 0x2D7F, 0x2D7F, 1 },
    { 0x2FFC, 0x2FFF, 2 }, { 0x31EF, 0x31EF, 2 }, { 0x4DC0, 0x4DFF, 2 }, { 0x111C0, 0x111C0, 0 },
    { 0x111C2, 0x111C2, 0 }, { 0x113B8, 0x113B8, 0 }, { 0x113BD, 0x113BD, 0 }, { 0x16121, 0x16121, 0 },
    { 0x1612E, 0x1612F, 0 }, { 0x16FF2, 0x16FF6, 2 }, { 0x187F8, 0x187FF, 2 }, { 0x18D00, 0x18D1E, 2 },
    { 0x18D80, 0x18DF2, 2 }, { 0x1D300, 0x1D356, 2 }, { 0x1D360, 0x1D376, 2 }, { 0x1E6E3, 0x1E6E3, 0 },
    { 0x1F6D8, 0x1F6D8, 2 }, { 0x1FA89, 0x1FA8A, 2 }, { 0x1FA8E, 0x1FA8F, 2 }, { 0x1FABE, 0x1FABE, 2 },
    { 0x1FAC6, 0x1FAC6, 2 }, { 0x1FAC8, 0x1FAC8, 2 }, { 0x1FACD, 0x1FACD, 2 }, { 0x1FADC, 0x1FADC, 2 },
    { 0x1FADF, 0x1FADF, 2 }, { 0x1FAE9, 0x1FAEA, 2 }, { 0x1FAEF, 0x1FAEF, 2 },
    { 0x0897, 0x0897, 0 }, { 0x0CC0, 0x0CC0, 0 }, { 0x0CC7, 0x0CC8, 0 }, { 0x0CCA, 0x0CCB, 0 }, { 0x0D4E, 0x0D4E, 0 },
    { 0x31E4, 0x31E5, 2 }, { 0xA8FA, 0xA8FA, 0 }, { 0xA953, 0xA953, 0 }, { 0xA9C0, 0xA9C0, 0 },
    { 0x10D69, 0x10D6D, 0 }, { 0x10EFA, 0x10EFC, 0 }, { 0x111C3, 0x111C3, 0 }, { 0x11235, 0x11235, 0 },
    { 0x1134D, 0x1134D, 0 }, { 0x113BB, 0x113BC, 0 }, { 0x113BE, 0x113C0, 0 }, { 0x113C2, 0x113C2, 0 },
    { 0x113C5, 0x113C5, 0 }, { 0x113C7, 0x113C9, 0 }, { 0x113CE, 0x113D2, 0 }, { 0x113E1, 0x113E2, 0 },
    { 0x116B6, 0x116B6, 0 }, { 0x1171E, 0x1171E, 1 }, { 0x1193D, 0x1193D, 0 }, { 0x1193F, 0x1193F, 0 },
    { 0x11941, 0x11941, 0 }, { 0x11A84, 0x11A89, 0 }, { 0x11B60, 0x11B60, 0 }, { 0x11B62, 0x11B64, 0 },
    { 0x11B66, 0x11B66, 0 }, { 0x11D46, 0x11D46, 0 }, { 0x11F02, 0x11F02, 0 }, { 0x11F41, 0x11F41, 0 },
    { 0x11F5A, 0x11F5A, 0 }, { 0x1611E, 0x16120, 0 }, { 0x16122, 0x16129, 0 }, { 0x1612D, 0x1612D, 0 },
    { 0x16FF0, 0x16FF1, 0 }, { 0x18CFF, 0x18CFF, 2 }, { 0x1D166, 0x1D166, 0 }, { 0x1D16D, 0x1D16D, 0 },
    { 0x1E5EE, 0x1E5EF, 0 }, { 0x1E6E6, 0x1E6E6, 0 }, { 0x1E6EE, 0x1E6EF, 0 }, { 0x1E6F5, 0x1E6F5, 0 },
};

static int char_width(UChar32 c)
{
    if (c < 0x7F) return 1;
    for (size_t i = 0; i < sizeof width_fixes / sizeof *width_fixes; i++)
        if (c >= width_fixes[i].lo && c <= width_fixes[i].hi) return width_fixes[i].w;
    if (u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT)) return 0;
    int gc = u_charType(c);
    if (gc == U_NON_SPACING_MARK || gc == U_ENCLOSING_MARK || u_hasBinaryProperty(c, UCHAR_GRAPHEME_EXTEND)) return 0;
    /* Hangul vowels, finals and tone marks join the syllable before them */
    if ((c >= 0x1160 && c <= 0x11FF) || (c >= 0xD7B0 && c <= 0xD7C6) || (c >= 0xD7CB && c <= 0xD7FB) ||
        c == 0x302E || c == 0x302F) return 0;
    int ea = u_getIntPropertyValue(c, UCHAR_EAST_ASIAN_WIDTH);
    return ea == U_EA_WIDE || ea == U_EA_FULLWIDTH ? 2 : 1;
}

/* The width of a text: the characters' widths, with emoji sequences as one
 * emoji (VS16 makes its emoji wide, a ZWJ joins two pictographs into one, a
 * skin tone modifies its base). */
static size_t text_width(const char *s, size_t len)
{
    size_t w = 0;
    UChar32 prev = -1;
    int prev_w = 0;
    bool joining = false;
    for (size_t i = 0, k; i < len; i += k) {
        UChar32 c = utf8_at((const unsigned char *)s + i, len - i, &k);
        bool pict = u_hasBinaryProperty(c, UCHAR_EXTENDED_PICTOGRAPHIC);
        if (joining && pict) { joining = false; prev = c; continue; }
        joining = false;
        if (c == 0xFE0F && prev >= 0 && prev_w == 1 && u_hasBinaryProperty(prev, UCHAR_EMOJI)) {
            w++;
            prev_w = 2;
            continue;
        }
        if (c == 0x200D && prev >= 0 && u_hasBinaryProperty(prev, UCHAR_EXTENDED_PICTOGRAPHIC)) { joining = true; continue; }
        if (c >= 0x1F3FB && c <= 0x1F3FF && prev >= 0 && u_hasBinaryProperty(prev, UCHAR_EMOJI_MODIFIER_BASE)) continue;
        int cw = char_width(c);
        w += (size_t)cw;
        prev = c;
        prev_w = cw;
    }
    return w;
}

const fmt_doc *fmt_text(fmt_docs *d, const char *s, size_t len)
{
    if (!len) return &fmt_nil_doc;
    fmt_doc *n = node(d, FMT_TEXT);
    n->s = s;
    n->len = len;
    n->width = text_width(s, len);
    return n;
}

const fmt_doc *fmt_textz(fmt_docs *d, const char *s) { return fmt_text(d, s, strlen(s)); }

const fmt_doc *fmt_cat(fmt_docs *d, const fmt_doc *a, const fmt_doc *b)
{
    if (a->kind == FMT_NIL) return b;
    if (b->kind == FMT_NIL) return a;
    fmt_doc *n = node(d, FMT_CAT);
    n->a = a;
    n->b = b;
    return n;
}

const fmt_doc *fmt_nest(fmt_docs *d, int by, const fmt_doc *a)
{
    if (!by || a->kind == FMT_NIL) return a;
    fmt_doc *n = node(d, FMT_NEST);
    n->nest = by;
    n->a = a;
    return n;
}

const fmt_doc *fmt_group(fmt_docs *d, const fmt_doc *a)
{
    if (a->kind == FMT_NIL) return a;
    fmt_doc *n = node(d, FMT_GROUP);
    n->a = a;
    return n;
}

typedef struct cmd { size_t ind; int flat; const fmt_doc *doc; } cmd;
typedef struct stack { cmd *v; size_t n, cap; } stack;

static int push(stack *s, size_t ind, int flat, const fmt_doc *doc)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        cmd *v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (cmd){ ind, flat, doc };
    return 0;
}

/* Does `next`, flat, followed by the pending commands (in break mode) up to
 * their first line break, fit from column pos? */
static int fits(const fmt_doc *next, size_t pos, size_t width, const stack *b, stack *f, int *oom)
{
    size_t bidx = b->n;
    f->n = 0;
    if (push(f, 0, 1, next)) { *oom = 1; return 0; }
    int flat = 1;
    for (;;) {
        const fmt_doc *doc;
        if (f->n) doc = f->v[--f->n].doc;
        else if (bidx == 0) return 1;
        else { doc = b->v[--bidx].doc; flat = 0; }
        for (;;) {
            switch (doc->kind) {
            case FMT_NIL: break;
            case FMT_CAT:
                if (push(f, 0, flat, doc->b)) { *oom = 1; return 0; }
                doc = doc->a;
                continue;
            case FMT_HARD: return !flat;
            case FMT_TEXT:
                pos += doc->width;
                if (pos > width) return 0;
                break;
            case FMT_ALT: doc = flat ? doc->b : doc->a; continue;
            case FMT_NEST: case FMT_GROUP: doc = doc->a; continue;
            }
            break;
        }
    }
}

int fmt_render(const fmt_doc *doc, size_t width, dw_buf *out)
{
    stack b = { 0 }, f = { 0 };
    int rc = -1, oom = 0;
    size_t pos = 0;
    if (push(&b, 0, 0, doc)) goto done;
    while (b.n) {
        cmd c = b.v[--b.n];
        for (;;) {
            const fmt_doc *d = c.doc;
            switch (d->kind) {
            case FMT_NIL: break;
            case FMT_CAT:
                if (push(&b, c.ind, c.flat, d->b)) goto done;
                c.doc = d->a;
                continue;
            case FMT_ALT: c.doc = c.flat ? d->b : d->a; continue;
            case FMT_GROUP:
                if (!c.flat) {
                    c.flat = fits(d->a, pos, width, &b, &f, &oom);
                    if (oom) goto done;
                }
                c.doc = d->a;
                continue;
            case FMT_NEST:
                c.ind = (size_t)((long)c.ind + d->nest < 0 ? 0 : (long)c.ind + d->nest);
                c.doc = d->a;
                continue;
            case FMT_HARD:
                if (dw_buf_putc(out, '\n')) goto done;
                for (size_t i = 0; i < c.ind; i++)
                    if (dw_buf_putc(out, ' ')) goto done;
                pos = c.ind;
                break;
            case FMT_TEXT:
                if (dw_buf_append(out, d->s, d->len)) goto done;
                pos += d->width;
                break;
            }
            break;
        }
    }
    rc = 0;
done:
    free(b.v);
    free(f.v);
    return rc;
}
