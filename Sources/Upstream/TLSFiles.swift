internal import CCurl
internal import CShims
internal import CTLS

/// What a route's TLS files must be, checked when the configuration loads.
public enum TLSFiles {
    /// The certificates a PEM file holds (at least one, every one readable).
    public static func certificates(_ pem: [UInt8]) -> Result<Int, TLSFileError> {
        var count: Int32 = 0
        var error = [CChar](repeating: 0, count: 512)
        let status = pem.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { tlscheck_certificates($0.baseAddress, $0.count, &count, &error, error.count) }
        }
        return status == 0 ? .success(Int(count)) : .failure(TLSFileError(message: Self.text(error)))
    }

    /// Whether `key` (unencrypted PEM) is the private key of `certificate`'s public key.
    public static func keyPair(certificate: [UInt8], key: [UInt8]) -> TLSFileError? {
        var error = [CChar](repeating: 0, count: 512)
        // The key is searched as text for "ENCRYPTED": NUL-terminated.
        let status = certificate.withUnsafeBufferPointer { cert in
            (key + [0]).withUnsafeBufferPointer { k in
                cert.withMemoryRebound(to: CChar.self) { c in
                    k.withMemoryRebound(to: CChar.self) { kk in
                        tlscheck_key_pair(c.baseAddress, c.count, kk.baseAddress, kk.count - 1, &error, error.count)
                    }
                }
            }
        }
        return status == 0 ? nil : TLSFileError(message: Self.text(error))
    }

    /// A NUL-terminated message buffer as text.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

}

public struct TLSFileError: Error, Sendable {
    public let message: String
}
