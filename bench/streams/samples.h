/* What the C clients and origin of bench/streams.sh share: the monotonic clock every
 * latency is read on (the origin stamps events with it, the clients compare), the
 * clients' loopback connection, and their latency samples, bounded, and their report. */
#ifndef BENCH_STREAMS_SAMPLES_H
#define BENCH_STREAMS_SAMPLES_H
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

static inline long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A connection to 127.0.0.1:port with Nagle off; -1 on failure. */
static inline int connect_loopback(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = inet_addr("127.0.0.1");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return -1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static inline int cmp_samples(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Latencies in µs, at most `cap` of them (later ones are not kept). */
struct samples { double *values; size_t n, cap; };

static inline struct samples samples_new(size_t cap) {
    struct samples s = { malloc(cap * sizeof(double)), 0, cap };
    return s;
}

static inline void samples_add(struct samples *s, long long ns) {
    if (s->n < s->cap) s->values[s->n++] = ns / 1000.0;
}

/* `<what> N p50_us X p99_us Y`, the line bench/streams.sh reads. */
static inline void samples_report(struct samples *s, const char *what) {
    if (s->n == 0) { printf("%s 0 p50_us 0 p99_us 0\n", what); return; }
    qsort(s->values, s->n, sizeof *s->values, cmp_samples);
    printf("%s %zu p50_us %.1f p99_us %.1f\n", what, s->n, s->values[s->n / 2], s->values[(size_t)(s->n * 0.99)]);
}
#endif
