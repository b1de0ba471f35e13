/* link.h - template links (Cedar's `--template-linked` file): each link
 * instantiates a template's ?principal / ?resource slots with entity uids and
 * becomes a static policy named by its link id.  Unlinked templates take no
 * part in decisions (Cedar ignores them); they stay in ps->templates for the
 * validator. */
#ifndef DW_LINK_H
#define DW_LINK_H
#include <stdbool.h>
#include "../lang/ast.h"

typedef struct dw_template_link {
    dw_str template_id, link_id;
    bool has_principal, has_resource;      /* which args were given */
    dw_euid_lit principal, resource;
    dw_str principal_text, resource_text;  /* the values as written (`dwc link` writes them back) */
    dw_loc loc;                            /* of the link in links_src */
} dw_template_link;

/* Rewrite ps->policies to the static policies followed by one policy per
 * link, and move the templates to ps->templates.  Ids follow Cedar's CLI:
 * a template is named by its @id annotation, a static policy too if
 * cedar_ids, else either is `policy<i>` by its position among all of them;
 * a link by its link id.
 * Nothing is changed (0) when there are neither templates, links nor
 * cedar_ids.  1 with diagnostics (an unknown template, a missing or extra
 * slot value, a duplicate id), -1 out of memory. */
int dw_link_templates(dw_policy_set *ps, const dw_template_link *links, size_t nlinks, const dw_source *links_src,
                      bool cedar_ids, dw_diags *diags);

#endif
