/* libFuzzer target: traces.  An input whose first non-blank byte is `@` is a
 * `.log` trace (runtime/trace_log.c, dogwood.md §17): it is parsed and every
 * event is fed to a stateful engine over Appendix B's Drupe schema with
 * temporal rules.  Anything else is Box's JSON-lines trace (what `dwc replay`
 * and dwd read, runtime/replay.c): each line is decided (kind "request" or a
 * line with "expect") or recorded through an engine on Box's vocabulary with
 * temporal budgets, each decision taken apart as `dwc explain` does (its
 * parts re-run must agree with it).  Each input starts from an empty history.
 * Never a crash, a leak or a sanitizer report; every verdict is well formed.
 * Each JSON line also goes, at a fixed clock, to a pair of engines: one gets
 * it as it is (the one-pass event reader takes the common shape), the other
 * behind an escaped member name the one-pass reader never takes on and the
 * general path ignores (tests/unit/test_event_fast.c's pairing); their
 * answers, messages (but for byte offsets) and exported states must agree.
 * A third engine keeps whole records (dw_engine_open_printing's, as dwc
 * explain opens) where the others keep only what a leaf can read
 * (runtime/engine_keep.c): its answers and history length must be theirs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lang/json.h"
#include "runtime/dogwood_parts.h"
#include "runtime/explain.h"
#include "runtime/trace_log.h"
#include "tests/fuzz/fuzz_seeds.h"
#include "tests/unit/event_pair.h"

static const char drupe_schema[] =
    "namespace Drupe {\n"
    "  entity OAuthUser = { level?: Long, team?: String } ;\n"
    "  entity Gateway;\n"
    "  entity Team;\n"
    "  action Login, Read appliesTo {\n"
    "    principal: OAuthUser,\n"
    "    resource: Gateway,\n"
    "    context: { input: { user: String } }\n"
    "  };\n"
    "}\n";

static const char drupe_policy[] =
    "permit (principal, action == Drupe::Action::\"Read\", resource)\n"
    "when temporal { formerly within 1h Drupe::Action::\"Login\"::request{ input.user: context.input.user } };\n"
    "forbid (principal, action, resource)\n"
    "when temporal { exists (n: Long). ((count for (t: Timepoint). where (\n"
    "  formerly within 10m ( Drupe::Action::\"Read\"::request{ input.user: context.input.user } && tp(t) ))) == n && n >= 3) };\n"
    "permit (principal, action == Drupe::Action::\"Login\", resource)\n"
    "unless temporal { !Drupe::Action::\"Read\"::request{ input.user: \"bob\" } since within 1h Drupe::Action::\"Login\"::request{ input.user: context.input.user } };\n"
    "permit (principal, action, resource) when { principal has level && principal.level > 2 };\n";

static dw_engine *log_engine, *box_engine, *fast_engine, *slow_engine, *whole_engine;

static int write_tmp(char *path, size_t cap, const char *suffix, const char *text)
{
    snprintf(path, cap, "/tmp/fuzz_trace_%d%s", (int)getpid(), suffix);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char sp[256], pp[256], bp[256], err[256];
    if (write_tmp(sp, sizeof sp, ".cedarschema", drupe_schema) || write_tmp(pp, sizeof pp, "-drupe.dw", drupe_policy) ||
        write_tmp(bp, sizeof bp, "-box.dw", dw_fuzz_box_policy)) abort();
    dw_engine_config lc = { .policy_path = pp, .schema_path = sp, .ticks_per_second = 1, .replay_timestamps = true };
    log_engine = dw_engine_open(&lc, err, sizeof err);
    if (!log_engine) { fprintf(stderr, "fuzz_trace: %s\n", err); abort(); }
    dw_engine_config bc = { .policy_path = bp, .schema_path = "box", .ticks_per_second = 1000000000, .replay_timestamps = true };
    box_engine = dw_engine_open(&bc, err, sizeof err);
    if (!box_engine) { fprintf(stderr, "fuzz_trace: %s\n", err); abort(); }
    bc.replay_timestamps = false;
    fast_engine = dw_engine_open(&bc, err, sizeof err);
    slow_engine = dw_engine_open(&bc, err, sizeof err);
    whole_engine = dw_engine_open_printing(&bc, err, sizeof err);
    if (!fast_engine || !slow_engine || !whole_engine) { fprintf(stderr, "fuzz_trace: %s\n", err); abort(); }
    unlink(sp); unlink(pp); unlink(bp);
    return 0;
}

static void check_verdict(const dw_verdict *v)
{
    if (!v->decided) return;
    if (v->allow && (v->cause != DW_CAUSE_PERMITTED || v->ndetermining == 0)) abort();
    if (!v->allow && v->cause == DW_CAUSE_PERMITTED) abort();
    if (!memchr(v->message, 0, sizeof v->message)) abort();
}

static void run_log(const char *text, size_t size)
{
    dw_arena a;
    dw_arena_init(&a, 16 * 1024);
    dw_source src = { "fuzz.log", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_tlog log;
    int rc = dw_tlog_parse(&a, &src, &d, &log);
    if (rc && d.nerrors == 0) abort();      /* a rejected trace always says why */
    if (rc == 0 && d.nerrors == 0) {
        dw_engine_reset_history(log_engine);
        for (size_t i = 0; i < log.n; i++) {
            const dw_tlog_event *x = &log.ev[i];
            dw_event_input in;
            if (dw_tlog_event_input(&a, x, &in)) break;
            dw_verdict v;
            memset(&v, 0, sizeof v);
            if (dw_engine_decide_event(log_engine, &in, &v)) abort();   /* the engine must stay usable */
            check_verdict(&v);
        }
    }
    dw_diags_free(&d);
    dw_tlog_free(&log);
    dw_arena_free(&a);
}

/* One line to the pair, the second behind "zz\u005f" (an escape: never the one pass). */
static void pair_line(const char *line, size_t len, bool decide, int64_t ts)
{
    static char slow[70000];
    size_t sn = event_pair_general_line(line, len, slow, sizeof slow);
    const char *sl = sn ? slow : line;   /* not an object line: both get it as it is */
    if (!sn) sn = len;
    if (decide) {
        dw_verdict a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        int ra = dw_engine_decide_json(fast_engine, line, len, ts, &a), rb = dw_engine_decide_json(slow_engine, sl, sn, ts, &b);
        if (!event_pair_same_answer(ra, &a, rb, &b) || !event_pair_same_message(a.message, b.message)) {
            fprintf(stderr, "fuzz_trace: one pass (%d, %s) and general path (%d, %s) differ on %.*s\n", ra, a.message, rb, b.message, (int)len, line);
            abort();
        }
        dw_verdict w;
        memset(&w, 0, sizeof w);
        int rw = dw_engine_decide_json(whole_engine, line, len, ts, &w);
        if (!event_pair_same_answer(ra, &a, rw, &w) || strcmp(w.message, a.message)) {
            fprintf(stderr, "fuzz_trace: kept parts (%d, %s) and whole records (%d, %s) differ on %.*s\n", ra, a.message, rw, w.message, (int)len, line);
            abort();
        }
    } else {
        char ma[256] = "", mb[256] = "";
        int ra = dw_engine_record_json(fast_engine, line, len, ts, ma, sizeof ma);
        int rb = dw_engine_record_json(slow_engine, sl, sn, ts, mb, sizeof mb);
        char mw[256] = "";
        if (dw_engine_record_json(whole_engine, line, len, ts, mw, sizeof mw) != ra || strcmp(mw, ma)) {
            fprintf(stderr, "fuzz_trace: recording: kept parts (%d, %s) and whole records (%s) differ on %.*s\n", ra, ma, mw, (int)len, line);
            abort();
        }
        if (ra != rb || (ra && !event_pair_same_message(ma, mb))) {
            fprintf(stderr, "fuzz_trace: recording: one pass (%d, %s) and general path (%d, %s) differ on %.*s\n", ra, ma, rb, mb, (int)len, line);
            abort();
        }
    }
}

static void same_states(void)
{
    void *sa = NULL, *sb = NULL;
    size_t la = 0, lb = 0;
    if (dw_engine_export_state(fast_engine, &sa, &la) || dw_engine_export_state(slow_engine, &sb, &lb)) abort();
    if (la != lb || memcmp(sa, sb, la) != 0) { fprintf(stderr, "fuzz_trace: the pair's exported states differ\n"); abort(); }
    if (dw_engine_history_length(fast_engine) != dw_engine_history_length(whole_engine)) {
        fprintf(stderr, "fuzz_trace: kept parts and whole records keep different numbers of events\n");
        abort();
    }
    dw_free(sa);
    dw_free(sb);
}

static void run_jsonl(const char *text, size_t size)
{
    dw_engine_reset_history(fast_engine);
    dw_engine_reset_history(slow_engine);
    dw_engine_reset_history(whole_engine);
    int64_t pair_ts = 1748865600LL * 1000000000LL;
    dw_engine_reset_history(box_engine);
    dw_arena a;
    dw_arena_init(&a, 16 * 1024);
    size_t lineno = 0;
    for (size_t i = 0; i < size;) {
        const char *line = text + i;
        const char *nl = memchr(line, '\n', size - i);
        size_t ll = nl ? (size_t)(nl - line) : size - i;
        i += ll + 1;
        if (++lineno > 4096) break;
        dw_arena_reset(&a);
        dw_source src = { "fuzz.jsonl", line, ll };
        dw_diags d;
        dw_diags_init(&d);
        const dw_json *j = dw_json_parse(&a, &src, &d);
        dw_diags_free(&d);
        /* replay.c decides requests and lines with an expectation, records the rest;
         * every line goes to both paths here, whatever it parses to */
        const dw_json *kind = j ? dw_json_get(j, "kind") : NULL;
        bool is_request = kind && kind->kind == DW_JSON_STRING && strcmp(kind->u.str.s, "request") == 0;
        dw_verdict v;
        memset(&v, 0, sizeof v);
        bool decide = is_request || (j && dw_json_get(j, "expect"));
        pair_line(line, ll, decide, pair_ts += 1000000);
        if (decide) {
            /* dwc explain's account of the decision: its parts, re-run, agree with it */
            dw_explanation x;
            dw_explanation_init(&x);
            dw_engine_explain_next(box_engine, &x);
            if (dw_engine_decide_json(box_engine, line, ll, DW_TS_NOW, &v)) abort();
            dw_engine_explain_next(box_engine, NULL);
            if (x.done && x.ndisagree) { fprintf(stderr, "fuzz_trace: explain disagrees: %s\n", x.disagree); abort(); }
            if (x.done && (x.v.allow != v.allow || x.v.cause != v.cause)) abort();
            dw_explanation_free(&x);
            check_verdict(&v);
            if (!v.allow && v.decided && v.cause == DW_CAUSE_PERMITTED) abort();
        } else {
            char msg[256];
            dw_engine_record_json(box_engine, line, ll, DW_TS_NOW, msg, sizeof msg);
            /* a Cedar-shaped request line (box.md §15.1) */
            if (j && dw_json_get(j, "principal") && dw_engine_decide_request_json(box_engine, line, ll, DW_TS_NOW, &v)) abort();
            check_verdict(&v);
        }
    }
    same_states();
    dw_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    size_t first = 0;
    while (first < size && (text[first] == ' ' || text[first] == '\t' || text[first] == '\r' || text[first] == '\n')) first++;
    if (first < size && text[first] == '@') run_log(text, size);
    else run_jsonl(text, size);
    free(text);
    return 0;
}
