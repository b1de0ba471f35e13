/* artifact_format.h - the .dwb file layout, shared by the writer
 * (compiler/artifact_write.c) and the loader (vm/artifact.c).
 * All integers little-endian, written and read with stdlib/le.h on every
 * host; every record is fixed-size and read at the offsets given below (no
 * host struct layout is trusted).
 *
 *   0   magic "\x7f" "DWB"
 *   4   u16 major, u16 minor
 *   8   u32 nsections
 *   12  u32 flags (DW_AF_*; a reader refuses a bit it does not know)
 *   16  u64 file size
 *   24  u64 XXH3-64 of bytes [32, file size), seeded with XXH3-64 of bytes [0, 16)
 *   32  u64 instruction-set digest (dw_isa_digest, vm/program.h): the opcode
 *       and CALL function lists the code was compiled for; another is refused
 *   40  section table: nsections x { u32 id, u32 size }
 *       (ascending id; an empty section is left out of the table)
 *   ... the sections' bytes back to back in table order, unaligned (every
 *       field is read with memcpy); a section's count is size / record size
 *
 * A reader refuses another major.  A newer minor may add sections a reader
 * does not know; those are skipped, so a minor bump may only add data whose
 * absence changes no decision.
 *
 * Versions.  1.0: no temporal leaves.  2.0: temporal tables
 * (TFORMULAS .. TPOLICIES); values, UIDs, IPs and constants hash-consed;
 * STRTAB shrunk to start offsets; positional policy ids elided; index keys
 * deduplicated (IXKEYS).  A 1.x reader must not run a 2.0 file: it would drop
 * the temporal tables, hence the major bump.  3.0: the header grows to
 * 40 bytes with the instruction-set digest (a 2.x file says nothing of the
 * opcode numbering it assumes, so it cannot be checked and is refused).
 * 3.1: header flag DW_AF_BOX_PROFILE.  A 3.0 file has none, so a
 * loader in Box mode refuses it (recompile with `dwc compile --schema box`).
 * 3.2: section SERVE, what a service needs to serve the set without
 * a front end (the request gate's schema, the event schema).  A 3.1 reader
 * skips it and takes both from its own configuration, as before; dwd, which
 * has no schema parser, refuses a file compiled with a schema that lacks it.
 * 3.3 (this): the provider call sites (PTYPES .. PPOLICIES, vm/provider.h).
 * Code that reads them uses the PROV instruction, whose instruction-set
 * digest a 3.2 reader does not have, so it refuses such a file instead of
 * skipping the sections; a set without provider calls writes none of them.
 *
 * Values are stored flattened: a set's elements and a record's fields are
 * stored before the set or record itself, so the loader rebuilds them in
 * index order without recursion and a hostile file cannot form a cycle.
 * The temporal tables obey the same rule (children before parents, checked
 * by the verifier, vm/verify.c), so their evaluation always terminates. */
#ifndef DW_ARTIFACT_FORMAT_H
#define DW_ARTIFACT_FORMAT_H
#include <stdint.h>

#define DW_ARTIFACT_MAGIC "\x7f" "DWB"
#define DW_ARTIFACT_MAJOR 3
#define DW_ARTIFACT_MINOR 3
#define DW_ARTIFACT_HEADER 40
/* Header flags.  BOX_PROFILE: the set passed the Box profile's load checks
 * (box.md §11, §17) when it was compiled (`dwc compile --schema box`); a
 * loader in Box mode (--schema box) refuses an artifact without it.  The
 * flag is covered by the checksum: it records what the compiler checked, it
 * is not a signature. */
#define DW_AF_BOX_PROFILE 1u
#define DW_AF_KNOWN       DW_AF_BOX_PROFILE
/* Sets and records in VALUES nest at most this deep (a scalar is 0): a
 * compiled literal cannot be deeper than the parser's expression limit
 * (DW_MAX_EXPR_DEPTH, 256), and the VM's value comparisons recurse. */
#define DW_ARTIFACT_MAX_VALUE_DEPTH 256

typedef enum dw_section_id {
    /* ---- strings ---- */
    DW_SEC_STRDATA = 1,   /* bytes (count = size): the strings of STRTAB in order, each followed by a NUL */
    DW_SEC_STRTAB,        /* u32 start offset into STRDATA.  String i is [start_i, start_{i+1} - 1),
                             start_n = size of STRDATA; starts ascend and the byte before each
                             next start is the NUL.  Deduplicated: equal strings share an index. */
    DW_SEC_STRS,          /* u32 strtab index: the program's strs[] (attribute/type names, paths) */
    /* ---- values (hash-consed: equal values share one index) ---- */
    DW_SEC_UIDS,          /* { u32 type, u32 id } strtab indices; deduplicated */
    DW_SEC_IPS,           /* { u8 v6, u8 prefix, u8 addr[16], u8 pad[2] }; deduplicated */
    DW_SEC_VALUES,        /* { u8 kind, u8 pad[3], u32 n, u64 payload }: BOOL 0/1, LONG..DURATION
                             the i64, STRING strtab index, ENTITY UIDS index, IPADDR IPS index,
                             SET/RECORD first FIELDS entry of a run of n (elements stored first) */
    DW_SEC_FIELDS,        /* { u32 key strtab (0xFFFFFFFF for a set element), u32 value index } */
    DW_SEC_CONSTS,        /* u32 value index: consts[] (deduplicated; CONST operands renumbered) */
    /* ---- code ---- */
    DW_SEC_CODE,          /* u32 instructions (program.h encoding) */
    DW_SEC_PATS,          /* { u32 first seg, u32 nseg } */
    DW_SEC_SEGS,          /* u32 strtab index */
    DW_SEC_KEYLISTS,      /* { u32 first, u32 n } into KEYIDX */
    DW_SEC_KEYIDX,        /* u32 index into STRS */
    /* ---- policies ---- */
    DW_SEC_POLICIES,      /* 32 bytes, see DW_AREC_POLICY; annotations are consecutive runs
                             of ANNOTS in policy order (annot_first is the running sum) */
    DW_SEC_ANNOTS,        /* { u32 key, u32 value } strtab indices */
    DW_SEC_META,          /* exactly one META record (DW_AREC_META) */
    /* ---- decision index ---- */
    DW_SEC_IXKEYS,        /* { u8 kind, u8 var, u16 pad, u32 type (STRS), u32 id (STRS),
                             u32 action type (STRS), u32 action id (STRS) (PAIR keys) }; deduplicated;
                             unused fields 0 */
    DW_SEC_INDEX,         /* { u32 key (IXKEYS), u32 policy }, in the compiler's order */
    /* ---- temporal leaves (vm/temporal.h); strings are STRS indices, constants CONSTS ---- */
    DW_SEC_TFORMULAS,     /* 16 bytes: { u8 kind, u8 op, u16 var, u32 a, u32 b, u32 c } (dw_tf):
                             PRED: a = first pattern, b = n, c = TPREDS index;
                             FORMERLY, PREVIOUS, SINCE: c = TWINDOWS index; others: c = 0 */
    DW_SEC_TPREDS,        /* { u32 type_str, u32 id_str, u32 kind_str }; deduplicated */
    DW_SEC_TWINDOWS,      /* i64 seconds; deduplicated */
    DW_SEC_TPATTERNS,     /* { u32 path_str, u32 term } (dw_tpattern) */
    DW_SEC_TTERMS,        /* { u8 kind, u8 pad[3], u32 a, u32 n } (dw_tterm) */
    DW_SEC_TARGS,         /* u32 term index */
    DW_SEC_TAGGS,         /* { u32 body, u16 sum_var, u16 pad, u32 first_var, u32 nvars } (dw_tagg) */
    DW_SEC_AGGVARS,       /* u16 slot */
    DW_SEC_TLEAVES,       /* 24 bytes: { u32 root, u32 nvars, i64 reach, u64 identity } (dw_tleaf);
                             the owning policy is the TPOLICIES record whose range holds it.
                             max_reach is their largest reach. */
    DW_SEC_TPOLICIES,     /* 20 bytes, one per policy that owns leaves, ascending policy:
                             { u32 policy, u32 first_leaf, u32 nleaves, u32 scope_entry, u32 scope_end };
                             every other policy has nleaves = 0 */
    /* ---- serving (3.2) ---- */
    DW_SEC_SERVE,         /* bytes (count = size), opaque to the VM: the serving context (DW_SERVE_* below),
                             written by compiler/artifact_serve.c, decoded and checked by
                             runtime/artifact_serve.c; present when the set was compiled with a schema */
    /* ---- provider call sites (3.3, vm/provider.h); strings are STRS indices, constants CONSTS ---- */
    DW_SEC_PTYPES,        /* { u32 kind (dw_vkind), u32 elem, u32 first_field, u32 nfields } (dw_ptype) */
    DW_SEC_PFIELDS,       /* { u32 name, u32 type, u32 required } (dw_pfield) */
    DW_SEC_PARGS,         /* { u32 kind (dw_parg_kind), u32 a (CONST: constant; paths: first PSEGS), u32 n } */
    DW_SEC_PSEGS,         /* u32 string: the attribute path segments of PARGS */
    DW_SEC_PSTEPS,        /* { u32 name, u32 first_arg, u32 nargs, u32 out (PTYPES) } (dw_pstep) */
    DW_SEC_PCALLS,        /* { u32 policy, u32 first_step, u32 nsteps, u32 ordinal } (dw_pcall) */
    DW_SEC_PPOLICIES,     /* 20 bytes, one per policy that owns call sites, ascending policy:
                             { u32 policy, u32 first_pcall, u32 npcalls, u32 scope_entry, u32 scope_end };
                             a policy that owns leaves too has the same scope range in TPOLICIES */
    DW_SEC__COUNT
} dw_section_id;

/* POLICIES record (32 bytes):
 *   0 u8 effect (dw_effect_code), 1 u8 flags (DW_APOL_*), 2 u16 pad,
 *   4 u32 entry, 8 u32 end, 12 u32 max_stack,
 *   16 u32 id (strtab; ignored with DW_APOL_POSITIONAL_ID), 20 u32 nannots,
 *   24 u32 line, 28 u32 col */
#define DW_AREC_POLICY  32

/* The id is META.id_prefix followed by the policy's index in decimal
 * ("policy17"): positional ids are not stored. */
#define DW_APOL_POSITIONAL_ID 1u

/* META record (16 bytes):
 *   0 u32 max_stack,
 *   4 u32 id_prefix (strtab index of the positional id prefix, 0xFFFFFFFF if unused),
 *   8 u64 schema_digest (XXH3-64 of the schema text the set was compiled against, 0 if none) */
#define DW_AREC_META    16

/* SERVE section: a byte stream, every integer little-endian, every string
 * a u32 length and its bytes (no NUL among them).  The loader refuses a
 * count the remaining bytes cannot hold, an unknown kind, a nesting deeper
 * than DW_SCHEMA_MAX_DEPTH, entities, actions or record attributes out of
 * their sorted order (lang/schema.h), and trailing bytes.
 *   u64 events digest (XXH3-64 of the event schema's text: the durable
 *       history's schema id, runtime/histlog.h)
 *   u64 max_window seconds, u8 has_max_window
 *   u32 n, n strings: the decision kinds
 *   u32 n, n strings: the key pins' field paths (§8.9)
 *   u32 n entities:  string name, u32 m + m strings (memberOf),
 *                    u8 flags (DW_SERVE_ENUM, DW_SERVE_TAGS), type shape,
 *                    [type tags], u32 k + k strings (enum ids)
 *   u32 n actions:   string type, string id, u32 m + m (string type, string id)
 *                    parents, u8 has_applies_to, u32 p + p strings (principal
 *                    types), u32 r + r strings (resource types), type context
 *   type:            u8 kind (dw_type_kind); ENTITY: string name; SET: type
 *                    elem; RECORD: u8 additional_attrs, u32 n attributes,
 *                    each string name, u8 required, type */
#define DW_SERVE_ENUM 1u
#define DW_SERVE_TAGS 2u

#define DW_AREC_TF      16
#define DW_AREC_TTERM   12
#define DW_AREC_TAGG    16
#define DW_AREC_TLEAF   24
#define DW_AREC_TPOL    20

#endif
