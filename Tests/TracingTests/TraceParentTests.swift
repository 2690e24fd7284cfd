import Testing
@testable import Tracing

@Suite struct TraceParentTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func aValidFieldReadsAndWritesBack() throws {
        let parent = try #require(TraceParent(Self.valid))
        #expect(parent.traceHigh == 0x4bf92f3577b34da6 && parent.traceLow == 0xa3ce929d0e0e4736)
        #expect(parent.spanID == 0x00f067aa0ba902b7 && parent.sampled)
        #expect(parent.field == Self.valid)
        let unsampled = try #require(TraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
        #expect(!unsampled.sampled)
    }

    @Test func whatTheSpecificationRefuses() {
        let refused = [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",            // short
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",          // 00 with more
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",           // uppercase
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",           // version ff
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",           // zero trace
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",           // zero span
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",           // separator
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",           // not hex
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",          // later version, no dash
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ]
        for text in refused { #expect(TraceParent(text) == nil, "\(text)") }
    }

    @Test func aLaterVersionIsReadAsVersionZero() throws {
        let later = try #require(TraceParent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"))
        #expect(later.spanID == 0x00f067aa0ba902b7 && later.sampled)
        #expect(later.field == Self.valid)
        #expect(TraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") != nil)
    }

    @Test func idsAreNeverZeroAndSamplingFollowsTheFraction() {
        var ids = TraceIDSource()
        var seen = Set<UInt64>()
        for _ in 0..<10_000 {
            let id = ids.next()
            #expect(id != 0)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        let below = (0..<100_000).filter { _ in ids.unit() < 0.25 }.count
        #expect(abs(Double(below) / 100_000 - 0.25) < 0.01, "\(below)")
    }
}
