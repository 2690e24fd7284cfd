import HTTPCore
import Testing

@Suite struct HeaderNamesTests {
    func matches(_ names: HeaderNames, _ raw: String) -> Bool {
        Array(raw.utf8).withUnsafeBufferPointer { names.contains($0) }
    }

    @Test func matchesRawNamesIgnoringASCIICase() {
        let names = HeaderNames(["cache-control", "Date", "x-1"])
        #expect(matches(names, "Cache-Control") && matches(names, "CACHE-CONTROL") && matches(names, "date"))
        #expect(matches(names, "X-1") && names.contains("DATE"))
        #expect(!matches(names, "Cache-Contro") && !matches(names, "cache-controls") && !matches(names, ""))
        // Only letters fold: '-' | 0x20 is itself, but '\r' | 0x20 would be '-'.
        #expect(!matches(names, "cache\rcontrol") && !matches(names, "x\u{0D}1"))
    }

    @Test func prefixesIgnoreASCIICase() {
        let has = { (raw: String) in Array(raw.utf8).withUnsafeBufferPointer { HeaderNames.hasPrefix($0, "proxy-") } }
        #expect(has("Proxy-Foo") && has("PROXY-") && has("proxy-authorization"))
        #expect(!has("proxy") && !has("proxyfoo") && !has("x-proxy-a") && !has("proxy\r"))
    }

    @Test func prefixUpToAByte() {
        #expect("/a/b?x=1?y".prefix(upToByte: UInt8(ascii: "?")) == "/a/b")
        #expect("/café/ü".prefix(upToByte: UInt8(ascii: "?")) == "/café/ü")
        #expect("?q".prefix(upToByte: UInt8(ascii: "?")) == "")
    }

    @Test func millisecondsHaveThreeDecimals() {
        #expect(NumberText.milliseconds(0) == "0.000")
        #expect(NumberText.milliseconds(1.2345675) == "1234.568")
        #expect(NumberText.milliseconds(0.0000004) == "0.000")
        #expect(NumberText.milliseconds(86_400) == "86400000.000")
        #expect(NumberText.milliseconds(-1) == "0.000" && NumberText.milliseconds(.nan) == "0.000")
        var bytes = Array("t=".utf8)
        NumberText.appendMilliseconds(0.012, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "t=12.000")
    }
}

@Suite struct HexTests {
    @Test func readsEitherCaseAndRejectsTheRest() {
        #expect(Array("09afAF".utf8).map { Hex.value($0) } == [0, 9, 10, 15, 10, 15])
        #expect(Array("/:@G`g".utf8).allSatisfy { Hex.value($0) == nil })
        #expect((0..<16).map { Hex.digit(UInt8($0)) } == Array("0123456789abcdef".utf8))
        #expect(Hex.digit(0xAB) == UInt8(ascii: "b"))
    }
}
