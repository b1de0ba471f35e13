/* fuzz_histlog.c - libFuzzer target for the history log's recovery
 * (runtime/histlog_recover.c).  A valid state directory is made once (three
 * segments, two rotations, a checkpoint, ACKED); each input is a list of
 * edits to a copy of it (4 bytes each: file, kind, two bytes of offset or
 * value: flip a byte, set a byte, cut the file, remove it, copy a segment
 * to another segment's name).  The copy is opened; whatever it holds, nothing may
 * crash, leak or read out of bounds, delivered records come in seq order
 * with increasing timestamps, after the checkpoint; a directory that opened
 * (plainly, or with salvage) opens again plainly with the same end.  The
 * directories are under /dev/shm when it exists (no disk syncs). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/histlog.h"

#define DIGEST 0xf022f022ull
#define MAXF 12

typedef struct file_t { char name[64]; uint8_t *data; size_t len; } file_t;
static file_t base[MAXF];
static int nbase;
static char work[256];

static void rm_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    closedir(d);
}

typedef struct seen { uint64_t ckpt, next, last_ts; int have_ckpt, any; } seen;

static int on_ckpt(void *ctx, uint64_t seq, uint64_t last_ts, const void *state, size_t len)
{
    seen *s = ctx;
    s->have_ckpt = 1;
    s->ckpt = seq;
    s->last_ts = last_ts;
    (void)state; (void)len;
    return 0;
}

static int on_rec(void *ctx, uint64_t seq, uint64_t ts, const void *p, size_t len)
{
    seen *s = ctx;
    if (s->have_ckpt && seq < s->ckpt) abort();
    if (s->any && (seq < s->next || ts <= s->last_ts)) abort();
    if (len && !p) abort();
    s->any = 1;
    s->next = seq + 1;
    s->last_ts = ts;
    return 0;
}

static dw_histlog *open_dir(const char *dir, int salvage, seen *s, dw_histlog_recovery *rec)
{
    dw_histlog_options o;
    memset(&o, 0, sizeof o);
    o.schema_digest = DIGEST;
    o.durability = DW_DURABILITY_NONE;
    o.salvage = salvage != 0;
    o.on_record = on_rec;
    o.on_checkpoint = on_ckpt;
    o.cb_ctx = s;
    memset(s, 0, sizeof *s);
    char err[1024];
    dw_histlog *log = dw_histlog_open(dir, &o, rec, err, sizeof err);
    if (getenv("DW_FUZZ_PRINT"))
        fprintf(stderr, "open%s: %s%s%s\n", salvage ? " (salvage)" : "", log ? "ok" : err, rec && log ? "; " : "",
                rec && log ? rec->note : "");
    return log;
}

static char root_dir[256];

static void remove_dirs(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/base", root_dir);
    rm_files(p);
    rmdir(p);
    rm_files(work);
    rmdir(work);
    rmdir(root_dir);
}

static void make_base(void)
{
    const char *root = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char *dir = root_dir;
    snprintf(root_dir, sizeof root_dir, "%s/dw-fuzz-histlog-%d", root, (int)getpid());
    snprintf(work, sizeof work, "%s/work", dir);
    mkdir(dir, 0700);
    atexit(remove_dirs);
    char b[300];
    snprintf(b, sizeof b, "%s/base", dir);
    seen s;
    dw_histlog *log = open_dir(b, 0, &s, NULL);
    if (!log) abort();
    uint8_t buf[64];
    uint64_t ts[26];
    for (int i = 0; i < 26; i++) {
        size_t len = (size_t)(i * 7 % 41);
        memset(buf, 'a' + i % 26, len);
        if (dw_histlog_append_ts(log, buf, len, NULL, &ts[i]) != 0) abort();
        if (i == 9) { uint64_t st = 10; if (dw_histlog_checkpoint(log, &st, sizeof st, 4) != 0) abort(); }
        if (i == 17) { uint64_t st = 12; if (dw_histlog_checkpoint_at(log, 12, ts[11], &st, sizeof st, 8) != 0) abort(); }
    }
    if (dw_histlog_sync(log) != 0 || dw_histlog_close(log) != 0) abort();
    DIR *d = opendir(b);
    if (!d) abort();
    struct dirent *de;
    while ((de = readdir(d)) && nbase < MAXF) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "LOCK")) continue;
        file_t *f = &base[nbase++];
        snprintf(f->name, sizeof f->name, "%s", de->d_name);
        char p[600];
        snprintf(p, sizeof p, "%s/%s", b, de->d_name);
        FILE *fp = fopen(p, "rb");
        if (!fp) abort();
        fseek(fp, 0, SEEK_END);
        f->len = (size_t)ftell(fp);
        fseek(fp, 0, SEEK_SET);
        f->data = malloc(f->len + 1);
        if (fread(f->data, 1, f->len, fp) != f->len) abort();
        fclose(fp);
    }
    closedir(d);
    mkdir(work, 0700);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!nbase) make_base();
    if (size > 4 * 64) return 0;
    file_t f[MAXF];
    int nf = nbase;
    bool gone[MAXF] = { 0 };
    for (int i = 0; i < nf; i++) {
        f[i] = base[i];
        f[i].data = malloc(base[i].len + 1);
        memcpy(f[i].data, base[i].data, base[i].len);
    }
    for (size_t k = 0; k + 4 <= size; k += 4) {
        file_t *g = &f[data[k] % nf];
        unsigned kind = data[k + 1] % 8, v = (unsigned)data[k + 2] | (unsigned)data[k + 3] << 8;
        size_t off = g->len ? v % g->len : 0;
        switch (kind) {
        case 0: case 1: case 2: if (g->len) g->data[off] ^= (uint8_t)(1u << (data[k + 3] % 8)); break;
        case 3: if (g->len) g->data[off] = data[k + 3]; break;
        case 4: case 5: g->len = v % (g->len + 1); break;
        case 6: gone[data[k] % nf] = true; break;
        default:
            /* a copy under the next segment's name (overlaps, doubles) */
            if (nf < MAXF && !strncmp(g->name, "seg-", 4)) {
                file_t *c = &f[nf];
                *c = *g;
                c->data = malloc(g->len + 1);
                memcpy(c->data, g->data, g->len);
                snprintf(c->name, sizeof c->name, "seg-%016x.log", v % 40);
                gone[nf++] = false;
            }
        }
    }
    rm_files(work);
    for (int i = 0; i < nf; i++) {
        if (gone[i]) continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", work, f[i].name);
        FILE *fp = fopen(p, "wb");
        if (!fp) abort();
        if (f[i].len) fwrite(f[i].data, 1, f[i].len, fp);
        fclose(fp);
    }
    for (int i = 0; i < nf; i++) free(f[i].data);

    seen s, s2;
    dw_histlog_recovery rec, rec2;
    dw_histlog *log = open_dir(work, 0, &s, &rec);
    if (!log) log = open_dir(work, 1, &s, &rec);
    if (log) {
        if (dw_histlog_close(log) != 0) abort();
        /* what opened once opens again, plainly, at the same end */
        dw_histlog *again = open_dir(work, 0, &s2, &rec2);
        if (!again || rec2.next_seq != rec.next_seq) abort();
        dw_histlog_close(again);
    }
    return 0;
}
