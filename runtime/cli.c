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

int dw_cli_parse(int argc, char **argv, const dw_cli_opt *opts, const char **operand, const char *usage)
{
    struct option longs[MAX_OPTS + 2];
    char shorts[2 * MAX_OPTS + 4] = ":h";     /* ':' first: a missing value is ':', an unknown option '?' */
    size_t n = 0, sl = 2;
    for (; opts[n].name; n++) {
        if (n == MAX_OPTS) { fprintf(stderr, "dwc %s: internal error: too many options\n", argv[0]); return -1; }
        /* val: the table index + 256, out of any letter's range */
        longs[n] = (struct option){ opts[n].name, opts[n].value ? required_argument : no_argument, NULL, 256 + (int)n };
        if (opts[n].letter) {
            shorts[sl++] = opts[n].letter;
            if (opts[n].value) shorts[sl++] = ':';
        }
    }
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
        size_t k = n;
        if (c >= 256) k = (size_t)(c - 256);
        else for (k = 0; k < n && opts[k].letter != c; k++) { }
        if (c == '?' || c == ':' || k == n) {
            report(argv, argc, before, c);
            fputs(usage, stderr);
            return -1;
        }
        if (opts[k].value) *opts[k].value = optarg;
        else *opts[k].flag = true;
    }
    if (operand && !*operand && optind < argc) *operand = argv[optind++];
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
