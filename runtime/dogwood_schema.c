/* dogwood_schema.c - `dwc dogwood schema action|event|providers FILE` and
 * `schema mcp --manifest FILE [-o FILE]` (dogwood.md §18): check an action
 * schema (a Cedar schema, text or JSON; BOM stripped, warnings reported),
 * parse-check an event schema (§12, not derived against an action schema),
 * check a provider declaration file (§13.2), and generate
 * an action schema from an MCP tool manifest (§11.3, runtime/mcp_schema.c).
 * Exit 0, 1 on an I/O error, 2 rejected. */
#include "dogwood_schema.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "dogwood_cli.h"
#include "mcp_schema.h"
#include "../lang/eventschema.h"
#include "../lang/json.h"
#include "../lang/providers.h"
#include "../lang/schema.h"

const char dw_dogwood_schema_usage[] =
    "usage: dwc dogwood schema action|event|providers FILE [--format human|json]\n"
    "       dwc dogwood schema mcp --manifest FILE [-o FILE] [--namespace NS] [--principal T] [--resource T]\n"
    "                              [--number decimal]\n"
    "  action  check a Cedar schema (text or JSON): its findings, `OK: ...`; exit 0 or 2\n"
    "  event   parse-check an event schema (.dwschema, dogwood.md §12)\n"
    "  providers  check a provider declaration file (§13.2): `OK: N provider(s) declared`\n"
    "  mcp     an action schema from an MCP tool manifest (tools/list): one action per tool in\n"
    "          [Action::\"CallTool\"], inputSchema as context.input, outputSchema as context.output\n"
    "          (optional); --number decimal maps JSON Schema's number to decimal (else refused)\n";

typedef enum { K_ACTION, K_EVENT, K_PROVIDERS } schema_kind;
static const char *const kind_name[] = { "action", "event", "providers" };

/* schema action|event|providers FILE */
static int check_file(int argc, char **argv, schema_kind kind)
{
    const char *file = NULL, *fmt = "human";
    const dw_cli_opt opts[] = { { "format", 0, &fmt, NULL }, { 0 } };
    char cmd[48];
    snprintf(cmd, sizeof cmd, "dwc dogwood schema %s", kind_name[kind]);
    int pr = dw_cli_parse(argc, argv, opts, &file, dw_dogwood_schema_usage);
    if (pr) return pr > 0 ? 0 : 2;
    if (!file) { fprintf(stderr, "%s: error: missing FILE\n", cmd); return 2; }
    if (strcmp(fmt, "human") && strcmp(fmt, "json")) { fprintf(stderr, "%s: error: --format must be human or json, not `%s`\n", cmd, fmt); return 2; }
    char *text;
    size_t len;
    if (dw_read_file(file, &text, &len)) { fprintf(stderr, "%s: %s: %s\n", cmd, file, strerror(errno)); return 1; }
    dw_source src = { file, text, len };
    dw_diags d;
    dw_diags_init(&d);
    size_t decls = 0;
    bool ok;
    if (kind == K_ACTION) {
        dw_schema *s = dw_schema_parse(&src, &d);
        ok = s && !d.nerrors;
        if (s) decls = s->nentities + s->nactions;
        if (s) dw_schema_free(s);
    } else if (kind == K_EVENT) {
        dw_event_schema *es = dw_event_schema_parse(&src, &d);
        ok = es && !d.nerrors;
        if (es) dw_event_schema_free(es);
    } else {
        dw_providers *p = dw_providers_parse(&src, &d);
        ok = p && !d.nerrors;
        for (size_t i = 0; p && i < p->n; i++) decls += !p->v[i].builtin;   /* the file's own, not the built-ins */
        dw_providers_free(p);
    }
    if (!strcmp(fmt, "json")) {
        printf("{\"kind\":\"%s\",\"ok\":%s,\"errors\":", kind_name[kind], ok ? "true" : "false");
        dw_dogwood_json_findings(&d, DW_SEV_ERROR);
        printf(",\"warnings\":");
        dw_dogwood_json_findings(&d, DW_SEV_WARNING);
        printf("}\n");
    } else {
        dw_diags_print(&d, stdout);
        size_t nerr = d.nerrors ? d.nerrors : 1;
        if (ok && kind == K_ACTION) printf("OK: the action schema declares %zu entity type(s) and action(s)\n", decls);
        else if (ok && kind == K_EVENT) printf("OK: the event schema parses\n");
        else if (ok) printf("OK: %zu provider(s) declared\n", decls);
        else if (kind == K_PROVIDERS) printf("error: the provider declarations are invalid (%zu error(s))\n", nerr);
        else printf("error: the %s schema is invalid (%zu error(s))\n", kind_name[kind], nerr);
    }
    dw_diags_free(&d);
    free(text);
    return ok ? 0 : 2;
}

static int mcp(int argc, char **argv)
{
    const char *manifest = NULL, *outp = NULL, *number = NULL;
    dw_mcp_options opt = { 0 };
    const dw_cli_opt opts[] = {
        { "manifest", 0, &manifest, NULL }, { "output", 'o', &outp, NULL }, { "namespace", 0, &opt.ns, NULL },
        { "principal", 0, &opt.principal, NULL }, { "resource", 0, &opt.resource, NULL }, { "number", 0, &number, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_dogwood_schema_usage);
    if (pr) return pr > 0 ? 0 : 2;
    if (!manifest) { fprintf(stderr, "dwc dogwood schema mcp: error: missing --manifest FILE\n"); return 2; }
    if (number && strcmp(number, "decimal")) { fprintf(stderr, "dwc dogwood schema mcp: error: --number takes `decimal`, not `%s`\n", number); return 2; }
    opt.number_decimal = number != NULL;
    char *text;
    size_t len;
    if (dw_read_file(manifest, &text, &len)) { fprintf(stderr, "dwc dogwood schema mcp: %s: %s\n", manifest, strerror(errno)); return 1; }
    dw_source src = { manifest, text, len };
    dw_diags d;
    dw_diags_init(&d);
    char *buf = NULL;
    size_t blen = 0;
    FILE *m = open_memstream(&buf, &blen);
    int rc = m ? dw_mcp_schema(&src, &opt, m, &d) : -1;
    if (m && fclose(m)) rc = -1;
    if (!rc) {
        /* what was generated must read back as a schema: checked before it is written */
        dw_source gen = { "<generated schema>", buf, blen };
        dw_schema *s = dw_schema_parse_text(&gen, &d);
        if (!s || d.nerrors) rc = 1;
        if (s) dw_schema_free(s);
    }
    if (!rc) {
        FILE *o = outp ? fopen(outp, "w") : stdout;
        if (!o || fwrite(buf, 1, blen, o) != blen || (outp && fclose(o))) {
            fprintf(stderr, "dwc dogwood schema mcp: %s: %s\n", outp ? outp : "standard output", strerror(errno));
            rc = -2;
        }
    }
    dw_diags_print(&d, stderr);
    if (rc == -1) fprintf(stderr, "dwc dogwood schema mcp: error: out of memory\n");
    dw_diags_free(&d);
    free(buf);
    free(text);
    return rc == -2 ? 1 : rc ? 2 : 0;
}

int dw_dogwood_schema(int argc, char **argv)
{
    if (argc < 2) { fputs(dw_dogwood_schema_usage, stderr); return 2; }
    if (!strcmp(argv[1], "action")) return check_file(argc - 1, argv + 1, K_ACTION);
    if (!strcmp(argv[1], "event")) return check_file(argc - 1, argv + 1, K_EVENT);
    if (!strcmp(argv[1], "providers")) return check_file(argc - 1, argv + 1, K_PROVIDERS);
    if (!strcmp(argv[1], "mcp")) return mcp(argc - 1, argv + 1);
    fprintf(stderr, "dwc dogwood schema: error: unknown kind `%s`\n%s", argv[1], dw_dogwood_schema_usage);
    return 2;
}
