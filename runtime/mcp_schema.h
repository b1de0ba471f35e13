/* mcp_schema.h - an action schema from an MCP tool manifest (dogwood.md §11.3). */
#ifndef DW_MCP_SCHEMA_H
#define DW_MCP_SCHEMA_H
#include <stdbool.h>
#include <stdio.h>
#include "../lang/json.h"

typedef struct dw_mcp_options {
    const char *ns;                     /* the schema's namespace (default Mcp) */
    const char *principal, *resource;   /* the entity types calls apply to (default Agent, Server) */
    bool number_decimal;                /* JSON Schema `number` as decimal (else refused) */
} dw_mcp_options;

/* Write the Cedar schema text for the manifest in src to out.  0; 1 the
 * manifest was refused (diagnostics in d, at their JSON positions). */
int dw_mcp_schema(const dw_source *src, const dw_mcp_options *opt, FILE *out, dw_diags *d);

#endif
