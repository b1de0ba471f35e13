/* check_set.c - one policy set from several files (see check_set.h). */
#include "check_set.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int add_file(dw_check_set *cs, const char *path)
{
    if (cs->nparts == cs->cap) {
        dw_check_part *np = realloc(cs->parts, (cs->cap = cs->cap ? 2 * cs->cap : 4) * sizeof *np);
        if (!np) { fprintf(stderr, "dwc check: error: out of memory\n"); return 1; }
        cs->parts = np;
    }
    dw_check_part *p = &cs->parts[cs->nparts];
    memset(p, 0, sizeof *p);
    size_t len;
    if (dw_read_file(path, &p->text, &len)) { fprintf(stderr, "%s: error: cannot read: %s\n", path, strerror(errno)); return 1; }
    p->path = strdup(path);
    if (!p->path) { free(p->text); fprintf(stderr, "dwc check: error: out of memory\n"); return 1; }
    p->src = (dw_source){ p->path, p->text, len };
    cs->nparts++;
    return 0;
}

static bool policy_file(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && ((n > 3 && !strcmp(name + n - 3, ".dw")) || (n > 6 && !strcmp(name + n - 6, ".cedar")));
}

static int add_dir(dw_check_set *cs, const char *dir)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) { fprintf(stderr, "%s: error: cannot read: %s\n", dir, strerror(errno)); return 1; }
    int rc = 0;
    size_t before = cs->nparts;
    for (int i = 0; i < n; i++) {
        if (!rc && policy_file(ents[i]->d_name)) {
            char path[4096];
            snprintf(path, sizeof path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", ents[i]->d_name);
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) rc = add_file(cs, path);
        }
        free(ents[i]);
    }
    free(ents);
    if (!rc && cs->nparts == before) { fprintf(stderr, "%s: error: no .dw or .cedar files in the directory\n", dir); rc = 1; }
    return rc;
}

int dw_check_set_read(dw_check_set *cs, const dw_cli_list *paths)
{
    memset(cs, 0, sizeof *cs);
    for (size_t i = 0; i < paths->n; i++) {
        struct stat st;
        int rc = strcmp(paths->v[i], "-") && stat(paths->v[i], &st) == 0 && S_ISDIR(st.st_mode) ? add_dir(cs, paths->v[i])
                                                                                                 : add_file(cs, paths->v[i]);
        if (rc) return rc;
    }
    size_t total = 1;
    for (size_t i = 0; i < cs->nparts; i++) total += cs->parts[i].src.len + 1;
    cs->text = malloc(total);
    if (!cs->text) { fprintf(stderr, "dwc check: error: out of memory\n"); return 1; }
    uint32_t line = 1;
    for (size_t i = 0; i < cs->nparts; i++) {
        dw_check_part *p = &cs->parts[i];
        p->off = (uint32_t)cs->len;
        p->line = line;
        memcpy(cs->text + cs->len, p->src.text, p->src.len);
        cs->len += p->src.len;
        for (size_t k = 0; k < p->src.len; k++) line += p->src.text[k] == '\n';
        if (!p->src.len || p->src.text[p->src.len - 1] != '\n') { cs->text[cs->len++] = '\n'; line++; }
    }
    cs->text[cs->len] = 0;
    return 0;
}

void dw_check_set_free(dw_check_set *cs)
{
    for (size_t i = 0; i < cs->nparts; i++) { free(cs->parts[i].path); free(cs->parts[i].text); }
    free(cs->parts);
    free(cs->text);
    memset(cs, 0, sizeof *cs);
}

void dw_check_set_map(const dw_check_set *cs, dw_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        dw_finding *g = &f->v[i];
        if (g->src || !cs->nparts) continue;
        size_t k = cs->nparts - 1;
        while (k > 0 && cs->parts[k].off > g->loc.off) k--;
        const dw_check_part *p = &cs->parts[k];
        uint32_t lines = p->line - 1, flen = (uint32_t)p->src.len;
        g->src = &p->src;
        g->loc.off -= p->off;
        g->loc.end = g->loc.end >= p->off ? g->loc.end - p->off : g->loc.off;
        if (g->loc.off > flen) g->loc.off = flen;
        if (g->loc.end > flen) g->loc.end = flen;     /* a span that ran into the next file */
        g->loc.line -= lines;
        g->end_line = g->end_line > lines ? g->end_line - lines : g->loc.line;
    }
}
