#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>

// Macros Swift cannot import, as functions.
static inline long parlor_ssl_ctx_set_min_tls12(SSL_CTX *ctx) { return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline long parlor_ssl_ctx_set_modes(SSL_CTX *ctx) {
    // Partial writes and moving buffers: our output queue hands SSL_write whatever is pending, chunk by chunk.
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}

#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <stdio.h>
#include <time.h>

// Writes a P-256 key (mode 0600) and a self-signed certificate for `common_name`, valid `days` days, with
// `subject_alt_names` (e.g. "DNS:localhost,IP:127.0.0.1") when not NULL. Returns 1 on success.
static inline int parlor_write_self_signed(const char *cert_path, const char *key_path, const char *common_name,
                                           const char *subject_alt_names, long days) {
    int ok = 0;
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    FILE *key_file = NULL, *cert_file = NULL;
    if (!key || !cert) goto done;
    ASN1_INTEGER_set(X509_get_serialNumber(cert), (long)time(NULL));
    X509_set_version(cert, 2);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), days * 86400L);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)common_name, -1, -1, 0);
    X509_set_issuer_name(cert, name);
    if (subject_alt_names) {
        X509V3_CTX ctx;
        X509V3_set_ctx_nodb(&ctx);
        X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
        X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, subject_alt_names);
        if (!extension) goto done;
        X509_add_ext(cert, extension, -1);
        X509_EXTENSION_free(extension);
    }
    if (!X509_sign(cert, key, EVP_sha256())) goto done;
    key_file = fopen(key_path, "w");
    if (!key_file) goto done;
    chmod(key_path, 0600);
    if (!PEM_write_PrivateKey(key_file, key, NULL, NULL, 0, NULL, NULL)) goto done;
    cert_file = fopen(cert_path, "w");
    if (!cert_file || !PEM_write_X509(cert_file, cert)) goto done;
    ok = 1;
done:
    if (key_file) fclose(key_file);
    if (cert_file) fclose(cert_file);
    X509_free(cert);
    EVP_PKEY_free(key);
    return ok;
}
