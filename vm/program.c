#include "program.h"
#include <stdlib.h>
#include <string.h>

const dw_opinfo dw_opinfo_table[DW_OP__COUNT] = {
#define OP(name, kind, pops, pushes) { #name, DW_OPK_##kind, pops, pushes },
#include "opcode_list.h"
#undef OP
};

const dw_fninfo dw_fninfo_table[DW_FN__COUNT] = {
#define FN(id, name, arity, is_method) { name, arity, is_method },
#include "extfn_list.h"
#undef FN
};

int dw_extfn_lookup(const char *name, size_t len, int is_method)
{
    for (int i = 0; i < DW_FN__COUNT; i++)
        if (dw_fninfo_table[i].is_method == is_method && strlen(dw_fninfo_table[i].name) == len &&
            memcmp(dw_fninfo_table[i].name, name, len) == 0)
            return i;
    return -1;
}

void dw_program_free(dw_program *p)
{
    if (!p) return;
    dw_arena_free(&p->arena);
    free(p);
}

static void print_bytes(FILE *out, const dw_bytes *b)
{
    fputc('"', out);
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = (unsigned char)b->s[i];
        if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f) fprintf(out, "\\u{%x}", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

void dw_program_disasm(const dw_program *p, FILE *out)
{
    for (uint32_t k = 0; k < p->npolicies; k++) {
        const dw_policy_code *pol = &p->policies[k];
        fprintf(out, "%.*s: %s  (line %u, max stack %u)\n", (int)pol->id.len, pol->id.s,
                pol->effect == DW_EFFECT_FORBID ? "forbid" : "permit", pol->src_line, pol->max_stack);
        for (uint32_t pc = pol->entry; pc < pol->end; pc++) {
            uint32_t ins = p->code[pc];
            dw_opcode op = DW_INS_OP(ins);
            uint32_t A = DW_INS_A(ins);
            if ((unsigned)op >= DW_OP__COUNT) { fprintf(out, "  %5u  ??? %08x\n", pc, ins); continue; }
            const dw_opinfo *oi = &dw_opinfo_table[op];
            fprintf(out, "  %5u  %-12s", pc, oi->name);
            switch (oi->kind) {
            case DW_OPK_NONE: break;
            case DW_OPK_K: fprintf(out, "K%-5u ", A); if (A < p->nconsts) dw_value_print(out, &p->consts[A]); break;
            case DW_OPK_VAR: fputs(A == 0 ? "principal" : A == 1 ? "action" : A == 2 ? "resource" : "context", out); break;
            case DW_OPK_JUMP: case DW_OPK_JUMPK: fprintf(out, "-> %u", A); break;
            case DW_OPK_STR: if (A < p->nstrs) print_bytes(out, &p->strs[A]); break;
            case DW_OPK_PAT:
                if (A < p->npats) {
                    const dw_like_pattern *pt = &p->pats[A];
                    for (size_t i = 0; i < pt->nseg; i++) { if (i) fputs(" * ", out); print_bytes(out, &pt->seg[i]); }
                }
                break;
            case DW_OPK_COUNT: fprintf(out, "%u", A); break;
            case DW_OPK_KEYS:
                if (A < p->nkeylists) {
                    const dw_keylist *kl = &p->keylists[A];
                    fputc('{', out);
                    for (uint32_t i = 0; i < kl->n; i++) { if (i) fputs(", ", out); print_bytes(out, &p->strs[p->keyidx[kl->first + i]]); }
                    fputc('}', out);
                }
                break;
            case DW_OPK_CALL:
                if (DW_CALL_FN(A) < DW_FN__COUNT) fprintf(out, "%s/%u", dw_fninfo_table[DW_CALL_FN(A)].name, DW_CALL_ARGC(A));
                break;
            }
            fputc('\n', out);
        }
    }
}
