/* bench_engine.c - see bench_engine.h.  Every line goes through the public
 * entry point Box calls, so the figure is what a gateway pays per decision:
 * JSON parse, gate, history append with the engine's retention, temporal
 * leaves (monitors or teval) and the Cedar decision. */
#include "bench_engine.h"
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include "dogwood.h"
#include "../stdlib/hot.h"

struct dw_bench_engine {
    dw_engine *e;
    const char **events;     /* the events the engine takes (refused ones left out) */
    size_t *lens;
    bool *decision;          /* per event: a decision kind (else recorded, as a gateway records responses) */
    size_t n, refused;
    char first_refusal[300];
};

dw_bench_engine *dw_bench_engine_open(const char *policy, const char *schema, const char *const *events,
                                      const size_t *lens, size_t nevents, char *err, size_t errcap)
{
    dw_bench_engine *b = calloc(1, sizeof *b);
    if (!b) { snprintf(err, errcap, "out of memory"); return NULL; }
    dw_engine_config cfg = { .policy_path = policy, .schema_path = schema, .ticks_per_second = 1000000000 };
    if (!(b->e = dw_engine_open(&cfg, err, errcap))) { free(b); return NULL; }
    /* an event the engine refuses (a malformed line, a gate failure) would
     * time the refusal, not a decision: it is left out and counted, as the
     * VM bench leaves out a request it cannot build; the rest are sorted
     * into decisions and records */
    b->decision = calloc(nevents + 1, sizeof *b->decision);
    b->events = malloc((nevents + 1) * sizeof *b->events);
    b->lens = malloc((nevents + 1) * sizeof *b->lens);
    if (!b->decision || !b->events || !b->lens) {
        snprintf(err, errcap, "out of memory");
        dw_bench_engine_close(b);
        return NULL;
    }
    for (size_t i = 0; i < nevents; i++) {
        dw_verdict v;
        bool decision = false;
        if (dw_engine_observe_json(b->e, events[i], lens[i], DW_TS_NOW, DW_OBSERVE_RECORD, NULL, NULL, &v) != 1) {
            decision = true;
            if (dw_engine_observe_json(b->e, events[i], lens[i], DW_TS_NOW, DW_OBSERVE_DECIDE, NULL, NULL, &v) != 1) {
                if (!b->refused++) snprintf(b->first_refusal, sizeof b->first_refusal, "event %zu: %s", i + 1, v.message);
                continue;
            }
        }
        b->events[b->n] = events[i];
        b->lens[b->n] = lens[i];
        b->decision[b->n++] = decision;
    }
    if (!b->n) {
        snprintf(err, errcap, "the engine refuses every event (%s)", b->first_refusal);
        dw_bench_engine_close(b);
        return NULL;
    }
    dw_engine_reset_history(b->e);
    return b;
}

DW_HOT int dw_bench_engine_decide(dw_bench_engine *b, size_t i, dw_bench_engine_outcome *o)
{
    o->decided = b->decision[i];
    o->allow = false;
    if (!o->decided) return dw_engine_record_json(b->e, b->events[i], b->lens[i], DW_TS_NOW, NULL, 0) ? -1 : 0;
    dw_verdict v;
    dw_engine_decide_json(b->e, b->events[i], b->lens[i], DW_TS_NOW, &v);
    /* an internal fault without an erroring policy is the engine failing
     * (the gate passed at open), not Box's deny */
    if (v.cause == DW_CAUSE_INTERNAL_FAULT && v.nerrors == 0) return -1;
    o->allow = v.allow;
    return 0;
}

uint64_t dw_bench_engine_evaluated(dw_bench_engine *b)
{
    dw_engine_stats st;
    dw_engine_get_stats(b->e, &st);
    return st.policies_evaluated;
}

size_t dw_bench_engine_events(const dw_bench_engine *b) { return b->n; }
size_t dw_bench_engine_refused(const dw_bench_engine *b, const char **first)
{
    *first = b->first_refusal;
    return b->refused;
}

uint32_t dw_bench_engine_history(dw_bench_engine *b) { return dw_engine_history_length(b->e); }

void dw_bench_engine_close(dw_bench_engine *b)
{
    if (!b) return;
    dw_engine_close(b->e);
    free(b->decision);
    free(b->events);
    free(b->lens);
    free(b);
}
