/* dwd_policy.h - the artifact dwd serves.  dwd links no front end
 * (runtime/engine_open.h): --artifact P.dwb is read as it is, and policy
 * text (--policy P.dw) is compiled by `dwc compile` in a child process
 * before dwd confines itself (its seccomp filter refuses exec, so a reload
 * cannot compile: it takes artifacts only).  dwc is --dwc PATH, else $DWC,
 * else the dwc next to the dwd executable, else dwc on PATH. */
#ifndef DW_DWD_POLICY_H
#define DW_DWD_POLICY_H
#include <stddef.h>

/* 0 with the artifact's bytes in *data (malloc'd), or 1 after printing why
 * on stderr ("dwd: ...": dwc's first error, on one line). */
int dwd_policy_artifact(const char *path, const char *schema, const char *events, const char *dwc, void **data, size_t *len);

#endif
