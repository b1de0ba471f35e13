/* uid_hash.h - the hash of an entity type name and of an entity uid, in two
 * steps so that one reading of a uid hashes its type once for both: the
 * schema's index looks entity types up by dw_type_hash and actions by
 * dw_uid_hash_typed, and a uid read from JSON carries dw_uid_hash_typed as
 * its hash.  dw_uid_hash_typed(dw_type_hash(t), id) is vm/value.c's
 * dw_uid_hash(t, id), which is defined through them. */
#ifndef DW_UID_HASH_H
#define DW_UID_HASH_H
#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint64_t dw_type_hash(const char *type, size_t tlen) { return XXH3_64bits(type, tlen); }
/* seeded with the type's hash, so ("a","bc") and ("ab","c") differ */
static inline uint64_t dw_uid_hash_typed(uint64_t type_hash, const char *id, size_t idlen)
{
    return XXH3_64bits_withSeed(id, idlen, type_hash);
}

#endif
