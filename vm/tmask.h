/* tmask.h - binding masks of temporal formulas (vm/tmask.c), for teval.c:
 * dw_teval_masks (teval.h) computes every formula's once per program;
 * dw_tmask_formula computes one lazily into m ([2f] binds, [2f+1] mentions)
 * and st (per formula: 0 unknown, 1 in progress, 2 done).  -1: malformed. */
#ifndef DW_TMASK_H
#define DW_TMASK_H
#include "temporal.h"

int dw_tmask_formula(const dw_temporal_tables *t, uint64_t *m, uint8_t *st, uint32_t fi, uint64_t *bind, uint64_t *men);

#endif
