/* dwd_protocol.c - request parsing and reply formatting for dwd (see
 * dwd_protocol.h and docs/DWD.md). */
#include "dwd_protocol.h"
#include "dogwood.h"   /* DW_VERSION_STRING: the OTLP scope version */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lang/json.h"
#include "../lang/json_scan.h"
#include "../stdlib/arena.h"
#include "../stdlib/bytes.h"
#include "../stdlib/cedar_quote.h"
#include "../stdlib/digits.h"
#include "../stdlib/utf8.h"
#include "../stdlib/hot.h"

/* ---- buffers ---- */

bool dwd_buf_reserve(dwd_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + extra + 1) nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p) { b->oom = true; return false; }
    b->p = p;
    b->cap = nc;
    return true;
}

void dwd_buf_printf(dwd_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { dwd_buf_put(b, tmp, (size_t)n); return; }
    if (!dwd_buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static int dwd_buf_sink(void *ctx, const char *p, size_t n)
{
    dwd_buf_put(ctx, p, n);
    return ((dwd_buf *)ctx)->oom;
}

/* Responses and decision-log lines must parse: bytes that are not UTF-8
 * become U+FFFD.  Printable ASCII with no quote or backslash (rule names,
 * most messages) is one copy; anything else goes through dw_json_escape. */
void dwd_buf_json_string(dwd_buf *b, const char *s, size_t n)
{
    if (dw_json_scan_plain(s, 0, n) < n || (n && memchr(s, 0x7f, n))) { dw_json_escape(dwd_buf_sink, b, s, n, DW_JSON_REPLACE); return; }
    if (!dwd_buf_reserve(b, n + 2)) return;
    b->p[b->len] = '"';
    if (n) memcpy(b->p + b->len + 1, s, n);
    b->p[b->len + 1 + n] = '"';
    b->len += n + 2;
    b->p[b->len] = 0;
}

void dwd_buf_free(dwd_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Append at most `cap` bytes of s; a truncated part ends with "..." (within
 * the cap) and is not cut inside a UTF-8 sequence. */
static void put_capped(dwd_buf *b, const char *s, size_t n, size_t cap)
{
    if (n <= cap) { dwd_buf_put(b, s, n); return; }
    size_t k = cap > 3 ? cap - 3 : 0;
    while (k && dw_utf8_is_cont((unsigned char)s[k])) k--;
    dwd_buf_put(b, s, k);
    dwd_buf_put(b, "...", 3);
}

/* ---- requests ---- */

static void put_span(dwd_buf *b, const char *line, const dw_json *j) { dwd_buf_put(b, line + j->off, j->end - j->off); }

static const dw_json *str_member(const dw_json *o, const char *k)
{
    const dw_json *j = dw_json_get(o, k);
    return j && j->kind == DW_JSON_STRING ? j : NULL;
}

static void attr_str(dwd_buf *a, const char *key, const char *s, size_t n)
{
    if (!a) return;
    dwd_buf_puts(a, a->len ? ",{\"key\":\"" : "{\"key\":\"");   /* keys are literals: no escaping, no printf */
    dwd_buf_puts(a, key);
    dwd_buf_puts(a, "\",\"value\":{\"stringValue\":");
    dwd_buf_json_string(a, s, n);
    dwd_buf_puts(a, "}}");
}

static void attr_int(dwd_buf *a, const char *key, int64_t v)
{
    if (!a) return;
    if (a->len) dwd_buf_put(a, ",", 1);
    dwd_buf_printf(a, "{\"key\":\"%s\",\"value\":{\"intValue\":\"%lld\"}}", key, (long long)v);
}

/* The decision log's strands.box.policy.principal: an entity uid
 * {"type":T,"id":I} as Cedar writes it, T::"I" (quote, backslash and control
 * characters escaped); anything else as its JSON text (the gate refuses it). */
static void principal_text(dwd_buf *b, const char *line, const dw_json *pr)
{
    const dw_json *t = str_member(pr, "type"), *id = str_member(pr, "id");
    if (!t || !id || pr->u.obj.n != 2 || memchr(t->u.str.s, 0, t->u.str.len)) { put_span(b, line, pr); return; }
    dwd_buf_put(b, t->u.str.s, t->u.str.len);
    dwd_buf_puts(b, "::\"");
    dw_cedar_escape(dwd_buf_sink, b, id->u.str.s, id->u.str.len, false);
    dwd_buf_puts(b, "\"");
}

/* The input's top-level members subject_of reads: from the JSON tree (j),
 * or as the one-pass reader found them (m[0, n): strings with no escape,
 * integers; any other value a member of another kind).  The first member
 * of a name counts, as dw_json_get finds it. */
typedef struct in_member { const char *k; size_t kn; dw_json_kind kind; const char *s; size_t sn; int64_t i; } in_member;
typedef struct in_view { const dw_json *j; const in_member *m; size_t n; } in_view;

static const in_member *in_get(const in_view *v, const char *key, dw_json_kind kind, in_member *tmp)
{
    if (v->j) {
        const dw_json *x = dw_json_get(v->j, key);
        if (!x || x->kind != kind) return NULL;
        *tmp = (in_member){ key, 0, kind, kind == DW_JSON_STRING ? x->u.str.s : NULL, kind == DW_JSON_STRING ? x->u.str.len : 0,
                            kind == DW_JSON_INT ? x->u.i : 0 };
        return tmp;
    }
    size_t kl = strlen(key);
    for (size_t k = 0; k < v->n; k++)
        if (v->m[k].kn == kl && dw_mem_eq(v->m[k].k, key, kl)) return v->m[k].kind == kind ? &v->m[k] : NULL;   /* no memcmp call */
    return NULL;
}

/* the string member key: true with *s, *n */
static bool in_str(const in_view *v, const char *key, const char **s, size_t *n)
{
    in_member t;
    const in_member *m = in_get(v, key, DW_JSON_STRING, &t);
    if (!m) return false;
    *s = m->s;
    *n = m->sn;
    return true;
}

/* box.md §10.3: the subject string and, when want_attrs (they are for the
 * decision log only), the subject attributes. */
DW_HOT static void subject_of(dwd_request *rq, const in_view *in, bool want_attrs)
{
    const char *a = rq->action, *s, *s2;
    size_t n, n2;
    dwd_buf *attrs = want_attrs ? &rq->attrs : NULL;   /* NULL: attr_str and attr_int do nothing */
    if (!strncmp(a, "fs:", 3)) {
        memcpy(rq->category, "fs", 3);
        if (in_str(in, "path", &s, &n)) {
            dwd_buf_put(&rq->subject, s, n);
            attr_str(attrs, "file.path", s, n);
        }
    } else if (!strcmp(a, "net:connect") || !strcmp(a, "http:request")) {
        bool http = a[0] == 'h';
        memcpy(rq->category, http ? "http" : "net", http ? 5 : 4);
        if (in_str(in, "host", &s, &n)) {
            dwd_buf_put(&rq->subject, s, n);
            attr_str(attrs, "server.address", s, n);
        }
        in_member t;
        const in_member *port = in_get(in, "port", DW_JSON_INT, &t);
        if (port) {
            char num[DW_I64_TEXT_MAX + 1];
            size_t k = sizeof num - dw_i64_text(port->i, num + sizeof num);
            num[--k] = ':';
            dwd_buf_put(&rq->subject, num + k, sizeof num - k);
            attr_int(attrs, "server.port", port->i);
        }
        if (http && in_str(in, "path", &s, &n)) {
            if (!n || s[0] != '/') dwd_buf_put(&rq->subject, "/", 1);
            dwd_buf_put(&rq->subject, s, n);
        }
        if (http && in_str(in, "method", &s, &n)) attr_str(attrs, "http.request.method", s, n);
    } else if (!strcmp(a, "shell:exec") || !strcmp(a, "shell:spawn")) {
        memcpy(rq->category, "shell", 6);
        if (in_str(in, a[6] == 'e' ? "program" : "program_path", &s, &n)) {
            dwd_buf_put(&rq->subject, s, n);
            attr_str(attrs, "process.command", s, n);
        }
        /* the arguments Box's input carries (program, arg1, arg2), each
         * capped so the attribute stays within 4 KiB; and the directory */
        if (attrs && in_str(in, "program", &s2, &n2)) {
            static const char *const names[3] = { "program", "arg1", "arg2" };
            if (attrs->len) dwd_buf_put(attrs, ",", 1);
            dwd_buf_puts(attrs, "{\"key\":\"process.command_args\",\"value\":{\"arrayValue\":{\"values\":[");
            for (int k = 0, c = 0; k < 3; k++) {
                if (!in_str(in, names[k], &s, &n)) continue;
                dwd_buf_puts(attrs, c++ ? ",{\"stringValue\":" : "{\"stringValue\":");
                dwd_buf cap = { 0 };
                put_capped(&cap, s, n, 1300);
                dwd_buf_json_string(attrs, cap.p ? cap.p : "", cap.len);
                dwd_buf_free(&cap);
                dwd_buf_puts(attrs, "}");
            }
            dwd_buf_puts(attrs, "]}}}");
        }
        if (in_str(in, "cwd", &s, &n)) attr_str(attrs, "process.working_directory", s, n);
    } else if (!strncmp(a, "mcp:", 4)) {
        memcpy(rq->category, "mcp", 4);
        if (in_str(in, "server", &s, &n)) dwd_buf_put(&rq->subject, s, n);
        dwd_buf_put(&rq->subject, "/", 1);
        if (in_str(in, "tool", &s, &n) || in_str(in, "prompt", &s, &n) || in_str(in, "uri", &s, &n) || in_str(in, "method", &s, &n))
            dwd_buf_put(&rq->subject, s, n);
    }
}

/* ---- the one-pass reader of the common decide line ----
 * {"op":"decide","action":A,"input":{...}} with an optional "request_id", in
 * any order, each once, every string without an escape in plain ASCII,
 * numbers integers: read without a JSON tree.  Anything else (another op or
 * member, an escape, a byte >= 0x80, a float, any error) is not taken on and
 * goes to the general path from the start, so its errors stay that path's. */
typedef struct fscan { const char *s; size_t n, i; } fscan;

static inline __attribute__((always_inline)) void fs_ws(fscan *f) { f->i = dw_json_skip_ws(f->s, f->i, f->n); }

static inline __attribute__((always_inline)) bool fs_str(fscan *f, const char **s, size_t *n)
{
    if (f->i >= f->n || f->s[f->i] != '"') return false;
    size_t st = f->i + 1, e = dw_json_scan_plain(f->s, st, f->n);
    if (e >= f->n || f->s[e] != '"') return false;   /* an escape, a control or non-ASCII byte, the end */
    *s = f->s + st;
    *n = e - st;
    f->i = e + 1;
    return true;
}

/* an integer of at most 18 digits (exact in an int64_t), not a float */
static bool fs_int(fscan *f, int64_t *out)
{
    size_t i = f->i;
    bool neg = i < f->n && f->s[i] == '-';
    if (neg) i++;
    size_t d = i;
    while (i < f->n && f->s[i] >= '0' && f->s[i] <= '9') i++;
    if (i == d || i - d > 18 || (f->s[d] == '0' && i - d > 1)) return false;
    if (i < f->n && (f->s[i] == '.' || f->s[i] == 'e' || f->s[i] == 'E')) return false;
    int64_t v = 0;
    for (size_t k = d; k < i; k++) v = v * 10 + (f->s[k] - '0');
    *out = neg ? -v : v;
    f->i = i;
    return true;
}

static bool fs_value(fscan *f, int depth, in_member *m);

/* an object or array (open '{' or '['), its members or elements read by fs_value */
static bool fs_container(fscan *f, int depth, char close, in_member *mem, size_t cap, size_t *nmem)
{
    f->i++;
    fs_ws(f);
    if (f->i < f->n && f->s[f->i] == close) { f->i++; return true; }
    for (;;) {
        fs_ws(f);
        in_member m = { 0 };
        if (close == '}') {
            if (!fs_str(f, &m.k, &m.kn)) return false;
            fs_ws(f);
            if (f->i >= f->n || f->s[f->i] != ':') return false;
            f->i++;
        }
        if (!fs_value(f, depth + 1, &m)) return false;
        if (mem) {
            if (*nmem == cap) return false;
            mem[(*nmem)++] = m;
        }
        fs_ws(f);
        if (f->i < f->n && f->s[f->i] == ',') { f->i++; continue; }
        if (f->i < f->n && f->s[f->i] == close) { f->i++; return true; }
        return false;
    }
}

static bool fs_value(fscan *f, int depth, in_member *m)
{
    fs_ws(f);
    if (f->i >= f->n || depth > 32) return false;
    char c = f->s[f->i];
    m->kind = DW_JSON_NULL;     /* not a string or an integer: no subject reads it */
    if (c == '"') { m->kind = DW_JSON_STRING; return fs_str(f, &m->s, &m->sn); }
    if (c == '-' || (c >= '0' && c <= '9')) { m->kind = DW_JSON_INT; return fs_int(f, &m->i); }
    if (c == '{') return fs_container(f, depth, '}', NULL, 0, NULL);
    if (c == '[') return fs_container(f, depth, ']', NULL, 0, NULL);
    static const char *const lit[3] = { "true", "false", "null" };
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lit[k]);
        if (f->n - f->i >= l && !memcmp(f->s + f->i, lit[k], l)) { f->i += l; return true; }
    }
    return false;
}

/* 1: line taken on, rq filled as the general path fills it; 0: not taken on */
DW_HOT static int fast_decide(const char *line, size_t len, unsigned flags, dwd_request *rq)
{
    fscan f = { line, len, 0 };
    const char *op = NULL, *act = NULL, *rid = NULL, *k;
    size_t opn = 0, actn = 0, ridn = 0, kn, act_at = 0, rid_at = 0, in_at = 0, in_end = 0;
    in_member mem[64];
    size_t nmem = 0;
    fs_ws(&f);
    if (f.i >= len || line[f.i] != '{') return 0;
    f.i++;
    for (;;) {
        fs_ws(&f);
        if (!fs_str(&f, &k, &kn)) return 0;
        fs_ws(&f);
        if (f.i >= len || line[f.i] != ':') return 0;
        f.i++;
        fs_ws(&f);
        size_t at = f.i;
        if (kn == 2 && !memcmp(k, "op", 2)) { if (op || !fs_str(&f, &op, &opn)) return 0; }
        else if (kn == 6 && !memcmp(k, "action", 6)) { if (act || !fs_str(&f, &act, &actn)) return 0; act_at = at; }
        else if (kn == 10 && !memcmp(k, "request_id", 10)) { if (rid || !fs_str(&f, &rid, &ridn)) return 0; rid_at = at; }
        else if (kn == 5 && !memcmp(k, "input", 5)) {
            if (in_end || at >= len || line[at] != '{' || !fs_container(&f, 1, '}', mem, sizeof mem / sizeof *mem, &nmem)) return 0;
            in_at = at;
            in_end = f.i;
        } else return 0;
        fs_ws(&f);
        if (f.i < len && line[f.i] == ',') { f.i++; continue; }
        if (f.i < len && line[f.i] == '}') { f.i++; break; }
        return 0;
    }
    fs_ws(&f);
    if (f.i != len || !op || opn != 6 || memcmp(op, "decide", 6) || !act || !actn || actn >= sizeof rq->action || !in_end) return 0;
    rq->op = DWD_OP_DECIDE;
    memcpy(rq->action, act, actn);
    rq->action[actn] = 0;
    dwd_buf *e = &rq->event;
    dwd_buf_puts(e, "{\"action\":");
    dwd_buf_put(e, line + act_at, actn + 2);
    dwd_buf_puts(e, ",\"kind\":\"request\",\"input\":");
    dwd_buf_put(e, line + in_at, in_end - in_at);
    if (rid) {
        dwd_buf_puts(e, ",\"request_id\":");
        dwd_buf_put(e, line + rid_at, ridn + 2);
        dwd_buf_put(&rq->request_id, rid, ridn);
    }
    dwd_buf_puts(e, "}");
    in_view v = { NULL, mem, nmem };
    subject_of(rq, &v, flags & DWD_REQ_LOG_ATTRS);
    return 1;
}

static bool member_allowed(const char *k, size_t n, dwd_op op)
{
    static const char *common[] = { "op", "action", "input", "request_id", "namespace", "principal", "resource", "time",
                                    "jsonrpc_id", "parent_span_id", "trace_id", NULL };
    for (int i = 0; common[i]; i++) if (strlen(common[i]) == n && !memcmp(common[i], k, n)) return true;
    if (op == DWD_OP_RECORD && ((n == 4 && !memcmp(k, "kind", 4)) || (n == 6 && !memcmp(k, "output", 6)))) return true;
    return false;
}

/* A decide's optional hex id member ("parent_span_id": 16 digits, "trace_id":
 * 32), as W3C trace context and OTLP spell them; all zeros is not an id. */
static bool hex_id(const dw_json *j, size_t digits, uint64_t *hi, uint64_t *lo)
{
    if (j->kind != DW_JSON_STRING || j->u.str.len != digits) return false;
    uint64_t w[2] = { 0, 0 };
    for (size_t i = 0; i < digits; i++) {
        char c = j->u.str.s[i];
        unsigned x = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (x > 15) return false;
        uint64_t *word = &w[digits == 32 && i < 16 ? 0 : 1];
        *word = *word << 4 | x;
    }
    if (!w[0] && !w[1]) return false;
    if (hi) *hi = w[0];
    *lo = w[1];
    return true;
}

/* A request's buffers, kept from one request to the next (per thread):
 * dwd_request_free hands them back, dwd_parse_request takes them, so a warm
 * server allocates nothing per request. */
enum { REQ_BUFS = 7 };
static __thread dwd_buf spare_bufs[REQ_BUFS];

static void req_bufs(dwd_request *rq, dwd_buf *v[REQ_BUFS])
{
    v[0] = &rq->event; v[1] = &rq->subject; v[2] = &rq->attrs; v[3] = &rq->request_id;
    v[4] = &rq->jsonrpc_id; v[5] = &rq->artifact; v[6] = &rq->principal;
}

DW_HOT int dwd_parse_request(const char *line, size_t len, unsigned flags, dwd_request *rq, char *err, size_t errcap)
{
    bool allow_time = flags & DWD_REQ_ALLOW_TIME;
    memset(rq, 0, sizeof *rq);
    dwd_buf *bufs[REQ_BUFS];
    req_bufs(rq, bufs);
    for (int k = 0; k < REQ_BUFS; k++) {
        *bufs[k] = spare_bufs[k];   /* empty, or a previous request's (len 0) */
        spare_bufs[k] = (dwd_buf){ 0 };
    }
    if (len > DWD_MAX_LINE) { snprintf(err, errcap, "request line longer than %u bytes", DWD_MAX_LINE); return -1; }
    if (!(flags & DWD_REQ_GENERAL_ONLY) && fast_decide(line, len, flags, rq)) {
        if (!rq->event.oom && !rq->subject.oom && !rq->attrs.oom && !rq->request_id.oom) return 0;
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    /* the line's NUL-terminated copy and the JSON arena are kept from one
     * request to the next (per thread): no allocation per request once warm */
    static __thread char *text;
    static __thread size_t text_cap;
    static __thread dw_arena a;
    static __thread bool a_ready;
    if (len + 1 > text_cap) {
        size_t nc = len + 1 < 4096 ? 4096 : len + 1;
        char *nt = malloc(nc);
        if (!nt) { snprintf(err, errcap, "out of memory"); return -1; }
        free(text);
        text = nt;
        text_cap = nc;
    }
    memcpy(text, line, len);
    text[len] = 0;
    if (!a_ready) { dw_arena_init(&a, 16 * 1024); a_ready = true; }
    dw_diags d;
    dw_diags_init(&d);
    dw_source src = { "request", text, len };
    int rc = -1;
    const dw_json *j = dw_json_parse(&a, &src, &d);
    if (!j) {
        snprintf(err, errcap, "malformed JSON%s%s", d.n ? ": " : "", d.n ? d.v[0].msg : "");
        goto out;
    }
    if (j->kind != DW_JSON_OBJECT) { snprintf(err, errcap, "a request must be a JSON object"); goto out; }
    for (size_t i = 0; i < j->u.obj.n; i++) {
        const dw_str *k = &j->u.obj.v[i].key;
        for (size_t q = 0; q < i; q++)
            if (j->u.obj.v[q].key.len == k->len && !memcmp(j->u.obj.v[q].key.s, k->s, k->len)) {
                snprintf(err, errcap, "duplicate member \"%.*s\"", (int)(k->len > 64 ? 64 : k->len), k->s);
                goto out;
            }
    }
    const dw_json *op = dw_json_get(j, "op");
    if (!op || op->kind != DW_JSON_STRING) { snprintf(err, errcap, "missing string member \"op\""); goto out; }
    const char *o = op->u.str.s;
    if (op->u.str.len != strlen(o)) { snprintf(err, errcap, "unknown op"); goto out; }
    if (!strcmp(o, "decide")) rq->op = DWD_OP_DECIDE;
    else if (!strcmp(o, "record")) rq->op = DWD_OP_RECORD;
    else if (!strcmp(o, "stats")) rq->op = DWD_OP_STATS;
    else if (!strcmp(o, "reload")) rq->op = DWD_OP_RELOAD;
    else { snprintf(err, errcap, "unknown op \"%.*s\"", (int)(op->u.str.len > 64 ? 64 : op->u.str.len), o); goto out; }
    if (rq->op == DWD_OP_STATS) {
        if (j->u.obj.n != 1) { snprintf(err, errcap, "op \"%s\" takes no other members", o); goto out; }
        rc = 0;
        goto out;
    }
    if (rq->op == DWD_OP_RELOAD) {
        const dw_json *art = dw_json_get(j, "artifact");
        if (!art || art->kind != DW_JSON_STRING || !art->u.str.len || art->u.str.len >= 4096 ||
            memchr(art->u.str.s, 0, art->u.str.len) || j->u.obj.n != 2) {
            snprintf(err, errcap, "op \"reload\" takes one member \"artifact\": the path of a compiled policy (.dwb)");
            goto out;
        }
        dwd_buf_put(&rq->artifact, art->u.str.s, art->u.str.len);
        rc = rq->artifact.oom ? -1 : 0;
        if (rc) snprintf(err, errcap, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < j->u.obj.n; i++) {
        const dw_str *k = &j->u.obj.v[i].key;
        if (!member_allowed(k->s, k->len, rq->op)) {
            snprintf(err, errcap, "unknown member \"%.*s\" for op \"%s\"", (int)(k->len > 64 ? 64 : k->len), k->s, o);
            goto out;
        }
    }
    const dw_json *action = dw_json_get(j, "action"), *input = dw_json_get(j, "input");
    const dw_json *kind = dw_json_get(j, "kind"), *output = dw_json_get(j, "output");
    const dw_json *rid = dw_json_get(j, "request_id"), *ns = dw_json_get(j, "namespace"), *time = dw_json_get(j, "time");
    const dw_json *pr = dw_json_get(j, "principal"), *rs = dw_json_get(j, "resource");
    if (!action || action->kind != DW_JSON_STRING || !action->u.str.len || action->u.str.len >= sizeof rq->action ||
        memchr(action->u.str.s, 0, action->u.str.len)) {
        snprintf(err, errcap, "\"action\" must be a non-empty string of at most %zu bytes", sizeof rq->action - 1);
        goto out;
    }
    if (!input || input->kind != DW_JSON_OBJECT) { snprintf(err, errcap, "\"input\" must be a JSON object"); goto out; }
    if (rq->op == DWD_OP_RECORD) {
        if (!kind || kind->kind != DW_JSON_STRING || kind->u.str.len != strlen(kind->u.str.s) ||
            (strcmp(kind->u.str.s, "response") && strcmp(kind->u.str.s, "error"))) {
            snprintf(err, errcap, "\"kind\" must be \"response\" or \"error\"");
            goto out;
        }
        if (output && output->kind != DW_JSON_OBJECT) { snprintf(err, errcap, "\"output\" must be a JSON object"); goto out; }
        if (output && !strcmp(kind->u.str.s, "error")) { snprintf(err, errcap, "an error event has no \"output\""); goto out; }
    }
    if (rid && rid->kind != DW_JSON_STRING) { snprintf(err, errcap, "\"request_id\" must be a string"); goto out; }
    const dw_json *jrid = dw_json_get(j, "jsonrpc_id");
    if (jrid && (rq->op != DWD_OP_DECIDE || (jrid->kind != DW_JSON_STRING && jrid->kind != DW_JSON_INT) ||
                 (jrid->kind == DW_JSON_STRING && (jrid->u.str.len > 256 || memchr(jrid->u.str.s, 0, jrid->u.str.len))))) {
        snprintf(err, errcap, "\"jsonrpc_id\" (decide only) must be a string of at most 256 bytes or an integer");
        goto out;
    }
    if (jrid && jrid->kind == DW_JSON_STRING) dwd_buf_put(&rq->jsonrpc_id, jrid->u.str.s, jrid->u.str.len);
    else if (jrid) dwd_buf_printf(&rq->jsonrpc_id, "%lld", (long long)jrid->u.i);
    if (ns && (ns->kind != DW_JSON_STRING || !ns->u.str.len || ns->u.str.len > 200 || memchr(ns->u.str.s, 0, ns->u.str.len))) {
        snprintf(err, errcap, "\"namespace\" must be a non-empty string of at most 200 bytes");
        goto out;
    }
    const dw_json *psid = dw_json_get(j, "parent_span_id"), *tid = dw_json_get(j, "trace_id");
    if (psid && (rq->op != DWD_OP_DECIDE || !hex_id(psid, 16, NULL, &rq->parent_span))) {
        snprintf(err, errcap, "\"parent_span_id\" (decide only) must be 16 hex digits, not all zero");
        goto out;
    }
    if (tid && (rq->op != DWD_OP_DECIDE || !hex_id(tid, 32, &rq->trace_hi, &rq->trace_lo))) {
        snprintf(err, errcap, "\"trace_id\" (decide only) must be 32 hex digits, not all zero");
        goto out;
    }
    rq->has_parent_span = psid != NULL;
    rq->has_trace_id = tid != NULL;
    /* box.md §2.3: a generated per-tool action <ns>::Action::"<tool>" */
    rq->per_tool = ns && !(ns->u.str.len == 3 && !memcmp(ns->u.str.s, "Box", 3));
    if (time && !allow_time) { snprintf(err, errcap, "\"time\" is not accepted: the service stamps events itself"); goto out; }
    if (time && time->kind != DW_JSON_STRING) { snprintf(err, errcap, "\"time\" must be an RFC 3339 string"); goto out; }
    if ((pr && pr->kind != DW_JSON_OBJECT) || (rs && rs->kind != DW_JSON_OBJECT)) {
        snprintf(err, errcap, "\"principal\" and \"resource\" must be entity uids {\"type\",\"id\"}");
        goto out;
    }
    memcpy(rq->action, action->u.str.s, action->u.str.len);
    rq->action[action->u.str.len] = 0;
    /* the event: Box's JSON form, members copied verbatim from the line */
    dwd_buf *e = &rq->event;
    dwd_buf_puts(e, "{\"action\":");
    put_span(e, text, action);
    dwd_buf_puts(e, ",\"kind\":");
    if (rq->op == DWD_OP_RECORD) put_span(e, text, kind);
    else dwd_buf_puts(e, "\"request\"");
    dwd_buf_puts(e, ",\"input\":");
    put_span(e, text, input);
    if (output) { dwd_buf_puts(e, ",\"output\":"); put_span(e, text, output); }
    if (rid) {
        dwd_buf_puts(e, ",\"request_id\":"); put_span(e, text, rid);
        dwd_buf_put(&rq->request_id, rid->u.str.s, rid->u.str.len);
    }
    if (ns) { dwd_buf_puts(e, ",\"namespace\":"); put_span(e, text, ns); }
    if (pr) {
        dwd_buf_puts(e, ",\"principal\":"); put_span(e, text, pr);
        principal_text(&rq->principal, text, pr);
    }
    if (rs) { dwd_buf_puts(e, ",\"resource\":"); put_span(e, text, rs); }
    if (time) { dwd_buf_puts(e, ",\"time\":"); put_span(e, text, time); }
    dwd_buf_puts(e, "}");
    in_view iv = { input, NULL, 0 };
    if (!rq->per_tool) subject_of(rq, &iv, flags & DWD_REQ_LOG_ATTRS);
    else {   /* the subject of a per-tool MCP action: <namespace>/<tool> (as mcp:call's server/tool) */
        memcpy(rq->category, "mcp", 4);
        dwd_buf_put(&rq->subject, ns->u.str.s, ns->u.str.len);
        dwd_buf_put(&rq->subject, "/", 1);
        dwd_buf_puts(&rq->subject, rq->action);
    }
    if (e->oom || rq->subject.oom || rq->attrs.oom || rq->request_id.oom || rq->principal.oom) { snprintf(err, errcap, "out of memory"); goto out; }
    rc = 0;
out:
    dw_diags_free(&d);
    dw_arena_reset(&a);          /* keeps its first block */
    if (text_cap > (64u << 10)) { free(text); text = NULL; text_cap = 0; }   /* a long line's copy is not kept */
    return rc;
}

void dwd_request_free(dwd_request *rq)
{
    dwd_buf *bufs[REQ_BUFS];
    req_bufs(rq, bufs);
    for (int k = 0; k < REQ_BUFS; k++) {
        dwd_buf *b = bufs[k];
        if (b->p && !b->oom && b->cap <= (16u << 10) && !spare_bufs[k].p) {   /* a long request's are not kept */
            b->len = 0;
            b->p[0] = 0;
            spare_bufs[k] = *b;
        } else dwd_buf_free(b);
        memset(b, 0, sizeof *b);
    }
}

/* ---- replies ---- */

void dwd_reply_error(dwd_buf *out, const char *msg)
{
    dwd_buf_puts(out, "{\"ok\":false,\"error\":");
    dwd_buf_json_string(out, msg, strlen(msg));
    dwd_buf_puts(out, "}\n");
}

void dwd_reply_ok(dwd_buf *out) { dwd_buf_puts(out, "{\"ok\":true}\n"); }

void dwd_denial_message(dwd_buf *out, const char *subject, const dwd_decision *d)
{
    if (d->allow) return;
    static __thread dwd_buf m;   /* kept from one denial to the next */
    m.len = 0;
    dwd_buf_puts(&m, "policy denied this operation on '");
    put_capped(&m, subject, strlen(subject), 1024);
    dwd_buf_puts(&m, "'");
    if (!strcmp(d->cause, "forbidden") && d->ndetermining) {
        dwd_buf_puts(&m, " ");
        for (uint32_t i = 0; i < d->ndetermining; i++) {
            if (i) dwd_buf_puts(&m, "; ");
            dwd_buf_puts(&m, "[policy: ");
            dwd_buf_puts(&m, d->ids[i]);
            dwd_buf_puts(&m, "]");
            const char *desc = d->descs ? d->descs[i] : NULL;
            if (desc && *desc) {
                size_t n = strlen(desc);
                if (desc[n - 1] == '.') n--;   /* a description's own final '.' is not doubled */
                dwd_buf_puts(&m, ": ");
                dwd_buf_put(&m, desc, n);
            }
        }
        dwd_buf_puts(&m, ".");
    } else if (!strcmp(d->cause, "no_match")) {
        dwd_buf_puts(&m, " [default-deny]: No permit policy matched this request.");
    } else if (!strcmp(d->cause, "policy_pending")) {
        dwd_buf_puts(&m, " [policy-pending]: The complete policy bundle is not installed.");
    } else {
        dwd_buf_puts(&m, " because the request could not be evaluated.");
    }
    if (m.oom) dwd_buf_puts(out, "policy denied this operation.");
    else put_capped(out, m.p, m.len, 4096);
    if (m.oom || m.cap > (16u << 10)) dwd_buf_free(&m);
}

DW_HOT void dwd_reply_decision(dwd_buf *out, const dwd_decision *d, const char *message)
{
    /* once per decision: pieces, not printf (the cause is one of dw_cause_name's words) */
    dwd_buf_puts(out, d->allow ? "{\"ok\":true,\"verdict\":\"permit\",\"cause\":\"" : "{\"ok\":true,\"verdict\":\"deny\",\"cause\":\"");
    dwd_buf_puts(out, d->cause);
    dwd_buf_puts(out, "\",\"rule\":");
    dwd_buf_json_string(out, d->rule, strlen(d->rule));
    dwd_buf_puts(out, ",\"determining\":[");
    for (uint32_t i = 0; i < d->ndetermining; i++) {
        if (i) dwd_buf_puts(out, ",");
        dwd_buf_json_string(out, d->ids[i], strlen(d->ids[i]));
    }
    dwd_buf_puts(out, "],\"message\":");
    dwd_buf_json_string(out, message, strlen(message));
    dwd_buf_puts(out, "}\n");
}

/* ---- the decision log (box.md §10) ---- */

static void res_attr(dwd_buf *o, bool first, const char *k, const char *v)
{
    if (!first) dwd_buf_put(o, ",", 1);
    dwd_buf_printf(o, "{\"key\":\"%s\",\"value\":{\"stringValue\":", k);
    dwd_buf_json_string(o, v, strlen(v));
    dwd_buf_puts(o, "}}");
}

/* The start of a resourceLogs line: Box's resource attributes (§10.2). */
static const char *box_source = "box";
void dwd_log_set_box_source(const char *source) { box_source = source ? source : "box"; }

static void log_resource_kind(dwd_buf *out, const dwd_log_info *li, const char *kind)
{
    dwd_buf_printf(out, "{\"%s\":[{\"resource\":{\"attributes\":[", kind);
    res_attr(out, true, "service.name", "strands-box");
    res_attr(out, false, "strands.box.name", li->box_name ? li->box_name : "dwd");
    res_attr(out, false, "strands.box.source", box_source);
    res_attr(out, false, "strands.box.run.id", li->run_id ? li->run_id : "run-0001");
}

static void log_resource(dwd_buf *out, const dwd_log_info *li) { log_resource_kind(out, li, "resourceLogs"); }

/* The attributes a decision's record and its span share. */
static void decision_attrs(dwd_buf *out, const dwd_request *rq, const dwd_decision *d)
{
    /* the request's principal; without one the engine decides for Box's (box.md §1) */
    res_attr(out, true, "strands.box.policy.principal", rq->principal.len ? rq->principal.p : "Box::Agent::\"self\"");
    res_attr(out, false, "strands.box.policy.action", rq->action);
    res_attr(out, false, "strands.box.policy.resource", rq->subject.p ? rq->subject.p : "");
    res_attr(out, false, "strands.box.policy.verdict", d->allow ? "permit" : "deny");
    res_attr(out, false, "strands.box.policy.cause", d->cause);
    res_attr(out, false, "strands.box.policy.rule", d->rule);
    if (rq->category[0]) res_attr(out, false, "strands.box.policy.category", rq->category);
}

static void correlation_attrs(dwd_buf *out, const dwd_request *rq)
{
    if (rq->request_id.len) {
        dwd_buf_puts(out, ",{\"key\":\"strands.box.request.id\",\"value\":{\"stringValue\":");
        dwd_buf_json_string(out, rq->request_id.p, rq->request_id.len);
        dwd_buf_puts(out, "}}");
    }
    if (rq->jsonrpc_id.len) res_attr(out, false, "jsonrpc.request.id", rq->jsonrpc_id.p);
}

void dwd_log_line(dwd_buf *out, const dwd_log_info *li, const dwd_request *rq, const dwd_decision *d, const char *message)
{
    log_resource(out, li);
    dwd_buf_printf(out, "]},\"scopeLogs\":[{\"scope\":{\"name\":\"strands-box.policy\",\"version\":\"" DW_VERSION_STRING "\"},\"logRecords\":[{"
                   "\"timeUnixNano\":\"%lld\",\"severityNumber\":%d,\"severityText\":\"%s\","
                   "\"eventName\":\"strands.box.policy.decision\","
                   "\"traceId\":\"%016llx%016llx\",\"spanId\":\"%016llx\",\"attributes\":[",
                   (long long)li->time_ns, d->allow ? 9 : 13, d->allow ? "permit" : "deny",
                   (unsigned long long)li->trace_hi, (unsigned long long)li->trace_lo, (unsigned long long)li->span);
    decision_attrs(out, rq, d);
    if (d->description && *d->description) res_attr(out, false, "strands.box.policy.description", d->description);
    dwd_buf_puts(out, ",{\"key\":\"strands.box.policy.determining.ids\",\"value\":{\"arrayValue\":{\"values\":[");
    for (uint32_t i = 0; i < d->ndetermining; i++) {
        if (i) dwd_buf_puts(out, ",");
        dwd_buf_puts(out, "{\"stringValue\":");
        dwd_buf_json_string(out, d->ids[i], strlen(d->ids[i]));
        dwd_buf_puts(out, "}");
    }
    dwd_buf_puts(out, "]}}}");
    if (!d->allow) res_attr(out, false, "strands.box.policy.reason", message);
    if (!strcmp(d->cause, "internal_fault")) res_attr(out, false, "error.type", "strands.box.policy.evaluation_error");
    if (rq->attrs.len) { dwd_buf_put(out, ",", 1); dwd_buf_put(out, rq->attrs.p, rq->attrs.len); }
    correlation_attrs(out, rq);
    if (rq->has_parent_span)
        dwd_buf_printf(out, ",{\"key\":\"strands.box.trace.parent_span_id\",\"value\":{\"stringValue\":\"%016llx\"}}",
                       (unsigned long long)rq->parent_span);
    dwd_buf_puts(out, "]}]}]}]}\n");
}

void dwd_span_line(dwd_buf *out, const dwd_log_info *li, const dwd_request *rq, const dwd_decision *d)
{
    log_resource_kind(out, li, "resourceSpans");
    dwd_buf_printf(out, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"strands-box.policy\",\"version\":\"" DW_VERSION_STRING "\"},\"spans\":[{"
                   "\"traceId\":\"%016llx%016llx\",\"spanId\":\"%016llx\",",
                   (unsigned long long)li->trace_hi, (unsigned long long)li->trace_lo, (unsigned long long)li->span);
    if (rq->has_parent_span) dwd_buf_printf(out, "\"parentSpanId\":\"%016llx\",", (unsigned long long)rq->parent_span);
    dwd_buf_printf(out, "\"name\":\"strands.box.policy.decision\",\"kind\":1,"
                   "\"startTimeUnixNano\":\"%lld\",\"endTimeUnixNano\":\"%lld\",\"attributes\":[",
                   (long long)li->time_ns, (long long)li->time_ns);
    decision_attrs(out, rq, d);
    correlation_attrs(out, rq);
    dwd_buf_puts(out, "]");
    if (!strcmp(d->cause, "internal_fault"))   /* OTLP status ERROR; a deny by policy is not an error */
        dwd_buf_puts(out, ",\"status\":{\"code\":2,\"message\":\"strands.box.policy.evaluation_error\"}");
    dwd_buf_puts(out, "}]}]}]}\n");
}

void dwd_log_control(dwd_buf *out, const dwd_log_info *li, const char *operation, const char *const *kv, size_t nkv)
{
    log_resource(out, li);
    dwd_buf_printf(out, "]},\"scopeLogs\":[{\"scope\":{\"name\":\"strands-box.control\",\"version\":\"" DW_VERSION_STRING "\"},\"logRecords\":[{"
                   "\"timeUnixNano\":\"%lld\",\"severityNumber\":9,\"severityText\":\"info\","
                   "\"eventName\":\"strands.box.control.%s\",\"body\":{\"stringValue\":\"%s\"},\"attributes\":[",
                   (long long)li->time_ns, operation, operation);
    res_attr(out, true, "strands.box.control.operation", operation);
    for (size_t i = 0; i + 1 < nkv; i += 2) res_attr(out, false, kv[i], kv[i + 1]);
    dwd_buf_puts(out, "]}]}]}]}\n");
}
