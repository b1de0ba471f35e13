/* artifact_serve.h - reading an artifact's serving context (section SERVE,
 * vm/artifact_format.h; written by compiler/artifact_serve.c): the action
 * schema of its request gate and its event schema, rebuilt as the lang/
 * data structures the engine reads, without a parser. */
#ifndef DW_RUNTIME_ARTIFACT_SERVE_H
#define DW_RUNTIME_ARTIFACT_SERVE_H
#include <stdint.h>
#include "../lang/eventschema.h"
#include "../lang/schema.h"

typedef struct dw_serve_ctx {
    dw_schema *schema;           /* the request gate's action schema */
    dw_event_schema *es;         /* decision kinds, key pins, max_window */
    uint64_t events_digest;      /* XXH3-64 of the event schema's text */
} dw_serve_ctx;

/* Decode the SERVE bytes.  Every count, kind, nesting and order is checked;
 * damage gives -1 with the reason in msg (nothing allocated is left). */
int dw_serve_decode(const uint8_t *data, size_t len, dw_serve_ctx *out, char *msg, size_t cap);
void dw_serve_ctx_free(dw_serve_ctx *c);

#endif
