/* join_policies.h - the join of issue 13 row 14 in Box's vocabulary, shared by
 * tests/bench/temporal_bench.c (figures) and tests/unit/test_work_bound.c.
 *
 * "An fs:read is forbidden once some file was written after it was deleted":
 *   DW_JOIN_INDEXED    exists (p). formerly (write{path: p} && formerly delete{path: p})
 *                      (the inner formerly is answered from the evaluator's
 *                      join index, vm/tjoin.h: O(n log n) per decision);
 *   DW_JOIN_UNINDEXED  the same with `delete{path: p} && !move{path: p}` as the
 *                      inner body, which no index answers: O(n^2) steps. */
#ifndef DW_JOIN_POLICIES_H
#define DW_JOIN_POLICIES_H

#define DW_JOIN_HEAD                                                             \
    "@id(\"reads\")\n"                                                           \
    "permit (principal, action == Box::Action::\"fs:read\", resource);\n"        \
    "@id(\"rewritten_after_delete\")\n"                                          \
    "forbid (principal, action == Box::Action::\"fs:read\", resource)\n"         \
    "when temporal {\n"                                                          \
    "  exists (p: String). formerly within 1h (Box::Action::\"fs:write\"::response{ input.path: p } &&\n"
#define DW_JOIN_INDEXED DW_JOIN_HEAD "    formerly within 1h Box::Action::\"fs:delete\"::response{ input.path: p })\n};\n"
#define DW_JOIN_UNINDEXED_TAIL                                                   \
    "    formerly within 1h (Box::Action::\"fs:delete\"::response{ input.path: p } &&\n" \
    "                        !Box::Action::\"fs:move\"::response{ input.path: p }))\n};\n"
#define DW_JOIN_UNINDEXED DW_JOIN_HEAD DW_JOIN_UNINDEXED_TAIL

#endif
