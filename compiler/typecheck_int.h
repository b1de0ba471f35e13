/* typecheck_int.h - what the pieces of Cedar's strict validation share (typecheck.c, typecheck_expr.c, typecheck_names.c): the types, capabilities, the checker's state, reporting; internal, not part of the library's API. */
#ifndef DW_TYPECHECK_INT_H
#define DW_TYPECHECK_INT_H
#include "typecheck.h"
#include "provcheck.h"
#include <setjmp.h>

/* ---- types ----
 * Types are dw_type nodes: the schema's own, or built in the check arena.
 * The singleton Booleans True and False are two static nodes recognised by
 * address; any other Bool node is Cedar's anyBool.  A NULL type means "ill
 * typed, already reported" and silences every enclosing check.  Defined once
 * (typecheck.c): every piece must see the same addresses. */
extern const dw_type dw_tc_t_bool, dw_tc_t_true, dw_tc_t_false, dw_tc_t_long, dw_tc_t_string, dw_tc_t_decimal, dw_tc_t_ipaddr, dw_tc_t_datetime, dw_tc_t_duration;

static inline bool is_bool(const dw_type *t) { return t && t->kind == DW_T_BOOL; }
static inline const dw_type *bool_of(bool b) { return b ? &dw_tc_t_true : &dw_tc_t_false; }

/* ---- capabilities (§5.4) ----
 * (e, attr) or (e, tag expression); e is compared structurally. */
typedef struct tc_cap { const dw_expr *e; const dw_expr *tag; dw_str attr; } tc_cap;
typedef struct tc_caps { const tc_cap *v; size_t n; } tc_caps;
typedef struct tc_res { const dw_type *t; tc_caps c; } tc_res;
static const tc_caps NOCAPS = { NULL, 0 };

typedef struct tc_diag { dw_severity sev; dw_loc loc; char *msg; const char *hint; size_t seq; } tc_diag;

typedef struct tc {
    dw_arena a;
    jmp_buf oom;                /* allocation failure unwinds to dw_validate */
    const dw_schema *s;
    const dw_source *src;
    size_t nent, nact;
    uint8_t *ent_anc;           /* [i*nent+j]: entity type j is a transitive ancestor of i */
    uint8_t *act_anc;           /* [i*nact+j]: action j is a transitive ancestor (group) of i */
    /* current policy */
    const dw_policy *p;
    char *pid;
    tc_diag *dv; size_t dn, dcap;
    size_t nerr;
    /* current environment */
    const dw_action_decl *act;
    size_t act_idx;
    const dw_type *ptype, *rtype, *atype, *ctxtype;
    dw_validate_result res;
    const dw_providers *providers;   /* declarations (NULL: the built-ins), compiler/provcheck.h */
} tc;

/* Allocation failure unwinds to the pass entry (stdlib/arena.h). */
#define alloc(T, n) dw_arena_alloc_or_jump(&(T)->a, (n), &(T)->oom)
#define vfmt(T, f, ap) dw_arena_vprintf_or_jump(&(T)->a, &(T)->oom, (f), (ap))
#define fmt(T, ...) dw_arena_printf_or_jump(&(T)->a, &(T)->oom, __VA_ARGS__)

#define ERROR(T, loc, hint, ...) dw_tc_report((T), DW_SEV_ERROR, (loc), (hint), __VA_ARGS__)

static inline tc_res ok(const dw_type *t) { return (tc_res){ t, NOCAPS }; }
static inline tc_res ok_c(const dw_type *t, tc_caps c) { return (tc_res){ t, c }; }
static const tc_res BAD = { NULL, { NULL, 0 } };

/* typecheck.c: messages, reporting, schema lookups, least upper bound, capabilities */
const char *dw_tc_ty_str(tc *T, const dw_type *t);
const char *dw_tc_euid_str(tc *T, dw_str type, dw_str id);
const char *dw_tc_quoted(tc *T, dw_str s);
void dw_tc_report(tc *T, dw_severity sev, dw_loc loc, const char *hint, const char *f, ...)
    __attribute__((format(printf, 5, 6)));
long dw_tc_act_index(const tc *T, dw_str type, dw_str id);
bool dw_tc_is_action_type_name(dw_str n);
bool dw_tc_enum_id_ok(const dw_entity_decl *d, dw_str id);
bool dw_tc_ent_desc(const tc *T, dw_str a, dw_str b);
bool dw_tc_act_desc(const tc *T, long i, dw_str type, dw_str id);
const dw_type *dw_tc_entity_ty(tc *T, dw_str name);
const dw_attr_decl *dw_tc_find_attr(const dw_type *rec, dw_str name);
const dw_type *dw_tc_lub(tc *T, const dw_type *a, const dw_type *b);
bool dw_tc_caps_has(tc_caps c, const dw_expr *e, dw_str attr, const dw_expr *tag);
tc_caps dw_tc_caps_one(tc *T, const dw_expr *e, dw_str attr, const dw_expr *tag);
tc_caps dw_tc_caps_union(tc *T, tc_caps a, tc_caps b);
tc_caps dw_tc_caps_inter(tc *T, tc_caps a, tc_caps b);

/* typecheck_expr.c: expression typing */
const dw_type *dw_tc_euid_type(tc *T, dw_str type, dw_str id);
tc_res dw_tc_type_bool_operand(tc *T, const dw_expr *e, tc_caps c, const char *hint);
const dw_type *dw_tc_bool_not(const dw_type *t);

/* typecheck_names.c: the name and action application passes */
bool dw_tc_close_enough(dw_str want, dw_str cand, size_t *best);
void dw_tc_names_expr(tc *T, const dw_expr *e);
void dw_tc_names_scope(tc *T, const dw_scope_con *s);
bool dw_tc_any_applicable_env(const tc *T, const dw_policy *p);

#endif
