#ifndef SERIALIZERD_JSON_FAST_H
#define SERIALIZERD_JSON_FAST_H
// The JSON normalizer's fast path (json_fast.c): x86-64 kernels for CPUs with AVX2, BMI1/2
// and PCLMUL, and AVX-512 VBMI2 for its first stage, chosen at run time; elsewhere
// serializerd_json_fast_available says 0 and the Swift normalizer does all the work.
#include <stdint.h>
#include <stddef.h>
#include "schema_walk.h"

// How many documents this thread has had its numbers classified in (output.numbers): the
// fast path with `numbers` counts itself, the Swift classifiers note theirs. A test reads
// it before and after a serialization to see that `keep` never looks at numbers.
size_t serializerd_number_checks(void);
void serializerd_note_number_check(void);

// Which kernel this CPU and OS run: 0 none, 1 AVX2, 2 AVX-512 as well.
int serializerd_json_fast_available(void);

// Normalizes the n bytes at `in` into `out` (room for n + 64 bytes) with `kernel` (one
// this CPU runs). Returns the output length, or -1 when the input is not valid JSON (or
// too large for 32-bit positions): the caller's own path then decides. With `in_place`,
// 64 bytes after the input are readable too, and the output may be the input itself:
// then *output_is_input is set and nothing is written to `out`. With `numbers`,
// numbers[1] counts the numbers no double holds exactly (output.numbers), numbers[2]
// those whose verdict is left to printing; NULL skips deciding them.
ptrdiff_t serializerd_json_fast_normalize(const uint8_t *in, size_t n, uint8_t *out,
                                          int allow_fragments, size_t max_depth, int kernel,
                                          int in_place, int *output_is_input, size_t numbers[3]);

// The same, checking the output against a contract as it is made (DESIGN §10): the walk
// of schema_walk.h's program from node `root`, run on the tokens the normalizer finds.
// *vouched is 1 when the output meets the schema as far as the program checks (the values
// in `deferred` still to be checked, by their place in the output), 0 when the full
// validator must decide (or the normalizer failed).
ptrdiff_t serializerd_json_fast_normalize_checked(const uint8_t *in, size_t n, uint8_t *out,
                                                  int allow_fragments, size_t max_depth, int kernel,
                                                  int in_place, int *output_is_input, size_t numbers[3],
                                                  const sw_program *program, int32_t root,
                                                  sw_deferrals *deferred, int *vouched);

// This thread's output buffer for small documents (input of at most
// SERIALIZERD_JSON_SCRATCH - 64 bytes), so that input already normal costs no allocation.
#define SERIALIZERD_JSON_SCRATCH 4096
uint8_t *serializerd_json_scratch(void);

// output.numbers' decision for one valid JSON number of `n` bytes (DESIGN §5): 0 when its
// nearest double prints back as the same value, 1 when not, 2 when this exact check cannot
// tell and printing decides. On every architecture.
int serializerd_number_verdict(const uint8_t *p, size_t n);

#endif
