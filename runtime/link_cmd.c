/* dwc link: link a template as Cedar's CLI does (`cedar link --policies P
 * --template-id T --new-id N --arguments '{"?principal": "User::\"a\""}'
 * [-k LINKS]`): the set is loaded with its links and the new one, so a link
 * that does not apply is refused before anything is written; with -k the
 * links file (created if missing) gets the new link, written through a
 * temporary file and renamed, so a failure leaves the old file whole. */
#include "link_cmd.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "links.h"
#include "load.h"

const char dw_link_usage[] =
    "usage: dwc link -p POLICIES --template-id T -n NEW_ID -a ARGS [-k LINKS]\n"
    "Link template T (named by its @id, else policyN) with ARGS, a JSON object\n"
    "{\"?principal\": UID, \"?resource\": UID}, as policy NEW_ID; with -k, append the link to\n"
    "the links file (Cedar's --template-linked form; created if missing).  Exit 0 linked, 1 not.\n"
    "  -p, --policies FILE         the policies and templates (run as `cedar`: standard input without -p)\n"
    "      --template-id ID        the template\n"
    "  -n, --new-id ID             the linked policy's id\n"
    "  -a, --arguments JSON        the slot values\n"
    "  -k, --template-linked FILE  the links file to update\n";

/* The links of FILE (none if it does not exist) followed by the new one, as text. */
static int links_text(const char *path, const char *tid, const char *nid, const char *args, dw_arena *a, dw_diags *d,
                      char **text, size_t *len)
{
    dw_template_link *old = NULL, *all;
    size_t n = 0;
    char *ftext = NULL;
    size_t flen = 0;
    dw_source fsrc = { path, "", 0 };
    if (path && dw_read_file(path, &ftext, &flen)) {
        if (errno != ENOENT) { perror(path); return 1; }
        ftext = NULL;
    }
    if (ftext) fsrc = (dw_source){ path, ftext, flen };
    if (ftext && dw_links_parse(a, &fsrc, &old, &n, d)) { dw_diags_print(d, stderr); free(ftext); return 1; }
    /* the new link, read as the links file reads one; ARGS alone must be one
     * JSON object, so it cannot add links of its own */
    dw_source asrc = { "--arguments", args, strlen(args) };
    const dw_json *aj = dw_json_parse(a, &asrc, d);
    if (!aj || aj->kind != DW_JSON_OBJECT) {
        dw_diags_print(d, stderr);
        fprintf(stderr, "dwc link: error: --arguments must be a JSON object {\"?principal\": UID, \"?resource\": UID}\n");
        free(ftext);
        return 1;
    }
    size_t alen = strlen(args), cap = strlen(tid) * 6 + strlen(nid) * 6 + alen + 64;   /* \u00xx: 6 bytes a byte */
    char *one = dw_arena_alloc(a, cap);
    FILE *m = one ? fmemopen(one, cap, "w") : NULL;
    if (!m) { free(ftext); fprintf(stderr, "dwc link: error: out of memory\n"); return 1; }
    fputs("[{\"template_id\":", m);
    int bad = dw_json_escape_file(m, tid, strlen(tid), DW_JSON_EXACT);
    fputs(",\"link_id\":", m);
    bad |= dw_json_escape_file(m, nid, strlen(nid), DW_JSON_EXACT);
    if (bad) {
        fclose(m);
        free(ftext);
        fprintf(stderr, "dwc link: error: --template-id and --new-id must be UTF-8\n");
        return 1;
    }
    fprintf(m, ",\"args\":%s}]", args);
    long used = ftell(m);
    fclose(m);
    dw_source nsrc = { "--arguments", one, used > 0 ? (size_t)used : 0 };
    dw_template_link *nl;
    size_t nn;
    if (used <= 0 || (size_t)used >= cap || dw_links_parse(a, &nsrc, &nl, &nn, d) || nn != 1) {
        dw_diags_print(d, stderr);
        fprintf(stderr, "dwc link: error: --arguments must be a JSON object {\"?principal\": UID, \"?resource\": UID}\n");
        free(ftext);
        return 1;
    }
    all = dw_arena_alloc(a, (n + 1) * sizeof *all);
    if (!all) { free(ftext); return 1; }
    if (n) memcpy(all, old, n * sizeof *all);
    all[n] = nl[0];
    FILE *w = open_memstream(text, len);
    if (!w) { free(ftext); return 1; }
    int wr = dw_links_write(w, all, n + 1);
    fclose(w);
    free(ftext);
    if (wr) { fprintf(stderr, "dwc link: error: the links do not write as JSON (a string is not UTF-8, or out of memory)\n"); return 1; }
    return 0;
}

int dw_cmd_link(int argc, char **argv, bool as_cedar)
{
    const char *pol = NULL, *tid = NULL, *nid = NULL, *args = NULL, *links = NULL;
    const dw_cli_opt opts[] = {
        { "policies", 'p', &pol, NULL }, { "template-id", 0, &tid, NULL }, { "new-id", 'n', &nid, NULL },
        { "arguments", 'a', &args, NULL }, { "template-linked", 'k', &links, NULL }, { 0 },
    };
    int pr = dw_cli_parse(argc, argv, opts, NULL, dw_link_usage);
    if (pr) return pr > 0 ? 0 : dw_cli_usage_status();
    if (!pol && as_cedar) pol = "-";           /* Cedar's: the policies on standard input */
    if (!pol || !tid || !nid || !args) {
        fprintf(stderr, "dwc link: error: give -p, --template-id, -n and -a\n");
        fputs(dw_link_usage, stderr);
        return dw_cli_usage_status();
    }
    dw_session s;
    dw_session_init(&s);
    char *text = NULL;
    size_t len = 0;
    int rc = links_text(links, tid, nid, args, &s.scratch, &s.diags, &text, &len);
    dw_source given = { links ? links : "<links>", text, len };
    if (!rc) {
        s.links_given = &given;
        rc = dw_session_load_policies(&s, pol) ? 1 : 0;
    }
    if (!rc && links) {
        /* the new file beside the old, then renamed over it */
        size_t pl = strlen(links);
        char *tmp = malloc(pl + 32);
        FILE *f = tmp ? (snprintf(tmp, pl + 32, "%s.tmp.%ld", links, (long)getpid()), fopen(tmp, "wb")) : NULL;
        bool ok = f && fwrite(text, 1, len, f) == len;
        if (f && fclose(f)) ok = false;
        if (ok && rename(tmp, links)) ok = false;
        if (!ok) {
            fprintf(stderr, "dwc link: error: cannot write %s: %s\n", links, strerror(errno));
            if (tmp) unlink(tmp);
            rc = 1;
        }
        free(tmp);
    }
    if (!rc) printf("Template-linked policy added: %s (template %s)\n", nid, tid);
    free(text);
    dw_session_free(&s);
    return rc;
}
