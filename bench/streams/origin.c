/* An SSE origin in C for bench/streams.sh's latency part, so that the origin adds little
 * jitter of its own: prints its port, then answers every request with a chunked
 * text/event-stream of one event of about SIZE bytes every GAP_MS on each connection,
 * each event's data carrying "t", the CLOCK_MONOTONIC ns it was written. One thread; a
 * 0.5 ms timerfd tick writes each stream whose turn has come, the streams' turns spread
 * over the gap (not all at once, which would measure a burst's queue). Loopback only.
 *   origin GAP_MS SIZE */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "samples.h"

#define MAX_CONNS 8192

static int streaming[MAX_CONNS];   /* by fd: 1 once the head has gone */
static long long due[MAX_CONNS];   /* by fd: when its next event is due (ns) */

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "origin GAP_MS SIZE\n"); return 2; }
    int gap_ms = atoi(argv[1]), size = atoi(argv[2]);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = inet_addr("127.0.0.1");
    if (bind(listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(listener, 4096) != 0) { perror("listen"); return 1; }
    socklen_t len = sizeof a;
    getsockname(listener, (struct sockaddr *)&a, &len);
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
    epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    struct itimerspec spec = { .it_interval = { 0, 500000L }, .it_value = { 0, 500000L } };
    long long gap = (long long)gap_ms * 1000000LL;
    unsigned spread = 0;
    timerfd_settime(timer, 0, &spec, NULL);
    ev.data.fd = timer;
    epoll_ctl(ep, EPOLL_CTL_ADD, timer, &ev);
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    char *pad = malloc((size_t)size + 1);
    memset(pad, 'x', (size_t)size);
    pad[size] = 0;
    char *event = malloc((size_t)size + 256), *chunk = malloc((size_t)size + 300);
    char buf[8192];
    struct epoll_event ready[256];
    for (;;) {
        int k = epoll_wait(ep, ready, 256, -1);
        for (int j = 0; j < k; j++) {
            int fd = ready[j].data.fd;
            if (fd == listener) {
                int c;
                while ((c = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (c >= MAX_CONNS) { close(c); continue; }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    streaming[c] = 0;
                    struct epoll_event e = { .events = EPOLLIN, .data.fd = c };
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
                }
            } else if (fd == timer) {
                unsigned long long ticks;
                if (read(timer, &ticks, sizeof ticks) < 0) continue;
                long long now = now_ns();
                for (int c = 0; c < MAX_CONNS; c++) {
                    if (!streaming[c] || due[c] > now) continue;
                    due[c] += gap;
                    if (due[c] < now) due[c] = now + gap;   /* never a burst to catch up */
                    int body = snprintf(event, (size_t)size + 256, "data: {\"t\": %lld, \"kind\": \"tick\", \"values\": [1.25, 2.5, 3.75], \"pad\": \"%.*s\"}\n\n",
                                        now_ns(), size > 120 ? size - 120 : 0, pad);
                    int n = snprintf(chunk, (size_t)size + 300, "%x\r\n%s\r\n", body, event);
                    if (write(c, chunk, (size_t)n) != n) { streaming[c] = 0; close(c); }
                }
            } else {
                ssize_t got = read(fd, buf, sizeof buf);
                if (got <= 0) { streaming[fd] = 0; close(fd); continue; }
                /* A request's head (GETs only): the stream starts. */
                if (!streaming[fd] && memmem(buf, (size_t)got, "\r\n\r\n", 4)) {
                    if (write(fd, head, sizeof head - 1) == (ssize_t)(sizeof head - 1)) {
                        streaming[fd] = 1;
                        /* Turns spread over the gap in steps of 1/64 of it. */
                        due[fd] = now_ns() + gap * (spread++ % 64) / 64;
                    }
                }
            }
        }
    }
}
