/* libFuzzer target: the language server's framing and dispatch
 * (runtime/lsp_frame.c, lsp_rpc.c) and everything a message reaches.  After
 * an initialize (schema box), the input is either raw bytes on the wire
 * (first byte even) or message bodies separated by a NUL byte, each framed
 * with its Content-Length (first byte odd), so the fuzzer reaches the
 * methods without having to count bytes; then every pending diagnostic is
 * published and the server freed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/lsp.h"

static int discard(void *ctx, const char *p, size_t n) { (void)ctx; (void)p; (void)n; return 0; }

static void framed(dw_lsp *s, const char *body, size_t n)
{
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", n);
    dw_lsp_feed(s, head, (size_t)hn, 0);
    dw_lsp_feed(s, body, n, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"rootUri\":\"file:///nonexistent-dwc-fuzz\","
        "\"capabilities\":{},\"initializationOptions\":{\"schema\":\"box\"}}}";
    static const char initialized[] = "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}";
    setenv("XDG_CACHE_HOME", "/tmp/dwc-fuzz-lsp-cache", 1);
    dw_lsp *s = dw_lsp_new(discard, NULL);
    if (!s) return 0;
    framed(s, init, sizeof init - 1);
    framed(s, initialized, sizeof initialized - 1);
    if (size && (data[0] & 1)) {
        const char *p = (const char *)data + 1, *e = (const char *)data + size;
        while (p < e && !dw_lsp_exited(s, NULL)) {
            const char *z = memchr(p, 0, (size_t)(e - p));
            if (!z) z = e;
            framed(s, p, (size_t)(z - p));
            dw_lsp_run_due(s, 0);
            p = z + 1;
        }
    } else if (size) {
        /* in two pieces, so a frame is split somewhere */
        size_t half = size / 2;
        dw_lsp_feed(s, (const char *)data + 1, half ? half - 1 : 0, 0);
        dw_lsp_feed(s, (const char *)data + (half ? half : 1), size - (half ? half : 1), 0);
    }
    dw_lsp_run_due(s, INT64_MAX);
    dw_lsp_free(s);
    return 0;
}
