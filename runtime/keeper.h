/* keeper.h - dwd's state keeper (docs/DWD.md, "Confinement"): a small
 * child process, forked before dwd confines itself, that performs the few
 * file operations the serving process is not allowed to do once confined
 * (its seccomp filter refuses open/openat, rename and unlink):
 *
 *   * in the state directory: create a temp file ("seg.tmp", "ckpt.tmp"),
 *     rename it to a log name ("seg-<16 hex>.log", "ckpt-<16 hex>.ckpt"),
 *     remove a log file; nothing else, and never through a symlink;
 *   * open a policy artifact read-only for `reload` (a regular file).
 *
 * New files are passed back as file descriptors over a SOCK_SEQPACKET
 * socketpair (SCM_RIGHTS), so the server keeps "no opening of new paths"
 * while still rotating its log and writing checkpoints.  The keeper confines
 * itself with its own allow-list (no exec, no sockets, no connect, no fork,
 * no ptrace), dies with its parent (PR_SET_PDEATHSIG) and exits when the
 * socket closes.  Requests are serialised by a mutex (any thread may call). */
#ifndef DW_KEEPER_H
#define DW_KEEPER_H
#include <stddef.h>
#include <sys/types.h>
#include "histlog.h"

typedef struct dw_keeper dw_keeper;

/* Fork the keeper for state directory `dir` (created 0700 if missing).
 * Call before starting threads and before confining.  NULL with a message
 * in err on failure. */
dw_keeper *dw_keeper_start(const char *dir, char *err, size_t errcap);

/* Each returns as the corresponding system call: an fd or 0, or -1 with
 * errno (EPERM for a name outside the allowed patterns). */
int dw_keeper_open(dw_keeper *k, const char *name, int flags);
int dw_keeper_rename(dw_keeper *k, const char *from, const char *to);
int dw_keeper_unlink(dw_keeper *k, const char *name);
/* Open PATH read-only (O_RDONLY | O_CLOEXEC | O_NOCTTY); a path that is not
 * a regular file is refused (EINVAL). */
int dw_keeper_open_artifact(dw_keeper *k, const char *path);

/* File operations for dw_histlog_options.fileops, bound to k. */
void dw_keeper_fileops(dw_keeper *k, dw_histlog_fileops *ops);

pid_t dw_keeper_pid(const dw_keeper *k);

/* Close the socket (the keeper exits) and reap it. */
void dw_keeper_stop(dw_keeper *k);

/* dwd --selftest-keeper DIR: confine a child with the keeper's allow-list
 * and try socket(), connect-less execve() and fork(); then start a real
 * keeper on DIR and check that allowed operations work and that names
 * outside the patterns, paths with '/', symlinks and non-regular artifacts
 * are refused.  Prints one line per check; 0 if all behaved. */
int dw_keeper_selftest(const char *dir);

#endif
