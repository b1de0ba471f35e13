/* json_request.h - a request's JSON line straight to a dw_request.
 *
 * dw_request_parse_json gives what dw_json_parse + dw_request_from_json give
 * (same values, same errors) in one pass for the common shape: the reader
 * builds the request's values as it scans, directed by the schema, with no
 * JSON tree in between.  Whatever that pass does not take on (an escape in a
 * string, a float, `__extn`, an extension-typed attribute, an unknown or
 * repeated top-level member, a context before its action, any error) goes to
 * the general path from the start, so every diagnostic stays the general
 * path's own. */
#ifndef DW_JSON_REQUEST_H
#define DW_JSON_REQUEST_H
#include "json_read_cache.h"
#include "json_value.h"

/* {"principal", "action", "resource", "context"} (context optional), as
 * dw_request_from_json with the same schema and validate.  The request's
 * values live in arena a.  cache: the uid objects of earlier lines
 * (runtime/json_read_cache.h; NULL: none), only ever a shortcut to the same
 * request.  0, or -1 with a message in *err (appended). */
int dw_request_parse_json(dw_arena *a, const char *text, size_t len, const dw_schema *schema, bool validate,
                          dw_read_cache *cache, dw_request *out, dw_buf *err);

/* dw_request_bind of a request dw_request_parse_json has just read through
 * cache (the last line it read): a principal, action or resource that is a
 * slot's lent reading takes the slot's remembered answer for this program
 * and sealed store (dw_read_cache_bind_uid) instead of two hash probes; any
 * other is bound in full.  The result is dw_request_bind's. */
void dw_request_bind_read(dw_request *req, dw_read_cache *cache, const dw_program *prog, const dw_store *store);
/* dw_bind_uid of var, a uid read as reading ver of slot sl (NULL: none): the
 * answer the slot keeps for prog and store when it is theirs (both serials
 * set and equal), else bound and kept there.  Returns the canonical uid. */
const dw_uid *dw_read_cache_bind_uid(dw_read_cache_uid *sl, uint64_t ver, const dw_program *prog, const dw_store *store,
                                     dw_value *var, const dw_entity **ent);
/* Whether slot sl's kept answer is the one for the program and sealed store
 * of these serials: both set (0 is never taken from the memo) and both equal.
 * The one rule dw_read_cache_bind_uid takes its memo by. */
static inline bool dw_read_cache_bind_is_current(const dw_read_cache_uid *sl, uint64_t prog_serial, uint64_t store_serial)
{
    return prog_serial && store_serial && sl->bind_prog_serial == prog_serial && sl->bind_store_serial == store_serial;
}

/* The one-pass reader alone: 1 decoded into *out, 0 not taken on (the
 * general path must decide; arena a may hold partial work).  For tests. */
int dw_request_json_fast(dw_arena *a, const char *text, size_t len, const dw_schema *schema, bool validate,
                         dw_read_cache *cache, dw_request *out);

/* The reader's pieces, for other one-pass readers of JSON lines (the
 * engine's Box events, runtime/engine_event.c), each at text[*pos] (leading
 * white space skipped), carving what they build from c (start it zeroed; one
 * arena call per block, not per value): a value as dw_value_from_json reads
 * it against expect, an entity uid object, a string with no escape (a
 * NUL-terminated copy); cache as dw_request_parse_json's.  true (or the uid) with *pos past it; false (NULL):
 * not taken on, the general path must decide. */
bool dw_json_fast_value(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos,
                        const dw_type *expect, dw_value *out);
const dw_uid *dw_json_fast_uid(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos);
bool dw_json_fast_string(dw_arena *a, dw_carve *c, dw_read_cache *cache, const char *text, size_t len, size_t *pos,
                         const char **s, size_t *n);
/* The same string in place (not copied, not NUL-terminated): a member name to compare. */
bool dw_json_fast_key(const char *text, size_t len, size_t *pos, const char **s, size_t *n);

#endif
