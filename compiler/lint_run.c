/* lint_run.c - `dwc check`'s lint (lint.h's dw_lint_run): the front end a
 * stage at a time, each stage's findings under its rule, the Unicode
 * hygiene rules (ICU's tables: dwc only, outside libdogwood.so), and the
 * pipeline's DW_FE_PROFILE stage (compiler/lint.c), whose rules the loader
 * runs too. */
#include <unicode/uchar.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lint_impl.h"
#include "pipeline.h"
#include "../stdlib/utf8.h"

/* ------------------------------------------------------------------ Unicode hygiene (lexical) */

/* The code point at s[*i] (advancing *i past it); a byte that starts no
 * valid sequence reads as U+FFFD, one byte long. */
static uint32_t utf8_next(const char *s, size_t n, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s + *i;
    size_t k = dw_utf8_len(u, n - *i);
    if (!k) { (*i)++; return 0xFFFD; }
    *i += k;
    return dw_utf8_get(u, k);
}

/* Unicode's own tables (ICU), not a hand-kept list: Bidi_Control, and
 * Default_Ignorable_Code_Point (zero-width spaces and joiners, word joiner,
 * soft hyphen, variation selectors, tag characters, ...), which render as
 * nothing, so `".e\u{200B}nv"` shows as ".env" and matches something else. */
static bool is_bidi(uint32_t c) { return u_hasBinaryProperty((UChar32)c, UCHAR_BIDI_CONTROL); }
static bool is_invisible(uint32_t c) { return !is_bidi(c) && u_hasBinaryProperty((UChar32)c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT); }

enum { S_NONE, S_LATIN, S_GREEK, S_CYRILLIC, S_ARMENIAN, S_HEBREW, S_ARABIC, S_GEORGIAN, S_CHEROKEE, S_N };
static const char *const script_name[S_N] = { "", "Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Georgian", "Cherokee" };

static int script_of(uint32_t c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return S_LATIN;
    if (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) return S_LATIN;
    if (c >= 0x1E00 && c <= 0x1EFF) return S_LATIN;
    if ((c >= 0x370 && c <= 0x3FF && c != 0x37E && c != 0x387) || (c >= 0x1F00 && c <= 0x1FFF)) return S_GREEK;
    if (c >= 0x400 && c <= 0x52F) return S_CYRILLIC;
    if (c >= 0x531 && c <= 0x58F) return S_ARMENIAN;
    if (c >= 0x5D0 && c <= 0x5FF) return S_HEBREW;
    if (c >= 0x620 && c <= 0x6FF && !(c >= 0x660 && c <= 0x669)) return S_ARABIC;
    if (c >= 0x10A0 && c <= 0x10FF) return S_GEORGIAN;
    if (c >= 0x13A0 && c <= 0x13FF) return S_CHEROKEE;
    return S_NONE;
}

/* A small subset of Unicode's confusables (UTS #39): letters that look like
 * ASCII letters, and fullwidth ASCII.  0 = no mapping. */
static char skeleton_of(uint32_t c)
{
    static const struct { uint32_t cp; char a; } map[] = {
        { 0x0391, 'A' }, { 0x0392, 'B' }, { 0x0395, 'E' }, { 0x0396, 'Z' }, { 0x0397, 'H' }, { 0x0399, 'I' },
        { 0x039A, 'K' }, { 0x039C, 'M' }, { 0x039D, 'N' }, { 0x039F, 'O' }, { 0x03A1, 'P' }, { 0x03A4, 'T' },
        { 0x03A5, 'Y' }, { 0x03A7, 'X' }, { 0x03B1, 'a' }, { 0x03B9, 'i' }, { 0x03BD, 'v' }, { 0x03BF, 'o' },
        { 0x03C1, 'p' }, { 0x0405, 'S' }, { 0x0406, 'I' }, { 0x0408, 'J' }, { 0x0410, 'A' }, { 0x0412, 'B' },
        { 0x0415, 'E' }, { 0x041A, 'K' }, { 0x041C, 'M' }, { 0x041D, 'H' }, { 0x041E, 'O' }, { 0x0420, 'P' },
        { 0x0421, 'C' }, { 0x0422, 'T' }, { 0x0423, 'Y' }, { 0x0425, 'X' }, { 0x0430, 'a' }, { 0x0435, 'e' },
        { 0x043E, 'o' }, { 0x0440, 'p' }, { 0x0441, 'c' }, { 0x0443, 'y' }, { 0x0445, 'x' }, { 0x0455, 's' },
        { 0x0456, 'i' }, { 0x0458, 'j' }, { 0x04BB, 'h' }, { 0x04CF, 'l' }, { 0x0501, 'd' }, { 0x051B, 'q' },
        { 0x051D, 'w' }, { 0x0261, 'g' }, { 0x0131, 'i' },
    };
    if (c < 0x80) return (char)c;
    if (c >= 0xFF01 && c <= 0xFF5E) return (char)(c - 0xFEE0);
    for (size_t i = 0; i < sizeof map / sizeof *map; i++) if (map[i].cp == c) return map[i].a;
    return 0;
}

typedef struct strtok_ { uint32_t off, end; dw_str text; char *skel; bool ascii; } strtok_;

static void rule_unicode(L *l)
{
    const char *s = l->src->text;
    size_t n = l->src->len;
    strtok_ *toks = NULL;
    size_t nt = 0, capt = 0;
    /* bidi controls anywhere, including comments (Trojan Source) */
    for (size_t i = 0; i < n;) {
        size_t at = i;
        uint32_t c = utf8_next(s, n, &i);
        if (is_bidi(c))
            add(l, R_BIDI, -1, dw_loc_at(l->src, (uint32_t)at, (uint32_t)i), "delete it, or write it as an escape (\\u{202e}) inside a string",
                "bidirectional control character U+%04X: the text may display in a different order than it is read", c);
    }
    /* string literals (outside comments) */
    for (size_t i = 0; i < n;) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') { while (i < n && s[i] != '\n') i++; continue; }
        if (s[i] != '"') { i++; continue; }
        size_t st = ++i;
        while (i < n && s[i] != '"' && s[i] != '\n') { if (s[i] == '\\' && i + 1 < n) i++; i++; }
        size_t en = i < n ? i : n;
        if (i < n) i++;
        /* scripts */
        bool seen[S_N] = { 0 };
        int nscripts = 0;
        bool ascii = true;
        char *skel = alloc(l, en - st + 1);
        size_t sk = 0;
        bool invisible = false;
        for (size_t j = st; j < en;) {
            size_t at = j;
            uint32_t c = utf8_next(s, en, &j);
            if (c >= 0x80) ascii = false;
            if (!invisible && is_invisible(c)) {
                invisible = true;
                char name[96] = "";
                UErrorCode e = U_ZERO_ERROR;
                u_charName((UChar32)c, U_UNICODE_CHAR_NAME, name, sizeof name, &e);
                add(l, R_INVISIBLE, -1, dw_loc_at(l->src, (uint32_t)at, (uint32_t)j),
                    fmt(l, "delete it, or write it as an escape (\\u{%x}) if it is meant", c),
                    "string literal %s contains the invisible character U+%04X%s%s%s: it displays as nothing but is matched",
                    dw_lint_quote(l, s + st, en - st), c, *name ? " (" : "", name, *name ? ")" : "");
            }
            int sc = script_of(c);
            if (sc && !seen[sc]) { seen[sc] = true; nscripts++; }
            char a = skeleton_of(c);
            if (a && sk < en - st) skel[sk++] = a;
            else if (!a) { skel = NULL; break; }
        }
        if (skel) skel[sk] = 0;
        if (nscripts > 1) {
            char list[128] = "";
            for (int k = 1; k < S_N; k++)
                if (seen[k]) { if (*list) strcat(list, ", "); strcat(list, script_name[k]); }
            add(l, R_MIXED, -1, dw_loc_at(l->src, (uint32_t)st - 1, (uint32_t)(en < n ? en + 1 : en)),
                "write the literal in one script; look-alike letters from another script make it match different text",
                "string literal %s mixes letters of several scripts (%s)", dw_lint_quote(l, s + st, en - st), list);
        }
        if (nt == capt) {
            capt = capt ? capt * 2 : 32;
            strtok_ *v = alloc(l, capt * sizeof *v);
            if (nt) memcpy(v, toks, nt * sizeof *v);
            toks = v;
        }
        toks[nt++] = (strtok_){ (uint32_t)st - 1, (uint32_t)(en < n ? en + 1 : en), { s + st, en - st }, skel, ascii };
    }
    /* confusable pairs: a non-ASCII literal whose skeleton equals another
     * literal's skeleton while the texts differ */
    for (size_t a = 0; a < nt; a++) {
        if (toks[a].ascii || !toks[a].skel) continue;
        for (size_t b = 0; b < nt; b++) {
            if (a == b || !toks[b].skel || dw_str_eq(toks[a].text, toks[b].text) || strcmp(toks[a].skel, toks[b].skel)) continue;
            if (!toks[b].ascii && b > a) continue;   /* two non-ASCII look-alikes: report once, at the later */
            dw_loc bl = dw_loc_at(l->src, toks[b].off, toks[b].end);
            add(l, R_CONFUSABLE, -1, dw_loc_at(l->src, toks[a].off, toks[a].end),
                "write both literals with the same characters (usually plain ASCII)",
                "string literal %s looks like %s at line %u but is different text",
                dw_lint_quote(l, toks[a].text.s, toks[a].text.len), dw_lint_quote(l, toks[b].text.s, toks[b].text.len), bl.line);
            break;
        }
    }
}

/* an error among f's findings from `first` on (out may hold earlier ones: lint appends) */
static bool has_error(const dw_findings *f, size_t first)
{
    for (size_t i = first; i < f->n; i++)
        if (f->v[i].sev == DW_LINT_ERROR) return true;
    return false;
}

static bool has_template(const dw_policy_set *ps)
{
    for (size_t i = 0; i < ps->npolicies; i++)
        if (ps->policies[i].is_template) return true;
    return false;
}

void dw_lint_products_free(dw_lint_products *p)
{
    if (p->prog) dw_program_free(p->prog);
    if (p->ps) dw_policy_set_free(p->ps);
    if (p->lib) dw_policy_set_free(p->lib);
    memset(p, 0, sizeof *p);
}

int dw_lint_run(const dw_source *src, const dw_lint_options *opt, dw_findings *out, dw_lint_products *keep)
{
    size_t first = out->n;
    if (keep) memset(keep, 0, sizeof *keep);
    L *l = dw_lint_new(src, opt, out);
    if (!l) return -1;
    dw_diags d;
    dw_diags_init(&d);
    d.limit = 1u << 20;
    /* the shared front end (compiler/pipeline.h), a stage at a time: every
     * stage's findings are reported under its rule, and the lint rules on
     * macro calls run between parsing and expansion.  Also without a schema
     * the temporal validation runs (the default window cap).  The rules over
     * the expanded set are the pipeline's DW_FE_PROFILE stage, whose findings
     * (fe.findings) are the ones the loader refuses on. */
    dw_front_end fe = { .src = src, .schema = opt->schema, .dv = opt->dv, .schema_checks_without_schema = true,
                        .profile = opt, .providers = opt->providers, .macros = opt->macros,
                        /* the compile stage's window cap, as the loader's (§9.7) */
                        .max_window = opt->dv && opt->dv->es ? (int64_t)opt->dv->es->max_window : 0 };
    int rc = 0;
    if (setjmp(l->oom)) { rc = -1; goto done; }

    rule_unicode(l);
    int pr = dw_front_end_step(&fe, &d);      /* DW_FE_PARSE */
    l->ps = fe.ps;
    if (!l->ps) { rc = -1; goto done; }
    if (pr) { dw_lint_take_diags(l, &d, R_PARSE); rc = 1; goto done; }
    dw_lint_take_diags(l, &d, R_PARSE);   /* parser warnings, if any */
    dw_lint_find_ids(l);
    /* macro expansion (§10) */
    void *lib = (void *)dw_front_end_library(&fe, &d);
    if (opt->box && lib) dw_lint_macro_calls(l, lib);
    if (dw_front_end_step(&fe, &d)) { dw_lint_take_diags(l, &d, R_MACRO); rc = 1; goto done; }   /* DW_FE_EXPAND */
    dw_lint_take_diags(l, &d, R_MACRO);

    /* temporal well-formedness and temporal validation (§9) */
    dw_front_end_step(&fe, &d);               /* DW_FE_STRUCTURE */
    dw_front_end_step(&fe, &d);               /* DW_FE_SCHEMA */
    dw_lint_take_diags(l, &d, R_TEMPORAL);
    int profile_rc = dw_front_end_step(&fe, &d);   /* DW_FE_PROFILE */
    if (profile_rc < 0) { rc = -1; goto done; }
    /* its findings are check's (its diagnostics repeat the errors among them) */
    dw_diags_free(&d);
    dw_diags_init(&d);
    for (size_t i = 0; i < fe.findings.n; i++) {
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 16;
            dw_finding *v = realloc(out->v, cap * sizeof *v);
            if (!v) { rc = -1; goto done; }
            out->v = v;
            out->cap = cap;
        }
        out->v[out->n++] = fe.findings.v[i];
        memset(&fe.findings.v[i], 0, sizeof fe.findings.v[i]);   /* moved: the strings are out's now */
    }
    /* The compile stage, so that check refuses what `dwc compile` and the
     * loader refuse: without a schema only compiling checks the provider
     * calls (§13.3; a build with PROVIDERS=0 refuses every call), and it has
     * its own limits.  Not after an error (it would repeat it), nor for a set
     * with templates, which compiles only once its links are given. */
    if (!profile_rc && !has_error(out, first) && !has_template(fe.ps)) {
        if (dw_front_end_step(&fe, &d) < 0) { rc = -1; goto done; }   /* DW_FE_COMPILE */
        dw_lint_take_diags(l, &d, R_VALIDATION);
        if (keep && fe.prog) {   /* handed over: the front end no longer frees them */
            *keep = (dw_lint_products){ fe.ps, fe.lib, fe.prog };
            fe.ps = fe.lib = NULL;
            fe.prog = NULL;
        }
    }

done:
    dw_diags_free(&d);
    dw_front_end_free(&fe);                   /* l->ps, the library, what is left of fe.findings */
    dw_lint_free(l);
    return rc;
}
