/* load.h - loading the inputs of one decision context from files: policy
 * set (compiled), schema, entities.  Shared by the dwc commands. */
#ifndef DW_LOAD_H
#define DW_LOAD_H
#include "../compiler/compile.h"
#include "../lang/json.h"
#include "../lang/schema.h"
#include "json_value.h"
#include "../lang/eventschema.h"
#include "box_gate.h"   /* Box's built-in action schema text */

/* Everything a decision needs, owned together. */
typedef struct dw_session {
    dw_source policy_src, schema_src, entities_src;
    char *policy_text, *schema_text, *entities_text;
    dw_policy_set *ps;
    dw_program *prog;
    dw_schema *schema;
    dw_store store;
    bool store_ready;
    dw_arena scratch;        /* request JSON and per-decision values */
    dw_diags diags;
    dw_event_schema *es;     /* the event schema (file, built-in, or the default) */
    dw_event_derivation *dv; /* derived against the action schema */
    dw_source events_src;
    char *events_text;
    bool box;                /* --schema box: Box's built-in actions and events */
    dw_policy_set *macro_lib;   /* the macro library: expanded policies point into it */
    /* Library callers (dw_engine_open) set quiet: nothing is printed, and
     * the first error is kept in first_error ("file:line:col: error: ...")
     * for the caller's err buffer.  dwc leaves it false (stderr). */
    bool quiet;
    char first_error[512];
    /* dw_engine_open_unvalidated: the schema stage's findings are warnings */
    bool schema_findings_warn;
    /* Cedar CLI inputs, set before dw_session_load_policies: a template-linked
     * file (-k), and naming policies by @id as Cedar's CLI does */
    const char *links_path;
    const dw_source *links_given;   /* links text held in memory (dwc link), instead of links_path */
    bool cedar_ids;
    dw_source links_src;
    char *links_text;
    /* `--policy-format json` (dwc only, runtime/translate_cmd.c converts it):
     * the policies as Cedar text in memory instead of the file, each one's id
     * as the JSON named it, and the JSON set's template links (beside -k's) */
    const dw_source *policy_given;
    const dw_str *policy_ids; size_t npolicy_ids;
    const struct dw_template_link *given_links; size_t ngiven_links;
    const dw_source *given_links_src;   /* the JSON the links' positions point into */
    /* provider declarations (--providers, lang/providers.h; NULL: the
     * built-ins alone), and the deployment switch that refuses any provider
     * call at load (dogwood.md §13.6; always on with --schema box) */
    struct dw_providers *providers;
    dw_source providers_src;
    char *providers_text;
    bool no_providers;
    /* --macros FILE: a macro library replacing the standard one (dogwood.md
     * §10.6), read by dw_session_load_macros, parsed with the policies */
    dw_source macros_src;
    char *macros_text;
} dw_session;

void dw_session_init(dw_session *s);
void dw_session_free(dw_session *s);
/* Each returns 0, or reports its diagnostics (on stderr, or with quiet the
 * first error in first_error) and returns 1 (I/O error) or 2 (rejected
 * input). */
int dw_session_load_policies(dw_session *s, const char *path);
/* Why compiled program p (an artifact) may not serve session s, or NULL:
 * with --schema box it must have passed the Box profile when it was compiled
 * (`dwc compile --schema box` stamps DW_AF_BOX_PROFILE, vm/artifact_format.h).
 * dw_session_load_policies and dw_engine_reload both ask. */
const char *dw_session_artifact_refusal(const dw_session *s, const dw_program *p);
/* PATH, or "box" for Box's built-in action schema (which also selects Box's
 * event schema unless --events names one). */
int dw_session_load_schema(dw_session *s, const char *path);
/* The event schema: a .dwschema file, a built-in name ("default", "unpinned",
 * "session-pinned", "box"), or NULL for the session's default (Box's with
 * --schema box, else the default pinned schema).  Call after the schema and
 * before the policies. */
int dw_session_load_events(dw_session *s, const char *path_or_builtin);
int dw_session_load_entities(dw_session *s, const char *path);   /* path may be NULL */
/* A provider declaration file (dogwood.md §13.2); call before the policies. */
int dw_session_load_providers(dw_session *s, const char *path);
/* The same, its diagnostics left in s->diags (dwc check makes them findings):
 * 0 (s->providers NULL: not JSON, or out of memory), or 1 I/O error (reported). */
int dw_session_parse_providers(dw_session *s, const char *path);
/* The macro library (--macros FILE) for the policies loaded after it:
 * 0 ok, 1 I/O error (reported).  Its errors are the policies' (exit 2). */
int dw_session_load_macros(dw_session *s, const char *path);
/* The library the front end expands with: --macros's, or NULL (the standard one). */
const dw_source *dw_session_macros(const dw_session *s);
/* XXH3-64 of the action schema's text (the built-in one for "box"), 0
 * without a schema: what `dwc compile -s` writes into an artifact and what
 * dw_engine_reload compares. */
uint64_t dw_session_schema_digest(const dw_session *s);
/* XXH3-64 of the event schema's text (the built-in one for a name): what
 * `dwc compile` records in an artifact and the durable log is bound to. */
uint64_t dw_session_events_digest(const dw_session *s);
/* Parse `Type::"id"` text (CLI -l/-a/-r and request JSON strings). */
const dw_uid *dw_uid_from_text(dw_arena *a, const char *text, size_t len);
/* u as the {"type": …, "id": …} object dw_request_from_json reads; NULL on OOM. */
const dw_json *dw_uid_json(dw_arena *a, const dw_uid *u);

#endif
