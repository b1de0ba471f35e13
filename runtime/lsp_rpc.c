/* lsp_rpc.c - JSON-RPC 2.0 over the framing: each message is checked
 * (-32700 not JSON, -32600 not a request), the lifecycle enforced
 * (-32002 before `initialize`, -32600 after `shutdown`), and the method
 * dispatched (-32601 for a request nobody serves; unknown notifications are
 * dropped, as the protocol asks).  Also the server's JSON writer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dogwood.h"
#include "lsp_int.h"

/* ---- writing JSON ---- */

void dw_jw_rawn(dw_jw *w, const char *s, size_t n)
{
    if (!w->oom && dw_buf_append(&w->b, s, n)) w->oom = true;
}

void dw_jw_raw(dw_jw *w, const char *s) { dw_jw_rawn(w, s, strlen(s)); }

void dw_jw_printf(dw_jw *w, const char *fmt, ...)
{
    if (w->oom) return;
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) { w->oom = true; return; }
    if ((size_t)n < sizeof small) { dw_jw_rawn(w, small, (size_t)n); return; }
    if (dw_buf_reserve(&w->b, (size_t)n + 1)) { w->oom = true; return; }
    va_start(ap, fmt);
    vsnprintf(w->b.p + w->b.len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    w->b.len += (size_t)n;
}

void dw_jw_str(dw_jw *w, const char *s, size_t n)
{
    /* text from documents goes back to the editor: bytes that are not
     * UTF-8 become U+FFFD so the message stays JSON */
    if (!w->oom && dw_json_escape_buf(&w->b, s ? s : "", s ? n : 0, DW_JSON_REPLACE)) w->oom = true;
}

bool dw_lsp_get_str(const dw_json *obj, const char *key, dw_str *out)
{
    const dw_json *j = obj && obj->kind == DW_JSON_OBJECT ? dw_json_get(obj, key) : NULL;
    if (!j || j->kind != DW_JSON_STRING) return false;
    *out = j->u.str;
    return true;
}

bool dw_lsp_get_int(const dw_json *obj, const char *key, int64_t *out)
{
    const dw_json *j = obj && obj->kind == DW_JSON_OBJECT ? dw_json_get(obj, key) : NULL;
    if (!j || j->kind != DW_JSON_INT) return false;
    *out = j->u.i;
    return true;
}

int64_t dw_lsp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void dw_lsp_fail(dw_lsp *s) { s->dead = true; }

/* ---- replies ---- */

static void w_id(dw_jw *w, const dw_json *id)
{
    if (id && id->kind == DW_JSON_INT) dw_jw_printf(w, "%lld", (long long)id->u.i);
    else if (id && id->kind == DW_JSON_STRING) dw_jw_str(w, id->u.str.s, id->u.str.len);
    else dw_jw_raw(w, "null");
}

static void send_jw(dw_lsp *s, dw_jw *w)
{
    if (w->oom) dw_lsp_fail(s);
    else dw_lsp_send(s, w->b.p, w->b.len);
    dw_buf_free(&w->b);
}

static void reply_error(dw_lsp *s, const dw_json *id, int code, const char *msg)
{
    dw_jw w = { 0 };
    dw_jw_raw(&w, "{\"jsonrpc\":\"2.0\",\"id\":");
    w_id(&w, id);
    dw_jw_printf(&w, ",\"error\":{\"code\":%d,\"message\":", code);
    dw_jw_strz(&w, msg);
    dw_jw_raw(&w, "}}");
    send_jw(s, &w);
}

static void reply_result(dw_lsp *s, const dw_json *id, const char *result, size_t n)
{
    dw_jw w = { 0 };
    dw_jw_raw(&w, "{\"jsonrpc\":\"2.0\",\"id\":");
    w_id(&w, id);
    dw_jw_raw(&w, ",\"result\":");
    dw_jw_rawn(&w, result, n);
    dw_jw_raw(&w, "}");
    send_jw(s, &w);
}

void dw_lsp_notify(dw_lsp *s, const char *method, const char *params, size_t n)
{
    dw_jw w = { 0 };
    dw_jw_raw(&w, "{\"jsonrpc\":\"2.0\",\"method\":");
    dw_jw_strz(&w, method);
    dw_jw_raw(&w, ",\"params\":");
    dw_jw_rawn(&w, params, n);
    dw_jw_raw(&w, "}");
    send_jw(s, &w);
}

void dw_lsp_show(dw_lsp *s, int type, const char *msg)
{
    dw_jw w = { 0 };
    dw_jw_printf(&w, "{\"type\":%d,\"message\":", type);
    dw_jw_strz(&w, msg);
    dw_jw_raw(&w, "}");
    if (w.oom) dw_lsp_fail(s);
    else dw_lsp_notify(s, "window/showMessage", w.b.p, w.b.len);
    dw_buf_free(&w.b);
}

/* ---- the lifecycle ---- */

static bool offers_utf8(const dw_json *params)
{
    const dw_json *c = dw_json_get(params, "capabilities");
    const dw_json *g = c && c->kind == DW_JSON_OBJECT ? dw_json_get(c, "general") : NULL;
    const dw_json *e = g && g->kind == DW_JSON_OBJECT ? dw_json_get(g, "positionEncodings") : NULL;
    if (!e || e->kind != DW_JSON_ARRAY) return false;
    for (size_t i = 0; i < e->u.arr.n; i++)
        if (e->u.arr.v[i]->kind == DW_JSON_STRING && dw_str_is(e->u.arr.v[i]->u.str, "utf-8")) return true;
    return false;
}

/* The workspace root: rootUri, else the first workspace folder, else rootPath. */
static char *root_of(const dw_json *params)
{
    dw_str u;
    if (dw_lsp_get_str(params, "rootUri", &u)) return dw_lsp_uri_path(u.s, u.len);
    const dw_json *f = dw_json_get(params, "workspaceFolders");
    if (f && f->kind == DW_JSON_ARRAY && f->u.arr.n && dw_lsp_get_str(f->u.arr.v[0], "uri", &u))
        return dw_lsp_uri_path(u.s, u.len);
    if (dw_lsp_get_str(params, "rootPath", &u) && u.len && !memchr(u.s, 0, u.len)) return strndup(u.s, u.len);
    return NULL;
}

/* The client's settings (initializationOptions, or the `dogwood` / `dwc`
 * section of workspace/didChangeConfiguration) outlive their message:
 * parsed again into their own arena.  -1 on OOM. */
static int keep_options(dw_lsp *s, const dw_json *o)
{
    if (o->end <= o->off || o->end > s->body_len) return 0;
    dw_arena_reset(&s->init_arena);
    s->init_options = NULL;
    char *text = dw_arena_memdup(&s->init_arena, s->body + o->off, o->end - o->off);
    dw_source *src = dw_arena_alloc(&s->init_arena, sizeof *src);
    if (!text || !src) return -1;
    *src = (dw_source){ "<initializationOptions>", text, o->end - o->off };
    dw_diags d;
    dw_diags_init(&d);
    s->init_options = dw_json_parse(&s->init_arena, src, &d);
    dw_diags_free(&d);
    return 0;
}

static int do_initialize(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    if (!params || params->kind != DW_JSON_OBJECT) { snprintf(err, errcap, "initialize needs its params object"); return DW_RPC_INVALID_PARAMS; }
    s->utf8 = offers_utf8(params);
    s->root = root_of(params);
    const dw_json *o = dw_json_get(params, "initializationOptions");
    if (o && o->kind == DW_JSON_OBJECT && keep_options(s, o)) { snprintf(err, errcap, "out of memory"); return DW_RPC_INTERNAL_ERROR; }
    s->state = DW_LSP_RUNNING;
    dw_jw_raw(w, "{\"capabilities\":{\"positionEncoding\":");
    dw_jw_raw(w, s->utf8 ? "\"utf-8\"" : "\"utf-16\"");
    dw_jw_raw(w, ",\"textDocumentSync\":{\"openClose\":true,\"change\":2,\"save\":{\"includeText\":false}}"
                 ",\"hoverProvider\":true"
                 ",\"completionProvider\":{\"triggerCharacters\":[\".\",\":\",\"\\\"\",\"@\"]},\"definitionProvider\":true,\"documentSymbolProvider\":true"
                 ",\"codeActionProvider\":{\"codeActionKinds\":[\"quickfix\"]},\"documentFormattingProvider\":true"
                 "},\"serverInfo\":{\"name\":\"dwc\",\"version\":\"" DW_VERSION_STRING "\"}}");
    return 0;
}

static int do_shutdown(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap)
{
    s->state = DW_LSP_SHUTDOWN;
    dw_jw_raw(w, "null");
    return 0;
}

/* ---- notifications ---- */

static void on_initialized(dw_lsp *s, const dw_json *params) { (void)s; (void)params; }

static void on_exit_note(dw_lsp *s, const dw_json *params)
{
    s->exit_status = s->state == DW_LSP_SHUTDOWN ? 0 : 1;
    s->state = DW_LSP_EXITED;
}

static void on_did_save(dw_lsp *s, const dw_json *params)
{
    const dw_json *td = params ? dw_json_get(params, "textDocument") : NULL;
    dw_str uri;
    if (!dw_lsp_get_str(td, "uri", &uri)) return;
    char *path = dw_lsp_uri_path(uri.s, uri.len);
    bool reload = path && dw_lsp_config_uses(s, path);
    free(path);
    if (reload) { dw_lsp_configure(s); dw_lsp_schedule_all(s); return; }
    dw_lsp_doc *d = dw_lsp_doc_find(s, uri.s, uri.len);
    if (d) dw_lsp_schedule(s, d, true);
}

static void on_watched(dw_lsp *s, const dw_json *params)
{
    const dw_json *ch = params ? dw_json_get(params, "changes") : NULL;
    if (!ch || ch->kind != DW_JSON_ARRAY) return;
    for (size_t i = 0; i < ch->u.arr.n; i++) {
        dw_str uri;
        if (!dw_lsp_get_str(ch->u.arr.v[i], "uri", &uri)) continue;
        char *path = dw_lsp_uri_path(uri.s, uri.len);
        bool reload = path && dw_lsp_config_uses(s, path);
        free(path);
        if (reload) { dw_lsp_configure(s); dw_lsp_schedule_all(s); return; }
    }
}

static void on_configuration(dw_lsp *s, const dw_json *params)
{
    /* settings.dogwood (VS Code's section) or settings.dwc replace the
     * initializationOptions; the files are read again either way */
    const dw_json *st = params ? dw_json_get(params, "settings") : NULL;
    const dw_json *o = st && st->kind == DW_JSON_OBJECT ? dw_json_get(st, "dogwood") : NULL;
    if (!o && st && st->kind == DW_JSON_OBJECT) o = dw_json_get(st, "dwc");
    if (o && o->kind == DW_JSON_OBJECT && keep_options(s, o)) { dw_lsp_fail(s); return; }
    dw_lsp_configure(s);
    dw_lsp_schedule_all(s);
}

typedef struct request_method { const char *name; dw_lsp_handler fn; } request_method;
static const request_method requests[] = {
    { "initialize", do_initialize },
    { "shutdown", do_shutdown },
    { "textDocument/hover", dw_lsp_hover },
    { "textDocument/completion", dw_lsp_completion },
    { "textDocument/definition", dw_lsp_definition },
    { "textDocument/documentSymbol", dw_lsp_symbols },
    { "textDocument/codeAction", dw_lsp_code_action },
    { "textDocument/formatting", dw_lsp_formatting },
};

typedef struct notify_method { const char *name; void (*fn)(dw_lsp *s, const dw_json *params); } notify_method;
static const notify_method notifications[] = {
    { "initialized", on_initialized },
    { "exit", on_exit_note },
    { "textDocument/didOpen", dw_lsp_did_open },
    { "textDocument/didChange", dw_lsp_did_change },
    { "textDocument/didClose", dw_lsp_did_close },
    { "textDocument/didSave", on_did_save },
    { "workspace/didChangeConfiguration", on_configuration },
    { "workspace/didChangeWatchedFiles", on_watched },
};

static void handle_request(dw_lsp *s, const dw_json *id, dw_str method, const dw_json *params)
{
    const request_method *m = NULL;
    for (size_t i = 0; i < sizeof requests / sizeof *requests; i++)
        if (dw_str_is(method, requests[i].name)) m = &requests[i];
    bool init = m && m->fn == do_initialize;
    if (s->state == DW_LSP_UNINIT && !init) { reply_error(s, id, DW_RPC_SERVER_NOT_INITIALIZED, "the server is not initialized: send `initialize` first"); return; }
    if (s->state == DW_LSP_SHUTDOWN) { reply_error(s, id, DW_RPC_INVALID_REQUEST, "the server is shut down: only `exit` is accepted"); return; }
    if (init && s->state != DW_LSP_UNINIT) { reply_error(s, id, DW_RPC_INVALID_REQUEST, "the server is already initialized"); return; }
    if (!m) {
        char msg[160];
        snprintf(msg, sizeof msg, "method `%.*s` is not supported", (int)(method.len > 100 ? 100 : method.len), method.s);
        reply_error(s, id, DW_RPC_METHOD_NOT_FOUND, msg);
        return;
    }
    if (params && params->kind != DW_JSON_OBJECT) { reply_error(s, id, DW_RPC_INVALID_PARAMS, "params must be an object"); return; }
    dw_jw w = { 0 };
    char err[512] = "";
    int rc = m->fn(s, params, &w, err, sizeof err);
    if (w.oom) { dw_buf_free(&w.b); reply_error(s, id, DW_RPC_INTERNAL_ERROR, "out of memory"); return; }
    if (rc) reply_error(s, id, rc, err[0] ? err : "the request failed");
    else reply_result(s, id, w.b.p ? w.b.p : "null", w.b.p ? w.b.len : 4);
    dw_buf_free(&w.b);
    if (init && !rc) dw_lsp_configure(s);
}

static void handle_notification(dw_lsp *s, dw_str method, const dw_json *params)
{
    for (size_t i = 0; i < sizeof notifications / sizeof *notifications; i++) {
        if (!dw_str_is(method, notifications[i].name)) continue;
        bool is_exit = notifications[i].fn == on_exit_note;
        /* before initialize and after shutdown only `exit` counts */
        if (!is_exit && s->state != DW_LSP_RUNNING) return;
        if (params && params->kind != DW_JSON_OBJECT) return;
        notifications[i].fn(s, params);
        return;
    }
    /* anything else ($/cancelRequest, $/setTrace, ...) needs no answer */
}

void dw_lsp_dispatch(dw_lsp *s, const char *body, size_t n)
{
    dw_arena_reset(&s->msg);
    dw_diags d;
    dw_diags_init(&d);
    dw_source src = { "<message>", body, n };
    s->body = body;
    s->body_len = n;
    const dw_json *j = dw_json_parse(&s->msg, &src, &d);
    if (!j) {
        char m[400] = "the message is not JSON";
        if (d.n) snprintf(m, sizeof m, "the message is not JSON: %s (byte %u)", d.v[0].msg, d.v[0].loc.off);
        dw_diags_free(&d);
        reply_error(s, NULL, DW_RPC_PARSE_ERROR, m);
        return;
    }
    dw_diags_free(&d);
    if (j->kind != DW_JSON_OBJECT) {
        reply_error(s, NULL, DW_RPC_INVALID_REQUEST,
                    j->kind == DW_JSON_ARRAY ? "batches are not part of the language server protocol" : "a message is a JSON object");
        return;
    }
    const dw_json *id = dw_json_get(j, "id");
    bool id_ok = id && (id->kind == DW_JSON_INT || id->kind == DW_JSON_STRING);
    dw_str ver, method;
    if (!dw_lsp_get_str(j, "jsonrpc", &ver) || !dw_str_is(ver, "2.0")) {
        if (id || dw_json_get(j, "method")) reply_error(s, id_ok ? id : NULL, DW_RPC_INVALID_REQUEST, "the message needs \"jsonrpc\": \"2.0\"");
        return;
    }
    const dw_json *mj = dw_json_get(j, "method");
    if (!mj) {
        /* a response to the server: it sends no requests, so nothing waits for it */
        if (id && (dw_json_get(j, "result") || dw_json_get(j, "error"))) return;
        reply_error(s, id_ok ? id : NULL, DW_RPC_INVALID_REQUEST, "the message has no method");
        return;
    }
    if (mj->kind != DW_JSON_STRING || (id && !id_ok)) {
        reply_error(s, id_ok ? id : NULL, DW_RPC_INVALID_REQUEST,
                    mj->kind != DW_JSON_STRING ? "the method must be a string" : "the id must be an integer or a string");
        return;
    }
    method = mj->u.str;
    const dw_json *params = dw_json_get(j, "params");
    if (id) handle_request(s, id, method, params);
    else handle_notification(s, method, params);
}

/* ---- the server object ---- */

dw_lsp *dw_lsp_new(dw_lsp_sink out, void *ctx)
{
    dw_lsp *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->out = out;
    s->out_ctx = ctx;
    dw_arena_init(&s->msg, 1 << 16);
    dw_arena_init(&s->init_arena, 1 << 12);
    dw_session_init(&s->sess);
    s->cfg.debounce_ms = DW_LSP_DEFAULT_DEBOUNCE_MS;
    return s;
}

void dw_lsp_free(dw_lsp *s)
{
    if (!s) return;
    dw_lsp_docs_free(s);
    dw_lsp_config_free(&s->cfg);
    dw_session_free(&s->sess);
    dw_arena_free(&s->msg);
    dw_arena_free(&s->init_arena);
    dw_buf_free(&s->in);
    free(s->root);
    free(s->box_schema_file);
    free(s->stdlib_file);
    if (s->stdlib) dw_policy_set_free(s->stdlib);
    free(s);
}

bool dw_lsp_exited(const dw_lsp *s, int *status)
{
    if (s->state != DW_LSP_EXITED) return false;
    if (status) *status = s->exit_status;
    return true;
}
