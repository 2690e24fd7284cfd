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
