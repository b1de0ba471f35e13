/* bench_engine.h - `dwc bench --engine`: Box JSON events decided through the
 * stateful engine (runtime/dogwood.h), one call per timed decision. */
#ifndef DW_BENCH_ENGINE_H
#define DW_BENCH_ENGINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dw_bench_engine dw_bench_engine;
typedef struct dw_bench_engine_outcome { bool decided, allow; } dw_bench_engine_outcome;

/* An in-memory engine (no log) on the policy and schema, deciding the
 * events (not copied: they must outlive it) that it does not refuse (a gate
 * failure, a malformed line: each is tried once and left out).  NULL with a
 * message in err, also when it refuses every event. */
dw_bench_engine *dw_bench_engine_open(const char *policy, const char *schema, const char *const *events,
                                      const size_t *lens, size_t nevents, char *err, size_t errcap);
/* Events taken, and those left out (*first: why the first was). */
size_t dw_bench_engine_events(const dw_bench_engine *b);
size_t dw_bench_engine_refused(const dw_bench_engine *b, const char **first);
/* Taken event i through dw_engine_decide_json with the clock's time (or the
 * event's "time"), as a Box gateway calls it: 0, or -1 when the engine
 * failed (an internal fault).  A deny of a well-formed event is 0. */
int dw_bench_engine_decide(dw_bench_engine *b, size_t i, dw_bench_engine_outcome *o);
/* Policies the engine's Cedar decisions evaluated so far. */
uint64_t dw_bench_engine_evaluated(dw_bench_engine *b);
uint32_t dw_bench_engine_history(dw_bench_engine *b);
void dw_bench_engine_close(dw_bench_engine *b);

#endif
