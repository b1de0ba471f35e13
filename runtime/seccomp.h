/* seccomp.h - dwd's confinement (docs/DWD.md): a libseccomp allow-list
 * installed after setup, so a compromised server can serve decisions and
 * append to its log but cannot open files, create sockets or run programs. */
#ifndef DW_SECCOMP_H
#define DW_SECCOMP_H
#include <stddef.h>

/* Install the serving allow-list on every thread of the process (TSYNC);
 * everything else fails with EPERM.  0, or -1 with a message in err. */
int dw_confine_serving(char *err, size_t errcap);

/* Confine, then try socket(), openat() and execve(); print one line per
 * call to stdout ("socket: refused (EPERM)" or "...: ALLOWED ...").
 * The test runs in a forked child.  Returns 0 when all three were refused with EPERM, 1 otherwise. */
int dw_confine_selftest(void);

#endif
