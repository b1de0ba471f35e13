/* value_conform.h - event values (§7.2) to Cedar values under the schema,
 * for an event given by its parts (dw_engine_decide_event, dogwood.md §15.1
 * steps 5 and 7), without a detour through JSON: Bool, Long, String, entity
 * and extension values as they are; Array and Set to Set; Null to "" (§20
 * Q15), or dropped as a record member of entity attributes; a string to an
 * extension value where the schema expects one; records checked against
 * their declared shape.  The rules and messages are those of
 * runtime/json_value.h (the JSON reader of the same values), without byte
 * offsets. */
#ifndef DW_VALUE_CONFORM_H
#define DW_VALUE_CONFORM_H
#include "json_value.h"
#include "dogwood_parts.h"

/* 0; -1 with a message in err (the value does not conform); -2 out of
 * memory or nested too deeply. */
int dw_value_conform(dw_arena *a, const dw_value *v, const dw_type *expect, bool drop_null, dw_value *out, dw_buf *err);

/* The per-event entity store (§15.1 step 7): the supplied entities, then
 * principal and resource without attributes where not supplied, then the
 * schema's actions; sealed.  checked: entity validation against the schema
 * (else the entities as given, the schema giving only its actions).  Same
 * returns as dw_value_conform. */
int dw_store_load_event_entities(dw_store *s, const dw_event_entity *ents, uint32_t n, const dw_uid *principal,
                                 const dw_uid *resource, const dw_schema *schema, bool checked, dw_buf *err);

#endif
