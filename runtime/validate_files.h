/* validate_files.h - one policy file validated against its schemas, in
 * §16's order, shared by `dwc validate` and `dwc dogwood validate`, which
 * print the findings each in its own form. */
#ifndef DW_VALIDATE_FILES_H
#define DW_VALIDATE_FILES_H
#include "load.h"
#include "../compiler/pipeline.h"
#include "../compiler/typecheck.h"

/* Load the schemas (their diagnostics printed, as every dwc loader does),
 * then run the policy through the front end and validation.  s->diags holds
 * the policy's findings; *fatal is the stage that stopped it before
 * validation (DW_FE_PARSE, or an acceptance stage) or DW_FE_NONE, and *r
 * counts the findings when validation ran.  0 ran; 1 the policy file cannot
 * be read (reported); 2 a schema was rejected. */
int dw_validate_files(dw_session *s, const char *pol, const char *sch, const char *events,
                      dw_fe_stage *fatal, dw_validate_result *r);

#endif
