/* evaluate_cmd.c - `dwc evaluate EXPRESSION`, as Cedar CLI 4.x's `evaluate`:
 * the same flags, a blank line, then the value as Cedar prints it
 * (runtime/cedar_value.h) and exit 0, or Cedar's report of what failed and
 * exit 1, both on standard output.  The steps and their order are Cedar's:
 * the schema, the request (principal, action and resource all required; the
 * context read under the schema; checked against it unless
 * --request-validation false), the expression, the entities (none given:
 * an empty store, without the schema's actions), the evaluation.
 *
 * The expression is compiled and run by runtime/expression.h: the VM's own
 * code, as every decision runs it, not a second evaluator. */
#include "evaluate_cmd.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "load.h"
#include "expression.h"

const char dw_evaluate_usage[] =
    "usage: dwc evaluate [-l PRINCIPAL -a ACTION -r RESOURCE [-c CONTEXT] | --request-json FILE]\n"
    "                    [--request-validation true|false] [-s SCHEMA [--schema-format cedar|json]]\n"
    "                    [--entities FILE] EXPRESSION\n"
    "Evaluate a Cedar expression for a request (Cedar's command): prints a blank line, then\n"
    "the value as Cedar prints it (\"text\", 42, true, User::\"alice\", [..], {\"a\": ..},\n"
    "decimal(\"1.5\"), ip(\"10.0.0.1\"), datetime(\"2024-01-01\"), duration(\"1h\")), exit 0;\n"
    "or what failed, exit 1.\n"
    "  -l, --principal UID        e.g. 'User::\"alice\"'\n"
    "  -a, --action UID           e.g. 'Action::\"view\"'\n"
    "  -r, --resource UID\n"
    "  -c, --context FILE         context JSON object\n"
    "      --request-json FILE    {\"principal\": UID, \"action\": UID, \"resource\": UID, \"context\": {..}}\n"
    "      --request-validation B true (default) or false: check the request against the schema\n"
    "  -s, --schema FILE          Cedar schema: the context and entities are read under it\n"
    "      --schema-format F      cedar or json: accepted for Cedar's CLI; the form is read from the text\n"
    "      --entities FILE        entities JSON (none: no entities)\n";

/* The last cause of Cedar's report (miette's); it may hold any byte a string can. */
static void report_cause_n(const char *cause, size_t ncause)
{
    fputs("  \xe2\x95\xb0\xe2\x94\x80\xe2\x96\xb6 ", stdout);   /* ╰─▶ */
    fwrite(cause, 1, ncause, stdout);
    putchar('\n');
}

static void report_cause(const char *cause) { report_cause_n(cause, strlen(cause)); }

/* Cedar's report: the failure, then its cause under it. */
static int report_n(const char *what, const char *cause, size_t ncause, const char *help)
{
    printf("  \xc3\x97 %s\n", what);                 /* × */
    if (cause && ncause) report_cause_n(cause, ncause);
    if (help && *help) printf("  help: %s\n", help);
    return 1;
}

static int report(const char *what, const char *cause, const char *help)
{
    return report_n(what, cause, cause ? strlen(cause) : 0, help);
}

/* Cedar's words for a file it cannot open: std's error text and number. */
static int os_error(const char *what, const char *path, int err)
{
    char w[4200], cause[256];
    snprintf(w, sizeof w, "%s %s", what, path);
    snprintf(cause, sizeof cause, "%s (os error %d)", strerror(err), err);
    return report(w, cause, NULL);
}

/* True (reported) when path cannot be opened for reading. */
static bool unopenable(const char *what, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f) { fclose(f); return false; }
    os_error(what, path, errno);
    return true;
}

static const dw_json *read_json(dw_session *s, const char *path, dw_source *src, char **text, const char *open_what,
                                const char *parse_what)
{
    size_t len;
    char what[4200];
    if (dw_read_file(path, text, &len)) { os_error(open_what, path, errno); return NULL; }
    *src = (dw_source){ path, *text, len };
    const dw_json *j = dw_json_parse(&s->scratch, src, &s->diags);
    if (!j || s->diags.nerrors) {
        char msg[512] = "";
        for (size_t i = 0; i < s->diags.n && !msg[0]; i++) dw_diag_format(&s->diags.v[i], msg, sizeof msg);
        snprintf(what, sizeof what, "%s %s", parse_what, path);
        report(what, msg, NULL);
        return NULL;
    }
    return j;
}

/* A request uid: Type::"id" text (Cedar's form), or dwc's {"type", "id"} object. */
static const dw_json *uid_arg(dw_session *s, const char *text, const dw_json *j, const char *what, const char *where)
{
    if (j && j->kind != DW_JSON_STRING) return j;
    const char *t = j ? j->u.str.s : text;
    size_t n = j ? j->u.str.len : strlen(text);
    const dw_uid *u = dw_uid_from_text(&s->scratch, t, n);
    if (u) return dw_uid_json(&s->scratch, u);
    char msg[4200];
    if (where) snprintf(msg, sizeof msg, "failed to parse %s in %s as entity Uid", what, where);
    else snprintf(msg, sizeof msg, "failed to parse %s %.*s as entity Uid", what, (int)n, t);
    report(msg, "expected an entity uid: Type::\"id\"", NULL);
    return NULL;
}

/* Cedar's request validation, in its words; what it does not word
 * (enumerated ids) is dw_request_check's.  0, or -1 with the message. */
static int validate_request(const dw_schema *schema, const dw_request *req, dw_buf *err)
{
    const dw_uid *p = req->vars[DW_VAR_P].u.uid, *a = req->vars[DW_VAR_A].u.uid, *r = req->vars[DW_VAR_R].u.uid;
    const dw_action_decl *ad = dw_schema_action(schema, a->type, a->tlen, a->id, a->idlen);
    char msg[4200];
    const char *const role[2] = { "principal", "resource" };
    const dw_uid *u[2] = { p, r };
    for (int i = 0; i < 2; i++)
        if (!dw_schema_entity(schema, u[i]->type, u[i]->tlen)) {
            snprintf(msg, sizeof msg, "%s type `%.*s` is not declared in the schema", role[i], (int)u[i]->tlen, u[i]->type);
            dw_buf_append(err, msg, strlen(msg) + 1);
            return -1;
        }
    if (ad && ad->has_applies_to)
        for (int i = 0; i < 2; i++)
            if (!dw_type_listed(i ? ad->resources : ad->principals, i ? ad->nresources : ad->nprincipals, u[i])) {
                snprintf(msg, sizeof msg, "%s type `%.*s` is not valid for `%.*s::\"%.*s\"`", role[i], (int)u[i]->tlen, u[i]->type,
                         (int)a->tlen, a->type, (int)a->idlen, a->id);
                dw_buf_append(err, msg, strlen(msg) + 1);
                return -1;
            }
    return dw_request_check(schema, ad, true, req, NULL, err);
}

typedef struct eval_args {
    const char *pl, *ac, *rs, *cx, *rq, *reqval, *sch, *sf, *ent, *expr;
} eval_args;

static int build_request(dw_session *s, const eval_args *a, dw_request *req)
{
    const dw_json *P = NULL, *A = NULL, *R = NULL, *C = NULL;
    dw_source src;
    char *text = NULL;
    int rc = 1;
    if (a->rq) {
        const dw_json *r = read_json(s, a->rq, &src, &text, "failed to open request-json file", "failed to parse request-json file");
        if (!r) goto out;
        const dw_json *jp = dw_json_get(r, "principal"), *ja = dw_json_get(r, "action"), *jr = dw_json_get(r, "resource");
        if (!jp || !ja || !jr) { report("All three (`principal`, `action`, `resource`) variables must be specified", NULL, NULL); goto out; }
        if (!(P = uid_arg(s, NULL, jp, "principal", a->rq)) || !(A = uid_arg(s, NULL, ja, "action", a->rq)) ||
            !(R = uid_arg(s, NULL, jr, "resource", a->rq)))
            goto out;
        C = dw_json_get(r, "context");
    } else {
        if (a->pl && !(P = uid_arg(s, a->pl, NULL, "principal", NULL))) goto out;
        if (a->ac && !(A = uid_arg(s, a->ac, NULL, "action", NULL))) goto out;
        if (a->rs && !(R = uid_arg(s, a->rs, NULL, "resource", NULL))) goto out;
        if (a->cx && !(C = read_json(s, a->cx, &src, &text, "error while loading context from", "failed to create a context from")))
            goto out;
        if (!P || !A || !R) { report("All three (`principal`, `action`, `resource`) variables must be specified", NULL, NULL); goto out; }
    }
    dw_buf err = { 0 };
    bool validate = s->schema && strcmp(a->reqval, "false") != 0;
    /* the context first (read under the schema, which must declare the
     * action), then Cedar's request validation */
    const dw_json *at = dw_json_get(A, "type"), *aid = dw_json_get(A, "id");
    const dw_schema *sch = s->schema;
    char what[4200], undeclared[4200] = "";
    bool named = at && aid && at->kind == DW_JSON_STRING && aid->kind == DW_JSON_STRING;   /* else dw_request_from_json says why */
    if (sch && named && !dw_schema_action(sch, at->u.str.s, at->u.str.len, aid->u.str.s, aid->u.str.len)) {
        snprintf(undeclared, sizeof undeclared, "action `%.*s::\"%.*s\"` does not exist in the supplied schema",
                 (int)at->u.str.len, at->u.str.s, (int)aid->u.str.len, aid->u.str.s);
        if (!C && !validate) sch = NULL;            /* Cedar needs the action for neither */
    }
    snprintf(what, sizeof what, "failed to create a context from %s", a->rq ? a->rq : a->cx ? a->cx : "the request");
    const dw_action_decl *ad = sch && named && !undeclared[0] ? dw_schema_action(sch, at->u.str.s, at->u.str.len, aid->u.str.s, aid->u.str.len) : NULL;
    bool required = false;            /* no context given: Cedar's is empty, parsed under nothing */
    for (size_t k = 0; !C && ad && k < ad->context->nattrs; k++) required |= ad->context->attrs[k].required;
    if (!C && sch && named && !undeclared[0]) sch = NULL;
    if (required && validate) {
        snprintf(what, sizeof what, "context `{}` is not valid for `%.*s::\"%.*s\"`", (int)at->u.str.len, at->u.str.s,
                 (int)aid->u.str.len, aid->u.str.s);
        report(what, NULL, NULL);
    } else if (sch && undeclared[0]) report(C ? what : undeclared, C ? undeclared : NULL, NULL);
    else if (dw_request_from_json(&s->scratch, P, A, R, C, sch, false, req, &err)) report(what, err.p ? err.p : "invalid context", NULL);
    else if (validate && validate_request(s->schema, req, &err)) report(err.p ? err.p : "invalid request", NULL, NULL);
    else rc = 0;
    dw_buf_free(&err);
out:
    free(text);
    return rc;
}

static int evaluate(dw_session *s, const eval_args *a)
{
    if (a->sch && strcmp(a->sch, "box") && unopenable("failed to open schema file", a->sch)) return 1;
    if (a->sch && dw_session_load_schema(s, a->sch)) {
        char what[4200];
        snprintf(what, sizeof what, "failed to parse schema from file %s", a->sch);
        return report(what, s->first_error, NULL);
    }
    dw_request req;
    if (build_request(s, a, &req)) return 1;
    dw_expression x;
    dw_buf b = { 0 }, help = { 0 };
    int rc = 1;
    int cr = dw_expression_compile(&x, a->expr, strlen(a->expr));
    if (cr) {
        char msg[512];
        dw_expression_refusal(&x, msg, sizeof msg);
        report("failed to parse the expression", cr > 0 ? msg : "out of memory", NULL);
        goto out;
    }
    if (a->ent) {
        if (unopenable("failed to open entities file", a->ent)) goto out;
        if (dw_session_load_entities(s, a->ent)) {
            char what[4200];
            snprintf(what, sizeof what, "failed to parse entities from file %s", a->ent);
            printf("  \xc3\x97 %s\n  \xe2\x94\x9c\xe2\x94\x80\xe2\x96\xb6 error during entity deserialization\n", what);   /* ├─▶ */
            report_cause(s->first_error);
            goto out;
        }
    } else if (dw_store_seal(&s->store)) { report("out of memory", NULL, NULL); goto out; }
    int er = dw_expression_eval(&x, &s->store, &req, &s->scratch, &b, &help);
    if (er < 0) report("out of memory", NULL, NULL);
    else if (er) report_n("failed to evaluate the expression", b.p, b.len, help.p);
    else { printf("%.*s\n", (int)b.len, b.p); rc = 0; }
out:
    dw_buf_free(&b);
    dw_buf_free(&help);
    dw_expression_free(&x);
    return rc;
}

int dw_cmd_evaluate(int argc, char **argv)
{
    eval_args a = { .reqval = "true" };
    const dw_cli_opt opts[] = {
        { "principal", 'l', &a.pl, NULL }, { "action", 'a', &a.ac, NULL }, { "resource", 'r', &a.rs, NULL },
        { "context", 'c', &a.cx, NULL }, { "request-json", 0, &a.rq, NULL }, { "request-validation", 0, &a.reqval, NULL },
        { "schema", 's', &a.sch, NULL }, { "schema-format", 0, &a.sf, NULL }, { "entities", 0, &a.ent, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, &a.expr, dw_evaluate_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    if (!dw_cli_cedar_form_ok("evaluate", "schema-format", a.sf)) return dw_cli_usage_status();
    if (strcmp(a.reqval, "true") && strcmp(a.reqval, "false")) {
        fprintf(stderr, "dwc evaluate: error: --request-validation must be true or false, not `%s`\n", a.reqval);
        return dw_cli_usage_status();
    }
    if (!a.expr) {
        fputs("dwc evaluate: error: the EXPRESSION to evaluate is missing\n", stderr);
        fputs(dw_evaluate_usage, stderr);
        return dw_cli_usage_status();
    }
    if (a.rq && (a.pl || a.ac || a.rs || a.cx)) {
        fputs("dwc evaluate: error: --request-json replaces -l, -a, -r and -c: give one or the other\n", stderr);
        return 1;
    }
    putchar('\n');                      /* Cedar's first line, whatever follows */
    dw_session s;
    dw_session_init(&s);
    s.quiet = true;                     /* failures are reported in Cedar's shape, on stdout */
    int rc = evaluate(&s, &a);
    dw_session_free(&s);
    return rc;
}
