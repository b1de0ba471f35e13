/* format_cmd.c - `dwc format`: lay a policy set out canonically (lang/format.h).
 *
 *   dwc format [FILE|-p FILE] [--check | --write] [-l N] [-i N]
 *
 * Reads FILE (or stdin), prints the formatted text, or with --write replaces
 * the file (a new file renamed over the old one: a crash leaves either), or
 * with --check only says whether the file is formatted.  dwc's exit codes:
 * 0 formatted (or written), 1 --check found a difference, 2 the input cannot be
 * formatted (errors on stderr) or the options are wrong.  Run as `cedar`, it is
 * Cedar's CLI's command: the formatted text is printed with --check too, errors
 * go to stdout, a failure exits 1 and a usage error 2. */
#include "format_cmd.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "../lang/format.h"

const char dw_format_usage[] =
    "usage: dwc format [FILE] [-p FILE] [--check | --write] [--line-width N] [--indent-width N]\n"
    "Lay out a policy set (.cedar or .dw) canonically: Cedar text exactly as Cedar's\n"
    "formatter (`cedar format`) prints it, comments kept; Dogwood's items as docs/FORMAT.md.\n"
    "  -p, --policies FILE     the policy set (default: the FILE argument, else stdin)\n"
    "  -c, --check             print nothing; exit 1 if the file is not formatted\n"
    "  -w, --write             rewrite FILE in place (atomically) instead of printing\n"
    "  -l, --line-width N      line width (default 80)\n"
    "  -i, --indent-width N    indentation (default 2)\n"
    "Exit: 0 formatted, 1 --check: not formatted, 2 the input cannot be formatted or\n"
    "the options are wrong.  Run as `cedar` (a link named cedar): Cedar's CLI (`cedar\n"
    "format --policies FILE --check`): the text is printed with --check too, a failure\n"
    "exits 1 and a usage error 2.\n";

/* Replace path's contents with [p, p+n): a sibling temporary renamed over it. */
static int write_atomic(const char *path, const char *p, size_t n)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) return -1;
    snprintf(tmp, len + 16, "%s.fmt.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) { free(tmp); return -1; }
    struct stat st;
    int rc = -1;
    if (stat(path, &st) == 0 && fchmod(fd, st.st_mode & 07777) != 0) goto out;
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) goto out;
        off += (size_t)w;
    }
    if (fsync(fd) != 0) goto out;
    if (close(fd) != 0) { fd = -1; goto out; }
    fd = -1;
    if (rename(tmp, path) != 0) goto out;
    rc = 0;
out:
    if (fd >= 0) close(fd);
    if (rc) { int e = errno; unlink(tmp); errno = e; }
    free(tmp);
    return rc;
}

int dw_cmd_format(int argc, char **argv, bool as_cedar)
{
    const char *file = NULL, *pfile = NULL, *lw = NULL, *iw = NULL;
    bool check = false, write = false;
    const dw_cli_opt opts[] = {
        { "policies", 'p', &pfile, NULL },
        { "check", 'c', NULL, &check },
        { "write", 'w', NULL, &write },
        { "line-width", 'l', &lw, NULL },
        { "indent-width", 'i', &iw, NULL },
        { 0 },
    };
    /* a usage error exits 2 (as Cedar's CLI's argument parser does); a failure to
     * format, 2 for dwc and 1 for Cedar's CLI */
    int fail = as_cedar ? 1 : 2, usage = 2;
    int pr = dw_cli_parse(argc, argv, opts, &file, dw_format_usage);
    if (pr) return pr > 0 ? 0 : usage;
    if (pfile && file) {
        fprintf(stderr, "dwc format: error: give the policy file once (FILE or --policies)\n");
        return usage;
    }
    if (pfile) file = pfile;
    long long width = 80, indent = 2;
    if (lw && !dw_cli_count("format", "--line-width", lw, 0, 1 << 20, &width)) return usage;
    if (iw && !dw_cli_count("format", "--indent-width", iw, 0, 1024, &indent)) return usage;
    if (check && write) {
        fprintf(stderr, "dwc format: error: --check and --write cannot be used together\n");
        return usage;
    }
    if (write && (!file || !strcmp(file, "-"))) {
        fprintf(stderr, "dwc format: error: --write needs a policy file\n");
        return usage;
    }
    const char *name = file ? file : "-";
    char *text;
    size_t len;
    if (dw_read_file(name, &text, &len) != 0) {
        fprintf(as_cedar ? stdout : stderr, "dwc format: error: cannot read %s: %s\n",
                strcmp(name, "-") ? name : "standard input", strerror(errno));
        return fail;
    }
    dw_source src = { strcmp(name, "-") ? name : "<stdin>", text, len };
    dw_diags diags;
    dw_diags_init(&diags);
    dw_buf out = { 0 };
    dw_format_opts o = { (size_t)width, (int)indent };
    dw_format_rc rc = dw_format_policies(&src, &o, &out, &diags);
    int code = 0;
    if (rc != DW_FORMAT_OK) {
        if (rc == DW_FORMAT_OOM) fprintf(stderr, "dwc format: error: out of memory\n");
        dw_diags_print(&diags, as_cedar ? stdout : stderr);
        code = fail;
        goto done;
    }
    bool same = out.len == len && memcmp(out.p, text, len) == 0;
    if (write) {
        if (!same && write_atomic(file, out.p, out.len) != 0) {
            fprintf(stderr, "dwc format: error: cannot write %s: %s\n", file, strerror(errno));
            code = fail;
        }
        goto done;
    }
    if (check && !as_cedar) {
        if (!same) fprintf(stderr, "%s: not formatted (run `dwc format --write %s`)\n", src.name, file ? file : "FILE");
        code = same ? 0 : 1;
        goto done;
    }
    if (fwrite(out.p, 1, out.len, stdout) != out.len || fflush(stdout) != 0) code = fail;
    else if (check && !same) code = 1;
done:
    dw_buf_free(&out);
    dw_diags_free(&diags);
    free(text);
    return code;
}
