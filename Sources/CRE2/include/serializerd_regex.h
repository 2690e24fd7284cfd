#ifndef SERIALIZERD_REGEX_H
#define SERIALIZERD_REGEX_H
// RE2 (Debian's libre2) behind a C interface for the contract's `pattern` and
// `patternProperties` (DESIGN §10): matching is linear in the text whatever the pattern,
// which a proxy needs against a hostile schema or body.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct serializerd_regex serializerd_regex;

// Compiles a UTF-8 pattern; NULL when RE2 cannot take it (a back-reference, a look-around,
// bad syntax, or more than `max_memory` bytes of program), with the reason in `error`.
serializerd_regex *serializerd_regex_compile(const char *pattern, size_t length, size_t max_memory,
                                             char *error, size_t error_size);
// 1 when the pattern matches somewhere in the UTF-8 text (ECMA-262 `test`, unanchored), else 0.
int serializerd_regex_search(const serializerd_regex *regex, const char *text, size_t length);
void serializerd_regex_free(serializerd_regex *regex);

#ifdef __cplusplus
}
#endif
#endif
