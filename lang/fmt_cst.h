/* fmt_cst.h - what the formatter reads: the tokens of a policy text with the
 * comments around each one (a side table keyed by token, split the way Cedar's
 * formatter splits them), and a concrete syntax tree that keeps what the AST
 * drops (parentheses, `.a` against `["a"]`, `has a.b`, `-1`, literal text).
 * Node spans are token index ranges: Cedar's formatter finds a node's comments
 * by the tokens its span starts and ends at.
 *
 * The scanner is separate from lang/lexer.l on purpose: Cedar's formatter
 * also lexes the text a second time, and its comment placement follows its own
 * token boundaries.  The text must already have parsed cleanly with
 * dw_parse_policy_set (the formatter only reshapes valid policies). */
#ifndef DW_FMT_CST_H
#define DW_FMT_CST_H
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include "../stdlib/arena.h"

typedef enum fmt_tkind {
    FT_IDENT, FT_NUM, FT_STR, FT_SLOT, FT_BINDER, FT_PUNCT,
    FT_TBLOCK,            /* `temporal { ... }`, or a `def temporal` body `{ ... }`: one token */
} fmt_tkind;

/* A comment line is a (offset, length) slice of the text, `//` included, trimmed. */
typedef struct fmt_span { uint32_t off, len; } fmt_span;

typedef struct fmt_tok {
    fmt_tkind kind;
    uint32_t off, end;
    uint32_t lead, nlead;     /* leading comment lines: fmt_cst.lines[lead ..] (0 once consumed) */
    fmt_span trail;           /* trailing comment on the token's own line (len 0: none) */
} fmt_tok;

typedef enum fmt_nkind {
    FN_POLICY, FN_ANNOT, FN_VARDEF, FN_COND, FN_MACRO, FN_IDENT,
    FN_IF, FN_OR, FN_AND, FN_REL, FN_HAS, FN_LIKE, FN_ISIN, FN_ADD, FN_MULT,
    FN_UNARY, FN_MEMBER, FN_FIELD, FN_CALL, FN_INDEX,
    FN_LIT, FN_STR, FN_SLOT, FN_NAME, FN_REF, FN_PAREN, FN_LIST, FN_RECORD, FN_RECINIT,
    FN_TBLOCK,
    FN_EXPR,              /* an Expr that is an Or (Cedar's ExprData::Or): a */
} fmt_nkind;

typedef struct fmt_node fmt_node;
struct fmt_node {
    fmt_nkind kind;
    uint32_t first, last;       /* first and last token of the span */
    uint32_t tok;               /* IDENT LIT STR SLOT TBLOCK: the token; UNARY: the first operator */
    uint32_t op;                /* VARDEF: relation operator token (UINT32_MAX: none) */
    int n;                      /* UNARY: number of operators */
    fmt_node *a, *b, *c;        /* see fmt_cst.c for each kind's children */
    fmt_node **v; size_t nv;    /* lists: operands, elements, arguments, annotations */
    uint32_t *ops;              /* OR AND REL ADD MULT: operator token between v[i] and v[i+1] */
    fmt_node **w; size_t nw;    /* POLICY: scope variables; MACRO: parameters */
    fmt_node **x; size_t nx;    /* POLICY: conditions */
};

typedef struct fmt_cst {
    const char *text; size_t len;
    fmt_tok *toks; size_t ntoks;
    fmt_span *lines; size_t nlines;      /* all leading comment lines */
    fmt_span *eof; size_t neof;          /* comment lines after the last token's line */
    fmt_node **items; size_t nitems;     /* policies and macro definitions, in order */
    char err[160];                       /* why the text could not be read */
    uint32_t err_off;
} fmt_cst;

/* Tokenise and parse; nodes and tables live in A.  false: cst->err says why
 * (a construct the formatter does not know; OOM longjmps to *oom). */
bool fmt_cst_read(fmt_cst *cst, const char *text, size_t len, dw_arena *A, jmp_buf *oom);

/* Does token i's text equal z? */
bool fmt_tok_is(const fmt_cst *cst, uint32_t i, const char *z);

/* Trim white space (Unicode White_Space, as Rust's str::trim) from both ends of [off, off+len). */
fmt_span fmt_trim(const char *text, uint32_t off, uint32_t len);

#endif
