/* new_cmd.c - `dwc new --name DIR`, as Cedar CLI 4.x's `new`: creates the
 * directory DIR (its parent must exist; an existing DIR is refused) holding
 * a starter project under Cedar's file names: schema.cedarschema.json (a
 * JSON schema, the empty namespace), policy.cedar and entities.json.  The
 * sample itself is dwc's: a user in a team may view the team's document,
 * which tests/cedar_new.sh validates and authorizes.  Nothing is printed on
 * success (exit 0); a failure is reported in Cedar's shape on standard
 * output (exit 1). */
#include "new_cmd.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

const char dw_new_usage[] =
    "usage: dwc new -n DIR\n"
    "Create a Cedar project (Cedar's command): the directory DIR with schema.cedarschema.json,\n"
    "policy.cedar and entities.json; try it with\n"
    "  dwc validate -s DIR/schema.cedarschema.json --schema-format json -p DIR/policy.cedar\n"
    "  dwc authorize -s DIR/schema.cedarschema.json --schema-format json -p DIR/policy.cedar \\\n"
    "      --entities DIR/entities.json -l 'User::\"alice\"' -a 'Action::\"view\"' -r 'Document::\"plan\"'\n"
    "Exit 0 created, 1 otherwise (an existing DIR is refused).\n"
    "  -n, --name DIR   the project's directory\n";

/* serde_json's pretty form (two-space indents, no final newline), as Cedar writes it */
static const char schema_json[] =
    "{\n"
    "  \"\": {\n"
    "    \"entityTypes\": {\n"
    "      \"User\": {\n"
    "        \"memberOfTypes\": [\n"
    "          \"Team\"\n"
    "        ]\n"
    "      },\n"
    "      \"Team\": {\n"
    "        \"memberOfTypes\": []\n"
    "      },\n"
    "      \"Document\": {\n"
    "        \"memberOfTypes\": []\n"
    "      }\n"
    "    },\n"
    "    \"actions\": {\n"
    "      \"view\": {\n"
    "        \"appliesTo\": {\n"
    "          \"resourceTypes\": [\n"
    "            \"Document\"\n"
    "          ],\n"
    "          \"principalTypes\": [\n"
    "            \"User\",\n"
    "            \"Team\"\n"
    "          ]\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}";

static const char policy_cedar[] =
    "permit (\n"
    "  principal in Team::\"planners\",\n"
    "  action == Action::\"view\",\n"
    "  resource == Document::\"plan\"\n"
    ")\n"
    "when { true };\n";

static const char entities_json[] =
    "[\n"
    "  {\n"
    "    \"uid\": {\n"
    "      \"type\": \"User\",\n"
    "      \"id\": \"alice\"\n"
    "    },\n"
    "    \"attrs\": {},\n"
    "    \"parents\": [\n"
    "      {\n"
    "        \"type\": \"Team\",\n"
    "        \"id\": \"planners\"\n"
    "      }\n"
    "    ]\n"
    "  },\n"
    "  {\n"
    "    \"uid\": {\n"
    "      \"type\": \"Team\",\n"
    "      \"id\": \"planners\"\n"
    "    },\n"
    "    \"attrs\": {},\n"
    "    \"parents\": []\n"
    "  },\n"
    "  {\n"
    "    \"uid\": {\n"
    "      \"type\": \"Document\",\n"
    "      \"id\": \"plan\"\n"
    "    },\n"
    "    \"attrs\": {},\n"
    "    \"parents\": []\n"
    "  }\n"
    "]";

/* Cedar's report of an I/O error: std's text and its OS error number. */
static int io_failure(int err)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s", strerror(err));
    if (msg[0] >= 'a' && msg[0] <= 'z') msg[0] = (char)(msg[0] - 'a' + 'A');
    printf("  \xc3\x97 %s (os error %d)\n", msg, err);
    return 1;
}

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wx");
    if (!f) return errno;
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    int err = ok ? 0 : errno ? errno : EIO;
    if (fclose(f) && !err) err = errno ? errno : EIO;
    return err;
}

int dw_cmd_new(int argc, char **argv)
{
    const char *name = NULL;
    const dw_cli_opt opts[] = { { "name", 'n', &name, NULL }, { 0 } };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_new_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    if (!name || !*name) {
        fputs("dwc new: error: --name DIR is required\n", stderr);
        fputs(dw_new_usage, stderr);
        return dw_cli_usage_status();
    }
    if (mkdir(name, 0777)) return io_failure(errno);
    int err = write_file(name, "schema.cedarschema.json", schema_json);
    if (!err) err = write_file(name, "policy.cedar", policy_cedar);
    if (!err) err = write_file(name, "entities.json", entities_json);
    return err ? io_failure(err) : 0;
}
