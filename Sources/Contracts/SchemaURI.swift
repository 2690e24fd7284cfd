/// Just enough of RFC 3986 reference resolution for `$id` and `$ref` (DESIGN §10): an
/// absolute reference stands, a fragment replaces the base's, a path merges with the
/// base's directory and loses its dot segments.
enum SchemaURI {
    static func hasScheme(_ s: String) -> Bool {
        guard let colon = s.firstIndex(of: ":"), colon != s.startIndex else { return false }
        let scheme = s[..<colon]
        return scheme.first!.isLetter && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+.-".contains($0) }
    }

    /// The reference without its fragment, and the fragment (nil when there is none).
    static func split(_ s: String) -> (String, String?) {
        guard let hash = s.firstIndex(of: "#") else { return (s, nil) }
        return (String(s[..<hash]), String(s[s.index(after: hash)...]))
    }

    static func resolve(_ reference: String, against base: String) -> String {
        if hasScheme(reference) { return removeDots(reference) }
        let (baseDocument, _) = split(base)
        if reference.isEmpty { return baseDocument }
        if reference.hasPrefix("#") { return baseDocument + reference }
        guard let colon = baseDocument.firstIndex(of: ":") else {
            // A base without a scheme (a bare file name): paths merge all the same.
            return removeDots(merge(baseDocument, reference))
        }
        let scheme = baseDocument[...colon]
        let rest = baseDocument[baseDocument.index(after: colon)...]
        if reference.hasPrefix("//") { return String(scheme) + reference }
        let hasAuthority = rest.hasPrefix("//")
        var authority = ""
        var path = String(rest)
        if hasAuthority {
            let afterSlashes = rest.dropFirst(2)
            let end = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
            authority = "//" + afterSlashes[..<end]
            path = String(afterSlashes[end...])
        }
        if reference.hasPrefix("/") { return String(scheme) + authority + removeDots(reference) }
        // A base without a path hierarchy (a URN): its whole path is replaced (RFC 3986 §5.2.3).
        guard hasAuthority || path.hasPrefix("/") else { return String(scheme) + removeDots(merge(path, reference)) }
        return String(scheme) + authority + removeDots(merge(path, reference))
    }

    static func merge(_ basePath: String, _ reference: String) -> String {
        guard let slash = basePath.lastIndex(of: "/") else { return reference }
        return basePath[...slash] + reference
    }

    static func removeDots(_ s: String) -> String {
        let (document, fragment) = split(s)
        guard document.contains("/.") || document.hasPrefix(".") else { return s }
        var prefix = ""
        var path = document[...]
        if let colon = document.firstIndex(of: ":"), document[colon...].hasPrefix("://") {
            let authorityStart = document.index(colon, offsetBy: 3)
            let afterAuthority = document[authorityStart...].firstIndex(of: "/") ?? document.endIndex
            prefix = String(document[..<afterAuthority])
            path = document[afterAuthority...]
        }
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (i, segment) in segments.enumerated() {
            if segment == "." { if i == segments.count - 1 { output.append("") }; continue }
            if segment == ".." {
                if output.count > 1 { output.removeLast() }
                if i == segments.count - 1 { output.append("") }
                continue
            }
            output.append(segment)
        }
        return prefix + output.joined(separator: "/") + (fragment.map { "#" + $0 } ?? "")
    }

    /// A fragment's percent-escapes decoded (RFC 3986 §2.1).
    static func percentDecoded(_ s: String) -> String {
        guard s.contains("%") else { return s }
        var bytes: [UInt8] = []
        var utf8 = Array(s.utf8)[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// JSON Pointer (RFC 6901) tokens.
enum JSONPointer {
    static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        var out = ""
        for c in token {
            switch c {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.append(c)
            }
        }
        return out
    }
}
