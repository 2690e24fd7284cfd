internal import CCurl
internal import CShims
internal import CTLS

/// A route's security policy (DESIGN §2 `tls:`, AFSecurityPolicy): the trusted roots,
/// public-key pins, a client certificate, whether to verify at all, the lowest TLS
/// version. The files' bytes are read once, at load or reload; libcurl gets copies.
public final class TLSPolicy: Sendable {
    public enum Version: String, Sendable, CaseIterable {
        case v1_2 = "1.2", v1_3 = "1.3"
    }

    /// PEM: the roots trusted instead of the system's.
    public let caBundle: [UInt8]?
    public let pinnedPublicKeys: [String]
    public let clientCertificate: [UInt8]?
    public let clientKey: [UInt8]?
    /// false: any certificate, any name (AF's allowInvalidCertificates and no
    /// validatesDomainName). Logged as a warning at every load.
    public let verify: Bool
    public let minVersion: Version?
    /// Tells policies apart: the session keeps transfer handles per policy.
    public let key: String

    public init(caBundle: [UInt8]?, pinnedPublicKeys: [String], clientCertificate: [UInt8]?, clientKey: [UInt8]?, verify: Bool,
                minVersion: Version?) {
        self.caBundle = caBundle
        self.pinnedPublicKeys = pinnedPublicKeys
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
        self.verify = verify
        self.minVersion = minVersion
        var hasher = FNV()
        for part in [caBundle ?? [], Array(pinnedPublicKeys.joined(separator: ";").utf8), clientCertificate ?? [], clientKey ?? [],
                     [verify ? 1 : 0], Array((minVersion?.rawValue ?? "").utf8)] {
            hasher.add(part)
        }
        key = hasher.text
    }

    /// Sets the policy on a handle made for it (handles never change policy).
    func apply(to easy: UnsafeMutableRawPointer) throws(CurlError) {
        if let caBundle {
            // Only these roots: neither the built-in bundle file nor the certificate directory.
            try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_CAINFO, nil), "CURLOPT_CAINFO")
            try Curl.check(cshim_easy_setopt_pointer(easy, CURLOPT_CAPATH, nil), "CURLOPT_CAPATH")
            try Self.blob(easy, CURLOPT_CAINFO_BLOB, caBundle, "CURLOPT_CAINFO_BLOB")
        }
        if !pinnedPublicKeys.isEmpty {
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_PINNEDPUBLICKEY, pinnedPublicKeys.joined(separator: ";")),
                           "CURLOPT_PINNEDPUBLICKEY")
        }
        if let clientCertificate, let clientKey {
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_SSLCERTTYPE, "PEM"), "CURLOPT_SSLCERTTYPE")
            try Self.blob(easy, CURLOPT_SSLCERT_BLOB, clientCertificate, "CURLOPT_SSLCERT_BLOB")
            try Curl.check(cshim_easy_setopt_string(easy, CURLOPT_SSLKEYTYPE, "PEM"), "CURLOPT_SSLKEYTYPE")
            try Self.blob(easy, CURLOPT_SSLKEY_BLOB, clientKey, "CURLOPT_SSLKEY_BLOB")
        }
        if !verify {
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0), "CURLOPT_SSL_VERIFYPEER")
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0), "CURLOPT_SSL_VERIFYHOST")
        }
        if let minVersion {
            let value = minVersion == .v1_3 ? CURL_SSLVERSION_TLSv1_3 : CURL_SSLVERSION_TLSv1_2
            try Curl.check(cshim_easy_setopt_long(easy, CURLOPT_SSLVERSION, Int(value)), "CURLOPT_SSLVERSION")
        }
    }

    /// A TLS failure in words, with the setting that decides it; nil for other codes.
    static func cause(of code: CURLcode) -> String? {
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION:
            "the upstream's certificate is not trusted (expired, self-signed, from an unknown issuer or for another host name; tls.ca_file, tls.verify)"
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: "the upstream's public key is not one of tls.pinned_public_keys"
        case CURLE_SSL_CONNECT_ERROR:
            "the TLS handshake failed (the upstream refused the client certificate, or no TLS version or cipher in common; tls.client_certificate, tls.min_version)"
        case CURLE_SSL_CERTPROBLEM: "the client certificate could not be used (tls.client_certificate)"
        case CURLE_SSL_CACERT_BADFILE: "the trusted roots could not be loaded (tls.ca_file)"
        default: nil
        }
    }

    /// libcurl copies the bytes (CURL_BLOB_COPY).
    private static func blob(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ bytes: [UInt8], _ name: StaticString) throws(CurlError) {
        let code = bytes.withUnsafeBytes { raw -> CURLcode in
            var blob = curl_blob(data: UnsafeMutableRawPointer(mutating: raw.baseAddress), len: raw.count, flags: UInt32(CURL_BLOB_COPY))
            return withUnsafeMutablePointer(to: &blob) { cshim_easy_setopt_pointer(easy, option, $0) }
        }
        try Curl.check(code, name)
    }

    /// FNV-1a over the parts, each ended by its length: the pool key.
    struct FNV {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func add(_ bytes: [UInt8]) {
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            for b in withUnsafeBytes(of: UInt64(bytes.count).littleEndian, Array.init) { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
        var text: String { String(h, radix: 16) }
    }
}
