/* engine_open.c - opening an engine from a compiled artifact alone (the
 * serving path: runtime/engine_open.h).  Nothing here reaches the front end:
 * the request gate's schema and the event schema are rebuilt from the
 * artifact's SERVE section (runtime/artifact_serve.h), and the schemas a
 * configuration names are only compared with it, by the digest of their
 * text. */
#include "engine_int.h"
#include "engine_open.h"
#include "artifact_serve.h"

static void release_ctx(void *owner)
{
    dw_serve_ctx_free(owner);
    free(owner);
}

/* The digest of the action schema cfg names (0: none), as
 * dw_session_schema_digest computes it from the same text. */
static int named_schema_digest(const dw_engine_config *cfg, uint64_t *out, char *err, size_t cap)
{
    *out = 0;
    if (!cfg->schema_path) return 0;
    if (strcmp(cfg->schema_path, "box") == 0) *out = XXH3_64bits(dw_box_actions_schema_text, dw_box_actions_schema_len);
    else {
        char *t;
        size_t n;
        if (dw_read_file(cfg->schema_path, &t, &n)) { snprintf(err, cap, "%s: cannot read: %s", cfg->schema_path, strerror(errno)); return -1; }
        *out = XXH3_64bits(t, n);
        free(t);
    }
    if (!*out) *out = 1;   /* 0 means "none" */
    return 0;
}

/* 0 if p may serve under cfg (ctx: its decoded SERVE section), or -1 with
 * the reason in err. */
static int check_artifact(const dw_engine_config *cfg, const dw_program *p, dw_serve_ctx *ctx, uint64_t *events_digest,
                          char *err, size_t cap)
{
    uint64_t want;
    if (named_schema_digest(cfg, &want, err, cap)) return -1;
    /* in the loader's order (runtime/load.c): another schema, the Box profile, then no schema at all */
    if (want && p->schema_digest && p->schema_digest != want) {
        snprintf(err, cap, "artifact refused: compiled for another schema; recompile it with dwc compile -s "
                           "and the schema it is served with");
        return -1;
    }
    const char *why = dw_box_profile_refusal(cfg->schema_path && !strcmp(cfg->schema_path, "box"), p);
    if (!why && cfg->no_providers && p->provider.ncalls)
        why = "information providers are not enabled in this build: the set calls a provider (dogwood.md §13.6)";
    if (why) { snprintf(err, cap, "artifact refused: %s", why); return -1; }
    if (want && !p->schema_digest) {
        snprintf(err, cap, "artifact refused: compiled without a schema, so it carries no request gate; "
                           "recompile it with dwc compile -s and the schema it is served with");
        return -1;
    }
    char m[400];
    if (!p->serve_len && p->schema_digest) {
        snprintf(err, cap, "artifact refused: it carries no serving context (written by a dwc before artifact format 3.2); "
                           "recompile it with dwc compile -s and its schema");
        return -1;
    }
    if (p->serve_len && dw_serve_decode(p->serve, p->serve_len, ctx, m, sizeof m)) {
        snprintf(err, cap, "artifact refused: %s", m);
        return -1;
    }
    if (!p->serve_len)           /* no schema: the default event schema's, as engine_source.c's */
        return engine_events_digest(cfg->events_path ? cfg->events_path : "default", events_digest, err, cap);
    *events_digest = ctx->events_digest;
    if (cfg->events_path) {
        uint64_t named;
        if (engine_events_digest(cfg->events_path, &named, err, cap)) return -1;
        if (named != ctx->events_digest) {
            snprintf(err, cap, "artifact refused: compiled with another event schema than %s; recompile it with "
                               "dwc compile --events %s", cfg->events_path, cfg->events_path);
            return -1;
        }
    }
    return 0;
}

static dw_engine *open_artifact(const dw_engine_config *cfg, const void *data, size_t len, char *err, size_t errcap);

/* Every refusal names the artifact, as the loader's diagnostics do ("P.dwb: error: ..."). */
dw_engine *dw_engine_open_artifact(const dw_engine_config *cfg, const void *data, size_t len, char *err, size_t errcap)
{
    char m[512] = "";
    dw_engine *e = open_artifact(cfg, data, len, m, sizeof m);
    if (!e && err && errcap) snprintf(err, errcap, "%s: error: %s", cfg && cfg->policy_path ? cfg->policy_path : "artifact", m);
    return e;
}

static dw_engine *open_artifact(const dw_engine_config *cfg, const void *data, size_t len, char *err, size_t errcap)
{
    if (!cfg || !data) { snprintf(err, errcap, "no %s", cfg ? "artifact" : "configuration"); return NULL; }
    if (!dw_is_artifact(data, len)) {
        snprintf(err, errcap, "not a compiled policy artifact (.dwb): compile the policy with dwc compile -s SCHEMA");
        return NULL;
    }
    char m[256];
    dw_program *p = dw_artifact_load(data, len, m, sizeof m);
    if (!p) { snprintf(err, errcap, "artifact refused: %s", m); return NULL; }
    dw_serve_ctx *ctx = calloc(1, sizeof *ctx);
    uint64_t events_digest = 0;
    if (!ctx) snprintf(err, errcap, "out of memory");
    if (!ctx || check_artifact(cfg, p, ctx, &events_digest, err, errcap)) {
        if (ctx) release_ctx(ctx);
        dw_program_free(p);
        return NULL;
    }
    engine_inputs in = {
        .prog = p, .schema = ctx->schema, .es = ctx->es, .box = cfg->schema_path && !strcmp(cfg->schema_path, "box"),
        .schema_digest = p->schema_digest, .events_digest = events_digest, .owner = ctx, .release = release_ctx,
    };
    /* the store holds the schema's actions (their groups: `action in`), as dw_session_load_entities builds it */
    dw_store_init(&in.store);
    dw_buf berr = { 0 };
    if ((ctx->schema && dw_store_add_schema_actions(&in.store, ctx->schema, &berr)) || dw_store_seal(&in.store)) {
        snprintf(err, errcap, "%s", berr.p ? berr.p : "out of memory");
        dw_buf_free(&berr);
        dw_store_free(&in.store);
        release_ctx(ctx);
        dw_program_free(p);
        return NULL;
    }
    dw_buf_free(&berr);
    return engine_new(cfg, &in, err, errcap);
}

dw_engine *dw_engine_open_artifact_durable(const dw_engine_config *cfg, const void *data, size_t len,
                                           const dw_engine_durable *d, dw_engine_recovery *rec, char *err, size_t errcap)
{
    if (rec) memset(rec, 0, sizeof *rec);
    if (!err) errcap = 0;
    if (engine_durable_invalid(d)) { snprintf(err, errcap, "invalid durable-history options"); return NULL; }
    dw_engine *e = dw_engine_open_artifact(cfg, data, len, err, errcap);
    return e ? engine_make_durable(e, d, rec, err, errcap) : NULL;
}

/* A reloaded artifact keeps the engine's gate (dw_engine_reload has checked
 * that it was compiled against the same schema), but its serving context
 * must be whole, and its event schema the one the history is kept under. */
int engine_reload_serve_check(const dw_engine *e, const dw_program *np, char *msg, size_t cap)
{
    if (!np->serve_len) return 0;
    dw_serve_ctx ctx;
    if (dw_serve_decode(np->serve, np->serve_len, &ctx, msg, cap)) return -1;
    uint64_t got = ctx.events_digest;
    dw_serve_ctx_free(&ctx);
    if (e->s.events_digest && got != e->s.events_digest) {
        snprintf(msg, cap, "compiled with another event schema than this engine's (its history is kept under that one); "
                           "recompile it with dwc compile --events and that schema");
        return -1;
    }
    return 0;
}
