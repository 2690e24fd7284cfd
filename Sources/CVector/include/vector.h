#ifndef SERIALIZERD_CVECTOR_H
#define SERIALIZERD_CVECTOR_H
// The two 16-byte vector operations Swift's SIMD types lower badly: byte compares
// (`.==` and `.<` on SIMD16<UInt8> become a loop over lanes) and the mask of each lane's
// high bit (Swift has no movemask). Swift's own SIMD16 arithmetic and bitwise operators
// lower to single instructions and are used around these. On x86-64 these are SSE2,
// part of the baseline, so no build flag and no runtime dispatch is needed.
#include <stdint.h>

typedef signed char serializerd_v16 __attribute__((vector_size(16)));

// 0xFF in each lane where a == b, else 0.
static inline __attribute__((always_inline)) serializerd_v16 serializerd_eq(serializerd_v16 a, serializerd_v16 b) {
    return (serializerd_v16)(a == b);
}

// 0xFF in each lane where a < b as signed bytes (so bytes >= 0x80 are below every ASCII byte).
static inline __attribute__((always_inline)) serializerd_v16 serializerd_lt(serializerd_v16 a, serializerd_v16 b) {
    return (serializerd_v16)(a < b);
}

// Bit k set when lane k's high bit is set.
static inline __attribute__((always_inline)) uint32_t serializerd_movemask(serializerd_v16 v) {
#if defined(__SSE2__)
    return (uint32_t)__builtin_ia32_pmovmskb128(v);
#else
    uint32_t m = 0;
    for (int k = 0; k < 16; k++) m |= (uint32_t)((uint8_t)v[k] >> 7) << k;
    return m;
#endif
}
#endif
