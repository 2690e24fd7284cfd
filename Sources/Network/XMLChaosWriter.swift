// fuzz/network compiles these files into one module with the ones they use.
#if canImport(Serializers)
import Serializers
#endif

/// Writes JSON in the XML serializer's convention back as XML (`@name` → attribute,
/// `#text` → text, an array → repeated elements, null → an empty element), so that chaos
/// done to an XML answer reaches the route's XML serializer as XML.
enum XMLChaosWriter {
    static func write(_ value: JSONValue) -> [UInt8] {
        var out = Array(#"<?xml version="1.0" encoding="UTF-8"?>"#.utf8)
        if case .object(let members) = value {
            for (name, child) in members { element(name, child, into: &out) }
        }
        return out
    }

    static func element(_ name: String, _ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .array(let items):
            for item in items { element(name, item, into: &out) }
            return
        case .null:
            out += Array("<\(name)/>".utf8)
            return
        default:
            break
        }
        out += Array("<\(name)".utf8)
        var text = ""
        var children: [(String, JSONValue)] = []
        switch value {
        case .object(let members):
            for (key, child) in members {
                if key.hasPrefix("@") {
                    if let scalar = scalarText(child) { out += Array(" \(key.dropFirst())=\"\(escape(scalar, quote: true))\"".utf8) }
                } else if key == "#text" {
                    text = scalarText(child) ?? ""
                } else {
                    children.append((key, child))
                }
            }
        default:
            text = scalarText(value) ?? ""
        }
        out.append(UInt8(ascii: ">"))
        for (key, child) in children { element(key, child, into: &out) }
        out += Array(escape(text, quote: false).utf8)
        out += Array("</\(name)>".utf8)
    }

    static func scalarText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): s
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        case .null: ""
        case .array, .object: nil
        }
    }

    static func escape(_ text: String, quote: Bool) -> String { XMLText.escaped(text, quotes: quote) }
}
