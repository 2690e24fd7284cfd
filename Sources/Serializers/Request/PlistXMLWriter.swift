/// Writes parameters as an XML property list, as AFPropertyListRequestSerializer does
/// (NSPropertyListXMLFormat_v1_0). Plists have no null, so null is an error.
public enum PlistXMLWriter {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    public static func write(_ value: JSONValue) throws(RequestSerializationError) -> [UInt8] {
        var out = header
        try element(value, indent: 0, path: "", into: &out)
        out += "</plist>\n"
        return Array(out.utf8)
    }

    static func element(_ value: JSONValue, indent: Int, path: String, into out: inout String) throws(RequestSerializationError) {
        let pad = String(repeating: "\t", count: indent)
        switch value {
        case .null:
            throw RequestSerializationError("parameter \(path.isEmpty ? "value" : "'\(path)'") is null, and property lists have no null")
        case .bool(let b): out += pad + (b ? "<true/>\n" : "<false/>\n")
        case .number(let lexeme):
            let integral = !lexeme.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
            out += pad + (integral ? "<integer>\(lexeme)</integer>\n" : "<real>\(lexeme)</real>\n")
        case .string(let s): out += pad + "<string>\(escaped(s))</string>\n"
        case .array(let items):
            guard !items.isEmpty else { out += pad + "<array/>\n"; return }
            out += pad + "<array>\n"
            for (k, item) in items.enumerated() { try element(item, indent: indent + 1, path: "\(path)[\(k)]", into: &out) }
            out += pad + "</array>\n"
        case .object(let members):
            guard !members.isEmpty else { out += pad + "<dict/>\n"; return }
            out += pad + "<dict>\n"
            for (key, member) in members {
                out += pad + "\t<key>\(escaped(key))</key>\n"
                try element(member, indent: indent + 1, path: path.isEmpty ? key : "\(path).\(key)", into: &out)
            }
            out += pad + "</dict>\n"
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
