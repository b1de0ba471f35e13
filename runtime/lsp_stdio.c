/* lsp_stdio.c - `dwc lsp`: the server (runtime/lsp.h) on stdin/stdout.  One
 * thread: poll stdin until the next debounced diagnostics are due, feed what
 * arrived, publish what is due.  stderr is the editor's log. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lsp.h"
#include "cli.h"

const char dw_lsp_usage[] =
    "usage: dwc lsp [--stdio]\n"
    "A Language Server Protocol server for .dw, .cedar, .cedarschema and .dwschema files,\n"
    "on stdin/stdout (JSON-RPC 2.0, Content-Length framing; --stdio is accepted and is the\n"
    "only transport).  Diagnostics are `dwc check`'s findings, with its rule ids, except\n"
    "the Z3 proofs; also hover, completion, go to definition, document symbols, quick\n"
    "fixes and formatting (dwc format).  Configured by the first dwc.toml or .dwcrc from\n"
    "the workspace root upwards and by initializationOptions (schema, events, profile,\n"
    "home, disable, debounce_ms, line_width, indent_width); docs/EDITORS.md has the keys\n"
    "and editor set-ups.  Exit 0 after shutdown and exit, 1 when the input ends or exit\n"
    "comes without shutdown.\n";

static int write_fd(void *ctx, const char *p, size_t n)
{
    int fd = *(const int *)ctx;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int dw_cmd_lsp(int argc, char **argv)
{
    bool over_stdio = false;    /* the only transport: --stdio is accepted, as editors pass it */
    const dw_cli_opt opts[] = { { "stdio", 0, NULL, &over_stdio }, { 0 } };
    int r = dw_cli_parse(argc, argv, opts, NULL, dw_lsp_usage);
    if (r) return r > 0 ? 0 : 1;
    signal(SIGPIPE, SIG_IGN);   /* a closed editor is a write error, not a signal */
    static int out_fd = STDOUT_FILENO;
    dw_lsp *s = dw_lsp_new(write_fd, &out_fd);
    if (!s) { fprintf(stderr, "dwc lsp: error: out of memory\n"); return 1; }
    static char buf[1 << 16];
    int status = 1;
    for (;;) {
        int64_t now = dw_lsp_now_ms();
        if (dw_lsp_run_due(s, now)) break;
        int64_t due = dw_lsp_due_in(s, now);
        struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
        int r = poll(&p, 1, due < 0 ? -1 : due > INT_MAX ? INT_MAX : (int)due);
        if (r < 0) {
            if (errno == EINTR) continue;
            perror("dwc lsp: poll");
            break;
        }
        if (r == 0) continue;
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            perror("dwc lsp: read");
            break;
        }
        if (n == 0) { fprintf(stderr, "dwc lsp: the input ended without `exit`\n"); break; }
        if (dw_lsp_feed(s, buf, (size_t)n, dw_lsp_now_ms())) { fprintf(stderr, "dwc lsp: error: cannot write to the client, or out of memory\n"); break; }
        if (dw_lsp_exited(s, &status)) break;
    }
    dw_lsp_free(s);
    return status;
}
