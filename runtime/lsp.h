/* lsp.h - `dwc lsp`: a Language Server Protocol server (JSON-RPC 2.0 with
 * Content-Length framing) for Dogwood and Cedar policy files and their
 * schemas.  Diagnostics are `dwc check`'s lint (compiler/lint.h) without the
 * Z3 proofs; hover, completion, go-to-definition, document symbols and code
 * actions come from the same front end.  docs/EDITORS.md describes it.
 *
 * The server is a byte-stream machine with no I/O of its own: dw_lsp_feed
 * takes whatever arrived (any split), answers through the sink, and keeps
 * the debounced diagnostics pending until dw_lsp_run_due; runtime/lsp_stdio.c
 * drives it over stdin/stdout and the fuzz target drives it from memory. */
#ifndef DW_LSP_H
#define DW_LSP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the framed output goes: 0, or nonzero when it could not be written
 * (the server then stops). */
typedef int (*dw_lsp_sink)(void *ctx, const char *p, size_t n);

typedef struct dw_lsp dw_lsp;

/* NULL on out of memory. */
dw_lsp *dw_lsp_new(dw_lsp_sink out, void *ctx);
void dw_lsp_free(dw_lsp *s);
/* Take n more input bytes; every complete message is answered.  0, or -1
 * when the output failed or memory ran out (the server cannot go on). */
int dw_lsp_feed(dw_lsp *s, const char *p, size_t n, int64_t now_ms);
/* Milliseconds until the next debounced diagnostics are due (0: now), or
 * -1 when nothing is pending. */
int64_t dw_lsp_due_in(const dw_lsp *s, int64_t now_ms);
/* Publish the diagnostics due at now_ms (every pending one when now_ms is
 * INT64_MAX).  0, or -1 as dw_lsp_feed. */
int dw_lsp_run_due(dw_lsp *s, int64_t now_ms);
/* After the `exit` notification: true, with the process exit status (0 when
 * `shutdown` came first, 1 otherwise, as the protocol says). */
bool dw_lsp_exited(const dw_lsp *s, int *status);
/* A monotonic clock in milliseconds. */
int64_t dw_lsp_now_ms(void);

/* `dwc lsp`: serve on stdin/stdout until `exit` or end of input. */
int dw_cmd_lsp(int argc, char **argv);
extern const char dw_lsp_usage[];

#endif
