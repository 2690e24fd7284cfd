@testable import Serializers
import TestSupport
import Testing

@Suite struct RequestSerializersTests {
    func run(_ name: String, _ method: String, query: String? = nil, type: String? = "application/json", _ body: String) throws -> SerializedRequest {
        try RequestSerializerRegistry.make(name).serialize(
            RequestInput(method: method, query: query, contentType: type, body: Array(body.utf8)))
    }

    @Test func passthroughForwardsBodyAndTypeAsSent() throws {
        let out = try run("passthrough", "POST", query: "x=1", type: "application/weird", "anything")
        #expect(out == SerializedRequest(query: "x=1", contentType: "application/weird", body: Array("anything".utf8)))
        #expect(try run("passthrough", "HEAD", query: "x=1", "body").body.isEmpty)
    }

    @Test(arguments: ["GET", "HEAD", "DELETE", "get"])
    func httpPutsParametersInTheQueryForURIMethods(method: String) throws {
        let out = try run("http", method, query: "x=1", #"{"b":"2 3","a":[1]}"#)
        #expect(out == SerializedRequest(query: "x=1&a%5B%5D=1&b=2%203", contentType: nil, body: []))
    }

    @Test func httpSendsAFormBodyForOtherMethods() throws {
        let out = try run("http", "POST", query: "x=1", #"{"b":true,"a":null}"#)
        #expect(out == SerializedRequest(query: "x=1", contentType: "application/x-www-form-urlencoded", body: Array("a&b=1".utf8)))
        let empty = try run("http", "PUT", "")
        #expect(empty.contentType == "application/x-www-form-urlencoded" && empty.body.isEmpty)
    }

    @Test func jsonSendsAJSONBodyKeepingOrder() throws {
        let out = try run("json", "PATCH", type: "application/x-www-form-urlencoded", "z=1&a[]=2")
        #expect(out == SerializedRequest(query: nil, contentType: "application/json", body: Array(#"{"z":"1","a":["2"]}"#.utf8)))
        #expect(try run("json", "POST", "") == SerializedRequest(query: nil, contentType: nil, body: []))
        #expect(try run("json", "GET", query: "q", #"{"a":1}"#).query == "q&a=1")
    }

    @Test func plistSendsAnXMLPropertyList() throws {
        let out = try run("plist", "POST", #"{"name":"a&b","n":[1,2.5,true],"d":{}}"#)
        #expect(out.contentType == "application/x-plist")
        let text = String(decoding: out.body, as: UTF8.self)
        #expect(text.contains("<key>name</key>\n\t<string>a&amp;b</string>"))
        #expect(text.contains("<integer>1</integer>") && text.contains("<real>2.5</real>") && text.contains("<true/>"))
        #expect(try PlistTranscoder.transcode(out.body).text == #"{"name":"a&b","n":[1,2.5,true],"d":{}}"#)
    }

    @Test func plistRefusesNull() throws {
        #expect(throws: RequestSerializationError.self) { try run("plist", "POST", #"{"a":{"b":null}}"#) }
    }

    @Test func parametersAreReadFromAPlistBody() throws {
        let body = try Fixture.bytes("plist/sample.plist")
        let out = try RequestSerializerRegistry.make("json").serialize(
            RequestInput(method: "POST", query: nil, contentType: "application/x-plist", body: body))
        #expect(String(decoding: out.body, as: UTF8.self).hasPrefix(#"{"name":"A & B","count":-42"#))
    }

    @Test(arguments: [
        ("[1,2]", "application/json", "found an array"), ("\"x\"", "application/json", "found a string"),
        ("{bad", "application/json", "not valid application/json"), ("a=1", "text/plain", "cannot be read from text/plain"),
        ("{}", nil, "needs a Content-Type"), ("a=%zz", "application/x-www-form-urlencoded", "percent-escape"),
    ] as [(String, String?, String)])
    func unreadableBodiesAreBadRequests(body: String, type: String?, message: String) throws {
        do {
            _ = try run("http", "POST", type: type, body)
            Issue.record("expected a failure")
        } catch let error as RequestSerializationError {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func unknownRequestSerializerFails() {
        #expect(throws: SettingsError.self) { try RequestSerializerRegistry.make("xml") }
    }
}

/// The json request serializer sends the body's own normalized JSON, never a tree of it,
/// and refuses what AF's parameters cannot be (fuzz/request compares every body with the
/// tree-based reading it replaced).
@Suite struct JSONRequestWithoutATreeTests {
    static let cases: [(String, String, String)] = [
        ("application/json", #"{"b":[1,2.50,{"c":null}],"a":"\u00e9\/","a":true}"#, #"{"b":[1,2.50,{"c":null}],"a":"é/","a":true}"#),
        ("application/json", "  {}  ", "{}"),
        ("application/json", "[1,2]", "error: request parameters must be an object (a JSON object, form or plist dictionary), found an array"),
        ("application/json", "\"text\"", "error: request parameters must be an object (a JSON object, form or plist dictionary), found a string"),
        ("application/json", "{\"a\":", "error: request body is not valid application/json: unexpected end of input"),
        ("application/vnd.api+json", #"{"x":1}"#, #"{"x":1}"#),
        ("application/x-www-form-urlencoded", "a=1&b[]=x&b[]=y&c[d]=%E2%98%83&e", #"{"a":"1","b":["x","y"],"c":{"d":"☃"},"e":null}"#),
        ("application/x-www-form-urlencoded; charset=iso-8859-1", "k=caf%E9", #"{"k":"café"}"#),
        ("application/x-www-form-urlencoded", "a=1&a[b]=2", "error: request body is not valid application/x-www-form-urlencoded: form field 'a[b]' conflicts"),
        ("application/x-plist", "<plist><dict><key>n</key><integer>007</integer><key>d</key><data>AAE=</data></dict></plist>", #"{"n":7,"d":"AAE="}"#),
        ("application/x-plist", "<plist><array><true/></array></plist>", "error: request parameters must be an object (a JSON object, form or plist dictionary), found an array"),
        ("text/plain", "hello", "error: request body is not valid text/plain: parameters cannot be read from text/plain"),
    ]

    @Test(arguments: 0..<cases.count)
    func eachBodyBecomesItsJSONOrAPreciseRefusal(index: Int) throws {
        let (type, body, expected) = Self.cases[index]
        let input = RequestInput(method: "POST", query: nil, contentType: type, body: Array(body.utf8))
        let serializer = try RequestSerializerRegistry.make("json")
        do throws(RequestSerializationError) {
            let json = try serializer.serialize(input).body
            #expect(String(decoding: json, as: UTF8.self) == expected, "\(type): \(body)")
        } catch {
            #expect(expected.hasPrefix("error: ") && error.description.hasPrefix(expected.dropFirst(7)), "\(type): \(body) → \(error)")
        }
    }

    @Test func aBinaryPlistDictionaryToo() throws {
        let input = RequestInput(method: "POST", query: nil, contentType: "application/x-plist", body: try Fixture.bytes("plist/sample.bplist"))
        let expected = try PlistTranscoder.transcode(try Fixture.bytes("plist/sample.bplist")).bytes
        #expect(expected.first == UInt8(ascii: "{"))
        #expect(try RequestSerializerRegistry.make("json").serialize(input).body == expected)
    }
}
