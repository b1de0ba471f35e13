/* schema.h - a Cedar schema (dogwood.md §11; Cedar's human `.cedarschema`
 * syntax and its JSON syntax), resolved: every type reference is resolved to
 * a fully qualified entity type, a primitive, an extension type, or an
 * inlined copy of a common type.  Owned by one arena. */
#ifndef DW_SCHEMA_H
#define DW_SCHEMA_H
#include <stdbool.h>
#include <stddef.h>
#include "ast.h"
#include "diag.h"

typedef enum dw_type_kind {
    DW_T_BOOL, DW_T_LONG, DW_T_STRING,
    DW_T_ENTITY,     /* name: fully qualified entity type */
    DW_T_SET,        /* elem */
    DW_T_RECORD,     /* attrs, nattrs (sorted by name, bytewise) */
    DW_T_DECIMAL, DW_T_IPADDR, DW_T_DATETIME, DW_T_DURATION,
} dw_type_kind;

typedef struct dw_type dw_type;
typedef struct dw_attr_decl {
    dw_str name;
    dw_type *type;
    bool required;      /* false when declared `name?: T` */
    dw_loc loc;
} dw_attr_decl;

struct dw_type {
    dw_type_kind kind;
    dw_str name;                  /* ENTITY */
    dw_type *elem;                /* SET */
    dw_attr_decl *attrs;          /* RECORD */
    size_t nattrs;
    bool additional_attrs;        /* RECORD: JSON `additionalAttributes: true` */
    dw_loc loc;
};

typedef struct dw_entity_decl {
    dw_str name;                  /* fully qualified: "Ns::Type" or "Type" */
    dw_str *member_of; size_t nmember_of;   /* fully qualified parent types */
    dw_type *shape;               /* RECORD (empty record when none declared) */
    dw_type *tags;                /* NULL when the type has no tags */
    dw_str *enum_ids; size_t nenum; /* enum entity: the allowed ids; nenum==0 otherwise */
    bool is_enum;
    dw_loc loc;
} dw_entity_decl;

typedef struct dw_action_decl {
    dw_euid_lit uid;              /* type "Ns::Action" (or "Action"), id */
    dw_euid_lit *parents; size_t nparents;  /* fully qualified action uids */
    bool has_applies_to;          /* false: applies to nothing */
    dw_str *principals; size_t nprincipals; /* fully qualified entity types */
    dw_str *resources; size_t nresources;
    dw_type *context;             /* RECORD, never NULL (empty record default) */
    dw_loc loc;
} dw_action_decl;

/* Entities are sorted bytewise by name and actions by (type, id), so the
 * lookups below are binary searches and printing is order-independent. */
typedef struct dw_schema_index dw_schema_index;
typedef struct dw_schema {
    dw_arena arena;
    const dw_source *src;
    dw_entity_decl *entities; size_t nentities;
    dw_action_decl *actions; size_t nactions;
    const dw_schema_index *index;   /* hash lookups (dw_schema_build_index); NULL: binary search */
} dw_schema;

/* Human syntax.  Returns NULL on error (diagnostics in *diags). */
dw_schema *dw_schema_parse_text(const dw_source *src, dw_diags *diags);
/* JSON syntax. */
dw_schema *dw_schema_parse_json(const dw_source *src, dw_diags *diags);
/* Pick by content: JSON if the first non-space byte is '{'. */
dw_schema *dw_schema_parse(const dw_source *src, dw_diags *diags);
void dw_schema_free(dw_schema *s);
/* Allocate an empty schema (NULL on OOM): the parsers fill it, and so does
 * the artifact's serving context (runtime/artifact_serve.c). */
dw_schema *dw_schema_new(const dw_source *src);

const dw_entity_decl *dw_schema_entity(const dw_schema *s, const char *name, size_t len);
const dw_action_decl *dw_schema_action(const dw_schema *s, const char *type, size_t tlen,
                                       const char *id, size_t idlen);
/* The same with the name's dw_type_hash, the uid's dw_uid_hash_typed
 * (stdlib/uid_hash.h) already computed: a reader that hashed the uid asks
 * the schema without hashing it again. */
const dw_entity_decl *dw_schema_entity_h(const dw_schema *s, const char *name, size_t len, uint64_t type_hash);
const dw_action_decl *dw_schema_action_h(const dw_schema *s, const char *type, size_t tlen,
                                         const char *id, size_t idlen, uint64_t uid_hash);
/* A hash index over the entities and actions as they are now (once they are
 * final: sorted, never added to again), in s's arena.  The lookups use it
 * while the arrays are the ones it was built for, else binary search.
 * false on OOM (no index: still correct, slower). */
bool dw_schema_build_index(dw_schema *s);
/* Which of action ad's appliesTo principal and resource types are
 * enumerated entity types (a request's scope entity of another type needs
 * no enum check): DW_SCOPE_ENUM_* bits, both without the index. */
#define DW_SCOPE_ENUM_PRINCIPAL 1u
#define DW_SCOPE_ENUM_RESOURCE 2u
unsigned dw_schema_scope_enums(const dw_schema *s, const dw_action_decl *ad);
/* The order of entities (by name), actions (by type, then id) and record
 * attributes (by name): bytewise, a prefix first. */
int dw_schema_name_cmp(dw_str a, dw_str b);
int dw_schema_uid_cmp(dw_str at, dw_str aid, dw_str bt, dw_str bid);
/* Print a resolved type ("Set<Long>", "{a: Long, b?: String}", "Ns::User"). */
void dw_type_print(FILE *out, const dw_type *t);

/* ---- additions (schema parsers) ---- */

/* Set/record nesting limit, counted after common types are inlined. */
#define DW_SCHEMA_MAX_DEPTH 128

/* Print the whole resolved schema, one declaration per line (entities, then
 * actions, in the sorted order above).  The golden tests compare this text. */
void dw_schema_print(FILE *out, const dw_schema *s);
/* The schema as Cedar schema text (namespaces, fully qualified references)
 * or as Cedar's JSON schema (lang/schema_write.c), each read back by Cedar
 * and by dwc to the same resolved schema.  0, or -1 if writing failed. */
int dw_schema_write_text(FILE *out, const dw_schema *s);
int dw_schema_write_json(FILE *out, const dw_schema *s);
/* Structural equality of two resolved types (record attrs are sorted). */
bool dw_type_equal(const dw_type *a, const dw_type *b);

#ifdef DW_SCHEMA_INTERNAL
/* The unresolved schema both front ends (schema_text.c, schema_json.c) build
 * and schema.c resolves.  Names are as written ("T", "Ns::T"); every node
 * lives in the schema's arena.  Not part of the public API. */
typedef enum { DW_RT_NAME, DW_RT_PRIM, DW_RT_SET, DW_RT_RECORD } dw_rtype_kind;
typedef enum {
    DW_REF_ANY,        /* common type, else entity type, else built-in (human syntax) */
    DW_REF_ENTITY,     /* JSON "Entity" */
    DW_REF_COMMON,     /* JSON "type": "<common type>" */
    DW_REF_EXT,        /* JSON "Extension" */
} dw_ref_kind;
typedef struct dw_rtype dw_rtype;
typedef struct dw_rattr { dw_str name; dw_rtype *type; bool required; dw_loc loc; } dw_rattr;
struct dw_rtype {
    dw_rtype_kind kind;
    dw_ref_kind ref;              /* NAME */
    dw_str name;                  /* NAME */
    dw_type_kind prim;            /* PRIM */
    dw_rtype *elem;               /* SET */
    dw_rattr *attrs; size_t nattrs; bool additional_attrs;   /* RECORD */
    dw_loc loc;
};
typedef struct dw_rname { dw_str name; dw_loc loc; } dw_rname;
/* An action reference; has_type false means "an action of this namespace". */
typedef struct dw_raref { bool has_type; dw_str type, id; dw_loc loc; } dw_raref;
typedef enum { DW_RD_ENTITY, DW_RD_ACTION, DW_RD_COMMON } dw_rdecl_kind;
typedef struct dw_rdecl {
    dw_rdecl_kind kind;
    dw_str ns;                    /* "" for the empty namespace */
    dw_str name;                  /* entity/common basename, or action id */
    dw_loc loc;                   /* of the name */
    /* ENTITY */
    dw_rname *parents; size_t nparents;
    dw_rtype *shape, *tags;       /* may be NULL */
    dw_str *enum_ids; dw_loc *enum_locs; size_t nenum; bool is_enum;
    /* ACTION */
    dw_raref *aparents; size_t naparents;
    bool has_applies_to;
    dw_rname *principals; size_t nprincipals;
    dw_rname *resources; size_t nresources;
    dw_rtype *context;            /* may be NULL */
    /* COMMON */
    dw_rtype *def;
} dw_rdecl;
typedef struct dw_rschema { dw_rdecl *v; size_t n, cap; } dw_rschema;

/* Append a zeroed declaration (arena-backed vector); NULL on OOM. */
dw_rdecl *dw_rschema_add(dw_schema *s, dw_rschema *r);
/* Grow an arena-backed array of `size`-byte elements to hold n+1 (doubling). */
void *dw_schema_grow(dw_schema *s, void *v, size_t n, size_t *cap, size_t size);
/* Resolve names, inline common types, check well-formedness.  Returns s, or
 * frees s and returns NULL when an error was reported. */
dw_schema *dw_schema_resolve(dw_schema *s, const dw_rschema *r, dw_diags *d);
/* Identifier checks shared by both syntaxes. */
bool dw_schema_is_ident(const char *p, size_t n);
bool dw_schema_is_reserved(const char *p, size_t n);
#endif

#endif
