/* WebSocket echo round trips for bench/streams.sh, in C so the client adds little of its
 * own: CONNS WebSockets to 127.0.0.1:PORT PATH, each sending a SIZE-byte text message
 * and waiting for its echo before the next, for SECONDS, with epoll. Prints: messages N
 * p50_us X p99_us Y. SIZE 0 only opens the WebSockets and holds them for SECONDS
 * (memory), printing `open N` once all are open. Loopback only.
 *   wsecho PORT PATH CONNS SECONDS SIZE */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
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

struct conn { int fd; long long sent; size_t got; };

static unsigned char *frame;
static size_t frame_len, echo_len;

static int send_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Connects and completes the handshake (blocking); -1 on failure. */
static int open_ws(int port, const char *path) {
    int fd = connect_loopback(port);
    if (fd < 0) return -1;
    char request[512];
    snprintf(request, sizeof request,
             "GET %s HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path);
    if (send_all(fd, request, strlen(request)) != 0) return -1;
    char head[4096];
    size_t n = 0;
    while (n < sizeof head - 1) {
        ssize_t r = read(fd, head + n, 1);   /* byte by byte: nothing past the head is taken */
        if (r <= 0) return -1;
        n += (size_t)r;
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0) break;
    }
    head[n] = 0;
    if (strncmp(head, "HTTP/1.1 101", 12) != 0) { fprintf(stderr, "not switched: %s\n", head); return -1; }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "wsecho PORT PATH CONNS SECONDS SIZE\n"); return 2; }
    int port = atoi(argv[1]), conns = atoi(argv[3]);
    double seconds = atof(argv[4]);
    size_t size = (size_t)atol(argv[5]);
    struct conn *c = calloc((size_t)conns, sizeof *c);
    for (int i = 0; i < conns; i++) {
        if ((c[i].fd = open_ws(port, argv[2])) < 0) return 1;
    }
    if (size == 0) {
        printf("open %d\n", conns);
        fflush(stdout);
        usleep((useconds_t)(seconds * 1e6));
        return 0;
    }
    /* A masked text frame of SIZE bytes of JSON-ish text; the echo comes back unmasked. */
    size_t header = size < 126 ? 2 : size < 65536 ? 4 : 10;
    frame_len = header + 4 + size;
    echo_len = header + size;
    frame = malloc(frame_len);
    frame[0] = 0x81;
    if (header == 2) frame[1] = 0x80 | (unsigned char)size;
    else if (header == 4) { frame[1] = 0x80 | 126; frame[2] = (unsigned char)(size >> 8); frame[3] = (unsigned char)size; }
    else { frame[1] = 0x80 | 127; for (int k = 0; k < 8; k++) frame[2 + k] = (unsigned char)((unsigned long long)size >> (56 - 8 * k)); }
    unsigned char mask[4] = { 0x12, 0x34, 0x56, 0x78 };
    memcpy(frame + header, mask, 4);
    for (size_t k = 0; k < size; k++) frame[header + 4 + k] = (unsigned char)("{\"k\": 1.50, \"v\": [1, 2]} "[k % 26]) ^ mask[k & 3];
    int ep = epoll_create1(0);
    for (int i = 0; i < conns; i++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (unsigned)i };
        epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev);
        c[i].sent = now_ns();
        if (send_all(c[i].fd, frame, frame_len) != 0) return 1;
    }
    struct samples samples = samples_new((size_t)1 << 22);
    static char buf[1 << 16];
    long long end = now_ns() + (long long)(seconds * 1e9);
    struct epoll_event ready[256];
    while (now_ns() < end) {
        int k = epoll_wait(ep, ready, 256, 100);
        for (int j = 0; j < k; j++) {
            struct conn *x = &c[ready[j].data.u32];
            ssize_t got;
            while ((got = read(x->fd, buf, sizeof buf)) > 0) x->got += (size_t)got;
            if (got == 0) { epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL); continue; }
            if (x->got >= echo_len) {
                long long at = now_ns();
                samples_add(&samples, at - x->sent);
                x->got -= echo_len;
                x->sent = at;
                if (send_all(x->fd, frame, frame_len) != 0) epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
            }
        }
    }
    samples_report(&samples, "messages");
    return 0;
}
