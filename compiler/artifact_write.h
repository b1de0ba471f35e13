/* artifact_write.h - serialising a compiled program to a .dwb artifact. */
#ifndef DW_ARTIFACT_WRITE_H
#define DW_ARTIFACT_WRITE_H
#include "../vm/program.h"

/* Append the artifact bytes to *out.  Deterministic: the same program gives
 * the same bytes.  0, or -1 on OOM. */
int dw_artifact_write(const dw_program *p, uint64_t schema_digest, dw_buf *out);

#endif
