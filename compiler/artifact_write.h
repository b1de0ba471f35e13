/* artifact_write.h - serialising a compiled program to a .dwb artifact. */
#ifndef DW_ARTIFACT_WRITE_H
#define DW_ARTIFACT_WRITE_H
#include "../vm/program.h"

/* Append the artifact bytes to *out.  Deterministic: the same program gives
 * the same bytes.  0, -1 on OOM, -2 when the set has temporal leaves (their
 * tables are not serialised yet: run such sets from source). */
int dw_artifact_write(const dw_program *p, uint64_t schema_digest, dw_buf *out);

#endif
