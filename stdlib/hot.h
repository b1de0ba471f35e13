/* hot.h - DW_HOT marks the functions every decision runs: the VM's
 * decision, the engine's event reader, gate and history append, dwd's
 * request loop.  GCC and Clang put them together in .text.hot, so the
 * decision path's code is contiguous instead of spread over the binary.
 * Spread, the engine path's lines fell into the same L1 instruction-cache
 * sets and about 12 of them were fetched again on every decision
 * (callgrind's cache model, `dwc bench --engine` on Box's 01-project-read:
 * 12.45 -> 0.18 misses per decision); the host's slow mode, which shares
 * the core, made that worse.  Mark only what runs per decision: anything
 * else in .text.hot dilutes it. */
#ifndef DW_STDLIB_HOT_H
#define DW_STDLIB_HOT_H

#if defined(__GNUC__)
#define DW_HOT __attribute__((hot))
#else
#define DW_HOT
#endif

#endif
