#ifndef SERIALIZERD_JSON_STRING_H
#define SERIALIZERD_JSON_STRING_H
// The end of a JSON string in compact normalized output, shared by the schema walk and the
// shape fingerprint.
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// The closing quote of the string whose content starts at p, NULL when there is none
// before `end`; sets *escaped when a backslash occurs. 16 bytes at a time while 16 remain.
static inline const uint8_t *serializerd_json_string_end(const uint8_t *p, const uint8_t *end, int *escaped) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
#endif
    for (;;) {
#if defined(__SSE2__)
        if (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
            if (!m) { p += 16; continue; }
            p += __builtin_ctz(m);
        } else
#endif
        {
            while (p < end && *p != '"' && *p != '\\') p++;
            if (p >= end) return NULL;
        }
        if (*p == '"') return p;
        *escaped = 1;
        if (end - p < 2) return NULL;
        p += 2;
    }
}

#endif
