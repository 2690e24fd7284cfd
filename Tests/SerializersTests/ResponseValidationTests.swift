@testable import Serializers
import Testing

@Suite struct ResponseValidationTests {
    let json = try! makeSerializer("json")

    @Test(arguments: [200, 201, 204, 299])
    func defaultStatusRangeIsTheTwoHundreds(status: Int) {
        #expect(json.serialize(response(status, "application/json", "{}")).error == nil)
    }

    @Test(arguments: [100, 199, 300, 304, 400, 404, 500, 599])
    func statusesOutsideTheRangeFailWithAFCode(status: Int) {
        let error = json.serialize(response(status, "application/json", "{}")).error
        #expect(error == .unacceptableStatus(status, underlying: nil))
        #expect(error?.code == -1011)
    }

    @Test func customStatusSetsMixCodesAndRanges() throws {
        let s = try makeSerializer("json", ["acceptable_status_codes=200-204,404,500-501"])
        #expect(s.serialize(response(404, "application/json", "{}")).succeeded)
        #expect(s.serialize(response(501, "application/json", "{}")).succeeded)
        #expect(!s.serialize(response(205, "application/json", "{}")).succeeded)
    }

    @Test func nullStatusListDisablesTheCheck() throws {
        let s = try makeSerializer("json", ["acceptable_status_codes=null"])
        #expect(s.serialize(response(500, "application/json", "{}")).succeeded)
    }

    @Test(arguments: ["application/json", "text/json", "text/javascript", "application/json; charset=utf-8",
                      "APPLICATION/JSON", "application/problem+json", "application/vnd.api+json"])
    func jsonAcceptsAFTypesAndSuffixes(type: String) {
        #expect(json.serialize(response(200, type, "{}")).succeeded)
    }

    @Test func nonStandardJSONTypeIsRejectedWithCode1016() {
        let result = json.serialize(response(200, "nonstandard/json", "{\"a\":1}"))
        #expect(result.error == .unacceptableContentType("nonstandard/json"))
        #expect(result.error?.code == -1016)
        #expect(result.value == nil)
    }

    @Test func missingContentTypeWithBodyIsRejected() {
        #expect(json.serialize(response(200, nil, "{}")).error == .unacceptableContentType(nil))
    }

    @Test func mimeMismatchWithEmptyBodyIsNotAnError() {
        let result = json.serialize(response(200, "text/html", ""))
        #expect(result.error == nil)
        #expect(result.text == "null")
    }

    @Test func statusErrorSitsOnTopOfContentTypeError() {
        let result = json.serialize(response(500, "text/html", "<html>"))
        #expect(result.error == .unacceptableStatus(500, underlying: .unacceptableContentType("text/html")))
        #expect(result.value == nil)
        #expect(result.error?.unacceptableErrorStatus == 500)
    }

    @Test func wildcardsAndNullContentTypeList() throws {
        let anyApp = try makeSerializer("json", ["acceptable_content_types=application/*"])
        #expect(anyApp.serialize(response(200, "application/x-anything", "{}")).succeeded)
        #expect(!anyApp.serialize(response(200, "text/plain", "{}")).succeeded)
        let none = try makeSerializer("json", ["acceptable_content_types=null"])
        #expect(none.serialize(response(200, nil, "{}")).succeeded)
        let all = try makeSerializer("json", ["acceptable_content_types=*/*"])
        #expect(all.serialize(response(200, nil, "{}")).succeeded)
    }
}
