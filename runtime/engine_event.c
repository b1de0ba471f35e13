/* engine_event.c - events from Box's JSON form (box.md §6.1): the logged
 * record built under the event schema, its Cedar request, and the schema
 * gate a decision kind must pass before it is recorded. */
#include "engine_int.h"
#include "json_request.h"
#include "../lang/json_scan.h"
#include "../stdlib/uid_hash.h"
#include "../stdlib/hot.h"

static const dw_attr_decl *record_attr(const dw_type *t, dw_str name)
{
    if (!t || t->kind != DW_T_RECORD) return NULL;
    for (size_t i = 0; i < t->nattrs; i++)
        if (dw_str_eq(t->attrs[i].name, name)) return &t->attrs[i];
    return NULL;
}


/* Box lets callers give an enumerated entity as its bare id ("read_content"
 * for Box::FsReadOperation::"read_content"; issue 7, box.md §6): where the
 * schema expects an enum entity type and the JSON has a string, the string
 * becomes {"__entity":{"type":T,"id":s}}; a string that is not one of the
 * enum's ids sets *bad (the request fails the gate).  Returns j itself when
 * nothing changes, NULL on OOM. */
static const dw_json *enum_strings(dw_arena *a, const dw_schema *sc, const dw_type *t, const dw_json *j, int depth,
                                   const dw_json **bad)
{
    if (!t || !j || depth > 64) return j;
    if (t->kind == DW_T_ENTITY && j->kind == DW_JSON_STRING) {
        const dw_entity_decl *d = dw_schema_entity(sc, t->name.s, t->name.len);
        if (!d || !d->is_enum) return j;
        size_t q = 0;
        while (q < d->nenum && !dw_str_eq(d->enum_ids[q], j->u.str)) q++;
        if (q == d->nenum) { *bad = j; return j; }
        dw_json *o = dw_arena_alloc(a, sizeof *o), *in = dw_arena_alloc(a, sizeof *in);
        dw_json *ty = dw_arena_alloc(a, sizeof *ty), *id = dw_arena_alloc(a, sizeof *id);
        dw_json_member *m = dw_arena_alloc(a, 3 * sizeof *m);
        if (!o || !in || !ty || !id || !m) return NULL;
        *ty = (dw_json){ .kind = DW_JSON_STRING, .off = j->off, .end = j->end };
        ty->u.str = t->name;
        *id = *j;
        m[0] = (dw_json_member){ { "type", 4 }, ty, j->off };
        m[1] = (dw_json_member){ { "id", 2 }, id, j->off };
        *in = (dw_json){ .kind = DW_JSON_OBJECT, .off = j->off, .end = j->end };
        in->u.obj.v = m;
        in->u.obj.n = 2;
        m[2] = (dw_json_member){ { "__entity", 8 }, in, j->off };
        *o = (dw_json){ .kind = DW_JSON_OBJECT, .off = j->off, .end = j->end };
        o->u.obj.v = &m[2];
        o->u.obj.n = 1;
        return o;
    }
    if (t->kind == DW_T_SET && j->kind == DW_JSON_ARRAY) {
        dw_json *c = NULL;
        for (size_t k = 0; k < j->u.arr.n; k++) {
            const dw_json *x = enum_strings(a, sc, t->elem, j->u.arr.v[k], depth + 1, bad);
            if (!x) return NULL;
            if (x == j->u.arr.v[k]) continue;
            if (!c) {
                if (!(c = dw_arena_alloc(a, sizeof *c))) return NULL;
                *c = *j;
                if (!(c->u.arr.v = dw_arena_alloc(a, j->u.arr.n * sizeof *c->u.arr.v))) return NULL;
                memcpy(c->u.arr.v, j->u.arr.v, j->u.arr.n * sizeof *c->u.arr.v);
            }
            c->u.arr.v[k] = (dw_json *)x;
        }
        return c ? c : j;
    }
    if (t->kind == DW_T_RECORD && j->kind == DW_JSON_OBJECT) {
        dw_json *c = NULL;
        for (size_t k = 0; k < j->u.obj.n; k++) {
            const dw_json_member *mb = &j->u.obj.v[k];
            const dw_type *ft = NULL;
            for (size_t q = 0; q < t->nattrs && !ft; q++)
                if (dw_str_eq(t->attrs[q].name, mb->key)) ft = t->attrs[q].type;
            const dw_json *x = enum_strings(a, sc, ft, mb->value, depth + 1, bad);
            if (!x) return NULL;
            if (x == mb->value) continue;
            if (!c) {
                if (!(c = dw_arena_alloc(a, sizeof *c))) return NULL;
                *c = *j;
                if (!(c->u.obj.v = dw_arena_alloc(a, j->u.obj.n * sizeof *c->u.obj.v))) return NULL;
                memcpy(c->u.obj.v, j->u.obj.v, j->u.obj.n * sizeof *c->u.obj.v);
            }
            c->u.obj.v[k].value = (dw_json *)x;
        }
        return c ? c : j;
    }
    return j;
}

/* The logged record's own member names (§7.1): static, so a history copy
 * of a record built here shares them instead of duplicating each.  In the
 * record's (byte) order, with their key hashes computed once: a record of
 * them is built sorted and hashed, as dw_make_record would leave it. */
static const char K_PRINCIPAL[] = "callerPrincipal", K_RESOURCE[] = "callerResource", K_INPUT[] = "input",
                  K_OUTPUT[] = "output", K_REQUEST_ID[] = "requestId";
enum { F_PRINCIPAL, F_RESOURCE, F_INPUT, F_OUTPUT, F_REQUEST_ID, F__N };
static dw_field logged_keys[F__N] = {
    { K_PRINCIPAL, sizeof K_PRINCIPAL - 1, 0, { 0 } }, { K_RESOURCE, sizeof K_RESOURCE - 1, 0, { 0 } },
    { K_INPUT, sizeof K_INPUT - 1, 0, { 0 } }, { K_OUTPUT, sizeof K_OUTPUT - 1, 0, { 0 } },
    { K_REQUEST_ID, sizeof K_REQUEST_ID - 1, 0, { 0 } },
};
/* An event without "namespace" is of Box's actions: their type, static (a
 * history copy shares it), and its dw_type_hash computed once. */
static const char BOX_ACTION[] = "Box::Action";
static uint64_t box_action_hash;
static pthread_once_t logged_keys_once = PTHREAD_ONCE_INIT;
static void hash_logged_keys(void)
{
    for (int k = 0; k < F__N; k++) logged_keys[k].khash = dw_key_hash(logged_keys[k].key, logged_keys[k].klen);
    box_action_hash = dw_type_hash(BOX_ACTION, sizeof BOX_ACTION - 1);
}

static void put_field(dw_field *f, size_t *n, int key, dw_value v)
{
    f[*n] = logged_keys[key];
    f[*n].v = v;
    (*n)++;
}

static dw_value sorted_record(dw_field *f, size_t n)
{
    dw_value r = { .kind = DW_V_RECORD, .n = (uint32_t)n };
    r.u.fields = f;
    return r;
}

/* A deep copy of an event's identity and logged record into a (the
 * history's arena) in one block, sharing what lives as long as the engine:
 * the member names above and Box's fixed scope entities (box_self,
 * box_unused).  Anything else is copied.  out->ts is the caller's. */
static bool shared_key(const char *k)
{
    return k == K_INPUT || k == K_OUTPUT || k == K_PRINCIPAL || k == K_RESOURCE || k == K_REQUEST_ID;
}
static bool shared_uid(const dw_engine *e, const dw_value *v)
{
    return v->kind == DW_V_ENTITY && (v->u.uid == &e->box_self || v->u.uid == &e->box_unused);
}

bool engine_clone_event(dw_engine *e, dw_arena *a, const dw_event *src, dw_event *out)
{
    const dw_value *lg = &src->logged;
    bool rec = lg->kind == DW_V_RECORD && lg->n;
    size_t need = dw_packed_len(src->atype.len + 1) + dw_packed_len(src->aid.len + 1) + dw_packed_len(src->kind.len + 1), k;
    if (!rec) {
        if ((k = dw_value_packed_size(lg)) == SIZE_MAX) return false;
        need += k;
    } else {
        need += dw_packed_len(lg->n * sizeof(dw_field));
        for (uint32_t i = 0; i < lg->n; i++) {
            const dw_field *f = &lg->u.fields[i];
            if (!shared_key(f->key)) need += dw_packed_len((size_t)f->klen + 1);
            if (shared_uid(e, &f->v)) continue;
            if ((k = dw_value_packed_size(&f->v)) == SIZE_MAX) return false;
            need += k;
        }
    }
    char *cur = dw_arena_alloc_raw(a, need ? need : 1);
    if (!cur) return false;
    out->atype = (dw_str){ dw_packed_str(&cur, src->atype.s, src->atype.len), src->atype.len };
    out->aid = (dw_str){ dw_packed_str(&cur, src->aid.s, src->aid.len), src->aid.len };
    out->kind = (dw_str){ dw_packed_str(&cur, src->kind.s, src->kind.len), src->kind.len };
    if (!rec) { dw_value_clone_packed(&cur, lg, &out->logged); return true; }
    dw_field *f = dw_packed_take(&cur, lg->n * sizeof *f);
    for (uint32_t i = 0; i < lg->n; i++) {
        const dw_field *sf = &lg->u.fields[i];
        f[i] = *sf;
        if (!shared_key(sf->key)) f[i].key = dw_packed_str(&cur, sf->key, sf->klen);
        if (!shared_uid(e, &sf->v)) dw_value_clone_packed(&cur, &sf->v, &f[i].v);
    }
    out->logged = *lg;
    out->logged.u.fields = f;
    return true;
}

/* The history's carve (engine_int.h): an event whose values were read into
 * it and that was not kept gives them back, unless the carve moved on to a
 * new block meanwhile (then those few bytes stay unused). */
void engine_history_uncarve(dw_engine *e)
{
    history *h = &e->h;
    if (h->carve_pending && h->carve.lim == h->mark_lim) h->carve.cur = h->mark;
    /* copies the reader shares (json_read_cache.h) may have been given back */
    if (h->carve_pending && e->uids.kept_new) e->uids.keep_gen++;
    e->uids.kept_new = false;
    h->carve_pending = false;
}

void engine_history_carve_reset(dw_engine *e)
{
    e->h.carve = (dw_carve){ NULL, NULL };
    e->h.carve_pending = false;
    engine_keep_reset(&e->h);
    e->uids.keep_gen++;                  /* the arena is reset or replaced: no shared copy stays */
    e->uids.kept_new = false;
}

/* The carve for an event line's input and output values: the history's when
 * some leaf may keep the event whole, as the last one was (room for the
 * line's values made first, so that they rarely straddle two blocks), else
 * NULL (the scratch's: a kept event's parts are copied out, engine_keep.c). */
static dw_carve *values_carve(dw_engine *e, size_t len)
{
    history *h = &e->h;
    if (!h->expect_whole || !dw_retention_keeps_any(&e->ret)) return NULL;
    size_t want = 4 * len + 512;         /* json_request.c's bound for a line's values */
    if ((size_t)(h->carve.lim - h->carve.cur) < want) {
        size_t sz = want > 65536 ? want : 65536;
        char *blk = dw_arena_alloc_raw(&h->arena, sz);
        if (!blk) return NULL;
        h->carve = (dw_carve){ blk, blk + sz };
    }
    h->mark = h->carve.cur;
    h->mark_lim = h->carve.lim;
    h->carve_pending = true;
    return &h->carve;
}

/* The common part of both event forms: identity, scope, input/output values.
 * `input_j`/`output_j` may be NULL.  Returns 0, or -1 with msg (a gate
 * failure for decision kinds). */
/* The event's identity, whether its kind is a decision kind, and its
 * action's declaration with the declared input and output (NULL without a
 * schema).  aid and kind are NUL-terminated strings of the scratch arena
 * already (the event's JSON or its request's uid): only atype is copied. */
typedef struct action_of { const dw_action_decl *ad; const dw_attr_decl *in_d, *out_d; struct action_memo *memo; } action_of;

/* The gate checks that depend only on the action (and on whether the event
 * has an input, or Box's fixed scope): once passed, remembered in its memo. */
enum { MEMO_CTX_NO_INPUT = 1, MEMO_CTX_INPUT = 2, MEMO_PRINCIPAL_SELF = 4, MEMO_RESOURCE_UNUSED = 8 };

static int event_identity(dw_engine *e, built *b, const char *atype, size_t atlen, const char *aid, size_t aidlen,
                          const char *kind, size_t klen, dw_carve *c, dw_arena *ca, action_of *ac, char *msg, size_t cap)
{
    memset(b, 0, sizeof *b);
    pthread_once(&logged_keys_once, hash_logged_keys);
    /* atype is the caller's buffer (copied into the carve c of arena ca when
     * given, else the scratch) or the static BOX_ACTION (shared) */
    bool box = atype == BOX_ACTION;
    const char *at = atype;
    if (!box) {
        char *cp = c ? dw_carve_take(c, ca, atlen + 1, 4096) : dw_arena_alloc_raw(&e->scratch, atlen + 1);
        if (cp) {
            memcpy(cp, atype, atlen);
            cp[atlen] = 0;
        }
        at = cp;
    }
    b->ev.atype = (dw_str){ at, atlen };
    b->ev.aid = (dw_str){ aid, aidlen };
    b->ev.kind = (dw_str){ kind, klen };
    b->decision = e->s.es ? dw_event_schema_is_decision_kind(e->s.es, kind, klen) : (klen == 7 && !memcmp(kind, "request", 7));
    b->action_hash = dw_uid_hash_typed(box ? box_action_hash : dw_type_hash(atype, atlen), aid, aidlen);
    if (!e->s.schema) { *ac = (action_of){ 0 }; return 0; }
    /* the schema's answer for this action, remembered (a reload or another
     * schema makes the entry stale; a hash collision fails the uid compare) */
    /* by the hash's high bits, mixed (its low bits alone put Box's actions in few slots) */
    size_t slot = (size_t)((b->action_hash * 0x9E3779B97F4A7C15ull) >> 40) % (sizeof e->action_memo / sizeof *e->action_memo);
    struct action_memo *m = &e->action_memo[slot & ~(size_t)1];
    const dw_action_decl *ad;
    for (int k = 0; k < 2; k++, m++) {   /* a pair of slots: two actions of one slot do not drive each other out */
        ad = m->ad;
        if (ad && m->hash == b->action_hash && m->generation == e->generation && m->schema == e->s.schema &&
            dw_str_eq(ad->uid.type, b->ev.atype) && dw_str_eq(ad->uid.id, b->ev.aid)) {
            m->used = e->event_lines;
            *ac = (action_of){ ad, m->in_d, m->out_d, m };
            return 0;
        }
    }
    m -= 2;
    if (m[1].used < m[0].used) m++;      /* the one used less recently */
    if (!(ad = dw_schema_action(e->s.schema, atype, atlen, aid, aidlen))) {
        snprintf(msg, cap, "action %.*s::\"%.*s\" is not declared in the schema", (int)atlen, atype, (int)aidlen, aid);
        return -1;
    }
    ac->ad = ad;
    ac->in_d = record_attr(ad->context, (dw_str){ "input", 5 });
    ac->out_d = record_attr(ad->context, (dw_str){ "output", 6 });
    *m = (struct action_memo){ .hash = b->action_hash, .generation = e->generation, .used = e->event_lines, .schema = e->s.schema, .ad = ad,
                               .in_d = ac->in_d, .out_d = ac->out_d };
    ac->memo = m;
    return 0;
}

static int event_finish(dw_engine *e, built *b, const action_of *ac, const dw_uid *principal, const dw_uid *resource,
                        const dw_value *in, const dw_value *out, const dw_str *request_id, dw_carve *hc, dw_carve *sc,
                        char *msg, size_t cap);

/* dw_request_bind of b's request, with the answers that depend only on the
 * program and the (sealed) store remembered: Box's fixed scope engine-wide,
 * the action in its memo, another principal or resource with its reading in
 * the reader's cache (b->scope_sl, while the slot holds that reading:
 * dw_read_cache_bind_uid); the first two stale after a reload (the generation),
 * the last by the program's and store's serials. */
DW_HOT static void bind_request(dw_engine *e, built *b, struct action_memo *m)
{
    const dw_program *p = e->s.prog;
    const dw_store *st = &e->s.store;
    dw_request *r = &b->req;
    struct scope_bind *sb = &e->scope_bind;
    if (sb->prog != p || sb->store != st || sb->generation != e->generation) {
        const dw_uid *fixed[2] = { &e->box_self, &e->box_unused };
        for (int k = 0; k < 2; k++) {
            dw_value v = { .kind = DW_V_ENTITY };
            v.u.uid = fixed[k];
            dw_bind_uid(p, st, &v, &sb->ent[k]);
            sb->canon[k] = v.u.uid;
        }
        sb->prog = p, sb->store = st, sb->generation = e->generation;
    }
    for (int i = 0; i < 3; i += 2) {
        const dw_uid *fixed = i == DW_VAR_P ? &e->box_self : &e->box_unused;
        dw_read_cache_uid *sl = b->scope_sl[i / 2];
        if (r->vars[i].u.uid == fixed) {
            r->vars[i].u.uid = sb->canon[i / 2];
            r->ent[i] = sb->ent[i / 2];
        } else dw_read_cache_bind_uid(sl, b->scope_ver[i / 2], p, st, &r->vars[i], &r->ent[i]);
    }
    if (m && m->bound_prog == p) {
        if (m->canon) r->vars[DW_VAR_A].u.uid = m->canon;
        r->ent[DW_VAR_A] = m->ent;
    } else {
        /* the canonical uid is the program's (NULL: none, the scratch uid stays) */
        const dw_uid *canon = dw_bind_uid(p, st, &r->vars[DW_VAR_A], &r->ent[DW_VAR_A]);
        if (m) m->bound_prog = p, m->canon = canon, m->ent = r->ent[DW_VAR_A];
    }
    r->bound_prog = p;
    r->bound_store = st;
}

/* The common part of both event forms: identity, scope, input/output values.
 * `input_j`/`output_j` may be NULL.  Returns 0, or -1 with msg (a gate
 * failure for decision kinds). */
int engine_build_event(dw_engine *e, built *b, const char *atype, size_t atlen, const char *aid, size_t aidlen,
                       const char *kind, size_t klen, const dw_uid *principal, const dw_uid *resource,
                       const dw_json *input_j, const dw_json *output_j, const dw_json *request_id,
                       char *msg, size_t cap)
{
    dw_arena *a = &e->scratch;
    dw_buf err = { 0 };
    action_of ac;
    if (event_identity(e, b, atype, atlen, aid, aidlen, kind, klen, NULL, NULL, &ac, msg, cap)) return -1;
    const dw_attr_decl *in_d = ac.in_d, *out_d = ac.out_d;
    dw_value in = { .kind = DW_V_RECORD }, out = { .kind = DW_V_RECORD };
    bool have_in = input_j != NULL, have_out = output_j != NULL;
    const dw_json *bad_enum = NULL;
    if (in_d && !(input_j = enum_strings(a, e->s.schema, in_d->type, input_j, 0, &bad_enum)) && have_in) { snprintf(msg, cap, "out of memory"); return -1; }
    if (out_d && !(output_j = enum_strings(a, e->s.schema, out_d->type, output_j, 0, &bad_enum)) && have_out) { snprintf(msg, cap, "out of memory"); return -1; }
    if (bad_enum && b->decision) {
        snprintf(msg, cap, "request does not conform to the schema: \"%.*s\" is not a value of its enumerated entity type",
                 (int)(bad_enum->u.str.len > 64 ? 64 : bad_enum->u.str.len), bad_enum->u.str.s);
        return -1;
    }
    if (have_in && dw_value_from_json(a, input_j, b->decision && in_d ? in_d->type : NULL, &in, &err)) {
        if (b->decision) { snprintf(msg, cap, "request does not conform to the schema: input: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
        /* a record event that the schema cannot type is kept schema-free */
        err.len = 0;
        if (dw_value_from_json(a, input_j, NULL, &in, &err)) { snprintf(msg, cap, "input: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
    }
    if (have_out && dw_value_from_json(a, output_j, out_d ? out_d->type : NULL, &out, &err)) {
        err.len = 0;
        if (dw_value_from_json(a, output_j, NULL, &out, &err)) { snprintf(msg, cap, "output: %s", err.p ? err.p : "?"); dw_buf_free(&err); return -1; }
    }
    dw_buf_free(&err);
    dw_str rid = { 0 };
    if (request_id && request_id->kind == DW_JSON_STRING) rid = request_id->u.str;
    return event_finish(e, b, &ac, principal, resource, have_in ? &in : NULL, have_out ? &out : NULL,
                        request_id && request_id->kind == DW_JSON_STRING ? &rid : NULL, NULL, NULL, msg, cap);
}

/* After input and output are values: the logged record, the Cedar request
 * and its checks.  hc: the history's carve (the logged record is built there
 * whole), sc: a carve of the scratch with a block (taken from for the rest;
 * NULL or an empty one: arena calls). */
DW_HOT static int event_finish(dw_engine *e, built *b, const action_of *ac, const dw_uid *principal, const dw_uid *resource,
                        const dw_value *in, const dw_value *out, const dw_str *request_id, dw_carve *hc, dw_carve *sc,
                        char *msg, size_t cap)
{
    const dw_action_decl *ad = ac->ad;
    if (!b->ev.atype.s) { snprintf(msg, cap, "out of memory"); return -1; }   /* event_identity's copy */
    dw_arena *a = &e->scratch;
    bool have_in = in != NULL, have_out = out != NULL;
    /* logged record: input, output, callerPrincipal, callerResource, requestId (§7.1 mirroring) */
    pthread_once(&logged_keys_once, hash_logged_keys);
    /* with hc (the history's carve) the logged record is built there whole: kept as it is */
    size_t nlf = (principal != NULL) + (resource != NULL) + have_in + have_out + (request_id != NULL);   /* exactly: a kept one stays */
    dw_field *lf = hc ? dw_carve_take(hc, &e->h.arena, nlf * sizeof *lf, 4096)
                 : sc && sc->cur ? dw_carve_take(sc, a, nlf * sizeof *lf, 512) : dw_arena_alloc_raw(a, nlf * sizeof *lf);
    if (!lf) { snprintf(msg, cap, "out of memory"); return -1; }
    size_t nf = 0;
    dw_value pv = { .kind = DW_V_ENTITY }, rv = { .kind = DW_V_ENTITY };
    pv.u.uid = principal;
    rv.u.uid = resource;
    if (principal) put_field(lf, &nf, F_PRINCIPAL, pv);
    if (resource) put_field(lf, &nf, F_RESOURCE, rv);
    if (have_in) put_field(lf, &nf, F_INPUT, *in);
    if (have_out) put_field(lf, &nf, F_OUTPUT, *out);
    if (request_id) {
        dw_value s = { .kind = DW_V_STRING, .n = (uint32_t)request_id->len };
        char *c = hc ? dw_carve_take(hc, &e->h.arena, request_id->len + 1, 4096) : NULL;
        if (c) {
            memcpy(c, request_id->s, request_id->len);
            c[request_id->len] = 0;
            s.u.s = c;
        } else if (hc || !dw_make_string(a, request_id->s, request_id->len, &s)) { snprintf(msg, cap, "out of memory"); return -1; }
        put_field(lf, &nf, F_REQUEST_ID, s);
    }
    b->ev.logged = sorted_record(lf, nf);
    if (!b->decision) return 0;

    /* the Cedar request: context = { input } (box.md §15.2), checked like Box's gate */
    if (!principal || !resource) { snprintf(msg, cap, "decision event has no %s in scope", principal ? "resource" : "principal"); return -1; }
    struct rq { dw_field cf; dw_uid au; } *rq = sc && sc->cur ? dw_carve_take(sc, a, sizeof *rq, 512) : dw_arena_alloc_raw(a, sizeof *rq);   /* the context's field and the action */
    if (!rq) { snprintf(msg, cap, "out of memory"); return -1; }
    dw_field *cf = &rq->cf;
    size_t nc = 0;
    if (have_in) put_field(cf, &nc, F_INPUT, *in);
    b->req.vars[DW_VAR_C] = sorted_record(cf, nc);
    b->req.vars[DW_VAR_P] = pv;
    b->req.vars[DW_VAR_R] = rv;
    b->req.vars[DW_VAR_A].kind = DW_V_ENTITY;
    dw_uid *au = &rq->au;
    if (!b->ev.atype.s) { snprintf(msg, cap, "out of memory"); return -1; }
    *au = (dw_uid){ .type = b->ev.atype.s, .tlen = (uint32_t)b->ev.atype.len, .id = b->ev.aid.s, .idlen = (uint32_t)b->ev.aid.len,
                    .hash = b->action_hash };
    b->req.vars[DW_VAR_A].u.uid = au;
    uint8_t ctx_bit = have_in ? MEMO_CTX_INPUT : MEMO_CTX_NO_INPUT;
    uint8_t scope_bits = (principal == &e->box_self ? MEMO_PRINCIPAL_SELF : 0) | (resource == &e->box_unused ? MEMO_RESOURCE_UNUSED : 0);
    uint8_t passed = ac->memo ? ac->memo->passed : 0;
    /* the context is {input} or {}: its checks depend only on the action and have_in */
    if (ad && !(passed & ctx_bit)) {
        for (size_t k = 0; k < ad->context->nattrs; k++) {
            const dw_attr_decl *d = &ad->context->attrs[k];
            bool present = dw_record_get(&b->req.vars[DW_VAR_C], d->name.s, d->name.len) != NULL;
            if (d->required && !present) { snprintf(msg, cap, "request does not conform to the schema: context.%s is required", d->name.s); return -1; }
        }
        for (uint32_t k = 0; k < b->req.vars[DW_VAR_C].n; k++)
            if (!record_attr(ad->context, (dw_str){ b->req.vars[DW_VAR_C].u.fields[k].key, b->req.vars[DW_VAR_C].u.fields[k].klen })) {
                snprintf(msg, cap, "request does not conform to the schema: context.%s is not declared", b->req.vars[DW_VAR_C].u.fields[k].key);
                return -1;
            }
        if (ac->memo) ac->memo->passed |= ctx_bit;
    }
    if (ad && (scope_bits != (MEMO_PRINCIPAL_SELF | MEMO_RESOURCE_UNUSED) || (passed & scope_bits) != scope_bits)) {
        bool pok = dw_type_listed(ad->principals, ad->nprincipals, principal), rok = dw_type_listed(ad->resources, ad->nresources, resource);
        if (!pok || !rok) { snprintf(msg, cap, "request does not conform to the schema: %s type is not allowed for this action", pok ? "resource" : "principal"); return -1; }
        if (ac->memo) ac->memo->passed |= scope_bits;
    }
    bind_request(e, b, ac->memo);
    return 0;
}

/* The members an event may have (box.md §6.1). */
enum { M_ACTION, M_KIND, M_NAMESPACE, M_TIME, M_PRINCIPAL, M_RESOURCE, M_INPUT, M_OUTPUT, M_REQUEST_ID, M__N };

static int member_of(dw_str key)
{
    static const dw_str names[M__N] = {
        { "action", 6 }, { "kind", 4 }, { "namespace", 9 }, { "time", 4 }, { "principal", 9 },
        { "resource", 8 }, { "input", 5 }, { "output", 6 }, { "request_id", 10 },
    };
    int k;
    switch (key.len) {   /* the one name of the key's length, or the two: no loop over all nine */
    case 4: k = key.s[0] == 'k' ? M_KIND : M_TIME; break;
    case 5: k = M_INPUT; break;
    case 6: k = key.s[0] == 'a' ? M_ACTION : M_OUTPUT; break;
    case 8: k = M_RESOURCE; break;
    case 9: k = key.s[0] == 'n' ? M_NAMESPACE : M_PRINCIPAL; break;
    case 10: k = M_REQUEST_ID; break;
    default: return -1;
    }
    return dw_str_eq(key, names[k]) ? k : -1;
}

/* The action type NS::Action: without ns the static BOX_ACTION, else built
 * in buf[256] (ns at most 200 bytes; a NUL in NS ends it, as %s did); *len its length. */
static const char *action_type(char *buf, const dw_str *ns, size_t *len)
{
    if (!ns) {
        *len = sizeof BOX_ACTION - 1;
        return BOX_ACTION;
    }
    size_t nslen = strnlen(ns->s, ns->len);
    memcpy(buf, ns->s, nslen);
    memcpy(buf + nslen, "::Action", sizeof "::Action");
    *len = nslen + sizeof "::Action" - 1;
    return buf;
}

/* The event's "time" in ticks; -1 if it is not RFC 3339 UTC. */
static int event_time(const dw_engine *e, const dw_str *time, int64_t *ts)
{
    int64_t ns_time;
    if (!dw_rfc3339_parse_ns(time->s, time->len, &ns_time)) return -1;
    *ts = e->tps == 1000000000 ? ns_time : ns_time / (1000000000 / e->tps);
    return 0;
}

/* A line head (engine_int.h's event_head): the line's bytes up to its first
 * input or output value when only "action", "kind" and "namespace" came
 * before, with what reading them gave (the event's identity, the action's
 * declaration and memo).  A host sends the same few heads line after line;
 * a line that begins with one takes that reading instead of reading the
 * members and looking the action up again.  Exact: the same bytes read the
 * same way, and a head is taken only for the schema, event schema and
 * generation it was read with, while its action's memo still holds that
 * action.  Bounded: a fixed table, a pair of slots per head's first
 * EVENT_HEAD_MIN bytes, the one used less recently overwritten.  The
 * identity's strings: without a keeping history the head's own copies
 * (valid until the next line); with one, the action and kind are read again
 * through the reader's cache at their places in the line (its shared copies
 * in the history, as reading the line gives them), and a namespace's action
 * type copied as event_identity copies it. */
#define EVENT_HEAD_MIN 24                /* the bytes that pick a head's pair of slots */
#define EVENT_HEADS (sizeof ((dw_engine *)0)->event_head / sizeof *((dw_engine *)0)->event_head)

static struct event_head *head_pair(dw_engine *e, const char *json)
{
    uint64_t w[3];
    memcpy(w, json, sizeof w);
    uint64_t h = ((w[0] * 0x9E3779B97F4A7C15ull) ^ w[1]) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31) ^ w[2]) * 0x94D049BB133111EBull;
    return &e->event_head[(h >> 40) % EVENT_HEADS & ~(size_t)1];
}

/* The reader cache's shared copy (json_read_cache.h) of the string whose
 * opening quote is at or after json[p] (white space first), if s is it. */
static bool shared_copy(const dw_engine *e, const char *json, size_t len, size_t p, const char *s)
{
    p = dw_json_skip_ws(json, p, len);
    if (p + 9 > len || json[p] != '"') return false;
    size_t ql;
    uint64_t w = dw_read_cache_key_word(json + p + 1, &ql);
    const dw_read_cache_key *sl = dw_read_cache_key_slot((dw_read_cache *)&e->uids, w, ql);
    return sl->kept == s && sl->kept_gen == e->uids.keep_gen;
}

/* h's action and kind, read into b from a line of a keeping history: kept
 * with the history's generation when both are the reader's shared copies
 * (a later line of the generation takes them as they are). */
static void head_shared(dw_engine *e, struct event_head *h, const char *json, size_t len, const built *b)
{
    bool shared = shared_copy(e, json, len, h->aoff, b->ev.aid.s) && shared_copy(e, json, len, h->koff, b->ev.kind.s);
    h->kept[0] = b->ev.aid.s, h->kept[1] = b->ev.kind.s;
    h->kept_gen = shared ? e->uids.keep_gen : 0;
}

DW_HOT static int head_take(dw_engine *e, const char *json, size_t len, built *b, action_of *ac, bool have[M__N], dw_str *ns,
                     dw_carve *hc, size_t *i)
{
    if (len <= EVENT_HEAD_MIN) return -1;
    struct event_head *h = head_pair(e, json);
    for (int k = 0; k < 2; k++, h++) {
        if (!h->len || len <= h->len || h->generation != e->generation || h->schema != e->s.schema || h->es != e->s.es ||
            !dw_mem_eq(h->bytes, json, h->len))
            continue;
        struct action_memo *m = h->memo;
        if (m && (m->ad != h->ad || m->hash != h->action_hash || m->generation != e->generation || m->schema != e->s.schema)) continue;
        if (m) m->used = e->event_lines;
        memset(b, 0, sizeof *b);
        b->ev.aid = (dw_str){ h->str + h->atlen + 1, h->aidlen };
        b->ev.kind = (dw_str){ h->str + h->atlen + h->aidlen + 2, h->klen };
        const char *at = h->box ? BOX_ACTION : h->str;
        if (hc) {                            /* strings the history may keep: as reading the line makes them */
            size_t p = h->aoff, q = h->koff;
            char *cp = h->box ? NULL : dw_carve_take(hc, &e->h.arena, (size_t)h->atlen + 1, 4096);
            if (!h->box && !cp) return -2;   /* out of memory: the general path says so */
            if (cp) at = memcpy(cp, h->str, (size_t)h->atlen + 1);
            if (h->kept_gen == e->uids.keep_gen) b->ev.aid.s = h->kept[0], b->ev.kind.s = h->kept[1];
            else if (!dw_json_fast_string(&e->h.arena, hc, &e->uids, json, len, &p, &b->ev.aid.s, &b->ev.aid.len) ||
                     !dw_json_fast_string(&e->h.arena, hc, &e->uids, json, len, &q, &b->ev.kind.s, &b->ev.kind.len))
                return -2;
            else head_shared(e, h, json, len, b);
        }
        b->ev.atype = (dw_str){ at, h->atlen };
        b->decision = h->decision;
        b->action_hash = h->action_hash;
        *ac = (action_of){ h->ad, h->in_d, h->out_d, h->memo };
        have[M_ACTION] = have[M_KIND] = have[h->member] = true;
        have[M_NAMESPACE] = h->ns;
        ns->len = h->nslen;
        *i = h->len;
        h->used = e->event_lines;
        e->uids.head_hits++;
        return h->member;
    }
    return -1;
}

/* Keep json[0..n) as a head, read as b and ac (member: the one whose value
 * follows; aoff, koff: where the action's and the kind's strings begin). */
static void head_keep(dw_engine *e, const char *json, size_t n, int member, const built *b, const action_of *ac,
                      bool ns, size_t nslen, size_t aoff, size_t koff, bool keep)
{
    size_t atl = b->ev.atype.len, al = b->ev.aid.len, kl = b->ev.kind.len;
    if (n <= EVENT_HEAD_MIN || n > sizeof e->event_head[0].bytes || atl + al + kl + 3 > sizeof e->event_head[0].str || !b->ev.atype.s)
        return;
    struct event_head *h = head_pair(e, json);
    if (h[1].used < h[0].used) h++;          /* the one used less recently */
    h->len = (uint16_t)n, h->aoff = (uint16_t)aoff, h->koff = (uint16_t)koff;
    h->member = (int8_t)member;
    h->ns = ns, h->box = b->ev.atype.s == BOX_ACTION, h->decision = b->decision;
    h->generation = e->generation, h->schema = e->s.schema, h->es = e->s.es;
    h->used = e->event_lines;
    h->action_hash = b->action_hash;
    h->ad = ac->ad, h->in_d = ac->in_d, h->out_d = ac->out_d, h->memo = ac->memo;
    h->atlen = (uint16_t)atl, h->aidlen = (uint16_t)al, h->klen = (uint16_t)kl, h->nslen = (uint16_t)nslen;
    h->kept_gen = 0;
    if (keep) head_shared(e, h, json, n, b);
    memcpy(h->str, b->ev.atype.s, atl);
    h->str[atl] = 0;
    memcpy(h->str + atl + 1, b->ev.aid.s, al);
    h->str[atl + 1 + al] = 0;
    memcpy(h->str + atl + al + 2, b->ev.kind.s, kl);
    h->str[atl + al + 2 + kl] = 0;
    memcpy(h->bytes, json, n);
}

/* Box's event line in one pass, no JSON tree (runtime/json_request.h's
 * reader): 1 with *b built exactly as the general path would build it, 0 when
 * the pass does not take the line on: an escape, a float or null, a member
 * twice, an input before its action, any error.  The general path then
 * decides from the start, so every diagnostic stays its own. */
DW_HOT static int event_fast(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b)
{
    dw_arena *a = &e->scratch;
    dw_str str[M__N] = { { 0 } };
    bool have[M__N] = { false };
    dw_value io[2];                          /* input, output */
    const dw_uid *P = &e->box_self, *R = &e->box_unused;
    char atype[256];
    action_of ac = { 0 };
    bool typed = false;                      /* the action's declaration is read: it may not change */
    char msg[8];
    dw_carve carve = { NULL, NULL };
    /* the event's strings and values: in the history's carve when a leaf may keep it */
    dw_carve *hc = values_carve(e, len), *vc = hc ? hc : &carve;
    dw_arena *va = hc ? &e->h.arena : a;
    size_t i = dw_json_skip_ws(json, 0, len);
    if (i >= len || json[i] != '{') return 0;
    i++;
    /* a uid kept in the scratch may be the cache's own: both last until the next event */
    dw_read_cache_next_line(&e->uids);
    e->uids.lend = hc == NULL;
    e->uids.keep = hc != NULL;           /* a kept event's uids and keys: one copy shared by later ones */
    e->event_lines++;
    int head = head_take(e, json, len, b, &ac, have, &str[M_NAMESPACE], hc, &i);   /* the member after a known head */
    if (head == -2) return 0;
    typed = head >= 0;
    size_t nmembers = 0, soff[M__N] = { 0 };   /* where each string member's value began */
    dw_read_cache_uid *scope_sl[2] = { NULL, NULL };   /* the principal's and resource's readings */
    uint64_t scope_ver[2] = { 0, 0 };
    for (;;) {
        int m = head;
        if (head >= 0) head = -1;
        else {
            dw_str key;
            if (!dw_json_fast_key(json, len, &i, &key.s, &key.len)) return 0;
            i = dw_json_skip_ws(json, i, len);
            if (i >= len || json[i] != ':') return 0;
            i++;
            m = member_of(key);
            if (m >= 0 && (have[m] || (typed && (m == M_ACTION || m == M_KIND || m == M_NAMESPACE)))) return 0;
            if (m >= 0) have[m] = true;
        }
        nmembers++;
        dw_value skipped;
        if (m < 0) {                         /* read and ignored, as the general path does (a trace's "expect") */
            if (!dw_json_fast_value(a, &carve, NULL, json, len, &i, NULL, &skipped)) return 0;
        } else if (m == M_PRINCIPAL || m == M_RESOURCE) {
            const dw_uid *u = dw_json_fast_uid(va, vc, &e->uids, json, len, &i);
            if (!u) return 0;
            *(m == M_PRINCIPAL ? &P : &R) = u;
            if ((scope_sl[m == M_RESOURCE] = e->uids.last_uid)) scope_ver[m == M_RESOURCE] = scope_sl[m == M_RESOURCE]->version;
        } else if (m == M_INPUT || m == M_OUTPUT) {
            if (!typed) {                    /* its type comes from the action */
                if (!have[M_ACTION] || !have[M_KIND] || str[M_NAMESPACE].len > 200) return 0;
                size_t atlen;
                const char *at = action_type(atype, have[M_NAMESPACE] ? &str[M_NAMESPACE] : NULL, &atlen);
                if (event_identity(e, b, at, atlen, str[M_ACTION].s, str[M_ACTION].len, str[M_KIND].s, str[M_KIND].len,
                                   vc, va, &ac, msg, sizeof msg))
                    return 0;
                typed = true;
                /* only action, kind and namespace came before: the line's head */
                if (nmembers == 1u + have[M_ACTION] + have[M_KIND] + have[M_NAMESPACE])
                    head_keep(e, json, i, m, b, &ac, have[M_NAMESPACE], str[M_NAMESPACE].len, soff[M_ACTION], soff[M_KIND], hc != NULL);
            }
            const dw_type *t = m == M_INPUT ? (b->decision && ac.in_d ? ac.in_d->type : NULL) : ac.out_d ? ac.out_d->type : NULL;
            if (!dw_json_fast_value(va, vc, &e->uids, json, len, &i, t, &io[m == M_OUTPUT])) return 0;
        } else if (soff[m] = i, !dw_json_fast_string(va, vc, &e->uids, json, len, &i, &str[m].s, &str[m].len)) return 0;
        i = dw_json_skip_ws(json, i, len);
        if (i < len && json[i] == ',') { i++; i = dw_json_skip_ws(json, i, len); continue; }
        if (i < len && json[i] == '}') break;
        return 0;
    }
    if (dw_json_skip_ws(json, i + 1, len) != len || !have[M_ACTION] || !have[M_KIND] || str[M_NAMESPACE].len > 200) return 0;
    int64_t t = *ts;
    if (t == DW_TS_NOW && have[M_TIME] && event_time(e, &str[M_TIME], &t)) return 0;
    if (!typed) {
        size_t atlen;
        const char *at = action_type(atype, have[M_NAMESPACE] ? &str[M_NAMESPACE] : NULL, &atlen);
        if (event_identity(e, b, at, atlen, str[M_ACTION].s, str[M_ACTION].len, str[M_KIND].s, str[M_KIND].len, vc, va,
                           &ac, msg, sizeof msg))
            return 0;
    }
    if (!b->ev.atype.s) return 0;        /* out of memory: the general path says so */
    for (int k = 0; k < 2; k++) b->scope_sl[k] = scope_sl[k], b->scope_ver[k] = scope_ver[k];
    if (event_finish(e, b, &ac, P, R, have[M_INPUT] ? &io[0] : NULL, have[M_OUTPUT] ? &io[1] : NULL,
                     have[M_REQUEST_ID] ? &str[M_REQUEST_ID] : NULL, hc, &carve, msg, sizeof msg) ||
        (e->s.box && dw_box_gate(NULL, NULL, 0, P, R, msg, sizeof msg)))   /* no escape was taken on: no NUL */
        return 0;
    *ts = t;
    b->in_hist = hc != NULL;
    return 1;
}

/* Box's JSON event form -> a built event (and its Cedar request).  *ts is
 * replaced by the event's "time" when the caller gave none.  0 on success;
 * -1 when the line is not an event (v says why); -2 when a decision event
 * fails the schema gate (v holds the deny; b->decision is set). */
DW_HOT int engine_event_from_json(dw_engine *e, const char *json, size_t len, int64_t *ts, built *b, dw_verdict *v)
{
    dw_arena_reset(&e->scratch);
    engine_history_uncarve(e);           /* the last event's values, if it was not kept */
    if (event_fast(e, json, len, ts, b)) return 0;
    dw_arena_reset(&e->scratch);
    engine_history_uncarve(e);
    dw_source src = { "event", json, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(&e->scratch, &src, &d);
    dw_diags_free(&d);
    if (!j || j->kind != DW_JSON_OBJECT) { engine_fault(v, "event is not a JSON object%s", NULL); return -1; }
    /* the members an event may have, in one pass (the first of a name counts, as dw_json_get) */
    const dw_json *m[M__N] = { 0 };
    for (size_t i = 0; i < j->u.obj.n; i++) {
        int k = member_of(j->u.obj.v[i].key);
        if (k >= 0 && !m[k]) m[k] = j->u.obj.v[i].value;
    }
    const dw_json *action = m[M_ACTION], *kind = m[M_KIND], *ns = m[M_NAMESPACE], *time = m[M_TIME];
    if (!action || action->kind != DW_JSON_STRING || !kind || kind->kind != DW_JSON_STRING) {
        engine_fault(v, "event needs string members \"action\" and \"kind\"%s", NULL);
        return -1;
    }
    if (ns && (ns->kind != DW_JSON_STRING || ns->u.str.len > 200)) { engine_fault(v, "event \"namespace\" must be a short string%s", NULL); return -1; }
    char atype[256];
    size_t atlen;
    const char *at = action_type(atype, ns ? &ns->u.str : NULL, &atlen);
    if (*ts == DW_TS_NOW && time && time->kind == DW_JSON_STRING && event_time(e, &time->u.str, ts)) {
        engine_fault(v, "event time is not RFC 3339 UTC (YYYY-MM-DDThh:mm:ss[.fffffffff]Z)%s", NULL);
        return -1;
    }
    const dw_uid *P = &e->box_self, *R = &e->box_unused;
    const dw_json *pj = m[M_PRINCIPAL], *rj = m[M_RESOURCE];
    dw_buf err = { 0 };
    if (pj) P = dw_uid_from_json(&e->scratch, pj, &err);
    if (rj) R = dw_uid_from_json(&e->scratch, rj, &err);
    dw_buf_free(&err);
    if (engine_build_event(e, b, at, atlen, action->u.str.s, action->u.str.len, kind->u.str.s, kind->u.str.len,
                    P, R, m[M_INPUT], m[M_OUTPUT], m[M_REQUEST_ID],
                    v->message, sizeof v->message) ||
        (e->s.box && dw_box_gate(j, json, len, P, R, v->message, sizeof v->message))) {
        v->allow = false;          /* a gate failure: denied and not recorded (box.md §6.1) */
        v->cause = DW_CAUSE_INTERNAL_FAULT;
        return -2;
    }
    return 0;
}
