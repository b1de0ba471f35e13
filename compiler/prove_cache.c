/* prove_cache.c - what the proofs established, as bytes: one environment's
 * result (how a parallel environment's process sends it, prove.c), and the
 * parts of it kept between `dwc check` runs by --cache (prove_cache.h).
 *
 * An environment's result: u32 number of rules that apply in the
 * environment, then per rule (in set order): u16 flags, four rows (covers,
 * equiv, overlap, f_overlap: u8 present, u32 count, u32 positions among the
 * environment's rules), and with the flags the forbid-may-error request and
 * the witness (u32 length + request, u32 length + entities, u32 count +
 * leaf values).  Reading checks every length against what is left.
 *
 * The cache: DIR/<32 hex digits>.rules per environment (the digits: a hash of
 * the environment's name and whether guards are computed):
 *   "DWCRULE1", u32 length + the salt (dwc release, ISA, schema digest,
 *   Z3's version), u32 number of parts, per part its 16-byte key, u32
 *   length and value, then u64 XXH3-64 of everything before it
 * (little-endian).  A part is what one step established about one rule
 * (prove_cache.h); its key hashes everything the step read. */
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
static const char magic[8] = "DWCRULE1";
#define MAX_FILE (1u << 30)

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


/* ------------------------------------------------------------------ --cache: parts per rule */

typedef struct part_ref { uint8_t key[16]; uint32_t off, len; bool used; } part_ref;

struct dw_prove_cache {
    XXH3_state_t *h;
    uint8_t (*content)[16];       /* per rule of the set: its text, IR, effect, leaves, lint flags */
    dw_buf salt;
    size_t *js;                   /* scratch: the rules a pending cover part's rows are over */
    /* the current environment */
    bool on;
    char *path;
    uint8_t *old;                 /* the file read back (NULL: none) */
    part_ref *oi;                 /* its parts, by key */
    size_t noi;
    dw_buf out;                   /* the parts of this run, as written */
    size_t nout;
    uint8_t digest[2][16];        /* per effect: the environment's rules of it (wide rows) */
    bool digest_done[2];
    size_t hits, misses;
    /* the part being proved (between its lookup and dw_prove_cache_done) */
    bool pend;
    int part;
    size_t i, njs, unknown0;
    uint8_t key[16];
};

enum { PART_OVER = 1, PART_SHADOW = 2 };   /* (DW_PROVE_PART_ERR, _MATCH: prove_cache.h) */

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

static void h_digest(XXH3_state_t *h, uint8_t out[16])
{
    XXH128_hash_t d = XXH3_128bits_digest(h);
    dw_put_le64(out, d.high64);
    dw_put_le64(out + 8, d.low64);
}

/* A rule's content: what its encoding and its lint flags are made of -- its
 * text and its expanded form (a macro's body changes it), both without the
 * annotations (no proof reads them: the findings name rules when they are
 * reported), effect, temporal leaves and lint flags. */
static void rule_content(P *p, size_t i, uint8_t out[16])
{
    XXH3_state_t *h = p->cache->h;
    const dw_prove_input *in = &p->o->set;
    const dw_policy *pol = &in->ps->policies[i];
    XXH3_128bits_reset(h);
    h_bytes(h, "dwc check rule 1", 16);
    uint32_t off = pol->effect_loc.off, end = pol->loc.end;
    if (off < pol->loc.off || off > end) off = pol->loc.off;
    if (end > in->src->len || off > end) off = end = 0;
    h_bytes(h, in->src->text + off, end - off);
    char *ir = NULL;
    size_t nir = 0;
    dw_policy bare = *pol;
    bare.nannots = 0;
    FILE *f = open_memstream(&ir, &nir);
    if (f) { dw_policy_print(f, &bare); fclose(f); }
    h_bytes(h, ir ? ir : "?", ir ? nir : 1);
    free(ir);
    h_u64(h, pol->effect);
    const dw_policy_code *pc = i < in->prog->npolicies ? &in->prog->policies[i] : NULL;
    h_u64(h, pc ? pc->nleaves : 0);
    h_u64(h, pc && pc->nleaves ? pc->first_leaf : 0);
    h_u64(h, (p->o->has_error_finding && p->o->has_error_finding[i]) | (p->o->impossible_reported && p->o->impossible_reported[i]) << 1 |
             (p->o->always_reported && p->o->always_reported[i]) << 2);
    h_digest(h, out);
}

int dw_prove_cache_init(P *p)
{
    if (!p->o->cache_dir || p->o->old.ps || p->o->asserts.ps) return 0;
    struct dw_prove_cache *c = calloc(1, sizeof *c);
    if (!c) return -1;
    p->cache = c;
    c->h = XXH3_createState();
    c->content = calloc(p->np + 1, sizeof *c->content);
    c->js = calloc(p->np + 1, sizeof *c->js);
    if (!c->h || !c->content || !c->js) return -1;
    for (size_t i = 0; i < p->np; i++) rule_content(p, i, c->content[i]);
    const char *z3 = Z3_get_full_version();
    dw_buf_printf(&c->salt, "%s, Z3 %s, guards %d", p->o->cache_salt ? p->o->cache_salt : "", z3, p->guards != NULL);
    return c->salt.p ? 0 : -1;
}

static void env_reset(struct dw_prove_cache *c)
{
    free(c->path);
    free(c->old);
    free(c->oi);
    dw_buf_free(&c->out);
    c->path = NULL;
    c->old = NULL;
    c->oi = NULL;
    c->noi = c->nout = c->hits = c->misses = 0;
    c->digest_done[0] = c->digest_done[1] = false;
    c->on = c->pend = false;
}

void dw_prove_cache_free(P *p)
{
    struct dw_prove_cache *c = p->cache;
    if (!c) return;
    env_reset(c);
    if (c->h) XXH3_freeState(c->h);
    free(c->content);
    free(c->js);
    dw_buf_free(&c->salt);
    free(c);
    p->cache = NULL;
}

static int ref_cmp(const void *a, const void *b) { return memcmp(((const part_ref *)a)->key, ((const part_ref *)b)->key, 16); }

/* "ignored loudly": a file that is not what this run wrote is reported and proved again */
static void rejected(const char *path, const char *why)
{
    fprintf(stderr, "dwc check: warning: --cache: %s %s: ignored (its environment's proofs are done again, and the file rewritten)\n", path, why);
}

/* The file's parts into c->oi (sorted by key): false (and nothing kept) when
 * it is not whole, not of this format, or of another salt. */
static bool read_parts(struct dw_prove_cache *c)
{
    FILE *f = fopen(c->path, "rb");
    if (!f) {
        if (errno != ENOENT) rejected(c->path, "cannot be read");
        return false;
    }
    struct stat st;
    uint8_t *buf = NULL;
    size_t n = 0;
    if (fstat(fileno(f), &st) == 0 && st.st_size >= 28 && (uint64_t)st.st_size <= MAX_FILE) {
        n = (size_t)st.st_size;
        buf = malloc(n);
        if (buf && fread(buf, 1, n, f) != n) { free(buf); buf = NULL; }
    }
    fclose(f);
    const char *why = NULL;
    if (!buf) why = "is damaged (short, or of an impossible size)";
    else if (memcmp(buf, magic, 8)) why = "is not a cache file of this dwc (another format)";
    else if (dw_le64(buf + n - 8) != XXH3_64bits(buf, n - 8)) why = "is damaged (its checksum does not match)";
    rd r = { buf ? buf + 8 : NULL, buf ? n - 16 : 0, false };
    uint32_t ls = why ? 0 : r_u32(&r);
    const uint8_t *salt = why ? NULL : r_bytes(&r, ls);
    if (!why && (!salt || ls != c->salt.len || memcmp(salt, c->salt.p, ls)))
        why = "was written by another dwc release, Z3 or schema";
    uint32_t np = why ? 0 : r_u32(&r);
    part_ref *v = why || r.bad || np > r.n / 20 ? NULL : calloc((size_t)np + 1, sizeof *v);
    if (!why && !v) why = "is damaged (its part count is impossible)";
    for (uint32_t k = 0; !why && k < np; k++) {
        const uint8_t *key = r_bytes(&r, 16);
        uint32_t len = r_u32(&r);
        const uint8_t *val = r_bytes(&r, len);
        if (r.bad || !key || !val) { why = "is damaged (a part runs past its end)"; break; }
        memcpy(v[k].key, key, 16);
        v[k].off = (uint32_t)(val - buf);
        v[k].len = len;
    }
    if (!why && r.n) why = "is damaged (bytes after its last part)";
    if (why) {
        rejected(c->path, why);
        free(buf);
        free(v);
        return false;
    }
    qsort(v, np, sizeof *v, ref_cmp);
    c->old = buf;
    c->oi = v;
    c->noi = np;
    return true;
}

void dw_prove_cache_env_begin(P *p)
{
    struct dw_prove_cache *c = p->cache;
    if (!c) return;
    env_reset(c);
    XXH3_128bits_reset(c->h);
    h_bytes(c->h, "dwc check environment file 1", 28);
    h_bytes(c->h, p->env_name, strlen(p->env_name));
    h_u64(c->h, p->guards != NULL);
    uint8_t k[16];
    h_digest(c->h, k);
    char hex[33];
    for (int b = 0; b < 16; b++) snprintf(hex + 2 * b, 3, "%02x", k[b]);
    if (asprintf(&c->path, "%s/%s.rules", p->o->cache_dir, hex) < 0) { c->path = NULL; return; }
    c->on = true;
    read_parts(c);
}

/* ---- one part: its key, its value */

static void key_begin(P *p, int part, size_t i)
{
    XXH3_state_t *h = p->cache->h;
    XXH3_128bits_reset(h);
    h_u64(h, (uint64_t)part);
    XXH3_128bits_update(h, p->cache->content[i], 16);
}

static const part_ref *lookup(struct dw_prove_cache *c, const uint8_t key[16])
{
    size_t lo = 0, hi = c->noi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = memcmp(c->oi[mid].key, key, 16);
        if (!d) return &c->oi[mid];
        if (d < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static void put_part(struct dw_prove_cache *c, const uint8_t key[16], const void *val, size_t len)
{
    uint8_t l[4];
    dw_put_le32(l, (uint32_t)len);
    dw_buf_append(&c->out, (const char *)key, 16);
    dw_buf_append(&c->out, (const char *)l, 4);
    dw_buf_append(&c->out, val, len);
    c->nout++;
}

/* The environment's rules of effect e (position lists of wide rows), hashed */
static const uint8_t *effect_digest(P *p, int e)
{
    struct dw_prove_cache *c = p->cache;
    if (!c->digest_done[e]) {
        XXH3_128bits_reset(c->h);
        h_u64(c->h, p->nenv[e]);
        for (size_t k = 0; k < p->nenv[e]; k++) XXH3_128bits_update(c->h, c->content[p->env_rules[e][k]], 16);
        h_digest(c->h, c->digest[e]);
        c->digest_done[e] = true;
    }
    return c->digest[e];
}

/* a request read back: the leaf values of rule i (its own, by position) when
 * the program's leaves were renumbered since */
static void r_cex_of(P *p, rd *r, cex *c, size_t i)
{
    const dw_program *prog = p->o->set.prog;
    c->req = r_str(r);
    c->ents = r_str(r);
    uint32_t nl = r_u32(r);
    const uint8_t *q = r_bytes(r, nl);
    if (r->bad) return;
    uint32_t want = prog->temporal.nleaves;
    const dw_policy_code *pc = i < prog->npolicies ? &prog->policies[i] : NULL;
    c->nleaves = want;
    c->leaves = calloc(want + 1, 1);
    if (!c->leaves) { r->bad = true; return; }
    if (nl == want) { if (nl) memcpy(c->leaves, q, nl); }
    else if (pc && pc->nleaves) {
        if ((uint64_t)pc->first_leaf + pc->nleaves > nl || (uint64_t)pc->first_leaf + pc->nleaves > want) { r->bad = true; return; }
        memcpy(c->leaves + pc->first_leaf, q + pc->first_leaf, pc->nleaves);
    }
}

enum { V_ALL = 1, V_SHADOW = 2, V_MATCHED = 4, V_WIDE = 8, V_ROWS = 16,
       V_ERR = 1, V_MAY = 1, V_ALWAYS = 2, V_WITNESS = 4 };

/* Apply a cover part's value: false (nothing changed) when it does not read
 * back, or its rows are over the environment's rules and those changed. */
static bool apply_cover(P *p, size_t i, bool same, const uint8_t *val, size_t len, const size_t *cand, size_t nb, bool *all)
{
    rd r = { val, len, false };
    const uint8_t *fb = r_bytes(&r, 1);
    if (!fb || *fb >= 32) return false;
    int e = (same ? p->o->set.ps->policies[i].effect : DW_FORBID) == DW_PERMIT ? 0 : 1;
    const size_t *js = cand;
    size_t nj = nb;
    if (*fb & V_WIDE) {
        const uint8_t *d = r_bytes(&r, 16);
        if (!d || memcmp(d, effect_digest(p, e), 16)) return false;
        js = p->env_rules[e];
        nj = p->nenv[e];
    }
    bool *row[3] = { NULL, NULL, NULL };
    int nrow = same ? 3 : 1;
    for (int k = 0; k < nrow && (*fb & V_ROWS); k++) {
        row[k] = r_row(p, &r, js, nj);
        if (!row[k]) r.bad = true;
    }
    if (r.bad || r.n) { for (int k = 0; k < 3; k++) free(row[k]); return false; }
    pstate *s = &p->ps[i];
    *all = *fb & V_ALL;
    if (same && (*fb & V_SHADOW)) s->shadow_here = true;
    if (*fb & V_MATCHED) s->matched_here = true;
    if (*fb & V_ROWS) {
        if (same) {
            free(s->overlap); free(s->covers); free(s->equiv);
            s->overlap = row[0]; s->covers = row[1]; s->equiv = row[2];
        } else {
            free(s->f_overlap);
            s->f_overlap = row[0];
        }
    }
    return true;
}

bool dw_prove_cache_cover(P *p, size_t i, bool same, size_t ncand, const size_t *cand, size_t nb, bool *all)
{
    struct dw_prove_cache *c = p->cache;
    if (!c || !c->on) return false;
    c->pend = false;
    int part = same ? PART_SHADOW : PART_OVER;
    key_begin(p, part, i);
    h_u64(c->h, ncand);
    h_u64(c->h, nb);
    for (size_t k = 0; k < nb; k++) {
        XXH3_128bits_update(c->h, c->content[cand[k]], 16);
        h_u64(c->h, same && p->ps[cand[k]].shadow_here);
    }
    h_digest(c->h, c->key);
    const part_ref *ref = lookup(c, c->key);
    if (ref && apply_cover(p, i, same, c->old + ref->off, ref->len, cand, nb, all)) {
        put_part(c, c->key, c->old + ref->off, ref->len);
        c->hits++;
        return true;
    }
    c->misses++;
    c->pend = true;
    c->part = part;
    c->i = i;
    memcpy(c->js, cand, nb * sizeof *cand);
    c->njs = nb;
    c->unknown0 = dw_smt_get_stats(p->x)->unknown;
    return false;
}

/* the value of the pending part, from p->ps (false: it is not one to keep) */
static bool encode_part(P *p, const bool *all, dw_buf *b)
{
    struct dw_prove_cache *c = p->cache;
    const pstate *s = &p->ps[c->i];
    if (c->part == DW_PROVE_PART_ERR) {
        uint8_t f = s->err_found ? V_ERR : 0;
        dw_buf_append(b, (const char *)&f, 1);
        if (s->err_found) w_cex(b, &s->err_cex);
        return true;
    }
    if (c->part == DW_PROVE_PART_MATCH) {
        uint8_t f = (s->may_match ? V_MAY : 0) | (s->always_all ? V_ALWAYS : 0) | (s->have_witness ? V_WITNESS : 0);
        dw_buf_append(b, (const char *)&f, 1);
        if (s->have_witness) w_cex(b, &s->witness);
        return true;
    }
    bool same = c->part == PART_SHADOW;
    bool rows = same ? s->overlap && s->covers && s->equiv : s->f_overlap != NULL;
    if (same && !rows && (s->overlap || s->covers || s->equiv)) return false;
    /* a rule that matches nothing here had its rows made over every rule of the effect */
    bool wide = rows && s->own_r != 1;
    int e = (same ? p->o->set.ps->policies[c->i].effect : DW_FORBID) == DW_PERMIT ? 0 : 1;
    uint8_t f = (*all ? V_ALL : 0) | (same && s->shadow_here ? V_SHADOW : 0) | (s->matched_here ? V_MATCHED : 0) |
                (wide ? V_WIDE : 0) | (rows ? V_ROWS : 0);
    dw_buf_append(b, (const char *)&f, 1);
    if (wide) dw_buf_append(b, (const char *)effect_digest(p, e), 16);
    const size_t *js = wide ? p->env_rules[e] : c->js;
    size_t nj = wide ? p->nenv[e] : c->njs;
    if (rows && same) { w_row(b, s->overlap, js, nj); w_row(b, s->covers, js, nj); w_row(b, s->equiv, js, nj); }
    else if (rows) w_row(b, s->f_overlap, js, nj);
    return true;
}

void dw_prove_cache_done(P *p, size_t i, const bool *all)
{
    struct dw_prove_cache *c = p->cache;
    if (!c || !c->pend || c->i != i) return;
    c->pend = false;
    /* not decided (a query answered unknown, here or earlier for this rule): not kept */
    if (dw_smt_get_stats(p->x)->unknown != c->unknown0 || p->ps[i].unknown) return;
    dw_buf b = { 0 };
    bool f = false;
    if (encode_part(p, all ? all : &f, &b) && b.p) put_part(c, c->key, b.p, b.len);
    dw_buf_free(&b);
}

bool dw_prove_cache_part(P *p, size_t i, int part)
{
    struct dw_prove_cache *c = p->cache;
    if (!c || !c->on) return false;
    c->pend = false;
    if (!p->cur[i].applies || !p->cur[i].sat) return false;
    pstate *s = &p->ps[i];
    key_begin(p, part, i);
    if (part == DW_PROVE_PART_MATCH) {
        h_u64(c->h, (uint64_t)s->matched_here | (uint64_t)s->overridden_all << 1 | (uint64_t)s->shadowed_all << 2 |
                    (uint64_t)s->always_all << 3 | (uint64_t)s->may_match << 4 | (uint64_t)s->have_witness << 5);
        h_u64(c->h, s->napplies);
    } else h_u64(c->h, s->err_found);
    h_digest(c->h, c->key);
    const part_ref *ref = lookup(c, c->key);
    if (ref) {
        rd r = { c->old + ref->off, ref->len, false };
        const uint8_t *fb = r_bytes(&r, 1);
        cex x = { 0 };
        bool has = fb && (part == DW_PROVE_PART_MATCH ? (*fb & V_WITNESS) : (*fb & V_ERR));
        if (fb && *fb < 8 && has) r_cex_of(p, &r, &x, i);
        if (fb && *fb < 8 && !r.bad && !r.n) {
            if (part == DW_PROVE_PART_MATCH) {
                s->napplies++;
                s->matched_here = false;
                s->may_match = *fb & V_MAY;
                s->always_all = *fb & V_ALWAYS;
                if (has) { dw_prove_cex_free(&s->witness); s->witness = x; s->have_witness = true; }
            } else {
                s->err_found = *fb & V_ERR;
                if (has) { dw_prove_cex_free(&s->err_cex); s->err_cex = x; }
            }
            put_part(c, c->key, c->old + ref->off, ref->len);
            c->hits++;
            return true;
        }
        dw_prove_cex_free(&x);
    }
    c->misses++;
    c->pend = true;
    c->part = part;
    c->i = i;
    c->njs = 0;
    c->unknown0 = dw_smt_get_stats(p->x)->unknown;
    return false;
}

/* Write the environment's parts (this run's, then those of the file this run
 * did not read, while there are at most twice as many plus 1,024: the
 * directory stays within a few times the set's size), through a temporary
 * file and a rename: a reader sees the old file or the new one. */
void dw_prove_cache_env_end(P *p)
{
    struct dw_prove_cache *c = p->cache;
    if (!c || !c->on) return;
    c->on = c->pend = false;
    if (c->old && !c->misses) p->st->envs_cached++;   /* read back, nothing proved */
    size_t used = c->nout;
    for (size_t k = 0; k < c->noi; k++) c->oi[k].used = false;
    /* (the parts read back are in out already; mark them by key) */
    const uint8_t *q = (const uint8_t *)c->out.p;
    for (size_t k = 0, at = 0; k < used && q; k++) {
        part_ref *r = (part_ref *)lookup(c, q + at);
        if (r) r->used = true;
        at += 20 + dw_le32(q + at + 16);
    }
    bool unchanged = !c->misses && used == c->noi && c->old;
    for (size_t k = 0; k < c->noi && c->nout < 2 * used + 1024; k++)
        if (!c->oi[k].used) put_part(c, c->oi[k].key, c->old + c->oi[k].off, c->oi[k].len);
    if (unchanged) { env_reset(c); return; }
    dw_buf f = { 0 };
    uint8_t x[8];
    dw_buf_append(&f, magic, 8);
    dw_put_le32(x, (uint32_t)c->salt.len);
    dw_buf_append(&f, (const char *)x, 4);
    dw_buf_append(&f, c->salt.p, c->salt.len);
    dw_put_le32(x, (uint32_t)c->nout);
    dw_buf_append(&f, (const char *)x, 4);
    if (c->out.len) dw_buf_append(&f, c->out.p, c->out.len);
    char *tmp = NULL;
    if (f.p && f.len + 8 <= MAX_FILE && asprintf(&tmp, "%s.%ld.tmp", c->path, (long)getpid()) >= 0) {
        dw_put_le64(x, XXH3_64bits(f.p, f.len));
        dw_buf_append(&f, (const char *)x, 8);
        FILE *o = fopen(tmp, "wb");
        bool ok = f.p && o && fwrite(f.p, 1, f.len, o) == f.len;
        if (o && fclose(o)) ok = false;
        if (!ok || rename(tmp, c->path)) unlink(tmp);   /* not kept: the next run proves it again */
        free(tmp);
    }
    dw_buf_free(&f);
    env_reset(c);
}
