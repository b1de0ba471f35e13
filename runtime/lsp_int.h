/* lsp_int.h - the language server's parts (runtime/lsp_*.c), shared among
 * them only: framing (lsp_frame.c), JSON-RPC dispatch and the lifecycle
 * (lsp_rpc.c), documents and positions (lsp_docs.c), configuration
 * (lsp_config.c), diagnostics (lsp_diag.c), the typing of expressions the
 * features share (lsp_types.c), and the features (lsp_hover.c,
 * lsp_complete.c, lsp_nav.c, lsp_actions.c). */
#ifndef DW_LSP_INT_H
#define DW_LSP_INT_H
#include "lsp.h"
#include "load.h"
#include "../compiler/lint.h"
#include "../lang/json.h"

/* JSON-RPC 2.0's and the protocol's error codes */
enum {
    DW_RPC_PARSE_ERROR = -32700,
    DW_RPC_INVALID_REQUEST = -32600,
    DW_RPC_METHOD_NOT_FOUND = -32601,
    DW_RPC_INVALID_PARAMS = -32602,
    DW_RPC_INTERNAL_ERROR = -32603,
    DW_RPC_SERVER_NOT_INITIALIZED = -32002,
    DW_RPC_REQUEST_FAILED = -32803,
};

/* Bounds on what a client may send: one header block, one message body. */
#define DW_LSP_MAX_HEADER 8192
#define DW_LSP_MAX_BODY (64u << 20)
#define DW_LSP_MAX_DOCS 4096
#define DW_LSP_MAX_TEXT (256u << 20)   /* one document's text */
#define DW_LSP_DEFAULT_DEBOUNCE_MS 50

/* A JSON text being written: appends after an allocation failure are
 * dropped and remembered, so a caller checks once, at the end. */
typedef struct dw_jw { dw_buf b; bool oom; } dw_jw;
void dw_jw_raw(dw_jw *w, const char *s);
void dw_jw_rawn(dw_jw *w, const char *s, size_t n);
void dw_jw_printf(dw_jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dw_jw_str(dw_jw *w, const char *s, size_t n);     /* quoted (stdlib/json_escape.c) */
static inline void dw_jw_strz(dw_jw *w, const char *s) { dw_jw_str(w, s, strlen(s)); }

typedef enum { DW_DOC_POLICY, DW_DOC_SCHEMA, DW_DOC_EVENTS } dw_doc_kind;

typedef struct dw_lsp_doc {
    char *uri;
    char *path;                   /* the file a file:// uri names, or NULL */
    dw_doc_kind kind;             /* from the name's extension */
    char *text; size_t len, cap;  /* NUL-terminated */
    int64_t version;
    dw_source src;                /* { path or uri, text, len }: valid until the next edit */
    uint32_t *lines; size_t nlines;   /* byte offset of each line start (lazy; NULL after an edit) */
    dw_policy_set *ps;            /* the text parsed (lazy; NULL after an edit) */
    bool due; int64_t due_ms;     /* diagnostics pending, and when */
    dw_findings findings;         /* the last published, for code actions */
    int64_t findings_version; bool have_findings;
} dw_lsp_doc;

typedef struct dw_lsp_config {
    char *schema;                 /* a file (absolute), "box", or NULL */
    char *events;                 /* a file (absolute) or a built-in name, or NULL: the default */
    char *home;                   /* the operator home (dwc check --home) */
    bool box;                     /* the Box profile (schema "box", or profile = "box") */
    char **disable; size_t ndisable;  /* rule ids, as --disable */
    int64_t debounce_ms;
    size_t line_width; int indent_width;   /* dwc format's; 0: its defaults */
    char *file;                   /* the dwc.toml / .dwcrc read, or NULL */
} dw_lsp_config;

enum { DW_LSP_UNINIT, DW_LSP_RUNNING, DW_LSP_SHUTDOWN, DW_LSP_EXITED };

struct dw_lsp {
    dw_lsp_sink out; void *out_ctx;
    bool dead;                    /* the output failed or memory ran out */
    /* framing (lsp_frame.c) */
    dw_buf in; size_t in_at;      /* bytes received, and how far they were consumed */
    uint64_t discard;             /* body bytes of a refused message still to drop */
    /* the lifecycle (lsp_rpc.c) */
    int state, exit_status;
    bool utf8;                    /* positionEncoding "utf-8" negotiated, else UTF-16 */
    char *root;                   /* the workspace root directory, or NULL */
    const dw_json *init_options;  /* initializationOptions, in init_arena (NULL: none) */
    dw_arena init_arena;
    dw_arena msg;                 /* one message's JSON, reset per message */
    const char *body; size_t body_len;   /* the message being handled */
    int64_t now_ms;
    /* documents (lsp_docs.c) */
    dw_lsp_doc **docs; size_t ndocs, capdocs;   /* each on its own: a parsed set points at its doc's src */
    /* configuration (lsp_config.c): the schemas loaded into sess */
    dw_lsp_config cfg;
    dw_session sess; bool sess_ok;
    char config_error[600];       /* why the configuration did not load, or "" */
    char *box_schema_file;        /* the built-in Box schema written out for go-to-definition */
    dw_policy_set *stdlib;        /* the standard macro library, parsed on first use */
    dw_source stdlib_src;
    char *stdlib_file;            /* ... and written out */
};

/* ---- lsp_frame.c ---- */
/* Send one message body, framed. */
int dw_lsp_send(dw_lsp *s, const char *body, size_t n);

/* ---- lsp_rpc.c ---- */
/* Handle one message body (lsp_frame.c calls it per frame). */
void dw_lsp_dispatch(dw_lsp *s, const char *body, size_t n);
/* A notification from the server. params is JSON text. */
void dw_lsp_notify(dw_lsp *s, const char *method, const char *params, size_t n);
/* window/showMessage (type 1 error, 2 warning, 3 info). */
void dw_lsp_show(dw_lsp *s, int type, const char *msg);
/* Mark a failure to allocate or write: the server stops. */
void dw_lsp_fail(dw_lsp *s);

/* A feature's request handler: writes the result's JSON into w and returns 0,
 * or returns a JSON-RPC error code with a message in err. */
typedef int (*dw_lsp_handler)(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);

/* ---- lsp_docs.c ---- */
dw_lsp_doc *dw_lsp_doc_find(dw_lsp *s, const char *uri, size_t n);
/* The document params.textDocument.uri names, or NULL with an error. */
dw_lsp_doc *dw_lsp_doc_of(dw_lsp *s, const dw_json *params, char *err, size_t errcap);
void dw_lsp_did_open(dw_lsp *s, const dw_json *params);
void dw_lsp_did_change(dw_lsp *s, const dw_json *params);
void dw_lsp_did_close(dw_lsp *s, const dw_json *params);
void dw_lsp_docs_free(dw_lsp *s);
/* Position <-> byte offset under the negotiated encoding.  An offset past a
 * line's end is its end; a line past the text's end is the end. */
size_t dw_lsp_offset(dw_lsp *s, dw_lsp_doc *d, uint32_t line, uint32_t character);
void dw_lsp_position(dw_lsp *s, dw_lsp_doc *d, size_t off, uint32_t *line, uint32_t *character);
/* params.position as a byte offset; false if it is missing or malformed. */
bool dw_lsp_params_offset(dw_lsp *s, dw_lsp_doc *d, const dw_json *params, size_t *off);
/* The document and offset of a TextDocumentPositionParams, or NULL with an error. */
dw_lsp_doc *dw_lsp_doc_at(dw_lsp *s, const dw_json *params, size_t *off, char *err, size_t errcap);
/* A Range object as byte offsets (end not before off); false if malformed. */
bool dw_lsp_range_offsets(dw_lsp *s, dw_lsp_doc *d, const dw_json *range, size_t *off, size_t *end);
/* Write {"start": ..., "end": ...} for bytes [off, end) of d. */
void dw_lsp_w_range(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, size_t off, size_t end);
/* The same for bytes [off, end) of a text that is not an open document (a
 * schema file): scanned from its start. */
void dw_lsp_text_range(dw_jw *w, const dw_lsp *s, const char *text, size_t len, size_t off, size_t end);
/* The policy set parsed from d's text (cached until the next edit); NULL for
 * a schema document or when memory ran out.  It may hold fewer policies than
 * the text when some did not parse. */
const dw_policy_set *dw_lsp_doc_policies(dw_lsp_doc *d);
/* file:// uri <-> path (heap); NULL when uri is not a file uri. */
char *dw_lsp_uri_path(const char *uri, size_t n);
void dw_jw_uri(dw_jw *w, const char *path);

/* ---- lsp_config.c ---- */
/* (Re)read dwc.toml/.dwcrc from the workspace root up, overlay
 * initializationOptions, load the schemas into s->sess.  A problem is
 * reported with window/showMessage and kept in s->config_error. */
void dw_lsp_configure(dw_lsp *s);
void dw_lsp_config_free(dw_lsp_config *c);
/* Is path the config file or one of the schemas it names? */
bool dw_lsp_config_uses(const dw_lsp *s, const char *path);
/* The file go-to-definition points at for the action schema: the user's
 * schema file, or the built-in Box schema written out once (NULL: none). */
const char *dw_lsp_schema_file(dw_lsp *s);
/* The standard macro library (compiler/macros.h), parsed once; NULL on OOM. */
const dw_policy_set *dw_lsp_stdlib(dw_lsp *s);
/* ... written to the cache as a file, or NULL. */
const char *dw_lsp_stdlib_file(dw_lsp *s);

/* ---- lsp_diag.c ---- */
/* Diagnostics of d after its next debounce (immediately when now). */
void dw_lsp_schedule(dw_lsp *s, dw_lsp_doc *d, bool now);
void dw_lsp_schedule_all(dw_lsp *s);
/* Lint d and publish its diagnostics now. */
void dw_lsp_publish(dw_lsp *s, dw_lsp_doc *d);
/* One Diagnostic object for bytes [off, end) of d (a comma first unless
 * *first); the hint is appended to the message.  sev: the protocol's 1-3. */
void dw_lsp_w_diag(dw_jw *w, dw_lsp *s, dw_lsp_doc *d, bool *first, size_t off, size_t end, int sev, const char *code,
                   const char *msg, const char *hint);
int dw_lsp_sev(dw_lint_sev v);
/* Publish an empty list (a closed document). */
void dw_lsp_publish_empty(dw_lsp *s, const char *uri);

/* ---- the features ---- */
int dw_lsp_hover(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);
int dw_lsp_completion(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);
int dw_lsp_definition(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);
int dw_lsp_symbols(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);
int dw_lsp_code_action(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);
int dw_lsp_formatting(dw_lsp *s, const dw_json *params, dw_jw *w, char *err, size_t errcap);

/* JSON accessors for params: the member as a string / integer, or false. */
bool dw_lsp_get_str(const dw_json *obj, const char *key, dw_str *out);
bool dw_lsp_get_int(const dw_json *obj, const char *key, int64_t *out);

#endif
