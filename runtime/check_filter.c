/* check_filter.c - attribution and suppression of `dwc check`'s findings
 * (see check_filter.h). */
#include "check_filter.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t policy_start(const dw_policy *p)
{
    uint32_t off = p->loc.off;
    for (size_t k = 0; k < p->nannots; k++) if (p->annots[k].loc.off < off) off = p->annots[k].loc.off;
    return off;
}

void dw_check_attribute(dw_findings *f, const dw_policy_set *ps)
{
    if (!ps) return;
    for (size_t i = 0; i < f->n; i++) {
        dw_finding *g = &f->v[i];
        if (g->policy >= 0 || g->src) continue;
        for (size_t k = 0; k < ps->npolicies; k++) {
            const dw_policy *p = &ps->policies[k];
            if (g->loc.off >= policy_start(p) && g->loc.off < p->loc.end) { g->policy = (long)k; break; }
        }
    }
}

/* Does the comma/space-separated list `s` (n bytes) name `rule`? */
static bool names_rule(const char *s, size_t n, const char *rule)
{
    size_t rl = strlen(rule);
    for (size_t i = 0; i < n;) {
        while (i < n && (s[i] == ',' || s[i] == ' ')) i++;
        size_t b = i;
        while (i < n && s[i] != ',' && s[i] != ' ') i++;
        if (i - b == rl && !memcmp(s + b, rule, rl)) return true;
    }
    return false;
}

bool dw_check_rule_known(const char *s, size_t n)
{
    for (size_t i = 0; i < dw_lint_nrules; i++) {
        const dw_lint_rule *r = &dw_lint_rules[i];
        if ((strlen(r->id) == n && !memcmp(r->id, s, n)) || (r->box_id && strlen(r->box_id) == n && !memcmp(r->box_id, s, n)))
            return true;
    }
    return false;
}

bool dw_check_disable_valid(const dw_cli_list *disable)
{
    for (size_t k = 0; k < disable->n; k++) {
        const char *s = disable->v[k];
        size_t n = strlen(s);
        for (size_t i = 0; i < n;) {
            while (i < n && (s[i] == ',' || s[i] == ' ')) i++;
            size_t b = i;
            while (i < n && s[i] != ',' && s[i] != ' ') i++;
            if (i > b && !dw_check_rule_known(s + b, i - b)) {
                size_t best = (size_t)-1;
                const char *hit = NULL;
                for (size_t r = 0; r < dw_lint_nrules; r++) {
                    const char *ids[2] = { dw_lint_rules[r].id, dw_lint_rules[r].box_id };
                    for (int j = 0; j < 2; j++)
                        if (ids[j] && dw_hint_closer(s + b, i - b, ids[j], strlen(ids[j]), &best)) hit = ids[j];
                }
                fprintf(stderr, "dwc check: error: --disable: no rule `%.*s`%s%s%s\n", (int)(i - b), s + b,
                        hit ? " (did you mean `" : "", hit ? hit : "", hit ? "`?)" : "");
                return false;
            }
        }
    }
    return true;
}

static bool suppressed_by(const dw_policy *p, const char *rule)
{
    for (size_t k = 0; k < p->nannots; k++) {
        const dw_annotation *a = &p->annots[k];
        if (a->has_value && dw_str_is(a->key, "suppress") && names_rule(a->value.s, a->value.len, rule)) return true;
    }
    return false;
}

void dw_check_suppress(dw_findings *f, const dw_cli_list *disable, const dw_policy_set *ps)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        dw_finding *g = &f->v[i];
        bool drop = false;
        for (size_t d = 0; d < disable->n && !drop; d++) drop = names_rule(disable->v[d], strlen(disable->v[d]), g->rule);
        if (!drop && ps && g->policy >= 0 && !g->src && (size_t)g->policy < ps->npolicies)
            drop = suppressed_by(&ps->policies[g->policy], g->rule);
        if (drop) {
            free(g->msg); free(g->hint); free(g->cex_request); free(g->cex_entities); free(g->cex_leaves);
            continue;
        }
        f->v[k++] = *g;
    }
    f->n = k;
}
