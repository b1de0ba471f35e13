/* prove_cache.c - environment results kept between `dwc check` runs
 * (prove_cache.h).
 *
 * An entry is DIR/<32 hex digits of the key>.env:
 *   "DWCENV1\n", u32 payload length, payload, u64 XXH3-64 of the payload
 * (little-endian).  The payload: u32 number of rules that apply in the
 * environment, then per rule (in set order): u16 flags, four rows (covers,
 * equiv, overlap, f_overlap: u8 present, u32 count, u32 positions among the
 * environment's rules), and with the flags the forbid-may-error request and
 * the witness (u32 length + request, u32 length + entities, u32 count +
 * leaf values).  Reading checks every length against what is left. */
#include "prove_cache.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <z3.h>
#include "../stdlib/arena.h"
#include "../stdlib/le.h"

enum {
    F_ENCODABLE = 1, F_APPROX = 2, F_APPLIES = 4, F_MAY_MATCH = 8, F_ALWAYS = 16, F_ERR = 32,
    F_OVERRIDDEN = 64, F_SHADOWED = 128, F_WITNESS = 256, F_UNKNOWN = 512,
};
static const char magic[8] = "DWCENV1\n";
#define MAX_ENTRY (256u << 20)

/* the environment's rules: those whose scope admits it (p->cur[i].applies) */
static size_t env_list(P *p, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < p->np; i++) if (p->cur[i].applies) out[n++] = i;
    return n;
}

static void h_u64(XXH3_state_t *h, uint64_t v)
{
    uint8_t b[8];
    dw_put_le64(b, v);
    XXH3_128bits_update(h, b, 8);
}

static void h_bytes(XXH3_state_t *h, const void *p, size_t n)
{
    h_u64(h, n);
    if (n) XXH3_128bits_update(h, p, n);
}

void dw_prove_env_key(P *p, uint8_t key[16])
{
    XXH3_state_t *h = XXH3_createState();
    memset(key, 0, 16);
    if (!h) return;
    XXH3_128bits_reset(h);
    const char *salt = p->o->cache_salt ? p->o->cache_salt : "";
    h_bytes(h, "dwc check environment 1", 23);
    h_bytes(h, salt, strlen(salt));
    const char *z3 = Z3_get_full_version();
    h_bytes(h, z3, strlen(z3));
    h_u64(h, p->guards != NULL);   /* DWC_CHECK_NO_PRUNE runs are kept apart */
    h_bytes(h, p->env_name, strlen(p->env_name));
    const dw_prove_input *in = &p->o->set;
    h_u64(h, in->prog->temporal.nleaves);
    size_t n = env_list(p, p->cand);
    h_u64(h, n);
    for (size_t k = 0; k < n; k++) {
        size_t i = p->cand[k];
        const dw_policy *pol = &in->ps->policies[i];
        /* the policy's text, its annotations included */
        uint32_t off = pol->loc.off, end = pol->loc.end;
        for (size_t a = 0; a < pol->nannots; a++) if (pol->annots[a].loc.off < off) off = pol->annots[a].loc.off;
        if (end > in->src->len || off > end) off = end = 0;
        h_bytes(h, in->src->text + off, end - off);
        h_u64(h, pol->effect);
        h_u64(h, i < in->prog->npolicies ? in->prog->policies[i].first_leaf : 0);
        h_u64(h, (p->o->has_error_finding && p->o->has_error_finding[i]) | (p->o->impossible_reported && p->o->impossible_reported[i]) << 1 |
                 (p->o->always_reported && p->o->always_reported[i]) << 2);
    }
    XXH128_hash_t d = XXH3_128bits_digest(h);
    XXH3_freeState(h);
    dw_put_le64(key, d.high64);
    dw_put_le64(key + 8, d.low64);
}

static char *entry_path(P *p, const uint8_t key[16])
{
    char *path = NULL;
    char hex[33];
    for (int k = 0; k < 16; k++) snprintf(hex + 2 * k, 3, "%02x", key[k]);
    if (asprintf(&path, "%s/%s.env", p->o->cache_dir, hex) < 0) return NULL;
    return path;
}

/* ------------------------------------------------------------------ writing */

static void w_u32(dw_buf *b, uint32_t v) { uint8_t x[4]; dw_put_le32(x, v); dw_buf_append(b, (const char *)x, 4); }

static void w_row(dw_buf *b, const bool *row, const size_t *list, size_t n)
{
    dw_buf_append(b, row ? "\1" : "\0", 1);
    if (!row) return;
    uint32_t c = 0;
    for (size_t k = 0; k < n; k++) c += row[list[k]];
    w_u32(b, c);
    for (size_t k = 0; k < n; k++) if (row[list[k]]) w_u32(b, (uint32_t)k);
}

static void w_cex(dw_buf *b, const cex *c)
{
    size_t rl = c->req ? strlen(c->req) : 0, el = c->ents ? strlen(c->ents) : 0;
    w_u32(b, (uint32_t)rl);
    dw_buf_append(b, c->req ? c->req : "", rl);
    w_u32(b, (uint32_t)el);
    dw_buf_append(b, c->ents ? c->ents : "", el);
    w_u32(b, c->leaves ? c->nleaves : 0);
    if (c->leaves) dw_buf_append(b, (const char *)c->leaves, c->nleaves);
}

void dw_prove_env_encode(P *p, const size_t *list, size_t n, dw_buf *b)
{
    w_u32(b, (uint32_t)n);
    for (size_t k = 0; k < n; k++) {
        const pstate *s = &p->ps[list[k]];
        unsigned f = (s->encodable ? F_ENCODABLE : 0) | (s->approx ? F_APPROX : 0) | (s->napplies ? F_APPLIES : 0) |
                     (s->may_match ? F_MAY_MATCH : 0) | (s->always_all ? F_ALWAYS : 0) | (s->err_found ? F_ERR : 0) |
                     (s->overridden_all ? F_OVERRIDDEN : 0) | (s->shadowed_all ? F_SHADOWED : 0) | (s->have_witness ? F_WITNESS : 0) |
                     (s->unknown ? F_UNKNOWN : 0);
        uint8_t fb[2] = { (uint8_t)f, (uint8_t)(f >> 8) };
        dw_buf_append(b, (const char *)fb, 2);
        w_row(b, s->covers, list, n);
        w_row(b, s->equiv, list, n);
        w_row(b, s->overlap, list, n);
        w_row(b, s->f_overlap, list, n);
        if (s->err_found) w_cex(b, &s->err_cex);
        if (s->have_witness) w_cex(b, &s->witness);
        if (s->unknown) {
            size_t wl = s->why ? strlen(s->why) : 0;
            w_u32(b, (uint32_t)wl);
            dw_buf_append(b, s->why ? s->why : "", wl);
        }
    }
}

void dw_prove_env_store(P *p, const uint8_t key[16])
{
    size_t n = env_list(p, p->cand);
    for (size_t k = 0; k < n; k++) if (p->ps[p->cand[k]].unknown) return;   /* not decided: not kept */
    dw_buf b = { 0 };
    dw_prove_env_encode(p, p->cand, n, &b);
    char *path = entry_path(p, key), *tmp = NULL;
    if (!b.p || b.len > MAX_ENTRY || !path || asprintf(&tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) { free(path); dw_buf_free(&b); return; }
    uint8_t head[12], tail[8];
    memcpy(head, magic, 8);
    dw_put_le32(head + 8, (uint32_t)b.len);
    dw_put_le64(tail, XXH3_64bits(b.p, b.len));
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(head, 1, 12, f) == 12 && fwrite(b.p, 1, b.len, f) == b.len && fwrite(tail, 1, 8, f) == 8;
    if (f && fclose(f)) ok = false;
    /* written whole, then renamed: a reader sees the old entry or the new one */
    if (!ok || rename(tmp, path)) unlink(tmp);
    free(tmp);
    free(path);
    dw_buf_free(&b);
}

/* ------------------------------------------------------------------ reading */

typedef struct rd { const uint8_t *p; size_t n; bool bad; } rd;

static uint32_t r_u32(rd *r)
{
    if (r->n < 4) { r->bad = true; return 0; }
    uint32_t v = dw_le32(r->p);
    r->p += 4;
    r->n -= 4;
    return v;
}

static const uint8_t *r_bytes(rd *r, size_t k)
{
    if (r->bad || r->n < k) { r->bad = true; return NULL; }
    const uint8_t *q = r->p;
    r->p += k;
    r->n -= k;
    return q;
}

static bool *r_row(P *p, rd *r, const size_t *list, size_t n)
{
    const uint8_t *present = r_bytes(r, 1);
    if (!present || !*present) { if (present && *present > 1) r->bad = true; return NULL; }
    uint32_t c = r_u32(r);
    if (r->bad || c > n) { r->bad = true; return NULL; }
    bool *row = calloc(p->np + 1, 1);
    if (!row) { r->bad = true; return NULL; }
    for (uint32_t k = 0; k < c; k++) {
        uint32_t at = r_u32(r);
        if (r->bad || at >= n) { r->bad = true; break; }
        row[list[at]] = true;
    }
    return row;
}

static char *r_str(rd *r)
{
    uint32_t l = r_u32(r);
    const uint8_t *q = r_bytes(r, l);
    if (!q || memchr(q, 0, l)) { r->bad = true; return NULL; }
    char *s = strndup((const char *)q, l);
    if (!s) r->bad = true;
    return s;
}

static void r_cex(rd *r, cex *c, uint32_t nleaves)
{
    c->req = r_str(r);
    c->ents = r_str(r);
    uint32_t nl = r_u32(r);
    const uint8_t *q = r_bytes(r, nl);
    if (r->bad || nl != nleaves) { r->bad = true; return; }
    c->nleaves = nl;
    c->leaves = calloc(nl + 1, 1);
    if (!c->leaves) { r->bad = true; return; }
    if (nl) memcpy(c->leaves, q, nl);
}

static bool read_entry(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    uint8_t head[12];
    bool ok = fread(head, 1, 12, f) == 12 && !memcmp(head, magic, 8);
    uint32_t n = ok ? dw_le32(head + 8) : 0;
    uint8_t *buf = ok && n <= MAX_ENTRY ? malloc((size_t)n + 9) : NULL;
    /* the payload, its checksum, and nothing after it */
    ok = buf && fread(buf, 1, (size_t)n + 8, f) == (size_t)n + 8 && fgetc(f) == EOF &&
         dw_le64(buf + n) == XXH3_64bits(buf, n);
    fclose(f);
    if (!ok) { free(buf); return false; }
    *data = buf;
    *len = n;
    return true;
}

bool dw_prove_env_decode(P *p, const size_t *list, size_t n, const uint8_t *data, size_t len)
{
    uint32_t nleaves = p->o->set.prog->temporal.nleaves;
    rd r = { data, len, false };
    if (r_u32(&r) != n) r.bad = true;
    for (size_t k = 0; k < n && !r.bad; k++) {
        if (list[k] >= p->np) { r.bad = true; break; }
        pstate *s = &p->ps[list[k]];
        const uint8_t *fb = r_bytes(&r, 2);
        if (!fb) break;
        unsigned f = fb[0] | (unsigned)fb[1] << 8;
        if (f >= 2 * F_UNKNOWN) { r.bad = true; break; }
        s->encodable = f & F_ENCODABLE;
        s->approx = f & F_APPROX;
        s->napplies = (f & F_APPLIES) ? 1 : 0;
        s->may_match = f & F_MAY_MATCH;
        s->always_all = f & F_ALWAYS;
        s->err_found = f & F_ERR;
        s->overridden_all = f & F_OVERRIDDEN;
        s->shadowed_all = f & F_SHADOWED;
        s->covers = r_row(p, &r, list, n);
        s->equiv = r_row(p, &r, list, n);
        s->overlap = r_row(p, &r, list, n);
        s->f_overlap = r_row(p, &r, list, n);
        if (s->err_found) r_cex(&r, &s->err_cex, nleaves);
        if (f & F_WITNESS) { r_cex(&r, &s->witness, nleaves); s->have_witness = !r.bad; }
        if (f & F_UNKNOWN) { s->unknown = true; s->why = r_str(&r); }
    }
    if (r.n) r.bad = true;
    return !r.bad;
}

bool dw_prove_env_load(P *p, const uint8_t key[16])
{
    char *path = entry_path(p, key);
    uint8_t *data = NULL;
    size_t len = 0;
    bool ok = path && read_entry(path, &data, &len);
    free(path);
    if (!ok) return false;
    size_t n = env_list(p, p->cand);
    ok = dw_prove_env_decode(p, p->cand, n, data, len);
    free(data);
    return ok;
}
