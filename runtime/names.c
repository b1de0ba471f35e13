/* names.c - interned rule names (runtime/names.h). */
#include "names.h"
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static uint32_t slot_of(const dw_names *t, const char *s, size_t len)
{
    uint32_t j = (uint32_t)XXH3_64bits(s, len) & (t->nslots - 1);
    while (t->slot[j] && !(strlen(t->slot[j]) == len && !memcmp(t->slot[j], s, len))) j = (j + 1) & (t->nslots - 1);
    return j;
}

const char *dw_names_intern(dw_names *t, const char *s, size_t len)
{
    if (t->nslots && t->slot[slot_of(t, s, len)]) return t->slot[slot_of(t, s, len)];
    if (2 * (t->n + 1) > t->nslots) {          /* grow: load <= 1/2 */
        dw_names g = { calloc(t->nslots ? 2 * t->nslots : 64, sizeof *g.slot), t->nslots ? 2 * t->nslots : 64, t->n };
        if (!g.slot) return NULL;
        for (uint32_t i = 0; i < t->nslots; i++)
            if (t->slot[i]) g.slot[slot_of(&g, t->slot[i], strlen(t->slot[i]))] = t->slot[i];
        free(t->slot);
        *t = g;
    }
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, s, len);
    c[len] = 0;
    t->slot[slot_of(t, s, len)] = c;
    t->n++;
    return c;
}

void dw_names_free(dw_names *t)
{
    for (uint32_t i = 0; i < t->nslots; i++) free(t->slot[i]);
    free(t->slot);
    *t = (dw_names){ 0 };
}
