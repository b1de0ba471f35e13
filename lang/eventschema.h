/* eventschema.h - the event schema (`.dwschema`, dogwood.md §12): parser,
 * derivation against a resolved action schema (§12.2-§12.3), pins and
 * key-local semantics (§8.9), the built-in schemas (§12.7, box.md §5) and
 * a printer of the derived events for the golden tests.
 *
 * Lifetimes: a dw_event_schema owns its arena but keeps pointing at its
 * dw_source (the text must outlive it).  A dw_event_derivation points into
 * both the event schema and the dw_schema it was derived against; free it
 * before either. */
#ifndef DW_EVENTSCHEMA_H
#define DW_EVENTSCHEMA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ast.h"
#include "diag.h"
#include "schema.h"

#define DW_EVENT_DEFAULT_MAX_WINDOW 86400u  /* seconds: 24h (§12.6) */
#define DW_EVENT_MAX_GROUP_DEPTH 64         /* nesting of `{ … }` groups in a declaration */

/* ---------------------------------------------------------------- declarations (as written) */

typedef enum dw_ev_selector {
    DW_SEL_INPUTS, DW_SEL_OUTPUTS, DW_SEL_PRINCIPAL_TYPE, DW_SEL_RESOURCE_TYPE,
} dw_ev_selector;

typedef enum dw_ev_pin_root { DW_PIN_PRINCIPAL, DW_PIN_RESOURCE, DW_PIN_CONTEXT } dw_ev_pin_root;

typedef struct dw_ev_pin_ref {
    dw_ev_pin_root root;
    dw_str path;            /* attribute path after the root, dotted ("" for bare principal) */
    dw_str text;            /* whole ref, normalised: "principal", "context.sessionId" */
    dw_loc loc;
} dw_ev_pin_ref;

typedef enum dw_ev_fdecl_kind {
    DW_FD_SPREAD,           /* `...inputs(A)` / `...outputs(A)`: sel */
    DW_FD_TYPE,             /* `name: Ns::Type`: type_name */
    DW_FD_SELECTOR,         /* `name: principalType(A)` / `resourceType(A)`: sel */
    DW_FD_GROUP,            /* `name: { … }`: fields */
} dw_ev_fdecl_kind;

typedef struct dw_ev_fdecl dw_ev_fdecl;
struct dw_ev_fdecl {
    dw_ev_fdecl_kind kind;
    dw_str name;            /* SPREAD: "input" / "output" (the group it produces) */
    dw_loc loc;             /* of the name (SPREAD: of the selector) */
    dw_ev_selector sel;
    uint32_t id;            /* dense index over the whole schema (derivation side tables) */
    dw_str type_name;       /* TYPE: path joined with "::" without whitespace */
    dw_loc type_loc;
    dw_ev_fdecl *fields; size_t nfields;   /* GROUP */
    bool pinned;
    dw_ev_pin_ref ref;      /* when pinned */
};

/* A pin flattened to its field path ("callerPrincipal", "meta.s"). */
typedef struct dw_ev_pin_decl {
    dw_str path;
    dw_ev_pin_ref ref;
    const dw_ev_fdecl *field;
} dw_ev_pin_decl;

typedef struct dw_ev_decl {
    bool decision;
    dw_str binder;          /* the `A` of `<A>` */
    dw_str kind;
    dw_loc loc;             /* of the kind name */
    dw_ev_fdecl *fields; size_t nfields;
    dw_ev_pin_decl *pins; size_t npins;    /* in source order */
} dw_ev_decl;

typedef struct dw_event_schema {
    dw_arena arena;
    const dw_source *src;
    bool has_max_window;
    uint64_t max_window;    /* seconds; DW_EVENT_DEFAULT_MAX_WINDOW when not declared */
    dw_str max_window_text; /* as the author wrote it, without spaces: "24h" */
    dw_ev_decl *decls; size_t ndecls;
    dw_str *decision_kinds; size_t ndecision_kinds;   /* declaration order */
    uint32_t nfdecls;       /* number of dw_ev_fdecl (ids 0..nfdecls-1) */
    /* Universal symmetric pins (§8.9), in the first declaration's order.
     * nkey > 0 means key-local semantics: the history is partitioned by
     * the tuple of these logged fields. */
    dw_ev_pin_decl *key; size_t nkey;
    /* §2.2: whitespace inside a composite token (`24 h`, `Ns :: T`) was
     * accepted; `dwc --check` reports it as a style finding. */
    bool loose_tokens;
    dw_loc loose_loc;
} dw_event_schema;

/* Parse `.dwschema` text.  Returns NULL on error (diagnostics in *d); a
 * schema that declares no decision kind gets a warning.  An empty schema
 * (only whitespace and comments) is an error. */
dw_event_schema *dw_event_schema_parse(const dw_source *src, dw_diags *d);
void dw_event_schema_free(dw_event_schema *es);

/* Built-in schemas: "default" (pinned, §12.7), "unpinned", "session-pinned",
 * "box" (box/events.dwschema).  Unknown name: NULL.  The text is static. */
const char *dw_event_schema_builtin_text(const char *name);
const dw_source *dw_event_schema_builtin_source(const char *name);
dw_event_schema *dw_event_schema_builtin(const char *name, dw_diags *d);

bool dw_event_schema_is_decision_kind(const dw_event_schema *es, const char *kind, size_t len);
const dw_ev_decl *dw_event_schema_decl(const dw_event_schema *es, const char *kind, size_t len);
/* max_window in ticks (§20 D6): ticks_per_second is 1 for `.log` replay,
 * 1000000000 for the runtime's nanoseconds.  The parser guarantees the
 * nanosecond value fits an int64_t.  es == NULL gives the default. */
int64_t dw_event_schema_max_window_ticks(const dw_event_schema *es, int64_t ticks_per_second);
static inline bool dw_event_schema_key_local(const dw_event_schema *es) { return es->nkey > 0; }

/* ---------------------------------------------------------------- derived events */

typedef struct dw_event_field dw_event_field;
struct dw_event_field {
    dw_str name;
    bool is_group;
    bool optional;          /* from a spread's optional attribute / optional input|output */
    bool open;              /* group from a record with additionalAttributes */
    /* Leaf type.  For principalType/resourceType it is the entity type when
     * exactly one is allowed, otherwise NULL and `etypes` lists them (an
     * action without appliesTo allows none). */
    const dw_type *type;
    const dw_str *etypes; size_t netypes;
    bool from_selector;     /* principalType/resourceType leaf */
    dw_event_field *fields; size_t nfields;   /* group: source order (spreads: sorted by name) */
    const dw_ev_fdecl *decl;                  /* the declaration it came from */
    const dw_ev_pin_ref *pin;                 /* pinned leaf: its ref */
};

typedef struct dw_event_pin {
    dw_str path;            /* dotted field path */
    const dw_event_field *field;
    const dw_ev_pin_ref *ref;
} dw_event_pin;

typedef struct dw_derived_event {
    dw_str action_type;     /* "Box::Action" (namespace ++ Action) */
    dw_str action_id;       /* "fs:read" */
    dw_str kind;            /* "request" */
    bool decision;
    const dw_action_decl *action;
    const dw_ev_decl *decl;
    dw_event_field *fields; size_t nfields;
    dw_event_pin *pins; size_t npins;
} dw_derived_event;

typedef struct dw_event_derivation {
    dw_arena arena;
    const dw_event_schema *es;
    const dw_schema *actions;
    /* Action-major: events[a * es->ndecls + k] is action a (the schema's
     * sorted order) with declaration k. */
    dw_derived_event *events; size_t nevents;
} dw_event_derivation;

/* Derive every (action, declaration) event.  `actions` may be NULL (no
 * actions).  Reports type names that are neither Cedar types nor declared
 * entity types; returns NULL on error. */
dw_event_derivation *dw_event_schema_derive(const dw_event_schema *es, const dw_schema *actions,
                                            dw_diags *d);
void dw_event_derivation_free(dw_event_derivation *dv);

/* The derived event for (action type, action id, kind), or NULL when the
 * predicate does not name a declared event (§9.9). */
const dw_derived_event *dw_event_find(const dw_event_derivation *dv,
                                      const char *type, size_t tlen,
                                      const char *id, size_t idlen,
                                      const char *kind, size_t klen);
/* Resolve a dotted field path ("input.user", "callerPrincipal") in an
 * event: the field (leaf or group; check is_group), or NULL when it is not
 * declared. */
const dw_event_field *dw_event_field_lookup(const dw_derived_event *ev, const char *path, size_t len);

/* Print the derivation: a header (max_window, decision kinds, key pins),
 * then one line per event and one per field, with types and pins. */
void dw_event_derivation_print(FILE *out, const dw_event_derivation *dv);
/* Print a leaf's type as the printer does ("String", "Box::Agent",
 * "Ns::A | Ns::B", "Set<Long>"); groups print as "group". */
void dw_event_field_type_print(FILE *out, const dw_event_field *f);

#endif
