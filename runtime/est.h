/* est.h - Cedar's JSON policy format (the EST: docs.cedarpolicy.com, "JSON
 * policy format"), both ways, as Cedar 4.x writes and reads it:
 *   dw_est_write_set: a parsed policy set -> Cedar's policy-set JSON
 *     ({"templates":{…},"staticPolicies":{…},"templateLinks":[…]}), compact,
 *     members in Cedar's order (its serde_json keeps struct order; records and
 *     annotations are sorted maps), strings escaped as serde_json escapes them;
 *   dw_est_to_cedar: a JSON policy, template or policy set -> Cedar text as
 *     Cedar prints a policy it read from JSON (`translate-policy
 *     --direction json-to-cedar`, cedar-wasm's policyToText), with the ids the
 *     JSON gives and the set's links, so `--policy-format json` reads it
 *     through the same front end as text.
 * Dogwood's extensions (temporal bodies, macros, providers) have no JSON
 * form: writing one is refused with the policy's position. */
#ifndef DW_EST_H
#define DW_EST_H
#include "../lang/ast.h"
#include "../lang/json.h"
#include "../compiler/link.h"

/* Policy ids as Cedar's CLI names them (compiler/link.c: @id, else policyN)
 * must already be set on ps (dw_link_templates with cedar_ids).  0 ok; 1 an
 * error was reported in diags (a Dogwood form); -1 out of memory. */
int dw_est_write_set(dw_buf *out, const dw_policy_set *ps, dw_diags *diags);

/* What a JSON policy input holds, as Cedar text plus what text cannot say. */
typedef struct dw_est_text {
    dw_buf text;                        /* the policies and templates, in Cedar's printed form */
    dw_str *ids; size_t nids;           /* the id of each policy or template in text, in order */
    dw_template_link *links; size_t nlinks;   /* the set's templateLinks */
    dw_arena arena;                     /* owns ids and links */
} dw_est_text;

/* Convert src (JSON) to Cedar text: the policies sorted by id, then the
 * templates, separated by a blank line (Cedar's PolicySet::to_cedar, what
 * `translate-policy --direction json-to-cedar` prints).  for_parse: the text
 * is read back by dwc's parser (one line per policy, so a diagnostic's line
 * is the policy's index + annotations; `has` paths Cedar prints in a form no
 * parser reads are spelt out).  0 ok; 1 rejected (diagnostics in diags,
 * pointing into src); -1 out of memory. */
int dw_est_to_cedar(const dw_source *src, bool for_parse, dw_est_text *out, dw_diags *diags);
void dw_est_text_free(dw_est_text *t);

#endif
