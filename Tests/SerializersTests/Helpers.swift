@testable import Serializers

/// Builds a serializer the way a route does, from `--option`-style settings.
func makeSerializer(_ name: String, _ options: [String] = []) throws -> any ResponseSerializer {
    var settings = ResponseSettings(serializer: try SerializerName(parsing: name))
    for option in options { try settings.apply(option: option) }
    return try ResponseSerializerRegistry.make(settings)
}

func response(_ status: Int = 200, _ contentType: String?, _ body: String) -> UpstreamResponse {
    UpstreamResponse(status: status, contentType: contentType, body: Array(body.utf8))
}

extension SerializationResult {
    var text: String? { value?.text }
}

/// A small seeded generator (SplitMix64), so the randomized tests are repeatable.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
