/* temporal_bench - what a temporal rule costs per decision as its window fills.
 *
 * A Box count budget over a 1h window (box.md §13) is decided with 10, 10,000
 * and 1,000,000 events in the window, through the engine (runtime/dogwood.h):
 * each decision appends its ::request event, evaluates the leaf and decides.
 * The same policy set without its temporal clause gives the plain decision the
 * ratio is taken against.
 *
 * Then a leaf no monitor takes (the general evaluator, vm/teval.c), joining
 * two past operators on a variable, with 10, 2,000 and 20,000 fs:write
 * responses in a 1h window (issue 13 row 14):
 *   join       exists (p). formerly (write{path: p} && formerly delete{path: p}):
 *              the inner formerly is answered from an index of the view by path
 *              (vm/tjoin.h), O(n log n) per decision instead of O(n^2);
 *   unindexed  the inner body `delete{path: p} && !move{path: p}`, which no index
 *              answers: O(n^2), so past the work bound (DW_TEMPORAL_WORK_BOUND_DEFAULT)
 *              it is denied; its time is the time to deny at the bound.
 * Prints key=value lines; never pass/fail.
 *
 *   build/temporal_bench [EVENTS...]      (default: 10 10000 1000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime/dogwood.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/join_policies.h"

static const char *temporal_policy =
    "@id(\"github_hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" };\n"
    "@id(\"github_budget\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" }\n"
    "when temporal {\n"
    "  exists (n: Long). ((count for (t: Timepoint). where (formerly within 1h\n"
    "    (Box::Action::\"http:request\"::response{ input.host: \"api.github.com\" } && tp(t)))) == n && n >= 100000000)\n"
    "};\n";

static const char *plain_policy =
    "@id(\"github_hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" };\n"
    "@id(\"github_budget\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host == \"api.github.com\" && context.input.port == 1 };\n";

static const char *request =
    "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"api.github.com\",\"port\":443,"
    "\"method\":\"GET\",\"path\":\"/repos\",\"body_bytes\":0,\"intercepted\":true}}";
static const char *response =
    "{\"action\":\"http:request\",\"kind\":\"response\",\"input\":{\"host\":\"api.github.com\",\"port\":443,"
    "\"method\":\"GET\",\"path\":\"/repos\",\"body_bytes\":120,\"intercepted\":true},\"output\":{\"status\":200}}";


static dw_engine *open_engine(const char *text, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    dw_engine_config cfg = { .policy_path = path, .schema_path = "box", .ticks_per_second = 1000000000 };
    char err[256];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fprintf(stderr, "temporal_bench: %s\n", err);
    return e;
}

/* ns per decision, timed over `reps` decisions that each append a request.
 * Timestamps advance 1 us per event, so 1,000,000 events span 1 s of a 1 h window. */
static double time_decisions(dw_engine *e, int64_t *ts, int reps, bool *allow)
{
    dw_verdict v;
    size_t rlen = strlen(request);
    for (int i = 0; i < reps / 10 + 1; i++) dw_engine_decide_json(e, request, rlen, (*ts += 1000), &v);   /* warm-up */
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < reps; i++) dw_engine_decide_json(e, request, rlen, (*ts += 1000), &v);
    *allow = v.allow;
    return (double)(bench_now_ns() - t0) / reps;
}

static const char *join_policies[2] = { DW_JOIN_INDEXED, DW_JOIN_UNINDEXED };

/* n fs:write responses of distinct paths 1 ms apart, then `reps` fs:read
 * decisions (each adds its request to the window); one line per run. */
static int time_join(int which, long n, int reps)
{
    dw_engine *e = open_engine(join_policies[which], "/tmp/dw_temporal_bench_join.dw");
    if (!e) return -1;
    int64_t ts = 1748854800LL * 1000000000LL;
    char line[512], err[256];
    for (long k = 0; k < n; k++) {
        int len = snprintf(line, sizeof line,
                           "{\"action\":\"fs:write\",\"kind\":\"response\",\"input\":{\"path\":\"~/project/f%ld\","
                           "\"operation\":\"write_content\"},\"output\":{}}", k);
        dw_engine_record_json(e, line, (size_t)len, (ts += 1000000), err, sizeof err);
    }
    static const char req[] = "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/project/a\","
                              "\"operation\":\"read_content\"}}";
    dw_verdict v;
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < reps; r++) dw_engine_decide_json(e, req, sizeof req - 1, (ts += 1000000), &v);
    double us = (double)(bench_now_ns() - t0) / reps / 1000.0;
    printf("%s_events=%ld us_per_decision=%.1f verdict=%s cause=%s\n", which ? "unindexed" : "join", n, us,
           v.allow ? "allow" : "deny", dw_cause_name(v.cause));
    dw_engine_close(e);
    remove("/tmp/dw_temporal_bench_join.dw");
    return 0;
}

int main(int argc, char **argv)
{
    long sizes[8] = { 10, 10000, 1000000 };
    int nsizes = 3;
    if (argc > 1) { nsizes = 0; for (int i = 1; i < argc && nsizes < 8; i++) sizes[nsizes++] = atol(argv[i]); }
    const int reps = 20000;
    const int64_t t_start = 1748854800LL * 1000000000LL;   /* 2025-06-02T09:00:00Z */

    dw_engine *plain = open_engine(plain_policy, "/tmp/dw_temporal_bench_plain.dw");
    if (!plain) return 1;
    int64_t ts = t_start;
    bool allow;
    double plain_ns = time_decisions(plain, &ts, reps, &allow);
    printf("plain_ns_per_decision=%.0f\n", plain_ns);
    dw_engine_close(plain);

    double first = 0;
    for (int s = 0; s < nsizes; s++) {
        dw_engine *e = open_engine(temporal_policy, "/tmp/dw_temporal_bench.dw");
        if (!e) return 1;
        ts = t_start;
        char err[256];
        size_t plen = strlen(response);
        for (long i = 0; i < sizes[s]; i++) dw_engine_record_json(e, response, plen, (ts += 1000), err, sizeof err);
        double ns = time_decisions(e, &ts, reps, &allow);
        if (s == 0) first = ns;
        printf("events_in_window=%ld ns_per_decision=%.0f ratio_to_plain=%.2f ratio_to_first=%.2f history=%u allow=%s\n",
               sizes[s], ns, ns / plain_ns, ns / first, dw_engine_history_length(e), allow ? "yes" : "no");
        dw_engine_close(e);
    }
    remove("/tmp/dw_temporal_bench.dw");
    remove("/tmp/dw_temporal_bench_plain.dw");
    static const long join_sizes[] = { 10, 2000, 20000 };
    for (int k = 0; k < 3; k++)
        for (int which = 0; which < 2; which++)
            if (time_join(which, join_sizes[k], join_sizes[k] > 5000 ? 5 : 50)) return 1;
    return 0;
}
