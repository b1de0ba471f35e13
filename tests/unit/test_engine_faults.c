/* test_engine_faults.c - the engine fails closed under every fault (issue 13):
 *
 *   * memory pressure: the N-th allocation of a record, a decision, the
 *     history's growth and its compaction (history_retain) fails, for every
 *     N along the call, once or from then on (tests/unit/alloc_fail.c wraps
 *     the library's malloc family).  Then: no crash (nor use-after-free
 *     under ASan); the call reports failure when it did not do its job; an
 *     engine whose history missed an event denies every decision (cause
 *     internal_fault) and fails every record until it is whole again
 *     (dw_engine_reset_history, or a reopen that replays the durable log);
 *     and after recovery every verdict equals an uninterrupted run's.  The
 *     durable engine is driven as dwd drives it (submit + wait).
 *   * an event timed 1970-01-01T00:00:00Z is at time 0, not "now" (DW_TS_NOW);
 *   * Box mode refuses a principal other than Box::Agent::"self", a resource
 *     other than Box::Resource::"unused", and strings with NUL bytes;
 *   * NULL arguments are errors; decide on a non-decision event never
 *     leaves cause PERMITTED;
 *   * opening from an artifact (dwd's way, runtime/engine_open.h) under
 *     memory pressure at every allocation: refused with a reason, or open
 *     and deciding; nothing leaks (LSan in the ASan build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/dogwood_parts.h"
#include "compiler/artifact_serve.h"
#include "compiler/artifact_write.h"
#include "runtime/engine_open.h"
#include "runtime/load.h"
#include "tests/unit/alloc_fail.h"

static char dir[256];
static char policy[300], policy2[300];
static int dirs;

/* A per-host burst budget (a monitor idiom) and a nested formula (the
 * general evaluator): verdicts depend on every event of the last 3 s. */
static const char policy_text[] =
    "@id(\"example_hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource) when { context.input.host like \"*.example.com\" };\n"
    "@id(\"per_host_budget\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when temporal {\n"
    "  exists (n: Long). (\n"
    "    (count for (t: Timepoint). where (\n"
    "      formerly within 1s ( Box::Action::\"http:request\"::request{ input.host: context.input.host } && tp(t) )\n"
    "    )) == n && n > 6\n"
    "  )\n"
    "};\n"
    "@id(\"error_after_response\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource) when temporal {\n"
    "  formerly within 2s (\n"
    "    Box::Action::\"http:request\"::error{ input.host: context.input.host }\n"
    "    && formerly within 1s Box::Action::\"http:request\"::response{ input.host: context.input.host }\n"
    "  )\n"
    "};\n";

/* For the single-rule tests: an error in the last hour denies. */
static const char after_error_text[] =
    "@id(\"hosts\")\n"
    "permit (principal, action == Box::Action::\"http:request\", resource)\n"
    "when { context.input.host like \"*.example.com\" };\n"
    "@id(\"after_error\")\n"
    "forbid (principal, action == Box::Action::\"http:request\", resource)\n"
    "when temporal { formerly within 1h Box::Action::\"http:request\"::error{ input.host: context.input.host } };\n";

#define HTTP(kind, time, extra) \
    "{\"action\":\"http:request\",\"kind\":\"" kind "\"" time ",\"input\":{\"host\":\"h.example.com\",\"port\":443," \
    "\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}" extra "}"

/* ---- the script: decisions and records, 50 ms apart ---- */

#define NOPS 1100
#define BIG_AT 700           /* ops BIG_AT, BIG_AT + 1 carry a 300 KB path: new arena chunks */
#define BIG_LATE 1015        /* and these two, in the window of the first compaction (op 1023):
                                its copy then takes several chunks, and can fail midway */
#define BIG_PATH (300 * 1024)
static const int64_t T0 = 1700000000LL * 1000000000LL;

typedef struct op { int kind; int host; int64_t ts; } op;   /* kind 0 decide, 1 response, 2 error */
static op ops[NOPS];

typedef struct outcome { bool ok; bool allow; int cause; char msg[256]; } outcome;
static outcome ref[NOPS];
static int retain_at;        /* the first op after which the history was compacted */

static char *jbuf;

static const char *op_json(int i)
{
    static const char *kinds[] = { "request", "response", "error" };
    const op *o = &ops[i];
    bool big = i == BIG_AT || i == BIG_AT + 1 || i == BIG_LATE || i == BIG_LATE + 1;
    int n = snprintf(jbuf, 1024, "{\"action\":\"http:request\",\"kind\":\"%s\",\"input\":{\"host\":\"h%d.example.com\",\"port\":443,"
                     "\"method\":\"GET\",\"path\":\"/", kinds[o->kind], o->host);
    if (big) { memset(jbuf + n, 'p', BIG_PATH); n += BIG_PATH; }
    snprintf(jbuf + n, 1024, "\",\"body_bytes\":0,\"intercepted\":true}%s}", o->kind == 1 ? ",\"output\":{\"status\":200}" : "");
    return jbuf;
}

static void make_script(void)
{
    unsigned seed = 4242;
    for (int i = 0; i < NOPS; i++) {
        int r = (int)(rand_r(&seed) % 10);
        ops[i] = (op){ r < 6 ? 0 : r < 9 ? 1 : 2, (int)(rand_r(&seed) % 2), T0 + (int64_t)i * 50000000 };
    }
    /* both call kinds where the history's arrays grow and at the big events */
    ops[0].kind = 0; ops[1].kind = 1; ops[255].kind = 0; ops[256].kind = 1; ops[257].kind = 0;
    ops[BIG_AT].kind = 1; ops[BIG_AT + 1].kind = 0;
}

/* One op as a host would send it: the JSON entry points (memory), or dwd's
 * submit + wait (durable). */
static outcome run_json(dw_engine *e, const char *json, int kind, int64_t ts, bool dwd)
{
    outcome o = { 0 };
    dw_verdict v;
    if (dwd) {
        uint64_t t = 0;
        int rc = dw_engine_submit_json(e, json, strlen(json), ts, kind ? DW_OBSERVE_RECORD : DW_OBSERVE_DECIDE, &v, &t);
        if (rc == 1 && dw_engine_wait(e, t)) {   /* dwd: not durable, treat as denied */
            rc = 0;
            v.allow = false;
            v.cause = DW_CAUSE_INTERNAL_FAULT;
        }
        o.ok = rc == 1;
    } else if (kind) {
        char err[256] = "";
        o.ok = dw_engine_record_json(e, json, strlen(json), ts, err, sizeof err) == 0;
        if (!o.ok) assert_true(err[0] != 0);        /* a failure says why */
        snprintf(v.message, sizeof v.message, "%s", err);
        v.allow = false;
        v.cause = DW_CAUSE_INTERNAL_FAULT;
    } else {
        assert_int_equal(dw_engine_decide_json(e, json, strlen(json), ts, &v), 0);
        assert_true(v.decided);
        o.ok = true;
    }
    if (!kind) { o.allow = v.allow; o.cause = (int)v.cause; }
    snprintf(o.msg, sizeof o.msg, "%s", v.message);
    return o;
}

static outcome run_op(dw_engine *e, int i, bool dwd) { return run_json(e, op_json(i), ops[i].kind, ops[i].ts, dwd); }

static bool same(const outcome *a, const outcome *b, int kind)
{
    return kind ? a->ok == b->ok : a->allow == b->allow && a->cause == b->cause;
}

static void expect_same(const outcome *got, const outcome *want, int i, const char *what)
{
    if (!same(got, want, ops[i].kind)) {
        fprintf(stderr, "%s: op %d (kind %d): got ok=%d allow=%d cause=%d (%s), want ok=%d allow=%d cause=%d\n", what, i,
                ops[i].kind, got->ok, got->allow, got->cause, got->msg, want->ok, want->allow, want->cause);
        fail();
    }
}

static dw_engine *open_memory(const char *pol)
{
    dw_engine_config cfg = { .policy_path = pol, .schema_path = "box" };
    char err[512];
    dw_engine *e = dw_engine_open(&cfg, err, sizeof err);
    if (!e) fprintf(stderr, "open: %s\n", err);
    assert_non_null(e);
    return e;
}

static char state[300];

static dw_engine *open_durable(bool fresh, dw_engine_recovery *rec)
{
    if (fresh) snprintf(state, sizeof state, "%s/state%d", dir, dirs++);
    dw_engine_config cfg = { .policy_path = policy, .schema_path = "box" };
    /* no background checkpointer: every allocation of a call is the call's */
    dw_engine_durable d = { .state_dir = state, .durability = 2, .checkpoint_every = -1 };
    char err[512];
    dw_engine *e = dw_engine_open_durable(&cfg, &d, rec, err, sizeof err);
    if (!e) fprintf(stderr, "open_durable: %s\n", err);
    assert_non_null(e);
    return e;
}

/* The verdicts of an uninterrupted run without op `skip` (-1: of all ops). */
static void reference(int skip, outcome *out)
{
    dw_engine *e = open_memory(policy);
    uint32_t prev = 0;
    for (int i = 0; i < NOPS; i++) {
        if (i == skip) continue;
        out[i] = run_op(e, i, false);
        uint32_t n = dw_engine_history_length(e);
        if (skip < 0 && n < prev && !retain_at) retain_at = i;
        prev = n;
    }
    dw_engine_close(e);
}

/* A decision no rule reads (fs:read): denied with "policy history failure"
 * while the engine refuses events, else harmlessly appended. */
static bool refusing(dw_engine *e, int64_t ts, bool dwd)
{
    static const char probe[] = "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/probe\",\"operation\":\"read_content\"}}";
    outcome o = run_json(e, probe, 0, ts, dwd);
    if (o.cause != DW_CAUSE_INTERNAL_FAULT) return false;
    assert_non_null(strstr(o.msg, "policy history failure"));
    return true;
}

static uint64_t next_seq(dw_engine *e)
{
    dw_engine_stats st;
    dw_engine_get_stats(e, &st);
    return st.next_seq;
}

/* The reference engine's state (dw_engine_export_state: every event some
 * window reaches) after op k. */
static void *ref_state;
static size_t ref_state_len;

static void reference_state(int k)
{
    free(ref_state);
    dw_engine *e = open_memory(policy);
    for (int i = 0; i <= k; i++) run_op(e, i, false);
    assert_int_equal(dw_engine_export_state(e, &ref_state, &ref_state_len), 0);
    dw_engine_close(e);
}

/* How the faulted calls ended (test_paths_covered requires each). */
static struct { int lost_reset, lost_retried, lost_reopened, not_taken, absorbed; } paths;

/* Op k with its n-th allocation failed; true if that allocation was reached. */
static bool fault_at(int k, long n, bool persistent, bool durable)
{
    dw_engine_recovery rec;
    dw_engine *e = durable ? open_durable(true, &rec) : open_memory(policy);
    for (int i = 0; i < k; i++) {
        outcome o = run_op(e, i, durable);
        expect_same(&o, &ref[i], i, "before the fault");
    }
    uint64_t s0 = next_seq(e);
    dw_test_fail_alloc_after(n, persistent);
    outcome o = run_op(e, k, durable);
    bool fired = dw_test_alloc_disarm();
    bool appended = next_seq(e) == s0 + 1;
    /* read every retained event, as a checkpoint does */
    void *st = NULL;
    size_t stlen = 0;
    int strc = dw_engine_export_state(e, &st, &stlen);
    static outcome without[NOPS];
    const outcome *want = ref;
    bool refused = dw_engine_history_error(e)[0] != 0;
    if (!refused) assert_false(refusing(e, ops[k].ts + 1, durable));
    if (!refused && appended && (ops[k].kind ? o.ok : same(&o, &ref[k], 0))) {
        assert_int_equal(strc, 0);               /* the history is whole */
        assert_true(stlen == ref_state_len && !memcmp(st, ref_state, stlen));
    }
    free(st);
    if (refused) {
        /* the call failed, and the engine denies until it is whole again;
         * a durable engine that kept the lost event retries it on every
         * call, so memory stays short while that is checked */
        assert_false(o.ok && ops[k].kind);
        if (!ops[k].kind) assert_int_equal(o.cause, DW_CAUSE_INTERNAL_FAULT);
        bool retries = strstr(dw_engine_history_error(e), "retried") != NULL;
        assert_true(!retries || durable);
        if (retries) dw_test_fail_alloc_after(0, true);
        assert_true(refusing(e, ops[k].ts + 1, durable));
        assert_true(refusing(e, ops[k].ts + 2, durable));
        if (k + 1 < NOPS) {
            outcome r = run_op(e, k + 1, durable);
            assert_true(ops[k + 1].kind ? !r.ok : r.cause == DW_CAUSE_INTERNAL_FAULT);
        }
        dw_test_alloc_disarm();
        if (!durable) {
            paths.lost_reset++;
            dw_engine_reset_history(e);           /* recovery: an explicit, empty history */
            assert_string_equal(dw_engine_history_error(e), "");
            for (int i = 0; i < NOPS; i++) {
                outcome r = run_op(e, i, false);
                expect_same(&r, &ref[i], i, "after reset");
            }
            dw_engine_close(e);
            return fired;
        }
        if (retries) {                            /* recovery in place, once memory is back */
            paths.lost_retried++;
            assert_false(refusing(e, ops[k].ts + 3, true));
            assert_string_equal(dw_engine_history_error(e), "");
            appended = true;
        } else {
            paths.lost_reopened++;
            dw_engine_close(e);                   /* recovery: reopen replays the log */
            e = open_durable(false, &rec);
            assert_string_equal(dw_engine_history_error(e), "");
            assert_true(rec.events == (uint64_t)k || rec.events == (uint64_t)k + 1);
            appended = rec.events == (uint64_t)k + 1;
            if (!appended && ops[k].kind) { o = run_op(e, k, true); assert_true(o.ok); appended = true; }
        }
    } else if (ops[k].kind && !o.ok) {
        paths.not_taken++;
        assert_false(appended);                   /* not recorded, and the caller knows: it may retry */
        o = run_op(e, k, durable);
        assert_true(o.ok);
        appended = true;
    } else if (!ops[k].kind && !same(&o, &ref[k], 0)) {
        assert_int_equal(o.cause, DW_CAUSE_INTERNAL_FAULT);   /* a fault is a deny */
    }
    if (!refused && fired && appended && (ops[k].kind ? o.ok : same(&o, &ref[k], 0))) paths.absorbed++;
    if (!appended) {                              /* a decision denied before it entered the history */
        if (!refused) paths.not_taken++;
        assert_false(ops[k].kind);
        assert_int_equal(o.cause, DW_CAUSE_INTERNAL_FAULT);
        reference(k, without);
        want = without;
    }
    for (int i = k + 1; i < NOPS; i++) {
        outcome r = run_op(e, i, durable);
        expect_same(&r, &want[i], i, "after the fault");
    }
    dw_engine_close(e);
    return fired;
}

/* Every allocation of op k, failed once and from then on. */
static void sweep(int k, bool durable)
{
    reference_state(k);
    for (int persistent = 0; persistent < 2; persistent++) {
        long n = 0;
        while (fault_at(k, n, persistent, durable)) {
            n++;
            assert_true(n < 500);
        }
        if (getenv("FAULTS_VERBOSE")) fprintf(stderr, "op %d (kind %d) %s%s: %ld allocations\n", k, ops[k].kind,
                                              durable ? "durable" : "memory", persistent ? " persistent" : "", n);
    }
}

/* dir/name := text; path: its name */
static bool write_policy(char *path, size_t cap, const char *name, const char *text)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    return f && fputs(text, f) >= 0 && fclose(f) == 0;
}

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "%s/dw_faults_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return -1;
    if (!write_policy(policy, sizeof policy, "faults.dw", policy_text) ||
        !write_policy(policy2, sizeof policy2, "after_error.dw", after_error_text)) return -1;
    jbuf = malloc(BIG_PATH + 2048);
    if (!jbuf) return -1;
    make_script();
    reference(-1, ref);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    free(jbuf);
    free(ref_state);
    return system(cmd) == 0 ? 0 : -1;
}

/* the script exercises what it means to: varied verdicts, a compaction */
static void test_script_shape(void **st)
{
    (void)st;
    int allow = 0, deny = 0;
    for (int i = 0; i < NOPS; i++)
        if (!ops[i].kind) ref[i].allow ? allow++ : deny++;
    assert_true(allow > 50 && deny > 50);
    assert_true(retain_at > BIG_LATE + 1 && ops[retain_at].ts - ops[BIG_LATE].ts < 1000000000);
}

static void test_oom_first_events(void **st) { (void)st; sweep(0, false); sweep(1, false); sweep(0, true); sweep(1, true); }
static void test_oom_history_growth(void **st) { (void)st; for (int k = 255; k <= 257; k++) sweep(k, false); sweep(256, true); }
static void test_oom_big_events(void **st) { (void)st; sweep(BIG_AT, false); sweep(BIG_AT + 1, false); sweep(BIG_AT, true); sweep(BIG_AT + 1, true); }
static void test_oom_compaction(void **st)
{
    (void)st;
    sweep(retain_at, false);
    sweep(retain_at, true);
}

static void test_paths_covered(void **st)
{
    (void)st;
    if (getenv("FAULTS_VERBOSE"))
        fprintf(stderr, "lost+reset %d, lost+retried %d, lost+reopened %d, not taken %d, absorbed %d\n", paths.lost_reset,
                paths.lost_retried, paths.lost_reopened, paths.not_taken, paths.absorbed);
    assert_true(paths.lost_reset && paths.lost_retried && paths.lost_reopened && paths.not_taken && paths.absorbed);
}

/* ---- time 0 is a time (row 6) ---- */


static void test_epoch_is_a_time(void **st)
{
    (void)st;
    char err[256];
    dw_verdict v;
    /* the error at the epoch is two hours before the decision: out of the 1 h window */
    dw_engine *e = open_memory(policy2);
    const char *er = HTTP("error", ",\"time\":\"1970-01-01T00:00:00Z\"", "");
    const char *rq = HTTP("request", ",\"time\":\"1970-01-01T02:00:00Z\"", "");
    assert_int_equal(dw_engine_record_json(e, er, strlen(er), DW_TS_NOW, err, sizeof err), 0);
    assert_int_equal(dw_engine_decide_json(e, rq, strlen(rq), DW_TS_NOW, &v), 0);
    assert_int_equal(v.timestamp, 7200LL * 1000000000LL);
    assert_true(v.allow);
    dw_engine_close(e);
    /* the same with the times given as ticks: 0 is the epoch */
    e = open_memory(policy2);
    const char *er2 = HTTP("error", "", ""), *rq2 = HTTP("request", "", "");
    assert_int_equal(dw_engine_record_json(e, er2, strlen(er2), 0, err, sizeof err), 0);
    assert_int_equal(dw_engine_decide_json(e, rq2, strlen(rq2), 1800LL * 1000000000LL, &v), 0);
    assert_false(v.allow);               /* half an hour after the error: in the window */
    assert_int_equal(dw_engine_decide_json(e, rq2, strlen(rq2), 7200LL * 1000000000LL, &v), 0);
    assert_true(v.allow);
    /* DW_TS_NOW without "time" is the clock */
    assert_int_equal(dw_engine_decide_json(e, rq2, strlen(rq2), DW_TS_NOW, &v), 0);
    assert_true(v.timestamp > 1700000000LL * 1000000000LL);
    dw_engine_close(e);
}

/* ---- Box mode's refusals (row 7, NUL bytes) ---- */

static void expect_refused(dw_engine *e, const char *json, const char *why)
{
    dw_verdict v;
    uint32_t n = dw_engine_history_length(e);
    assert_int_equal(dw_engine_decide_json(e, json, strlen(json), DW_TS_NOW, &v), 0);
    assert_true(v.decided);
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    if (!strstr(v.message, why)) fail_msg("message '%s' lacks '%s'", v.message, why);
    assert_int_equal(dw_engine_history_length(e), n);   /* never recorded */
}

static void test_box_scope(void **st)
{
    (void)st;
    dw_engine *e = open_memory(policy2);
    expect_refused(e, HTTP("request", ",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"other\"}", ""), "Box::Agent::\"self\"");
    expect_refused(e, HTTP("request", ",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"}", ",\"resource\":{\"type\":\"Box::Resource\",\"id\":\"x\"}"),
                   "Box::Resource::\"unused\"");
    /* a Cedar-shaped request too */
    static const char cr[] = "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"mallory\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"http:request\"},"
                             "\"resource\":{\"type\":\"Box::Resource\",\"id\":\"unused\"},\"context\":{\"input\":{\"host\":\"h.example.com\","
                             "\"port\":443,\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}}}";
    dw_verdict v;
    assert_int_equal(dw_engine_decide_request_json(e, cr, strlen(cr), DW_TS_NOW, &v), 0);
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_non_null(strstr(v.message, "Box::Agent::\"self\""));
    /* Box's own principal, given explicitly, is taken */
    const char *ok = HTTP("request", ",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"}", "");
    assert_int_equal(dw_engine_decide_json(e, ok, strlen(ok), DW_TS_NOW, &v), 0);
    assert_true(v.allow);
    /* a record from another principal fails */
    char err[256];
    const char *rec = HTTP("response", ",\"principal\":{\"type\":\"Box::Agent\",\"id\":\"other\"}", ",\"output\":{\"status\":200}");
    assert_int_not_equal(dw_engine_record_json(e, rec, strlen(rec), DW_TS_NOW, err, sizeof err), 0);
    assert_non_null(strstr(err, "Box::Agent::\"self\""));
    dw_engine_close(e);
}

static void test_box_nul(void **st)
{
    (void)st;
    dw_engine *e = open_memory(policy2);
    expect_refused(e, "{\"action\":\"fs:read\",\"kind\":\"request\",\"input\":{\"path\":\"~/project/.env\\u0000\",\"operation\":\"read_content\"}}",
                   "NUL byte (input.path)");
    expect_refused(e, "{\"action\":\"http:request\",\"kind\":\"request\",\"input\":{\"host\":\"h.example.com\\u0000.evil\",\"port\":443,"
                      "\"method\":\"GET\",\"path\":\"/x\",\"body_bytes\":0,\"intercepted\":true}}", "NUL byte (input.host)");
    expect_refused(e, "{\"action\":\"shell:exec\",\"kind\":\"request\",\"input\":{\"command\":\"ls\",\"program\":\"ls\",\"arg1\":\"-l\\u0000x\","
                      "\"arg_count\":1,\"cwd\":\"~\"}}", "NUL byte (input.arg1)");
    expect_refused(e, "{\"action\":\"shell:spawn\",\"kind\":\"request\",\"input\":{\"command\":\"ls\",\"program\":\"ls\",\"arg_count\":0,"
                      "\"cwd\":\"~\",\"program_path\":\"/bin/ls\",\"credential_reads\":[\"~/.aws\\u0000\"]}}", "NUL byte (input.credential_reads)");
    char err[256];
    const char *rec = "{\"action\":\"fs:read\",\"kind\":\"response\",\"input\":{\"path\":\"~/a\\u0000b\",\"operation\":\"read_content\"},"
                      "\"output\":{\"result\":\"ok\"}}";
    assert_int_not_equal(dw_engine_record_json(e, rec, strlen(rec), DW_TS_NOW, err, sizeof err), 0);
    assert_non_null(strstr(err, "NUL"));
    dw_engine_close(e);
}

/* ---- NULL arguments (row 15) ---- */

static void test_null_arguments(void **st)
{
    (void)st;
    char err[256];
    dw_verdict v;
    dw_engine_config none = { 0 };
    assert_null(dw_engine_open(NULL, err, sizeof err));
    assert_null(dw_engine_open(&none, err, sizeof err));
    assert_null(dw_engine_open(&none, NULL, 0));
    assert_null(dw_engine_open_durable(NULL, NULL, NULL, NULL, 0));
    const char *rq = HTTP("request", "", ""), *rs = HTTP("response", "", ",\"output\":{\"status\":200}");
    size_t n = strlen(rq);
    memset(&v, 0, sizeof v);
    v.allow = true;
    assert_int_equal(dw_engine_decide_json(NULL, rq, n, DW_TS_NOW, &v), -1);
    assert_false(v.allow);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_int_equal(dw_engine_record_json(NULL, rs, strlen(rs), DW_TS_NOW, err, sizeof err), -1);
    assert_int_equal(dw_engine_record_json(NULL, rs, strlen(rs), DW_TS_NOW, NULL, 0), -1);
    assert_int_equal(dw_engine_decide_request_json(NULL, rq, n, DW_TS_NOW, &v), -1);
    assert_int_equal(dw_engine_decide_event(NULL, NULL, &v), -1);
    assert_int_equal(dw_engine_observe_json(NULL, rq, n, DW_TS_NOW, DW_OBSERVE_DECIDE, NULL, NULL, &v), -1);
    uint64_t t;
    assert_int_equal(dw_engine_submit_json(NULL, rq, n, DW_TS_NOW, DW_OBSERVE_DECIDE, &v, &t), -1);
    assert_int_equal(dw_engine_wait(NULL, 1), -1);
    assert_string_equal(dw_engine_history_error(NULL), "no engine");
    assert_int_equal(dw_engine_history_length(NULL), 0);
    assert_int_equal(dw_engine_checkpoint(NULL), -1);
    assert_int_equal(dw_engine_reload(NULL, NULL, 0, NULL, NULL, 0), -1);
    assert_int_equal(dw_engine_import_state(NULL, NULL, 0, NULL, 0), -1);
    dw_engine_reset_history(NULL);
    dw_engine_close(NULL);
    dw_engine_get_stats(NULL, NULL);
    assert_non_null(dw_engine_rule_name(NULL, 0));

    dw_engine *e = open_memory(policy2);
    assert_int_equal(dw_engine_decide_json(e, NULL, 0, DW_TS_NOW, &v), -1);
    assert_int_equal(v.cause, DW_CAUSE_INTERNAL_FAULT);
    assert_int_equal(dw_engine_decide_json(e, rq, n, DW_TS_NOW, NULL), -1);
    assert_int_equal(dw_engine_record_json(e, NULL, 0, DW_TS_NOW, err, sizeof err), -1);
    assert_int_equal(dw_engine_decide_request_json(e, NULL, 0, DW_TS_NOW, &v), -1);
    assert_int_equal(dw_engine_decide_request_json(e, rq, n, DW_TS_NOW, NULL), -1);
    assert_int_equal(dw_engine_decide_event(e, NULL, &v), -1);
    assert_int_equal(dw_engine_observe_json(e, NULL, 0, DW_TS_NOW, DW_OBSERVE_DECIDE, NULL, NULL, &v), -1);
    assert_int_equal(dw_engine_submit_json(e, rq, n, DW_TS_NOW, DW_OBSERVE_DECIDE, &v, NULL), -1);
    assert_int_equal(dw_engine_export_state(e, NULL, NULL), -1);
    assert_int_equal(dw_engine_reload(e, NULL, 0, NULL, err, sizeof err), -1);
    assert_int_equal(dw_engine_import_state(e, NULL, 0, err, sizeof err), -1);
    assert_int_equal(dw_engine_history_length(e), 0);
    /* decide on a non-decision event: recorded, not decided, never PERMITTED */
    assert_int_equal(dw_engine_decide_json(e, rs, strlen(rs), DW_TS_NOW, &v), 0);
    assert_false(v.decided);
    assert_false(v.allow);
    assert_int_not_equal(v.cause, DW_CAUSE_PERMITTED);
    dw_engine_stats es;                  /* appended (no leaf needs a ::response: not retained) */
    dw_engine_get_stats(e, &es);
    assert_int_equal(es.next_seq, 1);
    dw_engine_close(e);
}

/* ---- opening from an artifact under memory pressure ---- */

static void test_oom_artifact_open(void **st)
{
    (void)st;
    dw_session s;
    dw_session_init(&s);
    s.quiet = true;
    assert_int_equal(dw_session_load_schema(&s, "box"), 0);
    assert_int_equal(dw_session_load_events(&s, NULL), 0);
    assert_int_equal(dw_session_load_policies(&s, policy), 0);
    assert_int_equal(dw_artifact_attach_serve(s.prog, s.schema, s.es, dw_session_events_digest(&s)), 0);
    dw_buf a = { 0 };
    assert_int_equal(dw_artifact_write(s.prog, dw_session_schema_digest(&s), &a), 0);
    dw_session_free(&s);
    dw_engine_config cfg = { .policy_path = "p.dwb", .schema_path = "box" };
    const char *rq = HTTP("request", "", "");
    for (int persistent = 0; persistent < 2; persistent++) {
        long n = 0;
        for (;; n++) {
            char err[512] = "";
            dw_test_fail_alloc_after(n, persistent);
            dw_engine *e = dw_engine_open_artifact(&cfg, a.p, a.len, err, sizeof err);
            bool failed = dw_test_alloc_disarm();
            if (!e) { assert_true(failed); assert_non_null(strstr(err, "p.dwb: error: ")); continue; }
            dw_verdict v;
            assert_int_equal(dw_engine_decide_json(e, rq, strlen(rq), DW_TS_NOW, &v), 0);
            assert_true(v.decided);
            dw_engine_close(e);
            if (!failed) break;      /* every allocation of the open has been failed once */
        }
        assert_true(n > 10);
    }
    dw_buf_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_shape),
        cmocka_unit_test(test_oom_first_events),
        cmocka_unit_test(test_oom_history_growth),
        cmocka_unit_test(test_oom_big_events),
        cmocka_unit_test(test_oom_compaction),
        cmocka_unit_test(test_paths_covered),
        cmocka_unit_test(test_epoch_is_a_time),
        cmocka_unit_test(test_box_scope),
        cmocka_unit_test(test_box_nul),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_oom_artifact_open),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
