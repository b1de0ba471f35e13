/* provider.h - information-provider call sites of a compiled program and
 * their evaluation (dogwood.md §13.3-§13.5).
 *
 * Each call site (a provider invocation with its output-method chain,
 * lowered to `context.providers.policy_<i>_p_<k>`, §14.3) is a run of steps:
 * step 0 the provider, then one per output method.  The bytecode reads the
 * site's value with `PROV k`; the engine evaluates the sites of every rule
 * whose scope admits the request before the Cedar decision (§15.1 step 4)
 * and denies when one fails.  Output types are kept so a result is checked
 * against its declaration (§13.4): a non-conforming result is an error. */
#ifndef DW_PROVIDER_H
#define DW_PROVIDER_H
#include <stdint.h>
#include "value.h"
#include "store.h"

/* A declared type, flattened: a set's element and a record's fields come
 * before the type that uses them (the verifier checks it, so checking a
 * value against a type terminates).  kind: DW_V_BOOL, LONG, STRING, DECIMAL,
 * SET (elem) or RECORD (fields[first_field ..+nfields], sorted by name). */
typedef struct dw_ptype { uint8_t kind; uint32_t elem; uint32_t first_field, nfields; } dw_ptype;
typedef struct dw_pfield { uint32_t name; uint32_t type; uint8_t required; } dw_pfield;   /* name: strs[] */

typedef enum dw_parg_kind {
    DW_PARG_CONST = 0,       /* a: consts[] index (a literal, §13.3) */
    DW_PARG_CONTEXT = 1,     /* context.<segs> */
    DW_PARG_PRINCIPAL = 2,   /* principal[.<segs>] */
    DW_PARG_RESOURCE = 3,    /* resource[.<segs>] */
} dw_parg_kind;
typedef struct dw_parg { uint8_t kind; uint32_t a, n; } dw_parg;    /* paths: segs[a ..+n) (strs[] indices) */

typedef struct dw_pstep {
    uint32_t name;           /* strs[]: the provider ("Ns::Fn") for step 0, else the method name */
    uint32_t first_arg, nargs;
    uint32_t out;            /* types[]: the step's declared output type */
} dw_pstep;

/* ordinal: k of the hoisted name context.providers.policy_<i>_p_<k> (§14.3; shared with the rule's
 * temporal leaves, so not the site's index among the rule's calls) */
typedef struct dw_pcall { uint32_t policy, first_step, nsteps, ordinal; } dw_pcall;

typedef struct dw_provider_tables {
    dw_ptype *types; uint32_t ntypes;
    dw_pfield *fields; uint32_t nfields;
    dw_parg *args; uint32_t nargs;
    uint32_t *segs; uint32_t nsegs;
    dw_pstep *steps; uint32_t nsteps;
    dw_pcall *calls; uint32_t ncalls;    /* ascending policy; a policy's calls are its range */
} dw_provider_tables;

/* Host callbacks (the engine's registry): for provider `name` (step 0) or
 * output method "Ns::Fn.m" (args[0] the previous step's value), 1 with
 * *out set (in arena a), 0 when nothing is registered under the name, -1
 * with a message in err. */
typedef int (*dw_provider_host_fn)(void *ctx, const char *name, size_t nlen, const dw_value *args, uint32_t nargs,
                                   dw_arena *a, dw_value *out, char *err, size_t errcap);

/* The built-in providers (§13.5) by name: 1 evaluated (*out), 0 no such
 * built-in, -1 error (message in err).  Null text is "". */
int dw_provider_builtin(const char *name, size_t nlen, const dw_value *args, uint32_t nargs, dw_arena *a,
                        dw_value *out, char *err, size_t errcap);
/* Is name a built-in provider? */
bool dw_provider_is_builtin(const char *name, size_t nlen);

struct dw_program;
struct dw_request;
/* Evaluate call site k for req: the arguments (§13.3), each step (a host
 * callback if one is registered, else a built-in, else an error), the
 * result checked and coerced against the declared type (a Null where a
 * String is declared becomes "", §20 Q15; a String where a decimal is
 * declared is parsed).  0 with *out in scratch, or -1 with a message. */
int dw_provider_eval(const struct dw_program *p, uint32_t k, const struct dw_request *req, const dw_store *store,
                     dw_arena *scratch, dw_provider_host_fn host, void *host_ctx, dw_value *out, char *err,
                     size_t errcap);

/* The verifier's part (vm/verify.c): every
 * index of the tables in range, types before their users, each site owned by
 * the policy whose range holds it.  0, or -1 with a reason in msg. */
int dw_provider_verify(const struct dw_program *p, char *msg, size_t cap);
int dw_provider_verify_policy(const struct dw_program *p, uint32_t k, char *msg, size_t cap);

#endif
