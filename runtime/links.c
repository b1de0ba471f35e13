#include "links.h"
#include <string.h>
#include "load.h"
#include "../lang/json_scan.h"

static int bad(dw_diags *d, const dw_source *src, const dw_json *at, const char *what)
{
    dw_error(d, src, dw_loc_at(src, at ? at->off : 0, at ? at->end : 0), "template links: %s", what);
    return 1;
}

static int string_member(const dw_json *o, const char *key, dw_str *out)
{
    const dw_json *v = dw_json_get(o, key);
    if (!v || v->kind != DW_JSON_STRING || dw_json_count(o, key) != 1) return 1;
    *out = v->u.str;
    return 0;
}

int dw_links_parse(dw_arena *a, const dw_source *src, dw_template_link **out, size_t *n, dw_diags *diags)
{
    *out = NULL;
    *n = 0;
    size_t i = 0;
    i = dw_json_skip_ws(src->text, i, src->len);
    if (i == src->len) return 0;
    const dw_json *j = dw_json_parse(a, src, diags);
    if (!j) return 1;
    if (j->kind != DW_JSON_ARRAY) return bad(diags, src, j, "expected a JSON array of links");
    dw_template_link *v = j->u.arr.n ? dw_arena_alloc(a, j->u.arr.n * sizeof *v) : NULL;
    if (j->u.arr.n && !v) return bad(diags, src, j, "out of memory");
    for (size_t k = 0; k < j->u.arr.n; k++) {
        const dw_json *e = j->u.arr.v[k];
        dw_template_link *l = &v[k];
        memset(l, 0, sizeof *l);
        l->loc = dw_loc_at(src, e->off, e->end);
        if (e->kind != DW_JSON_OBJECT) return bad(diags, src, e, "a link must be an object");
        if (string_member(e, "template_id", &l->template_id)) return bad(diags, src, e, "a link needs a string `template_id`");
        if (string_member(e, "link_id", &l->link_id)) return bad(diags, src, e, "a link needs a string `link_id`");
        const dw_json *args = dw_json_get(e, "args");
        if (!args || args->kind != DW_JSON_OBJECT) return bad(diags, src, e, "a link needs an `args` object");
        for (size_t m = 0; m < args->u.obj.n; m++) {
            const dw_json_member *am = &args->u.obj.v[m];
            bool p = am->key.len == 10 && memcmp(am->key.s, "?principal", 10) == 0;
            bool r = am->key.len == 9 && memcmp(am->key.s, "?resource", 9) == 0;
            if (!p && !r) return bad(diags, src, am->value, "Invalid SlotId! Expected ?principal|?resource");
            if ((p && l->has_principal) || (r && l->has_resource)) return bad(diags, src, am->value, "a slot is given twice");
            if (am->value->kind != DW_JSON_STRING) return bad(diags, src, am->value, "a slot value must be an entity uid string");
            const dw_uid *u = dw_uid_from_text(a, am->value->u.str.s, am->value->u.str.len);
            if (!u) return bad(diags, src, am->value, "a slot value must be an entity uid, e.g. \"User::\\\"alice\\\"\"");
            dw_euid_lit lit = { { u->type, u->tlen }, { u->id, u->idlen }, dw_loc_at(src, am->value->off, am->value->end) };
            if (p) { l->has_principal = true; l->principal = lit; l->principal_text = am->value->u.str; }
            else { l->has_resource = true; l->resource = lit; l->resource_text = am->value->u.str; }
        }
    }
    *out = v;
    *n = j->u.arr.n;
    return 0;
}

int dw_links_write(FILE *out, const dw_template_link *links, size_t n)
{
    int bad = fputc('[', out) == EOF;
    for (size_t i = 0; i < n && !bad; i++) {
        const dw_template_link *l = &links[i];
        fputs(i ? ",{\"template_id\":" : "{\"template_id\":", out);
        bad |= dw_json_escape_file(out, l->template_id.s, l->template_id.len, DW_JSON_EXACT) != 0;
        fputs(",\"link_id\":", out);
        bad |= dw_json_escape_file(out, l->link_id.s, l->link_id.len, DW_JSON_EXACT) != 0;
        fputs(",\"args\":{", out);
        if (l->has_principal) {
            fputs("\"?principal\":", out);
            bad |= dw_json_escape_file(out, l->principal_text.s, l->principal_text.len, DW_JSON_EXACT) != 0;
        }
        if (l->has_resource) {
            fputs(l->has_principal ? ",\"?resource\":" : "\"?resource\":", out);
            bad |= dw_json_escape_file(out, l->resource_text.s, l->resource_text.len, DW_JSON_EXACT) != 0;
        }
        fputs("}}", out);
    }
    fputc(']', out);
    return bad || ferror(out) ? -1 : 0;
}
