/// Writes an XML property list as JSON while it is parsed: dict → object (source key
/// order), array → array, string → string, integer/real → number, true/false,
/// date → ISO 8601 UTC string, data → base64 string.
final class PlistXMLBuilder: XMLEventSink {
    enum Tag: String, CaseIterable {
        case plist, dict, array, key, string, integer, real, `true`, `false`, date, data

        static let spelt = allCases.map { (Array($0.rawValue.utf8), $0) }

        /// Compared as bytes: a String per element cost more than the element itself.
        init?(_ name: UnsafeBufferPointer<UInt8>) {
            for (bytes, tag) in Self.spelt where bytes.count == name.count && bytes.elementsEqual(name) {
                self = tag
                return
            }
            return nil
        }
    }
    struct Level {
        let tag: Tag
        var count = 0
        var awaitingValue = false
        /// For a dict: where its keys' hashes begin in `repeatedKeys`.
        var keysMark = 0
    }

    let maxDepth: Int
    /// Charged at every element's start and end (one element's output is linear in its input).
    let budget: OutputBudget
    // Only libxml2's callbacks on one thread touch the state, one at a time: dynamic
    // exclusivity checks cost a quarter of the time here.
    @exclusivity(unchecked) var out: [UInt8] = []
    @exclusivity(unchecked) var repeatedKeys = RepeatedKeys()
    /// Unsafe numbers written (`output.numbers`), counted as they are.
    @exclusivity(unchecked) var unsafeNumbers = 0
    @exclusivity(unchecked) var levels: [Level] = []
    @exclusivity(unchecked) var text: [UInt8] = []
    @exclusivity(unchecked) var sawRoot = false
    /// At most the 11 tags (an unknown one fails), so a linear search.
    @exclusivity(unchecked) var seenNames: [UnsafePointer<UInt8>] = []
    @exclusivity(unchecked) var seenTags: [Tag] = []

    /// Count unsafe numbers as they are written (`output.numbers` other than `keep`).
    let notesNumbers: Bool

    init(maxDepth: Int, budget: OutputBudget, notesNumbers: Bool = true) {
        self.maxDepth = maxDepth
        self.budget = budget
        self.notesNumbers = notesNumbers
    }

    override func startElement(_ element: XMLStartTag) throws(TranscodeError) {
        try budget.charge(out.count, "the JSON")
        let tag: Tag
        // libxml2 interns names: a pointer seen before names the same tag.
        if let k = seenNames.firstIndex(of: element.localName) {
            tag = seenTags[k]
        } else {
            let local = UnsafeBufferPointer(start: element.localName, count: strlen(element.localName))
            guard let found = Tag(local) else {
                throw TranscodeError("unknown property list element <\(String(decoding: local, as: UTF8.self))>")
            }
            tag = found
            seenNames.append(element.localName)
            seenTags.append(found)
        }
        if tag == .plist {
            guard levels.isEmpty else { throw TranscodeError("<plist> nested inside a property list") }
            levels.append(Level(tag: .plist))
            return
        }
        guard let parent = levels.last else { throw TranscodeError("property list root must be <plist>") }
        guard levels.count <= maxDepth else { throw TranscodeError("nesting deeper than the limit of \(maxDepth) (limits.max_json_depth)") }
        if parent.tag == .dict {
            if tag == .key {
                guard !parent.awaitingValue else { throw TranscodeError("<key> without a value in <dict>") }
            } else {
                guard parent.awaitingValue else { throw TranscodeError("<\(tag.rawValue)> in <dict> without a preceding <key>") }
                levels[levels.count - 1].awaitingValue = false
            }
        } else if tag == .key {
            throw TranscodeError("<key> outside a <dict>")
        } else if parent.tag == .plist {
            guard !sawRoot else { throw TranscodeError("<plist> holds more than one value") }
            sawRoot = true
        } else if parent.tag != .array {
            throw TranscodeError("<\(tag.rawValue)> inside <\(parent.tag.rawValue)>")
        } else {
            if parent.count > 0 { out.append(UInt8(ascii: ",")) }
            levels[levels.count - 1].count += 1
        }
        levels.append(Level(tag: tag, keysMark: repeatedKeys.mark))
        text.removeAll(keepingCapacity: true)
        if tag == .dict { out.append(UInt8(ascii: "{")) }
        if tag == .array { out.append(UInt8(ascii: "[")) }
    }

    override func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        text.append(contentsOf: bytes)
    }

    override func endElement() throws(TranscodeError) {
        let level = levels.removeLast()
        switch level.tag {
        case .plist: return
        case .dict:
            guard !level.awaitingValue else { throw TranscodeError("<dict> ends after a <key> without a value") }
            out.append(UInt8(ascii: "}"))
            repeatedKeys.close(from: level.keysMark)
        case .array: out.append(UInt8(ascii: "]"))
        case .key:
            let parent = levels.count - 1
            if levels[parent].count > 0 { out.append(UInt8(ascii: ",")) }
            levels[parent].count += 1
            levels[parent].awaitingValue = true
            repeatedKeys.note(hash: text.withUnsafeBytes { RepeatedKeys.hash($0) })
            JSONEscaping.appendQuoted(text, to: &out)
            out.append(UInt8(ascii: ":"))
        case .string: JSONEscaping.appendQuoted(text, to: &out)
        case .integer:
            let start = out.count
            if !PlistScalars.appendDecimalInteger(text, to: &out) {
                out.append(contentsOf: try PlistScalars.integer(trimmedText).utf8)
            }
            if notesNumbers { unsafeNumbers += NumberSafety.unsafeCount(out, from: start) }
        case .real:
            let start = out.count
            out.append(contentsOf: try PlistScalars.real(trimmedText).utf8)
            if notesNumbers { unsafeNumbers += NumberSafety.unsafeCount(out, from: start) }
        case .true: out.append(contentsOf: "true".utf8)
        case .false: out.append(contentsOf: "false".utf8)
        case .date: JSONEscaping.appendQuoted(try PlistScalars.xmlDate(trimmedText), to: &out)
        case .data:
            guard let decoded = Base64.decode(text) else { throw TranscodeError("<data> is not valid base64") }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: Base64.encode(decoded))
            out.append(UInt8(ascii: "\""))
        }
        text.removeAll(keepingCapacity: true)
        try budget.charge(out.count, "the JSON")
    }

    var trimmedText: String { String(decoding: text, as: UTF8.self).trimmingASCIIWhitespace() }

    /// The JSON, and how many unsafe numbers it holds (nil when rebuilt for repeated keys).
    func finish() throws(TranscodeError) -> (json: [UInt8], unsafeNumbers: Int?) {
        guard sawRoot else { throw TranscodeError("property list has no value") }
        if repeatedKeys.found { return (try RepeatedKeys.lastWins(out, maxDepth: maxDepth), nil) }
        return (out, notesNumbers ? unsafeNumbers : nil)
    }
}

/// Scalar conversions shared by the XML and binary property list readers.
enum PlistScalars {
    /// The common `<integer>`: optional sign and decimal digits, written without leading
    /// zeros (as `integer` does) straight from the bytes. False for anything else (hex,
    /// empty, stray characters), which `integer` then reads or refuses.
    static func appendDecimalInteger(_ text: [UInt8], to out: inout [UInt8]) -> Bool {
        var lo = 0, hi = text.count
        while lo < hi && XMLBytes.isSpace(text[lo]) { lo += 1 }
        while hi > lo && XMLBytes.isSpace(text[hi - 1]) { hi -= 1 }
        var negative = false
        if lo < hi && (text[lo] == UInt8(ascii: "-") || text[lo] == UInt8(ascii: "+")) {
            negative = text[lo] == UInt8(ascii: "-")
            lo += 1
        }
        guard lo < hi else { return false }
        for k in lo..<hi where text[k] &- UInt8(ascii: "0") > 9 { return false }
        while lo < hi - 1 && text[lo] == UInt8(ascii: "0") { lo += 1 }
        if negative && !(hi - lo == 1 && text[lo] == UInt8(ascii: "0")) { out.append(UInt8(ascii: "-")) }
        out.append(contentsOf: text[lo..<hi])
        return true
    }

    static func integer(_ text: String) throws(TranscodeError) -> String {
        var digits = Substring(text)
        var negative = false
        if digits.first == "+" || digits.first == "-" { negative = digits.first == "-"; digits = digits.dropFirst() }
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            guard let v = UInt64(digits.dropFirst(2), radix: 16) else { throw TranscodeError("<integer> '\(text)' is not an integer") }
            return (negative && v != 0 ? "-" : "") + String(v)
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw TranscodeError("<integer> '\(text)' is not an integer")
        }
        let trimmed = digits.drop(while: { $0 == "0" })
        let magnitude = trimmed.isEmpty ? "0" : String(trimmed)
        return (negative && magnitude != "0" ? "-" : "") + magnitude
    }

    /// Keeps the lexeme when it is already a JSON number; otherwise re-prints it.
    static func real(_ text: String) throws(TranscodeError) -> String {
        if (try? JSONNormalizer.normalize(Array(text.utf8), options: JSONReadOptions())) != nil,
           text.first != "\"", text != "true", text != "false", text != "null" {
            return text
        }
        guard let v = Double(text.hasPrefix("+") ? String(text.dropFirst()) : text) else {
            throw TranscodeError("<real> '\(text)' is not a number")
        }
        return try double(v)
    }

    static func double(_ v: Double) throws(TranscodeError) -> String {
        guard v.isFinite else { throw TranscodeError("real value \(v) has no JSON representation") }
        return v.description
    }

    /// XML plist dates are `YYYY-MM-DDTHH:MM:SSZ`; validated and passed through.
    static func xmlDate(_ text: String) throws(TranscodeError) -> String {
        let b = Array(text.utf8)
        let digitPositions = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z"),
              digitPositions.allSatisfy({ b[$0] >= 0x30 && b[$0] <= 0x39 }) else {
            throw TranscodeError("<date> '\(text)' is not an ISO 8601 UTC date (YYYY-MM-DDTHH:MM:SSZ)")
        }
        return text
    }

    /// Seconds since 2001-01-01T00:00:00Z (Apple's reference date) as ISO 8601 UTC.
    static func isoDate(secondsSince2001 seconds: Double) throws(TranscodeError) -> String {
        guard seconds.isFinite, abs(seconds) < 1e13 else { throw TranscodeError("date \(seconds) is out of range") }
        return UTCTimestamp.format(unixSeconds: seconds + 978_307_200, fraction: .trimmedMilliseconds)
    }
}
