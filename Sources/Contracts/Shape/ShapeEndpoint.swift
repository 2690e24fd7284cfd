/// An endpoint as drift learning names it (DESIGN §10): the method and the path after
/// the route's prefix, with numeric segments, UUIDs and hex ids read as `{id}`.
public enum ShapeEndpoint {
    /// Longer paths are cut here: an endpoint's name is bounded.
    static let maxPathBytes = 512

    /// `GET /orders/{id}/lines` for `GET orders/1234/lines`.
    public static func key(method: String, path: Substring) -> String {
        withKey(method: method, path: path) { String(decoding: $0, as: UTF8.self) }
    }

    /// The same name's bytes, made on the stack in one pass over the path: it runs on every
    /// answer of a learning route, so the strings are read in place and segments copied whole.
    static func withKey<R>(method: String, path: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var method = method, path = path
        return method.withUTF8 { verb in path.withUTF8 { withKey(verb: verb, path: $0, body) } }
    }

    private static func withKey<R>(verb: UnsafeBufferPointer<UInt8>, path bytes: UnsafeBufferPointer<UInt8>,
                                   _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: verb.count + 2 + maxPathBytes) { out in
            let o = out.baseAddress!
            var n = verb.count
            if n > 0 { o.update(from: verb.baseAddress!, count: n) }
            o[n] = 0x20
            n += 1
            guard let base = bytes.baseAddress else {
                o[n] = 0x2F
                return body(UnsafeBufferPointer(start: o, count: n + 1))
            }
            let count = bytes.count
            var start = 0
            while start < count, base[start] == 0x2F { start += 1 }
            var written = 0
            while true {
                var end = start
                while end < count, base[end] != 0x2F { end += 1 }
                let segment = UnsafeBufferPointer(start: base + start, count: end - start)
                let id = isID(segment)
                let length = id ? 4 : segment.count
                written += 1 + length
                if written > maxPathBytes { break }
                o[n] = 0x2F
                if id {
                    (o[n + 1], o[n + 2], o[n + 3], o[n + 4]) = (0x7B, 0x69, 0x64, 0x7D)   // {id}
                } else if length > 0 {
                    (o + n + 1).update(from: base + start, count: length)
                }
                n += 1 + length
                if end >= count { break }
                start = end + 1
            }
            return body(UnsafeBufferPointer(start: o, count: n))
        }
    }

    /// Digits; a UUID; 8 or more hex digits with at least one digit.
    static func isID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !b.isEmpty else { return false }
        var digits = 0, hex = 0, dashes = 0
        for c in b {
            if c >= 0x30 && c <= 0x39 { digits += 1 } else if c | 0x20 >= 0x61 && c | 0x20 <= 0x66 { hex += 1 } else if c == UInt8(ascii: "-") { dashes += 1 } else {
                return false
            }
        }
        if digits == b.count { return true }
        if dashes == 4, b.count == 36 { return [8, 13, 18, 23].allSatisfy { b[$0] == UInt8(ascii: "-") } }
        return dashes == 0 && b.count >= 8 && digits > 0
    }

    /// The endpoint's path as an OpenAPI template: `{id}`, `{id2}`, … so each is named once.
    static func template(_ path: Substring) -> (path: String, parameters: [String]) {
        var parameters: [String] = []
        let steps = path.split(separator: "/", omittingEmptySubsequences: false).map { step -> String in
            guard step == "{id}" else { return String(step) }
            let name = parameters.isEmpty ? "id" : "id\(parameters.count + 1)"
            parameters.append(name)
            return "{\(name)}"
        }
        return (steps.joined(separator: "/"), parameters)
    }
}
