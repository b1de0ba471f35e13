/* dogwood_schema.h - `dwc dogwood schema action|event|mcp` (dogwood.md §18). */
#ifndef DW_DOGWOOD_SCHEMA_H
#define DW_DOGWOOD_SCHEMA_H
extern const char dw_dogwood_schema_usage[];
/* argv[0] is "schema", argv[1] the kind.  Exit code: 0, 1 I/O, 2 rejected. */
int dw_dogwood_schema(int argc, char **argv);
#endif
