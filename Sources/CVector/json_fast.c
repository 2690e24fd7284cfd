// The JSON normalizer's fast path, for x86-64 CPUs with AVX2, BMI1/2 and PCLMUL, its first
// stage in AVX-512 where the CPU has VBMI2 (both checked at run time by
// serializerd_json_fast_available). Swift cannot compile one function for AVX2 and pick it
// at run time, so this kernel is C with `target` attributes; everything else about the
// normalizer (its contract, errors, the portable path) stays in Swift.
//
// Two stages over the input in chunks of SJ_CHUNK bytes, 64 bytes a block:
// 1. Classify each block into bitmasks (quotes, backslashes, whitespace, structural bytes,
//    controls), find the string interiors (escaped quotes resolved as simdjson does, the
//    interior as a prefix XOR by carry-less multiply), validate UTF-8 (the Keiser-Lemire
//    lookup), the escaped bytes, and that tokens are apart (no string right after a token,
//    nothing joined across whitespace), write the block without its whitespace
//    outside strings, and list the positions, in that compact output, of every structural
//    byte and of the letter of each `\u` and `\/` escape.
// 2. Walk that list with the grammar: the bytes between two structural ones are one token,
//    a string when they begin with a quote, else a scalar. `\u` and `\/` escapes that are
//    not already in the normalized form are rewritten in place (the normalized form is
//    never longer), the output after them moved down once.
// Input that is already normalized (compact, no `\u` or `\/` escape) is common, and then
// the output is the input: while every byte so far is kept, stage 1 writes nothing and the
// walk reads the input; the first byte removed copies what came before to the output.
// It only decides valid or not: on invalid input it returns -1 and the caller reruns the
// Swift normalizer for the error and its offset. Valid input gives byte for byte the
// Swift normalizer's output (tests and fuzz/json hold the two equal).
#include "json_fast.h"
#include "schema_walk.h"
#include <string.h>
#include <stdlib.h>

// output.numbers' decision for one number (DESIGN §5): 0 when its nearest double prints
// back (shortest round trip, as RFC 8785 and JavaScript print it) as the same value, 1 when
// not, 2 when this exact check cannot tell (magnitudes past its 128-bit range, a tie), which
// NumberSafety (Swift) then decides by printing. Up to 15 significant digits a double
// holds them; over 17 it cannot; for 16 and 17 the number is the shortest form exactly
// when neither (k-1)-digit neighbour lies in the double's rounding interval and its
// k-digit neighbour on the double's side is not closer (Steele and White, Ryu), checked
// in 128-bit integers. Plain C, on every architecture: the JSON walk calls it (through
// sj_count_number, not inlined, so the walk keeps its registers) and so does
// NumberSafety, through serializerd_number_verdict: one implementation of the rule.
static const uint64_t sj_pow10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
    10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
    10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};
static const double sj_pow10d[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline unsigned __int128 sj_pow10_wide(int n) {
    return n < 20 ? (unsigned __int128)sj_pow10[n] : (unsigned __int128)sj_pow10[19] * sj_pow10[n - 19];
}

static int sj_number_verdict_of(uint64_t m, int k, long q);

__attribute__((noinline)) static int sj_number_verdict(const uint8_t *p, size_t n) {
    size_t i = p[0] == '-';
    // The common form first: at most 19 digits, one point, no exponent (coordinates,
    // prices, ids): one pass with one branch a byte.
    if (n <= 20) {
        uint64_t m = 0;
        size_t point = n, digits = 0;
        for (; i < n; i++) {
            unsigned d = (unsigned)p[i] - '0';
            if (d < 10) { m = m * 10 + d; digits++; } else if (p[i] == '.') point = i; else break;
        }
        if (i == n && digits <= 19) {   // (20 digits may have overflowed m)
            if (m == 0) return 0;
            long q = point == n ? 0 : -(long)(n - point - 1);
            while (m % 10 == 0) { m /= 10; q++; }
            int bits = 64 - __builtin_clzll(m), guess = (bits * 1233) >> 12;   // ⌊bits·log10 2⌋
            int k = guess + (guess < 20 && m >= sj_pow10[guess]);
            return k > 17 ? 1 : sj_number_verdict_of(m, k, q);
        }
        i = p[0] == '-';
    }
    uint64_t m = 0;
    int taken = 0, last_nonzero = -1, significant = 0, integer_digits = 0, leading_zeros = 0, in_fraction = 0;
    for (; i < n; i++) {
        uint8_t c = p[i];
        if (c == '.') { in_fraction = 1; continue; }
        if ((uint8_t)(c - '0') >= 10) break;
        if (significant == 0 && c == '0') { leading_zeros += in_fraction; continue; }
        if (c != '0') last_nonzero = significant;
        if (taken < 17) { m = m * 10 + (uint64_t)(c - '0'); taken++; }
        significant++;
        integer_digits += !in_fraction;
    }
    if (last_nonzero < 0) return 0;          // zero, in any form
    if (last_nonzero >= 17) return 1;        // more digits than any shortest form has
    long exponent = 0;
    if (i < n) {                             // the exponent, saturated far past any double
        i++;
        int negative = p[i] == '-';
        if (p[i] == '-' || p[i] == '+') i++;
        for (; i < n; i++) if (exponent < 1000000) exponent = exponent * 10 + (p[i] - '0');
        if (negative) exponent = -exponent;
    }
    int k = last_nonzero + 1;
    for (int j = k; j < taken; j++) m /= 10;
    return sj_number_verdict_of(m, k, (integer_digits > 0 ? integer_digits : -leading_zeros) - k + exponent);
}

// The verdict for m/10^t (1 ≤ t ≤ 19, m of 16 or 17 digits, no trailing zero), the
// common fraction: x = m/10^t in doubles, then the exact remainder (s - x)·10^t in ulps of
// x, which puts s, its neighbours and x's rounding interval on one integer scale (2·10^t
// to the ulp) with no search. -1 where x sits at a binade's edge: sj_number_verdict_of's
// general path decides those.
static inline int sj_fraction_verdict(uint64_t m, int t) {
    typedef unsigned __int128 u128;
    typedef __int128 i128;
    double x = (double)m / sj_pow10d[t];
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int E = (int)(bits >> 52 & 0x7FF) - 1075;
    if (E >= 0 || E < -70) return -1;
    uint64_t M = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
    uint64_t P = sj_pow10[t];
    i128 R = (i128)(((u128)m << -E) - (u128)M * P);   // (s - x)·10^t / ulp
    i128 twoR = R * 2;
    if (twoR > (i128)P || (twoR == (i128)P && (M & 1))) { M++; twoR -= 2 * (i128)P; }
    else if (twoR < -(i128)P || (twoR == -(i128)P && (M & 1))) { M--; twoR += 2 * (i128)P; }
    if (M <= (1ULL << 52) || M >= (1ULL << 53) - 1) return -1;
    if (twoR > (i128)P || twoR < -(i128)P) return -1;
    int even = !(M & 1);
    i128 half = P, g = (i128)1 << (1 - E);
    uint64_t a = m % 10;
#define SJ_IN(v) (((v) > -half && (v) < half) || (even && ((v) == -half || (v) == half)))
    i128 below = twoR - (i128)a * g, above = twoR + (i128)(10 - a) * g;
    if (SJ_IN(below) || SJ_IN(above)) return 1;
    if (twoR == 0) return 0;
    i128 nb = twoR > 0 ? twoR - g : twoR + g;
    if (!SJ_IN(nb)) return 0;
#undef SJ_IN
    i128 dn = nb < 0 ? -nb : nb, ds = twoR < 0 ? -twoR : twoR;
    return dn < ds ? 1 : dn == ds ? 2 : 0;
}

// The verdict for m·10^q, m of k digits (no trailing zeros, k ≤ 17).
static int sj_number_verdict_of(uint64_t m, int k, long q) {
    typedef unsigned __int128 u128;
    if (k <= 15) return q + k >= -290 && q + k <= 290 ? 0 : 2;
    if (q < 0 && q >= -19) {
        int verdict = sj_fraction_verdict(m, (int)-q);
        if (verdict >= 0) return verdict;
    }
    const u128 one = 1;
    u128 x_scale, d_scaled, up, down;
    int even;
    if (q >= 0) {
        if (q > 20) return 2;
        u128 pw = sj_pow10_wide((int)q);
        if (m != 0 && pw > (~(u128)0 >> 4) / m) return 2;
        u128 value = (u128)m * pw;
        if (value >= one << 124) return 2;
        if (value <= one << 53) return 0;    // an integer a double holds exactly
        uint64_t hi = (uint64_t)(value >> 64);
        int bits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)value);
        int shift = bits - 53, e = shift;
        u128 mantissa = value >> shift, rest = value & ((one << shift) - 1), half = one << (shift - 1);
        if (rest > half || (rest == half && (mantissa & 1))) mantissa++;
        if (mantissa == one << 53) { mantissa >>= 1; e++; }
        even = !(mantissa & 1);
        x_scale = pw << 2;
        d_scaled = mantissa << (e + 2);
        up = one << (e + 1);
        down = mantissa == one << 52 ? one << e : up;
    } else {
        int t = (int)-q;
        if (t > 21) return 2;
        u128 scale = sj_pow10_wide(t);
        double estimate = (double)m / sj_pow10d[t];
        uint64_t estimate_bits;
        memcpy(&estimate_bits, &estimate, sizeof estimate_bits);
        // ⌊log2 estimate⌋ from its exponent field (a normal double: m ≥ 10^15, t ≤ 21).
        int e = 52 - ((int)(estimate_bits >> 52 & 0x7FF) - 1023);
        u128 mantissa = 0;
        for (int attempt = 0; attempt < 3; attempt++) {
            if (e < -60 || e > 66) return 2;
            u128 numerator = (u128)m << (e > 0 ? e : 0), divisor = scale << (e < 0 ? -e : 0);
            uint64_t power_bits = (uint64_t)(1023 + e) << 52;   // 2^e, e within ±66
            double power;
            memcpy(&power, &power_bits, sizeof power);
            u128 guess = (u128)(uint64_t)(estimate * power);
            u128 product = guess * divisor;
            while (product > numerator) { guess--; product -= divisor; }
            while (numerator - product >= divisor) { guess++; product += divisor; }
            if (guess >= one << 53) { e--; continue; }
            if (guess < one << 52) { e++; continue; }
            u128 rest2 = (numerator - product) << 1;
            if (rest2 > divisor || (rest2 == divisor && (guess & 1))) guess++;
            if (guess == one << 53) { guess = one << 52; e--; }
            mantissa = guess;
            break;
        }
        if (mantissa == 0 || e < -60) return 2;
        int exp2 = e < 0 ? -e : 0;
        even = !(mantissa & 1);
        x_scale = one << ((e > 0 ? e : 0) + 2);
        d_scaled = mantissa * scale << (exp2 + 2);
        up = scale << (exp2 + 1);
        down = mantissa == one << 52 ? scale << exp2 : up;
    }
    u128 low = d_scaled - down, high = d_scaled + up;
#define SJ_IN(x) (((x) > low || (even && (x) == low)) && ((x) < high || (even && (x) == high)))
    u128 s = (u128)m * x_scale;
    u128 below = (u128)(m / 10 * 10) * x_scale, above = below + 10 * x_scale;
    if (SJ_IN(below) || SJ_IN(above)) return 1;
    if (s == d_scaled) return 0;
    u128 neighbour = s < d_scaled ? s + x_scale : s - x_scale;
    if (!SJ_IN(neighbour)) return 0;
#undef SJ_IN
    u128 distance = s < d_scaled ? d_scaled - s : s - d_scaled;
    u128 other = neighbour < d_scaled ? d_scaled - neighbour : neighbour - d_scaled;
    return other < distance ? 1 : other == distance ? 2 : 0;
}

// The same verdict for Swift: 0 safe, 1 unsafe, 2 left to printing. `p` is a valid JSON
// number of `n` bytes.
int serializerd_number_verdict(const uint8_t *p, size_t n) { return sj_number_verdict(p, n); }

#if defined(__x86_64__)
#include <immintrin.h>
#include <cpuid.h>

// Which kernel this CPU and OS run: 0 none, 1 AVX2 (with BMI1, BMI2, PCLMUL and POPCNT, the
// OS saving YMM state, and PEXT in hardware: AMD before Zen 3, family 0x19, runs it in
// microcode at hundreds of cycles), 2 AVX-512 as well (F, BW, VL, VBMI2, ZMM state saved).
int serializerd_json_fast_available(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
    int amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;   // "AuthenticAMD"
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    unsigned family = (a >> 8) & 0xF;
    if (family == 0xF) family += (a >> 20) & 0xFF;
    if (amd && family < 0x19) return 0;
    if (!((c >> 27) & 1) || !((c >> 28) & 1) || !((c >> 1) & 1) || !((c >> 23) & 1)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    if (!(((b >> 5) & 1) && ((b >> 3) & 1) && ((b >> 8) & 1))) return 0;
    int avx512 = ((b >> 16) & 1) && ((b >> 30) & 1) && ((b >> 31) & 1) && ((c >> 6) & 1) && (lo & 0xE0) == 0xE0;
    return avx512 ? 2 : 1;
}

#define SJ_TARGET __attribute__((target("avx2,bmi,bmi2,pclmul,popcnt")))
#define SJ_TARGET512 __attribute__((target("avx2,bmi,bmi2,pclmul,popcnt,avx512f,avx512bw,avx512vl,avx512vbmi2")))
#define SJ_CHUNK 4096
#define SJ_LOCAL_FRAMES 513   // the contract check's frames on the stack (32 KB), for the default depth limit of 512
// The hot loops start on a cache line, so that their speed does not move with the size of
// whatever the linker puts before them (a few percent either way on this kernel).
#define SJ_HOT __attribute__((noinline, aligned(64)))
// The contract's checks off the walk's quick path: calls that keep the caller's registers
// (preserve_most), so the walk holds its state in them instead of spilling it around each.
#if defined(__clang__) && defined(__x86_64__)
#define SJ_COLD __attribute__((noinline, preserve_most))
#else
#define SJ_COLD __attribute__((noinline))
#endif

// Whitespace and structural bytes by table on the low nibble (a byte >= 0x80 looks up 0).
// `[` and `]` are `{` and `}` without 0x20; 0x1A and 0x0C also match, which stage 2 rejects.
#define SJ_WS_TABLE ' ', 0, 0, 0, 0, 0, 0, 0, 0, '\t', '\n', 0, 0, '\r', 0, 0
#define SJ_OP_TABLE 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ':', '{', ',', '}', 0, 0

// The bytes a backslash may escape (`"\/bfnrtu`), by a bit the tables on the high and on
// the low nibble share: high 2 (`"` `/`), 5 (`\`), 6 (`b f n`), 7 (`r t u`).
#define SJ_ESCAPE_HI_TABLE 0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0
#define SJ_ESCAPE_LO_TABLE 0, 0, 1 | 4 | 8, 0, 8, 8, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1

// For each byte mask m, the pshufb indices that gather the bytes whose bit is set.
static const uint64_t sj_gather[256] = {
    0x8080808080808080ULL, 0x8080808080808000ULL, 0x8080808080808001ULL, 0x8080808080800100ULL,
    0x8080808080808002ULL, 0x8080808080800200ULL, 0x8080808080800201ULL, 0x8080808080020100ULL,
    0x8080808080808003ULL, 0x8080808080800300ULL, 0x8080808080800301ULL, 0x8080808080030100ULL,
    0x8080808080800302ULL, 0x8080808080030200ULL, 0x8080808080030201ULL, 0x8080808003020100ULL,
    0x8080808080808004ULL, 0x8080808080800400ULL, 0x8080808080800401ULL, 0x8080808080040100ULL,
    0x8080808080800402ULL, 0x8080808080040200ULL, 0x8080808080040201ULL, 0x8080808004020100ULL,
    0x8080808080800403ULL, 0x8080808080040300ULL, 0x8080808080040301ULL, 0x8080808004030100ULL,
    0x8080808080040302ULL, 0x8080808004030200ULL, 0x8080808004030201ULL, 0x8080800403020100ULL,
    0x8080808080808005ULL, 0x8080808080800500ULL, 0x8080808080800501ULL, 0x8080808080050100ULL,
    0x8080808080800502ULL, 0x8080808080050200ULL, 0x8080808080050201ULL, 0x8080808005020100ULL,
    0x8080808080800503ULL, 0x8080808080050300ULL, 0x8080808080050301ULL, 0x8080808005030100ULL,
    0x8080808080050302ULL, 0x8080808005030200ULL, 0x8080808005030201ULL, 0x8080800503020100ULL,
    0x8080808080800504ULL, 0x8080808080050400ULL, 0x8080808080050401ULL, 0x8080808005040100ULL,
    0x8080808080050402ULL, 0x8080808005040200ULL, 0x8080808005040201ULL, 0x8080800504020100ULL,
    0x8080808080050403ULL, 0x8080808005040300ULL, 0x8080808005040301ULL, 0x8080800504030100ULL,
    0x8080808005040302ULL, 0x8080800504030200ULL, 0x8080800504030201ULL, 0x8080050403020100ULL,
    0x8080808080808006ULL, 0x8080808080800600ULL, 0x8080808080800601ULL, 0x8080808080060100ULL,
    0x8080808080800602ULL, 0x8080808080060200ULL, 0x8080808080060201ULL, 0x8080808006020100ULL,
    0x8080808080800603ULL, 0x8080808080060300ULL, 0x8080808080060301ULL, 0x8080808006030100ULL,
    0x8080808080060302ULL, 0x8080808006030200ULL, 0x8080808006030201ULL, 0x8080800603020100ULL,
    0x8080808080800604ULL, 0x8080808080060400ULL, 0x8080808080060401ULL, 0x8080808006040100ULL,
    0x8080808080060402ULL, 0x8080808006040200ULL, 0x8080808006040201ULL, 0x8080800604020100ULL,
    0x8080808080060403ULL, 0x8080808006040300ULL, 0x8080808006040301ULL, 0x8080800604030100ULL,
    0x8080808006040302ULL, 0x8080800604030200ULL, 0x8080800604030201ULL, 0x8080060403020100ULL,
    0x8080808080800605ULL, 0x8080808080060500ULL, 0x8080808080060501ULL, 0x8080808006050100ULL,
    0x8080808080060502ULL, 0x8080808006050200ULL, 0x8080808006050201ULL, 0x8080800605020100ULL,
    0x8080808080060503ULL, 0x8080808006050300ULL, 0x8080808006050301ULL, 0x8080800605030100ULL,
    0x8080808006050302ULL, 0x8080800605030200ULL, 0x8080800605030201ULL, 0x8080060503020100ULL,
    0x8080808080060504ULL, 0x8080808006050400ULL, 0x8080808006050401ULL, 0x8080800605040100ULL,
    0x8080808006050402ULL, 0x8080800605040200ULL, 0x8080800605040201ULL, 0x8080060504020100ULL,
    0x8080808006050403ULL, 0x8080800605040300ULL, 0x8080800605040301ULL, 0x8080060504030100ULL,
    0x8080800605040302ULL, 0x8080060504030200ULL, 0x8080060504030201ULL, 0x8006050403020100ULL,
    0x8080808080808007ULL, 0x8080808080800700ULL, 0x8080808080800701ULL, 0x8080808080070100ULL,
    0x8080808080800702ULL, 0x8080808080070200ULL, 0x8080808080070201ULL, 0x8080808007020100ULL,
    0x8080808080800703ULL, 0x8080808080070300ULL, 0x8080808080070301ULL, 0x8080808007030100ULL,
    0x8080808080070302ULL, 0x8080808007030200ULL, 0x8080808007030201ULL, 0x8080800703020100ULL,
    0x8080808080800704ULL, 0x8080808080070400ULL, 0x8080808080070401ULL, 0x8080808007040100ULL,
    0x8080808080070402ULL, 0x8080808007040200ULL, 0x8080808007040201ULL, 0x8080800704020100ULL,
    0x8080808080070403ULL, 0x8080808007040300ULL, 0x8080808007040301ULL, 0x8080800704030100ULL,
    0x8080808007040302ULL, 0x8080800704030200ULL, 0x8080800704030201ULL, 0x8080070403020100ULL,
    0x8080808080800705ULL, 0x8080808080070500ULL, 0x8080808080070501ULL, 0x8080808007050100ULL,
    0x8080808080070502ULL, 0x8080808007050200ULL, 0x8080808007050201ULL, 0x8080800705020100ULL,
    0x8080808080070503ULL, 0x8080808007050300ULL, 0x8080808007050301ULL, 0x8080800705030100ULL,
    0x8080808007050302ULL, 0x8080800705030200ULL, 0x8080800705030201ULL, 0x8080070503020100ULL,
    0x8080808080070504ULL, 0x8080808007050400ULL, 0x8080808007050401ULL, 0x8080800705040100ULL,
    0x8080808007050402ULL, 0x8080800705040200ULL, 0x8080800705040201ULL, 0x8080070504020100ULL,
    0x8080808007050403ULL, 0x8080800705040300ULL, 0x8080800705040301ULL, 0x8080070504030100ULL,
    0x8080800705040302ULL, 0x8080070504030200ULL, 0x8080070504030201ULL, 0x8007050403020100ULL,
    0x8080808080800706ULL, 0x8080808080070600ULL, 0x8080808080070601ULL, 0x8080808007060100ULL,
    0x8080808080070602ULL, 0x8080808007060200ULL, 0x8080808007060201ULL, 0x8080800706020100ULL,
    0x8080808080070603ULL, 0x8080808007060300ULL, 0x8080808007060301ULL, 0x8080800706030100ULL,
    0x8080808007060302ULL, 0x8080800706030200ULL, 0x8080800706030201ULL, 0x8080070603020100ULL,
    0x8080808080070604ULL, 0x8080808007060400ULL, 0x8080808007060401ULL, 0x8080800706040100ULL,
    0x8080808007060402ULL, 0x8080800706040200ULL, 0x8080800706040201ULL, 0x8080070604020100ULL,
    0x8080808007060403ULL, 0x8080800706040300ULL, 0x8080800706040301ULL, 0x8080070604030100ULL,
    0x8080800706040302ULL, 0x8080070604030200ULL, 0x8080070604030201ULL, 0x8007060403020100ULL,
    0x8080808080070605ULL, 0x8080808007060500ULL, 0x8080808007060501ULL, 0x8080800706050100ULL,
    0x8080808007060502ULL, 0x8080800706050200ULL, 0x8080800706050201ULL, 0x8080070605020100ULL,
    0x8080808007060503ULL, 0x8080800706050300ULL, 0x8080800706050301ULL, 0x8080070605030100ULL,
    0x8080800706050302ULL, 0x8080070605030200ULL, 0x8080070605030201ULL, 0x8007060503020100ULL,
    0x8080808007060504ULL, 0x8080800706050400ULL, 0x8080800706050401ULL, 0x8080070605040100ULL,
    0x8080800706050402ULL, 0x8080070605040200ULL, 0x8080070605040201ULL, 0x8007060504020100ULL,
    0x8080800706050403ULL, 0x8080070605040300ULL, 0x8080070605040301ULL, 0x8007060504030100ULL,
    0x8080070605040302ULL, 0x8007060504030200ULL, 0x8007060504030201ULL, 0x0706050403020100ULL,
};

// The output positions of the letters of `\u` and `\/` escapes, which stage 1 lists apart
// (on the stack up to 256, then on the heap).
typedef struct sj_escape_list {
    uint32_t *at;
    size_t count, capacity;
    int on_heap, failed;
} sj_escape_list;

typedef struct {
    // Stage 1's carries from one block to the next, kept apart from sj_state so that they
    // stay in registers (stores through the output's byte pointers may alias any struct).
    uint64_t prev_escaped;      // the next block's first byte is escaped
    uint64_t prev_in_string;    // all ones when the block ended inside a string
    uint64_t prev_ender;        // the block's last byte ended a token (a scalar's byte or a closing quote)
    uint64_t prev_close;        // the block's last byte was a closing quote
    uint64_t ws_carry;          // a whitespace run after a token reached the block's end
    uint64_t error;             // any bit: invalid
    __m256i prev_half;          // the last 32 input bytes, for UTF-8 sequences across blocks
    __m256i prev_incomplete;    // the last bytes began a sequence the next block must finish
    __m256i utf8_error;
    size_t w;                   // output bytes written
    struct sj_escape_list *escapes;
    const uint8_t *source;      // the input while it is the output (nothing removed yet), else NULL
    uint64_t pad;               // the tail block's padding bytes, which count as kept
} sj_scan;

// While the output is the input (`in_place` a constant: 1 for whole blocks, 2 for the
// padded tail, 0 once written; each loop has only its own case): whether it still is
// after this block (nothing written); at the first block that removes a byte, the bytes
// before it are copied to the output.
__attribute__((always_inline)) static inline int sj_in_place(sj_scan *st, uint64_t keep, uint8_t *out, int in_place) {
    if (!in_place) return 0;
    if ((in_place == 2 ? keep | st->pad : keep) == ~0ULL) return 1;
    memcpy(out, st->source, st->w);
    st->source = NULL;
    return 0;
}

// Room for `more` escape positions; on failure the list is marked failed (and the
// caller's own path decides the input).
__attribute__((noinline)) static void sj_escapes_reserve(sj_escape_list *list, size_t more) {
    if (list->count + more <= list->capacity) return;
    size_t capacity = list->capacity * 2 + more;
    uint32_t *grown = (uint32_t *)malloc(capacity * sizeof(uint32_t));
    if (!grown) { list->failed = 1; list->count = 0; return; }
    memcpy(grown, list->at, list->count * sizeof(uint32_t));
    if (list->on_heap) free(list->at);
    list->at = grown;
    list->capacity = capacity;
    list->on_heap = 1;
}

// A block's escaped bytes (bits in the block's input), given which of its bytes a backslash
// may escape and which are `u` or `/`: any other escaped byte fails the input, and the
// `\u` and `\/` escapes are listed at their positions in the compact output.
SJ_TARGET __attribute__((always_inline)) static inline void sj_escapes(sj_scan *st, uint64_t escaped, uint64_t escapable,
                                                                      uint64_t u_or_slash, uint64_t keep) {
    st->error |= escaped & ~escapable;
    uint64_t rewrite = escaped & u_or_slash;
    if (!rewrite) return;
    sj_escape_list *list = st->escapes;
    sj_escapes_reserve(list, 64);
    if (list->failed) return;
    for (uint64_t e = _pext_u64(rewrite, keep); e; e = _blsr_u64(e))
        list->at[list->count++] = (uint32_t)(st->w + _tzcnt_u64(e));
}

typedef struct {
    // The compact output and what stage 2 has made of it.
    uint8_t *out;
    size_t w;                   // bytes stage 1 has written
    size_t cursor;              // end of the last token stage 2 consumed
    int resume;                 // where stage 2 goes on (0: the document's start)
    int allow_fragments;
    size_t depth, max_depth;
    uint8_t *stack;             // per open container: 1 = array
    size_t rw, rr;              // rewrites: output is final below rw; bytes from rr move down
    size_t numbers[3];          // numbers sj_scalar could not call safe by shape, by verdict: safe, unsafe, undecided
    int count_numbers;          // whether to decide them (output.numbers); else they are only validated
    // A contract checked as the walk goes (serializerd_json_fast_normalize_checked): the
    // walk's own registers for it while it is suspended.
    const sw_program *program;
    sw_deferrals *deferred;
    const sw_check *vcheck;     // what the next value must meet
    sw_check root;              // the document's
    int vouching;               // 1 while everything so far meets the schema; once 0, the
                                // checks go on (against nodes that allow anything) unheeded
    sw_frame *top;              // the innermost open container (a frame stands before the
                                // document's, so that `top` moves by one)
    uint64_t seen;              // the members top's object has met, by their bits
    sw_frame *frames;           // that frame: `top` is there at depth 0, and the checking walk
    sw_frame *frames_limit;     // keeps no depth of its own (it is top - frames), nor a stack
} sj_state;

SJ_TARGET static inline __m256i sj_lookup(__m256i table, __m256i idx) { return _mm256_shuffle_epi8(table, idx); }
SJ_TARGET static inline __m256i sj_high_nibble(__m256i v) {
    return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
}
#define SJ_PREV(input, prev, N) _mm256_alignr_epi8((input), _mm256_permute2x128_si256((prev), (input), 0x21), 16 - (N))

// The Keiser-Lemire tables (by the high nibble of a byte, its low nibble, and the high
// nibble of the byte after it) and the bits of the errors they flag.
enum { SJ_TOO_SHORT = 1, SJ_TOO_LONG = 2, SJ_OVERLONG_3 = 4, SJ_TOO_LARGE = 8, SJ_SURROGATE = 16, SJ_OVERLONG_2 = 32,
       SJ_TOO_LARGE_1000 = 64, SJ_OVERLONG_4 = 64, SJ_TWO_CONTS = -128,
       SJ_CARRY = SJ_TOO_SHORT | SJ_TOO_LONG | SJ_TWO_CONTS,
       SJ_L = SJ_CARRY | SJ_TOO_LARGE | SJ_TOO_LARGE_1000,
       SJ_C8 = SJ_TOO_LONG | SJ_OVERLONG_2 | SJ_TWO_CONTS | SJ_OVERLONG_3 | SJ_TOO_LARGE_1000 | SJ_OVERLONG_4,
       SJ_C9 = SJ_TOO_LONG | SJ_OVERLONG_2 | SJ_TWO_CONTS | SJ_OVERLONG_3 | SJ_TOO_LARGE,
       SJ_CA = SJ_TOO_LONG | SJ_OVERLONG_2 | SJ_TWO_CONTS | SJ_SURROGATE | SJ_TOO_LARGE };
#define SJ_UTF8_T1 \
    SJ_TOO_LONG, SJ_TOO_LONG, SJ_TOO_LONG, SJ_TOO_LONG, SJ_TOO_LONG, SJ_TOO_LONG, SJ_TOO_LONG, SJ_TOO_LONG, \
    SJ_TWO_CONTS, SJ_TWO_CONTS, SJ_TWO_CONTS, SJ_TWO_CONTS, SJ_TOO_SHORT | SJ_OVERLONG_2, SJ_TOO_SHORT, \
    SJ_TOO_SHORT | SJ_OVERLONG_3 | SJ_SURROGATE, SJ_TOO_SHORT | SJ_TOO_LARGE | SJ_TOO_LARGE_1000 | SJ_OVERLONG_4
#define SJ_UTF8_T2 \
    SJ_CARRY | SJ_OVERLONG_3 | SJ_OVERLONG_2 | SJ_OVERLONG_4, SJ_CARRY | SJ_OVERLONG_2, SJ_CARRY, SJ_CARRY, \
    SJ_CARRY | SJ_TOO_LARGE, SJ_L, SJ_L, SJ_L, SJ_L, SJ_L, SJ_L, SJ_L, SJ_L, SJ_L | SJ_SURROGATE, SJ_L, SJ_L
#define SJ_UTF8_T3 \
    SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, \
    SJ_C8, SJ_C9, SJ_CA, SJ_CA, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT, SJ_TOO_SHORT

// The Keiser-Lemire check of one 32-byte half against the half before it.
SJ_TARGET static inline __m256i sj_utf8_check(__m256i input, __m256i prev_input) {
    __m256i prev1 = SJ_PREV(input, prev_input, 1);
    const __m256i t1 = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_UTF8_T1));
    const __m256i t2 = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_UTF8_T2));
    const __m256i t3 = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_UTF8_T3));
    __m256i sc = _mm256_and_si256(_mm256_and_si256(sj_lookup(t1, sj_high_nibble(prev1)),
                                                   sj_lookup(t2, _mm256_and_si256(prev1, _mm256_set1_epi8(0x0F)))),
                                  sj_lookup(t3, sj_high_nibble(input)));
    __m256i prev2 = SJ_PREV(input, prev_input, 2), prev3 = SJ_PREV(input, prev_input, 3);
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80)));
    __m256i must23 = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must23, sc);
}

// The same on a whole 64-byte block (AVX-512), against the last half before it.
SJ_TARGET512 static inline __m512i sj_utf8_check512(__m512i input, __m256i prev_half) {
    // The input moved up 16 bytes, the last 16 before it below: each 16-byte lane then
    // finds the bytes before its first ones by `alignr`.
    __m512i before = _mm512_permutex2var_epi64(_mm512_castsi256_si512(prev_half), _mm512_setr_epi64(2, 3, 8, 9, 10, 11, 12, 13), input);
    __m512i prev1 = _mm512_alignr_epi8(input, before, 15);
    const __m512i x0f = _mm512_set1_epi8(0x0F);
    __m512i sc = _mm512_and_si512(_mm512_and_si512(
        _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_setr_epi8(SJ_UTF8_T1)), _mm512_and_si512(_mm512_srli_epi16(prev1, 4), x0f)),
        _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_setr_epi8(SJ_UTF8_T2)), _mm512_and_si512(prev1, x0f))),
        _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_setr_epi8(SJ_UTF8_T3)), _mm512_and_si512(_mm512_srli_epi16(input, 4), x0f)));
    __m512i third = _mm512_subs_epu8(_mm512_alignr_epi8(input, before, 14), _mm512_set1_epi8((char)(0xE0 - 0x80)));
    __m512i fourth = _mm512_subs_epu8(_mm512_alignr_epi8(input, before, 13), _mm512_set1_epi8((char)(0xF0 - 0x80)));
    __m512i must23 = _mm512_and_si512(_mm512_or_si512(third, fourth), _mm512_set1_epi8((char)0x80));
    return _mm512_xor_si512(must23, sc);
}

// Lanes of the half's last three bytes that begin a sequence longer than what follows.
SJ_TARGET static inline __m256i sj_utf8_incomplete(__m256i input) {
    const __m256i max = _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)(0xF0 - 1), (char)(0xE0 - 1), (char)(0xC0 - 1));
    return _mm256_subs_epu8(input, max);
}

SJ_TARGET static inline uint64_t sj_mask(__m256i lo, __m256i hi) {
    return (uint32_t)_mm256_movemask_epi8(lo) | (uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32;
}

// simdjson's branchless escape finder: the bytes escaped by a backslash before them.
static inline uint64_t sj_escaped(uint64_t backslash, uint64_t *prev_escaped) {
    backslash &= ~*prev_escaped;
    uint64_t follows_escape = backslash << 1 | *prev_escaped;
    const uint64_t even_bits = 0x5555555555555555ULL;
    uint64_t odd_sequence_starts = backslash & ~even_bits & ~follows_escape;
    uint64_t sequences_starting_on_even_bits;
    *prev_escaped = __builtin_add_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits);
    uint64_t invert_mask = sequences_starting_on_even_bits << 1;
    return (even_bits ^ invert_mask) & follows_escape;
}

// UTF-8 for one block, given as two halves: a block of ASCII only needs the block before
// it to have been complete.
SJ_TARGET __attribute__((always_inline)) static inline void sj_utf8_block(sj_scan *st, __m256i v0, __m256i v1, int ascii) {
    if (ascii) {
        st->utf8_error = _mm256_or_si256(st->utf8_error, st->prev_incomplete);
    } else {
        st->utf8_error = _mm256_or_si256(st->utf8_error,
            _mm256_or_si256(sj_utf8_check(v0, st->prev_half), sj_utf8_check(v1, v0)));
        st->prev_incomplete = sj_utf8_incomplete(v1);
    }
    st->prev_half = v1;
}

// Stage 1's decisions on one block's byte classes, the same for both kernels: returns the
// bytes the output keeps (all but whitespace outside strings), sets `listed` (structural
// bytes outside strings) and `escaped` (the bytes a backslash escapes, which the block
// checks and lists apart).
SJ_TARGET __attribute__((always_inline)) static inline uint64_t sj_resolve(sj_scan *st, uint64_t quote, uint64_t backslash,
                                                                          uint64_t ws, uint64_t op, uint64_t ctrl,
                                                                          uint64_t *listed, uint64_t *escaped_out) {
    // Most blocks have no backslash: then nothing in them is escaped but what the block
    // before escaped.
    uint64_t escaped = st->prev_escaped;
    if (backslash | escaped) escaped = sj_escaped(backslash, &st->prev_escaped);
    *escaped_out = escaped;
    quote &= ~escaped;
    // From each opening quote up to (not including) its closing quote.
    uint64_t in_string = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(
        _mm_set_epi64x(0, (long long)quote), _mm_set1_epi8((char)0xFF), 0)) ^ st->prev_in_string;
    st->prev_in_string = (uint64_t)((int64_t)in_string >> 63);

    uint64_t outside_ws = ws & ~in_string;
    op &= ~in_string;
    // Controls inside strings; a backslash outside them (which would also hide a quote
    // from stage 2's check that a string ends at a quote).
    st->error |= (ctrl & in_string) | (backslash & ~in_string);
    // Stage 2 lists no quotes: it takes the bytes between two structural ones as one token,
    // a string when they begin with a quote. So tokens must be apart: nothing but a
    // structural byte right after a string, no string right after a scalar, and no scalar
    // or string after either across whitespace (`1 2` would read as `12`).
    uint64_t open = quote & in_string;
    uint64_t scalar = ~(outside_ws | op | quote | in_string);
    uint64_t ender = scalar | (quote & ~in_string);
    uint64_t after_token = ender << 1 | st->prev_ender;
    st->prev_ender = ender >> 63;
    uint64_t close = quote & ~in_string;
    st->error |= (after_token & open) | ((close << 1 | st->prev_close) & scalar);
    st->prev_close = close >> 63;
    uint64_t sum;
    uint64_t carry = __builtin_add_overflow(outside_ws, after_token & outside_ws, &sum);
    carry |= __builtin_add_overflow(sum, st->ws_carry, &sum);
    st->ws_carry = carry;
    st->error |= sum & ~outside_ws & (scalar | open);
    *listed = op;
    return ~outside_ws;
}

// Stage 1 on one 64-byte block at `in` (AVX2): appends its compact form to the output
// (unless the output is still the input) and the output positions of its listed bytes to
// `idx`; returns the number listed.
SJ_TARGET __attribute__((always_inline)) static inline size_t sj_block(sj_scan *st, const uint8_t *in, uint8_t *out, uint32_t *idx, int in_place) {
    __m256i v0 = _mm256_loadu_si256((const __m256i *)in), v1 = _mm256_loadu_si256((const __m256i *)(in + 32));
    sj_utf8_block(st, v0, v1, _mm256_movemask_epi8(_mm256_or_si256(v0, v1)) == 0);

    const __m256i quote_v = _mm256_set1_epi8('"'), backslash_v = _mm256_set1_epi8('\\');
    const __m256i ws_table = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_WS_TABLE));
    const __m256i op_table = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_OP_TABLE));
    const __m256i x20 = _mm256_set1_epi8(0x20), x1f = _mm256_set1_epi8(0x1F);
    uint64_t listed, escaped, keep = sj_resolve(st,
        sj_mask(_mm256_cmpeq_epi8(v0, quote_v), _mm256_cmpeq_epi8(v1, quote_v)),
        sj_mask(_mm256_cmpeq_epi8(v0, backslash_v), _mm256_cmpeq_epi8(v1, backslash_v)),
        sj_mask(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(ws_table, v0), v0),
                _mm256_cmpeq_epi8(_mm256_shuffle_epi8(ws_table, v1), v1)),
        sj_mask(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(op_table, v0), _mm256_or_si256(v0, x20)),
                _mm256_cmpeq_epi8(_mm256_shuffle_epi8(op_table, v1), _mm256_or_si256(v1, x20))),
        sj_mask(_mm256_cmpeq_epi8(_mm256_min_epu8(v0, x1f), v0), _mm256_cmpeq_epi8(_mm256_min_epu8(v1, x1f), v1)),
        &listed, &escaped);
    if (escaped) {
        const __m256i hi_table = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_ESCAPE_HI_TABLE));
        const __m256i lo_table = _mm256_broadcastsi128_si256(_mm_setr_epi8(SJ_ESCAPE_LO_TABLE));
        const __m256i zero = _mm256_setzero_si256(), x0f = _mm256_set1_epi8(0x0F);
#define SJ_ESCAPABLE(v) _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(hi_table, sj_high_nibble(v)), \
                                                            _mm256_shuffle_epi8(lo_table, _mm256_and_si256((v), x0f))), zero)
        const __m256i u = _mm256_set1_epi8('u'), slash = _mm256_set1_epi8('/');
        sj_escapes(st, escaped, ~sj_mask(SJ_ESCAPABLE(v0), SJ_ESCAPABLE(v1)),
                   sj_mask(_mm256_or_si256(_mm256_cmpeq_epi8(v0, u), _mm256_cmpeq_epi8(v0, slash)),
                           _mm256_or_si256(_mm256_cmpeq_epi8(v1, u), _mm256_cmpeq_epi8(v1, slash))), keep);
#undef SJ_ESCAPABLE
    }

    size_t base = st->w;
    uint8_t *o = out + base;
    if (sj_in_place(st, keep, out, in_place)) {
        st->w = base + (size_t)_mm_popcnt_u64(keep);
    } else if (keep == ~0ULL) {
        _mm256_storeu_si256((__m256i *)o, v0);
        _mm256_storeu_si256((__m256i *)(o + 32), v1);
        st->w = base + 64;
    } else {
        // Each 8 bytes gathered from the 16-byte quarter that holds them (the second half of
        // a quarter by indices 8 higher).
        const __m128i quarter[4] = {_mm256_castsi256_si128(v0), _mm256_extracti128_si256(v0, 1),
                                    _mm256_castsi256_si128(v1), _mm256_extracti128_si256(v1, 1)};
        size_t k = 0;
        for (int lane = 0; lane < 8; lane++) {
            unsigned m = (unsigned)(keep >> (8 * lane)) & 0xFF;
            uint64_t gather = sj_gather[m] + (lane & 1 ? 0x0808080808080808ULL : 0);
            _mm_storel_epi64((__m128i *)(o + k), _mm_shuffle_epi8(quarter[lane >> 1], _mm_cvtsi64_si128((long long)gather)));
            k += (size_t)_mm_popcnt_u32(m);
        }
        st->w = base + k;
    }
    // The listed bits in output order (pext drops the removed bytes' bits), four positions
    // a step; stores past the count land in the slack the caller keeps.
    uint64_t listed_out = _pext_u64(listed, keep);
    size_t count = (size_t)_mm_popcnt_u64(listed);
    for (size_t j = 0; j < count; j += 4) {
        idx[j] = (uint32_t)(base + _tzcnt_u64(listed_out)); listed_out = _blsr_u64(listed_out);
        idx[j + 1] = (uint32_t)(base + _tzcnt_u64(listed_out)); listed_out = _blsr_u64(listed_out);
        idx[j + 2] = (uint32_t)(base + _tzcnt_u64(listed_out)); listed_out = _blsr_u64(listed_out);
        idx[j + 3] = (uint32_t)(base + _tzcnt_u64(listed_out)); listed_out = _blsr_u64(listed_out);
    }
    return count;
}

// The same with AVX-512 (BW, VBMI2): classes straight into mask registers, whitespace
// dropped by one byte compress, positions listed by another (each store of 16 positions
// may run past the count, into the caller's slack).
SJ_TARGET512 __attribute__((always_inline)) static inline size_t sj_block512(sj_scan *st, const uint8_t *in, uint8_t *out, uint32_t *idx, int in_place) {
    __m512i v = _mm512_loadu_si512((const void *)in);
    __m256i v1 = _mm512_extracti64x4_epi64(v, 1);
    if (_mm512_movepi8_mask(v) == 0) {
        st->utf8_error = _mm256_or_si256(st->utf8_error, st->prev_incomplete);
    } else {
        __m512i error = sj_utf8_check512(v, st->prev_half);
        st->utf8_error = _mm256_or_si256(st->utf8_error,
            _mm256_or_si256(_mm512_castsi512_si256(error), _mm512_extracti64x4_epi64(error, 1)));
        st->prev_incomplete = sj_utf8_incomplete(v1);
    }
    st->prev_half = v1;
    const __m512i ws_table = _mm512_broadcast_i32x4(_mm_setr_epi8(SJ_WS_TABLE));
    const __m512i op_table = _mm512_broadcast_i32x4(_mm_setr_epi8(SJ_OP_TABLE));
    uint64_t listed, escaped, keep = sj_resolve(st,
        _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"')),
        _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\')),
        _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(ws_table, v), v),
        _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(op_table, v), _mm512_or_si512(v, _mm512_set1_epi8(0x20))),
        _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F)),
        &listed, &escaped);
    if (escaped) {
        const __m512i hi_table = _mm512_broadcast_i32x4(_mm_setr_epi8(SJ_ESCAPE_HI_TABLE));
        const __m512i lo_table = _mm512_broadcast_i32x4(_mm_setr_epi8(SJ_ESCAPE_LO_TABLE));
        const __m512i x0f = _mm512_set1_epi8(0x0F);
        sj_escapes(st, escaped,
                   _mm512_test_epi8_mask(_mm512_shuffle_epi8(hi_table, _mm512_and_si512(_mm512_srli_epi16(v, 4), x0f)),
                                         _mm512_shuffle_epi8(lo_table, _mm512_and_si512(v, x0f))),
                   _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('u')) | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('/')), keep);
    }
    size_t base = st->w;
    if (!sj_in_place(st, keep, out, in_place)) _mm512_storeu_si512((void *)(out + base), _mm512_maskz_compress_epi8(keep, v));
    st->w = base + (size_t)_mm_popcnt_u64(keep);
    // The listed bytes' offsets in the compact block, a byte each by one compress, then
    // widened 16 at a time.
    __m512i offsets = _mm512_maskz_compress_epi8(_pext_u64(listed, keep), _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32,
        31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
    const __m512i start = _mm512_set1_epi32((int)base);
    size_t count = (size_t)_mm_popcnt_u64(listed);
    _mm512_storeu_si512((void *)idx, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(offsets)), start));
    if (count > 16) {
        _mm512_storeu_si512((void *)(idx + 16), _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(offsets, 1)), start));
        if (count > 32) {
            _mm512_storeu_si512((void *)(idx + 32), _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(offsets, 2)), start));
            if (count > 48)
                _mm512_storeu_si512((void *)(idx + 48), _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(offsets, 3)), start));
        }
    }
    return count;
}

// Stage 1 over `length` bytes (a multiple of 64; `tail`: the one padded block) with one
// block kernel. Always inlined into one function per kernel, so that the AVX-512 one is
// compiled apart and `block` is a direct call: the carries are copied in and out once
// per chunk.
typedef size_t (*sj_block_fn)(sj_scan *, const uint8_t *, uint8_t *, uint32_t *, int);

SJ_TARGET __attribute__((always_inline)) static inline size_t sj_stage1_with(sj_block_fn block, sj_scan *scan, const uint8_t *in,
                                                                            size_t length, uint8_t *out, uint32_t *idx, int tail) {
    sj_scan s = *scan;
    size_t count = 0;
    size_t i = 0;
    if (tail) {
        count = s.source ? block(&s, in, out, idx, 2) : block(&s, in, out, idx, 0);
        i = length;
    }
    for (; i + 64 <= length && s.source; i += 64) count += block(&s, in + i, out, idx + count, 1);
    for (; i + 64 <= length; i += 64) count += block(&s, in + i, out, idx + count, 0);
    *scan = s;
    return count;
}

SJ_TARGET SJ_HOT static size_t sj_stage1_avx2(sj_scan *scan, const uint8_t *in, size_t length, uint8_t *out, uint32_t *idx, int tail) {
    return sj_stage1_with(sj_block, scan, in, length, out, idx, tail);
}

SJ_TARGET512 SJ_HOT static size_t sj_stage1_avx512(sj_scan *scan, const uint8_t *in, size_t length, uint8_t *out, uint32_t *idx, int tail) {
    return sj_stage1_with(sj_block512, scan, in, length, out, idx, tail);
}

SJ_TARGET __attribute__((always_inline)) static inline size_t sj_stage1(int kernel, sj_scan *scan, const uint8_t *in, size_t length,
                                                                       uint8_t *out, uint32_t *idx, int tail) {
    return kernel == 2 ? sj_stage1_avx512(scan, in, length, out, idx, tail) : sj_stage1_avx2(scan, in, length, out, idx, tail);
}

// Replaces output bytes [at, at + length) with `bytes` (never longer).
static inline void sj_rewrite(sj_state *st, size_t at, size_t length, const uint8_t *bytes, size_t count) {
    if (st->rw != st->rr) memmove(st->out + st->rw, st->out + st->rr, at - st->rr);
    st->rw += at - st->rr;
    memcpy(st->out + st->rw, bytes, count);
    st->rw += count;
    st->rr = at + length;
}

static inline int sj_hex(uint8_t c) {
    if ((uint8_t)(c - '0') < 10) return c - '0';
    uint8_t l = c | 0x20;
    if ((uint8_t)(l - 'a') < 6) return l - 'a' + 10;
    return -1;
}

static inline int32_t sj_hex4(const uint8_t *p) {
    int a = sj_hex(p[0]), b = sj_hex(p[1]), c = sj_hex(p[2]), d = sj_hex(p[3]);
    if ((a | b | c | d) < 0) return -1;
    return a << 12 | b << 8 | c << 4 | d;
}

// The escape whose backslash is at `at`, a `\u` or `\/` (stage 1 lists only those and
// has checked the others): checked, and rewritten unless it is already in the normalized
// form (JSONEscaping.writeScalar). Returns how many further listed positions it used (a
// surrogate pair's second escape), or -1 when invalid.
static inline int sj_escape(sj_state *st, size_t at) {
    const uint8_t *p = st->out + at;
    if (p[1] == '/') {
        const uint8_t slash = '/';
        sj_rewrite(st, at, 2, &slash, 1);
        return 0;
    }
    if (p[1] != 'u') return -1;
    // Hex digits stop at the string's closing quote at the latest, so these reads stay in it.
    int32_t cp = sj_hex4(p + 2);
    if (cp < 0) return -1;
    size_t length = 6;
    int used = 0;
    if (cp >= 0xD800 && cp < 0xDC00) {
        if (p[6] != '\\' || p[7] != 'u') return -1;
        int32_t low = sj_hex4(p + 8);
        if (low < 0xDC00 || low >= 0xE000) return -1;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        length = 12;
        used = 1;
    } else if (cp >= 0xDC00 && cp < 0xE000) {
        return -1;
    }
    uint8_t b[6];
    size_t n;
    if (cp >= 0x20 && cp != 0x22 && cp != 0x5C) {
        if (cp < 0x80) { b[0] = (uint8_t)cp; n = 1; }
        else if (cp < 0x800) { b[0] = (uint8_t)(0xC0 | cp >> 6); b[1] = (uint8_t)(0x80 | (cp & 0x3F)); n = 2; }
        else if (cp < 0x10000) {
            b[0] = (uint8_t)(0xE0 | cp >> 12); b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)); b[2] = (uint8_t)(0x80 | (cp & 0x3F)); n = 3;
        } else {
            b[0] = (uint8_t)(0xF0 | cp >> 18); b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
            b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)); b[3] = (uint8_t)(0x80 | (cp & 0x3F)); n = 4;
        }
    } else {
        b[0] = '\\';
        n = 2;
        switch (cp) {
        case 0x22: b[1] = '"'; break;
        case 0x5C: b[1] = '\\'; break;
        case 0x08: b[1] = 'b'; break;
        case 0x09: b[1] = 't'; break;
        case 0x0A: b[1] = 'n'; break;
        case 0x0C: b[1] = 'f'; break;
        case 0x0D: b[1] = 'r'; break;
        default:
            b[1] = 'u'; b[2] = '0'; b[3] = '0';
            b[4] = "0123456789abcdef"[cp >> 4]; b[5] = "0123456789abcdef"[cp & 0xF];
            n = 6;
            if (memcmp(p, b, 6) == 0) return used;   // already normalized
        }
    }
    sj_rewrite(st, at, length, b, n);
    return used;
}

// Digits among the 32 bytes at p, bit k for byte k.
SJ_TARGET static inline uint64_t sj_digits(const uint8_t *p) {
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    __m256i d = _mm256_sub_epi8(v, _mm256_set1_epi8((char)('0' + 0x80)));
    return (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8((char)(0x80 + 10)), d));
}

// Whether the n bytes at p are exactly one JSON number, literal or nothing else: 0 when
// not; 1 for a literal, or a number of at most 15 digits with at most a fraction point (a
// double holds those exactly); 2 for any other number, which output.numbers must check.
// p has at least 32 readable bytes (the output's slack).
// With `fraction`, whether a number has a fraction or an exponent is set there.
SJ_TARGET __attribute__((always_inline)) static inline int sj_scalar(const uint8_t *p, size_t n, int *fraction) {
    // A literal by one 8-byte load, its bytes past n cleared.
    if (p[0] >= 'a') {
        uint64_t word;
        memcpy(&word, p, sizeof word);
        word = _bzhi_u64(word, (unsigned)(8 * n));
        return n == 4 ? word == 0x65757274ULL || word == 0x6C6C756EULL : n == 5 && word == 0x65736C6166ULL;   // true, null; false
    }
    // Digits from one mask of the first 32 bytes, bits at and above n clear so that every
    // run stops by n; a longer number (rare) is read a byte at a time.
    int masked = n <= 32;
    uint64_t d = masked ? _bzhi_u64(sj_digits(p), (unsigned)n) : 0;
    if (masked) {
        // Most numbers are digits, or digits with one fraction point, after an optional
        // sign: told from the mask of the other bytes alone.
        unsigned sign = p[0] == '-';
        uint64_t other = _bzhi_u64(~d, (unsigned)n) & ~(uint64_t)sign;
        if (other == 0) return (n > sign && (p[sign] != '0' || n == sign + 1)) << (n - sign > 15);
        size_t point = _tzcnt_u64(other);
        if (fraction) *fraction = 1;
        if (_blsr_u64(other) == 0 && p[point] == '.')
            return (point > sign && point + 1 < n && (p[sign] != '0' || point == sign + 1)) << (n - sign > 16);
    }
    if (p[0] != '-' && (uint8_t)(p[0] - '0') >= 10) return 0;
#define SJ_IS_DIGIT(i) (masked ? (int)(d >> (i) & 1) : (i) < n && (uint8_t)(p[i] - '0') < 10)
#define SJ_SKIP_DIGITS(i) do { if (masked) i += _tzcnt_u64(~(d >> i)); else while (SJ_IS_DIGIT(i)) i++; } while (0)
    size_t i = p[0] == '-';
    if (!SJ_IS_DIGIT(i)) return 0;
    if (p[i] == '0') i++; else SJ_SKIP_DIGITS(i);
    if (i < n && p[i] == '.') {
        if (fraction) *fraction = 1;
        i++;
        if (!SJ_IS_DIGIT(i)) return 0;
        SJ_SKIP_DIGITS(i);
    }
    if (i < n && (p[i] | 0x20) == 'e') {
        if (fraction) *fraction = 1;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        if (!SJ_IS_DIGIT(i)) return 0;
        SJ_SKIP_DIGITS(i);
    }
#undef SJ_IS_DIGIT
#undef SJ_SKIP_DIGITS
    return (i == n) << 1;
}

// A number the walk could not call safe by shape: its verdict counted when asked for.
__attribute__((noinline)) static void sj_count_number(sj_state *st, const uint8_t *p, size_t n) {
    if (st->count_numbers) st->numbers[sj_number_verdict(p, n)]++;
}

// The same for the checking walk, keeping its registers: it holds more state in them.
SJ_COLD static void sj_count_number_keeping(sj_state *st, const uint8_t *p, size_t n) { sj_count_number(st, p, n); }

// The contract's checks, one per token of the walk (DESIGN §10): the same rules as the
// one-pass walk over the output (schema_walk.c), on positions the walk has already found,
// so a string costs no scan for its end. They only ever say "meets it so far" (1) or
// "ask the full validator" (0). Bytes are the output before `\u` and `\/` rewrites,
// which only shorten strings: a byte count is still an upper bound on code points.
// Each check has a quick case inline in the walk (a node's `quick` kinds; a member name
// that came after the last member the last time) and the rest in a function of its own.

// The node `id` resolves to for a value beginning with `first`, NULL where the walk gives up.
static inline const sw_node *sj_schema_node(const sw_program *program, int32_t *id, uint8_t first) {
    const sw_node *node = program->nodes + *id;
    if (node->dispatch >= 0) {
        *id = program->branches[node->dispatch + serializerd_schema_kind(first)];
        if (*id < 0) return NULL;
        node = program->nodes + *id;
    }
    return node->flags & SW_GIVE_UP ? NULL : node;
}

// A valid scalar's kind by its first byte; a number's is SW_INTEGER, shifted right once
// (SW_NUMBER) when it has a fraction or exponent.
static const uint8_t sj_scalar_kind[256] = {
    ['n'] = SW_NULL, ['t'] = SW_BOOLEAN, ['f'] = SW_BOOLEAN, ['-'] = SW_INTEGER,
    ['0'] = SW_INTEGER, ['1'] = SW_INTEGER, ['2'] = SW_INTEGER, ['3'] = SW_INTEGER, ['4'] = SW_INTEGER,
    ['5'] = SW_INTEGER, ['6'] = SW_INTEGER, ['7'] = SW_INTEGER, ['8'] = SW_INTEGER, ['9'] = SW_INTEGER,
};
_Static_assert(SW_INTEGER >> 1 == SW_NUMBER, "a fraction shifts an integer's kind to a number's");

// Whether the n bytes at `name`, a member name followed by its closing quote (32 bytes
// readable), are e's name: one compare of the name and its quote with the entry's copy
// of them (which has the quote after the name, so the length is compared too), with no
// branch on how long names are (they alternate member by member). Names of 32 bytes or
// more never match by that compare alone (sw_prop).
SJ_TARGET static inline int sj_same_head(const sw_prop *e, const uint8_t *name) {
    __m256i x = _mm256_loadu_si256((const __m256i *)name), y = _mm256_loadu_si256((const __m256i *)e->head);
    return (~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)) & e->care) == 0;
}

// The answer does not meet the schema as far as the walk can tell: the full validator decides.
SJ_COLD static const sw_check *sj_schema_fail(sj_state *st) {
    st->vouching = 0;
    return &st->program->props[0].child;
}

// A string token: out[start] is its opening quote, its closing one at stop - 1.
SJ_COLD static void sj_schema_string(sj_state *st, int32_t id, size_t start, size_t stop) {
    const sw_node *node = sj_schema_node(st->program, &id, '"');
    if (!node || !(node->types & SW_STRING)) { sj_schema_fail(st); return; }
    size_t n = stop - start - 2;
    int decided = n <= node->max_length;
    if (decided && node->min_length) {
        int escaped = memchr(st->out + start + 1, '\\', n) != NULL;
        decided = n / (escaped ? 12 : 4) >= node->min_length;
    }
    if ((!decided || (node->flags & (SW_DEFER_STRING | SW_DEFER_SCALAR))) &&
        !serializerd_schema_defer(st->deferred, id, start, stop - start)) sj_schema_fail(st);
}

// A literal or number token of n bytes at p, of kind `kind` (SW_NULL, SW_BOOLEAN,
// SW_INTEGER or SW_NUMBER: a fraction or exponent).
SJ_COLD static void sj_schema_scalar(sj_state *st, int32_t id, const uint8_t *p, size_t n, uint32_t kind) {
    const sw_node *node = sj_schema_node(st->program, &id, p[0]);
    if (!node || !(node->types & kind)) { sj_schema_fail(st); return; }
    uint32_t defer = kind & (SW_NUMBER | SW_INTEGER) ? SW_DEFER_SCALAR | SW_DEFER_NUMBER : SW_DEFER_SCALAR;
    if ((node->flags & defer) && !serializerd_schema_defer(st->deferred, id, (size_t)(p - st->out), n)) sj_schema_fail(st);
}

// A container opening (`c` its opener): its node, resolved.
SJ_COLD static int32_t sj_schema_open(sj_state *st, int32_t id, uint8_t c) {
    const sw_node *node = sj_schema_node(st->program, &id, c);
    if (!node || (node->flags & SW_DEFER_SCALAR) ||
        !(node->types & (c == '{' ? SW_OBJECT : SW_ARRAY))) return sj_schema_fail(st)->node;
    return id;
}

// Makes `top` the frame of a container of node `id` (an array when `array`); returns its
// `first`.
SJ_TARGET static inline const sw_check *sj_schema_push(const sw_program *program, sw_frame *top, int32_t id, int array) {
    const sw_frame *frame = program->frames + 2 * (size_t)id + (array != 0);
    memcpy(top, frame, sizeof *top);
    return frame->first;
}

// A member's name, the n bytes at `name`, in top's object after the member of entry
// `last`, where the entry after `last` did not name it: found in the node's table (and
// made the one after `last`), or an undeclared name checked. Returns what its value must
// meet.
SJ_TARGET SJ_COLD static const sw_check *sj_schema_name(sj_state *st, sw_frame *top, const sw_prop *last, const uint8_t *name,
                                                        size_t n) {
    const sw_program *program = st->program;
    // Members are counted only here: a node that counts them never guesses.
    top->count++;
    const sw_node *node = program->nodes + top->node;
    if (node->props < 0) return &program->props[node->other].child;
    if (node->flags & SW_ESCAPED_NAMES) return sj_schema_fail(st);
    // The guess again, in full: a name of 32 bytes or more is never matched inline. (The
    // output has slack past every name.)
    sw_name key = serializerd_schema_name(name, n, name + n + 8);
    const sw_prop *guess = serializerd_schema_guess(last);
    if (serializerd_schema_names(program, guess, &key)) return &guess->child;
    const sw_prop *e = serializerd_schema_find(program, node, &key);
    if (!e) {
        // An escaped name could equal a declared one once decoded; names compare by
        // canonical equivalence, so a name that is not ASCII is the tree's.
        if (node->flags & SW_WIDE_NAMES) return sj_schema_fail(st);
        for (size_t k = 0; k < n; k++) if (name[k] >= 0x80 || name[k] == '\\') return sj_schema_fail(st);
        e = program->props + node->other;
    }
    serializerd_schema_learn(program, node, last, e);
    return &e->child;
}

// A member's name, the n bytes at `name`, in top's object, after the member whose check
// was `last` (the value the walk has just checked): the one that came after it the last
// time, else the table; its bit joins `seen`. Returns what its value must meet. Inline in
// the walk: objects of a node mostly have their members in the same order.
SJ_TARGET __attribute__((always_inline)) static inline const sw_check *sj_schema_member(sj_state *st, sw_frame *top,
                                                                                         const sw_check *last,
                                                                                         const uint8_t *name, size_t n,
                                                                                         uint64_t *seen) {
    const sw_prop *e = serializerd_schema_guess(serializerd_schema_entry(last));
    if (!sj_same_head(e, name)) e = serializerd_schema_entry(sj_schema_name(st, top, serializerd_schema_entry(last), name, n));
    *seen |= 1ull << e->bit;
    return &e->child;
}

// The container of `top` closing, having met the members of `seen`: whether it meets its
// node's counts and `required`.
static inline int sj_schema_closes(const sw_frame *top, uint64_t seen) {
    return !(~seen & top->required) & (top->count - top->min <= top->span);
}

enum { SJ_DOCUMENT_DONE = 7 };   // sj_walk's `resume` once the document is whole (past its labels, 1-6)

// Stage 2 over listed positions idx[0..count), the structural bytes: the grammar as a
// machine of labels, so each decision is its own (well predicted) branch. The bytes
// between two structural ones are one token (stage 1 has checked that tokens are apart),
// a string when they begin with a quote, else a scalar. At the end of the list it
// suspends, keeping its place in `resume`, and goes on when called with the next chunk's
// positions. When `final`, the list ends with a sentinel at the output's end (a zero byte
// there when the output is written; whatever byte, read in place: a closer there leaves the
// walk wanting one more position, so only a whole document ends it). Returns 0, or -1
// when the input is invalid.
// With `checking` (a constant: each variant is its own function), the contract's checks
// run at each token (DESIGN §10).
SJ_TARGET __attribute__((always_inline)) static inline int sj_walk_with(sj_state *st, const uint32_t *idx, size_t count, int final,
                                                                       const int checking) {
    uint8_t *const out = st->out;
    uint8_t *const stack = st->stack;
    const uint32_t *ip = idx, *const iend = idx + count;
    size_t p = 0, cursor = st->cursor, depth = st->depth;
    uint8_t c = 0;
    const sw_check *vcheck = st->vcheck;
    uint64_t seen = st->seen;
    sw_frame *top = st->top;
    if (count == 0) return 0;
// Moves to the next listed position, suspending when the list is used up.
#define SJ_NEXT(label) \
    if (__builtin_expect(++ip >= iend, 0)) { st->resume = label; goto suspend; } \
    case label: p = *ip; c = out[p];
// A value at `cursor`; then on to `then` with the structural byte after it current and
// `cursor` there. (An empty token begins with the structural byte, never a quote.)
#define SJ_VALUE(then) \
    if (out[cursor] == '"') { \
        if (checking && !(p - cursor - 2 < vcheck->strings)) sj_schema_string(st, vcheck->node, cursor, p); \
        cursor = p; \
        goto then; \
    } \
    if (p > cursor) { \
        int fraction = 0; \
        int scalar = sj_scalar(out + cursor, p - cursor, checking ? &fraction : NULL); \
        if (!scalar) return -1; \
        if (__builtin_expect(scalar == 2, 0)) { \
            if (checking) sj_count_number_keeping(st, out + cursor, p - cursor); \
            else sj_count_number(st, out + cursor, p - cursor); \
        } \
        if (checking) { \
            uint32_t kind = (uint32_t)sj_scalar_kind[out[cursor]] >> fraction; \
            if (!(vcheck->quick & kind)) sj_schema_scalar(st, vcheck->node, out + cursor, p - cursor, kind); \
        } \
        cursor = p; \
        goto then; \
    } \
    if (c == '{' || c == '[') { \
        if (checking) { \
            if (top >= st->frames_limit) return -1; \
            int32_t id = vcheck->node; \
            if (!(vcheck->quick & (c == '{' ? SW_OBJECT : SW_ARRAY))) id = sj_schema_open(st, id, c); \
            top->parent = vcheck; \
            top->seen = seen; \
            seen = 0; \
            vcheck = sj_schema_push(st->program, ++top, id, c == '['); \
        } else { \
            if (depth >= st->max_depth) return -1; \
            stack[depth++] = c == '['; \
        } \
        cursor = p + 1; \
        if (c == '{') goto object_begin; \
        goto array_begin; \
    } \
    return -1;

    switch (st->resume) {
    case 0:
        p = *ip; c = out[p];
        if (!st->allow_fragments && !(p == 0 && (c == '{' || c == '['))) return -1;
        SJ_VALUE(document_end)

    object_begin:
        SJ_NEXT(1)
        if (p == cursor && c == '}') goto scope_end;
    object_key:
        if (out[cursor] != '"') return -1;
        if (c != ':') return -1;
        if (checking) vcheck = sj_schema_member(st, top, vcheck, out + cursor + 1, p - cursor - 2, &seen);
        cursor = p + 1;
        SJ_NEXT(2)
        SJ_VALUE(object_next)
    object_continue:
        if (p != cursor) return -1;
    object_next:   // (a value just ended at p: cursor == p)
        if (c == ',') {
            cursor = p + 1;
            SJ_NEXT(3)
            goto object_key;
        }
        if (c == '}') goto scope_end;
        return -1;

    array_begin:
        SJ_NEXT(4)
        if (p == cursor && c == ']') goto scope_end;
    array_value:
        if (checking) {
            top->count += top->count < UINT32_MAX;
            vcheck = &top->items;
        }
        SJ_VALUE(array_next)
    array_continue:
        if (p != cursor) return -1;
    array_next:
        if (c == ',') {
            cursor = p + 1;
            SJ_NEXT(5)
            goto array_value;
        }
        if (c == ']') goto scope_end;
        return -1;

    scope_end:
        // The closer that is current matches: each label that comes here checked its kind.
        if (checking) {
            if (!sj_schema_closes(top, seen)) sj_schema_fail(st);
            top--;
            vcheck = top->parent;
            seen = top->seen;
        } else {
            depth--;
        }
        cursor = p + 1;
        SJ_NEXT(6)
        if (checking ? top == st->frames : depth == 0) goto document_end;
        if (checking ? top->array : stack[depth - 1]) goto array_continue;
        goto object_continue;

    document_end:
        // Only the sentinel may follow the top-level value.
        if (!final || ip + 1 != iend || p != cursor) return -1;
        st->resume = SJ_DOCUMENT_DONE;
        return 0;
    default:
        return -1;
    }
    return -1;
suspend:
    st->cursor = cursor;
    if (checking) {
        st->vcheck = vcheck;
        st->top = top;
        st->seen = seen;
    } else {
        st->depth = depth;
    }
    return 0;
#undef SJ_NEXT
#undef SJ_VALUE
}

// Not inlined: the hot loop keeps its own registers.
SJ_TARGET SJ_HOT static int sj_walk(sj_state *st, const uint32_t *idx, size_t count, int final) {
    return sj_walk_with(st, idx, count, final, 0);
}

SJ_TARGET SJ_HOT static int sj_walk_checking(sj_state *st, const uint32_t *idx, size_t count, int final) {
    return sj_walk_with(st, idx, count, final, 1);
}

// Normalizes the n bytes at `in` into `out`, which has room for n + 64 bytes, with the
// given kernel (serializerd_json_fast_available's numbers; the caller passes one this CPU
// runs). Returns the output length, or -1 when the input is not valid JSON (or too large
// for 32-bit positions: the caller's own path decides those).
// With `in_place`, 64 bytes after the input are readable too, and the output may be the
// input itself: then *output_is_input is set and nothing is written to `out`.
// With `numbers`, numbers[1] counts the numbers no double holds exactly (output.numbers),
// numbers[2] those whose verdict is left to NumberSafety (then numbers[1] is incomplete);
// NULL skips deciding them.
// With `program`, the contract's checks run in the walk (the rest of the signature is
// serializerd_json_fast_normalize_checked's); NULL is the plain normalizer.
SJ_TARGET __attribute__((always_inline)) static inline ptrdiff_t sj_normalize(const uint8_t *in, size_t n, uint8_t *out,
                                                                              int allow_fragments, size_t max_depth, int kernel,
                                                                              int in_place, int *output_is_input, size_t numbers[3],
                                                                              const sw_program *program, int32_t root,
                                                                              sw_deferrals *deferred, int *vouched) {
    if (program) *vouched = 0;
    if (n >= (1ULL << 31)) return -1;
    *output_is_input = 0;
    // The input as the walk reads it while it is the output (the walk never writes).
    uint8_t *const source = in_place ? (uint8_t *)(uintptr_t)in : NULL;
    sj_state st;
    memset(&st, 0, sizeof st);
    st.out = out;
    st.allow_fragments = allow_fragments;
    st.max_depth = max_depth;
    st.count_numbers = numbers != NULL;
    if (numbers) serializerd_note_number_check();
    // The check's frames, one per depth: the walk stops at max_depth before they run out.
    sw_frame local_frames[program ? SJ_LOCAL_FRAMES : 1];
    sw_frame *frames = local_frames;
    if (program && max_depth >= SJ_LOCAL_FRAMES) {
        frames = max_depth < SIZE_MAX / sizeof *frames - 1 ? (sw_frame *)malloc((max_depth + 1) * sizeof *frames) : NULL;
        if (!frames) return -1;
    }
    if (program) {
        st.program = program;
        st.top = st.frames = frames;
        st.frames_limit = frames + max_depth;
        st.deferred = deferred;
        st.root = serializerd_schema_check(program->nodes, root);
        st.vcheck = &st.root;
        st.vouching = 1;
    }
    uint8_t local_stack[1024];
    st.stack = max_depth < sizeof local_stack ? local_stack : (uint8_t *)malloc(max_depth + 1);
    // A chunk's positions: at most one per byte and the tail block's, the sentinel, and
    // slack for the stores of 4 (AVX2) or 16 (AVX-512) positions at a time.
    uint32_t idx[SJ_CHUNK + 64 + 80];
    uint32_t local_escapes[256];
    sj_escape_list escapes = {local_escapes, 0, sizeof local_escapes / sizeof local_escapes[0], 0, 0};
    ptrdiff_t result = -1;
    sj_scan scan;
    memset(&scan, 0, sizeof scan);
    scan.escapes = &escapes;
    scan.source = source;
    if (!st.stack) goto done;
    size_t i = 0;
    for (;;) {
        size_t end = n - i > SJ_CHUNK ? i + SJ_CHUNK : n;
        int final = end == n;
        size_t whole = (end - i) & ~(size_t)63;
        size_t count = sj_stage1(kernel, &scan, in + i, whole, out, idx, 0);
        i += whole;
        if (final) {
            // The tail, padded with spaces; always one such block, so UTF-8 cut off at the
            // very end is caught by the ASCII after it.
            uint8_t tail[64];
            memset(tail, ' ', sizeof tail);
            memcpy(tail, in + i, n - i);
            // The padding, and whitespace that ends the input (a final newline, say), may
            // go without the output ceasing to be the input: it is then its prefix.
            size_t t = n - i;
            while (t > 0 && (tail[t - 1] == ' ' || tail[t - 1] == '\n' || tail[t - 1] == '\r' || tail[t - 1] == '\t')) t--;
            scan.pad = ~0ULL << t;
            count += sj_stage1(kernel, &scan, tail, 64, out, idx + count, 1);
            i = n;
            if (scan.prev_in_string) goto done;   // an unterminated string
            // (Read in place, the byte there is the room's or trailing whitespace: the walk
            // fails any document that is not whole before it, whatever byte it is.)
            if (!scan.source) out[scan.w] = 0;
            idx[count++] = (uint32_t)scan.w;
        }
        if (scan.error || !_mm256_testz_si256(scan.utf8_error, scan.utf8_error)) goto done;
        st.out = scan.source ? source : out;
        st.w = scan.w;
        if ((program ? sj_walk_checking(&st, idx, count, final) : sj_walk(&st, idx, count, final)) < 0) goto done;
        if (final) break;
    }
    if (st.resume != SJ_DOCUMENT_DONE || escapes.failed) goto done;
    // Deferred values are found by their place in the output, which rewrites would move.
    if (program) *vouched = st.vouching && (escapes.count == 0 || deferred->count == 0);
    if (scan.source) {
        if (escapes.count == 0 && scan.w == n) {
            *output_is_input = 1;
            result = (ptrdiff_t)n;
            goto done;
        }
        // Escapes to rewrite, or trailing whitespace dropped: the output is written after all.
        memcpy(out, in, scan.w);
        st.out = out;
    }
    // The escapes, rewritten in order now that the grammar holds and every byte is written.
    for (size_t e = 0; e < escapes.count; e++) {
        int used = sj_escape(&st, escapes.at[e] - 1);
        if (used < 0) goto done;
        e += (size_t)used;
    }
    // After the last rewrite, the rest of the output moves down to its end.
    if (st.rw != st.rr) memmove(out + st.rw, out + st.rr, st.w - st.rr);
    result = (ptrdiff_t)(st.rw + st.w - st.rr);
done:
    if (numbers) { numbers[0] = st.numbers[0]; numbers[1] = st.numbers[1]; numbers[2] = st.numbers[2]; }
    if (st.stack && st.stack != local_stack) free(st.stack);
    if (frames != local_frames) free(frames);
    if (escapes.on_heap) free(escapes.at);
    return result;
}

SJ_TARGET ptrdiff_t serializerd_json_fast_normalize(const uint8_t *in, size_t n, uint8_t *out,
                                                   int allow_fragments, size_t max_depth, int kernel,
                                                   int in_place, int *output_is_input, size_t numbers[3]) {
    return sj_normalize(in, n, out, allow_fragments, max_depth, kernel, in_place, output_is_input, numbers, NULL, 0, NULL, NULL);
}

SJ_TARGET ptrdiff_t serializerd_json_fast_normalize_checked(const uint8_t *in, size_t n, uint8_t *out,
                                                           int allow_fragments, size_t max_depth, int kernel,
                                                           int in_place, int *output_is_input, size_t numbers[3],
                                                           const sw_program *program, int32_t root,
                                                           sw_deferrals *deferred, int *vouched) {
    return sj_normalize(in, n, out, allow_fragments, max_depth, kernel, in_place, output_is_input, numbers, program, root,
                        deferred, vouched);
}

#else
int serializerd_json_fast_available(void) { return 0; }
ptrdiff_t serializerd_json_fast_normalize(const uint8_t *in, size_t n, uint8_t *out,
                                          int allow_fragments, size_t max_depth, int kernel,
                                          int in_place, int *output_is_input, size_t numbers[3]) {
    (void)in; (void)n; (void)out; (void)allow_fragments; (void)max_depth; (void)kernel; (void)in_place;
    *output_is_input = 0;
    if (numbers) numbers[0] = numbers[1] = numbers[2] = 0;
    if (numbers) serializerd_note_number_check();
    return -1;
}
ptrdiff_t serializerd_json_fast_normalize_checked(const uint8_t *in, size_t n, uint8_t *out,
                                                  int allow_fragments, size_t max_depth, int kernel,
                                                  int in_place, int *output_is_input, size_t numbers[3],
                                                  const sw_program *program, int32_t root,
                                                  sw_deferrals *deferred, int *vouched) {
    (void)program; (void)root; (void)deferred;
    *vouched = 0;
    return serializerd_json_fast_normalize(in, n, out, allow_fragments, max_depth, kernel, in_place, output_is_input, numbers);
}
#endif

// Outside the x86-64 guard: every platform counts.
static _Thread_local size_t sj_number_checks;
size_t serializerd_number_checks(void) { return sj_number_checks; }
void serializerd_note_number_check(void) { sj_number_checks++; }


static _Thread_local uint8_t sj_scratch[SERIALIZERD_JSON_SCRATCH];
uint8_t *serializerd_json_scratch(void) { return sj_scratch; }
