/* regex.h - POSIX extended regular expressions for the built-in providers
 * (dogwood.md §13.5: Strings::Matches, Regex::Analyze), matched by a Pike VM
 * (Thompson's NFA simulation): time is O(text length x pattern size) for any
 * pattern, so no input an agent controls can make a match explode the way a
 * backtracking matcher does on (a*)*b.  The pattern size is bounded
 * (DW_REGEX_MAX_INSNS, after counted repetitions are expanded) and every
 * search has a step budget.
 *
 * Syntax (ERE): literals; `.`; bracket expressions `[a-z]`, `[^...]`, with
 * the classes `[:alpha:]` `[:digit:]` `[:alnum:]` `[:upper:]` `[:lower:]`
 * `[:space:]` `[:blank:]` `[:punct:]` `[:xdigit:]` `[:cntrl:]` `[:print:]`
 * `[:graph:]` (ASCII); `^` and `$` (start and end of the text); groups `( )`;
 * `|`; `*` `+` `?` `{m}` `{m,}` `{m,n}` (m, n <= 255); `\` before a special
 * character makes it literal, and `\d \w \s \D \W \S` (a common extension)
 * stand for the digit, word and space classes.  The text is UTF-8: `.` and
 * classes match one Unicode scalar value (an invalid byte counts as one).
 * A match is POSIX's leftmost-longest.  Unanchored: a match may start
 * anywhere unless the pattern says `^`. */
#ifndef DW_REGEX_H
#define DW_REGEX_H
#include <stddef.h>
#include <stdint.h>

#define DW_REGEX_MAX_INSNS 4096

typedef struct dw_regex dw_regex;

/* NULL with a message ("... at offset N") in err on a syntax error, a pattern
 * too large, or out of memory. */
dw_regex *dw_regex_compile(const char *pat, size_t len, char *err, size_t errcap);
void dw_regex_free(dw_regex *re);

/* Search text[from, len) for the leftmost-longest match: 1 with its byte span
 * [*ms, *me), 0 none, -1 out of memory or *budget (steps, decremented)
 * exhausted. */
int dw_regex_search(const dw_regex *re, const char *text, size_t len, size_t from, size_t *ms, size_t *me,
                    uint64_t *budget);

#endif
