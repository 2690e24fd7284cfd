/// Writes parameters as an XML property list, as AFPropertyListRequestSerializer does
/// (NSPropertyListXMLFormat_v1_0). Plists have no null, so null is an error.
public enum PlistXMLWriter {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    public static func write(_ value: JSONValue) throws(RequestSerializationError) -> [UInt8] {
        let tape = JSONTape(normalized: NormalizedJSON(value).bytes)
        return try write(tape, budget: OutputBudget(input: .max, cap: .max))
    }

    /// Writes the value at the tape's first entry, charging `budget` after every element:
    /// the tabs alone grow with the depth, so a deep body could otherwise become far more
    /// XML than it was JSON.
    static func write(_ tape: borrowing JSONTape, budget: OutputBudget) throws(RequestSerializationError) -> [UInt8] {
        var writer = Writer(budget: budget)
        // The whole budget up front: pages are touched only as they are written.
        if budget.limit <= OutputBudget.reserveUpTo { writer.out.reserveCapacity(budget.limit) }
        writer.out.append(contentsOf: header.utf8)
        try writer.element(0, of: tape, indent: 0)
        writer.out.append(contentsOf: "</plist>\n".utf8)
        return writer.out
    }

    enum PathStep { case key(String), index(Int) }

    struct Writer {
        let budget: OutputBudget
        var out: [UInt8] = []
        /// Where the writer is, kept as steps and spelt out only for an error.
        var path: [PathStep] = []

        mutating func element(_ entry: Int, of tape: borrowing JSONTape, indent: Int) throws(RequestSerializationError) {
            pad(indent)
            switch tape.first(entry) {
            case UInt8(ascii: "n"):
                throw RequestSerializationError("parameter \(path.isEmpty ? "value" : "'\(spelt)'") is null, and property lists have no null")
            case UInt8(ascii: "t"): out.append(contentsOf: "<true/>\n".utf8)
            case UInt8(ascii: "f"): out.append(contentsOf: "<false/>\n".utf8)
            case UInt8(ascii: "\""): tagged("string", tape.string(entry), escape: true)
            case UInt8(ascii: "["):
                guard tape.end(entry) > tape.firstChild(entry) else { out.append(contentsOf: "<array/>\n".utf8); break }
                out.append(contentsOf: "<array>\n".utf8)
                var k = tape.firstChild(entry), index = 0
                while k < tape.end(entry) {
                    path.append(.index(index))
                    try element(k, of: tape, indent: indent + 1)
                    path.removeLast()
                    k = tape.next(k)
                    index += 1
                }
                pad(indent)
                out.append(contentsOf: "</array>\n".utf8)
            case UInt8(ascii: "{"):
                guard tape.end(entry) > tape.firstChild(entry) else { out.append(contentsOf: "<dict/>\n".utf8); break }
                out.append(contentsOf: "<dict>\n".utf8)
                var k = tape.firstChild(entry)
                while k < tape.end(entry) {
                    let key = tape.string(k)
                    pad(indent + 1)
                    tagged("key", key, escape: true)
                    path.append(.key(key))
                    try element(k + 1, of: tape, indent: indent + 1)
                    path.removeLast()
                    k = tape.next(k + 1)
                }
                pad(indent)
                out.append(contentsOf: "</dict>\n".utf8)
            default:
                let lexeme = tape.scalar(entry)
                let integral = !lexeme.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
                tagged(integral ? "integer" : "real", lexeme, escape: false)
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

    static func escaped(_ s: String) -> String { XMLText.escaped(s) }
}
