/* dwd_socket.h - claiming dwd's listening socket (docs/DWD.md, "The socket").
 *
 * A second dwd started with the same --socket must never take the path
 * from a live one (its clients would be answered from another history).
 * dwd_socket_claim holds an exclusive flock on PATH.lock for the life of the
 * process, so two dwds never race for one path, and refuses a path where a
 * process accepts connections (connect succeeds or its backlog is full).
 * dwd_socket_listen then replaces a stale socket (connect refused: nobody
 * listens) and binds a new one, mode 0600: connecting needs write permission,
 * and only the owner (whose uid the server also checks with SO_PEERCRED)
 * has it. */
#ifndef DW_DWD_SOCKET_H
#define DW_DWD_SOCKET_H
#include <stddef.h>

/* The lock's descriptor (keep it open), or -1 with a message in err. */
int dwd_socket_claim(const char *path, char *err, size_t errcap);
/* A non-blocking listening socket on path, or -1 with a message in err.
 * Call after dwd_socket_claim. */
int dwd_socket_listen(const char *path, int backlog, char *err, size_t errcap);

#endif
