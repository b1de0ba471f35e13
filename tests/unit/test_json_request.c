/* runtime/json_request.c's one-pass request reader against the general path
 * (dw_json_parse + dw_request_from_json): whenever the one pass decodes a
 * line, the general path must accept it too and build the same request; when
 * the general path refuses a line, the one pass must not take it on.  The
 * lines: hand-written edge cases, every prefix of a few valid requests, and
 * every one-byte change of them from a set of bytes that matter to JSON,
 * thousands of random edits of them (seeded), each with Box's schema, a
 * schema with every attribute kind, and none.  "The same request": equal
 * values, and the hashes the VM relies on (uid hashes, record key hashes)
 * and the NUL after every string equal too, at every depth.
 * And the common shapes must take the one pass (the speed is the point). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>
#include "runtime/json_request.h"
#include "runtime/load.h"

static const char kinds_schema[] =
    "namespace T {\n"
    "  entity Folder;\n"
    "  entity User;\n"
    "  entity Doc in [Folder];\n"
    "  entity Color enum [\"red\", \"blue\"];\n"
    "  action read appliesTo { principal: [User], resource: [Doc, Color], context: {\n"
    "    n: Long, ok: Bool, tags: Set<String>, owner?: User, amt?: decimal, ip?: ipaddr,\n"
    "    rec?: { a: String, b?: Long }, s?: String, users?: Set<User>\n"
    "  }};\n"
    "  action open appliesTo { principal: [User], resource: [Doc] };\n"
    "  action nothing;\n"
    "}\n";

/* Box's example requests (examples/box/01, 03, 04: the first line of each) */
static const char *box_lines[] = {
    "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"fs:read\"},\"resource\":{\"type\":\"Box::Resource\","
    "\"id\":\"unused\"},\"context\":{\"input\":{\"path\":\"~/project/src/main.c\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\","
    "\"id\":\"read_content\"}}}}}",
    "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"net:connect\"},\"resource\":{\"type\":\"Box::Resource\","
    "\"id\":\"unused\"},\"context\":{\"input\":{\"host\":\"bedrock-runtime.us-west-2.amazonaws.com\",\"port\":443}}}",
    "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"shell:exec\"},\"resource\":{\"type\":\"Box::Resource\","
    "\"id\":\"unused\"},\"context\":{\"input\":{\"command\":\"ls -la\",\"program\":\"ls\",\"arg1\":\"-la\",\"arg_count\":1,\"cwd\":\"~/project\"}}}",
};

static const char *kinds_lines[] = {
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"alice\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},"
    "\"resource\":{\"type\":\"T::Doc\",\"id\":\"d1\"},\"context\":{\"n\":-42,\"ok\":true,\"tags\":[\"b\",\"a\",\"b\"],"
    "\"owner\":{\"type\":\"T::User\",\"id\":\"bob\"},\"rec\":{\"a\":\"x\",\"b\":0},\"s\":\"caf\xc3\xa9\","
    "\"users\":[{\"__entity\":{\"id\":\"u2\",\"type\":\"T::User\"}},{\"type\":\"T::User\",\"id\":\"u1\"}]}}",
    " { \"action\" : { \"id\" : \"read\" , \"type\" : \"T::Action\" } , \"principal\" : {\"__entity\": {\"type\":\"T::User\",\"id\":\"a\"}},"
    " \"resource\":{\"type\":\"T::Color\",\"id\":\"red\"}, \"context\" : { \"tags\" : [ ] , \"ok\" : false , \"n\" : 0 } } \n",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
};

/* Lines that are edge cases on their own (most must go to the general path). */
static const char *edge_lines[] = {
    "", "{}", "[]", "null", "{\"principal\":1}",
    /* escapes, a NUL, non-ASCII, bad UTF-8 */
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\\u0000b\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"\xe2\x82\xac\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"\xc3\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\tb\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"princip\\u0061l\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    /* repeated, unknown and missing members; the context before its action */
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"principal\":{\"type\":\"T::User\",\"id\":\"b\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"x\":[1,2,{}],\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"}}",
    "{\"context\":{\"n\":1,\"ok\":true,\"tags\":[]},\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\",\"id\":\"b\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"__entity\":{\"type\":\"T::User\",\"id\":\"a\"},\"x\":1},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    /* numbers: i64 bounds, 19 digits, -0, leading zero, fraction, exponent */
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":9223372036854775807,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":-9223372036854775808,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":9223372036854775808,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":999999999999999999,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":-0,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":012,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1.5,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1e3,\"ok\":true,\"tags\":[]}}",
    /* schema: missing required, undeclared, wrong kinds, wrong entity type, extension values, enum ids */
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[],\"zz\":1}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":\"1\",\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[1]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[],\"owner\":{\"type\":\"T::Doc\",\"id\":\"x\"}}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[],\"rec\":{\"__entity\":{\"type\":\"T::User\",\"id\":\"x\"}}}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[],\"amt\":\"1.25\",\"ip\":{\"__extn\":{\"fn\":\"ip\",\"arg\":\"10.0.0.1\"}}}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Color\",\"id\":\"green\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::Doc\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"nothing\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"undeclared\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":1}}}}}}}}}}}}}}}}}}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"s\":[[1],[1],{\"b\":true,\"a\":null}]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"s\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"k\":1,\"k\":2}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}} x",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"t\":true,\"f\":false,\"e\":{},\"l\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"t\":tru}}",
    /* a record's members in the declarations' (sorted) order, in another, and one declared member twice */
    "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"fs:read\"},\"resource\":{\"type\":\"Box::Resource\","
    "\"id\":\"unused\"},\"context\":{\"input\":{\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"enumerate\"}},\"path\":\"~/a\"}}}",
    "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"self\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"fs:read\"},\"resource\":{\"type\":\"Box::Resource\","
    "\"id\":\"unused\"},\"context\":{\"input\":{\"path\":\"~/a\",\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"enumerate\"}},\"path\":\"~/b\"}}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"tags\":[],\"s\":\"x\",\"ok\":true,\"n\":1,\"amt\":\"1.0\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"n\":1,\"ok\":true,\"n\":2,\"tags\":[]}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"},\"context\":{\"users\":[],\"tags\":[\"z\"],\"s\":\"\",\"rec\":{\"b\":1,\"a\":\"\"},\"owner\":{\"type\":\"T::User\",\"id\":\"\"},\"ok\":false,\"n\":-1}}",
    /* uids: compact with a non-ASCII id, spaced, reordered, with a repeated member */
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"\"}}",
    "{\"principal\":{ \"type\":\"T::User\",\"id\":\"a\"},\"action\":{\"type\": \"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\", \"id\":\"d\" }}",
    "{\"principal\":{\"id\":\"a\",\"type\":\"T::User\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\",\"type\":\"T::Action\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
    "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\",\"type\":\"T::User\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}",
};

static dw_session sess_box, sess_kinds;
static const dw_schema *schemas[3];
static unsigned long fast_taken, compared;
/* The uid caches the one pass also reads every line through, across all the
 * lines of the run: one that lends its uids, one of a single slot (every
 * object evicts the last; the lent one is kept for its line) that copies,
 * and one of two slots that lends. */
static dw_read_cache cache_lend, cache_one, cache_two;

static int setup(void **st)
{
    (void)st;
    dw_session_init(&sess_box);
    if (dw_session_load_schema(&sess_box, "box")) return -1;
    dw_session_init(&sess_kinds);
    char path[512];
    snprintf(path, sizeof path, "%s/test_json_request.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) return -1;
    fputs(kinds_schema, f);
    fclose(f);
    int rc = dw_session_load_schema(&sess_kinds, path);
    remove(path);
    if (rc) return -1;
    schemas[0] = sess_box.schema;
    schemas[1] = sess_kinds.schema;
    schemas[2] = NULL;
    dw_read_cache_init(&cache_lend, 0);
    cache_lend.lend = true;
    dw_read_cache_init(&cache_one, 1);
    dw_read_cache_init(&cache_two, 2);
    cache_two.lend = true;
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    dw_session_free(&sess_box);
    dw_session_free(&sess_kinds);
    return 0;
}

/* a and b are the same value, down to the hashes and the NULs after strings. */
static bool same_value(const dw_value *a, const dw_value *b, int depth)
{
    if (dw_value_cmp(a, b) != 0 || depth > 64) return false;
    switch ((dw_vkind)a->kind) {
    case DW_V_STRING: return a->u.s[a->n] == 0 && b->u.s[b->n] == 0;
    case DW_V_ENTITY: {
        const dw_uid *x = a->u.uid, *y = b->u.uid;
        return x->hash == y->hash && x->hash == dw_uid_hash(x->type, x->tlen, x->id, x->idlen) && x->type[x->tlen] == 0 &&
               x->id[x->idlen] == 0;
    }
    case DW_V_SET:
        for (uint32_t i = 0; i < a->n; i++)
            if (!same_value(&a->u.elems[i], &b->u.elems[i], depth + 1)) return false;
        return true;
    case DW_V_RECORD:
        for (uint32_t i = 0; i < a->n; i++) {
            const dw_field *x = &a->u.fields[i], *y = &b->u.fields[i];
            if (x->khash != y->khash || x->khash != dw_key_hash(x->key, x->klen) || x->klen != y->klen ||
                memcmp(x->key, y->key, x->klen + 1) != 0 || !same_value(&x->v, &y->v, depth + 1))
                return false;
        }
        return true;
    default: return true;
    }
}


/* The one pass through cache c (NULL: none) against the general path's slow. */
static int fast_read(const char *text, size_t len, const dw_schema *schema, bool validate, dw_read_cache *c, int rc,
                     const dw_request *slow, const char *why)
{
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_request fast;
    int took = dw_request_json_fast(&a, text, len, schema, validate, c, &fast);
    if (took) {
        if (rc != 0) fail_msg("one pass took a line the general path refuses (%s): %.*s", why, (int)len, text);
        for (int i = 0; i < 4; i++)
            if (!same_value(&fast.vars[i], &slow->vars[i], 0)) fail_msg("var %d differs (cache %p): %.*s", i, (void *)c, (int)len, text);
    }
    dw_arena_free(&a);
    return took;
}

/* The general path's reading of a line (dw_json_parse + dw_request_from_json): 0; -1 (*err says why); -2 not JSON. */
static int general_read(dw_arena *a, const char *text, size_t len, const dw_schema *schema, bool validate, dw_request *out,
                        dw_buf *err)
{
    dw_source src = { "request", text, len };
    dw_diags d;
    dw_diags_init(&d);
    const dw_json *j = dw_json_parse(a, &src, &d);
    dw_diags_free(&d);
    return j ? dw_request_from_json(a, dw_json_get(j, "principal"), dw_json_get(j, "action"), dw_json_get(j, "resource"),
                                    dw_json_get(j, "context"), schema, validate, out, err)
             : -2;
}

/* One line under one schema: the one pass never disagrees with the general
 * path, and a cache changes nothing but the speed. */
static int check_line(const char *text, size_t len, const dw_schema *schema, bool validate)
{
    dw_arena a2;
    dw_arena_init(&a2, 4096);
    dw_request slow;
    dw_buf err = { 0 };
    int rc = general_read(&a2, text, len, schema, validate, &slow, &err);
    const char *why = err.p ? err.p : "not JSON";
    int took = fast_read(text, len, schema, validate, NULL, rc, &slow, why);
    if (fast_read(text, len, schema, validate, &cache_lend, rc, &slow, why) != took ||
        fast_read(text, len, schema, validate, &cache_one, rc, &slow, why) != took ||
        fast_read(text, len, schema, validate, &cache_two, rc, &slow, why) != took)
        fail_msg("a cache changes whether the one pass takes the line: %.*s", (int)len, text);
    if (took) fast_taken++;
    compared++;
    /* and the entry point gives the general path's answer either way */
    dw_request r;
    dw_buf e2 = { 0 };
    dw_arena a3;
    dw_arena_init(&a3, 4096);
    int rc2 = dw_request_parse_json(&a3, text, len, schema, validate, NULL, &r, &e2);
    if ((rc2 == 0) != (rc == 0)) fail_msg("dw_request_parse_json says %d, the general path %d: %.*s", rc2, rc, (int)len, text);
    if (rc == -1 && (!e2.p || !err.p || strcmp(e2.p, err.p) != 0)) fail_msg("messages differ: %s / %s", e2.p, err.p);
    dw_buf_free(&e2);
    dw_buf_free(&err);
    dw_arena_free(&a2);
    dw_arena_free(&a3);
    return took;
}

static void check_all_schemas(const char *text, size_t len)
{
    for (int s = 0; s < 3; s++) {
        check_line(text, len, schemas[s], true);
        if (schemas[s]) check_line(text, len, schemas[s], false);
    }
}

static void test_common_shapes_take_the_one_pass(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof box_lines / sizeof *box_lines; i++) {
        assert_int_equal(check_line(box_lines[i], strlen(box_lines[i]), schemas[0], true), 1);
        assert_int_equal(check_line(box_lines[i], strlen(box_lines[i]), NULL, false), 1);
    }
    for (size_t i = 0; i < sizeof kinds_lines / sizeof *kinds_lines; i++)
        assert_int_equal(check_line(kinds_lines[i], strlen(kinds_lines[i]), schemas[1], true), 1);
}

static void test_edge_cases_agree(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof edge_lines / sizeof *edge_lines; i++) check_all_schemas(edge_lines[i], strlen(edge_lines[i]));
    /* an embedded NUL is a byte like any other, not the end of the line */
    static const char nul[] = "{\"principal\":{\"type\":\"T::User\",\"id\":\"a\0\"},\"action\":{\"type\":\"T::Action\",\"id\":\"open\"},\"resource\":{\"type\":\"T::Doc\",\"id\":\"d\"}}";
    check_all_schemas(nul, sizeof nul - 1);
    check_all_schemas(nul, 39);
}

static void mutate_all(const char *line)
{
    static const char bytes[] = "\"\\{}[],: \t0-1.eEtfn\x01\x80\xc3";
    size_t len = strlen(line);
    char *buf = malloc(len + 2);
    assert_non_null(buf);
    for (size_t cut = 0; cut < len; cut++) check_all_schemas(line, cut);
    for (size_t at = 0; at < len; at++)
        for (size_t b = 0; b < sizeof bytes - 1; b++) {
            memcpy(buf, line, len);
            buf[at] = bytes[b];
            check_all_schemas(buf, len);
            /* inserted, too */
            memcpy(buf, line, at);
            buf[at] = bytes[b];
            memcpy(buf + at + 1, line + at, len - at);
            check_all_schemas(buf, len + 1);
        }
    free(buf);
}

/* Seeded random edits of line: n lines, each one to four edits (a byte
 * replaced by one that matters to JSON or by any byte, a byte deleted, a
 * span repeated), checked under every schema. */
static void random_edits(const char *line, unsigned n, uint64_t seed)
{
    static const char bytes[] = "\"\\{}[],: 0-1.eEtfnu\x01\x80\xc3\xed\xa0";
    size_t len = strlen(line), cap = 2 * len + 64;
    char *buf = malloc(cap);
    assert_non_null(buf);
    uint64_t x = seed;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (unsigned t = 0; t < n; t++) {
        size_t bl = len;
        memcpy(buf, line, len);
        for (unsigned e = 0, ne = 1 + (unsigned)(RND() % 4); e < ne && bl; e++) {
            size_t at = (size_t)(RND() % bl);
            switch (RND() % 4) {
            case 0: buf[at] = bytes[RND() % (sizeof bytes - 1)]; break;
            case 1: buf[at] = (char)(RND() & 0xff); break;
            case 2: memmove(buf + at, buf + at + 1, bl - at - 1); bl--; break;
            default: {
                size_t sl = 1 + (size_t)(RND() % 12);
                if (at + sl > bl || bl + sl > cap) break;
                memmove(buf + at + sl, buf + at, bl - at);
                bl += sl;
            }
            }
        }
        check_all_schemas(buf, bl);
    }
#undef RND
    free(buf);
}

static void test_random_edits_agree(void **st)
{
    (void)st;
    unsigned long before = compared;
    for (size_t i = 0; i < sizeof box_lines / sizeof *box_lines; i++) random_edits(box_lines[i], 3000, 0x9E3779B97F4A7C15ull + i);
    for (size_t i = 0; i < sizeof kinds_lines / sizeof *kinds_lines; i++) random_edits(kinds_lines[i], 3000, 0xD1B54A32D192ED03ull + i);
    printf("%lu randomly edited lines compared\n", compared - before);
}

static void test_prefixes_and_one_byte_changes_agree(void **st)
{
    (void)st;
    mutate_all(box_lines[0]);
    mutate_all(box_lines[2]);
    mutate_all(kinds_lines[0]);
    mutate_all(kinds_lines[1]);
    printf("%lu lines compared, %lu taken by the one pass\n", compared, fast_taken);
}


/* Read line through c and check it against the general path: the one pass must take it. */
static void cached_read(dw_read_cache *c, const char *line, const dw_schema *schema, dw_arena *a, dw_request *out)
{
    size_t len = strlen(line);
    dw_arena sa;
    dw_arena_init(&sa, 4096);
    dw_buf err = { 0 };
    dw_request slow;
    assert_int_equal(general_read(&sa, line, len, schema, schema != NULL, &slow, &err), 0);
    dw_arena_reset(a);
    assert_int_equal(dw_request_json_fast(a, line, len, schema, schema != NULL, c, out), 1);
    for (int i = 0; i < 4; i++)
        if (!same_value(&out->vars[i], &slow.vars[i], 0)) fail_msg("var %d differs: %s", i, line);
    dw_buf_free(&err);
    dw_arena_free(&sa);
}

/* Whether u is one of c's slots' own uids (lent, not copied into the arena). */
static bool in_cache(const dw_read_cache *c, const dw_uid *u)
{
    return (const char *)u >= (const char *)c && (const char *)u < (const char *)(c + 1);
}

/* uid readings taken: one by one, or three at a time with a line head */
#define UID_HITS(c) ((c).hits + 3 * (c).head_hits)

static const char box_p[] = "{\"principal\":{\"type\":\"Box::Agent\",\"id\":\"%s\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"fs:read\"},"
                            "\"resource\":{\"type\":\"Box::Resource\",\"id\":\"unused\"},\"context\":{\"input\":{\"path\":\"~/a\","
                            "\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"read_content\"}}}}}";

/* The uid cache: hits, misses, eviction, what is lent and for how long, and
 * that only the same bytes hit (a stored reading whose key matches but whose
 * bytes differ by one is not taken). */
static void test_uid_cache(void **st)
{
    (void)st;
    static dw_read_cache c;
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_request r;
    char line[1024];
    const dw_schema *box = schemas[0];

    /* 64 slots, lending: a line's four uid objects are stored, then hit */
    dw_read_cache_init(&c, 0);
    c.lend = true;
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(c.misses, 4);
    assert_int_equal(UID_HITS(c), 0);
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(UID_HITS(c), 4);
    assert_true(in_cache(&c, r.vars[0].u.uid) && in_cache(&c, r.vars[1].u.uid) && in_cache(&c, r.vars[2].u.uid));
    /* one byte of the principal's id changed: a miss, its own reading */
    snprintf(line, sizeof line, box_p, "selg");
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(c.misses, 5);
    assert_int_equal(UID_HITS(c), 7);
    assert_string_equal(r.vars[0].u.uid->id, "selg");
    snprintf(line, sizeof line, box_p, "self");
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(UID_HITS(c), 11);
    assert_string_equal(r.vars[0].u.uid->id, "self");

    /* a stored reading whose key and length match but one byte differs (a
     * collision, forged): not a hit */
    dw_read_cache_uid *sl = NULL;
    for (size_t k = 0; k < DW_READ_CACHE_UID_SLOTS; k++)
        if (c.slot[k].key && c.slot[k].uid.idlen == 4 && memcmp(c.slot[k].uid.id, "self", 4) == 0) sl = &c.slot[k];
    assert_non_null(sl);
    sl->raw[sl->ioff + 1] = 'x';             /* the stored bytes now say "sxlf" */
    c.head[0].len = c.head[1].len = 0;       /* (no line head in the way) */
    uint64_t hits = UID_HITS(c), misses = c.misses;
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(UID_HITS(c), hits + 3);
    assert_int_equal(c.misses, misses + 1);   /* read again and stored again */
    assert_string_equal(r.vars[0].u.uid->id, "self");
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(UID_HITS(c), hits + 7);

    /* not lending: every uid is the arena's, hits included */
    c.lend = false;
    cached_read(&c, line, box, &a, &r);
    for (int i = 0; i < 3; i++) assert_false(in_cache(&c, r.vars[i].u.uid));
    assert_int_equal(UID_HITS(c), hits + 11);

    /* one slot, lending: the first object of a line keeps it for the line,
     * the others are read and copied; the next line may take it over */
    dw_read_cache_init(&c, 1);
    c.lend = true;
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(c.misses, 1);
    assert_true(in_cache(&c, r.vars[0].u.uid));
    assert_false(in_cache(&c, r.vars[1].u.uid));
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(c.hits, 1);
    snprintf(line, sizeof line, box_p, "other");
    cached_read(&c, line, box, &a, &r);    /* evicts "self" */
    assert_int_equal(c.misses, 2);
    assert_string_equal(r.vars[0].u.uid->id, "other");
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(c.misses, 3);
    assert_int_equal(c.hits, 1);
    /* a caller that never starts a new line only stops storing */
    c.line--;
    cached_read(&c, line, box, &a, &r);    /* dw_request_json_fast counts the line: the same as the last */
    assert_int_equal(c.misses, 3);
    assert_string_equal(r.vars[0].u.uid->id, "other");

    /* an id holding a '}' (the object does not end at its first '}'), an
     * escaped one, a long one: read every time, never stored */
    dw_read_cache_init(&c, 0);
    c.lend = true;
    snprintf(line, sizeof line, box_p, "a}b");
    cached_read(&c, line, box, &a, &r);
    cached_read(&c, line, box, &a, &r);
    assert_string_equal(r.vars[0].u.uid->id, "a}b");
    assert_int_equal(c.hits, 3);             /* action, resource, operation */
    char id[200];
    memset(id, 'q', sizeof id - 1);
    id[sizeof id - 1] = 0;
    snprintf(line, sizeof line, box_p, id);
    cached_read(&c, line, box, &a, &r);
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(c.hits, 9);
    assert_int_equal(r.vars[0].u.uid->idlen, sizeof id - 1);
    assert_int_equal(c.misses, 3);

    /* a pair of slots: the one read less recently makes room (uid objects
     * read one at a time, a line each) */
    dw_read_cache_init(&c, 2);
    static const char *objs[] = { "{\"type\":\"T::User\",\"id\":\"alice\"}", "{\"type\":\"T::User\",\"id\":\"bob\"}",
                                  "{\"type\":\"T::User\",\"id\":\"carol\"}" };
    static const int order[] = { 0, 1, 0, 2, 0, 1 }, hit[] = { 0, 0, 1, 0, 1, 0 };
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        dw_read_cache_next_line(&c);
        uint64_t h0 = c.hits;
        dw_carve cv = { NULL, NULL };
        size_t pos = 0;
        const dw_uid *u = dw_json_fast_uid(&a, &cv, &c, objs[order[k]], strlen(objs[order[k]]), &pos);
        assert_non_null(u);
        assert_int_equal(pos, strlen(objs[order[k]]));
        assert_int_equal(u->hash, dw_uid_hash(u->type, u->tlen, u->id, u->idlen));
        assert_non_null(strstr(objs[order[k]], u->id));
        assert_int_equal(c.hits - h0, (uint64_t)hit[k]);
    }

    /* short strings (an event's action and kind) through the key slots:
     * only the same bytes hit, lent or copied */
    dw_read_cache_init(&c, 0);
    c.lend = true;
    static const char *strs[] = { "\"fs:read\" ", "\"fs:read\"", "\"fs:reaf\"", "\"fs:read\"", "\"request\",", "\"a-rather-long-kind-name\"" };
    int str_hit[] = { 0, 1, 0, 1, 0, 0 };
    size_t ql1, ql2;   /* "fs:read" is still there unless "fs:reaf" took its slot */
    uint64_t w1 = dw_read_cache_key_word(strs[1] + 1, &ql1), w2 = dw_read_cache_key_word(strs[2] + 1, &ql2);
    if (dw_read_cache_key_slot(&c, w1, ql1) == dw_read_cache_key_slot(&c, w2, ql2)) str_hit[3] = 0;
    for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) {
        dw_read_cache_next_line(&c);
        uint64_t h0 = c.key_hits;
        dw_carve cv = { NULL, NULL };
        size_t pos = 0, n, want = strchr(strs[k] + 1, '"') - strs[k] - 1;
        const char *v;
        assert_true(dw_json_fast_string(&a, &cv, &c, strs[k], strlen(strs[k]), &pos, &v, &n));
        assert_int_equal(n, want);
        assert_int_equal(pos, want + 2);
        assert_memory_equal(v, strs[k] + 1, n);
        assert_int_equal(v[n], 0);
        assert_true(in_cache(&c, (const dw_uid *)(const void *)v));
        assert_int_equal(c.key_hits - h0, (uint64_t)str_hit[k]);
    }
    c.lend = false;
    {
        dw_carve cv = { NULL, NULL };
        size_t pos = 0, n;
        const char *v;
        uint64_t h0 = c.key_hits;
        assert_true(dw_json_fast_string(&a, &cv, &c, strs[4], strlen(strs[4]), &pos, &v, &n));
        assert_int_equal(c.key_hits, h0 + 1);
        assert_false(in_cache(&c, (const dw_uid *)(const void *)v));
        assert_string_equal(v, "request");
    }

    /* line heads: a line that begins with the bytes of one read before, up to
     * its context's value, takes that reading of its principal, action and
     * resource, while their slots still hold them */
    dw_read_cache_init(&c, 0);
    c.lend = true;
    cached_read(&c, box_lines[0], box, &a, &r);
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(c.head_hits, 1);
    snprintf(line, sizeof line, box_p, "self");   /* the same head, another context */
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(c.head_hits, 2);
    assert_string_equal(r.vars[DW_VAR_C].u.fields[0].v.u.fields[1].v.u.s, "~/a");
    snprintf(line, sizeof line, box_p, "selg");   /* one byte of the head changed */
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(c.head_hits, 2);
    assert_string_equal(r.vars[0].u.uid->id, "selg");
    snprintf(line, sizeof line, box_p, "self");   /* the older head, still kept */
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(c.head_hits, 3);
    assert_string_equal(r.vars[0].u.uid->id, "self");
    c.head[0].sl[0]->version += 1000;             /* its principal's slot taken over meanwhile */
    cached_read(&c, line, box, &a, &r);
    assert_int_equal(c.head_hits, 3);
    assert_string_equal(r.vars[0].u.uid->id, "self");
    cached_read(&c, line, box, &a, &r);           /* read again: its own head */
    assert_int_equal(c.head_hits, 4);
    size_t hl = c.head[0].len;                    /* the head alone, and with an empty context */
    assert_int_equal(dw_request_json_fast(&a, line, hl, box, true, &c, &r), 0);
    memcpy(line + hl, "{}}", 4);
    assert_int_equal(dw_request_json_fast(&a, line, hl + 3, box, true, &c, &r), 0);
    dw_buf herr = { 0 };
    assert_int_equal(dw_request_parse_json(&a, line, hl + 3, box, true, &c, &r, &herr), -1);
    assert_non_null(strstr(herr.p, "input"));
    dw_buf_free(&herr);
    c.lend = false;                               /* not lending: no head */
    cached_read(&c, box_lines[0], box, &a, &r);
    assert_int_equal(c.head_hits, 6);             /* (the two reads of the head above) */
    for (int i = 0; i < 3; i++) assert_false(in_cache(&c, r.vars[i].u.uid));

    /* a key's declaration is kept per record type: "b", declared in rec's
     * type, is not declared in the context's */
    dw_read_cache_init(&c, 0);
    c.lend = true;
    cached_read(&c, kinds_lines[0], schemas[1], &a, &r);
    cached_read(&c, kinds_lines[0], schemas[1], &a, &r);
    static const char undeclared_b[] = "{\"principal\":{\"type\":\"T::User\",\"id\":\"alice\"},\"action\":{\"type\":\"T::Action\",\"id\":\"read\"},"
                                       "\"resource\":{\"type\":\"T::Doc\",\"id\":\"d1\"},\"context\":{\"n\":1,\"ok\":true,\"tags\":[],\"b\":0}}";
    const dw_read_cache_key *kb = NULL;
    for (size_t k = 0; k < DW_READ_CACHE_KEY_SLOTS; k++)
        if (c.keys[k].len == 1 && c.keys[k].s[0] == 'b') kb = &c.keys[k];
    assert_true(kb && kb->in_type && kb->decl);   /* rec's answer */
    assert_int_equal(dw_request_json_fast(&a, undeclared_b, strlen(undeclared_b), schemas[1], true, &c, &r), 0);
    cached_read(&c, kinds_lines[0], schemas[1], &a, &r);

    /* the schema answers kept with an action's reading: a request check that
     * passed for one principal is not taken for another (here of a type the
     * action does not allow), nor for another schema or validate */
    dw_read_cache_init(&c, 0);
    c.lend = true;
    cached_read(&c, box_lines[0], box, &a, &r);
    cached_read(&c, box_lines[0], box, &a, &r);
    static const char wrong[] = "{\"principal\":{\"type\":\"Box::Resource\",\"id\":\"unused\"},\"action\":{\"type\":\"Box::Action\",\"id\":\"fs:read\"},"
                                "\"resource\":{\"type\":\"Box::Resource\",\"id\":\"unused\"},\"context\":{\"input\":{\"path\":\"~/a\","
                                "\"operation\":{\"__entity\":{\"type\":\"Box::FsReadOperation\",\"id\":\"read_content\"}}}}}";
    hits = c.hits;
    assert_int_equal(dw_request_json_fast(&a, wrong, strlen(wrong), box, true, &c, &r), 0);
    assert_int_equal(c.hits, hits + 4);       /* every reading a hit: only the check says no */
    dw_buf err = { 0 };
    assert_int_equal(dw_request_parse_json(&a, wrong, strlen(wrong), box, true, &c, &r, &err), -1);
    assert_non_null(strstr(err.p, "principal type Box::Resource is not allowed"));
    dw_buf_free(&err);
    assert_int_equal(dw_request_json_fast(&a, wrong, strlen(wrong), box, false, &c, &r), 1);   /* unchecked */
    assert_int_equal(dw_request_json_fast(&a, wrong, strlen(wrong), box, true, &c, &r), 0);
    cached_read(&c, box_lines[0], box, &a, &r);
    /* another schema: its own answers (Box's action is not declared there) */
    assert_int_equal(dw_request_json_fast(&a, box_lines[0], strlen(box_lines[0]), schemas[1], true, &c, &r), 0);
    cached_read(&c, box_lines[0], NULL, &a, &r);
    cached_read(&c, box_lines[0], box, &a, &r);
    dw_arena_free(&a);
}

/* A session on Box's schema whose policy names the principal and action of
 * box_p (so the program interns them), its store sealed without entities. */
static void bind_session(dw_session *s)
{
    static const char text[] = "permit (principal == Box::Agent::\"self\", action == Box::Action::\"fs:read\", resource);\n";
    static const dw_source src = { "bind.cedar", text, sizeof text - 1 };   /* in memory: no file */
    dw_session_init(s);
    s->quiet = true;
    s->policy_given = &src;
    assert_int_equal(dw_session_load_schema(s, "box"), 0);
    assert_int_equal(dw_session_load_policies(s, "bind.cedar"), 0);
    assert_int_equal(dw_session_load_entities(s, NULL), 0);
}

/* What dw_request_bind makes of a copy of r, checked against r as
 * dw_request_bind_read bound it. */
static void assert_bound_as_bind(const dw_request *r, const dw_session *s)
{
    dw_request full = *r;
    dw_request_bind(&full, s->prog, &s->store);
    assert_ptr_equal(r->bound_prog, s->prog);
    assert_ptr_equal(r->bound_store, &s->store);
    for (int i = 0; i < 3; i++) {
        assert_ptr_equal(r->vars[i].u.uid, full.vars[i].u.uid);
        assert_ptr_equal(r->ent[i], full.ent[i]);
    }
}

/* dw_request_bind_read takes a slot's remembered bind only for the program
 * and sealed store it was made with, only for the request read last, and only
 * for a lent reading: a reload (another program) or an entity added to the
 * store after the bind is never answered from the memo (the entity would be
 * missed: a stale NULL). */
static void test_bind_read(void **st)
{
    (void)st;
    static dw_read_cache c;
    static dw_session s1, s2;
    bind_session(&s1);
    bind_session(&s2);
    assert_true(s1.prog->serial && s2.prog->serial && s1.prog->serial != s2.prog->serial);
    assert_true(s1.store.serial && s2.store.serial && s1.store.serial != s2.store.serial);
    dw_arena a;
    dw_arena_init(&a, 4096);
    dw_request r;
    char line[1024];
    snprintf(line, sizeof line, box_p, "self");
    dw_read_cache_init(&c, 0);
    c.lend = true;
    for (int round = 0; round < 3; round++) {          /* a miss, then the memo */
        cached_read(&c, line, s1.schema, &a, &r);
        dw_request_bind_read(&r, &c, s1.prog, &s1.store);
        assert_bound_as_bind(&r, &s1);
        assert_non_null(dw_program_find_uid(s1.prog, r.vars[0].u.uid));   /* interned: the program's own uid */
        assert_ptr_equal(r.vars[0].u.uid, dw_program_find_uid(s1.prog, r.vars[0].u.uid));
    }
    assert_int_equal(c.req_sl[0]->bind_prog_serial, s1.prog->serial);
    /* another program with the same store (a reload that keeps the entities) */
    cached_read(&c, line, s1.schema, &a, &r);
    dw_request_bind_read(&r, &c, s2.prog, &s1.store);
    assert_ptr_equal(r.vars[0].u.uid, dw_program_find_uid(s2.prog, r.vars[0].u.uid));
    assert_ptr_not_equal(r.vars[0].u.uid, dw_program_find_uid(s1.prog, r.vars[0].u.uid));
    /* another program on the same readings: its own interned uids, not s1's */
    cached_read(&c, line, s2.schema, &a, &r);
    dw_request_bind_read(&r, &c, s2.prog, &s2.store);
    assert_bound_as_bind(&r, &s2);
    assert_ptr_equal(r.vars[0].u.uid, dw_program_find_uid(s2.prog, r.vars[0].u.uid));
    assert_ptr_not_equal(r.vars[0].u.uid, dw_program_find_uid(s1.prog, r.vars[0].u.uid));
    /* back on s1, then an entity for the resource put into s1's store: it must be found */
    cached_read(&c, line, s1.schema, &a, &r);
    dw_request_bind_read(&r, &c, s1.prog, &s1.store);
    assert_null(r.ent[2]);
    bool created;
    assert_non_null(dw_store_put(&s1.store, r.vars[2].u.uid, &created));
    assert_true(created);
    assert_int_equal(s1.store.serial, 0);
    cached_read(&c, line, s1.schema, &a, &r);
    dw_request_bind_read(&r, &c, s1.prog, &s1.store);
    assert_bound_as_bind(&r, &s1);
    assert_non_null(r.ent[2]);
    assert_int_equal(dw_store_seal(&s1.store), 0);
    assert_true(s1.store.serial != 0);
    for (int round = 0; round < 2; round++) {
        cached_read(&c, line, s1.schema, &a, &r);
        dw_request_bind_read(&r, &c, s1.prog, &s1.store);
        assert_bound_as_bind(&r, &s1);
        assert_non_null(r.ent[2]);
    }
    /* a request that is not the last one read, or not lent: bound in full */
    dw_request other = r;
    cached_read(&c, box_lines[0], s1.schema, &a, &r);
    other.vars[0].u.uid = r.vars[0].u.uid;     /* a uid of another reading */
    c.req_line = 0;
    dw_request_bind_read(&other, &c, s2.prog, &s2.store);
    assert_bound_as_bind(&other, &s2);
    c.lend = false;
    cached_read(&c, line, s1.schema, &a, &r);
    assert_false(in_cache(&c, r.vars[0].u.uid));
    dw_request_bind_read(&r, &c, s1.prog, &s1.store);
    assert_bound_as_bind(&r, &s1);
    dw_arena_free(&a);
    dw_session_free(&s1);
    dw_session_free(&s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_shapes_take_the_one_pass),
        cmocka_unit_test(test_edge_cases_agree),
        cmocka_unit_test(test_prefixes_and_one_byte_changes_agree),
        cmocka_unit_test(test_random_edits_agree),
        cmocka_unit_test(test_uid_cache),
        cmocka_unit_test(test_bind_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
