/* engine_source.c - opening an engine from policy text (or an artifact)
 * through the front end: parse, expand, validate and compile with the
 * schemas the configuration names (runtime/load.h).  The library's
 * dw_engine_open; dwd does not link this file (it serves artifacts only,
 * engine_open.c), so its binary holds no parser. */
#include "engine_int.h"
#include "load.h"

static void release_session(void *owner)
{
    dw_session_free(owner);
    free(owner);
}

/* print: dwc's commands, which show every diagnostic with its caret on
 * stderr; library callers get the first one back in err instead. */
static dw_engine *open_source(const dw_engine_config *cfg, bool print, bool findings_warn, const char *macros_path,
                              char *err, size_t errcap)
{
    if (!err) errcap = 0;
    if (!cfg || !cfg->policy_path) { snprintf(err, errcap, "no %s", cfg ? "policy path" : "configuration"); return NULL; }
    dw_session *s = malloc(sizeof *s);
    if (!s) { snprintf(err, errcap, "out of memory"); return NULL; }
    dw_session_init(s);
    s->quiet = !print;
    s->schema_findings_warn = findings_warn;
    int rc = 0;
    if (cfg->schema_path) rc = dw_session_load_schema(s, cfg->schema_path);
    if (!rc && cfg->schema_path) rc = dw_session_load_events(s, cfg->events_path);
    s->no_providers = cfg->no_providers;
    if (!rc && cfg->providers_path) rc = dw_session_load_providers(s, cfg->providers_path);
    if (!rc && macros_path) rc = dw_session_load_macros(s, macros_path);
    if (!rc) rc = dw_session_load_policies(s, cfg->policy_path);
    if (!rc) rc = dw_session_load_entities(s, NULL);
    if (rc) {
        if (print || !s->first_error[0]) snprintf(err, errcap, "cannot load the policy set%s", print ? " (diagnostics above)" : "");
        else snprintf(err, errcap, "%s", s->first_error);
        release_session(s);
        return NULL;
    }
    engine_inputs in = {
        .prog = s->prog, .store = s->store, .schema = s->schema, .es = s->es, .box = s->box,
        .schema_digest = dw_session_schema_digest(s), .owner = s, .release = release_session,
    };
    s->prog = NULL;              /* the engine owns the program and the store from here */
    dw_store_init(&s->store);
    return engine_new(cfg, &in, err, errcap);
}

dw_engine *dw_engine_open(const dw_engine_config *cfg, char *err, size_t errcap) { return open_source(cfg, false, false, NULL, err, errcap); }
dw_engine *dw_engine_open_printing(const dw_engine_config *cfg, char *err, size_t errcap)
{
    dw_engine *e = open_source(cfg, true, false, NULL, err, errcap);
    if (e) e->whole_events = true;       /* dwc explain and dwc test --explain print a witness event's whole record */
    return e;
}
dw_engine *dw_engine_open_unvalidated(const dw_engine_config *cfg, char *err, size_t errcap) { return open_source(cfg, true, true, NULL, err, errcap); }
dw_engine *dw_engine_open_cli(const dw_engine_config *cfg, const dw_engine_cli_options *o, char *err, size_t errcap)
{
    return open_source(cfg, true, o && o->unvalidated, o ? o->macros_path : NULL, err, errcap);
}

dw_engine *dw_engine_open_durable(const dw_engine_config *cfg, const dw_engine_durable *d, dw_engine_recovery *rec,
                                  char *err, size_t errcap)
{
    if (rec) memset(rec, 0, sizeof *rec);
    if (!err) errcap = 0;
    if (engine_durable_invalid(d)) { snprintf(err, errcap, "invalid durable-history options"); return NULL; }
    dw_engine *e = dw_engine_open(cfg, err, errcap);
    if (!e) return NULL;
    /* the log is bound to the event schema's text: the one named, else the schema's default */
    const char *events = cfg->events_path ? cfg->events_path
                         : (cfg->schema_path && strcmp(cfg->schema_path, "box") == 0 ? "box" : "default");
    if (engine_events_digest(events, &e->s.events_digest, err, errcap)) { dw_engine_close(e); return NULL; }
    return engine_make_durable(e, d, rec, err, errcap);
}
