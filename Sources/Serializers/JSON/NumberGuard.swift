internal import CVector
/// `output.numbers` (DESIGN §5) over a serializer's output: finds the numbers a double
/// cannot hold exactly, counts them (`count`), writes them as strings of their exact text
/// (`string`), or names the first one (`reject`); `keep` never looks. It reads normalized
/// JSON, which is valid and compact, so a token is a number exactly when it starts with
/// `-` or a digit.
public enum NumberGuard {
    public enum Mode: String, Sendable, CaseIterable {
        case keep, count, string, reject

        /// Whether the mode classifies numbers at all: `keep` passes them as written and
        /// costs nothing (number-dense answers such as GeoJSON would pay on every one).
        public var looksAtNumbers: Bool { self != .keep }
    }

    /// Documents this thread has had its numbers classified in (a test's check that
    /// `keep` never does).
    public static var checksOnThisThread: Int { Int(serializerd_number_checks()) }

    /// The unsafe numbers in `json`.
    public static func count(_ json: [UInt8]) -> Int {
        serializerd_note_number_check()
        var count = 0
        forEachNumber(json) { range, p in
            if !NumberSafety.isSafe(UnsafeBufferPointer(rebasing: p[range])) { count += 1 }
            return true
        }
        return count
    }

    /// `json` with every unsafe number written as a string of its source text.
    public static func stringified(_ json: [UInt8]) -> [UInt8] {
        serializerd_note_number_check()
        var out: [UInt8] = []
        out.reserveCapacity(json.count + 64)
        var last = 0
        forEachNumber(json) { range, p in
            if !NumberSafety.isSafe(UnsafeBufferPointer(rebasing: p[range])) {
                out += p[last..<range.lowerBound]
                out.append(UInt8(ascii: "\""))
                out += p[range]
                out.append(UInt8(ascii: "\""))
                last = range.upperBound
            }
            return true
        }
        out += json[last...]
        return out
    }

    /// The first unsafe number's text and its JSON pointer (RFC 6901), if any.
    public static func firstUnsafe(_ json: [UInt8]) -> (number: String, pointer: String)? {
        serializerd_note_number_check()
        var found: Range<Int>?
        forEachNumber(json) { range, p in
            if NumberSafety.isSafe(UnsafeBufferPointer(rebasing: p[range])) { return true }
            found = range
            return false
        }
        guard let found else { return nil }
        return (String(decoding: json[found], as: UTF8.self), pointer(to: found.lowerBound, in: json))
    }

    /// Calls `body` with each number token's range until it returns false.
    public static func forEachNumber(_ json: [UInt8], _ body: (Range<Int>, UnsafeBufferPointer<UInt8>) -> Bool) {
        json.withUnsafeBufferPointer { p in
            let n = p.count
            var i = 0
            while i < n {
                let c = p[i]
                if c == UInt8(ascii: "\"") {
                    i = stringEnd(p, from: i)
                } else if c == UInt8(ascii: "-") || c &- 0x30 < 10 {
                    var end = i + 1
                    while end < n, isNumberByte(p[end]) { end += 1 }
                    if !body(i..<end, p) { return }
                    i = end
                } else {
                    i += 1
                }
            }
        }
    }

    @inline(__always)
    static func isNumberByte(_ c: UInt8) -> Bool {
        c &- 0x30 < 10 || c == UInt8(ascii: ".") || c | 0x20 == UInt8(ascii: "e") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
    }

    /// Past the closing quote of the string opening at `start`.
    static func stringEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start + 1
        while i < p.count {
            let c = p[i]
            if c == UInt8(ascii: "\\") { i += 2; continue }
            if c == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return p.count
    }

    /// The pointer to the value starting at `offset`: one more walk, on the reject path only.
    static func pointer(to offset: Int, in json: [UInt8]) -> String {
        // Per open container: whether it is an object, its current key or index.
        var path: [(isObject: Bool, key: String, index: Int)] = []
        var expectingKey = false
        var i = 0
        while i < offset {
            let c = json[i]
            switch c {
            case UInt8(ascii: "{"): path.append((true, "", 0)); expectingKey = true; i += 1
            case UInt8(ascii: "["): path.append((false, "", 0)); i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): path.removeLast(); i += 1
            case UInt8(ascii: ","):
                if path[path.count - 1].isObject { expectingKey = true } else { path[path.count - 1].index += 1 }
                i += 1
            case UInt8(ascii: "\""):
                let end = json.withUnsafeBufferPointer { stringEnd($0, from: i) }
                if expectingKey {
                    let raw = Array(json[i..<end])
                    path[path.count - 1].key = (try? JSONValue.parse(raw, options: JSONReadOptions(allowFragments: true)))?.stringValue ?? ""
                    expectingKey = false
                }
                i = end
            default: i += 1
            }
        }
        return path.map { "/" + ($0.isObject ? $0.key.replacing("~", with: "~0").replacing("/", with: "~1") : String($0.index)) }.joined()
    }
}

extension NumberGuard {
    /// `output.numbers` applied to a serializer's result, in place (stringified, or a
    /// serialization failure for `reject`); returns the count of unsafe numbers it held,
    /// nil for `keep`, which does not look. Only json and plist output (a compound's winner
    /// counts by its own name) carries an upstream's numbers; the others write only numbers
    /// of their own (image sizes).
    public static func apply(_ result: inout SerializationResult, mode: Mode) -> Int? {
        guard mode.looksAtNumbers else { return nil }
        guard result.error == nil, let value = result.value,
              result.serializer == SerializerName.json.rawValue || result.serializer == SerializerName.plist.rawValue else { return 0 }
        let unsafe = value.knownUnsafeNumbers ?? count(value.bytes)
        guard unsafe > 0 else { return 0 }
        switch mode {
        case .keep, .count:
            return unsafe
        case .string:
            result = SerializationResult(value: NormalizedJSON(trusted: stringified(value.bytes)), error: nil, serializer: result.serializer)
            return unsafe
        case .reject:
            let first = firstUnsafe(value.bytes)
            let detail = "the number \(first?.number ?? "?") at \(first.map { $0.pointer.isEmpty ? "the top level" : $0.pointer } ?? "?") "
                + "has no exact IEEE 754 double (\(unsafe) such number\(unsafe == 1 ? "" : "s")); output.numbers: reject refuses it, "
                + "string keeps its exact text as a JSON string"
            result = SerializationResult(value: nil, error: .serializationFailed(serializer: result.serializer, detail: detail, underlying: nil),
                                         serializer: result.serializer)
            return unsafe
        }
    }
}
