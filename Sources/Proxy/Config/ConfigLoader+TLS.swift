
import HTTPCore
import Upstream
#if canImport(Glibc)
import Glibc
#endif

extension ConfigLoader {
    /// The most a `tls:` file may hold: Debian's whole CA bundle is about 220 KB.
    static let maxTLSFileBytes = 4 << 20
    /// The most `pinned_public_keys` entries.
    static let maxPins = 4096

    /// A route's `tls:`; nil when absent. Every file is read and checked now.
    static func tls(_ node: ConfigNode?) throws(ConfigError) -> TLSPolicy? {
        guard let node else { return nil }
        let m = try node.mapping(allowed: ["ca_file", "pinned_public_keys", "client_certificate", "client_key", "verify", "min_version"])
        var caBundle: [UInt8]?
        if let n = m["ca_file"] {
            let bytes = try tlsFile(n)
            if case .failure(let error) = TLSFiles.certificates(bytes) { throw n.error("ca_file: \(error.message)") }
            caBundle = bytes
        }
        var pins: [String] = []
        if let list = m["pinned_public_keys"] {
            let items = try list.sequence()
            guard items.count <= maxPins else { throw list.error("at most \(maxPins) pins, found \(items.count)") }
            for item in items {
                let pin = try item.string()
                guard PublicKeyPin.isValid(pin) else {
                    throw item.error("expected sha256// and the base64 SHA-256 of the public key (openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64), found '\(pin)'")
                }
                pins.append(pin)
            }
        }
        var certificate: [UInt8]?, key: [UInt8]?
        switch (m["client_certificate"], m["client_key"]) {
        case (nil, nil): break
        case (let c?, nil): throw c.error("client_certificate needs client_key")
        case (nil, let k?): throw k.error("client_key needs client_certificate")
        case (let c?, let k?):
            let certBytes = try tlsFile(c), keyBytes = try tlsFile(k)
            if let error = TLSFiles.keyPair(certificate: certBytes, key: keyBytes) { throw k.error(error.message) }
            (certificate, key) = (certBytes, keyBytes)
        }
        let verify = try m["verify"]?.bool() ?? true
        var minVersion: TLSPolicy.Version?
        if let n = m["min_version"] {
            let text = try n.string()
            guard let version = TLSPolicy.Version(rawValue: text) else { throw n.error("expected 1.2 or 1.3, found '\(text)'") }
            minVersion = version
        }
        return TLSPolicy(caBundle: caBundle, pinnedPublicKeys: pins, clientCertificate: certificate, clientKey: key, verify: verify,
                         minVersion: minVersion)
    }

    /// A file a `tls:` key names (relative to the config file): a readable regular file of
    /// at most `maxTLSFileBytes`.
    static func tlsFile(_ node: ConfigNode) throws(ConfigError) -> [UInt8] {
        try regularFile(node, path: relative(try node.string(), to: node.file), maxBytes: maxTLSFileBytes, what: "a PEM file")
    }
}
