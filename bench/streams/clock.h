/* What the C clients and origin of bench/streams.sh share: the monotonic clock every
 * latency is read on (the origin stamps events with it, the clients compare), and the
 * sort order of samples. */
#ifndef BENCH_STREAMS_CLOCK_H
#define BENCH_STREAMS_CLOCK_H
#include <time.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int cmp_samples(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif
