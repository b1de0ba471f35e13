/* smt_int.h - what the pieces of the Z3 encoding share (smt.c, smt_expr.c, smt_model.c): the state, the symbolic value, the term macros; internal, not part of the library's API. */
#ifndef DW_SMT_INT_H
#define DW_SMT_INT_H
#include "smt.h"
#include "smt_worker.h"
#include <setjmp.h>

/* ------------------------------------------------------------------ state */

typedef struct sv sv;
typedef struct srec { size_t n; dw_str *k; sv *v; Z3_ast *has; } srec;
/* A symbolic value: its Cedar type, its term (records: their fields), and
 * the condition under which computing it raised an error. */
struct sv {
    const dw_type *t;
    Z3_ast v;
    Z3_ast err;
    srec *rec;                  /* RECORD */
    const dw_euid_lit *lit;     /* ENTITY: the uid when statically known (literals, the action) */
};

typedef struct lit_ent { char *type, *id; int64_t n; } lit_ent;
typedef struct ent_term { const char *type; Z3_ast id; } ent_term;
typedef struct leaf_t { unsigned tag, k; Z3_ast v; } leaf_t;
typedef struct ip_lit { dw_ipaddr ip; } ip_lit;

struct dw_smt {
    Z3_context c;
    const dw_schema *s;
    unsigned timeout_ms;
    dw_arena a;                 /* types of literal records/sets, names */
    jmp_buf fail;               /* encoding failure: unwinds to dw_smt_encode_policy */
    bool z3_error;
    Z3_sort bool_s, bv_s, str_s, int_s, opaque_s, re_s;
    Z3_ast re_alpha;            /* the alphabet free strings range over */
    bool alpha[256];
    /* literal entity ids: (type, id) -> number; enum ids are their index */
    lit_ent *lits; size_t nlits, caplits;
    uint32_t *lit_slots; size_t nslots;
    ip_lit *ips; size_t nips, capips;
    /* the environment */
    dw_smt_env env;
    Z3_solver sol;
    Z3_model model;
    sv principal, resource, context, action;
    ent_term *ents; size_t nents, capents;
    leaf_t *leaves; size_t nleaves, capleaves;
    Z3_ast *wf; size_t nwf, capwf, nwf_asserted;
    bool approx;                /* the current policy used an approximation */
    bool restrict_strings;      /* constrain free strings to the alphabet */
    Z3_model recent[8];         /* the last models of this environment (cheap refutations) */
    size_t nrecent;
    unsigned tag;
    unsigned leaf_k;
    dw_smt_stats st;
    dw_smt_worker wk;           /* queries run in a forked worker (smt_worker.h) */
    bool in_process;            /* DWC_SOLVER_INPROCESS: Z3_solver_check here (no isolation; measurements) */
    bool no_dec_ref;            /* DWC_Z3_NO_DEC_REF: never release a model or solver (reference-count debugging) */
    char why[256];              /* the reason of the last unknown answer */
    double deadline_ms, budget_s;   /* --budget (dw_smt_set_deadline; 0: none) */
};

static const dw_type TY_BOOL = { .kind = DW_T_BOOL };
static const dw_type TY_LONG = { .kind = DW_T_LONG };
static const dw_type TY_STRING = { .kind = DW_T_STRING };
static const dw_type TY_DECIMAL = { .kind = DW_T_DECIMAL };
static const dw_type TY_IPADDR = { .kind = DW_T_IPADDR };
static const dw_type TY_DATETIME = { .kind = DW_T_DATETIME };
static const dw_type TY_DURATION = { .kind = DW_T_DURATION };

#define C (x->c)
#define FAIL() longjmp(x->fail, 1)
#define AND(a, b) dw_smt_and(x, (a), (b))
#define OR(a, b) dw_smt_or(x, (a), (b))
#define NOT(a) dw_smt_not(x, (a))
#define TRUE_ Z3_mk_true(C)
#define FALSE_ Z3_mk_false(C)

/* smt.c: allocation, the schema, literal ids, free terms, the environment */
void *dw_smt_xalloc(dw_smt *x, size_t n);
void dw_smt_grow(dw_smt *x, void **v, size_t n, size_t *cap, size_t size);
bool dw_smt_is_true(dw_smt *x, Z3_ast a);
bool dw_smt_is_false(dw_smt *x, Z3_ast a);
bool dw_smt_is_action_type(dw_str n);
const dw_entity_decl *dw_smt_entity(dw_smt *x, dw_str name);
bool dw_smt_type_below(dw_smt *x, dw_str d, dw_str a, int depth);
bool dw_smt_action_below(dw_smt *x, const dw_euid_lit *d, const dw_euid_lit *g, int depth);
int64_t dw_smt_lit_number(dw_smt *x, dw_str type, dw_str id);
const char *dw_smt_lit_name(dw_smt *x, const char *type, int64_t n);
Z3_sort dw_smt_sort_of(dw_smt *x, const dw_type *t);
bool dw_smt_opaque_set(const dw_type *t);
Z3_ast dw_smt_app(dw_smt *x, const char *name, Z3_sort range, unsigned n, const Z3_ast *args);
void dw_smt_note_entity(dw_smt *x, const char *type, Z3_ast id);
const char *dw_smt_tname(dw_smt *x, dw_str s);
sv dw_smt_mk_free(dw_smt *x, const dw_type *t, const char *name, unsigned n, const Z3_ast *args);
sv dw_smt_approx(dw_smt *x, const dw_expr *e, const dw_type *t, Z3_ast base_err, bool can_err);
sv dw_smt_entity_value(dw_smt *x, dw_str type, Z3_ast id, const dw_euid_lit *lit);
Z3_ast dw_smt_exists(dw_smt *x, dw_str type, Z3_ast id);

/* smt_expr.c: expressions */
Z3_ast dw_smt_in_entity(dw_smt *x, const sv *a, const sv *b);
sv dw_smt_enc_bool(dw_smt *x, const dw_expr *e);

#endif
