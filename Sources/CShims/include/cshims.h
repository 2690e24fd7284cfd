#ifndef SERIALIZERD_CSHIMS_H
#define SERIALIZERD_CSHIMS_H
// Typed wrappers for libcurl's variadic setopt/getinfo, which Swift cannot call.
// One wrapper per argument shape; long options always go through the long wrapper.
#include <curl/curl.h>

CURLcode cshim_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode cshim_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode cshim_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode cshim_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value);
CURLcode cshim_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode cshim_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);
CURLcode cshim_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value);
CURLcode cshim_easy_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value);
CURLcode cshim_easy_getinfo_socket(CURL *easy, CURLINFO info, curl_socket_t *value);
CURLMcode cshim_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode cshim_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);

CURLcode cshim_easy_setopt_write_function(CURL *easy, curl_write_callback callback);
CURLcode cshim_easy_setopt_header_function(CURL *easy, curl_write_callback callback);
CURLMcode cshim_multi_setopt_socket_function(CURLM *multi, curl_socket_callback callback);
CURLMcode cshim_multi_setopt_timer_function(CURLM *multi, curl_multi_timer_callback callback);

struct cshim_jar;
struct cshim_jar *cshim_jar_new(void);
CURLSH *cshim_jar_share(struct cshim_jar *jar);
void cshim_jar_free(struct cshim_jar *jar);

#endif
