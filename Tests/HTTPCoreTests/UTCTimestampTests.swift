import HTTPCore
import Testing

@Suite struct UTCTimestampTests {
    @Test func formatsEpochAndCivilDates() {
        #expect(UTCTimestamp.format(unixSeconds: 0, fraction: .trimmedMilliseconds) == "1970-01-01T00:00:00Z")
        #expect(UTCTimestamp.format(unixSeconds: 951_782_400, fraction: .trimmedMilliseconds) == "2000-02-29T00:00:00Z")
        #expect(UTCTimestamp.format(unixSeconds: -1, fraction: .trimmedMilliseconds) == "1969-12-31T23:59:59Z")
    }

    @Test func logMillisecondsAreTruncatedAndAlwaysThreeDigits() {
        #expect(UTCTimestamp.format(unixSeconds: 1.9999, fraction: .milliseconds) == "1970-01-01T00:00:01.999Z")
        #expect(UTCTimestamp.format(unixSeconds: 2, fraction: .milliseconds) == "1970-01-01T00:00:02.000Z")
    }

    /// The byte form (tapes) writes what the text form does, and declines years past 9999.
    @Test func bytesAgreeWithTheText() {
        var out = [UInt8](repeating: 0, count: 24)
        for seconds in [0, 1.9999, -1, -0.0005, 951_782_400.123, 1_700_000_000.25, 253_402_300_799.999, -62_167_219_200] {
            let n = out.withUnsafeMutableBufferPointer { UTCTimestamp.putMilliseconds(unixSeconds: seconds, into: $0.baseAddress!) }
            #expect(n.map { String(decoding: out[..<$0], as: UTF8.self) } == UTCTimestamp.format(unixSeconds: seconds, fraction: .milliseconds), "\(seconds)")
        }
        #expect(out.withUnsafeMutableBufferPointer { UTCTimestamp.putMilliseconds(unixSeconds: 253_402_300_800, into: $0.baseAddress!) } == nil)
        #expect(out.withUnsafeMutableBufferPointer { UTCTimestamp.putMilliseconds(unixSeconds: -62_167_219_201, into: $0.baseAddress!) } == nil)
    }

    @Test func trimmedMillisecondsRoundAndCarryIntoTheSecond() {
        #expect(UTCTimestamp.format(unixSeconds: 1.25, fraction: .trimmedMilliseconds) == "1970-01-01T00:00:01.25Z")
        #expect(UTCTimestamp.format(unixSeconds: 59.9996, fraction: .trimmedMilliseconds) == "1970-01-01T00:01:00Z")
    }
}

@Suite struct HTTPDateTests {
    @Test func onlyIMFFixdatesAreValid() {
        #expect(HTTPDate.isValid("Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(HTTPDate.isValid("Fri, 27 Nov 2026 23:59:60 GMT"))
        for text in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
                     "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:49:37 GMT", "sun, 06 Nov 1994 08:49:37 GMT", "", "yesterday"] {
            #expect(!HTTPDate.isValid(text), "\(text)")
        }
    }
}
