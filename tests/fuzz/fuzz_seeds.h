/* fuzz_seeds.h - policy text shared by the fuzz targets' built-in seeds. */
#ifndef DW_FUZZ_SEEDS_H
#define DW_FUZZ_SEEDS_H

/* Box vocabulary (--schema box): a plain rule and two temporal rules, a
 * count budget and a negated-left `since` (box.md §13). */
static const char dw_fuzz_box_policy[] =
    "@id(\"hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" };\n"
    "@id(\"budget\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when temporal {\n"
    "  exists (n: Long). ((count for (t: Timepoint). where (\n"
    "    formerly within 10m ( Box::Action::\"http:request\"::response{ input.host: \"api.github.com\" } && tp(t) )\n"
    "  )) == n && n >= 3)\n"
    "};\n"
    "@id(\"after\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "unless temporal {\n"
    "  !Box::Action::\"http:request\"::request{ input.host: \"uploads.github.com\" }\n"
    "  since within 1h Box::Action::\"http:request\"::response{ input.host: \"api.github.com\", output.status: 200 }\n"
    "};\n";

#endif
