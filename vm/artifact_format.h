/* artifact_format.h - the .dwb file layout, shared by the writer
 * (compiler/artifact_write.c) and the loader (vm/artifact.c).
 * All integers little-endian.
 *
 *   0   magic "\x7f" "DWB"
 *   4   u16 major, u16 minor
 *   8   u32 nsections
 *   12  u32 flags (0)
 *   16  u64 file size
 *   24  u64 XXH3-64 of bytes [32, file size), seeded with XXH3-64 of bytes [0, 16)
 *   32  section table: nsections x { u32 id, u32 count, u32 offset, u32 size }
 *   ... sections, each 8-byte aligned
 *
 * Values are stored flattened: a set's elements and a record's fields are
 * stored before the set or record itself, so the loader rebuilds them in
 * index order without recursion and a hostile file cannot form a cycle. */
#ifndef DW_ARTIFACT_FORMAT_H
#define DW_ARTIFACT_FORMAT_H
#include <stdint.h>

#define DW_ARTIFACT_MAGIC "\x7f" "DWB"
#define DW_ARTIFACT_MAJOR 1
#define DW_ARTIFACT_MINOR 0
#define DW_ARTIFACT_HEADER 32

typedef enum dw_section_id {
    DW_SEC_STRDATA = 1,   /* bytes; every string is followed by a NUL */
    DW_SEC_STRTAB,        /* { u32 off, u32 len } into STRDATA */
    DW_SEC_STRS,          /* u32 strtab index: the program's attribute/type names */
    DW_SEC_UIDS,          /* { u32 type, u32 id } strtab indices */
    DW_SEC_IPS,           /* { u8 v6, u8 prefix, u8 addr[16], u8 pad[2] } */
    DW_SEC_VALUES,        /* { u8 kind, u8 pad[3], u32 n, u64 payload } */
    DW_SEC_FIELDS,        /* { u32 key strtab, u32 value index } */
    DW_SEC_CONSTS,        /* u32 value index */
    DW_SEC_CODE,          /* u32 instructions */
    DW_SEC_PATS,          /* { u32 first seg, u32 nseg } */
    DW_SEC_SEGS,          /* u32 strtab index */
    DW_SEC_KEYLISTS,      /* { u32 first, u32 n } into KEYIDX */
    DW_SEC_KEYIDX,        /* u32 index into STRS */
    DW_SEC_POLICIES,      /* dw_artifact_policy */
    DW_SEC_ANNOTS,        /* { u32 key, u32 value } strtab indices */
    DW_SEC_META,          /* dw_artifact_meta */
    DW_SEC_INDEX,         /* { u8 kind, u8 var, u16 pad, u32 type (STRS), u32 id (STRS), u32 policy } */
    DW_SEC__COUNT
} dw_section_id;

typedef struct dw_artifact_policy {
    uint8_t effect, pad[3];
    uint32_t entry, end, max_stack;
    uint32_t id;                 /* strtab */
    uint32_t annot_first, nannots;
    uint32_t line, col;
} dw_artifact_policy;

typedef struct dw_artifact_meta {
    uint32_t max_stack;
    uint32_t pad;
    uint64_t schema_digest;      /* XXH3-64 of the schema text the set was compiled against, 0 if none */
} dw_artifact_meta;

#endif
