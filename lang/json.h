/* json.h - a strict JSON reader for entities, requests, contexts, schemas,
 * traces and test files.  cJSON is not used for input because it rounds
 * integers through a double and truncates strings at "\u0000"; Cedar's
 * corpus has both (dogwood.md Appendix A).  Integers are read exactly;
 * strings keep embedded NULs; every node records its byte offset so errors
 * point into the file.  Nesting is bounded (dogwood.md §19: 128 levels). */
#ifndef DW_JSON_H
#define DW_JSON_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "ast.h"
#include "../stdlib/json_escape.h"   /* the writer side: dw_json_escape* */
#include "diag.h"

#define DW_JSON_MAX_DEPTH 128

typedef enum dw_json_kind {
    DW_JSON_NULL, DW_JSON_BOOL, DW_JSON_INT, DW_JSON_FLOAT,
    DW_JSON_STRING, DW_JSON_ARRAY, DW_JSON_OBJECT,
} dw_json_kind;

typedef struct dw_json dw_json;
typedef struct dw_json_member { dw_str key; dw_json *value; uint32_t key_off; } dw_json_member;

struct dw_json {
    dw_json_kind kind;
    uint32_t off, end;          /* byte span in the source */
    union {
        bool b;
        int64_t i;              /* INT: exact */
        double d;               /* FLOAT: fraction, exponent, or integer outside i64 */
        dw_str str;             /* STRING: decoded UTF-8, may contain NUL */
        struct { dw_json **v; size_t n; } arr;
        struct { dw_json_member *v; size_t n; } obj;   /* source order, duplicates kept */
    } u;
};

/* Parse one JSON document.  NULL on error, with a diagnostic. */
dw_json *dw_json_parse(dw_arena *a, const dw_source *src, dw_diags *diags);
/* Member lookup by key bytes (first match); NULL if absent or not an object. */
const dw_json *dw_json_get_n(const dw_json *obj, const char *key, size_t klen);
/* The same by NUL-terminated key (inline: a literal key's length is folded). */
static inline const dw_json *dw_json_get(const dw_json *obj, const char *key) { return dw_json_get_n(obj, key, strlen(key)); }
/* Number of members with this key (to reject duplicates). */
size_t dw_json_count(const dw_json *obj, const char *key);
const char *dw_json_kind_name(dw_json_kind k);

#endif
