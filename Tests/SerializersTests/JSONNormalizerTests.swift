@testable import Serializers
import Testing

@Suite struct JSONNormalizerTests {
    func normalized(_ text: String, _ options: JSONReadOptions = .init()) throws -> String {
        String(decoding: try JSONNormalizer.normalize(Array(text.utf8), options: options), as: UTF8.self)
    }

    func failure(_ bytes: [UInt8], _ options: JSONReadOptions = .init()) -> JSONError? {
        do { _ = try JSONNormalizer.normalize(bytes, options: options); return nil } catch { return error }
    }

    @Test func removesWhitespaceAndKeepsMemberOrder() throws {
        #expect(try normalized(" { \"z\" : 1 ,\n\t\"a\" : [ true , false , null ] } ") == #"{"z":1,"a":[true,false,null]}"#)
    }

    @Test func keepsNumberLexemesVerbatim() throws {
        #expect(try normalized("[1.0, -0, 1E+2, 0.1e-7, 123456789012345678901234567890]")
                == "[1.0,-0,1E+2,0.1e-7,123456789012345678901234567890]")
    }

    @Test func unescapesSlashAndNonControlEscapes() throws {
        #expect(try normalized(#"["a\/b", "\u00e9\u20AC", "\ud83d\ude00"]"#) == "[\"a/b\",\"é€\",\"😀\"]")
    }

    @Test func escapesQuotesBackslashesAndControlsCanonically() throws {
        #expect(try normalized(#"["\"\\", "\u0008\u0009\u000a\u000c\u000d", "\u0001\u001F"]"#)
                == #"["\"\\","\b\t\n\f\r","\u0001\u001f"]"#)
    }

    /// Strings are copied eight bytes at a time; put each kind of special byte at every
    /// offset of the first words, with the string at the very end of the input and behind
    /// whitespace that is removed (so the output runs behind the input cursor), and check
    /// against the byte-by-byte meaning.
    @Test(arguments: [
        (#"\""#, #"\""#), (#"\\"#, #"\\"#), (#"\/"#, "/"), (#"\n"#, #"\n"#), (#"\u00e9"#, "é"),
        (#"\u0001"#, #"\u0001"#), ("é", "é"), ("😀", "😀"), ("\"", nil), ("\u{01}", nil),
    ] as [(String, String?)])
    func specialBytesAtEveryOffsetOfAWord(special: String, expected: String?) throws {
        for before in 0...17 {
            for after in [0, 1, 7, 8, 9] {
                let left = String(repeating: "a", count: before), right = String(repeating: "b", count: after)
                for (prefix, suffix) in [("", ""), ("[   \n  ", "]"), ("{\"k\"  :   ", "}")] {
                    let input = prefix + "\"" + left + special + right + "\"" + suffix
                    let compactPrefix = prefix.filter { !" \n".contains($0) }
                    if let expected {
                        #expect(try normalized(input) == compactPrefix + "\"" + left + expected + right + "\"" + suffix,
                                "\(input)")
                    } else {
                        #expect(failure(Array(input.utf8)) != nil, "\(input)")
                    }
                }
            }
        }
    }

    @Test func passesLiteralUTF8Through() throws {
        #expect(try normalized("{\"名前\":\"値 ☃ 😀\"}") == "{\"名前\":\"値 ☃ 😀\"}")
    }

    @Test func removeNullValuesFollowsAFRules() throws {
        let options = JSONReadOptions(removeNullValues: true)
        #expect(try normalized(#"{"key":"value","nullkey":null,"array":[{"subnullkey":null},null,1]}"#, options)
                == #"{"key":"value","array":[{},1]}"#)
        #expect(try normalized(#"{"a":null}"#, options) == "{}")
        #expect(try normalized("[null,null]", options) == "[]")
        #expect(try normalized("null", options) == "null")
        #expect(try normalized(#"{"a":null,"b":2,"c":null}"#, options) == #"{"b":2}"#)
    }

    @Test func fragmentsFollowTheOption() throws {
        #expect(try normalized(" \"x\" ") == "\"x\"")
        #expect(try normalized("42") == "42")
        let strict = JSONReadOptions(allowFragments: false)
        #expect(failure(Array("42".utf8), strict)?.message.contains("fragments are not allowed") == true)
        #expect(try normalized("[42]", strict) == "[42]")
    }

    @Test func malformedInputReportsOffsetAndExpectation() throws {
        let error = try #require(failure(Array("{\"a\":1,}".utf8)))
        #expect(error.offset == 7)
        #expect(error.message == "unexpected '}', expected a string key")
        #expect(error.description.contains("line 1, column 8"))
        let lines = try #require(failure(Array("[1,\n2,\n?]".utf8)))
        #expect(lines.line == 3 && lines.column == 1)
    }

    @Test(arguments: [
        ("", "unexpected end of input"), ("[1,2", "expected ',' or ']'"), ("{\"a\" 1}", "expected ':'"),
        ("[01]", "expected ',' or ']'"), ("[1.]", "digit after the decimal point"), ("[1e]", "digit in the exponent"),
        ("[-]", "expected a digit"), ("[tru]", "expected 'true'"), ("[nul", "expected 'null'"),
        ("\"abc", "unterminated string"), ("\"a\u{01}\"", "unescaped control character"), ("\"\\x\"", "invalid escape"),
        ("\"\\u12G4\"", "invalid hex digit"), ("\"\\ud800\"", "lone surrogate"), ("\"\\udc00x\"", "lone surrogate"),
        ("\"\\ud800\\u0041\"", "lone surrogate"), ("[1] [2]", "expected end of input"), ("{'a':1}", "expected a string key"),
    ])
    func rejectsMalformedJSON(input: String, message: String) throws {
        let error = try #require(failure(Array(input.utf8)))
        #expect(error.message.contains(message), "\(error)")
    }

    @Test func rejectsInvalidUTF8InStrings() throws {
        for bad: [UInt8] in [[0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x80]] {
            let error = try #require(failure([0x22] + bad + [0x22]))
            #expect(error.message == "invalid UTF-8 in string")
            #expect(error.offset == 1)
        }
    }

    @Test func rejectsRawNonASCIIOutsideStrings() throws {
        #expect(failure([0x5B, 0xC3, 0xA9, 0x5D]) != nil)
    }

    @Test func depthLimitFailsInsteadOfOverflowing() throws {
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000) + Array(repeating: UInt8(ascii: "]"), count: 100_000)
        let error = failure(deep)
        #expect(error?.message == "nesting deeper than the limit of 512 (limits.max_json_depth)")
        #expect(error?.offset == 512)
        let ok = Array(repeating: UInt8(ascii: "["), count: 512) + Array(repeating: UInt8(ascii: "]"), count: 512)
        let accepted = failure(ok) == nil
        #expect(accepted)
    }

    @Test func outputIsNeverLongerThanInput() throws {
        let input = Array(#"{"a":"\u0001\/\u00e9\ud83d\ude00","b":[1,2]}"#.utf8)
        let output = try JSONNormalizer.normalize(input)
        #expect(output.count <= input.count)
    }
}
