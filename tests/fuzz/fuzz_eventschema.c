/* libFuzzer target: `.dwschema` event schemas (lang/eventschema*.c).  The text
 * is parsed; a schema that parses is derived against Box's action schema and
 * against no actions, every derived event is looked up again by name and its
 * fields by path, and the derivation is printed.  Never a crash or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lang/eventschema.h"
#include "lang/schema.h"

extern const char dw_box_actions_schema_text[];
extern const size_t dw_box_actions_schema_len;

static dw_schema *box_actions;
static FILE *devnull;

/* Each corpus directory also gets the built-in event schemas as seeds. */
static void seed_dir(const char *dir)
{
    static const char *const names[] = { "default", "unpinned", "session-pinned", "box" };
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[4096];
        const char *text = dw_event_schema_builtin_text(names[i]);
        snprintf(path, sizeof path, "%s/builtin-%s.dwschema", dir, names[i]);
        if (!text || stat(path, &st) == 0) continue;
        FILE *f = fopen(path, "w");
        if (!f) continue;
        fputs(text, f);
        fclose(f);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    for (int i = 1; i < *argc; i++)
        if ((*argv)[i][0] != '-') seed_dir((*argv)[i]);
    static dw_source src;
    src = (dw_source){ "box_actions.cedarschema", dw_box_actions_schema_text, dw_box_actions_schema_len };
    dw_diags d;
    dw_diags_init(&d);
    box_actions = dw_schema_parse(&src, &d);
    dw_diags_free(&d);
    if (!box_actions) abort();
    devnull = fopen("/dev/null", "w");
    return 0;
}

static void walk(const dw_derived_event *ev, const dw_event_field *f, size_t nf, const char *path, size_t plen)
{
    for (size_t i = 0; i < nf; i++) {
        size_t n = plen + (plen ? 1 : 0) + f[i].name.len;
        if (n >= 512 || memchr(f[i].name.s, '.', f[i].name.len)) continue;   /* not addressable by a dotted path */
        char buf[512];
        memcpy(buf, path, plen);
        size_t k = plen;
        if (plen) buf[k++] = '.';
        memcpy(buf + k, f[i].name.s, f[i].name.len);
        /* every derived field must be found again by its own path */
        if (!dw_event_field_lookup(ev, buf, n)) abort();
        dw_event_field_type_print(devnull, &f[i]);
        if (f[i].is_group) walk(ev, f[i].fields, f[i].nfields, buf, n);
    }
}

static void derive(const dw_event_schema *es, const dw_schema *actions)
{
    dw_diags d;
    dw_diags_init(&d);
    dw_event_derivation *dv = dw_event_schema_derive(es, actions, &d);
    if (dv) {
        for (size_t i = 0; i < dv->nevents; i++) {
            const dw_derived_event *ev = &dv->events[i];
            if (dw_event_find(dv, ev->action_type.s, ev->action_type.len, ev->action_id.s, ev->action_id.len,
                              ev->kind.s, ev->kind.len) == NULL) abort();
            walk(ev, ev->fields, ev->nfields, "", 0);   /* not NULL: walk memcpy's plen bytes of it (UBSan) */
        }
        dw_event_derivation_print(devnull, dv);
        dw_event_derivation_free(dv);
    } else if (d.nerrors == 0) abort();   /* a refusal always says why */
    dw_diags_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    dw_source src = { "fuzz.dwschema", text, size };
    dw_diags d;
    dw_diags_init(&d);
    dw_event_schema *es = dw_event_schema_parse(&src, &d);
    if (es) {
        (void)dw_event_schema_max_window_ticks(es, 1);
        (void)dw_event_schema_max_window_ticks(es, 1000000000);
        for (size_t i = 0; i < es->ndecls; i++)
            if (dw_event_schema_decl(es, es->decls[i].kind.s, es->decls[i].kind.len) == NULL) abort();
        derive(es, box_actions);
        derive(es, NULL);
        dw_event_schema_free(es);
    } else if (d.nerrors == 0) abort();
    dw_diags_free(&d);
    free(text);
    return 0;
}
