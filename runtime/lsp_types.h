/* lsp_types.h - the language server's view of a document (lsp_types.c):
 * the token at the cursor, read from the text; the policy and expression
 * at an offset; the actions a scope admits; types from the schema. */
#ifndef DW_LSP_TYPES_H
#define DW_LSP_TYPES_H
#include "lsp_int.h"

typedef enum {
    DW_TOK_NONE,
    DW_TOK_UID,      /* Path::"id" (the id may be unterminated) */
    DW_TOK_PATH,     /* A::B without a quoted id: an entity type or namespace */
    DW_TOK_CALL,     /* name( : a macro (or extension function) call */
    DW_TOK_MEMBER,   /* .name */
    DW_TOK_IDENT,    /* any other word */
} dw_tok_kind;

typedef struct dw_lsp_tok {
    dw_tok_kind kind;
    size_t off, end;        /* the token's bytes */
    dw_str path;            /* UID, PATH: "Box::Action" */
    dw_str id;              /* UID: the raw text between the quotes */
    dw_str name;            /* CALL, MEMBER, IDENT, PATH: the word at the cursor */
    bool on_type;           /* UID: the cursor is on an entity type path, not an action's */
} dw_lsp_tok;

void dw_lsp_scan(const char *text, size_t len, size_t off, dw_lsp_tok *tok);

/* The event of the predicate `Path::"id"::kind{ ... }` whose braces hold
 * off (an event schema must be loaded), or NULL. */
const dw_derived_event *dw_lsp_predicate_at(const dw_lsp *s, const char *text, size_t off);

/* The policy of ps whose text (annotations included) holds off, or -1. */
long dw_lsp_policy_at(const dw_policy_set *ps, size_t off);
/* The innermost expression of p's conditions whose span holds off, or NULL. */
const dw_expr *dw_lsp_expr_at(const dw_policy *p, size_t off);
/* A policy's name as `dwc check` gives it: its @id, else policyN. */
void dw_lsp_policy_name(const dw_policy_set *ps, size_t i, char *buf, size_t cap);
/* The schema's actions p's action scope admits (those with appliesTo), up to cap. */
size_t dw_lsp_scope_actions(const dw_schema *sc, const dw_policy *p, const dw_action_decl **out, size_t cap);
/* The type of attribute name of a record or entity type t, or NULL. */
const dw_type *dw_lsp_attr_type(const dw_schema *sc, const dw_type *t, const char *name, size_t len, bool *required);
/* The type of e in a request for action act (NULL: not known); nodes it makes come from a. */
const dw_type *dw_lsp_type_of(const dw_schema *sc, const dw_action_decl *act, dw_arena *a, const dw_expr *e, unsigned depth);
/* "String", "{path: String, ...}" (heap), NULL on OOM. */
char *dw_lsp_type_text(const dw_type *t);

/* ---- lsp_nav.c ---- */
/* The macro `name`: the document's own definition, else the standard
 * library's (*from_stdlib set); NULL when neither defines it. */
const dw_macro_def *dw_lsp_macro(dw_lsp *s, dw_lsp_doc *d, dw_str name, bool *from_stdlib);
/* The schema's action / entity type a uid or path token names, or NULL. */
const dw_action_decl *dw_lsp_tok_action(const dw_lsp *s, const dw_lsp_tok *tok);
const dw_entity_decl *dw_lsp_tok_entity(const dw_lsp *s, const dw_lsp_tok *tok);
/* What the cursor of a TextDocumentPositionParams is on: the token, and the
 * action, entity type or macro it names (each NULL when not). */
typedef struct dw_lsp_at {
    dw_lsp_doc *d;
    size_t off;
    dw_lsp_tok tok;
    const dw_action_decl *action;
    const dw_entity_decl *entity;
    const dw_macro_def *macro; bool macro_in_stdlib;
} dw_lsp_at;
/* false (with an error) when params name no open document or position. */
bool dw_lsp_cursor(dw_lsp *s, const dw_json *params, dw_lsp_at *at, char *err, size_t errcap);
/* The action schema's declarations, or NULL. */
const dw_schema *dw_lsp_schema(const dw_lsp *s);

#endif
