/* monitor.h - incremental monitors for the temporal idioms Box uses
 * (dogwood.md §8.8, box.md §13): a decision costs the same whether the
 * window holds 10 events or 1,000,000.
 *
 * dw_monitors_new classifies every leaf of a program.  A leaf of one of the
 * shapes below gets a monitor; any other leaf keeps using dw_teval_leaf.
 * P, Q are predicates whose field patterns are constants, wildcards or
 * request-anchored terms (context.*, principal…, resource…, arrays of
 * these; pins included), and for `sum` exactly one pattern is the summed
 * variable:
 *
 *   FORMERLY   formerly within W P                      (also `unless temporal {…}`)
 *   COUNT      exists (n). ((count for (t). where (formerly within W (P && tp(t)))) == n && n <op> K)
 *              and the bare form (count …) <op> K  (K a constant or anchored term, either side)
 *   SUM        the same with sum b for (b: Long), (t: Timepoint). where (formerly within W (P{…, f: b} && tp(t)))
 *   SINCE_NEG  !Q since within W P
 *   PREVIOUS   previous within W P
 *
 * State (updated by dw_monitors_observe, which feeds an event only to the
 * monitors whose predicates name its identity (a hash dispatch) plus the
 * `previous` ones, and expires what it fed; dw_monitors_eval expires the
 * leaf it decides first; so memory follows the window):
 *   FORMERLY   per tuple of (partition key, values of P's anchored fields):
 *              the latest matching timestamp (hash map + LRU list by time);
 *   COUNT/SUM  per tuple: count and exact (128-bit) running total, with one
 *              global FIFO of (ts, tuple, amount) that expires from the front;
 *   SINCE_NEG  per tuple: the latest P and the latest Q (sequence number and
 *              timestamp); holds iff the latest P is in the window and no Q
 *              came after it (a P that is also a Q still anchors);
 *   PREVIOUS   per partition key: the last two events' match result,
 *              timestamp and anchored-field tuple.
 *
 * Exactness.  The monitors rely on non-decreasing timestamps (the runtime's
 * are strictly increasing; replay may repeat them).  The first regression
 * (§20 Q17) disables every monitor until dw_monitors_reset, and so does an
 * allocation failure or a value the encoder does not know: dw_monitors_eval
 * then answers DW_MON_FALLBACK and the caller evaluates with dw_teval_leaf.
 *
 * Key-local semantics (§8.9): with dw_monitors_set_partition, state is kept
 * per partition key (the tuple of those top-level logged fields of each
 * event, an absent field being a distinct "none"), which equals evaluating
 * over the engine's filtered view. */
#ifndef DW_MONITOR_H
#define DW_MONITOR_H
#include <stdbool.h>
#include <stdint.h>
#include "program.h"
#include "temporal.h"

typedef enum dw_monitor_kind {
    DW_MON_KIND_NONE = 0,     /* not incremental: use dw_teval_leaf */
    DW_MON_KIND_FORMERLY,
    DW_MON_KIND_COUNT,
    DW_MON_KIND_SUM,
    DW_MON_KIND_SINCE_NEG,
    DW_MON_KIND_PREVIOUS,
    DW_MON_KIND__COUNT
} dw_monitor_kind;

/* dw_monitors_eval's answer when the leaf has no monitor or the monitors are
 * disabled: evaluate it with dw_teval_leaf. */
#define DW_MON_FALLBACK 1

typedef struct dw_monitors dw_monitors;

/* Classify every leaf of p.  ticks_per_second scales the windows (> 0).
 * NULL on allocation failure. */
dw_monitors *dw_monitors_new(const dw_program *p, int64_t ticks_per_second);

/* Key-local semantics: partition state by these top-level logged fields.
 * Call before the first observe.  0, or -1 (OOM). */
int dw_monitors_set_partition(dw_monitors *m, const dw_str *paths, uint32_t n);

/* A leaf's install position (box.md §7: an edited formula starts empty):
 * observe ignores events with ts < since for that leaf (INT64_MIN, the
 * default: every event).  Set before feeding the events it concerns. */
void dw_monitors_set_since(dw_monitors *m, uint32_t leaf, int64_t since);

/* dw_monitor_kind of a leaf (DW_MON_KIND_NONE if out of range), its name
 * ("formerly", "count", …, "teval"), and how many leaves are incremental. */
int dw_monitors_leaf_kind(const dw_monitors *m, uint32_t leaf);
const char *dw_monitors_kind_name(int kind);
uint32_t dw_monitors_count(const dw_monitors *m);

/* Feed an appended event (every event, decisions included, before the
 * decision of that event is evaluated).  0, or -1 when the monitors had to be
 * disabled (allocation failure, unknown value kind): that is not an error of
 * the decision, later evals answer DW_MON_FALLBACK. */
int dw_monitors_observe(dw_monitors *m, const dw_program *p, const dw_event *ev);
/* The same with ev's identity hash given (vm/ident_hash.h's dw_ident_hash, as the retention set's lookup made it). */
int dw_monitors_observe_hashed(dw_monitors *m, const dw_event *ev, uint64_t ihash);

/* Decide leaf at the decision event `current` (the last observed event).
 * 0 with *holds set; DW_MON_FALLBACK (not an incremental leaf, monitors
 * disabled, or `current` is not the last observed event); -1 on malformed
 * input. */
int dw_monitors_eval(dw_monitors *m, const dw_program *p, uint32_t leaf, const dw_tanchor *anchor,
                     const dw_event *current, bool *holds);

/* Whether evals can currently answer (false after a timestamp regression or
 * an allocation failure, until reset). */
bool dw_monitors_active(const dw_monitors *m);

/* Forget all history (the engine's history was reset); re-enables them. */
void dw_monitors_reset(dw_monitors *m);

/* Bytes of state held (for tests and reports). */
size_t dw_monitors_memory(const dw_monitors *m);

/* Hash-chain links visited by lookups so far (tests: a hash flood must not
 * make them grow faster than the lookups). */
uint64_t dw_monitors_probes(const dw_monitors *m);

/* Take the per-process seed of the monitors' hash (getrandom) now.  The
 * engine calls it at open, before dwd confines itself (seccomp refuses
 * getrandom); dw_monitors_new calls it too.  Idempotent, thread-safe. */
void dw_monitors_seed(void);

void dw_monitors_free(dw_monitors *m);

#endif
