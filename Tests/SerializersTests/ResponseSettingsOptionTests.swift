import HTTPCore
@testable import Serializers
import Testing

/// `optionArguments` is `apply(option:)`'s inverse: the failure evidence's reproduce
/// command gives `transcode` exactly the route's settings.
@Suite struct ResponseSettingsOptionTests {
    static func settings(_ options: [String], serializer: SerializerName = .json) throws -> ResponseSettings {
        var settings = ResponseSettings(serializer: serializer)
        for option in options { try settings.apply(option: option) }
        return settings
    }

    @Test(arguments: [
        [],
        ["acceptable_status_codes=200-299,404"], ["acceptable_status_codes=null"],
        ["acceptable_content_types=application/json,text/*"], ["acceptable_content_types=null"],
        ["remove_null_values=true", "allow_fragments=false", "max_json_depth=64"],
        ["serializers=xml,json"],
        ["xml.force_array=/rss/channel/item,/a/b", "xml.namespaces=strip"], ["image.include_data=true"],
    ])
    func optionsComeBackAsTheSameSettings(options: [String]) throws {
        let original = try Self.settings(options)
        #expect(original.optionArguments == options)
        #expect(try Self.settings(original.optionArguments) == original)
    }

    @Test func defaultsGiveNoOptions() {
        #expect(ResponseSettings(serializer: .xml).optionArguments.isEmpty)
    }
}
