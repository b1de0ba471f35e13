/* translate_cmd.c - Cedar's JSON forms at the command line (and translate-schema):
 * `dwc translate-policy --direction cedar-to-json|json-to-cedar [-p FILE]`
 * (Cedar's CLI command: stdin without -p, the result and a newline on
 * stdout, exit 0, or an error on stderr and exit 1), and `--policy-format
 * json` for the commands that read policies (dw_policy_format_apply). */
#include "translate_cmd.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "est.h"
#include "../lang/schema.h"

const char dw_translate_policy_usage[] =
    "usage: dwc translate-policy --direction cedar-to-json|json-to-cedar [-p FILE]\n"
    "Translate policies between Cedar's text and its JSON policy format (Cedar's CLI\n"
    "command).  cedar-to-json prints the policy set as {\"templates\", \"staticPolicies\",\n"
    "\"templateLinks\"}, named as Cedar's CLI names them (@id, else policyN); json-to-cedar\n"
    "reads a policy, a template or a set and prints it as Cedar prints a policy read from\n"
    "JSON.  Dogwood's own forms (temporal rules, macros) have no JSON form.\n"
    "  -p, --policies FILE   the input (default: standard input)\n"
    "      --direction D     cedar-to-json or json-to-cedar\n";

static int to_json(const dw_source *src)
{
    dw_diags d;
    dw_diags_init(&d);
    dw_policy_set *ps = dw_parse_policy_set(src, &d);
    int rc = 1;
    dw_buf out = { 0 };
    if (!ps || d.nerrors) goto done;
    int lr = dw_link_templates(ps, NULL, 0, NULL, true, &d);
    if (lr || d.nerrors) goto done;
    int wr = dw_est_write_set(&out, ps, &d);
    if (wr == -1) fprintf(stderr, "dwc translate-policy: error: out of memory\n");
    if (wr) goto done;
    fwrite(out.p, 1, out.len, stdout);
    putchar('\n');
    rc = 0;
done:
    if (!ps && !d.nerrors) fprintf(stderr, "dwc translate-policy: error: out of memory\n");
    dw_diags_print(&d, stderr);
    dw_diags_free(&d);
    dw_buf_free(&out);
    if (ps) dw_policy_set_free(ps);
    return rc;
}

static int to_cedar(const dw_source *src)
{
    dw_diags d;
    dw_diags_init(&d);
    dw_est_text t;
    int r = dw_est_to_cedar(src, false, &t, &d);
    int rc = 1;
    if (r == -1) fprintf(stderr, "dwc translate-policy: error: out of memory\n");
    else if (!r && t.nlinks) fprintf(stderr, "%s: error: Unable to translate policy set containing template linked policies.\n", src->name);
    else if (!r) {
        fwrite(t.text.p ? t.text.p : "", 1, t.text.len, stdout);
        putchar('\n');
        rc = 0;
    }
    dw_diags_print(&d, stderr);
    dw_diags_free(&d);
    dw_est_text_free(&t);
    return rc;
}

int dw_cmd_translate_policy(int argc, char **argv)
{
    const char *dir = NULL, *path = NULL;
    const dw_cli_opt opts[] = { { "direction", 0, &dir, NULL }, { "policies", 'p', &path, NULL }, { 0 } };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_translate_policy_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    bool json = dir && !strcmp(dir, "cedar-to-json");
    if (!dir || (!json && strcmp(dir, "json-to-cedar"))) {
        fprintf(stderr, "dwc translate-policy: error: --direction must be cedar-to-json or json-to-cedar%s%s%s\n",
                dir ? ", not `" : "", dir ? dir : "", dir ? "`" : "");
        fputs(dw_translate_policy_usage, stderr);
        return dw_cli_usage_status();
    }
    if (!path) path = "-";
    char *text;
    size_t len;
    if (dw_read_file(path, &text, &len)) {
        fprintf(stderr, "dwc translate-policy: error: cannot read %s: %s\n", strcmp(path, "-") ? path : "standard input", strerror(errno));
        return 1;
    }
    dw_source src = { strcmp(path, "-") ? path : "<stdin>", text, len };
    int rc = json ? to_json(&src) : to_cedar(&src);
    free(text);
    return rc;
}

const char dw_translate_schema_usage[] =
    "usage: dwc translate-schema --direction cedar-to-json|json-to-cedar|cedar-to-json-with-resolved-types [-s FILE]\n"
    "Translate a schema between Cedar schema text and Cedar's JSON schema (Cedar's CLI command).\n"
    "dwc resolves the schema first, so every direction writes it resolved: each type reference\n"
    "fully qualified, common types inlined (what Cedar's cedar-to-json-with-resolved-types does);\n"
    "the result means what the input means, and Cedar and dwc read it back to the same schema.\n"
    "  -s, --schema FILE   the input (default: standard input)\n"
    "      --direction D   cedar-to-json, json-to-cedar or cedar-to-json-with-resolved-types\n";

int dw_cmd_translate_schema(int argc, char **argv)
{
    const char *dir = NULL, *path = NULL;
    const dw_cli_opt opts[] = { { "direction", 0, &dir, NULL }, { "schema", 's', &path, NULL }, { 0 } };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_translate_schema_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    bool to_json = dir && (!strcmp(dir, "cedar-to-json") || !strcmp(dir, "cedar-to-json-with-resolved-types"));
    if (!dir || (!to_json && strcmp(dir, "json-to-cedar"))) {
        fprintf(stderr, "dwc translate-schema: error: --direction must be cedar-to-json, json-to-cedar or "
                        "cedar-to-json-with-resolved-types%s%s%s\n", dir ? ", not `" : "", dir ? dir : "", dir ? "`" : "");
        fputs(dw_translate_schema_usage, stderr);
        return dw_cli_usage_status();
    }
    if (!path) path = "-";
    char *text;
    size_t len;
    if (dw_read_file(path, &text, &len)) {
        fprintf(stderr, "dwc translate-schema: error: cannot read %s: %s\n", strcmp(path, "-") ? path : "standard input", strerror(errno));
        return 1;
    }
    dw_source src = { strcmp(path, "-") ? path : "<stdin>", text, len };
    dw_diags d;
    dw_diags_init(&d);
    dw_schema *s = to_json ? dw_schema_parse_text(&src, &d) : dw_schema_parse_json(&src, &d);
    int rc = 1;
    if (s && !d.nerrors) {
        int wr = to_json ? dw_schema_write_json(stdout, s) : dw_schema_write_text(stdout, s);
        if (to_json && !wr) putchar('\n');
        rc = wr || fflush(stdout) ? 1 : 0;
        if (rc) fprintf(stderr, "dwc translate-schema: error: cannot write the schema\n");
    } else if (!s && !d.nerrors) fprintf(stderr, "dwc translate-schema: error: out of memory\n");
    dw_diags_print(&d, stderr);
    dw_diags_free(&d);
    if (s) dw_schema_free(s);
    free(text);
    return rc;
}

int dw_policy_format_apply(dw_session *s, const char *fmt, const char *path, dw_policy_json *keep)
{
    memset(keep, 0, sizeof *keep);
    if (!fmt || strcmp(fmt, "json")) return 0;
    size_t len;
    if (dw_read_file(path, &keep->json_text, &len)) {
        fprintf(stderr, "%s: error: cannot read: %s\n", path, strerror(errno));
        return 1;
    }
    keep->json_src = (dw_source){ path, keep->json_text, len };
    dw_diags d;
    dw_diags_init(&d);
    int r = dw_est_to_cedar(&keep->json_src, true, &keep->est, &d);
    dw_diags_print(&d, stderr);
    dw_diags_free(&d);
    if (r == -1) fprintf(stderr, "%s: error: out of memory\n", path);
    if (r) return r == -1 ? 1 : 2;
    snprintf(keep->name, sizeof keep->name, "%s (as Cedar text)", path);
    keep->text_src = (dw_source){ keep->name, keep->est.text.p ? keep->est.text.p : "", keep->est.text.len };
    s->policy_given = &keep->text_src;
    s->policy_ids = keep->est.ids;
    s->npolicy_ids = keep->est.nids;
    s->given_links = keep->est.links;
    s->ngiven_links = keep->est.nlinks;
    s->given_links_src = &keep->json_src;
    return 0;
}

void dw_policy_json_free(dw_policy_json *keep)
{
    dw_est_text_free(&keep->est);
    free(keep->json_text);
    memset(keep, 0, sizeof *keep);
}
