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

typedef enum dw_opcode {
#define OP(name, kind, pops, pushes) DW_OP_##name,
#include "opcode_list.h"
#undef OP
    DW_OP__COUNT
} dw_opcode;

typedef enum dw_operand_kind {
    DW_OPK_NONE, DW_OPK_K, DW_OPK_VAR, DW_OPK_JUMP, DW_OPK_JUMPK,
    DW_OPK_STR, DW_OPK_PAT, DW_OPK_COUNT, DW_OPK_KEYS, DW_OPK_CALL,
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

typedef enum dw_effect_code { DW_EFFECT_PERMIT = 0, DW_EFFECT_FORBID = 1 } dw_effect_code;

typedef struct dw_annot { dw_bytes key, value; } dw_annot;

typedef struct dw_policy_code {
    uint8_t effect;          /* dw_effect_code */
    uint32_t entry, end;     /* code range [entry, end) */
    uint32_t max_stack;      /* computed by the compiler, checked by the verifier */
    dw_bytes id;             /* "policy0", ... (positional unless named by the caller) */
    dw_annot *annots; uint32_t nannots;
    uint32_t src_line, src_col;   /* where the policy starts, for reports */
} dw_policy_code;

typedef struct dw_keylist { uint32_t first, n; } dw_keylist;   /* into keyidx[] -> strs[] */

typedef struct dw_program {
    dw_arena arena;          /* owns everything below */
    uint32_t *code;   uint32_t ncode;
    dw_value *consts; uint32_t nconsts;
    dw_bytes *strs;   uint32_t nstrs;
    dw_like_pattern *pats; uint32_t npats;
    dw_keylist *keylists; uint32_t nkeylists;
    uint32_t *keyidx; uint32_t nkeyidx;
    dw_policy_code *policies; uint32_t npolicies;
    uint32_t max_stack;      /* over all policies */
} dw_program;

void dw_program_free(dw_program *p);   /* frees the arena and p itself (heap-allocated) */
/* Print the bytecode readably (`dwc disasm`). */
void dw_program_disasm(const dw_program *p, FILE *out);

#endif
