/* ast.h - the abstract syntax tree of a .dw policy set (dogwood.md §3, §6, §10).
 * Every node lives in the policy set's arena; strings are (pointer, length)
 * pairs because Cedar strings may contain NUL bytes (each is also NUL
 * terminated for convenience). */
#ifndef DW_AST_H
#define DW_AST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "diag.h"
#include "../stdlib/arena.h"
#include "../stdlib/bytes.h"
#include "../stdlib/ext.h"

#define DW_MAX_EXPR_DEPTH 256   /* dogwood.md §19 */

/* An entity uid written in source: Type path joined with "::" ("Box::Action")
 * and the decoded id string. */
typedef struct dw_euid_lit { dw_str type; dw_str id; dw_loc loc; } dw_euid_lit;

typedef enum dw_expr_kind {
    /* literals and variables */
    DW_E_BOOL,        /* u.b */
    DW_E_LONG,        /* u.i (a directly negated literal is already folded) */
    DW_E_STRING,      /* u.str */
    DW_E_ENTITY,      /* u.euid */
    DW_E_VAR,         /* u.var: principal/action/resource/context */
    DW_E_SLOT,        /* u.name: "?principal"/"?resource" template slot, or a
                         macro value parameter "?x" inside a macro body */
    DW_E_BINDER,      /* u.name: "$x" fresh binder (only inside def temporal bodies) */
    /* control */
    DW_E_IF,          /* u.kids[0..2]: cond, then, else */
    DW_E_AND,         /* u.kids[0], u.kids[1] */
    DW_E_OR,
    DW_E_NOT,         /* u.kids[0] */
    DW_E_NEG,         /* u.kids[0] */
    /* binary (u.kids[0], u.kids[1]) */
    DW_E_EQ, DW_E_NE, DW_E_LT, DW_E_LE, DW_E_GT, DW_E_GE, DW_E_IN,
    DW_E_ADD, DW_E_SUB, DW_E_MUL,
    /* attribute forms */
    DW_E_HAS,         /* u.attr: kids[0] has attr (one name) */
    DW_E_HAS_PATH,    /* u.path: kids0 has attrs[0].attrs[1]…, n >= 2: `e has a.b.c`, which means
                         `e has a && e.a has b && e.a.b has c` (§3.6) with e written once */
    DW_E_GETATTR,     /* u.attr: kids[0].attr or kids[0]["attr"] */
    DW_E_LIKE,        /* u.like: kids[0] like pattern */
    DW_E_IS,          /* u.is: kids[0] is type [in kids[1]] (kids[1] NULL without `in`) */
    /* aggregates */
    DW_E_SET,         /* u.list */
    DW_E_RECORD,      /* u.rec */
    /* calls */
    DW_E_METHOD,      /* u.call: receiver kids[0] (in call.recv), method name, args */
    DW_E_CALL,        /* u.call: name(args): extension constructor (decimal, ip,
                         datetime, duration), macro call (other one-segment
                         name) or provider call (two or more segments) */
    DW_E_TEMPORAL,    /* u.temporal: an inline temporal { ... } leaf (§6) */
} dw_expr_kind;

typedef enum dw_var { DW_VAR_PRINCIPAL, DW_VAR_ACTION, DW_VAR_RESOURCE, DW_VAR_CONTEXT } dw_var;

typedef struct dw_expr dw_expr;
typedef struct dw_temporal dw_temporal;   /* temporal body, see tast.h */

typedef struct dw_record_entry { dw_str key; dw_expr *value; dw_loc key_loc; } dw_record_entry;

struct dw_expr {
    dw_expr_kind kind;
    uint32_t depth;               /* 1 + deepest child; the parser rejects > DW_MAX_EXPR_DEPTH */
    dw_loc loc;                   /* span of the whole expression */
    union {
        bool b;
        int64_t i;
        dw_str str;
        dw_euid_lit euid;
        dw_var var;
        dw_str name;              /* SLOT, BINDER: name without the sigil */
        dw_expr *kids[3];
        struct { dw_expr *kids0; dw_str attr; } attr;          /* HAS, GETATTR: object in kids0 */
        struct { dw_expr *kids0; const dw_str *attrs; const dw_loc *locs; size_t n; } path;  /* HAS_PATH;
                                     locs[i]: where attrs[i] is written; both arrays shared by copies */
        struct { dw_expr *kids0; dw_like_pattern pat; dw_str raw; } like;
        struct { dw_expr *kids0; dw_str type; dw_expr *in; } is;
        struct { dw_expr **v; size_t n; } list;                /* SET */
        struct { dw_record_entry *v; size_t n; } rec;          /* RECORD */
        struct {
            dw_expr *recv;        /* METHOD: receiver; CALL: NULL */
            dw_str name;          /* method name, or call path joined with "::" */
            size_t nsegs;         /* CALL: number of path segments */
            dw_expr **args;
            size_t nargs;
            dw_loc name_loc;
        } call;
        dw_temporal *temporal;
    } u;
};

/* ---- scope (§3.4) ---- */
typedef enum dw_scope_kind {
    DW_SC_ANY,        /* unconstrained */
    DW_SC_EQ,         /* == target */
    DW_SC_IN,         /* in target */
    DW_SC_IS,         /* is type */
    DW_SC_IS_IN,      /* is type in target */
    DW_SC_IN_LIST,    /* action in [e1, ...] (possibly empty) */
} dw_scope_kind;

typedef struct dw_scope_con {
    dw_scope_kind kind;
    dw_loc loc;
    dw_str is_type;             /* IS, IS_IN */
    bool target_is_slot;        /* target is ?principal / ?resource */
    dw_str slot;                /* "principal" / "resource" when target_is_slot */
    dw_euid_lit target;         /* EQ, IN, IS_IN */
    dw_euid_lit *list;          /* IN_LIST */
    size_t nlist;
} dw_scope_con;

typedef struct dw_annotation { dw_str key; dw_str value; bool has_value; dw_loc loc; } dw_annotation;

typedef struct dw_clause {
    bool is_when;               /* false = unless */
    bool guardrails;            /* written `guardrails { }` (tag only) */
    dw_expr *body;              /* `when temporal { … }` is stored as a DW_E_TEMPORAL body */
    dw_loc loc;
} dw_clause;

typedef enum dw_effect { DW_PERMIT, DW_FORBID } dw_effect;

typedef struct dw_policy {
    dw_effect effect;
    dw_loc loc;                 /* whole policy */
    dw_loc effect_loc;
    dw_annotation *annots; size_t nannots;
    dw_scope_con principal, action, resource;
    dw_clause *clauses; size_t nclauses;
    bool is_template;           /* contains ?principal / ?resource */
    dw_str id;                  /* set by linking (compiler/link.h): a link's id, or Cedar's
                                   @id / positional name; empty: positional */
} dw_policy;

/* ---- macros (§10) ---- */
typedef enum dw_macro_kind { DW_MACRO_CEDAR, DW_MACRO_TEMPORAL } dw_macro_kind;
typedef struct dw_macro_def {
    dw_macro_kind kind;
    dw_str name;
    dw_str *params; size_t nparams;   /* names without '?' */
    dw_loc loc, name_loc;
    dw_expr *cedar_body;              /* DW_MACRO_CEDAR */
    dw_temporal *temporal_body;       /* DW_MACRO_TEMPORAL */
    dw_str body_text;                 /* raw body text between the braces */
    uint32_t body_off;                /* byte offset of the body in the source */
} dw_macro_def;

typedef struct dw_policy_set {
    dw_arena arena;             /* owns every node */
    const dw_source *src;
    dw_policy *policies; size_t npolicies;
    dw_macro_def *macros; size_t nmacros;
    /* after linking (compiler/link.h): the templates, out of `policies` */
    dw_policy *templates; size_t ntemplates;
} dw_policy_set;

/* Parse a whole .dw (or .cedar) text.  Returns NULL on a fatal error (OOM);
 * otherwise a set, possibly with errors recorded in *diags (the caller
 * checks diags->nerrors).  `src` must outlive the result. */
dw_policy_set *dw_parse_policy_set(const dw_source *src, dw_diags *diags);
void dw_policy_set_free(dw_policy_set *ps);

/* Parse a single expression (tests, CLI helpers). */
dw_expr *dw_parse_expr(dw_policy_set *owner, const dw_source *src, dw_diags *diags);

/* Debug printer: a fully parenthesised S-expression-like text (golden tests). */
void dw_expr_print(FILE *out, const dw_expr *e);
void dw_policy_print(FILE *out, const dw_policy *p);


/* ---- helpers (ast.c; additions for the front end and its tests) ---- */
/* A zeroed node of `kind` in arena `a` (depth 1); NULL on OOM. */
dw_expr *dw_expr_new(dw_arena *a, dw_expr_kind kind, dw_loc loc);
/* 1 + the largest depth among e's children (children must have depth set). */
uint32_t dw_expr_compute_depth(const dw_expr *e);
/* The one child iteration of Cedar expressions: the i-th child slot, left to
 * right (a record's values; a method's receiver, then its arguments); NULL
 * past the last.  A temporal leaf has no Cedar children.  Walk with
 * `for (size_t i = 0; (k = dw_expr_kid(e, i)); i++)`. */
dw_expr **dw_expr_kid(dw_expr *e, size_t i);
static inline const dw_expr *dw_expr_kid_c(const dw_expr *e, size_t i)
{
    dw_expr **k = dw_expr_kid((dw_expr *)e, i);
    return k ? *k : NULL;
}
/* Deep copy; NULL on OOM. */
dw_expr *dw_expr_clone(dw_arena *a, const dw_expr *e);
/* Structural equality, source positions ignored.  Two temporal leaves are
 * equal when temporal_eq says so; with NULL never (the safe answer for a
 * caller that cannot compare them: they count as different). */
typedef bool (*dw_temporal_eq_fn)(void *ctx, const dw_temporal *a, const dw_temporal *b);
bool dw_expr_eq(const dw_expr *a, const dw_expr *b, dw_temporal_eq_fn temporal_eq, void *ctx);
/* Is `name` one of Cedar's methods (§3.8)?  *builtin_arity is set to the
 * arity checked at parse time (contains... isEmpty), or -1 for extension methods. */
bool dw_is_cedar_method(const char *name, size_t len, int *builtin_arity);
void dw_macro_print(FILE *out, const dw_macro_def *m);
/* Every macro, then every policy, in source order (golden tests). */
void dw_policy_set_print(FILE *out, const dw_policy_set *ps);

#endif
