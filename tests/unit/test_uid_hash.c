/* stdlib/uid_hash.h and the schema's hash index (lang/schema_model.c):
 * dw_uid_hash_typed(dw_type_hash(t), id) is vm/value.c's dw_uid_hash(t, id)
 * for every length (a uid read from JSON carries the first, the program and
 * the store look it up by the second); the index finds every entity type and
 * action the binary search finds and nothing else, and a schema whose arrays
 * changed after the index was built is searched without it; the per-action
 * enumerated-scope bits are those a search over the appliesTo lists gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include "lang/schema.h"
#include "runtime/load.h"
#include "stdlib/uid_hash.h"
#include "vm/value.h"

static void test_two_step_hash_is_dw_uid_hash(void **st)
{
    (void)st;
    char t[300], id[300];
    uint64_t x = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < sizeof t; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        t[i] = (char)x;
        id[i] = (char)(x >> 8);
    }
    for (size_t tl = 0; tl < sizeof t; tl += 1 + tl / 8)
        for (size_t il = 0; il < sizeof id; il += 1 + il / 8)
            assert_true(dw_uid_hash_typed(dw_type_hash(t, tl), id, il) == dw_uid_hash(t, tl, id, il));
    assert_true(dw_uid_hash_typed(dw_type_hash("Box::Agent", 10), "self", 4) == dw_uid_hash("Box::Agent", 10, "self", 4));
}

static void test_schema_index_finds_what_the_search_finds(void **st)
{
    (void)st;
    dw_session s;
    dw_session_init(&s);
    assert_int_equal(dw_session_load_schema(&s, "box"), 0);
    dw_schema *sc = (dw_schema *)s.schema;
    assert_non_null(sc->index);
    assert_true(sc->nentities > 0 && sc->nactions > 0);
    for (size_t i = 0; i < sc->nentities; i++) {
        const dw_str *n = &sc->entities[i].name;
        assert_ptr_equal(dw_schema_entity(sc, n->s, n->len), &sc->entities[i]);
        assert_ptr_equal(dw_schema_entity_h(sc, n->s, n->len, dw_type_hash(n->s, n->len)), &sc->entities[i]);
        assert_null(dw_schema_entity(sc, n->s, n->len - 1));       /* a prefix is another name */
    }
    for (size_t i = 0; i < sc->nactions; i++) {
        const dw_euid_lit *u = &sc->actions[i].uid;
        assert_ptr_equal(dw_schema_action(sc, u->type.s, u->type.len, u->id.s, u->id.len), &sc->actions[i]);
        uint64_t h = dw_uid_hash_typed(dw_type_hash(u->type.s, u->type.len), u->id.s, u->id.len);
        assert_ptr_equal(dw_schema_action_h(sc, u->type.s, u->type.len, u->id.s, u->id.len, h), &sc->actions[i]);
        assert_null(dw_schema_action(sc, u->type.s, u->type.len, u->id.s, u->id.len - 1));
        assert_null(dw_schema_action(sc, u->id.s, u->id.len, u->type.s, u->type.len));
    }
    assert_null(dw_schema_entity(sc, "Box::Nope", 9));
    assert_null(dw_schema_action(sc, "Box::Action", 11, "nope", 4));
    /* the arrays as they are, not as they were: one entity fewer is searched without the index */
    const dw_str last = sc->entities[sc->nentities - 1].name;
    sc->nentities--;
    assert_null(dw_schema_entity(sc, last.s, last.len));
    assert_null(dw_schema_entity_h(sc, last.s, last.len, dw_type_hash(last.s, last.len)));
    assert_ptr_equal(dw_schema_entity(sc, sc->entities[0].name.s, sc->entities[0].name.len), &sc->entities[0]);
    sc->nentities++;
    assert_non_null(dw_schema_entity(sc, last.s, last.len));
    dw_session_free(&s);
}

static const char enum_schema[] =
    "namespace T {\n"
    "  entity User; entity Doc;\n"
    "  entity Color enum [\"red\", \"blue\"];\n"
    "  entity Mode enum [\"on\"];\n"
    "  action a appliesTo { principal: [User], resource: [Doc] };\n"
    "  action b appliesTo { principal: [User], resource: [Doc, Color] };\n"
    "  action c appliesTo { principal: [Mode, User], resource: [Color] };\n"
    "  action d appliesTo { principal: [Mode], resource: [Doc] };\n"
    "  action e;\n"
    "}\n";

static void test_scope_enum_bits(void **st)
{
    (void)st;
    char path[512];
    snprintf(path, sizeof path, "%s/test_uid_hash.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    assert_non_null(f);
    fputs(enum_schema, f);
    fclose(f);
    dw_session s;
    dw_session_init(&s);
    int rc = dw_session_load_schema(&s, path);
    remove(path);
    assert_int_equal(rc, 0);
    const dw_schema *sc = s.schema;
    assert_non_null(sc->index);
    unsigned seen = 0;
    for (size_t i = 0; i < sc->nactions; i++) {
        const dw_action_decl *ad = &sc->actions[i];
        unsigned want = 0;
        for (size_t k = 0; k < ad->nprincipals; k++) {
            const dw_entity_decl *d = dw_schema_entity(sc, ad->principals[k].s, ad->principals[k].len);
            if (d && d->is_enum) want |= DW_SCOPE_ENUM_PRINCIPAL;
        }
        for (size_t k = 0; k < ad->nresources; k++) {
            const dw_entity_decl *d = dw_schema_entity(sc, ad->resources[k].s, ad->resources[k].len);
            if (d && d->is_enum) want |= DW_SCOPE_ENUM_RESOURCE;
        }
        assert_int_equal(dw_schema_scope_enums(sc, ad), want);
        seen |= 1u << want;
    }
    assert_int_equal(seen, 0xf);          /* every combination occurs */
    dw_action_decl other = sc->actions[0];
    assert_int_equal(dw_schema_scope_enums(sc, &other), DW_SCOPE_ENUM_PRINCIPAL | DW_SCOPE_ENUM_RESOURCE);
    dw_session_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_step_hash_is_dw_uid_hash),
        cmocka_unit_test(test_schema_index_finds_what_the_search_finds),
        cmocka_unit_test(test_scope_enum_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
