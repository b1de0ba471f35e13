/* box_gate.c - see box_gate.h.
 *
 * Scope (box.md §1): every Box request is (Box::Agent::"self", action,
 * Box::Resource::"unused", context); the principal and the resource never
 * vary, so another one is a client error or forgery, and a rule scoped on
 * principal or resource would silently change meaning for it.
 *
 * NUL bytes: Cedar strings may hold U+0000, and `"~/p/.env\u0000"` does not
 * match `*\/.env`, so the policy permits it; but every string of a Box event
 * reaches a C consumer that stops at the first NUL: path -> open(2), host
 * and ip -> getaddrinfo/connect, program, program_path, command, arg1/2
 * and cwd -> execve/chdir, method and the HTTP path -> the request line,
 * server/tool/prompt/uri -> the MCP broker, and all of them -> the decision
 * log and the denial text.  The enforcement point would then act on `.env`.
 * No legitimate value has a NUL (paths, host names and argv are C strings by
 * construction), so every string in the event is checked, member names
 * included, rather than a list of fields that would go stale as actions
 * gain fields. */
#include "box_gate.h"
#include <stdio.h>
#include <string.h>
#include "../stdlib/bytes.h"
#include "../stdlib/hot.h"

#define is_uid(u, type, id) uid_is((u), type, sizeof type - 1, id, sizeof id - 1)
static bool uid_is(const dw_uid *u, const char *type, size_t tlen, const char *id, size_t idlen)
{
    return u->tlen == tlen && u->idlen == idlen && dw_mem_eq(u->type, type, tlen) && dw_mem_eq(u->id, id, idlen);
}

/* True if some string in j (member names included) holds a NUL; where,
 * unless NULL, then has the dotted member path to it (truncated).  The
 * gate walks without a path first, so a clean event costs no formatting. */
static bool find_nul(const dw_json *j, char *where, size_t cap, size_t used, int depth)
{
    if (!j || depth > DW_JSON_MAX_DEPTH + 1) return false;
    if (j->kind == DW_JSON_STRING) return memchr(j->u.str.s, 0, j->u.str.len) != NULL;
    if (j->kind == DW_JSON_ARRAY) {
        for (size_t k = 0; k < j->u.arr.n; k++)
            if (find_nul(j->u.arr.v[k], where, cap, used, depth + 1)) return true;
        return false;
    }
    if (j->kind != DW_JSON_OBJECT) return false;
    for (size_t k = 0; k < j->u.obj.n; k++) {
        const dw_json_member *m = &j->u.obj.v[k];
        size_t n = used;
        if (where) {
            int w = snprintf(where + used, cap - used, "%s%.*s", used ? "." : "", (int)strnlen(m->key.s, m->key.len), m->key.s);
            n = w < 0 || used + (size_t)w >= cap ? cap - 1 : used + (size_t)w;
        }
        if (memchr(m->key.s, 0, m->key.len) || find_nul(m->value, where, cap, n, depth + 1)) return true;
        if (where) where[used] = 0;
    }
    return false;
}

/* A uid as printable text: the type and id up to a NUL, at most 64 bytes each. */
static void uid_text(char *out, size_t cap, const dw_uid *u)
{
    snprintf(out, cap, "%.*s::\"%.*s\"", (int)strnlen(u->type, u->tlen > 64 ? 64 : u->tlen), u->type,
             (int)strnlen(u->id, u->idlen > 64 ? 64 : u->idlen), u->id);
}

DW_HOT int dw_box_gate(const dw_json *event, const char *text, size_t len, const dw_uid *principal, const dw_uid *resource,
                char *msg, size_t cap)
{
    char t[160];
    if (principal && !is_uid(principal, "Box::Agent", "self")) {
        uid_text(t, sizeof t, principal);
        snprintf(msg, cap, "Box takes requests only from the principal Box::Agent::\"self\" (box.md §1), not %s", t);
        return -1;
    }
    if (resource && !is_uid(resource, "Box::Resource", "unused")) {
        uid_text(t, sizeof t, resource);
        snprintf(msg, cap, "Box's requests have the resource Box::Resource::\"unused\" (box.md §1), not %s", t);
        return -1;
    }
    char where[128];
    where[0] = 0;                /* not `= ""`: that zeroes all 128 bytes on every event */
    /* the JSON reader refuses raw control bytes, so a NUL can only come from
     * a \u0000 escape: text without a backslash needs no walk */
    bool escapes = !text || memchr(text, '\\', len) != NULL;
    if (escapes && find_nul(event, NULL, 0, 0, 0) && find_nul(event, where, sizeof where, 0, 0)) {
        snprintf(msg, cap, "Box refuses a string with a NUL byte (%s): an enforcement point would read it cut short there",
                 where[0] ? where : "event");
        return -1;
    }
    return 0;
}

const char *dw_box_profile_refusal(bool box, const dw_program *p)
{
    if (box && !p->box_profile)
        return "not checked against the Box profile (box.md §11): compile it with `dwc compile --schema box`";
    if (box && p->provider.ncalls)     /* the profile refuses them (box-providers); a flag is no signature */
        return "information providers are not enabled in this build: the set calls a provider (box.md §11, dogwood.md §13.6)";
    return NULL;
}
