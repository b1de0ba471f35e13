#include "link.h"
#include <stdio.h>
#include <string.h>

static const dw_str *annotation(const dw_policy *p, const char *key)
{
    for (size_t i = 0; i < p->nannots; i++)
        if (p->annots[i].key.len == strlen(key) && memcmp(p->annots[i].key.s, key, p->annots[i].key.len) == 0)
            return &p->annots[i].value;
    return NULL;
}

static bool str_is(dw_str a, dw_str b) { return a.len == b.len && memcmp(a.s, b.s, a.len) == 0; }

/* Fill one scope constraint's slot with the link's value (copied into the set's arena). */
static int fill(dw_policy_set *ps, dw_scope_con *sc, const dw_euid_lit *v)
{
    if (!sc->target_is_slot) return 0;
    char *ty = dw_arena_memdup(&ps->arena, v->type.s, v->type.len), *id = dw_arena_memdup(&ps->arena, v->id.s, v->id.len);
    if ((!ty && v->type.len) || (!id && v->id.len)) return -1;
    sc->target_is_slot = false;
    sc->target = (dw_euid_lit){ { ty, v->type.len }, { id, v->id.len }, sc->loc };
    return 0;
}

int dw_link_templates(dw_policy_set *ps, const dw_template_link *links, size_t nlinks, const dw_source *links_src,
                      bool cedar_ids, dw_diags *diags)
{
    size_t nt = 0;
    for (size_t i = 0; i < ps->npolicies; i++) nt += ps->policies[i].is_template;
    if (!nt && !nlinks && !cedar_ids) return 0;
    size_t ns = ps->npolicies - nt, total = ns + nlinks;
    dw_policy *out = total ? dw_arena_alloc(&ps->arena, total * sizeof *out) : NULL;
    dw_policy *tpl = nt ? dw_arena_alloc(&ps->arena, nt * sizeof *tpl) : NULL;
    if ((total && !out) || (nt && !tpl)) return -1;
    size_t so = 0, to = 0;
    for (size_t i = 0; i < ps->npolicies; i++) {
        dw_policy p = ps->policies[i];
        /* a link names its template as Cedar's CLI does, whatever the statics are called */
        const dw_str *at = cedar_ids || p.is_template ? annotation(&p, "id") : NULL;
        if (p.id.len) ;         /* named by its input (a JSON policy set's key): Cedar keeps that name */
        else if (at) p.id = *at;
        else {
            char buf[32];
            int n = snprintf(buf, sizeof buf, "policy%zu", i);
            char *s = dw_arena_memdup(&ps->arena, buf, (size_t)n);
            if (!s) return -1;
            p.id = (dw_str){ s, (size_t)n };
        }
        if (p.is_template) tpl[to++] = p;
        else out[so++] = p;
    }
    int bad = 0;
    /* a duplicate id among the policies and templates (Cedar refuses the set) */
    for (size_t i = 0; i < ps->npolicies; i++) {
        const dw_policy *a = i < ns ? &out[i] : &tpl[i - ns];
        for (size_t j = 0; j < i; j++) {
            const dw_policy *b = j < ns ? &out[j] : &tpl[j - ns];
            if (str_is(a->id, b->id)) {
                dw_error(diags, ps->src, a->loc, "duplicate policy id `%.*s`", (int)a->id.len, a->id.s);
                bad = 1;
            }
        }
    }
    for (size_t k = 0; k < nlinks; k++) {
        const dw_template_link *l = &links[k];
        const dw_policy *t = NULL;
        for (size_t i = 0; i < nt && !t; i++) if (str_is(tpl[i].id, l->template_id)) t = &tpl[i];
        bool id_taken = false;
        for (size_t i = 0; i < so; i++) if (str_is(out[i].id, l->link_id)) id_taken = true;   /* statics, earlier links */
        for (size_t i = 0; i < nt; i++) if (str_is(tpl[i].id, l->link_id)) id_taken = true;
        if (!t) {
            bool is_static = false;
            for (size_t i = 0; i < ns; i++) if (str_is(out[i].id, l->template_id)) is_static = true;
            dw_error(diags, links_src, l->loc, "failed to link `%.*s`: %s `%.*s`", (int)l->link_id.len, l->link_id.s,
                     is_static ? "it is a static policy, not a template:" : "no template with id", (int)l->template_id.len, l->template_id.s);
            bad = 1;
            continue;
        }
        if (id_taken) {
            dw_error(diags, links_src, l->loc, "failed to link `%.*s`: the id is already taken", (int)l->link_id.len, l->link_id.s);
            bad = 1;
            continue;
        }
        bool wp = t->principal.target_is_slot, wr = t->resource.target_is_slot;
        if (wp != l->has_principal || wr != l->has_resource) {
            const char *slot = wp != l->has_principal ? "?principal" : "?resource";
            bool missing = wp != l->has_principal ? wp : wr;
            dw_error(diags, links_src, l->loc, "failed to link `%.*s` to template `%.*s`: %s for slot %s",
                     (int)l->link_id.len, l->link_id.s, (int)t->id.len, t->id.s, missing ? "no value" : "a value given", slot);
            if (!missing) dw_diag_add(diags, DW_SEV_NOTE, links_src, l->loc, NULL, "the template has no %s slot", slot);
            bad = 1;
            continue;
        }
        dw_policy p = *t;
        if (fill(ps, &p.principal, &l->principal) || fill(ps, &p.resource, &l->resource)) return -1;
        p.is_template = false;
        char *id = dw_arena_memdup(&ps->arena, l->link_id.s, l->link_id.len);
        if (!id && l->link_id.len) return -1;
        p.id = (dw_str){ id, l->link_id.len };
        out[so++] = p;
    }
    ps->policies = out;
    ps->npolicies = so;
    ps->templates = tpl;
    ps->ntemplates = nt;
    return bad;
}
