/* tprint.h - a temporal leaf's formula as text, from the tables the VM runs
 * (vm/temporal.h), for `dwc disasm` and `dwc explain`: what is evaluated,
 * not what the source said.  Variables print by their source names when the
 * program was compiled from source (dw_program.leaf_var_names), else slot k
 * as `vk` (an artifact). */
#ifndef DW_TPRINT_H
#define DW_TPRINT_H
#include <stdio.h>
#include "program.h"

void dw_tleaf_print(const dw_program *p, uint32_t leaf, FILE *out);
/* one aggregate (taggs[agg]): `count for (v0). where (…)` / `sum v1 for (…)…` */
void dw_tagg_print(const dw_program *p, uint32_t agg, FILE *out);
/* slot `slot` of leaf `leaf`: its name, else vN */
void dw_tslot_print(const dw_program *p, uint32_t leaf, uint32_t slot, FILE *out);
/* a window of w seconds: 10m, 1h, 90s */
void dw_twindow_print(int64_t w, FILE *out);

#endif
