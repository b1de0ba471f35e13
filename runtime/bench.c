/* bench.c - `dwc bench`.  Requests are decoded once (or, with --from-json,
 * inside the timed loop), run round-robin after a warm-up, and every decision
 * is timed on its own for the percentiles.  A second, untimed-per-decision
 * pass gives ns_per_decision without the clock's own cost in it.  With
 * --engine each line is a Box event decided through the stateful engine
 * (runtime/bench_engine.c) in the same loop. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "alloc_count.h"
#include "bench_engine.h"
#include "cli.h"
#include "json_request.h"
#include "load.h"

const char dw_bench_usage[] =
    "usage: dwc bench -p POLICY [-s SCHEMA] [--entities E] --requests FILE.jsonl [-n|--decisions N]\n"
    "                 [--from-json] [--no-index] [--engine]\n"
    "Decide each request of FILE.jsonl (Cedar request JSON, one per line) round-robin,\n"
    "N decisions in all (default 1000000) after a warm-up, and print key=value lines:\n"
    "decisions, ns_per_decision, p50_ns, p90_ns, p99_ns, allocs_per_decision,\n"
    "policies_evaluated_per_decision, allow, deny (and timer_overhead_ns, requests).\n"
    "  --from-json  parse each request's JSON inside the timed loop\n"
    "  --no-index   run every policy (the decision index switched off)\n"
    "  --engine     each line is a Box event (box.md §15.2) decided through the stateful engine as\n"
    "               dw_engine_decide_json does (gate, history append with its retention, temporal\n"
    "               leaves, verdict; in memory, no log); -s defaults to box, JSON is always parsed\n"
    "               in the loop; events that are not decisions are recorded (recorded=N)\n"
    "Without --engine a set with temporal rules is refused: their leaves need the engine's history.\n";

static inline uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Per-decision timestamps: the TSC where the CPU has an invariant one (a few
 * ns per read instead of clock_gettime's 20-30), calibrated against
 * CLOCK_MONOTONIC; the monotonic clock elsewhere. */
#if defined(__x86_64__)
#include <x86intrin.h>
static double tsc_ns_per_tick;
static void calibrate_tsc(void)
{
    uint64_t c0 = clock_ns(), t0 = __rdtsc();
    while (clock_ns() - c0 < 50000000ull) { }
    uint64_t c1 = clock_ns(), t1 = __rdtsc();
    tsc_ns_per_tick = (double)(c1 - c0) / (double)(t1 - t0);
}
static inline uint64_t ticks(void) { return __rdtsc(); }
static inline uint32_t ticks_to_ns(uint64_t d) { return (uint32_t)((double)d * tsc_ns_per_tick + 0.5); }
#else
static void calibrate_tsc(void) { }
static inline uint64_t ticks(void) { return clock_ns(); }
static inline uint32_t ticks_to_ns(uint64_t d) { return (uint32_t)d; }
#endif
#define now_ns clock_ns

typedef struct breq { const char *line; size_t len; dw_request req; } breq;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Build one request from its JSON line, in arena a (runtime/json_request.c:
 * one pass for the common shape, the JSON reader and dw_request_from_json
 * otherwise). */
static int build_request(dw_session *s, dw_arena *a, dw_read_cache *cache, const char *line, size_t len, dw_request *out,
                         dw_buf *err)
{
    return dw_request_parse_json(a, line, len, s->schema, s->schema != NULL, cache, out, err);
}

/* The lines of text that are not blank, split in place (each '\n' becomes a
 * NUL).  *lines: malloc'd; -1 on OOM. */
static int split_lines(char *text, const char ***lines, size_t **lens, size_t *count)
{
    size_t n = 0, cap = 0;
    const char **ls = NULL;
    size_t *ln = NULL;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        if (nl) *nl = 0;
        bool blank = true;
        for (size_t i = 0; i < ll; i++) if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') blank = false;
        if (!blank) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                const char **nls = realloc(ls, cap * sizeof *nls);
                if (nls) ls = nls;
                size_t *nln = nls ? realloc(ln, cap * sizeof *nln) : NULL;
                if (nln) ln = nln;
                if (!nls || !nln) { free(ls); free(ln); return -1; }
            }
            ls[n] = line;
            ln[n++] = ll;
        }
        line = nl ? nl + 1 : NULL;
    }
    *lines = ls;
    *lens = ln;
    *count = n;
    return 0;
}

/* One timed decision of request i: 0 decided (o filled), -1 failed. */
typedef struct bench_outcome { bool decided, allow; uint32_t evaluated; } bench_outcome;
typedef int (*bench_decide_fn)(void *ctx, size_t i, bench_outcome *o);

typedef struct vm_bench {
    dw_session *s;
    breq *reqs;
    bool from_json;
    dw_arena json_arena, scratch;
    dw_buf err;
    dw_read_cache uids;       /* the reader's state across lines, as a host would keep it */
} vm_bench;

static int vm_decide(void *ctx, size_t i, bench_outcome *o)
{
    vm_bench *b = ctx;
    breq *r = &b->reqs[i];
    const dw_request *req = &r->req;
    dw_request fresh;
    if (b->from_json) {
        dw_arena_reset(&b->json_arena);
        b->err.len = 0;
        if (build_request(b->s, &b->json_arena, &b->uids, r->line, r->len, &fresh, &b->err)) return -1;
        dw_request_bind_read(&fresh, &b->uids, b->s->prog, &b->s->store);
        req = &fresh;
    }
    dw_arena_reset(&b->scratch);
    dw_response resp;
    if (dw_authorize(b->s->prog, &b->s->store, req, &b->scratch, &resp)) return -1;
    o->decided = true;
    o->allow = resp.allow;
    o->evaluated = resp.evaluated;
    return 0;
}

static int engine_decide(void *ctx, size_t i, bench_outcome *o)
{
    dw_bench_engine_outcome eo;
    if (dw_bench_engine_decide(ctx, i, &eo)) return -1;
    *o = (bench_outcome){ eo.decided, eo.allow, 0 };
    return 0;
}

#define BENCH_WINDOWS 20      /* the stretches window_p50_min_ns / _max_ns take the p50 of */

/* Warm-up, then n decisions round-robin over nreq requests timed one by
 * one (the percentiles), then n more timed together (ns_per_decision), and
 * print the figures.  evaluated_total, when given, replaces the outcomes'
 * policy counts (the engine reports its own).  -1 on OOM. */
static inline __attribute__((always_inline)) int timed_run(long long n, size_t nreq, size_t invalid, bench_decide_fn decide, void *ctx,
                     uint64_t (*evaluated_total)(void *ctx))
{
    uint32_t *lat = malloc((size_t)n * sizeof *lat);
    if (!lat) { fprintf(stderr, "dwc bench: out of memory\n"); return -1; }
    /* timer overhead: median of back-to-back reads of the per-decision timer */
    calibrate_tsc();
    uint32_t ov[1001];
    for (int i = 0; i < 1001; i++) { uint64_t a = ticks(), b = ticks(); ov[i] = ticks_to_ns(b - a); }
    qsort(ov, 1001, sizeof *ov, cmp_u32);

    long long warm = n / 10 < 100000 ? n / 10 : 100000;
    uint64_t allow = 0, deny = 0, recorded = 0, evaluated = 0, fails = 0;
    for (int pass = 0; pass < 3; pass++) {
        /* pass 0: warm-up; pass 1: per-decision timing; pass 2: throughput */
        long long count = pass == 0 ? warm : n;
        uint64_t allocs0 = dw_alloc_count(), ev0 = evaluated_total ? evaluated_total(ctx) : 0;
        uint64_t t_start = now_ns();
        size_t r = 0;
        for (long long i = 0; i < count; i++, r = r + 1 == nreq ? 0 : r + 1) {
            uint64_t t0 = pass == 1 ? ticks() : 0;
            bench_outcome o;
            if (decide(ctx, r, &o)) { fails += pass == 1; if (pass == 1) lat[i] = ticks_to_ns(ticks() - t0); continue; }
            if (pass == 1) {
                lat[i] = ticks_to_ns(ticks() - t0);
                if (!o.decided) recorded++;
                else if (o.allow) allow++;
                else deny++;
                evaluated += o.evaluated;
            }
        }
        uint64_t t_total = now_ns() - t_start;
        if (pass == 1) {
            uint64_t allocs = dw_alloc_count() - allocs0;
            if (evaluated_total) evaluated = evaluated_total(ctx) - ev0;
            /* the p50 of each of BENCH_WINDOWS consecutive stretches of the
             * run: on a shared host the same process moves between a fast and
             * a slow speed within tens of milliseconds (docs/PERFORMANCE.md),
             * which the whole run's p50 alone does not show */
            long long nw = n / 1000 < BENCH_WINDOWS ? n / 1000 : BENCH_WINDOWS;
            uint32_t wmin = UINT32_MAX, wmax = 0;
            for (long long w = 0; nw >= 2 && w < nw; w++) {
                long long a = n * w / nw, b = n * (w + 1) / nw;
                qsort(lat + a, (size_t)(b - a), sizeof *lat, cmp_u32);
                uint32_t m = lat[a + (b - a) / 2];
                if (m < wmin) wmin = m;
                if (m > wmax) wmax = m;
            }
            qsort(lat, (size_t)n, sizeof *lat, cmp_u32);
            printf("decisions=%lld\n", n);
            printf("requests=%zu\n", nreq);
            if (invalid) printf("invalid_requests=%zu\n", invalid);
            printf("p50_ns=%u\np90_ns=%u\np99_ns=%u\n", lat[n / 2], lat[n * 9 / 10], lat[n * 99 / 100]);
            if (nw >= 2) printf("windows=%lld\nwindow_p50_min_ns=%u\nwindow_p50_max_ns=%u\n", nw, wmin, wmax);
            printf("timer_overhead_ns=%u\n", ov[500]);
            if (dw_alloc_counting()) printf("allocs_per_decision=%.3f\n", (double)allocs / (double)n);
            else printf("allocs_per_decision=n/a\n");
            printf("policies_evaluated_per_decision=%.2f\n", (double)evaluated / (double)n);
            printf("allow=%llu\ndeny=%llu\n", (unsigned long long)allow, (unsigned long long)deny);
            if (recorded) printf("recorded=%llu\n", (unsigned long long)recorded);
            if (fails) printf("failures=%llu\n", (unsigned long long)fails);
        } else if (pass == 2) {
            printf("ns_per_decision=%.1f\n", (double)t_total / (double)n);
        }
    }
    free(lat);
    return 0;
}

static uint64_t engine_evaluated(void *ctx) { return dw_bench_engine_evaluated(ctx); }

static int bench_engine(const char *pol, const char *sch, const char *rqf, long long n)
{
    char *text = NULL;
    size_t len, nreq = 0, *lens = NULL;
    const char **lines = NULL;
    if (dw_read_file(rqf, &text, &len)) { perror(rqf); return 1; }
    int rc = 1;
    dw_bench_engine *b = NULL;
    if (split_lines(text, &lines, &lens, &nreq)) { fprintf(stderr, "dwc bench: out of memory\n"); goto out; }
    if (!nreq) { fprintf(stderr, "dwc bench: no event in %s\n", rqf); goto out; }
    char err[256];
    if (!(b = dw_bench_engine_open(pol, sch ? sch : "box", lines, lens, nreq, err, sizeof err))) {
        fprintf(stderr, "dwc bench: error: %s\n", err);
        goto out;
    }
    const char *why;
    size_t refused = dw_bench_engine_refused(b, &why);
    if (refused) fprintf(stderr, "dwc bench: %zu event(s) refused by the engine and left out; %s\n", refused, why);
    if (!timed_run(n, dw_bench_engine_events(b), refused, engine_decide, b, engine_evaluated)) {
        printf("history_events=%u\n", dw_bench_engine_history(b));
        rc = 0;
    }
out:
    dw_bench_engine_close(b);
    free(lines);
    free(lens);
    free(text);
    return rc;
}

int dw_cmd_bench(int argc, char **argv)
{
    const char *pol = NULL, *sch = NULL, *ent = NULL, *rqf = NULL;
    const char *count = NULL;
    long long n = 1000000;
    bool from_json = false, no_index = false, engine = false;
    const dw_cli_opt opts[] = {
        { "policies", 'p', &pol, NULL }, { "schema", 's', &sch, NULL }, { "entities", 0, &ent, NULL },
        { "requests", 0, &rqf, NULL }, { "decisions", 'n', &count, NULL }, { "from-json", 0, NULL, &from_json },
        { "no-index", 0, NULL, &no_index }, { "engine", 0, NULL, &engine }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_bench_usage);
    if (pr) return pr > 0 ? 0 : 1;
    if (count && !dw_cli_count("bench", "-n", count, 1, 1000000000000LL, &n)) return 1;
    if (!pol || !rqf) { fputs(dw_bench_usage, stderr); return 1; }
    if (engine) {
        /* the engine has no entity store of its own and always runs its index */
        if (ent || no_index) {
            fprintf(stderr, "dwc bench: error: --engine takes no %s\n", ent ? "--entities" : "--no-index");
            return 1;
        }
        return bench_engine(pol, sch, rqf, n);
    }
    dw_session s;
    dw_session_init(&s);
    int rc = 1;
    char *text = NULL;
    const char **lines = NULL;
    size_t *lens = NULL;
    vm_bench b = { .s = &s, .from_json = from_json };
    dw_read_cache_init(&b.uids, 0);
    b.uids.lend = true;          /* each line's request is done with before the next is read */
    dw_arena req_arena;
    dw_arena_init(&req_arena, 1 << 20);
    dw_arena_init(&b.json_arena, 64 * 1024);
    dw_arena_init(&b.scratch, 256 * 1024);
    if ((rc = dw_session_load_policies(&s, pol)) || (sch && (rc = dw_session_load_schema(&s, sch))) ||
        (rc = dw_session_load_entities(&s, ent)))
        goto out;
    rc = 1;
    if (s.prog->temporal.nleaves) {
        /* The LEAF instruction reads values the stateful engine computes from
         * the history before each decision; the bare VM has neither, so every
         * temporal rule would error and the figures would time decisions Box
         * never gets.  Refuse rather than report them. */
        fprintf(stderr, "dwc bench: error: %s has temporal rules (%u leaves): the VM bench cannot decide them without the"
                        " history the stateful engine keeps\n  hint: time them through the engine"
                        " (dwc bench --engine, with Box events)\n", pol, s.prog->temporal.nleaves);
        goto out;
    }
    if (no_index) s.prog->index.nslots = 0;      /* dw_authorize then runs every policy */
    size_t len, nlines = 0, nreq = 0, invalid = 0;
    if (dw_read_file(rqf, &text, &len)) { perror(rqf); goto out; }
    if (split_lines(text, &lines, &lens, &nlines) || !(b.reqs = calloc(nlines + 1, sizeof *b.reqs))) {
        fprintf(stderr, "dwc bench: out of memory\n");
        goto out;
    }
    for (size_t k = 0; k < nlines; k++) {
        dw_buf err = { 0 };
        breq *r = &b.reqs[nreq];
        if (build_request(&s, &req_arena, NULL, lines[k], lens[k], &r->req, &err) == 0) {
            dw_request_bind(&r->req, s.prog, &s.store);   /* once, as a host would */
            r->line = lines[k];
            r->len = lens[k];
            nreq++;
        } else invalid++;
        dw_buf_free(&err);
    }
    if (!nreq) { fprintf(stderr, "dwc bench: no valid request in %s\n", rqf); goto out; }
    if (!timed_run(n, nreq, invalid, vm_decide, &b, NULL)) rc = 0;
out:
    dw_buf_free(&b.err);
    free(b.reqs);
    free(lines);
    free(lens);
    free(text);
    dw_arena_free(&req_arena);
    dw_arena_free(&b.json_arena);
    dw_arena_free(&b.scratch);
    dw_session_free(&s);
    return rc;
}
