/* program.h - a compiled policy set in memory: code, constant pools and
 * per-policy metadata.  The compiler builds one; the artifact loader
 * (issue: compiled artifact) maps one from a verified .dwb file.
 *
 * Instruction encoding (Lua-style): 32 bits, opcode in the low 8, operand A
 * in the high 24. */
#ifndef DW_PROGRAM_H
#define DW_PROGRAM_H
#include <stdint.h>
#include "value.h"
#include "temporal.h"
#include "provider.h"

typedef enum dw_opcode {
#define OP(name, kind, pops, pushes) DW_OP_##name,
#include "opcode_list.h"
#undef OP
    DW_OP__COUNT
} dw_opcode;

typedef enum dw_operand_kind {
    DW_OPK_NONE, DW_OPK_K, DW_OPK_VAR, DW_OPK_JUMP, DW_OPK_JUMPK,
    DW_OPK_STR, DW_OPK_PAT, DW_OPK_COUNT, DW_OPK_KEYS, DW_OPK_CALL, DW_OPK_LEAF, DW_OPK_PROV, DW_OPK_PATH,
} dw_operand_kind;

typedef enum dw_extfn {
#define FN(id, name, arity, is_method) DW_FN_##id,
#include "extfn_list.h"
#undef FN
    DW_FN__COUNT
} dw_extfn;

#define DW_INS(op, a)   ((uint32_t)(op) | ((uint32_t)(a) << 8))
#define DW_INS_OP(i)    ((dw_opcode)((i) & 0xFF))
#define DW_INS_A(i)     ((uint32_t)(i) >> 8)
#define DW_MAX_A        0xFFFFFFu
#define DW_CALL_A(fn, argc)  (((uint32_t)(fn) << 16) | (uint32_t)(argc))
#define DW_CALL_FN(a)   ((a) >> 16)
#define DW_CALL_ARGC(a) ((a) & 0xFFFF)

typedef struct dw_opinfo { const char *name; dw_operand_kind kind; int pops, pushes; } dw_opinfo;
typedef struct dw_fninfo { const char *name; int arity; int is_method; } dw_fninfo;
extern const dw_opinfo dw_opinfo_table[DW_OP__COUNT];
extern const dw_fninfo dw_fninfo_table[DW_FN__COUNT];
/* Find an extension function / method by name; -1 if none. */
int dw_extfn_lookup(const char *name, size_t len, int is_method);
/* The instruction set as text, generated from opcode_list.h and extfn_list.h
 * (one line per opcode: name, operand kind, pops, pushes; then one per CALL
 * function), in list order: what an opcode or function number in code means. */
extern const char dw_isa_text[];
/* XXH3-64 of an instruction-set text; every artifact header carries the
 * digest of dw_isa_text (dw_isa_digest) and the loader refuses another. */
uint64_t dw_isa_digest_of(const char *text, size_t len);
uint64_t dw_isa_digest(void);

typedef enum dw_effect_code { DW_EFFECT_PERMIT = 0, DW_EFFECT_FORBID = 1 } dw_effect_code;

typedef struct dw_annot { dw_str key, value; } dw_annot;

typedef struct dw_policy_code {
    uint8_t effect;          /* dw_effect_code */
    uint32_t entry, end;     /* code range [entry, end) */
    uint32_t max_stack;      /* computed by the compiler, checked by the verifier */
    dw_str id;             /* "policy0", ... (positional unless named by the caller) */
    dw_annot *annots; uint32_t nannots;
    uint32_t src_line, src_col;   /* where the policy starts, for reports */
    uint32_t first_leaf, nleaves; /* its temporal leaves: temporal.leaves[first_leaf ..) */
    uint32_t scope_entry, scope_end;  /* with leaves: code that tests the scope alone
                                         (leaves run for every rule whose scope admits
                                         the request, dogwood.md §15.1 and D3) */
    uint32_t first_pcall, npcalls;    /* its provider call sites: provider.calls[first_pcall ..);
                                         with some, scope_entry/scope_end are set too */
} dw_policy_code;

/* What a candidate of a decision needs before its plans, in one place (one
 * cache line holds three policies' where policies[] holds one, and a large
 * set's candidates are cold): [0] the policy's entry, [1] the pc after its
 * scope prefix (index.body[i], where an IMPLIED posting starts), each with
 * the plan of the VAR there (var_plan[pc]: index + 1, or 0), and its effect.
 * Read off policies[], index.body and var_plan by dw_eval_plan_build. */
typedef struct dw_policy_start { uint32_t pc[2], plan[2]; uint8_t effect; } dw_policy_start;

typedef struct dw_keylist { uint32_t first, n; } dw_keylist;   /* into keyidx[] -> strs[] */

/* ---- the decision index ----
 * Each policy is filed under the keys its scope can match: a concrete entity
 * of one scope variable (`principal == E`, `principal in E`, `action in [A, B]`
 * ...), an entity type (`resource is T`), or ALWAYS.  A request probes the
 * keys of its principal, action and resource and of their ancestors in the
 * store, so the candidates are exactly the policies whose scope can match.
 * A candidate runs its full code (scope included), unless the bucket that
 * found it was probed with the request's own uid (not an ancestor's) and that
 * key implies every scope test of the policy's code prefix (dw_index_build
 * reads them off the verified code); it then starts at index.body[policy],
 * just after those tests. */
typedef enum dw_index_kind {
    DW_IX_ALWAYS = 0,
    DW_IX_ENTITY = 1,        /* (var, E): var == E or var in E */
    DW_IX_TYPE = 2,          /* (var, T): var is T */
    DW_IX_PAIR = 3,          /* (var, A, E): action == A or in A, and var == E or in E */
} dw_index_kind;

/* A posting's low bit: the bucket's key, probed exactly, makes the policy's
 * scope prefix true (see dw_index_build). */
#define DW_IX_IMPLIED 1u
#define DW_IX_POLICY(posting) ((posting) >> 1)

typedef struct dw_index_entry {
    uint8_t kind;            /* dw_index_kind */
    uint8_t var;             /* 0 principal, 1 action, 2 resource */
    uint32_t type_str;       /* strs[] index of the entity type (ENTITY, TYPE) */
    uint32_t id_str;         /* strs[] index of the entity id (ENTITY, PAIR) */
    uint32_t act_type_str, act_id_str;   /* PAIR: the action uid */
    uint32_t policy;
} dw_index_entry;

/* A bucket's second level (vm/guard.c): policies filed by the literal their
 * first condition test compares one context field with. */
typedef struct dw_guard_key {
    uint64_t hash;
    uint8_t kind;            /* 1 exact string, 2 prefix (of a `like` pattern) */
    dw_str lit;
    uint32_t first, n;       /* run in dw_guard_table.policies, ascending */
} dw_guard_key;

typedef struct dw_guard_table {
    dw_str path[3]; uint32_t path_hash[3]; uint8_t npath;   /* context.path[0]... */
    uint32_t *policies;      /* the unguarded run [0, rest_n), then the key runs */
    uint32_t rest_n;
    dw_guard_key *keys; uint32_t nkeys;
    uint32_t *slots; uint32_t nslots;   /* open addressing: key index + 1 */
    uint32_t *lens; uint32_t nlens;     /* distinct prefix lengths, ascending */
} dw_guard_table;

/* What a probe reads first (hash .. guard) in the first of its two cache
 * lines (the array aligned to one): the names are read only when the
 * request's uid is not the program's own. */
typedef struct dw_index_bucket {
    uint64_t hash;
    uint8_t kind, var;
    uint32_t first, n;       /* run in dw_index.policies */
    const dw_uid *uid;       /* ENTITY: the program's interned uid of the key, or NULL
                                (a bound request's own uid then matches by pointer) */
    const dw_uid *auid;      /* PAIR: the same for the action, and uid for the entity */
    const dw_guard_table *guard;   /* NULL, or the run split by a condition guard */
    dw_str type, id;
    dw_str atype, aid;       /* PAIR: the action */
    uint8_t pad[16];         /* to 128 bytes */
} dw_index_bucket;
_Static_assert(sizeof(dw_index_bucket) == 128, "a bucket is two cache lines");

typedef struct dw_index {
    dw_index_bucket *buckets; uint32_t nbuckets;
    uint32_t *slots;         /* open addressing: bucket index + 1, 0 = empty */
    uint32_t nslots;         /* power of two */
    uint32_t *policies;      /* bucket runs, each ascending: policy << 1 | DW_IX_IMPLIED */
    uint32_t *body;          /* per policy: the pc after its scope prefix (entry when it has none) */
    uint32_t *self;          /* self[i] == i: a decision's one determining policy points here */
    uint32_t always_first, always_n;   /* the ALWAYS run */
    bool has_entity[3], has_type[3], has_pair[3];   /* which probes can find anything, per variable */
    uint8_t probe_vars;      /* bit v: has_entity[v] || has_type[v] */
    bool any_pair;
} dw_index;

/* What the interpreter does in one step at a VAR (vm/eval_plan.c): read the
 * path `VAR x; GETATTR ...` (nattr names), then apply the test after it and
 * go where the code would go with the test's Bool r: succ[r]. */
typedef enum dw_var_test { DW_VT_NONE, DW_VT_EQ, DW_VT_LIKE, DW_VT_HAS } dw_var_test;
/* A successor: kind in bits 29-30, a Bool in bit 28, a pc or plan index below. */
typedef enum dw_var_succ {
    DW_VS_PLAN = 0,          /* the plan at var_plans[index] (nothing pushed) */
    DW_VS_RET = 1,           /* the policy returns the Bool */
    DW_VS_PUSH = 2,          /* push the Bool, continue at pc */
    DW_VS_AT = 3,            /* continue at pc (nothing pushed) */
} dw_var_succ;
#define DW_VS(kind, b, x)  ((uint32_t)(kind) << 29 | (uint32_t)(b) << 28 | (uint32_t)(x))
#define DW_VS_KIND(s)      ((s) >> 29)
#define DW_VS_BOOL(s)      ((s) >> 28 & 1)
#define DW_VS_X(s)         ((s) & 0x0FFFFFFFu)
/* One cache line (64 bytes, the array aligned to it): a large set's plans
 * are cold, so what a test compares with sits in the line when it fits: a
 * literal of up to 16 bytes (ilit, lit pointing at it) or, for EQ, a copy of
 * the constant (konst), instead of wherever the constant is. */
typedef struct dw_var_plan {
    uint8_t test;            /* dw_var_test: NONE pushes the path's value and goes on at next */
    uint8_t slot;            /* path memo slot (its bit in dw_attr_memo.valid), or 0 */
    uint8_t nattr;           /* GETATTRs after the VAR */
    uint8_t var;             /* the VAR's operand */
    uint8_t form;            /* dw_var_form: how the interpreter applies the test */
    uint8_t rare;            /* MID: the offset of lit's rarest byte */
    uint32_t pc;             /* the VAR's */
    uint32_t arg;            /* EQ: the CONST's constant; LIKE: pattern; HAS: string */
    uint32_t next;           /* NONE: the pc after the GETATTRs */
    uint32_t succ[2];        /* test false, true: DW_VS(...) */
    uint32_t litlen;         /* EQ_STR, PREFIX, SUFFIX, MID: the literal (>= 1 byte) */
    const char *lit;         /* ilit when litlen <= 16 */
    const struct dw_plan_key *keys;   /* the path's nattr attribute names */
    union {
        char ilit[16];
        dw_value konst;      /* EQ: consts[arg] */
    } in;
} dw_var_plan;
_Static_assert(sizeof(dw_var_plan) == 64, "a plan is one cache line");
typedef struct dw_plan_key { const char *s; uint32_t len, hash; } dw_plan_key;   /* a name and its dw_key_hash */
/* A test's special cases, read off its constant or pattern once: a String
 * constant; `lit*`, `*lit`, `*lit*` (lit at most 16 bytes for MID). */
typedef enum dw_var_form { DW_VF_NONE, DW_VF_EQ, DW_VF_EQ_STR, DW_VF_LIKE, DW_VF_PREFIX, DW_VF_SUFFIX, DW_VF_MID, DW_VF_HAS } dw_var_form;

typedef struct dw_program {
    dw_arena arena;          /* owns everything below */
    uint32_t *code;   uint32_t ncode;
    dw_value *consts; uint32_t nconsts;
    dw_str *strs;   uint32_t nstrs;
    uint32_t *str_hash;      /* dw_key_hash of each strs[i], for attribute lookups */
    dw_like_pattern *pats; uint32_t npats;
    dw_keylist *keylists; uint32_t nkeylists;
    uint32_t *keyidx; uint32_t nkeyidx;
    dw_policy_code *policies; uint32_t npolicies;
    uint32_t max_stack;      /* over all policies */
    dw_index_entry *ixents; uint32_t nixents;   /* the index as compiled (serialised) */
    dw_index index;          /* the index as probed, built by dw_index_build */
    const dw_uid **uid_slots; uint32_t nuid_slots;   /* interned entity constants (power of two) */
    dw_temporal_tables temporal;   /* temporal leaves (vm/temporal.h) */
    dw_provider_tables provider;   /* provider call sites (vm/provider.h) */
    int64_t max_reach;             /* seconds of history any leaf can read */
    bool live;                     /* counted in dw_program_live (set by dw_program_prepare) */
    uint64_t serial;               /* dw_serial_next, taken by each dw_program_prepare */
    uint64_t schema_digest;        /* an artifact's: XXH3-64 of the action schema it was validated against, 0: none */
    bool box_profile;              /* passed the Box profile's load checks (DW_AF_BOX_PROFILE) */
    /* Where each policy's scope and conditions end in its code, recorded by
     * the compiler for `dwc explain` (runtime/engine_explain.c); not in artifacts
     * (NULL when loaded from one).  Policy i's marks are
     * cond_marks[cond_first[i] .. cond_first[i + 1]): the end of its scope
     * tests, then per condition its first instruction and the AND, NOT
     * (unless) or RET that follows its body. */
    uint32_t *cond_marks, *cond_first;
    /* Likewise: the source names of each temporal leaf's variable slots,
     * leaf_var_names[leaf_var_first[l] + slot] (NULL from an artifact, where
     * slot k prints as vk: vm/tprint.h). */
    dw_str *leaf_var_names;
    uint32_t *leaf_var_first;
    /* Read off the verified code by dw_program_prepare for the interpreter's
     * fast paths (vm/eval_plan.c, never in an artifact); NULL: none (a program
     * not prepared runs without them). */
    uint32_t *var_plan;      /* per pc: index + 1 into var_plans of the VAR's plan, or 0 */
    dw_var_plan *var_plans;
    dw_policy_start *starts; /* per policy (npolicies), or NULL */
    uint8_t *like_rare;      /* per pattern with two stars: its middle segment's rarest byte */
    const uint8_t *serve; uint32_t serve_len;   /* SERVE section bytes (in arena), opaque here:
                                                   runtime/artifact_serve.h decodes them */
} dw_program;

/* Intern every entity uid among the constants (sets included); requests bound
 * to the program reuse these pointers.  0 or -1 (OOM). */
int dw_program_intern_uids(dw_program *p);
const dw_uid *dw_program_find_uid(const dw_program *p, const dw_uid *u);

/* Fill str_hash (after strs is final).  0 or -1 (OOM).  dw_program_prepare
 * runs every load-time step (str_hash, index, interned uids). */
int dw_program_prepare(dw_program *p);
int dw_program_hash_strs(dw_program *p);
/* Build the probe table from ixents (in the program's arena).  0 or -1 (OOM). */
int dw_index_build(dw_program *p);
uint64_t dw_index_hash(uint8_t kind, uint8_t var, const char *type, size_t tlen, const char *id, size_t idlen);
/* A policy's scope prefix (vm/scope_prefix.c): the pc after it, and whether
 * bucket b, probed with the request's own uid, makes all of it true (and
 * all of its scope-only code, when it has some). */
uint32_t dw_scope_prefix_end(const dw_program *p, uint32_t policy);
bool dw_scope_prefix_implied(const dw_program *p, uint32_t policy, const dw_index_bucket *b);
/* PAIR keys combine the two uid hashes (dw_uid_hash). */
uint64_t dw_index_pair_hash(uint8_t var, uint64_t action_uid_hash, uint64_t entity_uid_hash);
/* Point ENTITY buckets at the interned uids of their keys (after
 * dw_program_intern_uids). */
void dw_index_link_uids(dw_program *p);
/* Derive the condition guards of large buckets from the (verified) code.
 * Called by dw_program_prepare after dw_index_build.  0 or -1 (OOM). */
int dw_guards_build(dw_program *p);
/* The interpreter's load-time plans (var_plan, starts, like_rare).  0 or -1 (OOM). */
int dw_eval_plan_build(dw_program *p);
/* Print the index readably (`dwc disasm`). */
void dw_index_print(const dw_program *p, FILE *out);

void dw_program_free(dw_program *p);   /* frees the arena and p itself (heap-allocated) */
/* Prepared programs not yet freed, process-wide (a leak check for reloads). */
long dw_program_live(void);
/* Print the bytecode readably (`dwc disasm`). */
void dw_program_disasm(const dw_program *p, FILE *out);

#endif
