#include "tlscheck.h"
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>

// An encrypted key is refused, never prompted for: a daemon has no terminal to ask on.
static int no_passphrase(char *buffer, int size, int rwflag, void *user) {
    (void)buffer; (void)size; (void)rwflag; (void)user;
    return -1;
}

static void say(char *error, size_t capacity, const char *what) {
    unsigned long code = ERR_peek_last_error();
    char reason[160] = "";
    if (code) ERR_error_string_n(code, reason, sizeof reason);
    snprintf(error, capacity, "%s%s%s", what, reason[0] ? ": " : "", reason);
    ERR_clear_error();
}

int tlscheck_certificates(const char *pem, size_t length, int *count, char *error, size_t capacity) {
    *count = 0;
    BIO *bio = BIO_new_mem_buf(pem, (int)length);
    if (!bio) { say(error, capacity, "out of memory"); return -1; }
    X509 *certificate;
    while ((certificate = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL)) != NULL) {
        X509_free(certificate);
        (*count)++;
    }
    BIO_free(bio);
    // The loop ends at the end of the file (PEM_R_NO_START_LINE) or at a broken block.
    unsigned long last = ERR_peek_last_error();
    int clean_end = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
    if (*count == 0) { say(error, capacity, "no PEM certificate in the file"); return -1; }
    if (last && !clean_end) { say(error, capacity, "a certificate in the file cannot be read"); return -1; }
    ERR_clear_error();
    return 0;
}

int tlscheck_key_pair(const char *certificate, size_t certificate_length, const char *key, size_t key_length,
                      char *error, size_t capacity) {
    BIO *cbio = BIO_new_mem_buf(certificate, (int)certificate_length);
    BIO *kbio = BIO_new_mem_buf(key, (int)key_length);
    X509 *x509 = cbio ? PEM_read_bio_X509(cbio, NULL, no_passphrase, NULL) : NULL;
    EVP_PKEY *pkey = (kbio && x509) ? PEM_read_bio_PrivateKey(kbio, NULL, no_passphrase, NULL) : NULL;
    int result = -1;
    if (!x509) {
        say(error, capacity, "client_certificate holds no PEM certificate");
    } else if (!pkey) {
        if (strstr(key, "ENCRYPTED")) {
            ERR_clear_error();
            snprintf(error, capacity, "client_key is encrypted with a passphrase; serializerd takes an unencrypted PEM key "
                     "(openssl pkey -in KEY -out KEY.plain, kept mode 0600)");
        } else {
            say(error, capacity, "client_key holds no PEM private key");
        }
    } else if (X509_check_private_key(x509, pkey) != 1) {
        say(error, capacity, "client_key does not belong to client_certificate");
    } else {
        result = 0;
    }
    EVP_PKEY_free(pkey);
    X509_free(x509);
    BIO_free(kbio);
    BIO_free(cbio);
    ERR_clear_error();
    return result;
}

int tlscheck_websocket_accept(const char *key, size_t length, char *out, size_t capacity) {
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char input[128 + sizeof guid];
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (capacity < 29 || length > 128) return -1;
    memcpy(input, key, length);
    memcpy(input + length, guid, sizeof guid - 1);
    if (EVP_Digest(input, length + sizeof guid - 1, digest, &size, EVP_sha1(), NULL) != 1 || size != 20) return -1;
    EVP_EncodeBlock((unsigned char *)out, digest, 20);
    return 0;
}
