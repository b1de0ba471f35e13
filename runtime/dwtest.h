/* dwtest.h - `dwc test`: policy unit tests (docs/TESTING.md).  dwtest.c
 * finds, checks and runs the test files; dwtest_report.c prints what they
 * did (human, TAP, JUnit XML, JSON) from the results below. */
#ifndef DW_DWTEST_H
#define DW_DWTEST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

extern const char dw_test_usage[];
int dw_cmd_test(int argc, char **argv);

/* One decision line's expectations against the verdict. */
typedef struct dw_test_check {
    size_t line;
    bool ok;
    const char *expected, *actual;            /* "deny [no_env] forbidden", "allow [project_read] permitted (…)" */
    const char *expected_json, *actual_json;  /* the same as JSON objects */
    const char *explanation;                  /* --explain, a failed check: `dwc explain`'s text */
} dw_test_check;

/* A case: its lines fed in order to a fresh history. */
typedef struct dw_test_case {
    const char *name;
    size_t line;                 /* its {"case": …} line, or the first line of an implicit case */
    size_t first, last;          /* its events: text offsets [first - 1, last) (first 0: none yet) */
    size_t first_line;           /* the line at offset first - 1 */
    size_t nchecks, nfailed;
    dw_test_check *checks;
    const char *error;           /* the engine refused one of its events: "FILE:LINE: …" (the case fails) */
    double seconds;
} dw_test_case;

typedef struct dw_test_file {
    const char *path;
    const char *policy;          /* the policy set it tests (resolved path) */
    const char *error;           /* an invalid file: "FILE:LINE: error: …"; none of its cases ran */
    size_t error_line;
    size_t ncases;
    dw_test_case *cases;
    double seconds;
} dw_test_file;

typedef enum { DW_TEST_HUMAN, DW_TEST_TAP, DW_TEST_JUNIT, DW_TEST_JSON } dw_test_format;

typedef struct dw_test_run {
    dw_test_file *files;
    size_t nfiles;
    size_t passed, failed, invalid;   /* cases passed, cases failed, invalid files */
} dw_test_run;

/* dwtest_report.c: the whole report on out. */
void dw_test_report(const dw_test_run *r, dw_test_format fmt, FILE *out);

#endif
