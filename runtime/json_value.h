/* json_value.h - Cedar's JSON value format (entities, contexts, requests;
 * dogwood.md Appendix A) to run-time values, directed by the schema when
 * one is given: strings become decimal/ip/datetime/duration values where the
 * schema expects them, `{"type","id"}` becomes an entity reference where it
 * expects an entity, and records are checked against their declared shape. */
#ifndef DW_JSON_VALUE_H
#define DW_JSON_VALUE_H
#include "../lang/json.h"
#include "../lang/schema.h"
#include "../vm/store.h"
#include "../vm/vm.h"

/* Errors: a message in *err (heap buffer, appended) and -1. */
int dw_value_from_json(dw_arena *a, const dw_json *j, const dw_type *expect, dw_value *out, dw_buf *err);
/* `{"type": T, "id": I}` or `{"__entity": {...}}`. */
const dw_uid *dw_uid_from_json(dw_arena *a, const dw_json *j, dw_buf *err);

/* Add the schema's action entities (with their parents) to the store. */
int dw_store_add_schema_actions(dw_store *s, const dw_schema *schema, dw_buf *err);
/* Load an entities JSON array into the store (schema may be NULL), then the
 * schema's actions, then seal the store. */
int dw_store_load_json(dw_store *s, const dw_json *arr, const dw_schema *schema, dw_buf *err);
/* The same without entity validation (types, attributes, parents taken as
 * given; the schema gives only its actions): the reference's unchecked
 * requests (dw_engine_config.no_request_validation). */
int dw_store_load_json_unchecked(dw_store *s, const dw_json *arr, const dw_schema *schema, dw_buf *err);

/* Is u's type in list (an action's appliesTo principal or resource types)? */
bool dw_type_listed(const dw_str *list, size_t n, const dw_uid *u);

/* Build a request.  context may be NULL (empty record).  With a schema the
 * context is parsed against the action's declared context type; with
 * `validate` the principal/resource types must be allowed by the action's
 * appliesTo and the context must conform (dogwood.md §5.7). */
int dw_request_from_json(dw_arena *a, const dw_json *principal, const dw_json *action,
                         const dw_json *resource, const dw_json *context,
                         const dw_schema *schema, bool validate, dw_request *out, dw_buf *err);
/* dw_request_from_json's last step on a built request: with `validate`, the
 * action's appliesTo and the enumerated entity ids (ad: the request's action
 * in schema, NULL without one).  uj, when given, are the principal, action
 * and resource JSON nodes the messages point at.  0 or -1 with *err. */
int dw_request_check(const dw_schema *schema, const dw_action_decl *ad, bool validate, const dw_request *out,
                     const dw_json *const uj[3], dw_buf *err);

#endif
