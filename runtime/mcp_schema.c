/* mcp_schema.c - an action schema from an MCP tool manifest (dogwood.md
 * §11.3, `dwc dogwood schema mcp --manifest FILE`): one action per tool, in
 * [Action::"CallTool"]; the tool's inputSchema becomes context.input, its
 * outputSchema an optional context.output (optional: a request has none,
 * its response does); JSON Schema's integer is Long, string String, boolean
 * Bool, number decimal only when asked for (--number decimal: Cedar has no
 * floating point), array Set<items>, object a record (its `required`
 * properties required, the rest optional; a type list with "null" makes a
 * property optional).  What Cedar cannot say ($ref, anyOf, oneOf, allOf, an
 * array without items, a number without --number decimal) is an error at
 * its JSON position, never guessed.  The manifest is MCP's tools/list
 * result ({"tools": [...]}), the JSON-RPC response holding it, or the bare
 * list. */
#include "mcp_schema.h"
#include <string.h>
#include "../lang/strlit.h"

typedef struct mcp_w { FILE *out; const dw_source *src; dw_diags *d; const dw_mcp_options *opt; int err; } mcp_w;

static void fail(mcp_w *w, const dw_json *at, const char *msg, const char *arg)
{
    if (w->err) return;
    dw_error(w->d, w->src, dw_loc_at(w->src, at->off, at->end), msg, arg ? arg : "");
    w->err = 1;
}

static void quoted(mcp_w *w, dw_str s) { dw_str_print_quoted(w->out, s.s, s.len); }

/* The JSON Schema type name of s ("null" dropped from a list); NULL if none. */
static const dw_json *type_of(mcp_w *w, const dw_json *s, bool *nullable)
{
    *nullable = false;
    const dw_json *t = dw_json_get(s, "type");
    if (!t) return NULL;
    if (t->kind == DW_JSON_STRING) return t;
    if (t->kind != DW_JSON_ARRAY) { fail(w, t, "`type` must be a string or a list of strings%s", NULL); return NULL; }
    const dw_json *one = NULL;
    for (size_t i = 0; i < t->u.arr.n; i++) {
        const dw_json *x = t->u.arr.v[i];
        if (x->kind != DW_JSON_STRING) { fail(w, x, "`type` must be a string or a list of strings%s", NULL); return NULL; }
        if (dw_str_is(x->u.str, "null")) { *nullable = true; continue; }
        if (one) { fail(w, t, "a property of several types has no Cedar type%s", NULL); return NULL; }
        one = x;
    }
    if (!one) fail(w, t, "a property that is only null has no Cedar type%s", NULL);
    return one;
}

static void cedar_type(mcp_w *w, const dw_json *s, int depth);

static void record(mcp_w *w, const dw_json *s, int depth)
{
    const dw_json *props = dw_json_get(s, "properties"), *req = dw_json_get(s, "required");
    if (props && props->kind != DW_JSON_OBJECT) { fail(w, props, "`properties` must be an object%s", NULL); return; }
    if (req && req->kind != DW_JSON_ARRAY) { fail(w, req, "`required` must be a list of property names%s", NULL); return; }
    fputs("{", w->out);
    for (size_t i = 0; props && i < props->u.obj.n && !w->err; i++) {
        const dw_json_member *m = &props->u.obj.v[i];
        for (size_t j = 0; j < i; j++)
            if (dw_str_eq(props->u.obj.v[j].key, m->key)) { fail(w, m->value, "property `%s` is declared twice", m->key.s); return; }
        bool required = false, nullable = false;
        for (size_t k = 0; req && k < req->u.arr.n; k++)
            required |= req->u.arr.v[k]->kind == DW_JSON_STRING && dw_str_eq(req->u.arr.v[k]->u.str, m->key);
        if (m->value->kind == DW_JSON_OBJECT) (void)type_of(w, m->value, &nullable);
        if (i) fputs(", ", w->out);
        quoted(w, m->key);
        fputs(required && !nullable ? ": " : "?: ", w->out);
        cedar_type(w, m->value, depth + 1);
    }
    fputs("}", w->out);
}

static void cedar_type(mcp_w *w, const dw_json *s, int depth)
{
    if (w->err) return;
    if (s->kind != DW_JSON_OBJECT) { fail(w, s, "a JSON Schema must be an object%s", NULL); return; }
    if (depth > 32) { fail(w, s, "the schema is nested too deeply (32 levels)%s", NULL); return; }
    static const char *const unsupported[] = { "$ref", "anyOf", "oneOf", "allOf", "not", NULL };
    for (const char *const *k = unsupported; *k; k++) {
        const dw_json *x = dw_json_get(s, *k);
        if (x) { fail(w, x, "`%s` has no Cedar form: write the property's type out", *k); return; }
    }
    bool nullable;
    const dw_json *t = type_of(w, s, &nullable);
    if (w->err) return;
    dw_str ty = t ? t->u.str : (dw_str){ dw_json_get(s, "properties") ? "object" : "", dw_json_get(s, "properties") ? 6 : 0 };
    if (dw_str_is(ty, "string")) fputs("String", w->out);
    else if (dw_str_is(ty, "integer")) fputs("Long", w->out);
    else if (dw_str_is(ty, "boolean")) fputs("Bool", w->out);
    else if (dw_str_is(ty, "number")) {
        if (w->opt->number_decimal) fputs("decimal", w->out);
        else fail(w, t, "a JSON Schema `number` has no Cedar type%s", NULL);
    } else if (dw_str_is(ty, "array")) {
        const dw_json *items = dw_json_get(s, "items");
        if (!items) { fail(w, s, "an array without `items` has no Cedar element type%s", NULL); return; }
        fputs("Set<", w->out);
        cedar_type(w, items, depth + 1);
        fputs(">", w->out);
    } else if (dw_str_is(ty, "object")) record(w, s, depth);
    else if (!t) fail(w, s, "the schema names no `type`%s", NULL);
    else fail(w, t, "JSON Schema type `%s` has no Cedar type", t->u.str.s);
}

static const dw_json *tool_list(const dw_json *m)
{
    if (m->kind == DW_JSON_ARRAY) return m;
    if (m->kind != DW_JSON_OBJECT) return NULL;
    const dw_json *r = dw_json_get(m, "result");
    if (r && r->kind == DW_JSON_OBJECT) m = r;
    const dw_json *t = dw_json_get(m, "tools");
    return t && t->kind == DW_JSON_ARRAY ? t : NULL;
}

int dw_mcp_schema(const dw_source *src, const dw_mcp_options *opt, FILE *out, dw_diags *d)
{
    dw_arena a;
    dw_arena_init(&a, 1 << 14);
    const dw_json *m = dw_json_parse(&a, src, d);
    mcp_w w = { out, src, d, opt, 0 };
    const dw_json *tools = m ? tool_list(m) : NULL;
    if (m && !tools) fail(&w, m, "expected MCP's tools/list result {\"tools\": [...]}, its JSON-RPC response, or the list%s", NULL);
    if (!m || w.err) { dw_arena_free(&a); return 1; }
    const char *ns = opt->ns ? opt->ns : "Mcp";
    fprintf(out, "// generated from the MCP manifest %s (dogwood.md §11.3)\nnamespace %s {\n", src->name, ns);
    fprintf(out, "  entity %s;\n  entity %s;\n  action \"CallTool\";\n", opt->principal ? opt->principal : "Agent",
            opt->resource ? opt->resource : "Server");
    for (size_t i = 0; i < tools->u.arr.n && !w.err; i++) {
        const dw_json *t = tools->u.arr.v[i], *name = t->kind == DW_JSON_OBJECT ? dw_json_get(t, "name") : NULL;
        if (!name || name->kind != DW_JSON_STRING) { fail(&w, t, "a tool needs a string `name`%s", NULL); break; }
        const dw_json *in = dw_json_get(t, "inputSchema"), *outs = dw_json_get(t, "outputSchema");
        fputs("  action ", out);
        quoted(&w, name->u.str);
        fprintf(out, " in [Action::\"CallTool\"] appliesTo { principal: [%s], resource: [%s], context: {",
                opt->principal ? opt->principal : "Agent", opt->resource ? opt->resource : "Server");
        fputs("\"input\": ", out);
        if (in) cedar_type(&w, in, 0);
        else fputs("{}", out);
        if (outs) { fputs(", \"output\"?: ", out); cedar_type(&w, outs, 0); }
        fputs("} };\n", out);
    }
    fputs("}\n", out);
    dw_arena_free(&a);
    return w.err;
}
