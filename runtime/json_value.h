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

/* ---- the pieces the JSON readers share with runtime/value_conform.c ---- */
/* Append a message (and " (at byte N)" when at is given) to err; always -1. */
int dw_value_fail(dw_buf *err, const dw_json *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An extension value of kind k from its text (the schema expects one). */
int dw_ext_from_string(dw_arena *a, const char *s, size_t n, dw_type_kind k, dw_value *out, dw_buf *err, const dw_json *at);
/* The extension function fn (or method) applied to args: an extension value. */
int dw_ext_call(dw_arena *a, const char *fn, size_t fnlen, const dw_value *args, uint32_t n, dw_value *out, dw_buf *err,
                const dw_json *at);
/* out has the kind (and entity type) expect says; expect may be NULL. */
int dw_value_check_type(const dw_value *out, const dw_type *expect, dw_buf *err, const dw_json *at);
/* rec has every required attribute of expect (NULL: nothing required). */
int dw_record_check_required(const dw_value *rec, const dw_type *expect, dw_buf *err, const dw_json *at);
const dw_attr_decl *dw_record_attr_decl(const dw_type *expect, const char *key, size_t klen);
/* Entity validation (§5.7): u's type is declared (*decl its declaration, NULL for an action or
 * without a schema), an enumerated entity has a declared id and no attributes, tags only where
 * declared; a parent's type is reachable through memberOf. */
int dw_entity_check_decl(const dw_schema *schema, const dw_uid *u, bool has_attrs, bool has_tags,
                         const dw_entity_decl **decl, dw_buf *err, const dw_json *at, const dw_json *attrs_at,
                         const dw_json *tags_at);
int dw_entity_check_parent(const dw_schema *schema, const dw_entity_decl *decl, const dw_uid *u, const dw_uid *parent,
                           dw_buf *err, const dw_json *at);
bool dw_schema_enum_id_declared(const dw_schema *schema, const dw_uid *u);
int dw_schema_member_of_reaches(const dw_schema *schema, const dw_entity_decl *decl, const dw_uid *parent);
/* The schema's actions (if given) added, then the store sealed. */
int dw_store_finish(dw_store *s, const dw_schema *actions, dw_buf *err);

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
/* The same with the principal's, action's and resource's dw_type_hash
 * (type_hash[0..2], stdlib/uid_hash.h) known; err NULL: no message. */
int dw_request_check_hashed(const dw_schema *schema, const dw_action_decl *ad, bool validate, const dw_request *out,
                            const uint64_t type_hash[3], const dw_json *const uj[3], dw_buf *err);

#endif
