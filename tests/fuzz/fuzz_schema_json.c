/* libFuzzer target: Cedar's JSON schema syntax (lang/schema_json.c), always
 * parsed as JSON whatever the first byte (fuzz_schema dispatches on `{` and
 * is seeded with human-syntax schemas).  A schema that resolves is printed;
 * a refusal must say why.  Never a crash or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lang/schema.h"

static FILE *devnull;

/* The shared corpus has no JSON schemas: each corpus directory gets one
 * valid seed using every construct (namespaces, common types, entity and
 * action groups, records, sets, extension types, tags, enums). */
static const char seed_schema[] =
    "{\"PhotoApp\": {\n"
    "  \"commonTypes\": {\"Ctx\": {\"type\": \"Record\", \"attributes\": {\n"
    "     \"ip\": {\"type\": \"Extension\", \"name\": \"ipaddr\"},\n"
    "     \"when\": {\"type\": \"Extension\", \"name\": \"datetime\", \"required\": false},\n"
    "     \"tags\": {\"type\": \"Set\", \"element\": {\"type\": \"String\"}}}}},\n"
    "  \"entityTypes\": {\n"
    "    \"User\": {\"memberOfTypes\": [\"Group\"], \"shape\": {\"type\": \"Record\", \"attributes\": {\n"
    "       \"age\": {\"type\": \"Long\"}, \"score\": {\"type\": \"Extension\", \"name\": \"decimal\"},\n"
    "       \"manager\": {\"type\": \"Entity\", \"name\": \"User\", \"required\": false},\n"
    "       \"home\": {\"type\": \"Record\", \"attributes\": {\"city\": {\"type\": \"String\"}}}}},\n"
    "     \"tags\": {\"type\": \"String\"}},\n"
    "    \"Group\": {},\n"
    "    \"Color\": {\"enum\": [\"red\", \"green\"]},\n"
    "    \"Photo\": {\"shape\": {\"type\": \"Record\", \"attributes\": {\"owner\": {\"type\": \"Entity\", \"name\": \"User\"},\n"
    "       \"private\": {\"type\": \"Boolean\"}}}}},\n"
    "  \"actions\": {\n"
    "    \"read\": {\"appliesTo\": {\"principalTypes\": [\"User\"], \"resourceTypes\": [\"Photo\"], \"context\": {\"type\": \"Ctx\"}}},\n"
    "    \"write\": {\"memberOf\": [{\"id\": \"read\"}], \"appliesTo\": {\"principalTypes\": [\"User\"], \"resourceTypes\": [\"Photo\"]}},\n"
    "    \"all\": {}}}}\n";

static void seed_dir(const char *dir)
{
    struct stat st;
    char path[4096];
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return;
    snprintf(path, sizeof path, "%s/seed-photoapp.json", dir);
    if (stat(path, &st) == 0) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(seed_schema, f);
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    devnull = fopen("/dev/null", "w");
    for (int i = 1; i < *argc; i++)
        if ((*argv)[i][0] != '-') seed_dir((*argv)[i]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.cedarschema.json", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_schema *s = dw_schema_parse_json(&src, &d);
    if (s) {
        if (devnull) dw_schema_print(devnull, s);
        dw_schema_free(s);
    } else if (d.nerrors == 0) abort();
    dw_diags_free(&d);
    free(text);
    return 0;
}
