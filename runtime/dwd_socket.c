/* dwd_socket.c - claiming dwd's listening socket (see dwd_socket.h). */
#include "dwd_socket.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int address(const char *path, struct sockaddr_un *a, char *err, size_t errcap)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a->sun_path) {
        snprintf(err, errcap, "%s: socket path longer than %zu bytes", path, sizeof a->sun_path - 1);
        return -1;
    }
    strcpy(a->sun_path, path);
    return 0;
}

/* What is at path: 0 nothing or a stale socket (safe to replace), -1
 * (message in err) a live socket, another kind of file, or no way to tell. */
static int probe(const char *path, const struct sockaddr_un *a, char *err, size_t errcap)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        if (errno == ENOENT) return 0;
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(sb.st_mode)) { snprintf(err, errcap, "%s exists and is not a socket", path); return -1; }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { snprintf(err, errcap, "socket: %s", strerror(errno)); return -1; }
    int rc = connect(fd, (const struct sockaddr *)a, sizeof *a), e = errno;
    close(fd);
    if (rc == 0 || e == EAGAIN || e == EINPROGRESS) {   /* accepted, or a full backlog: someone listens */
        snprintf(err, errcap, "%s: another process is serving on this socket (a connection succeeded); "
                 "refusing to replace it (stop that dwd first, or choose another --socket)", path);
        return -1;
    }
    if (e == ECONNREFUSED || e == ENOENT) return 0;
    snprintf(err, errcap, "%s: cannot tell whether a process serves this socket (connect: %s); refusing to replace it",
             path, strerror(e));
    return -1;
}

int dwd_socket_claim(const char *path, char *err, size_t errcap)
{
    struct sockaddr_un a;
    if (address(path, &a, err, errcap)) return -1;
    char lock[sizeof a.sun_path + 8];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) { snprintf(err, errcap, "%s: %s", lock, strerror(errno)); return -1; }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, errcap, "%s: another dwd holds this socket's lock (%s); refusing to start", path, lock);
        close(fd);
        return -1;
    }
    if (probe(path, &a, err, errcap)) { close(fd); return -1; }
    return fd;
}

int dwd_socket_listen(const char *path, int backlog, char *err, size_t errcap)
{
    struct sockaddr_un a;
    if (address(path, &a, err, errcap) || probe(path, &a, err, errcap)) return -1;
    if (unlink(path) != 0 && errno != ENOENT) { snprintf(err, errcap, "%s: cannot remove the stale socket: %s", path, strerror(errno)); return -1; }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { snprintf(err, errcap, "socket: %s", strerror(errno)); return -1; }
    mode_t old = umask(0177);   /* 0600: read and write (connect) for the owner only */
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc != 0 || listen(fd, backlog) != 0) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
