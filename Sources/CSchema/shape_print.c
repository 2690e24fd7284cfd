// The shape fingerprint (shape_print.h): the schema walk's reading of compact JSON, with a
// running hash of what the shape is made of instead of checks. Each step mixes one word
// into the state (a multiply and a rotate); names go in 8 bytes at a time with their length.
#include "shape_print.h"
#include <string.h>
#include "json_string.h"

typedef struct {
    const uint8_t *base, *end;
    uint64_t h;
    sp_string *strings;
    size_t count, capacity;
    uint32_t slots;
    int depth;
    int overflow;
} sp_run;

// Number bytes: 1 for digits and signs, 2 for what makes a fraction.
static const uint8_t sp_number_byte[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['+'] = 1, ['-'] = 1, ['.'] = 2, ['e'] = 2, ['E'] = 2,
};

enum { SP_NULL = 1, SP_BOOLEAN, SP_INTEGER, SP_FRACTION, SP_STRING, SP_OBJECT, SP_ARRAY, SP_END, SP_NAME };

static inline void sp_mix(sp_run *r, uint64_t word) {
    r->h = __builtin_rotateleft64((r->h ^ word) * 0x9E3779B97F4A7C15ull, 29);
}

// The low n bytes of a word, for n < 8.
static const uint64_t sp_low[8] = {0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFF};

// A member name's bytes, all of them, with its length. One shorter than 8 bytes is one
// word: its bytes with the length in the top byte, which a name's own byte there never is
// (JSON escapes bytes below 0x20), so no two names share it. A longer one is its first 8
// bytes, the 8-byte words after them, and its last 8 (overlapping) with the length.
static inline void sp_name(sp_run *r, const uint8_t *name, size_t n) {
    uint64_t word = 0;
    if (n < 8) {
        if (r->end - name >= 8) {
            memcpy(&word, name, 8);
            word &= sp_low[n];
        } else {
            for (size_t k = 0; k < n; k++) word |= (uint64_t)name[k] << (8 * k);
        }
        sp_mix(r, word | (uint64_t)n << 56);
        return;
    }
    memcpy(&word, name, 8);
    sp_mix(r, word);
    size_t k = 8;
    for (; k + 8 < n; k += 8) {
        memcpy(&word, name + k, 8);
        sp_mix(r, word);
    }
    memcpy(&word, name + n - 8, 8);
    sp_mix(r, word ^ n);
}

#if defined(__SSE2__)
// Quotes and backslashes among 16 bytes, bit k for byte k.
static inline unsigned sp_specials(__m128i v) {
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
}
#endif

// The closing quote of the string whose content starts at p, as serializerd_json_string_end
// says; a string shorter than 16 bytes without escapes is found by one compare.
static inline const uint8_t *sp_string_end(const sp_run *r, const uint8_t *p, int *escaped) {
#if defined(__SSE2__)
    if (r->end - p >= 16) {
        unsigned m = sp_specials(_mm_loadu_si128((const __m128i *)p));
        if (m && p[__builtin_ctz(m)] == '"') return p + __builtin_ctz(m);
    }
#endif
    return serializerd_json_string_end(p, r->end, escaped);
}

static const uint8_t *sp_value(sp_run *r, const uint8_t *p);

__attribute__((noinline)) static const uint8_t *sp_object(sp_run *r, const uint8_t *p) {
    const uint8_t *end = r->end;
    sp_mix(r, SP_OBJECT);
    p++;
    if (p < end && *p == '}') goto close;
    for (;;) {
        if (p >= end || *p != '"') return NULL;
        int escaped = 0;
        const uint8_t *name = p + 1, *q;
#if defined(__SSE2__) && defined(__x86_64__)
        // A name shorter than 8 bytes is hashed from the bytes its end was found in.
        if (end - name >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)name);
            q = name + __builtin_ctz(sp_specials(v) | 0x10000);
            size_t n = (size_t)(q - name);
            if (n < 8 && *q == '"') {
                sp_mix(r, ((uint64_t)_mm_cvtsi128_si64(v) & sp_low[n]) | (uint64_t)n << 56);
                goto named;
            }
        }
#endif
        q = serializerd_json_string_end(name, end, &escaped);
        if (!q) return NULL;
        sp_name(r, name, (size_t)(q - name));
#if defined(__SSE2__) && defined(__x86_64__)
    named:
#endif
        p = q + 1;
        if (p >= end || *p != ':') return NULL;
        p = sp_value(r, p + 1);
        if (!p || p >= end) return NULL;
        if (*p == ',') { p++; continue; }
        if (*p == '}') break;
        return NULL;
    }
close:
    sp_mix(r, SP_END);
    return p + 1;
}

// Each element is printed apart; one printed like the element before it is left out,
// its strings given that element's slots.
__attribute__((noinline)) static const uint8_t *sp_array(sp_run *r, const uint8_t *p) {
    const uint8_t *end = r->end;
    sp_mix(r, SP_ARRAY);
    uint64_t outer = r->h, previous = 0;
    uint32_t previous_span = 0;
    int first = 1;
    p++;
    if (p < end && *p == ']') goto close;
    for (;;) {
        uint32_t slot = r->slots;
        size_t count = r->count;
        r->h = 0x13198A2E03707344ull;
        p = sp_value(r, p);
        if (!p || p >= end) return NULL;
        uint64_t element = r->h;
        uint32_t span = r->slots - slot;
        if (!first && element == previous && span == previous_span) {
            for (size_t k = count; k < r->count; k++) r->strings[k].slot -= span;
            r->slots = slot;
        } else {
            r->h = outer;
            sp_mix(r, element);
            outer = r->h;
            previous = element;
            previous_span = span;
            first = 0;
        }
        if (*p == ',') { p++; continue; }
        if (*p == ']') break;
        return NULL;
    }
    r->h = outer;
close:
    sp_mix(r, SP_END);
    return p + 1;
}

static inline const uint8_t *sp_literal(sp_run *r, const uint8_t *p, const char *word, size_t n, uint64_t kind) {
    if ((size_t)(r->end - p) < n || memcmp(p, word, n) != 0) return NULL;
    sp_mix(r, kind);
    return p + n;
}

static inline __attribute__((always_inline)) const uint8_t *sp_value(sp_run *r, const uint8_t *p) {
    const uint8_t *end = r->end, *q;
    if (p >= end) return NULL;
    switch (*p) {
    case '{':
    case '[':
        if (r->depth >= SERIALIZERD_SHAPE_PRINT_DEPTH) return NULL;
        r->depth++;
        q = *p == '{' ? sp_object(r, p) : sp_array(r, p);
        r->depth--;
        return q;
    case '"': {
        int escaped = 0;
        q = sp_string_end(r, p + 1, &escaped);
        if (!q) return NULL;
        if (r->strings) {
            if (r->count == r->capacity) {
                r->overflow = 1;
                return NULL;
            }
            r->strings[r->count++] = (sp_string){(uint32_t)(p + 1 - r->base), (uint32_t)(q - p - 1), (uint32_t)escaped, r->slots};
        }
        r->slots++;
        sp_mix(r, SP_STRING);
        return q + 1;
    }
    case 't': return sp_literal(r, p, "true", 4, SP_BOOLEAN);
    case 'f': return sp_literal(r, p, "false", 5, SP_BOOLEAN);
    case 'n': return sp_literal(r, p, "null", 4, SP_NULL);
    default: {
        unsigned seen = 0, c;
        q = p;
        if (q < end && *q == '-') q++;
        if (q >= end || (unsigned)(*q - '0') > 9) return NULL;
        while (q < end && (c = sp_number_byte[*q]) != 0) {
            seen |= c;
            q++;
        }
        sp_mix(r, seen & 2 ? SP_FRACTION : SP_INTEGER);
        return q;
    }
    }
}

uint64_t serializerd_shape_print(const uint8_t *bytes, size_t n, sp_string *strings, size_t capacity, size_t *count) {
    *count = 0;
    if (n == 0 || n >= UINT32_MAX) return 0;
    sp_run r = {bytes, bytes + n, 0x243F6A8885A308D3ull, strings, 0, capacity, 0, 0, 0};
    const uint8_t *p = sp_value(&r, bytes);
    if (r.overflow) *count = capacity + 1;
    if (p != bytes + n) return 0;
    *count = r.count;
    return r.h ? r.h : 1;
}

uint64_t serializerd_shape_bytes_hash(const uint8_t *bytes, size_t n) {
    sp_run r = {bytes, bytes + n, 0x452821E638D01377ull, NULL, 0, 0, 0, 0, 0};
    size_t k = 0;
    uint64_t word;
    for (; k + 8 <= n; k += 8) {
        memcpy(&word, bytes + k, 8);
        sp_mix(&r, word);
    }
    word = 0;
    for (size_t j = 0; k + j < n; j++) word |= (uint64_t)bytes[k + j] << (8 * j);
    sp_mix(&r, word ^ (uint64_t)n << 56);
    return r.h;
}
