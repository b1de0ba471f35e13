/* bench.h - `dwc bench`: decisions per second from precompiled requests. */
#ifndef DW_BENCH_H
#define DW_BENCH_H
int dw_cmd_bench(int argc, char **argv);
extern const char dw_bench_usage[];
#endif
