/* providers.h - information-provider declarations (dogwood.md §13.2, §13.5):
 * the `providers.json` document (`{"availableProviders": {"Ns::Fn": {...}}}`)
 * and dwc's built-in providers, which are declared without an entry.
 * Parameter types are resolved to Cedar types (lang/schema.h): string ->
 * String, integer/long -> Long, bool/boolean -> Bool, decimal -> decimal,
 * set -> Set<items>, record -> {fields} (required per `required`); an
 * unknown name -> String (with a warning). */
#ifndef DW_PROVIDERS_H
#define DW_PROVIDERS_H
#include <stdbool.h>
#include <stddef.h>
#include "schema.h"

typedef struct dw_provider_method {
    dw_str name;
    dw_type **args; size_t nargs;
    dw_type *out;
    dw_type *input;              /* the declared inputType, NULL when none */
    dw_loc loc;
} dw_provider_method;

typedef struct dw_provider_decl {
    dw_str name;                 /* "Ns::Fn" */
    dw_type **args; size_t nargs;
    dw_type *out;
    dw_provider_method *methods; size_t nmethods;
    bool builtin;                /* one of dwc's built-ins (§13.5) */
    bool broken;                 /* its entry has errors (reported there): its types are stand-ins, a
                                  * call to it is not typed (so no second finding is derived from them) */
    dw_loc loc;
} dw_provider_decl;

typedef struct dw_providers {
    dw_arena arena;
    const dw_source *src;        /* the declaration file, NULL for the built-ins alone */
    dw_provider_decl *v; size_t n;
} dw_providers;

/* Parse a declaration file; the built-ins are always present (an entry
 * naming one must declare its types).  NULL on a fatal error (not JSON, OOM);
 * otherwise findings are in diags (the caller checks nerrors).  src must
 * outlive the result. */
dw_providers *dw_providers_parse(const dw_source *src, dw_diags *diags);
void dw_providers_free(dw_providers *p);
/* The built-in declarations alone (process-wide, built once; never freed). */
const dw_providers *dw_providers_builtins(void);
/* The declaration of name; p NULL: the built-ins. */
const dw_provider_decl *dw_providers_find(const dw_providers *p, const char *name, size_t len);
/* The declared method of d, or NULL. */
const dw_provider_method *dw_provider_method_find(const dw_provider_decl *d, const char *name, size_t len);

#endif
