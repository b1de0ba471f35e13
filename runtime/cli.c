#include "cli.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OPTS = 32, HELP = 'h' };

/* getopt's message for the option it stopped at, in dwc's words */
static void report(char **argv, int argc, int before, int c)
{
    const char *arg = optind > before && optind - 1 < argc ? argv[optind - 1] : argv[before < argc ? before : argc - 1];
    char letter[3] = { '-', (char)optopt, 0 };
    const char *name = strncmp(arg, "--", 2) == 0 || !optopt ? arg : letter;
    if (c == ':') fprintf(stderr, "dwc %s: error: %.*s needs a value\n", argv[0], (int)strcspn(name, "="), name);
    else fprintf(stderr, "dwc %s: error: unknown option `%s`\n", argv[0], name);
}

static bool list_add(dw_cli_list *l, const char *v)
{
    if (l->n == l->cap) {
        const char **nv = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 4) * sizeof *nv);
        if (!nv) return false;
        l->v = nv;
    }
    l->v[l->n++] = v;
    return true;
}

static int usage_status = 1;
void dw_cli_set_usage_status(int status) { usage_status = status; }
int dw_cli_usage_status(void) { return usage_status; }

int dw_cli_parse(int argc, char **argv, const dw_cli_opt *opts, const char **operand, const char *usage)
{
    return dw_cli_parse_lists(argc, argv, opts, NULL, operand, usage);
}

static int parse(int argc, char **argv, const dw_cli_opt *opts, const dw_cli_list_opt *lists, const char **operand,
                 dw_cli_list *operands, const char *usage);

int dw_cli_parse_lists(int argc, char **argv, const dw_cli_opt *opts, const dw_cli_list_opt *lists, const char **operand,
                       const char *usage)
{
    return parse(argc, argv, opts, lists, operand, NULL, usage);
}

int dw_cli_parse_operands(int argc, char **argv, const dw_cli_opt *opts, dw_cli_list *operands, const char *usage)
{
    return parse(argc, argv, opts, NULL, NULL, operands, usage);
}

static int parse(int argc, char **argv, const dw_cli_opt *opts, const dw_cli_list_opt *lists, const char **operand,
                 dw_cli_list *operands, const char *usage)
{
    struct option longs[MAX_OPTS + 2];
    char shorts[2 * MAX_OPTS + 4] = ":h";     /* ':' first: a missing value is ':', an unknown option '?' */
    size_t n = 0, sl = 2, nl = 0;
    for (; opts[n].name; n++) {
        if (n == MAX_OPTS) { fprintf(stderr, "dwc %s: internal error: too many options\n", argv[0]); return -1; }
        /* val: the table index + 256, out of any letter's range */
        longs[n] = (struct option){ opts[n].name, opts[n].value ? required_argument : no_argument, NULL, 256 + (int)n };
        if (opts[n].letter) {
            shorts[sl++] = opts[n].letter;
            if (opts[n].value) shorts[sl++] = ':';
        }
    }
    /* list options: val = 256 + MAX_OPTS + their index */
    for (; lists && lists[nl].name; nl++) {
        if (n + nl == MAX_OPTS) { fprintf(stderr, "dwc %s: internal error: too many options\n", argv[0]); return -1; }
        longs[n + nl] = (struct option){ lists[nl].name, required_argument, NULL, 256 + MAX_OPTS + (int)nl };
        if (lists[nl].letter) { shorts[sl++] = lists[nl].letter; shorts[sl++] = ':'; }
    }
    n += nl;
    shorts[sl] = 0;
    longs[n] = (struct option){ "help", no_argument, NULL, HELP };
    longs[n + 1] = (struct option){ 0, 0, 0, 0 };
    opterr = 0;
    optind = 0;                               /* a fresh scan (glibc) */
    for (;;) {
        int before = optind ? optind : 1;
        int c = getopt_long(argc, argv, shorts, longs, NULL);
        if (c == -1) break;
        if (c == HELP) { fputs(usage, stdout); return 1; }
        size_t k = n, no = n - nl;
        if (c >= 256 + MAX_OPTS) k = no + (size_t)(c - 256 - MAX_OPTS);
        else if (c >= 256) k = (size_t)(c - 256);
        else {
            for (size_t j = 0; k == n && j < no; j++) if (opts[j].letter == c) k = j;
            for (size_t j = 0; k == n && j < nl; j++) if (lists[j].letter == c) k = no + j;
        }
        if (c == '?' || c == ':' || k == n) {
            report(argv, argc, before, c);
            fputs(usage, stderr);
            return -1;
        }
        if (k >= no) {
            if (!list_add(lists[k - no].list, optarg)) { fprintf(stderr, "dwc %s: error: out of memory\n", argv[0]); return -1; }
        } else if (opts[k].value) *opts[k].value = optarg;
        else *opts[k].flag = true;
    }
    if (operand && !*operand && optind < argc) *operand = argv[optind++];
    while (operands && optind < argc)
        if (!list_add(operands, argv[optind++])) { fprintf(stderr, "dwc %s: error: out of memory\n", argv[0]); return -1; }
    if (optind < argc) {
        fprintf(stderr, "dwc %s: error: unexpected argument `%s`\n", argv[0], argv[optind]);
        fputs(usage, stderr);
        return -1;
    }
    return 0;
}

bool dw_cli_count(const char *cmd, const char *opt, const char *text, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < min || v > max) {
        fprintf(stderr, "dwc %s: error: %s wants a whole number from %lld to %lld, not `%s`\n", cmd, opt, min, max, text);
        return false;
    }
    *out = v;
    return true;
}

/* `human` is Cedar 3.x's name for the Cedar text form (CLI 4.0 renamed it
 * `cedar`); scripts written for 3.x still pass it, so it is taken as `cedar`. */
bool dw_cli_cedar_form_ok(const char *cmd, const char *opt, const char *value)
{
    if (!value || !strcmp(value, "cedar") || !strcmp(value, "json") || !strcmp(value, "human")) return true;
    fprintf(stderr, "dwc %s: error: --%s must be cedar or json (or human, Cedar 3.x's name for cedar), not `%s`\n", cmd, opt, value);
    return false;
}

int dw_cli_take_error_format(int argc, char **argv, int from)
{
    int out = from;
    for (int i = from; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--")) {           /* the rest are operands */
            while (i < argc) argv[out++] = argv[i++];
            break;
        }
        if (!strcmp(a, "-f") || !strcmp(a, "--error-format")) {
            if (i + 1 >= argc) { fprintf(stderr, "dwc: error: %s wants a value (human, plain or json)\n", a); return -1; }
            v = argv[++i];
        } else if (!strncmp(a, "--error-format=", 15)) v = a + 15;
        else if (!strncmp(a, "-f", 2)) v = a + 2;
        else { argv[out++] = argv[i]; continue; }
        if (!strcmp(v, "json")) {
            fputs("dwc: error: --error-format json: dwc reports errors as text only (human or plain)\n", stderr);
            return -1;
        }
        if (strcmp(v, "human") && strcmp(v, "plain")) {
            fprintf(stderr, "dwc: error: --error-format must be human, plain or json, not `%s`\n", v);
            return -1;
        }
    }
    argv[out] = NULL;
    return out;
}
