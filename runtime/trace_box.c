/* trace_box.c - checking a Box trace line (box.md §15.2) before it is
 * replayed: see trace_box.h. */
#include "trace_box.h"
#include <stdio.h>
#include <string.h>
#include "../stdlib/ext.h"
#include "dogwood.h"

/* box.md §15.2's members, in its order */
#define M(s) { s, sizeof s - 1 }
static const dw_str members[] = {
    M("time"), M("action"), M("namespace"), M("kind"), M("input"), M("output"), M("request_id"), M("expect"),
    M("rules"), M("cause"), M("note"),
};
static const dw_str causes[] = { M("permitted"), M("forbidden"), M("no_match"), M("internal_fault") };
#undef M
enum { NMEMBERS = sizeof members / sizeof members[0] };

int dw_box_trace_open(dw_box_trace *t, const char *schema, const char *events)
{
    memset(t, 0, sizeof *t);
    dw_session_init(&t->s);
    int rc = dw_session_load_schema(&t->s, schema ? schema : "box");
    if (!rc) rc = dw_session_load_events(&t->s, events);
    return rc;
}

void dw_box_trace_close(dw_box_trace *t) { dw_session_free(&t->s); }

/* the reason into msg; -1 */
#define bad(msg, cap, ...) (snprintf(msg, cap, __VA_ARGS__), -1)

/* `, did you mean `X`?` for the closest of n names (or ""), into buf */
static const char *suggest(char *buf, size_t cap, const char *want, size_t wlen, const dw_str *names, size_t n)
{
    size_t best = (size_t)-1;
    const dw_str *hit = NULL;
    for (size_t i = 0; i < n; i++)
        if (dw_hint_closer(want, wlen, names[i].s, names[i].len, &best)) hit = &names[i];
    if (hit) snprintf(buf, cap, " (did you mean \"%.*s\"?)", (int)hit->len, hit->s);
    else buf[0] = 0;
    return buf;
}

static int check_members(const dw_json *j, char *msg, size_t cap)
{
    for (size_t i = 0; i < j->u.obj.n; i++) {
        const dw_str *k = &j->u.obj.v[i].key;
        size_t m = 0;
        while (m < NMEMBERS && !(members[m].len == k->len && !memcmp(members[m].s, k->s, k->len))) m++;
        char hint[64];
        if (m == NMEMBERS)
            return bad(msg, cap, "unknown member \"%.*s\"%s; a trace line has time, action, namespace, kind, input, "
                       "output, request_id, expect, rules, cause and note", (int)(k->len > 64 ? 64 : k->len), k->s,
                       suggest(hint, sizeof hint, k->s, k->len, members, NMEMBERS));
        for (size_t p = 0; p < i; p++)
            if (j->u.obj.v[p].key.len == k->len && !memcmp(j->u.obj.v[p].key.s, k->s, k->len))
                return bad(msg, cap, "member \"%s\" is given twice", members[m].s);
    }
    return 0;
}

static const dw_json *string_member(const dw_json *j, const char *key, bool required, char *msg, size_t cap, int *rc)
{
    const dw_json *v = dw_json_get(j, key);
    if (!v && required) *rc = bad(msg, cap, "member \"%s\" is missing", key);
    else if (v && v->kind != DW_JSON_STRING) *rc = bad(msg, cap, "\"%s\" must be a string, not %s", key, dw_json_kind_name(v->kind));
    else return v;
    return NULL;
}

/* The action must be declared: a typo would otherwise be a gate failure
 * (an internal-fault deny, or a refused record). */
static int check_action(dw_box_trace *t, const dw_json *action, const dw_json *ns, char *msg, size_t cap)
{
    const dw_schema *sc = t->s.schema;
    char atype[256];
    int tl = snprintf(atype, sizeof atype, "%.*s::Action", ns ? (int)(ns->u.str.len > 200 ? 200 : ns->u.str.len) : 3,
                      ns ? ns->u.str.s : "Box");
    const dw_str *id = &action->u.str;
    if (!sc || dw_schema_action(sc, atype, (size_t)tl, id->s, id->len)) return 0;
    size_t best = (size_t)-1;
    const dw_action_decl *hit = NULL, *other_ns = NULL;
    for (size_t i = 0; i < sc->nactions; i++) {
        const dw_action_decl *a = &sc->actions[i];
        bool same_type = a->uid.type.len == (size_t)tl && !memcmp(a->uid.type.s, atype, (size_t)tl);
        if (same_type && dw_hint_closer(id->s, id->len, a->uid.id.s, a->uid.id.len, &best)) hit = a;
        if (!same_type && a->uid.id.len == id->len && !memcmp(a->uid.id.s, id->s, id->len)) other_ns = a;
    }
    char hint[300] = "";
    if (hit) snprintf(hint, sizeof hint, " (did you mean \"%.*s\"?)", (int)hit->uid.id.len, hit->uid.id.s);
    else if (other_ns) {
        int nl = (int)other_ns->uid.type.len - 8;        /* without "::Action" */
        if (nl == 3 && !memcmp(other_ns->uid.type.s, "Box", 3)) snprintf(hint, sizeof hint, " (it is a Box action: drop \"namespace\")");
        else snprintf(hint, sizeof hint, " (it is declared in namespace %.*s: give \"namespace\":\"%.*s\")", nl,
                      other_ns->uid.type.s, nl, other_ns->uid.type.s);
    }
    return bad(msg, cap, "action %s::\"%.*s\" is not declared in the schema%s", atype, (int)(id->len > 100 ? 100 : id->len),
               id->s, hint);
}

static int check_kind(dw_box_trace *t, const dw_json *kind, bool *decision, char *msg, size_t cap)
{
    const dw_event_schema *es = t->s.es;
    const dw_str *k = &kind->u.str;
    if (!es) { *decision = k->len == 7 && !memcmp(k->s, "request", 7); return 0; }
    if (dw_event_schema_decl(es, k->s, k->len)) { *decision = dw_event_schema_is_decision_kind(es, k->s, k->len); return 0; }
    dw_str names[64];
    size_t n = 0;
    char list[512];
    size_t ll = 0;
    list[0] = 0;
    for (size_t i = 0; i < es->ndecls && n < 64; i++) {
        names[n++] = es->decls[i].kind;
        ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%.*s", i ? ", " : "", (int)es->decls[i].kind.len, es->decls[i].kind.s);
        if (ll >= sizeof list) ll = sizeof list - 1;
    }
    char hint[64];
    return bad(msg, cap, "kind \"%.*s\" is not an event kind of the event schema%s; the kinds are %s",
               (int)(k->len > 64 ? 64 : k->len), k->s, suggest(hint, sizeof hint, k->s, k->len, names, n), list);
}

/* expect, rules and cause: only on decision lines, and well formed */
static int check_expectations(dw_box_trace *t, const dw_json *j, const dw_json *kind, dw_box_line *out, char *msg, size_t cap)
{
    int rc = 0;
    out->expect = string_member(j, "expect", out->decision && !t->no_expect, msg, cap, &rc);
    if (rc && !dw_json_get(j, "expect"))
        return bad(msg, cap, "a \"%s\" line needs \"expect\": \"allow\" or \"deny\"%s", kind->u.str.s,
                   t->test_file ? "" : " (or run with --no-expect)");
    if (!rc) out->cause = string_member(j, "cause", false, msg, cap, &rc);
    out->rules = dw_json_get(j, "rules");
    if (rc) return rc;
    if (!out->decision) {
        const char *m = out->expect ? "expect" : out->cause ? "cause" : out->rules ? "rules" : NULL;
        if (m) return bad(msg, cap, "\"%s\" on a \"%s\" line: only decision lines are decided", m, kind->u.str.s);
        return 0;
    }
    if (out->expect && strcmp(out->expect->u.str.s, "allow") && strcmp(out->expect->u.str.s, "deny"))
        return bad(msg, cap, "\"expect\" must be \"allow\" or \"deny\", not \"%.*s\"", (int)(out->expect->u.str.len > 64 ? 64 : out->expect->u.str.len),
                   out->expect->u.str.s);
    if (out->cause) {
        bool known = false;
        for (size_t i = 0; i < 4; i++) known = known || !strcmp(causes[i].s, out->cause->u.str.s);
        char hint[64];
        if (!known)
            return bad(msg, cap, "\"cause\" \"%.*s\" is not a cause%s; the causes are permitted, forbidden, no_match and internal_fault",
                       (int)(out->cause->u.str.len > 64 ? 64 : out->cause->u.str.len), out->cause->u.str.s,
                       suggest(hint, sizeof hint, out->cause->u.str.s, out->cause->u.str.len, causes, 4));
    }
    if (out->rules) {
        if (out->rules->kind != DW_JSON_ARRAY) return bad(msg, cap, "\"rules\" must be an array of rule names (@id, else policy_N)");
        for (size_t i = 0; i < out->rules->u.arr.n; i++)
            if (out->rules->u.arr.v[i]->kind != DW_JSON_STRING) return bad(msg, cap, "\"rules\"[%zu] must be a string (a rule name)", i);
    }
    return 0;
}

int dw_box_trace_line(dw_box_trace *t, const dw_json *j, size_t lineno, dw_box_line *out, char *msg, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (j->kind != DW_JSON_OBJECT) return bad(msg, cap, "a trace line is a JSON object, not %s", dw_json_kind_name(j->kind));
    if (check_members(j, msg, cap)) return -1;
    int rc = 0;
    const dw_json *time = string_member(j, "time", !t->test_file, msg, cap, &rc);
    const dw_json *action = rc ? NULL : string_member(j, "action", true, msg, cap, &rc);
    const dw_json *ns = rc ? NULL : string_member(j, "namespace", false, msg, cap, &rc);
    const dw_json *kind = rc ? NULL : string_member(j, "kind", true, msg, cap, &rc);
    if (!rc) string_member(j, "request_id", false, msg, cap, &rc);
    if (!rc) string_member(j, "note", false, msg, cap, &rc);
    if (rc) return rc;
    if (!time)       /* implied: box.md §15.1's request time, then a second apart */
        out->time_ns = t->have_last ? t->last_ns + 1000000000 : INT64_C(1735689600000000000);
    else if (!dw_rfc3339_parse_ns(time->u.str.s, time->u.str.len, &out->time_ns))
        return bad(msg, cap, "\"time\" \"%.*s\" is not RFC 3339 UTC: YYYY-MM-DDThh:mm:ss[.fffffffff]Z",
                   (int)(time->u.str.len > 64 ? 64 : time->u.str.len), time->u.str.s);
    if (time && t->have_last && out->time_ns <= t->last_ns)
        return bad(msg, cap, "\"time\" \"%s\" is not after line %zu's: times increase strictly within a trace", time->u.str.s, t->last_line);
    out->time_text = time ? time->u.str.s : NULL;
    if (check_action(t, action, ns, msg, cap) || check_kind(t, kind, &out->decision, msg, cap)) return -1;
    const dw_json *input = dw_json_get(j, "input"), *output = dw_json_get(j, "output");
    if (!input) return bad(msg, cap, "member \"input\" is missing (the action's input record; {} when it has none)");
    if (input->kind != DW_JSON_OBJECT) return bad(msg, cap, "\"input\" must be an object, not %s", dw_json_kind_name(input->kind));
    if (output && output->kind != DW_JSON_OBJECT) return bad(msg, cap, "\"output\" must be an object, not %s", dw_json_kind_name(output->kind));
    if (output && out->decision) return bad(msg, cap, "\"output\" on a \"%s\" line: outputs belong to responses", kind->u.str.s);
    if (check_expectations(t, j, kind, out, msg, cap)) return -1;
    t->have_last = true;
    t->last_ns = out->time_ns;
    t->last_line = lineno;
    return 0;
}

bool dw_box_line_holds(dw_engine *e, const dw_box_line *bl, const dw_verdict *v, bool *unexpected_fault)
{
    *unexpected_fault = v->cause == DW_CAUSE_INTERNAL_FAULT && !bl->cause;
    if (!bl->expect || (strcmp(bl->expect->u.str.s, "allow") == 0) != v->allow) return false;
    if (bl->cause && strcmp(bl->cause->u.str.s, dw_cause_name(v->cause))) return false;
    if (*unexpected_fault) return false;
    if (!bl->rules) return true;
    /* the same set: every expected name determines, every determining rule is expected */
    const dw_json *rules = bl->rules;
    for (size_t i = 0; i < rules->u.arr.n; i++) {
        bool found = false;
        for (uint32_t k = 0; k < v->ndetermining && !found; k++)
            found = strcmp(dw_engine_rule_name(e, v->determining[k]), rules->u.arr.v[i]->u.str.s) == 0;
        if (!found) return false;
    }
    for (uint32_t k = 0; k < v->ndetermining; k++) {
        bool found = false;
        for (size_t i = 0; i < rules->u.arr.n && !found; i++)
            found = strcmp(dw_engine_rule_name(e, v->determining[k]), rules->u.arr.v[i]->u.str.s) == 0;
        if (!found) return false;
    }
    return true;
}

void dw_box_print_rules(FILE *f, dw_engine *e, const dw_verdict *v)
{
    fputc('[', f);
    for (uint32_t k = 0; k < v->ndetermining; k++) fprintf(f, "%s%s", k ? ", " : "", dw_engine_rule_name(e, v->determining[k]));
    fputc(']', f);
}

void dw_box_print_expected(FILE *f, const dw_box_line *bl)
{
    fprintf(f, "%s", bl->expect->u.str.s);
    if (bl->rules) {
        fprintf(f, " [");
        for (size_t i = 0; i < bl->rules->u.arr.n; i++) fprintf(f, "%s%s", i ? ", " : "", bl->rules->u.arr.v[i]->u.str.s);
        fprintf(f, "]");
    }
    if (bl->cause) fprintf(f, " %s", bl->cause->u.str.s);
}
