/* tprint.h - a temporal leaf's formula as text, from the tables the VM runs
 * (vm/temporal.h), for `dwc disasm` and `dwc explain`: what is evaluated,
 * not what the source said.  Variables have no names in the tables: slot k
 * prints as `vk`. */
#ifndef DW_TPRINT_H
#define DW_TPRINT_H
#include <stdio.h>
#include "program.h"

void dw_tleaf_print(const dw_program *p, uint32_t leaf, FILE *out);
/* one aggregate (taggs[agg]): `count for (v0). where (…)` / `sum v1 for (…)…` */
void dw_tagg_print(const dw_program *p, uint32_t agg, FILE *out);
/* a window of w seconds: 10m, 1h, 90s */
void dw_twindow_print(int64_t w, FILE *out);

#endif
