#include "cshims.h"

CURLcode cshim_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode cshim_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode cshim_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode cshim_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode cshim_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode cshim_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode cshim_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode cshim_easy_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode cshim_easy_getinfo_socket(CURL *easy, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLMcode cshim_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
CURLMcode cshim_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}
CURLcode cshim_easy_setopt_write_function(CURL *easy, curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}
CURLcode cshim_easy_setopt_header_function(CURL *easy, curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
}
CURLMcode cshim_multi_setopt_socket_function(CURLM *multi, curl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}
CURLMcode cshim_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

// A cookie jar shared by every worker's handles: libcurl's share interface with one
// mutex serialising its cookie (and DNS) data, as CURLSHOPT_LOCKFUNC requires.
#include <pthread.h>
#include <stdlib.h>

struct cshim_jar {
    CURLSH *share;
    pthread_mutex_t mutex;
};

static void cshim_jar_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle; (void)data; (void)access;
    pthread_mutex_lock(&((struct cshim_jar *)user)->mutex);
}

static void cshim_jar_unlock(CURL *handle, curl_lock_data data, void *user) {
    (void)handle; (void)data;
    pthread_mutex_unlock(&((struct cshim_jar *)user)->mutex);
}

struct cshim_jar *cshim_jar_new(void) {
    struct cshim_jar *jar = calloc(1, sizeof *jar);
    if (!jar) return NULL;
    jar->share = curl_share_init();
    if (!jar->share || pthread_mutex_init(&jar->mutex, NULL) != 0) {
        if (jar->share) curl_share_cleanup(jar->share);
        free(jar);
        return NULL;
    }
    if (curl_share_setopt(jar->share, CURLSHOPT_LOCKFUNC, cshim_jar_lock) != CURLSHE_OK
        || curl_share_setopt(jar->share, CURLSHOPT_UNLOCKFUNC, cshim_jar_unlock) != CURLSHE_OK
        || curl_share_setopt(jar->share, CURLSHOPT_USERDATA, jar) != CURLSHE_OK
        || curl_share_setopt(jar->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) != CURLSHE_OK) {
        curl_share_cleanup(jar->share);
        pthread_mutex_destroy(&jar->mutex);
        free(jar);
        return NULL;
    }
    return jar;
}

CURLSH *cshim_jar_share(struct cshim_jar *jar) { return jar->share; }

void cshim_jar_free(struct cshim_jar *jar) {
    curl_share_cleanup(jar->share);
    pthread_mutex_destroy(&jar->mutex);
    free(jar);
}
