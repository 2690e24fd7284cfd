#ifndef SERIALIZERD_TLSCHECK_H
#define SERIALIZERD_TLSCHECK_H
// A route's TLS files checked at load with OpenSSL (libcurl's TLS library): the
// certificates a file holds, and whether a private key belongs to its certificate.
// Each returns 0 when the file is usable, else -1 with a message in `error`.
#include <stddef.h>

int tlscheck_certificates(const char *pem, size_t length, int *count, char *error, size_t capacity);
int tlscheck_key_pair(const char *certificate, size_t certificate_length, const char *key, size_t key_length,
                      char *error, size_t capacity);
// Sec-WebSocket-Accept for a key (RFC 6455 §4.2.2): base64(SHA-1(key + GUID)), 28
// characters and a NUL written to `out`.
int tlscheck_websocket_accept(const char *key, size_t length, char *out, size_t capacity);

#endif
