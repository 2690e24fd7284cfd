/* Per-event latency of SSE streams for bench/streams.sh, in C so the client adds little
 * of its own: STREAMS connections to URL's host:port and path, read for SECONDS with
 * epoll; each `data:` line's "t" (CLOCK_MONOTONIC ns when the origin wrote it) against
 * the time it was read. Prints: events N p50_us X p99_us Y. Loopback only.
 *   latency PORT PATH STREAMS SECONDS */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "samples.h"

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "latency PORT PATH STREAMS SECONDS\n"); return 2; }
    int port = atoi(argv[1]), streams = atoi(argv[3]);
    double seconds = atof(argv[4]);
    int ep = epoll_create1(0);
    char request[1024];
    snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", argv[2]);
    for (int i = 0; i < streams; i++) {
        int fd = connect_loopback(port);
        if (fd < 0) return 1;
        if (write(fd, request, strlen(request)) < 0) { perror("write"); return 1; }
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
    struct samples samples = samples_new((size_t)1 << 20);
    static char buf[1 << 16];
    long long end = now_ns() + (long long)(seconds * 1e9);
    struct epoll_event ready[256];
    while (now_ns() < end) {
        int k = epoll_wait(ep, ready, 256, 100);
        for (int j = 0; j < k; j++) {
            ssize_t got = read(ready[j].data.fd, buf, sizeof buf - 1);
            if (got <= 0) { epoll_ctl(ep, EPOLL_CTL_DEL, ready[j].data.fd, NULL); continue; }
            long long at = now_ns();
            buf[got] = 0;
            /* Events are written whole by the origin and forwarded whole: each "t" in
             * this read is one event's. */
            for (char *p = buf; (p = strstr(p, "\"t\":")) != NULL; p += 4) {
                long long t = strtoll(p + 4, NULL, 10);
                if (t > 0) samples_add(&samples, at - t);
            }
        }
    }
    samples_report(&samples, "events");
    return 0;
}
