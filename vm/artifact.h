/* artifact.h - loading a .dwb artifact: checksum, section bounds, value
 * rebuild, then the bytecode verifier.  A corrupt or hostile file is refused
 * with a reason and never executed. */
#ifndef DW_ARTIFACT_H
#define DW_ARTIFACT_H
#include <stddef.h>
#include "program.h"

/* NULL with a reason in msg on any defect. */
dw_program *dw_artifact_load(const void *data, size_t size, char *msg, size_t cap);
dw_program *dw_artifact_load_file(const char *path, char *msg, size_t cap);
/* True if the bytes start with the artifact magic. */
bool dw_is_artifact(const void *data, size_t size);

#endif
