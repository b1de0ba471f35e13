/* histlog_fixture.h - what the history store's tests share (test_histlog.c,
 * test_histlog_append.c, test_histlog_rotate.c): a mkdtemp root,
 * recovered-record collection, recognisable payloads, whole-directory
 * snapshots.  Include after cmocka.h
 * and runtime/histlog.h. */
#ifndef DW_HISTLOG_FIXTURE_H
#define DW_HISTLOG_FIXTURE_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIGEST 0x5eed5eed12345678ull

/* ================================================================ fixtures */

static char g_root[64];

static inline int setup(void **state)
{
    (void)state;
    strcpy(g_root, "/tmp/dw-histlog-XXXXXX");
    return mkdtemp(g_root) ? 0 : -1;
}

static inline void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", path, de->d_name);
            rm_rf(p);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static inline int teardown(void **state)
{
    (void)state;
    rm_rf(g_root);
    return 0;
}

static inline void subdir(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_root, name);
}

/* Recovered records. */
typedef struct rec_t { uint64_t seq, ts; size_t len; uint8_t *bytes; } rec_t;
typedef struct collect {
    rec_t *v; size_t n, cap;
    int have_ckpt; uint64_t ckpt_seq; size_t ckpt_len; uint8_t ckpt[256];
} collect;

static inline int on_rec(void *ctx, uint64_t seq, uint64_t ts, const void *p, size_t len)
{
    collect *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->v = realloc(c->v, c->cap * sizeof *c->v);
    }
    rec_t *r = &c->v[c->n++];
    r->seq = seq; r->ts = ts; r->len = len;
    r->bytes = malloc(len ? len : 1);
    memcpy(r->bytes, p, len);
    return 0;
}

static inline int on_ckpt(void *ctx, uint64_t seq, uint64_t last_ts, const void *state, size_t len)
{
    collect *c = ctx;
    c->have_ckpt = 1;
    c->ckpt_seq = seq;
    c->ckpt_len = len < sizeof c->ckpt ? len : sizeof c->ckpt;
    memcpy(c->ckpt, state, c->ckpt_len);
    return 0;
}

static inline void collect_free(collect *c)
{
    for (size_t i = 0; i < c->n; i++) free(c->v[i].bytes);
    free(c->v);
    memset(c, 0, sizeof *c);
}

static inline dw_histlog_options opts(dw_durability mode, collect *c)
{
    dw_histlog_options o;
    memset(&o, 0, sizeof o);
    o.schema_digest = DIGEST;
    o.durability = mode;
    o.on_record = c ? on_rec : NULL;
    o.on_checkpoint = c ? on_ckpt : NULL;
    o.cb_ctx = c;
    return o;
}

static inline dw_histlog *open_ok(const char *dir, dw_durability mode, collect *c, dw_histlog_recovery *rec)
{
    dw_histlog_options o = opts(mode, c);
    char err[256];
    dw_histlog *log = dw_histlog_open(dir, &o, rec, err, sizeof err);
    if (!log) fprintf(stderr, "open %s: %s\n", dir, err);
    assert_non_null(log);
    return log;
}

/* reopened: recovery starts from a checkpoint at ckpt_seq */
static inline dw_histlog *reopen_at_ckpt(const char *dir, dw_durability mode, collect *c, dw_histlog_recovery *rec, uint64_t ckpt_seq)
{
    dw_histlog *log = open_ok(dir, mode, c, rec);
    assert_true(c->have_ckpt);
    assert_int_equal(c->ckpt_seq, ckpt_seq);
    return log;
}

static inline dw_histlog *open_salvage(const char *dir, dw_durability mode, collect *c, dw_histlog_recovery *rec)
{
    dw_histlog_options o = opts(mode, c);
    o.salvage = true;
    char err[1024];
    dw_histlog *log = dw_histlog_open(dir, &o, rec, err, sizeof err);
    if (!log) fprintf(stderr, "salvage %s: %s\n", dir, err);
    assert_non_null(log);
    return log;
}

/* The open is refused (the message in err, cap 1024) and no callback ran. */
static inline void open_refused(const char *dir, dw_durability mode, char *err)
{
    collect c = { 0 };
    dw_histlog_options o = opts(mode, &c);
    dw_histlog *log = dw_histlog_open(dir, &o, NULL, err, 1024);
    if (log) fprintf(stderr, "open %s was not refused\n", dir);
    assert_null(log);
    assert_int_equal(c.n, 0);
    assert_false(c.have_ckpt);
    collect_free(&c);
}

static inline void assert_has(const char *text, const char *want)
{
    if (!strstr(text, want)) fprintf(stderr, "missing \"%s\" in: %s\n", want, text);
    assert_non_null(strstr(text, want));
}

/* Payload of record i: varying length (0..40), recognisable bytes. */
static inline size_t payload(uint64_t i, uint8_t *buf)
{
    size_t len = (size_t)(i * 7 % 41);
    for (size_t k = 0; k < len; k++) buf[k] = (uint8_t)(i * 31 + k);
    return len;
}

/* Records first..first+n-1 except `skip` (UINT64_MAX: none) were recovered. */
static inline void check_records_but(const collect *c, uint64_t first, uint64_t n, uint64_t skip)
{
    uint8_t buf[64];
    size_t k = 0;
    for (uint64_t i = first; i < first + n; i++) {
        if (i == skip) continue;
        assert_true(k < c->n);
        const rec_t *r = &c->v[k];
        assert_int_equal(r->seq, i);
        size_t len = payload(i, buf);
        assert_int_equal(r->len, len);
        assert_memory_equal(r->bytes, buf, len);
        if (k) assert_true(r->ts > c->v[k - 1].ts);
        k++;
    }
    assert_int_equal(c->n, k);
}

static inline void check_records(const collect *c, uint64_t first, uint64_t n)
{
    assert_int_equal(c->n, n);
    uint8_t buf[64];
    for (uint64_t i = 0; i < n; i++) {
        const rec_t *r = &c->v[i];
        assert_int_equal(r->seq, first + i);
        size_t len = payload(first + i, buf);
        assert_int_equal(r->len, len);
        assert_memory_equal(r->bytes, buf, len);
        if (i) assert_true(r->ts > c->v[i - 1].ts);
    }
}

static inline void append_n(dw_histlog *log, uint64_t from, uint64_t n)
{
    uint8_t buf[64];
    for (uint64_t i = from; i < from + n; i++) {
        uint64_t seq = ~0ull;
        size_t len = payload(i, buf);
        assert_int_equal(dw_histlog_append(log, buf, len, &seq), 0);
        assert_int_equal(seq, i);
    }
}

/* Whole-directory snapshots, to damage a copy again and again. */
typedef struct file_t { char name[256]; uint8_t *data; size_t len; } file_t;
typedef struct snap { file_t f[16]; int n; } snap;

static inline void snap_take(const char *dir, snap *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !strcmp(de->d_name, "LOCK")) continue;
        assert_true(s->n < 16);
        file_t *f = &s->f[s->n++];
        snprintf(f->name, sizeof f->name, "%s", de->d_name);
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        FILE *fp = fopen(p, "rb");
        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        f->len = (size_t)ftell(fp);
        fseek(fp, 0, SEEK_SET);
        f->data = malloc(f->len + 1);
        assert_int_equal(fread(f->data, 1, f->len, fp), f->len);
        fclose(fp);
    }
    closedir(d);
}

static inline file_t *snap_find(snap *s, const char *prefix)
{
    for (int i = 0; i < s->n; i++)
        if (!strncmp(s->f[i].name, prefix, strlen(prefix))) return &s->f[i];
    return NULL;
}

/* Recreate dir from s; file `victim` (may be NULL) is written with len bytes
 * and, if flip >= 0, byte `flip` inverted. */
static inline void snap_restore(const char *dir, const snap *s, const file_t *victim, size_t len, long flip)
{
    rm_rf(dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    for (int i = 0; i < s->n; i++) {
        const file_t *f = &s->f[i];
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, f->name);
        FILE *fp = fopen(p, "wb");
        assert_non_null(fp);
        size_t n = f == victim ? len : f->len;
        if (f == victim && flip >= 0) {
            uint8_t *tmp = malloc(f->len + 1);
            memcpy(tmp, f->data, f->len);
            tmp[flip] ^= 0xff;
            fwrite(tmp, 1, n, fp);
            free(tmp);
        } else {
            fwrite(f->data, 1, n, fp);
        }
        fclose(fp);
    }
}

static inline void snap_free(snap *s)
{
    for (int i = 0; i < s->n; i++) free(s->f[i].data);
    s->n = 0;
}

static inline int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, prefix, strlen(prefix))) n++;
    closedir(d);
    return n;
}

/* Offsets where record i ends in a fresh single segment. */
static inline size_t rec_end(uint64_t i)
{
    size_t off = 48;
    uint8_t buf[64];
    for (uint64_t k = 0; k <= i; k++) off += 32 + payload(k, buf);
    return off;
}

#endif
