/* dwtest_report.c - `dwc test`'s report: human (a line per case, ending
 * `N passed, N failed`), TAP version 13, JUnit XML (the schema CI servers
 * read: testsuites > testsuite per file > testcase per case, failure /
 * error children) and JSON.  See dwtest.h. */
#include "dwtest.h"
#include <string.h>
#include "../stdlib/json_escape.h"
#include "../stdlib/utf8.h"

static bool case_ok(const dw_test_case *c) { return !c->nfailed; }

/* ---- human ---- */

static void indented(FILE *out, const char *text)
{
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        fprintf(out, "      | %.*s\n", (int)n, l);
        l += n + (nl ? 1 : 0);
    }
}

static void human(const dw_test_run *r, FILE *out)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        const dw_test_file *f = &r->files[i];
        if (f->error) { fprintf(out, "ERROR %s\n", f->error); continue; }
        for (size_t c = 0; c < f->ncases; c++) {
            const dw_test_case *k = &f->cases[c];
            fprintf(out, "%s %s:%zu: %s", case_ok(k) ? "PASS" : "FAIL", f->path, k->line, k->name);
            if (k->nchecks > 1) fprintf(out, " (%zu checks%s)", k->nchecks, k->nfailed ? ", failed below" : "");
            fputc('\n', out);
            for (size_t j = 0; j < k->nchecks; j++)
                if (!k->checks[j].ok) {
                    fprintf(out, "    %s:%zu: expected %s, got %s\n", f->path, k->checks[j].line, k->checks[j].expected, k->checks[j].actual);
                    if (k->checks[j].explanation) indented(out, k->checks[j].explanation);
                }
            if (k->error) fprintf(out, "    %s\n", k->error);
        }
    }
    fprintf(out, "%zu passed, %zu failed", r->passed, r->failed);
    if (r->invalid) fprintf(out, ", %zu invalid test file%s", r->invalid, r->invalid == 1 ? "" : "s");
    fputc('\n', out);
}

/* ---- TAP ---- */

/* a TAP description: one line, `#` escaped (it starts a directive) */
static void tap_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '#') fputs("\\#", out);
        else fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
    }
}

static void tap_yaml_message(FILE *out, const char *text)
{
    fputs("  ---\n  message: ", out);
    dw_json_escape_file(out, text, strlen(text), DW_JSON_REPLACE);   /* a JSON string is a YAML scalar */
    fputs("\n", out);
}

static void tap(const dw_test_run *r, FILE *out)
{
    size_t n = r->invalid;
    for (size_t i = 0; i < r->nfiles; i++) n += r->files[i].error ? 0 : r->files[i].ncases;
    fprintf(out, "TAP version 13\n1..%zu\n", n);
    size_t k = 0;
    for (size_t i = 0; i < r->nfiles; i++) {
        const dw_test_file *f = &r->files[i];
        if (f->error) {
            fprintf(out, "not ok %zu - ", ++k);
            tap_text(out, f->path);
            fputs(" (invalid test file)\n", out);
            tap_yaml_message(out, f->error);
            fprintf(out, "  at: { file: ");
            dw_json_escape_file(out, f->path, strlen(f->path), DW_JSON_REPLACE);
            fprintf(out, ", line: %zu }\n  ...\n", f->error_line);
            continue;
        }
        for (size_t c = 0; c < f->ncases; c++) {
            const dw_test_case *t = &f->cases[c];
            fprintf(out, "%s %zu - ", case_ok(t) ? "ok" : "not ok", ++k);
            tap_text(out, t->name);
            fputs(" (", out);
            tap_text(out, f->path);
            fprintf(out, ":%zu)\n", t->line);
            if (case_ok(t)) continue;
            fputs("  ---\n  failures:\n", out);
            for (size_t j = 0; j < t->nchecks; j++) {
                const dw_test_check *ch = &t->checks[j];
                if (ch->ok) continue;
                fprintf(out, "    - line: %zu\n      expected: %s\n      got: %s\n", ch->line, ch->expected_json, ch->actual_json);
            }
            if (t->error) {
                fputs("    - error: ", out);
                dw_json_escape_file(out, t->error, strlen(t->error), DW_JSON_REPLACE);
                fputc('\n', out);
            }
            fprintf(out, "  at: { file: ");
            dw_json_escape_file(out, f->path, strlen(f->path), DW_JSON_REPLACE);
            fprintf(out, ", line: %zu }\n  ...\n", t->line);
        }
    }
}

/* ---- JUnit XML ---- */

/* Text for an attribute or element: markup escaped; bytes XML 1.0 cannot
 * hold (controls other than tab and newline, U+FFFE/U+FFFF, non-UTF-8)
 * replaced by U+FFFD, so the document always parses. */
static void xml_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t l = dw_utf8_len(p + i, n - i);
        bool bad = !l || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ||
                   (l == 3 && c == 0xEF && p[i + 1] == 0xBF && (p[i + 2] == 0xBE || p[i + 2] == 0xBF));
        if (bad) { fputs("\xEF\xBF\xBD", out); i += l ? l : 1; continue; }
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        case '\n': fputs("&#10;", out); break;
        case '\t': fputs("&#9;", out); break;
        default: fwrite(p + i, 1, l, out);
        }
        i += l;
    }
}

static void junit(const dw_test_run *r, FILE *out)
{
    double total = 0;
    for (size_t i = 0; i < r->nfiles; i++) total += r->files[i].seconds;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out, "<testsuites name=\"dwc test\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.6f\">\n",
            r->passed + r->failed + r->invalid, r->failed, r->invalid, total);
    for (size_t i = 0; i < r->nfiles; i++) {
        const dw_test_file *f = &r->files[i];
        size_t nf = 0;
        for (size_t c = 0; !f->error && c < f->ncases; c++) nf += !case_ok(&f->cases[c]);
        fputs("  <testsuite name=\"", out);
        xml_text(out, f->path);
        fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" time=\"%.6f\">\n", f->error ? 1 : f->ncases, nf,
                f->error ? 1 : 0, f->seconds);
        if (f->error) {
            fputs("    <testcase name=\"(test file)\" classname=\"", out);
            xml_text(out, f->path);
            fputs("\" file=\"", out);
            xml_text(out, f->path);
            fprintf(out, "\" line=\"%zu\">\n      <error type=\"invalid test file\" message=\"", f->error_line);
            xml_text(out, f->error);
            fputs("\"/>\n    </testcase>\n  </testsuite>\n", out);
            continue;
        }
        for (size_t c = 0; c < f->ncases; c++) {
            const dw_test_case *t = &f->cases[c];
            fputs("    <testcase name=\"", out);
            xml_text(out, t->name);
            fputs("\" classname=\"", out);
            xml_text(out, f->path);
            fputs("\" file=\"", out);
            xml_text(out, f->path);
            fprintf(out, "\" line=\"%zu\" time=\"%.6f\"", t->line, t->seconds);
            if (case_ok(t)) { fputs("/>\n", out); continue; }
            fputs(">\n", out);
            for (size_t j = 0; j < t->nchecks; j++) {
                const dw_test_check *ch = &t->checks[j];
                if (ch->ok) continue;
                char head[64];
                snprintf(head, sizeof head, ":%zu: expected ", ch->line);
                fputs("      <failure type=\"mismatch\" message=\"", out);
                xml_text(out, f->path);
                xml_text(out, head);
                xml_text(out, ch->expected);
                xml_text(out, ", got ");
                xml_text(out, ch->actual);
                fputs("\">", out);
                xml_text(out, "expected: ");
                xml_text(out, ch->expected_json);
                xml_text(out, "\nactual: ");
                xml_text(out, ch->actual_json);
                if (ch->explanation) { xml_text(out, "\n\n"); xml_text(out, ch->explanation); }
                fputs("</failure>\n", out);
            }
            if (t->error) {
                fputs("      <failure type=\"refused event\" message=\"", out);
                xml_text(out, t->error);
                fputs("\"/>\n", out);
            }
            fputs("    </testcase>\n", out);
        }
        fputs("  </testsuite>\n", out);
    }
    fputs("</testsuites>\n", out);
}

/* ---- JSON ---- */

static void json_str(FILE *out, const char *s) { dw_json_escape_file(out, s, strlen(s), DW_JSON_REPLACE); }

static void json(const dw_test_run *r, FILE *out)
{
    fputs("{\"files\":[", out);
    for (size_t i = 0; i < r->nfiles; i++) {
        const dw_test_file *f = &r->files[i];
        fprintf(out, "%s{\"file\":", i ? "," : "");
        json_str(out, f->path);
        fputs(",\"policy\":", out);
        if (f->policy) json_str(out, f->policy);
        else fputs("null", out);
        if (f->error) {
            fprintf(out, ",\"error\":{\"line\":%zu,\"message\":", f->error_line);
            json_str(out, f->error);
            fputs("},\"cases\":[]}", out);
            continue;
        }
        fputs(",\"error\":null,\"cases\":[", out);
        for (size_t c = 0; c < f->ncases; c++) {
            const dw_test_case *t = &f->cases[c];
            fprintf(out, "%s{\"name\":", c ? "," : "");
            json_str(out, t->name);
            fprintf(out, ",\"line\":%zu,\"ok\":%s,\"seconds\":%.6f,\"error\":", t->line, case_ok(t) ? "true" : "false", t->seconds);
            if (t->error) json_str(out, t->error);
            else fputs("null", out);
            fputs(",\"checks\":[", out);
            for (size_t j = 0; j < t->nchecks; j++) {
                const dw_test_check *ch = &t->checks[j];
                fprintf(out, "%s{\"line\":%zu,\"ok\":%s,\"expected\":%s,\"actual\":%s", j ? "," : "", ch->line,
                        ch->ok ? "true" : "false", ch->expected_json, ch->actual_json);
                if (ch->explanation) { fputs(",\"explanation\":", out); json_str(out, ch->explanation); }
                fputc('}', out);
            }
            fputs("]}", out);
        }
        fputs("]}", out);
    }
    fprintf(out, "],\"passed\":%zu,\"failed\":%zu,\"invalid\":%zu}\n", r->passed, r->failed, r->invalid);
}

void dw_test_report(const dw_test_run *r, dw_test_format fmt, FILE *out)
{
    switch (fmt) {
    case DW_TEST_HUMAN: human(r, out); break;
    case DW_TEST_TAP: tap(r, out); break;
    case DW_TEST_JUNIT: junit(r, out); break;
    case DW_TEST_JSON: json(r, out); break;
    }
}
