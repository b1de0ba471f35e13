#include "program.h"
#include "tprint.h"
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "../stdlib/cedar_quote.h"

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

const char dw_isa_text[] =
#define OP(name, kind, pops, pushes) "op " #name " " #kind " " #pops " " #pushes "\n"
#include "opcode_list.h"
#undef OP
#define FN(id, name, arity, is_method) "fn " #id " " name " " #arity " " #is_method "\n"
#include "extfn_list.h"
#undef FN
    ;

uint64_t dw_isa_digest_of(const char *text, size_t len) { return XXH3_64bits(text, len); }

uint64_t dw_isa_digest(void) { return dw_isa_digest_of(dw_isa_text, sizeof dw_isa_text - 1); }

int dw_extfn_lookup(const char *name, size_t len, int is_method)
{
    for (int i = 0; i < DW_FN__COUNT; i++)
        if (dw_fninfo_table[i].is_method == is_method && strlen(dw_fninfo_table[i].name) == len &&
            memcmp(dw_fninfo_table[i].name, name, len) == 0)
            return i;
    return -1;
}

int dw_program_hash_strs(dw_program *p)
{
    p->str_hash = p->nstrs ? dw_arena_alloc(&p->arena, p->nstrs * sizeof *p->str_hash) : NULL;
    if (p->nstrs && !p->str_hash) return -1;
    for (uint32_t i = 0; i < p->nstrs; i++) p->str_hash[i] = dw_key_hash(p->strs[i].s, p->strs[i].len);
    return 0;
}

/* The canonical pointer for u (u itself the first time it is seen). */
static const dw_uid *intern_add(dw_program *p, const dw_uid *u)
{
    uint32_t j = (uint32_t)u->hash & (p->nuid_slots - 1);
    while (p->uid_slots[j]) {
        if (dw_uid_eq(p->uid_slots[j], u)) return p->uid_slots[j];
        j = (j + 1) & (p->nuid_slots - 1);
    }
    p->uid_slots[j] = u;
    return u;
}

int dw_program_intern_uids(dw_program *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nconsts; i++) {
        const dw_value *v = &p->consts[i];
        if (v->kind == DW_V_ENTITY) n++;
        else if (v->kind == DW_V_SET) n += v->n;
    }
    uint32_t ns = 16;
    while (ns < n * 2) ns *= 2;
    p->uid_slots = dw_arena_alloc(&p->arena, ns * sizeof *p->uid_slots);
    if (!p->uid_slots) return -1;
    p->nuid_slots = ns;
    /* every constant then points at its canonical uid, so equal uids compare
     * as equal pointers (requests bound to the program share them too) */
    for (uint32_t i = 0; i < p->nconsts; i++) {
        dw_value *v = &p->consts[i];
        if (v->kind == DW_V_ENTITY) v->u.uid = intern_add(p, v->u.uid);
        else if (v->kind == DW_V_SET) {
            dw_value *el = (dw_value *)v->u.elems;
            for (uint32_t k = 0; k < v->n; k++)
                if (el[k].kind == DW_V_ENTITY) el[k].u.uid = intern_add(p, el[k].u.uid);
        }
    }
    return 0;
}

const dw_uid *dw_program_find_uid(const dw_program *p, const dw_uid *u)
{
    if (!p->nuid_slots) return NULL;
    uint32_t j = (uint32_t)u->hash & (p->nuid_slots - 1);
    while (p->uid_slots[j]) {
        if (dw_uid_eq(p->uid_slots[j], u)) return p->uid_slots[j];
        j = (j + 1) & (p->nuid_slots - 1);
    }
    return NULL;
}

static _Atomic long live_programs;

long dw_program_live(void) { return live_programs; }

int dw_program_prepare(dw_program *p)
{
    if (!p->live) { p->live = true; live_programs++; }
    p->serial = dw_serial_next();
    if (dw_program_hash_strs(p) || dw_index_build(p) || dw_guards_build(p) || dw_program_intern_uids(p) ||
        dw_eval_plan_build(p))
        return -1;
    dw_index_link_uids(p);
    return 0;
}

void dw_program_free(dw_program *p)
{
    if (!p) return;
    if (p->live) live_programs--;
    dw_arena_free(&p->arena);
    free(p);
}

static void print_bytes(FILE *out, const dw_str *b)
{
    dw_cedar_quote_file(out, b->s, b->len);
}

/* A VAR's plan (vm/eval_plan.c), after its instruction: what runs in one step there. */
static void print_succ(FILE *out, const dw_program *p, uint32_t s)
{
    const char *b = DW_VS_BOOL(s) ? "true" : "false";
    switch ((dw_var_succ)DW_VS_KIND(s)) {
    case DW_VS_PLAN: fprintf(out, "plan %u", p->var_plans[DW_VS_X(s)].pc); break;
    case DW_VS_RET: fprintf(out, "return %s", b); break;
    case DW_VS_PUSH: fprintf(out, "push %s, %u", b, DW_VS_X(s)); break;
    case DW_VS_AT: fprintf(out, "%u", DW_VS_X(s)); break;
    }
}

static void print_plan(FILE *out, const dw_program *p, const dw_var_plan *d)
{
    static const char *const test[] = { "path", "== K", "like", "has" };
    fprintf(out, "    ; plan: %u name(s)", d->nattr);
    if (d->slot) fprintf(out, ", memo %u", d->slot - 1);
    if (d->test == DW_VT_NONE) { fprintf(out, ", then %u", d->next); return; }
    fprintf(out, ", %s %u; false -> ", test[d->test], d->arg);
    print_succ(out, p, d->succ[0]);
    fputs(", true -> ", out);
    print_succ(out, p, d->succ[1]);
}

void dw_program_disasm(const dw_program *p, FILE *out)
{
    for (uint32_t k = 0; k < p->npolicies; k++) {
        const dw_policy_code *pol = &p->policies[k];
        fprintf(out, "%.*s", (int)pol->id.len, pol->id.s);
        for (uint32_t a = 0; a < pol->nannots; a++)      /* the name users know it by */
            if (pol->annots[a].key.len == 2 && !memcmp(pol->annots[a].key.s, "id", 2))
                fprintf(out, " @id(\"%.*s\")", (int)pol->annots[a].value.len, pol->annots[a].value.s);
        fprintf(out, ": %s  (line %u, max stack %u)\n", pol->effect == DW_EFFECT_FORBID ? "forbid" : "permit",
                pol->src_line, pol->max_stack);
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
            case DW_OPK_LEAF: fprintf(out, "temporal leaf %u: ", A); dw_tleaf_print(p, A, out); break;
            case DW_OPK_PROV:
                fprintf(out, "provider call %u", A);
                if (A < p->provider.ncalls) {
                    const dw_pcall *pc = &p->provider.calls[A];
                    const dw_str *n = &p->strs[p->provider.steps[pc->first_step].name];
                    fprintf(out, ": %.*s with %u output method(s), context.providers.policy_%u_p_%u", (int)n->len, n->s,
                            pc->nsteps - 1, pc->policy, pc->ordinal);
                }
                break;
            case DW_OPK_PATH:
                if (A < p->nkeylists) {
                    const dw_keylist *kl = &p->keylists[A];
                    for (uint32_t i = 0; i < kl->n; i++) { if (i) fputc('.', out); print_bytes(out, &p->strs[p->keyidx[kl->first + i]]); }
                }
                break;
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
            if (p->var_plan && p->var_plan[pc]) print_plan(out, p, &p->var_plans[p->var_plan[pc] - 1]);
            fputc('\n', out);
        }
    }
}
