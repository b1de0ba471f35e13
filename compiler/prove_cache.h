/* prove_cache.h - `dwc check --cache DIR`: what the proofs established in
 * one environment, kept in DIR under a hash of everything it depends on (the
 * dwc release and ISA, Z3's version, the schema, the environment, and the
 * text, effect, temporal-leaf positions and lint flags of every rule that
 * applies there), so a re-run re-proves only the environments a change
 * touched.  Each entry carries a checksum; an entry that does not read back
 * exactly (damaged, truncated, another format) is ignored and proved again,
 * never trusted.  Results with an unknown query are not kept. */
#ifndef DW_PROVE_CACHE_H
#define DW_PROVE_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include "prove_impl.h"

/* The key of the current environment (p->cur encoded). */
void dw_prove_env_key(P *p, uint8_t key[16]);
/* Fill p->ps (cleared) from DIR's entry for key: true when it read back whole. */
bool dw_prove_env_load(P *p, const uint8_t key[16]);
/* Keep p->ps (this environment's result) under key; silently skipped on an I/O error. */
void dw_prove_env_store(P *p, const uint8_t key[16]);

/* What one environment established about rules list[0..n) (p->ps), as
 * bytes (the entries' payload; also how a parallel environment's process
 * sends its result, prove.c), and back into p->ps (cleared): false when the
 * bytes are not exactly such a result. */
void dw_prove_env_encode(P *p, const size_t *list, size_t n, dw_buf *b);
bool dw_prove_env_decode(P *p, const size_t *list, size_t n, const uint8_t *data, size_t len);

#endif
