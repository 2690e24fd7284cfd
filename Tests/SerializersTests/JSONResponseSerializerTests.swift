@testable import Serializers
import TestSupport
import Testing

@Suite struct JSONResponseSerializerTests {
    let json = try! makeSerializer("json")

    @Test func validDictionaryIsNormalized() {
        let result = json.serialize(response(200, "text/json", "{ \"foo\" : \"bar\" }"))
        #expect(result.text == #"{"foo":"bar"}"#)
        #expect(result.serializer == "json")
    }

    @Test func invalidJSONFailsWith3840AndDetail() {
        let result = json.serialize(response(200, "text/json", "{invalid}"))
        #expect(result.error?.code == 3840)
        #expect(result.error?.detail?.contains("byte 1") == true)
        #expect(result.value == nil)
    }

    @Test func emptyBodyIsNullWithoutError() {
        let result = json.serialize(response(200, "text/json", ""))
        #expect(result.error == nil && result.text == "null")
    }

    @Test func singleSpaceIsNullWithoutError() {
        let result = json.serialize(response(200, "text/json", " "))
        #expect(result.error == nil && result.text == "null")
    }

    @Test func badStatusWithValidJSONKeepsTheObject() {
        let result = json.serialize(response(404, "application/json", #"{"message": "Not Found"}"#))
        #expect(result.error == .unacceptableStatus(404, underlying: nil))
        #expect(result.text == #"{"message":"Not Found"}"#)
    }

    @Test func parseFailureSitsOnTopOfStatusFailure() {
        let result = json.serialize(response(500, "application/json", "oops"))
        guard case .serializationFailed(_, _, let underlying) = result.error else {
            Issue.record("expected a serialization failure, got \(String(describing: result.error))")
            return
        }
        #expect(underlying == .unacceptableStatus(500, underlying: nil))
        #expect(result.error?.unacceptableErrorStatus == 500)
    }

    @Test func removesNestedNullsLikeAF() throws {
        let s = try makeSerializer("json", ["remove_null_values=true"])
        let result = s.serialize(UpstreamResponse(status: 200, contentType: "text/json",
                                                   body: try Fixture.bytes("json/af-null-removal.json")))
        let value = try #require(result.value?.value)
        #expect(value["key"] == .string("value"))
        #expect(value["nullkey"] == nil)
        #expect(value["array"]?[0]?["subnullkey"] == nil)
        #expect(result.text == #"{"key":"value","array":[{},1]}"#)
    }

    @Test func fragmentsCanBeRefused() throws {
        let s = try makeSerializer("json", ["allow_fragments=false"])
        #expect(s.serialize(response(200, "application/json", "\"x\"")).error?.code == 3840)
        #expect(json.serialize(response(200, "application/json", "\"x\"")).text == "\"x\"")
    }

    @Test func depthLimitComesFromSettings() throws {
        let s = try makeSerializer("json", ["max_json_depth=2"])
        #expect(s.serialize(response(200, "application/json", "[[1]]")).succeeded)
        let deep = s.serialize(response(200, "application/json", "[[[1]]]"))
        #expect(deep.error?.detail?.contains("nesting deeper than the limit of 2") == true)
    }
}

@Suite struct JSONCharsetTests {
    @Test func charsetParameterIsIgnoredLikeAF() throws {
        let s = try makeSerializer("json")
        let body = Array("{\"a\":\"é\"}".utf8)
        let result = s.serialize(UpstreamResponse(status: 200, contentType: "application/json; charset=iso-8859-1", body: body))
        #expect(result.text == "{\"a\":\"é\"}")
    }

    @Test func latin1BytesAreRejectedNotMangled() throws {
        let s = try makeSerializer("json")
        let result = s.serialize(UpstreamResponse(status: 200, contentType: "application/json", body: [0x22, 0xE9, 0x22]))
        #expect(result.error?.detail == "json: invalid UTF-8 in string at line 1, column 2 (byte 1)")
    }

    /// A stream's event is normalized without being made into an answer: the same result
    /// as the answer path for each kind of body, including one over the output cap.
    @Test func eventsSerializeAsTheirAnswersWould() throws {
        for serializer in ["json", "xml", "text"] {
            var settings = ResponseSettings(serializer: try SerializerName(parsing: serializer))
            settings.maxOutput = 64
            let events = try ResponseSerializerRegistry.makeForEvents(settings)
            let bodies = ["", " ", #"{ "a" : 1 }"#, "{bad", "<a>1</a>", "[" + String(repeating: "1,", count: 40) + "1]"]
            for body in bodies {
                let direct = events.serialize(event: Array(body.utf8))
                #expect(direct == events.serialize(response(200, nil, body)), "\(serializer): \(body)")
            }
        }
        // The cap holds on the event path too.
        var settings = ResponseSettings(serializer: .json)
        settings.maxOutput = 64
        let capped = try ResponseSerializerRegistry.makeForEvents(settings).serialize(event: Array(("[" + String(repeating: "1,", count: 40) + "1]").utf8))
        #expect(capped.value == nil && capped.error?.code == 3840)
        #expect(try ResponseSerializerRegistry.makeForEvents(settings).serialize(event: Array(#"{ "a" : 1 }"#.utf8)).text == #"{"a":1}"#)
    }
}
