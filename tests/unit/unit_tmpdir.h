/* unit_tmpdir.h - setup shared by the unit suites that run an engine on
 * files: a mkdtemp directory under $TMPDIR (or /tmp) holding a policy file,
 * and its removal.  Include after <cmocka.h>. */
#ifndef DW_UNIT_TMPDIR_H
#define DW_UNIT_TMPDIR_H
#include <stdio.h>
#include <stdlib.h>

/* root: "<tmp>/<name>.XXXXXX", created; policy: root/policy.dw holding text.  0 or -1. */
static inline int unit_tmpdir_with_policy(char *root, size_t rootcap, char *policy, size_t policycap,
                                          const char *name, const char *text)
{
    snprintf(root, rootcap, "%s/%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    if (!mkdtemp(root)) return -1;
    snprintf(policy, policycap, "%s/policy.dw", root);
    FILE *f = fopen(policy, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

static inline int unit_tmpdir_remove(const char *root)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
