/* macros.h - macro libraries, macro expansion and canonical leaf text
 * (dogwood.md §10, §14.5, §20 D8).
 *
 * Pipeline position (§1.3): parse -> dw_expand_macros -> well-formedness
 * (§9.1-§9.5) -> lowering.  After a successful expansion the policies contain
 * no macro call (DW_E_CALL with one segment other than the extension
 * constructors, DW_T_CALL), no `?p` (DW_E_SLOT other than the template
 * slots, DW_T_PARAM, `within ?w`, `?`-binder slots), no `$t` (DW_E_BINDER,
 * DW_T_BINDER, `$`-binder slots) and no refinement (DW_T_REFINE).
 *
 * Fresh binders `$t` become ordinary variables (DW_T_VAR, binder slots with
 * sigil 0) named `t$<offset>`, offset = byte offset of the call's macro name
 * in the policy source (§10.4).  `$` cannot occur in user identifiers, so a
 * name containing `$` is always a fresh binder; the stable identity below
 * relies on that. */
#ifndef DW_MACROS_H
#define DW_MACROS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "../lang/ast.h"
#include "../lang/tast.h"

/* The standard library (stdlib/macros.dw), embedded in the binary by the
 * build as a C string (not necessarily NUL terminated: use the length). */
extern const char dw_stdlib_macros_text[];
extern const size_t dw_stdlib_macros_len;

/* Expansion limits (§19): a policy may not grow beyond this many syntax nodes
 * through macro expansion (a chain of `?x + ?x` macros doubles each level). */
#define DW_MACRO_MAX_NODES (1u << 20)

/* Merge `library` into `ps` and expand every macro call of every policy of
 * `ps`, in place.
 *  - `ps` and `library` must have been parsed without errors (a NULL body or
 *    leaf is skipped / reported, never dereferenced).
 *  - `library` may be NULL (no library).  Each library macro whose name `ps`
 *    does not define is deep-copied into ps's arena and appended to
 *    ps->macros, after ps's own macros (its locations still refer to the
 *    library's source); ps's own definition wins silently.  The library's
 *    definitions are checked on their own (diagnostics name the library's
 *    source); its policies are ignored.
 *  - Every definition is checked (parameter kinds, undeclared `?p`,
 *    macro-in-macro); every call is checked for arity, kind and argument
 *    shape (§10.5).  Diagnostics point at the call site, with a note at the
 *    definition where that helps.
 *  - Nodes that come from a macro body carry the location of the call site;
 *    nodes that come from arguments keep their own.
 * Returns 0 on success, -1 if an error was reported (diags->nerrors grows) or
 * on OOM (reported as an error too).  On failure the policies may be
 * partially expanded and must not be used further. */
int dw_expand_macros(dw_policy_set *ps, const dw_policy_set *library, dw_diags *diags);

/* Parse `dw_stdlib_macros_text` (or any library text) as a library.  Returns
 * NULL on OOM; parse errors go to diags.  Free with dw_policy_set_free; the
 * dw_source must outlive the set. */
dw_policy_set *dw_macro_library_parse(const dw_source *src, dw_diags *diags);

/* True when no macro construct is left anywhere in the policies of ps
 * (the post-condition of dw_expand_macros; asserted there). */
bool dw_macros_fully_expanded(const dw_policy_set *ps);

/* ---- canonical text and stable identity of temporal leaves ---- */

/* Print the canonical surface text of an expanded temporal body (the text
 * between the braces of `temporal { … }`): re-parseable Dogwood, one space
 * around binary operators, minimal parentheses, windows in the largest exact
 * unit (`3600s` -> `1h`), strings with Cedar escapes.
 * stable == false: fresh binders keep their printed `t$<offset>` names (the
 * reference's canonical text, §10.4).
 * stable == true: fresh binders are renamed `t$0`, `t$1`, … by order of first
 * appearance within the leaf (§20 D8), so the text does not depend on where
 * the leaf sits in the file. */
void dw_temporal_canon_print(FILE *out, const dw_temporal *t, bool stable);
/* The same into a malloc'd NUL-terminated string (NULL on OOM). */
char *dw_temporal_canon_text(const dw_temporal *t, bool stable, size_t *len);

/* Identity of a leaf's temporal state across reloads (§20 D8): a 64-bit hash
 * (XXH3) of its stable canonical text.  Same leaf text at two offsets -> same
 * identity; different leaves -> different identities (up to hash collisions;
 * hosts that need certainty compare the stable texts). */
uint64_t dw_temporal_leaf_identity(const dw_temporal *leaf);

/* Golden-test helper: for every policy i and every temporal leaf j of it (in
 * source order: clauses in order, left to right), print
 *   leaf policy<i>.<j>: <canonical text>
 *     identity <16 hex digits>: <stable canonical text>                       */
void dw_macros_print_leaves(FILE *out, const dw_policy_set *ps);

#endif
