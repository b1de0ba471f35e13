/* engine_open.h - opening an engine from a compiled artifact alone: the
 * program, its request gate and its event schema all come from the
 * artifact (vm/artifact_format.h, section SERVE), so a caller that links
 * only this way of opening (dwd; see the Makefile's SERVE_OBJS) holds no
 * parser, macro expander, type checker or compiler.  Not in the shared
 * library's interface: libdogwood's dw_engine_open takes text and
 * artifacts both. */
#ifndef DW_ENGINE_OPEN_H
#define DW_ENGINE_OPEN_H
#include "dogwood_parts.h"

/* data, len: the artifact's bytes (cfg->policy_path only names it in
 * messages).  cfg->schema_path ("box" or a file) and cfg->events_path (a
 * built-in name or a file), when given, are compared with the artifact by
 * the digests of their text, never parsed: an artifact compiled against
 * another schema, or without one, is refused, as is one whose serving
 * context is missing or damaged.  With schema_path "box" the artifact must
 * carry the Box profile's stamp (`dwc compile --schema box`). */
dw_engine *dw_engine_open_artifact(const dw_engine_config *cfg, const void *data, size_t len, char *err, size_t errcap);
dw_engine *dw_engine_open_artifact_durable(const dw_engine_config *cfg, const void *data, size_t len,
                                           const dw_engine_durable *d, dw_engine_recovery *rec, char *err, size_t errcap);

#endif
