// The request parameters as they were read and encoded before they became a JSONTape
// (a JSONValue tree): the differential oracle for
// fuzz/request. Kept only here.
@testable import Serializers
import HTTPCore

enum ReferenceRequestParameters {
    static func decode(_ request: RequestInput) throws(RequestSerializationError) -> [(String, JSONValue)]? {
        guard !request.body.isEmpty else { return nil }
        guard let contentType = request.contentType, let media = MediaType(contentType) else {
            throw RequestSerializationError("a request body needs a Content-Type: application/json, application/x-www-form-urlencoded or application/x-plist")
        }
        let value: JSONValue
        do throws(TranscodeError) {
            if RequestParameters.isJSON(media) {
                do throws(JSONError) { value = try JSONValue.parse(request.body, options: JSONReadOptions(maxDepth: request.maxDepth)) } catch { throw TranscodeError(error) }
            } else if media.essence == "application/x-www-form-urlencoded" {
                value = try FormDecoder.decode(request.body, charset: media.charset, maxDepth: request.maxDepth)  // fuzz/form checks it against the previous decoder
            } else if RequestParameters.isPlist(media) {
                value = try PlistTranscoder.transcode(request.body, maxDepth: request.maxDepth, budget: request.budget).value
            } else {
                throw RequestParameters.unreadable(media)
            }
        } catch {
            throw RequestSerializationError("request body is not valid \(media.essence): \(error.description)")
        }
        guard case .object(let members) = value else {
            throw RequestSerializationError("request parameters must be an object (a JSON object, form or plist dictionary), found \(kind(value))")
        }
        return members
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// AF's `AFQueryStringFromParameters`: nested objects `a[b]=`, arrays `a[]=`, keys
/// sorted by UTF-16 code unit at every level, null → bare key, empty containers
/// vanish, booleans `1`/`0`, numbers as their JSON text, and AF's escape set.
enum ReferenceQueryStringEncoder {
    /// Unbounded, for callers that encode their own values.
    static func encode(_ parameters: [(String, JSONValue)]) -> String {
        (try? encode(parameters, budget: OutputBudget(input: .max, cap: .max))) ?? ""
    }

    /// Charges `budget` after every pair. The field name is built once, in a buffer of
    /// escaped bytes that grows and shrinks with the nesting, so an empty container
    /// costs O(1) however deep it sits.
    static func encode(_ parameters: [(String, JSONValue)], budget: OutputBudget) throws(TranscodeError) -> String {
        var writer = Writer(budget: budget)
        for (key, value) in JSONWriter.lastWinsSortedByUTF16(parameters) {
            writer.field.removeAll(keepingCapacity: true)
            escape(key.utf8, into: &writer.field)
            try writer.append(value)
        }
        return String(decoding: writer.out, as: UTF8.self)
    }

    struct Writer {
        let budget: OutputBudget
        var out: [UInt8] = []
        var field: [UInt8] = []

        mutating func append(_ value: JSONValue) throws(TranscodeError) {
            let mark = field.count
            defer { field.removeLast(field.count - mark) }
            switch value {
            case .object(let members):
                for (key, nested) in JSONWriter.lastWinsSortedByUTF16(members) {
                    field.removeLast(field.count - mark)
                    field.append(contentsOf: "%5B".utf8)
                    escape(key.utf8, into: &field)
                    field.append(contentsOf: "%5D".utf8)
                    try append(nested)
                }
            case .array(let items):
                field.append(contentsOf: "%5B%5D".utf8)
                for item in items { try append(item) }
            case .null: try pair(nil)
            case .bool(let b): try pair(b ? "1" : "0")
            case .number(let lexeme): try pair(lexeme)
            case .string(let s): try pair(s)
            }
        }

        mutating func pair(_ value: String?) throws(TranscodeError) {
            if !out.isEmpty { out.append(UInt8(ascii: "&")) }
            out.append(contentsOf: field)
            if let value {
                out.append(UInt8(ascii: "="))
                escape(value.utf8, into: &out)
            }
            try budget.charge(out.count, "the query string")
        }
    }

    static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// AF's `AFPercentEscapedStringFromString`: RFC 3986 query characters minus the
    /// general and sub-delimiters, keeping `?` and `/`; UTF-8 bytes as `%XX`.
    static func percentEscaped(_ string: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        escape(string.utf8, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func escape(_ bytes: String.UTF8View, into out: inout [UInt8]) {
        for byte in bytes {
            if isUnescaped(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
    }

    static func isUnescaped(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }
}
/// Writes parameters as an XML property list, as AFPropertyListRequestSerializer does
/// (NSPropertyListXMLFormat_v1_0). Plists have no null, so null is an error.
enum ReferencePlistXMLWriter {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    static func write(_ value: JSONValue) throws(RequestSerializationError) -> [UInt8] {
        try write(value, budget: OutputBudget(input: .max, cap: .max))
    }

    /// Charges `budget` after every element: the tabs alone grow with the depth, so a
    /// deep body could otherwise become far more XML than it was JSON.
    static func write(_ value: JSONValue, budget: OutputBudget) throws(RequestSerializationError) -> [UInt8] {
        var writer = Writer(budget: budget)
        writer.out.append(contentsOf: header.utf8)
        try writer.element(value, indent: 0)
        writer.out.append(contentsOf: "</plist>\n".utf8)
        return writer.out
    }

    enum PathStep { case key(String), index(Int) }

    struct Writer {
        let budget: OutputBudget
        var out: [UInt8] = []
        /// Where the writer is, kept as steps and spelt out only for an error.
        var path: [PathStep] = []

        mutating func element(_ value: JSONValue, indent: Int) throws(RequestSerializationError) {
            pad(indent)
            switch value {
            case .null:
                throw RequestSerializationError("parameter \(path.isEmpty ? "value" : "'\(spelt)'") is null, and property lists have no null")
            case .bool(let b): out.append(contentsOf: (b ? "<true/>\n" : "<false/>\n").utf8)
            case .number(let lexeme):
                let integral = !lexeme.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
                tagged(integral ? "integer" : "real", lexeme, escape: false)
            case .string(let s): tagged("string", s, escape: true)
            case .array(let items):
                guard !items.isEmpty else { out.append(contentsOf: "<array/>\n".utf8); break }
                out.append(contentsOf: "<array>\n".utf8)
                for (k, item) in items.enumerated() {
                    path.append(.index(k))
                    try element(item, indent: indent + 1)
                    path.removeLast()
                }
                pad(indent)
                out.append(contentsOf: "</array>\n".utf8)
            case .object(let members):
                guard !members.isEmpty else { out.append(contentsOf: "<dict/>\n".utf8); break }
                out.append(contentsOf: "<dict>\n".utf8)
                for (key, member) in members {
                    pad(indent + 1)
                    tagged("key", key, escape: true)
                    path.append(.key(key))
                    try element(member, indent: indent + 1)
                    path.removeLast()
                }
                pad(indent)
                out.append(contentsOf: "</dict>\n".utf8)
            }
            do throws(TranscodeError) {
                try budget.charge(out.count, "the property list")
            } catch {
                throw RequestSerializationError("request parameters as a property list: \(error.description)")
            }
        }

        mutating func pad(_ indent: Int) {
            out.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
        }

        mutating func tagged(_ tag: StaticString, _ text: String, escape: Bool) {
            let name = UnsafeBufferPointer(start: tag.utf8Start, count: tag.utf8CodeUnitCount)
            out.append(UInt8(ascii: "<")); out.append(contentsOf: name); out.append(UInt8(ascii: ">"))
            out.append(contentsOf: (escape ? escaped(text) : text).utf8)
            out.append(contentsOf: "</".utf8); out.append(contentsOf: name); out.append(contentsOf: ">\n".utf8)
        }

        var spelt: String {
            var text = ""
            for step in path {
                switch step {
                case .key(let key): text += text.isEmpty ? key : ".\(key)"
                case .index(let k): text += "[\(k)]"
                }
            }
            return text
        }
    }

    static func escaped(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
