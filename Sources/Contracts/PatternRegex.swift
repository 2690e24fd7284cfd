internal import CRE2

/// A `pattern` run by RE2 (DESIGN §10): time linear in the text for any pattern, so
/// `(a+)+$` against 100 KB of `a` is as quick as any other. ECMA-262 features RE2 lacks
/// (back-references, look-around) make the schema an error rather than a slow match.
final class PatternRegex: @unchecked Sendable {
    /// RE2's program memory for one pattern: a larger pattern is a schema error.
    static let maxMemory = 8 << 20
    let source: String
    private let handle: OpaquePointer

    init(_ pattern: String) throws(PatternError) {
        var error = [CChar](repeating: 0, count: 256)
        let pattern = Self.shortPropertyNames(pattern)
        let length = pattern.utf8.count
        let compiled = pattern.withCString { text in
            serializerd_regex_compile(text, length, Self.maxMemory, &error, error.count)
        }
        guard let compiled else {
            throw PatternError(reason: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        handle = compiled
        source = pattern
    }

    deinit { serializerd_regex_free(handle) }

    /// ECMA-262's long General_Category names (`\p{Letter}`) as RE2's short ones (`\p{L}`).
    static let categories = ["Letter": "L", "Cased_Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
                             "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
                             "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N",
                             "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
                             "Punctuation": "P", "punct": "P", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
                             "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp",
                             "Other": "C", "Control": "Cc", "Format": "Cf", "Private_Use": "Co", "Unassigned": "Cn"]

    static func shortPropertyNames(_ pattern: String) -> String {
        guard pattern.contains("\\p{") || pattern.contains("\\P{") else { return pattern }
        var out = pattern
        for (long, short) in categories {
            for p in ["p", "P"] { out = out.replacing("\\\(p){\(long)}", with: "\\\(p){\(short)}") }
        }
        return out
    }

    func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { serializerd_regex_search(handle, $0.baseAddress, $0.count) == 1 }
        }
    }
}

struct PatternError: Error {
    let reason: String
}
