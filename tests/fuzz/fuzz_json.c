/* libFuzzer target: entities and request JSON.  The input is parsed as JSON;
 * an array is loaded as an entities file, an object as a request.  Every
 * input is also given to the one-pass request reader (runtime/json_request.c)
 * without a schema and with Box's: when it takes a line on, the general path
 * must accept the line too and build the same request, down to the uid and
 * record key hashes (abort otherwise), with and without a uid cache; read
 * through a cache, dw_request_bind_read must bind it as dw_request_bind does
 * (the same canonical uids and entities, from the slots' memo the second time). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/json_request.h"
#include "runtime/load.h"

/* the hashes the VM looks values up by, as the constructors set them */
static bool hashes_right(const dw_value *v, int depth)
{
    if (depth > 200) return true;
    switch ((dw_vkind)v->kind) {
    case DW_V_ENTITY: return v->u.uid->hash == dw_uid_hash(v->u.uid->type, v->u.uid->tlen, v->u.uid->id, v->u.uid->idlen);
    case DW_V_SET:
        for (uint32_t i = 0; i < v->n; i++)
            if (!hashes_right(&v->u.elems[i], depth + 1)) return false;
        return true;
    case DW_V_RECORD:
        for (uint32_t i = 0; i < v->n; i++)
            if (v->u.fields[i].khash != dw_key_hash(v->u.fields[i].key, v->u.fields[i].klen) ||
                !hashes_right(&v->u.fields[i].v, depth + 1))
                return false;
        return true;
    default: return true;
    }
}

/* the one pass against the general path, on one schema (NULL: none),
 * without a uid cache and through two kept across inputs: one that lends its
 * uids, one of a single slot that copies (every object evicts the last) */
static dw_read_cache cache_lend, cache_one;

/* a program and sealed store to bind to: Box's schema (its actions are the
 * store's entities) and a policy that interns Box's principal and an action */
static dw_session bind_sess;
static int bind_ready;
static const char bind_policy[] =
    "permit (principal == Box::Agent::\"self\", action == Box::Action::\"fs:read\", resource);\n";

static void compare_bind(const dw_request *fast, dw_read_cache *c)
{
    if (!bind_ready) {
        static const dw_source src = { "fuzz.cedar", bind_policy, sizeof bind_policy - 1 };
        dw_session_init(&bind_sess);
        bind_sess.quiet = true;
        bind_sess.policy_given = &src;
        bind_ready = dw_session_load_schema(&bind_sess, "box") || dw_session_load_policies(&bind_sess, "fuzz.cedar") ||
                     dw_session_load_entities(&bind_sess, NULL) ? -1 : 1;
    }
    if (bind_ready < 0) abort();
    const dw_program *p = bind_sess.prog;
    const dw_store *st = &bind_sess.store;
    dw_request full = *fast;
    dw_request_bind(&full, p, st);
    for (int round = 0; round < 2; round++) {
        dw_request r = *fast;
        dw_request_bind_read(&r, c, p, st);
        if (r.bound_prog != p || r.bound_store != st) abort();
        for (int i = 0; i < 3; i++)
            if (r.vars[i].u.uid != full.vars[i].u.uid || r.ent[i] != full.ent[i]) abort();
    }
}

static void compare_read(const char *text, size_t size, const dw_json *j, dw_arena *a, const dw_schema *schema,
                         dw_read_cache *c, int took)
{
    dw_request fast, slow;
    if (dw_request_json_fast(a, text, size, schema, schema != NULL, c, &fast) != took) abort();
    if (!took) return;
    dw_buf err = { 0 };
    if (!j || dw_request_from_json(a, dw_json_get(j, "principal"), dw_json_get(j, "action"), dw_json_get(j, "resource"),
                                   dw_json_get(j, "context"), schema, schema != NULL, &slow, &err))
        abort();
    dw_buf_free(&err);
    for (int i = 0; i < 4; i++)
        if (dw_value_cmp(&fast.vars[i], &slow.vars[i]) != 0 || !hashes_right(&fast.vars[i], 0)) abort();
    if (c) compare_bind(&fast, c);
}

static void compare_one_pass(const char *text, size_t size, const dw_json *j, dw_arena *a, const dw_schema *schema)
{
    static bool caches;
    if (!caches) {
        caches = true;
        dw_read_cache_init(&cache_lend, 0);
        cache_lend.lend = true;
        dw_read_cache_init(&cache_one, 1);
    }
    dw_request fast;
    int took = dw_request_json_fast(a, text, size, schema, schema != NULL, NULL, &fast);
    compare_read(text, size, j, a, schema, NULL, took);
    compare_read(text, size, j, a, schema, &cache_lend, took);
    compare_read(text, size, j, a, schema, &cache_one, took);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.json", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_buf err = { 0 };
    const dw_json *j = dw_json_parse(&a, &src, &d);
    static dw_session box;
    static int box_loaded;
    if (!box_loaded) { dw_session_init(&box); box_loaded = dw_session_load_schema(&box, "box") ? -1 : 1; }
    compare_one_pass(text, size, j, &a, NULL);
    if (box_loaded > 0) compare_one_pass(text, size, j, &a, box.schema);
    if (j && j->kind == DW_JSON_ARRAY) {
        dw_store s;
        dw_store_init(&s);
        dw_store_load_json(&s, j, NULL, &err);
        dw_store_free(&s);
    } else if (j && j->kind == DW_JSON_OBJECT) {
        dw_request r;
        dw_request_from_json(&a, dw_json_get(j, "principal"), dw_json_get(j, "action"),
                             dw_json_get(j, "resource"), dw_json_get(j, "context"), NULL, false, &r, &err);
    }
    dw_buf_free(&err);
    dw_arena_free(&a);
    dw_diags_free(&d);
    free(text);
    return 0;
}
