/* value.h - Cedar run-time values (dogwood.md §4.1).
 * A dw_value is a 16-byte tagged word.  Strings, sets, records, entity uids
 * and ip addresses point into an arena (the artifact's for constants, the
 * entity store's for entity data, a per-decision scratch arena otherwise);
 * values are immutable once built.  Sets are kept sorted and duplicate-free
 * under dw_value_cmp and records sorted by key, so equality is a plain
 * structural walk. */
#ifndef DW_VALUE_H
#define DW_VALUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../stdlib/arena.h"
#include "../stdlib/ext.h"

typedef enum dw_vkind {
    DW_V_BOOL, DW_V_LONG, DW_V_STRING, DW_V_ENTITY, DW_V_SET, DW_V_RECORD,
    DW_V_DECIMAL, DW_V_IPADDR, DW_V_DATETIME, DW_V_DURATION,
    /* event values only (dogwood.md §7.2), never produced by Cedar evaluation */
    DW_V_ARRAY,              /* n elements at u.elems, in the order given */
    DW_V_NULL,               /* no payload */
    DW_V__COUNT
} dw_vkind;

typedef struct dw_value dw_value;
typedef struct dw_field dw_field;

/* An entity uid.  `hash` covers type and id; uids are compared by hash,
 * then bytes. */
typedef struct dw_uid {
    const char *type; uint32_t tlen;
    uint32_t idlen;   const char *id;
    uint64_t hash;
} dw_uid;

struct dw_value {
    uint8_t kind;            /* dw_vkind */
    uint32_t n;              /* STRING: byte length; SET/RECORD: element count; DECIMAL, IPADDR,
                                DATETIME, DURATION: how it was written (vm/ext_spelling.h), never compared */
    union {
        bool b;
        int64_t i;           /* LONG, DECIMAL (x10^4), DATETIME (ms), DURATION (ms) */
        const char *s;       /* STRING (NUL terminated too) */
        const dw_uid *uid;   /* ENTITY */
        const dw_value *elems;   /* SET */
        const dw_field *fields;  /* RECORD */
        const dw_ipaddr *ip; /* IPADDR */
    } u;
};

/* khash: dw_key_hash(key), set by dw_make_record, so a lookup compares one
 * word per field before touching the bytes. */
struct dw_field { const char *key; uint32_t klen; uint32_t khash; dw_value v; };
uint32_t dw_key_hash(const char *key, size_t len);

static inline dw_value dw_bool(bool b) { dw_value v = { .kind = DW_V_BOOL }; v.u.b = b; return v; }
static inline dw_value dw_long(int64_t i) { dw_value v = { .kind = DW_V_LONG }; v.u.i = i; return v; }

const char *dw_vkind_name(dw_vkind k);
uint64_t dw_uid_hash(const char *type, size_t tlen, const char *id, size_t idlen);
bool dw_uid_eq(const dw_uid *a, const dw_uid *b);
/* A process-wide serial: never 0, never given twice (threads included).  A
 * prepared program and a sealed store each take one, so a reading memoised
 * against them is known stale when either was replaced, even at the same address. */
uint64_t dw_serial_next(void);
/* Total order over all values (kind first); 0 iff structurally equal. */
int  dw_value_cmp(const dw_value *a, const dw_value *b);
/* Equality without ordering: kinds, lengths and uid hashes first. */
bool dw_value_eq(const dw_value *a, const dw_value *b);
int  dw_bytes_cmp(const char *a, size_t an, const char *b, size_t bn);

/* Constructors (copy into arena a).  NULL/false on OOM. */
bool dw_make_string(dw_arena *a, const char *s, size_t n, dw_value *out);
const dw_uid *dw_make_uid(dw_arena *a, const char *type, size_t tlen, const char *id, size_t idlen);
/* Sort and dedupe `elems` in place (it must be arena memory owned by the caller). */
dw_value dw_make_set(dw_value *elems, size_t n);
/* Sort fields by key in place; returns false if two keys are equal. */
bool dw_make_record(dw_field *fields, size_t n, dw_value *out);

/* Deep copy into arena a (entity uids included).  False on OOM or when the
 * value nests deeper than 256 levels. */
bool dw_value_clone(dw_arena *a, const dw_value *v, dw_value *out);
/* The same copy in one block (the history's retained events: one arena call
 * per event, not one per piece): the bytes it takes, SIZE_MAX when v nests
 * deeper than 256 levels; then the copy carved from *cur (8-aligned, that
 * many bytes), *cur advanced past it.  dw_packed_str: n bytes and a NUL. */
size_t dw_value_packed_size(const dw_value *v);
void dw_value_clone_packed(char **cur, const dw_value *v, dw_value *out);
char *dw_packed_str(char **cur, const char *s, size_t n);
/* n bytes from *cur, and the block bytes they take (n rounded up to 8). */
void *dw_packed_take(char **cur, size_t n);
size_t dw_packed_len(size_t n);

/* Lookup in a record value; NULL if absent. */
const dw_value *dw_record_get(const dw_value *rec, const char *key, size_t klen);
/* The same with the key's dw_key_hash precomputed (the VM's attribute names). */
const dw_value *dw_record_get_h(const dw_value *rec, const char *key, size_t klen, uint32_t khash);
/* The value at a dotted path ("input.host") inside nested records, or NULL. */
const dw_value *dw_record_path(const dw_value *v, const char *path, size_t n);
/* Membership in a set value (binary search). */
bool dw_set_contains(const dw_value *set, const dw_value *v);

/* Cedar-like text for diagnostics and `dwc authorize -v`. */
void dw_value_print(FILE *out, const dw_value *v);

#endif
