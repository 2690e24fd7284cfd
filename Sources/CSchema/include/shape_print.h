#ifndef SERIALIZERD_SHAPE_PRINT_H
#define SERIALIZERD_SHAPE_PRINT_H
// Drift learning's shortcut (DESIGN §10): a 64-bit fingerprint of an answer's shape — its
// structure, every member name, each value's type (integer and fraction apart) — read
// from the normalized output in one pass. An array element of the same shape as the one
// before it adds nothing, so lists of any length of one shape print alike. An answer
// whose fingerprint an endpoint already learned would teach it nothing new but its
// strings' formats, so only those strings are looked at: each is listed in document
// order with its slot, the same for a string at the same place of a repeated element.
#include <stddef.h>
#include <stdint.h>

// One string value: its content's bytes (between the quotes) and whether it has escapes.
typedef struct {
    uint32_t start;
    uint32_t length;
    uint32_t escaped;
    uint32_t slot;
} sp_string;

// Deepest nesting fingerprinted; deeper answers are walked in full.
#define SERIALIZERD_SHAPE_PRINT_DEPTH 64

// The fingerprint of the n bytes at `bytes` (compact JSON, one value), never 0; 0 when
// they are not compact JSON, nest deeper than the limit, or are 4 GiB or more. The strings
// go to `strings`, their number to *count; when there are more than `capacity`, 0 with
// *count past capacity (ask again with more room). With `strings` NULL none are listed
// (the fingerprint is the same).
uint64_t serializerd_shape_print(const uint8_t *bytes, size_t n, sp_string *strings, size_t capacity, size_t *count);

// A hash of n bytes (an endpoint's name), for finding it again without a String.
uint64_t serializerd_shape_bytes_hash(const uint8_t *bytes, size_t n);

#endif
