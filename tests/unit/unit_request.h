/* unit_request.h - entity stores and requests from JSON text, for the unit
 * suites that decide whole requests (test_scope_prefix, test_vm_fast).
 * Include after <cmocka.h>. */
#ifndef DW_UNIT_REQUEST_H
#define DW_UNIT_REQUEST_H
#include <string.h>
#include "runtime/json_value.h"
#include "vm/vm.h"

/* A store holding the entities of a JSON array. */
static inline void unit_store_json(dw_store *st, const char *entities)
{
    dw_store_init(st);
    dw_diags d;
    dw_diags_init(&d);
    dw_source src = { "entities.json", entities, strlen(entities) };
    const dw_json *j = dw_json_parse(&st->arena, &src, &d);
    assert_non_null(j);
    dw_buf err = { 0 };
    assert_int_equal(dw_store_load_json(st, j, NULL, &err), 0);
    dw_buf_free(&err);
    dw_diags_free(&d);
}

/* A request from Cedar request JSON (in arena a), bound to prog and st. */
static inline void unit_request_json(dw_arena *a, const dw_program *prog, const dw_store *st, const char *rq, dw_request *req)
{
    dw_diags d;
    dw_diags_init(&d);
    dw_source rs = { "req.json", rq, strlen(rq) };
    const dw_json *j = dw_json_parse(a, &rs, &d);
    if (!j) fail_msg("bad request %s", rq);
    dw_buf err = { 0 };
    assert_int_equal(dw_request_from_json(a, dw_json_get(j, "principal"), dw_json_get(j, "action"),
                                          dw_json_get(j, "resource"), dw_json_get(j, "context"), NULL, false, req, &err), 0);
    dw_buf_free(&err);
    dw_diags_free(&d);
    dw_request_bind(req, prog, st);
}

#endif
