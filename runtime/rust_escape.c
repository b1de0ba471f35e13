/* rust_escape.c - see rust_escape.h.  Printable is Rust's is_printable,
 * approximated by ICU's general categories (what est.js checks over the
 * corpus against cedar-wasm's own printing). */
#include "rust_escape.h"
#include <stdio.h>
#include <string.h>
#include <unicode/uchar.h>
#include "../stdlib/utf8.h"

static int esc_char(dw_buf *b, uint32_t c, bool first, const char *raw, size_t rawlen)
{
    const char *e = NULL;
    switch (c) {
    case 0: e = "\\0"; break;
    case '\t': e = "\\t"; break;
    case '\r': e = "\\r"; break;
    case '\n': e = "\\n"; break;
    case '\\': e = "\\\\"; break;
    case '"': e = "\\\""; break;
    case '\'': e = "\\'"; break;
    }
    if (e) return dw_buf_append(b, e, strlen(e));
    int8_t t = u_charType((UChar32)c);
    bool printable = c == ' ' || !(t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_SURROGATE || t == U_PRIVATE_USE_CHAR ||
                                    t == U_UNASSIGNED || t == U_LINE_SEPARATOR || t == U_PARAGRAPH_SEPARATOR || t == U_SPACE_SEPARATOR);
    if (printable && !(first && u_hasBinaryProperty((UChar32)c, UCHAR_GRAPHEME_EXTEND))) return dw_buf_append(b, raw, rawlen);
    char u[16];
    int k = snprintf(u, sizeof u, "\\u{%x}", (unsigned)c);
    return dw_buf_append(b, u, (size_t)k);
}

int dw_rust_escape_debug(dw_buf *b, const char *s, size_t len, bool pattern)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = dw_utf8_len(u + i, len - i);
        if (!n) return 1;
        uint32_t c = dw_utf8_get(u + i, n);
        int rc = pattern && c == '*' ? dw_buf_append(b, "\\*", 2) : esc_char(b, c, pattern || i == 0, s + i, n);
        if (rc) return -1;
        i += n;
    }
    return 0;
}
