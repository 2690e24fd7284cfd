/// `redact_json` for form bodies: `user[password]=x` is the member at `/user/password`,
/// `tags[]=x` an element (matched by `*`). The value is replaced, the rest kept as sent.
struct FormRedactor {
    let pointers: [[[UInt8]]]

    /// The redacted body, or nil when no parameter matched.
    func redact(_ bytes: [UInt8]) -> [UInt8]? {
        var changed = false
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let marker = Array(Redaction.marker.utf8)
        for (n, pair) in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).enumerated() {
            if n > 0 { out.append(UInt8(ascii: "&")) }
            let eq = pair.firstIndex(of: UInt8(ascii: "="))
            let name = pair[..<(eq ?? pair.endIndex)]
            if eq != nil, matches(Self.path(Redaction.formDecoded(Substring(decoding: name, as: UTF8.self)))) {
                out += name
                out.append(UInt8(ascii: "="))
                out += marker
                changed = true
            } else {
                out += pair
            }
        }
        return changed ? out : nil
    }

    /// `a[b][]` → `a`, `b`, and nil for the element without an index.
    static func path(_ name: String) -> [[UInt8]?] {
        let bytes = Array(name.utf8)
        guard let open = bytes.firstIndex(of: UInt8(ascii: "[")), open > 0 else { return [bytes] }
        var path: [[UInt8]?] = [Array(bytes[..<open])]
        var i = open
        while i < bytes.count, bytes[i] == UInt8(ascii: "["), let close = bytes[i...].firstIndex(of: UInt8(ascii: "]")) {
            let inner = Array(bytes[(i + 1)..<close])
            path.append(inner.isEmpty ? nil : inner)
            i = close + 1
        }
        return path
    }

    func matches(_ path: [[UInt8]?]) -> Bool {
        pointers.contains { pointer in
            pointer.count == path.count && zip(pointer, path).allSatisfy { token, part in
                token == [UInt8(ascii: "*")] || part == token
            }
        }
    }
}
