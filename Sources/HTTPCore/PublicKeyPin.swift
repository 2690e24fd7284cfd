/// A public-key pin as libcurl takes it (CURLOPT_PINNEDPUBLICKEY): `sha256//` and the
/// canonical base64 of a 32-byte SHA-256 digest — 43 characters of the alphabet (the
/// last one's two low bits zero) and one `=`.
public enum PublicKeyPin {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 52, bytes.starts(with: "sha256//".utf8), bytes[51] == UInt8(ascii: "=") else { return false }
        var last = 0
        for byte in bytes[8..<51] {
            guard let value = alphabet.firstIndex(of: byte) else { return false }
            last = value
        }
        return last & 3 == 0
    }
}
