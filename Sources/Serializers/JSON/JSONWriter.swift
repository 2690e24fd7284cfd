/// Writes `JSONValue`s as compact JSON; in canonical mode as RFC 8785 (JCS):
/// members sorted by UTF-16 code units, numbers in ECMAScript's shortest form.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    public let canonical: Bool
    /// Charged after every scalar and key; once spent, writing stops and `exceeded` is set.
    public var budget: OutputBudget?
    public private(set) var exceeded = false

    public init(canonical: Bool = false, budget: OutputBudget? = nil) {
        self.canonical = canonical
        self.budget = budget
    }

    public mutating func write(_ value: JSONValue) throws(JSONError) {
        guard !exceeded else { return }
        defer { if let budget, !budget.admits(bytes.count) { exceeded = true } }
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let b): bytes.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let lexeme):
            if canonical {
                bytes.append(contentsOf: try CanonicalNumber.format(lexeme).utf8)
            } else {
                bytes.append(contentsOf: lexeme.utf8)
            }
        case .string(let s): JSONEscaping.appendQuoted(s, to: &bytes)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                try write(item)
                if exceeded { return }
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let ordered = canonical ? JSONWriter.lastWinsSortedByUTF16(members) : members
            for (k, member) in ordered.enumerated() {
                if k > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONEscaping.appendQuoted(member.0, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                try write(member.1)
                if exceeded { return }
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// One member per key (the last, as ECMAScript's JSON.parse and an NSDictionary
    /// keep), sorted by UTF-16 code units: RFC 8785's order, and AF's query-key order.
    static func lastWinsSortedByUTF16<Value>(_ members: [(String, Value)]) -> [(String, Value)] {
        var lastIndex: [String: Int] = [:]
        for (k, m) in members.enumerated() { lastIndex[m.0] = k }
        let unique = members.enumerated().filter { lastIndex[$0.element.0] == $0.offset }.map(\.element)
        return unique.sorted { $0.0.utf16.lexicographicallyPrecedes($1.0.utf16) }
    }
}

/// ECMAScript Number::toString for a JSON number lexeme (RFC 8785 §3.2.2.3).
public enum CanonicalNumber {
    public static func format(_ lexeme: String) throws(JSONError) -> String {
        guard let value = Double(lexeme), value.isFinite else {
            throw JSONError("number \(lexeme) is outside the IEEE 754 double range required by canonical JSON")
        }
        if value == 0 { return "0" }
        let (digits, exponent) = shortestDigits(value.magnitude)
        let sign = value < 0 ? "-" : ""
        let k = digits.count, n = exponent
        if k <= n && n <= 21 {
            return sign + digits + String(repeating: "0", count: n - k)
        }
        if 0 < n && n <= 21 {
            return sign + String(digits.prefix(n)) + "." + String(digits.dropFirst(n))
        }
        if -6 < n && n <= 0 {
            return sign + "0." + String(repeating: "0", count: -n) + digits
        }
        let e = n - 1
        let expText = (e < 0 ? "-" : "+") + String(e.magnitude)
        if k == 1 { return sign + digits + "e" + expText }
        return sign + String(digits.prefix(1)) + "." + String(digits.dropFirst()) + "e" + expText
    }

    /// Shortest round-trip decimal digits (no leading/trailing zeros) and the exponent
    /// n such that value = 0.d1d2… × 10^n. Swift's `description` is shortest round-trip.
    static func shortestDigits(_ value: Double) -> (String, Int) {
        let text = value.description
        var mantissa = Substring(text), exp = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exp = Int(text[text.index(after: e)...]) ?? 0
        }
        let intPart: Substring, fracPart: Substring
        if let dot = mantissa.firstIndex(of: ".") {
            intPart = mantissa[..<dot]
            fracPart = mantissa[mantissa.index(after: dot)...]
        } else {
            intPart = mantissa
            fracPart = ""
        }
        var all = Array(intPart + fracPart)
        var pointPosition = intPart.count + exp
        while let first = all.first, first == "0", all.count > 1 { all.removeFirst(); pointPosition -= 1 }
        while let last = all.last, last == "0", all.count > 1 { all.removeLast() }
        return (String(all), pointPosition)
    }
}
