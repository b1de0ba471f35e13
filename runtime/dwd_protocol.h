/* dwd_protocol.h - the wire protocol of dwd, the decision service
 * (docs/DWD.md): one JSON object per line in, one per line out.  Parsing
 * and reply formatting only; no I/O, no engine state, so it can be unit
 * tested and fuzzed (tests/fuzz/fuzz_dwd.c).
 *
 *   {"op":"decide","action":"fs:read","input":{...}}
 *   {"op":"record","action":"fs:read","kind":"response","input":{...},"output":{...}}
 *   {"op":"stats"}   {"op":"reload","artifact":"P.dwb"}
 * Optional on decide/record: "request_id" (string), "namespace" (string: a
 * per-tool MCP action's namespace, box.md §2.3), "principal"/"resource"
 * (entity uids, default Box's fixed ones), and "time" (RFC 3339) only when
 * the server trusts client time (tests).  Decide only: "jsonrpc_id",
 * "parent_span_id" (16 hex digits) and "trace_id" (32 hex digits), which go
 * to the decision log, never into history. */
#ifndef DW_DWD_PROTOCOL_H
#define DW_DWD_PROTOCOL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DWD_MAX_LINE (1u << 20)   /* bytes per request line, newline excluded */

/* A growable byte string (NUL-terminated when non-empty). */
typedef struct dwd_buf { char *p; size_t len, cap; bool oom; } dwd_buf;
/* Room for extra more bytes and the NUL: false (and b->oom) when memory ran out. */
bool dwd_buf_reserve(dwd_buf *b, size_t extra);
/* Inline: a reply or message is a dozen small pieces, each was a call (and
 * a strlen of a literal). */
static inline void dwd_buf_put(dwd_buf *b, const char *s, size_t n)
{
    if (b->oom || (b->len + n + 1 > b->cap && !dwd_buf_reserve(b, n))) return;
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}
static inline void dwd_buf_puts(dwd_buf *b, const char *s) { dwd_buf_put(b, s, strlen(s)); }
void dwd_buf_printf(dwd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal, quotes included. */
void dwd_buf_json_string(dwd_buf *b, const char *s, size_t n);
void dwd_buf_free(dwd_buf *b);

typedef enum dwd_op { DWD_OP_DECIDE, DWD_OP_RECORD, DWD_OP_STATS, DWD_OP_RELOAD } dwd_op;

typedef struct dwd_request {
    dwd_op op;
    dwd_buf event;           /* decide/record: the event in Box's JSON form (box.md §15.2) */
    char action[128];        /* the bare action id */
    char category[8];        /* fs, net, http, shell, mcp, or "" */
    dwd_buf subject;         /* box.md §10.3's subject string (may be empty) */
    dwd_buf attrs;           /* OTLP subject attributes, comma-joined JSON objects ("" if none; DWD_REQ_LOG_ATTRS) */
    dwd_buf request_id;      /* "" if none */
    dwd_buf jsonrpc_id;      /* decide's optional "jsonrpc_id" as text ("" if none), logged as jsonrpc.request.id */
    dwd_buf artifact;        /* reload: the artifact's path */
    dwd_buf principal;       /* decide/record: the request's principal as Cedar text (Type::"id"), "" if none */
    bool per_tool;           /* a per-tool MCP action ("namespace" other than Box): no match is Allow (box.md §2.3) */
    bool has_parent_span;    /* decide's optional "parent_span_id" */
    bool has_trace_id;       /* decide's optional "trace_id" */
    uint64_t parent_span;    /* the parent span id (non-zero) */
    uint64_t trace_hi, trace_lo;   /* the trace id (non-zero) */
} dwd_request;

/* Parse one request line (without its newline).  0 on success; -1 with a
 * message in err (the reply is {"ok":false,"error":err}).  Always call
 * dwd_request_free afterwards.  flags: DWD_REQ_ALLOW_TIME accepts "time"
 * (tests), DWD_REQ_LOG_ATTRS fills attrs (only the decision log needs them),
 * DWD_REQ_GENERAL_ONLY skips the one-pass reader of the common decide line
 * (tests compare the two). */
enum { DWD_REQ_ALLOW_TIME = 1, DWD_REQ_LOG_ATTRS = 2, DWD_REQ_GENERAL_ONLY = 4 };
int dwd_parse_request(const char *line, size_t len, unsigned flags, dwd_request *rq, char *err, size_t errcap);
void dwd_request_free(dwd_request *rq);

/* Replies (each ends with '\n'). */
void dwd_reply_error(dwd_buf *out, const char *msg);
void dwd_reply_ok(dwd_buf *out);

typedef struct dwd_decision {
    bool allow;
    const char *cause;               /* dw_cause_name */
    const char *rule;                /* governing rule name, or <default-deny> */
    const char *description;         /* the governing rule's @description, or NULL */
    uint32_t ndetermining;
    const char *const *ids;          /* every determining rule's name */
    const char *const *descs;        /* their @descriptions (NULL entries when none) */
} dwd_decision;

/* The denial text of box.md §9 ("" for a permit), capped at 4096 bytes. */
void dwd_denial_message(dwd_buf *out, const char *subject, const dwd_decision *d);
void dwd_reply_decision(dwd_buf *out, const dwd_decision *d, const char *message);

/* One decision-log line (box.md §10): an OTLP-JSON resourceLogs export
 * request, '\n'-terminated.  When the request carries a parent span id the
 * record has the attribute strands.box.trace.parent_span_id. */
typedef struct dwd_log_info {
    const char *box_name, *run_id;
    int64_t time_ns;
    uint64_t trace_hi, trace_lo, span;
} dwd_log_info;
/* The resource attribute strands.box.source of every line: "box" (the
 * default) or "agent".  One per process: set once, before any thread
 * formats log lines (the pointer is kept). */
void dwd_log_set_box_source(const char *source);
void dwd_log_line(dwd_buf *out, const dwd_log_info *li, const dwd_request *rq, const dwd_decision *d, const char *message);
/* The decision's zero-length span (box.md §10.2): one OTLP-JSON
 * resourceSpans line with the record's trace and span ids, start = end =
 * time_ns, parentSpanId when the request carries one. */
void dwd_span_line(dwd_buf *out, const dwd_log_info *li, const dwd_request *rq, const dwd_decision *d);
/* A control record (box.md §10.2: scope strands-box.control; operation
 * box_started, policy_installed, policy_refused, box_stopped, ...) with
 * string attributes kv[0]=kv[1], kv[2]=kv[3], ... */
void dwd_log_control(dwd_buf *out, const dwd_log_info *li, const char *operation, const char *const *kv, size_t nkv);

#endif
