/* tast.h - the temporal sub-language's syntax tree (dogwood.md §6, §10).
 * A temporal body is captured as raw text by the .dw lexer and parsed here
 * by a hand-written PEG-style parser (ordered alternatives, backtracking). */
#ifndef DW_TAST_H
#define DW_TAST_H
#include <stdio.h>
#include "ast.h"

typedef enum dw_tkind {
    /* conditions */
    DW_T_AND,        /* kids[0] && kids[1] */
    DW_T_NOT,        /* ! kids[0] */
    DW_T_SINCE,      /* kids[0] since within win kids[1] */
    DW_T_FORMERLY,   /* formerly within win kids[0] */
    DW_T_PREVIOUS,   /* previous within win kids[0] */
    DW_T_EXISTS,     /* exists (binders[0]). kids[0] */
    DW_T_TP,         /* tp(binders[0].name) */
    DW_T_PRED,       /* pred: type (action entity type path), id, kind, fields */
    DW_T_REFINE,     /* kids[0] (a ?param condition) refined by fields */
    DW_T_CMP,        /* kids[0] op kids[1] (terms) */
    DW_T_CALL,       /* name(args): macro call (condition, aggregate or term position) */
    DW_T_PARAM,      /* ?name used as a whole condition / atom, or as a term */
    /* terms */
    DW_T_LIT_LONG,       /* i */
    DW_T_LIT_STRING,     /* str */
    DW_T_LIT_BOOL,       /* b */
    DW_T_LIT_DECIMAL,    /* decimal("..."): str holds the text */
    DW_T_LIT_ENTITY,     /* type::"id": type, str */
    DW_T_ARRAY,      /* [kids...] */
    DW_T_CONTEXT,    /* context.a.b: path (dotted, without "context.") */
    DW_T_PRINCIPAL,  /* principal[.path] (path may be empty) */
    DW_T_RESOURCE,   /* resource[.path] */
    DW_T_WILDCARD,   /* * or _ */
    DW_T_VAR,        /* x (a variable) */
    DW_T_BINDER,     /* $x (fresh binder) */
    DW_T_COUNT,      /* count for binders. where kids[0] */
    DW_T_SUM,        /* sum slot for binders. where kids[0] */
    DW_T_INTERVAL,   /* call argument `1h`: win */
} dw_tkind;

typedef enum dw_tcmp { DW_TC_EQ, DW_TC_NE, DW_TC_LT, DW_TC_LE, DW_TC_GT, DW_TC_GE } dw_tcmp;

/* A window: `within N u` (seconds) or `within ?w` (param.s != NULL). */
typedef struct dw_twindow { int64_t secs; dw_str param; dw_loc loc; } dw_twindow;

/* binder_slot: ?x (sigil '?'), $x (sigil '$') or x (sigil 0) */
typedef struct dw_tslot { char sigil; dw_str name; dw_loc loc; } dw_tslot;
typedef struct dw_tbinder { dw_tslot slot; dw_str type; dw_loc loc; } dw_tbinder;

typedef struct dw_tnode dw_tnode;
typedef struct dw_tfield { dw_str path; dw_tnode *term; dw_loc loc; } dw_tfield;  /* path dotted: "input.host" */

struct dw_tnode {
    dw_tkind kind;
    dw_loc loc;
    dw_tnode *kids[2];
    dw_tnode **args; size_t nargs;          /* CALL, ARRAY */
    dw_twindow win;                         /* SINCE FORMERLY PREVIOUS INTERVAL */
    dw_tcmp op;                             /* CMP */
    dw_tbinder *binders; size_t nbinders;   /* EXISTS (1), COUNT, SUM */
    dw_tslot slot;                          /* TP, SUM (summed slot) */
    dw_str name;                            /* CALL, PARAM, VAR, BINDER */
    dw_str type;                            /* PRED: action type path; ENTITY: type path */
    dw_str str;                             /* PRED: action id; STRING; DECIMAL; ENTITY id */
    dw_str ekind;                           /* PRED: event kind */
    dw_str path;                            /* CONTEXT/PRINCIPAL/RESOURCE dotted path */
    dw_tfield *fields; size_t nfields;      /* PRED, REFINE */
    int64_t i;
    bool b;
};

struct dw_temporal {
    dw_str text;          /* raw body between the braces */
    uint32_t body_off;    /* byte offset of text[0] in the source */
    dw_loc loc;           /* the whole `temporal { ... }` (or macro body) */
    dw_tnode *root;       /* parsed body, NULL after a parse error */
    bool is_aggregate;    /* def temporal body parsed as an aggregation expression */
};

/* Where the body came from: macro bodies may use ?p, $t, `within ?w` and be aggregates. */
typedef enum dw_tmode { DW_TMODE_POLICY, DW_TMODE_MACRO } dw_tmode;

/* Parse the captured body text (a slice of src->text at byte offset body_off).
 * Errors go to diags with source locations.  Never returns NULL except on OOM;
 * on a syntax error the result has root == NULL. */
dw_temporal *dw_temporal_parse(dw_arena *a, const dw_source *src, dw_diags *diags,
                               uint32_t body_off, uint32_t body_len, dw_loc loc, dw_tmode mode);

void dw_temporal_print(FILE *out, const dw_temporal *t);
void dw_tnode_print(FILE *out, const dw_tnode *n);

#endif
