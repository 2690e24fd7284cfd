@testable import Serializers
import Testing

@Suite struct TextAndRawSerializerTests {
    @Test func textDecodesByCharsetParameter() throws {
        let s = try makeSerializer("text")
        let latin = s.serialize(UpstreamResponse(status: 200, contentType: "text/plain; charset=ISO-8859-1", body: [0x63, 0xE9]))
        #expect(latin.text == "\"cé\"")
        let sjis = s.serialize(UpstreamResponse(status: 200, contentType: "text/plain; charset=shift_jis", body: [0x82, 0xA0]))
        #expect(sjis.text == "\"あ\"")
        #expect(s.serialize(response(200, "text/csv", "a,b\n\"c\"")).text == #""a,b\n\"c\"""#)
    }

    @Test func textRejectsBytesInvalidForTheCharset() throws {
        let s = try makeSerializer("text")
        let bad = s.serialize(UpstreamResponse(status: 200, contentType: "text/plain", body: [0x61, 0xC3, 0x28]))
        #expect(bad.error?.detail == "text: invalid UTF-8 at byte 1")
        let ascii = s.serialize(UpstreamResponse(status: 200, contentType: "text/plain; charset=us-ascii", body: [0x61, 0xE9]))
        #expect(ascii.error?.code == 3840)
        let unknown = s.serialize(response(200, "text/plain; charset=klingon", "x"))
        #expect(unknown.error?.detail?.contains("unsupported charset 'klingon'") == true)
    }

    @Test func textOnlyAcceptsTextTypesByDefault() throws {
        #expect(try makeSerializer("text").serialize(response(200, "application/json", "{}")).error?.code == -1016)
    }

    @Test func rawGivesStringsForUTF8AndBase64Otherwise() throws {
        let s = try makeSerializer("raw")
        #expect(s.serialize(response(200, nil, "héllo")).text == "\"héllo\"")
        let binary = s.serialize(UpstreamResponse(status: 200, contentType: "application/octet-stream", body: [0, 0xFF, 0x10]))
        #expect(binary.text == #"{"bytes":3,"base64":"AP8Q"}"#)
    }
}

@Suite struct CompoundResponseSerializerTests {
    @Test func firstMemberThatYieldsAValueWins() throws {
        let s = try makeSerializer("compound", ["serializers=xml,json"])
        let fromJSON = s.serialize(response(200, "application/json", #"{"a":1}"#))
        #expect(fromJSON.text == #"{"a":1}"# && fromJSON.serializer == "json")
        let fromXML = s.serialize(response(200, "text/xml", "<a>1</a>"))
        #expect(fromXML.text == #"{"a":"1"}"# && fromXML.serializer == "xml")
    }

    @Test func orderDecidesWhenSeveralMembersAccept() throws {
        let textFirst = try makeSerializer("compound", ["serializers=text,xml"])
        #expect(textFirst.serialize(response(200, "text/xml", "<a>1</a>")).serializer == "text")
    }

    @Test func fallsBackToRawWhenNoMemberYields() throws {
        let s = try makeSerializer("compound", ["serializers=json,image"])
        let result = s.serialize(response(200, "text/html", "<p>hi</p>"))
        #expect(result.error == nil)
        #expect(result.serializer == "raw")
        #expect(result.text == "\"<p>hi</p>\"")
    }

    @Test func statusPolicyIsTheRoutesForEveryMember() throws {
        let s = try makeSerializer("compound", ["serializers=json", "acceptable_status_codes=200-299,404"])
        #expect(s.serialize(response(404, "application/json", "{}")).serializer == "json")
        // AF: the json member parses the 500 body and returns it with the status error.
        let failed = s.serialize(response(500, "application/json", #"{"e":1}"#))
        #expect(failed.error == .unacceptableStatus(500, underlying: nil))
        #expect(failed.serializer == "json" && failed.text == #"{"e":1}"#)
        // A body no member can read: the raw fallback, with the same status error.
        let html = s.serialize(response(500, "text/html", "<p>"))
        #expect(html.error == .unacceptableStatus(500, underlying: nil) && html.serializer == "raw" && html.text == #""<p>""#)
    }

    @Test func fallbackUsesTheCompoundsOwnContentTypes() throws {
        let s = try makeSerializer("compound", ["serializers=json", "acceptable_content_types=text/plain"])
        #expect(s.serialize(response(200, "text/html", "<p>")).error == .unacceptableContentType("text/html"))
    }

    @Test func memberOptionsApply() throws {
        let s = try makeSerializer("compound", ["serializers=json,image", "image.include_data=true", "remove_null_values=true"])
        #expect(s.serialize(response(200, "application/json", #"{"a":null}"#)).text == "{}")
    }
}

@Suite struct ResponseSerializerRegistryTests {
    @Test func unknownNamesFail() {
        #expect(throws: SettingsError.self) { try makeSerializer("yaml") }
        #expect(throws: SettingsError.self) { try makeSerializer("compound", ["serializers=json,yaml"]) }
        #expect(throws: SettingsError.self) { try makeSerializer("compound", ["serializers=compound"]) }
        #expect(throws: SettingsError.self) { try makeSerializer("compound") }
    }

    @Test func optionsOfAnotherSerializerFail() {
        #expect(throws: SettingsError.self) { try makeSerializer("json", ["xml.force_array=/a"]) }
        #expect(throws: SettingsError.self) { try makeSerializer("xml", ["remove_null_values=true"]) }
        #expect(throws: SettingsError.self) { try makeSerializer("text", ["image.include_data=true"]) }
        #expect(throws: SettingsError.self) { try makeSerializer("json", ["serializers=json"]) }
        #expect(throws: SettingsError.self) { try makeSerializer("compound", ["serializers=json", "namespaces=strip"]) }
    }

    @Test func badValuesFailWithTheKeyNamed() {
        var settings = ResponseSettings()
        #expect(throws: SettingsError(key: "acceptable_status_codes", "'2xx' is not a status code (100-599) or a range like 200-299")) {
            try settings.apply(option: "acceptable_status_codes=2xx")
        }
        for (option, key) in [("acceptable_status_codes=300-200", "acceptable_status_codes"), ("acceptable_content_types=json", "acceptable_content_types"),
                              ("remove_null_values=yes", "remove_null_values"), ("serializer=yaml", "serializer"),
                              ("serializers=json,compound", "serializers"), ("xml.namespaces=drop", "xml.namespaces"), ("max_json_depth=0", "max_json_depth")] {
            #expect(throws: SettingsError.self, "\(option)") { try settings.apply(option: option) }
            do { try settings.apply(option: option) } catch { #expect(error.key == key && error.message.hasPrefix(key + ": "), "\(error)") }
        }
        #expect(throws: SettingsError("unknown response option 'frobnicate'")) { try settings.apply(option: "frobnicate=1") }
        #expect(throws: SettingsError.self) { try settings.apply(option: "novalue") }
    }

    /// The config loader's path: YAML lists, scalars and null, each checked for its shape.
    @Test func typedValuesTakeListsScalarsAndNull() throws {
        var settings = ResponseSettings()
        try settings.apply(key: "acceptable_status_codes", value: .list(["200-299", "404"]))
        #expect(settings.acceptableStatusCodes == StatusCodeSet([200...299, 404...404]))
        try settings.apply(key: "acceptable_status_codes", value: .null)
        #expect(settings.acceptableStatusCodes == nil)
        try settings.apply(key: "serializers", value: .list(["xml", "json"]))
        #expect(settings.serializers == [.xml, .json])
        try settings.apply(key: "serializer", value: .scalar("compound"))
        #expect(settings.serializer == .compound)
        #expect(throws: SettingsError(key: "serializer", "expected a single value, found a list")) {
            try settings.apply(key: "serializer", value: .list(["json"]))
        }
        #expect(throws: SettingsError(key: "remove_null_values", "expected a value, found null")) {
            try settings.apply(key: "remove_null_values", value: .null)
        }
        #expect(throws: SettingsError(key: "xml.force_array", "expected a list, found null")) {
            try settings.apply(key: "xml.force_array", value: .null)
        }
    }

    @Test func everyNameResolves() throws {
        for name in SerializerName.allCases {
            let options = name == .compound ? ["serializers=json"] : []
            _ = try makeSerializer(name.rawValue, options)
        }
    }
}
