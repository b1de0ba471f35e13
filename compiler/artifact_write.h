/* artifact_write.h - serialising a compiled program to a .dwb artifact. */
#ifndef DW_ARTIFACT_WRITE_H
#define DW_ARTIFACT_WRITE_H
#include "../vm/program.h"

/* Append the artifact bytes (vm/artifact_format.h) to *out, temporal leaves
 * included.  Deterministic: the same program gives the same bytes.  Values,
 * strings and constants are deduplicated (constant operands are renumbered),
 * so the loaded program is equivalent, not identical.  0, or -1 on OOM or
 * when the program exceeds the format (a section over 4 GiB). */
int dw_artifact_write(const dw_program *p, uint64_t schema_digest, dw_buf *out);
/* The same, stamped with another instruction-set digest (dw_isa_digest is
 * what dw_artifact_write stamps): for tests of the loader's refusal. */
int dw_artifact_write_for_isa(const dw_program *p, uint64_t schema_digest, uint64_t isa_digest, dw_buf *out);

#endif
