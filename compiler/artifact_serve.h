/* artifact_serve.h - the serving context an artifact carries (section SERVE,
 * vm/artifact_format.h): the action schema its request gate checks against
 * and the event schema it was compiled with, so that a service (dwd) serves
 * it without parsing a schema.  runtime/artifact_serve.h reads it back. */
#ifndef DW_ARTIFACT_SERVE_H
#define DW_ARTIFACT_SERVE_H
#include "../lang/eventschema.h"
#include "../lang/schema.h"
#include "../vm/program.h"

/* Encode schema and es (es may be NULL: the default event schema's digest
 * is then given alone) into p's arena, where dw_artifact_write finds it.
 * events_digest: XXH3-64 of the event schema's text.  0, or -1 (out of
 * memory, or more than the format holds). */
int dw_artifact_attach_serve(dw_program *p, const dw_schema *schema, const dw_event_schema *es, uint64_t events_digest);

#endif
