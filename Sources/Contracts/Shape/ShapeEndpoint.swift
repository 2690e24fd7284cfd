/// An endpoint as drift learning names it (DESIGN §10): the method and the path after
/// the route's prefix, with numeric segments, UUIDs and hex ids read as `{id}`.
public enum ShapeEndpoint {
    /// Longer paths are cut here: an endpoint's name is bounded.
    static let maxPathBytes = 512

    /// `GET /orders/{id}/lines` for `GET orders/1234/lines`.
    public static func key(method: String, path: Substring) -> String {
        var out = method + " "
        var bytes = 0
        for segment in path.drop(while: { $0 == "/" }).split(separator: "/", omittingEmptySubsequences: false) {
            let id = Array(segment.utf8).withUnsafeBufferPointer { isID($0) }
            let step = "/" + (id ? "{id}" : String(segment))
            bytes += step.utf8.count
            if bytes > maxPathBytes { break }
            out += step
        }
        return out
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
