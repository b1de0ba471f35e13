/* translate_cmd.h - `dwc translate-policy`, `translate-schema` and `--policy-format json`. */
#ifndef DW_TRANSLATE_CMD_H
#define DW_TRANSLATE_CMD_H
#include <stdbool.h>
#include "est.h"
#include "load.h"

extern const char dw_translate_policy_usage[];
int dw_cmd_translate_policy(int argc, char **argv);
/* `dwc translate-schema`: Cedar schema text <-> Cedar's JSON schema, resolved. */
extern const char dw_translate_schema_usage[];
int dw_cmd_translate_schema(int argc, char **argv);

/* What a session read from a JSON policy file holds on to (free after the session). */
typedef struct dw_policy_json {
    char *json_text;
    dw_source json_src, text_src;
    dw_est_text est;
    char name[512];
} dw_policy_json;

/* With fmt "json": read path as Cedar's JSON policy format and give the
 * session its Cedar text, ids and links (dw_session_load_policies then reads
 * them instead of the file).  Otherwise nothing.  0 ok; 1 unreadable; 2
 * rejected (diagnostics printed). */
int dw_policy_format_apply(dw_session *s, const char *fmt, const char *path, dw_policy_json *keep);
void dw_policy_json_free(dw_policy_json *keep);

#endif
