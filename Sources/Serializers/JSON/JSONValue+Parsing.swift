import HTTPCore

extension JSONValue {
    /// Parses JSON bytes (UTF-8/16/32, AF's encoding detection) into a value.
    public static func parse(_ bytes: [UInt8], options: JSONReadOptions = .init()) throws(JSONError) -> JSONValue {
        let normalized = try JSONNormalizer.normalize(bytes, options: options)
        return NormalizedReader.read(normalized)
    }

    /// Parses UTF-8 JSON text.
    public static func parse(_ text: String, options: JSONReadOptions = .init()) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }
}

/// Builds a `JSONValue` from bytes the normalizer produced: no whitespace, valid
/// grammar, only the normalized escape set. It trusts its input and never fails.
struct NormalizedReader {
    let bytes: [UInt8]
    var i = 0
    var scratch: [UInt8] = []

    static func read(_ bytes: [UInt8]) -> JSONValue {
        var reader = NormalizedReader(bytes: bytes)
        return reader.value()
    }

    mutating func value() -> JSONValue {
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [(String, JSONValue)] = []
            while bytes[i] != UInt8(ascii: "}") {
                if bytes[i] == UInt8(ascii: ",") { i += 1 }
                let key = string()
                i += 1 // ':'
                members.append((key, value()))
            }
            i += 1
            return .object(members)
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            while bytes[i] != UInt8(ascii: "]") {
                if bytes[i] == UInt8(ascii: ",") { i += 1 }
                items.append(value())
            }
            i += 1
            return .array(items)
        case UInt8(ascii: "\""): return .string(string())
        case UInt8(ascii: "t"): i += 4; return .bool(true)
        case UInt8(ascii: "f"): i += 5; return .bool(false)
        case UInt8(ascii: "n"): i += 4; return .null
        default:
            let start = i
            while i < bytes.count, Self.isNumberByte(bytes[i]) { i += 1 }
            return .number(String(decoding: bytes[start..<i], as: UTF8.self))
        }
    }

    static func isNumberByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
            || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
    }

    mutating func string() -> String {
        i += 1
        scratch.removeAll(keepingCapacity: true)
        while bytes[i] != UInt8(ascii: "\"") {
            let c = bytes[i]
            guard c == UInt8(ascii: "\\") else { scratch.append(c); i += 1; continue }
            let e = bytes[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "u"):
                let hi = Hex.value(bytes[i + 2]) ?? 0, lo = Hex.value(bytes[i + 3]) ?? 0
                scratch.append(hi << 4 | lo)
                i += 4
            default: scratch.append(e) // '"' or '\'
            }
        }
        i += 1
        return String(decoding: scratch, as: UTF8.self)
    }
}
