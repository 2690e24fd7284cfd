/*
 * The serializerd stack without serializerd: libevent's evhttp in front, libcurl's multi
 * interface on the same event_base behind, bodies passed through untouched. The floor
 * serializerd's proxy path is measured against (bench/proxy.sh with EVCURL=1).
 *
 *   evcurl_proxy PORT UPSTREAM_BASE [--serializerd-options]
 *                                          e.g. evcurl_proxy 18085 http://127.0.0.1:18081
 *
 * --serializerd-options sets the libcurl options serializerd sets on every task
 * (protocols, no proxy, decoded encodings, 64 KB reads, timeouts, size cap, a header
 * callback, Expect: off, X-Forwarded-For and X-Request-Id), so what libcurl itself costs
 * with serializerd's settings can be told apart from what serializerd adds.
 *
 * Loopback only; one thread; no error pages beyond 502.
 */
#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct event_base *base;
static CURLM *multi;
static struct event *timer;
static const char *upstream;
static int serializerd_options;

struct task {
    struct evhttp_request *req;
    struct evbuffer *body;
    CURL *easy;
    char *url;
    struct curl_slist *headers;
};

static CURL *idle[64];
static int idle_count;

static size_t on_header(char *data, size_t size, size_t count, void *arg) { return size * count; }

static size_t on_body(char *data, size_t size, size_t count, void *arg) {
    struct task *t = arg;
    evbuffer_add(t->body, data, size * count);
    return size * count;
}

static void drain(void) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL *easy = msg->easy_handle;
        CURLcode result = msg->data.result;
        struct task *t;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
        long status = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(multi, easy);
        if (result == CURLE_OK) {
            evhttp_add_header(evhttp_request_get_output_headers(t->req), "Content-Type", "application/json");
            evhttp_send_reply(t->req, (int)status, "OK", t->body);
        } else {
            evhttp_send_reply(t->req, 502, "Bad Gateway", NULL);
        }
        if (idle_count < 64) { curl_easy_reset(easy); idle[idle_count++] = easy; } else curl_easy_cleanup(easy);
        evbuffer_free(t->body);
        curl_slist_free_all(t->headers);
        free(t->url);
        free(t);
    }
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg) {
    int running;
    int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    curl_multi_socket_action(multi, fd, flags, &running);
    drain();
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
    int running;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain();
}

static int socket_cb(CURL *easy, curl_socket_t s, int action, void *userp, void *socketp) {
    struct event *ev = socketp;
    if (action == CURL_POLL_REMOVE) {
        if (ev) { event_del(ev); event_free(ev); curl_multi_assign(multi, s, NULL); }
        return 0;
    }
    short kind = EV_PERSIST | (action & CURL_POLL_IN ? EV_READ : 0) | (action & CURL_POLL_OUT ? EV_WRITE : 0);
    if (ev) { event_del(ev); event_assign(ev, base, s, kind, on_socket_event, NULL); }
    else { ev = event_new(base, s, kind, on_socket_event, NULL); curl_multi_assign(multi, s, ev); }
    event_add(ev, NULL);
    return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp) {
    if (ms < 0) { evtimer_del(timer); return 0; }
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    evtimer_add(timer, &tv);
    return 0;
}

static void on_request(struct evhttp_request *req, void *arg) {
    struct task *t = calloc(1, sizeof *t);
    t->req = req;
    t->body = evbuffer_new();
    const char *uri = evhttp_request_get_uri(req);
    size_t len = strlen(upstream) + strlen(uri) + 1;
    t->url = malloc(len);
    snprintf(t->url, len, "%s%s", upstream, uri);
    t->easy = idle_count ? idle[--idle_count] : curl_easy_init();
    curl_easy_setopt(t->easy, CURLOPT_URL, t->url);
    curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t->easy, CURLOPT_PROXY, "");
    curl_easy_setopt(t->easy, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
    if (serializerd_options) {
        curl_easy_setopt(t->easy, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(t->easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(t->easy, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(t->easy, CURLOPT_BUFFERSIZE, 65536L);
        curl_easy_setopt(t->easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        curl_easy_setopt(t->easy, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(t->easy, CURLOPT_MAXREDIRS, 0L);
        curl_easy_setopt(t->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)33554432);
        curl_easy_setopt(t->easy, CURLOPT_HEADERFUNCTION, on_header);
        t->headers = curl_slist_append(NULL, "Expect:");
        t->headers = curl_slist_append(t->headers, "X-Forwarded-For: 127.0.0.1");
        t->headers = curl_slist_append(t->headers, "X-Request-Id: 0123456789abcdef");
        curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, t->headers);
    }
    curl_multi_add_handle(multi, t->easy);
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--serializerd-options"))) {
        fprintf(stderr, "usage: %s PORT UPSTREAM_BASE [--serializerd-options]\n", argv[0]);
        return 64;
    }
    upstream = argv[2];
    serializerd_options = argc == 4;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    base = event_base_new();
    multi = curl_multi_init();
    timer = evtimer_new(base, on_timer, NULL);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, timer_cb);

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);   /* inherited by accepted sockets */
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])) };
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) || listen(fd, 1024)) { perror("bind"); return 1; }
    struct evhttp *http = evhttp_new(base);
    evhttp_set_gencb(http, on_request, NULL);
    evhttp_accept_socket(http, fd);
    event_base_dispatch(base);
    return 0;
}
