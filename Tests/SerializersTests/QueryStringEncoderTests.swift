@testable import Serializers
import Testing

@Suite struct QueryStringEncoderTests {
    func query(_ json: String) throws -> String {
        guard case .object(let members) = try JSONValue.parse(json) else { throw SettingsError("not an object") }
        return QueryStringEncoder.encode(members)
    }

    @Test func simplePair() throws {
        #expect(try query(#"{"key":"value"}"#) == "key=value")
        #expect(try query(#"{"key":"value","key1":"value&"}"#) == "key=value&key1=value%26")
    }

    @Test func escapesReservedCharactersButKeepsQuestionMarkAndSlash() throws {
        #expect(try query(#"{"key":" :#[]@!$&'()*+,;=/?"}"#) == "key=%20%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D/?")
        #expect(QueryStringEncoder.percentEscaped(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")
    }

    @Test func alreadyEscapedTextIsEscapedAgain() throws {
        #expect(try query(#"{"key":"%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%2F"}"#)
                == "key=%2520%2521%2522%2523%2524%2525%2526%2527%2528%2529%252A%252B%252C%252F")
    }

    @Test func emojiIsEscapedAsWholeUTF8Sequences() throws {
        // AF #3028: an odd-length run that crosses AF's 50-character batches.
        let parameter = "!" + String(repeating: "🐴", count: 30)
        let expected = "%21" + String(repeating: "%F0%9F%90%B4", count: 30)
        #expect(QueryStringEncoder.encode([("k", .string(parameter))]) == "k=" + expected)
    }

    @Test func nestedObjectsAndArraysUseBrackets() throws {
        #expect(try query(#"{"key":{"nested":"value"}}"#) == "key%5Bnested%5D=value")
        #expect(try query(#"{"a":["x","y"],"o":{"p":[{"q":1}]}}"#) == "a%5B%5D=x&a%5B%5D=y&o%5Bp%5D%5B%5D%5Bq%5D=1")
    }

    @Test func keysAreSortedByUTF16CodeUnitAtEveryLevel() throws {
        #expect(try query(#"{"b":1,"a":{"z":1,"y":2},"B":0,"é":1,"😀":2,"ﬂ":3}"#)
                == "B=0&a%5By%5D=2&a%5Bz%5D=1&b=1&%C3%A9=1&%F0%9F%98%80=2&%EF%AC%82=3")
    }

    @Test func nullIsABareKeyAndEmptyContainersVanish() throws {
        #expect(try query(#"{"a":null,"b":{},"c":[],"d":""}"#) == "a&d=")
    }

    @Test func booleansAreOneAndZeroAndNumbersKeepTheirText() throws {
        #expect(try query(#"{"t":true,"f":false,"n":1.50,"e":-2E3}"#) == "e=-2E3&f=0&n=1.50&t=1")
    }
}
