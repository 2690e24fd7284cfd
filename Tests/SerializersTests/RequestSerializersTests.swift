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

/// The json request serializer writes the body's own normalized JSON without building a
/// tree; it must say exactly what the tree path says, for every kind of body.
@Suite struct JSONRequestWithoutATreeTests {
    static let bodies: [(String, [UInt8])] = [
        ("application/json", Array(#"{"b":[1,2.50,{"c":null}],"a":"\u00e9\/","a":true}"#.utf8)),
        ("application/json", Array("  {}  ".utf8)),
        ("application/json", Array("[1,2]".utf8)),
        ("application/json", Array("\"text\"".utf8)),
        ("application/json", Array("{\"a\":".utf8)),
        ("application/vnd.api+json", Array(#"{"x":1}"#.utf8)),
        ("application/x-www-form-urlencoded", Array("a=1&b[]=x&b[]=y&c[d]=%E2%98%83&e".utf8)),
        ("application/x-www-form-urlencoded; charset=iso-8859-1", Array("k=caf%E9".utf8)),
        ("application/x-www-form-urlencoded", Array("a=1&a[b]=2".utf8)),
        ("application/x-plist", Array("<plist><dict><key>n</key><integer>007</integer><key>d</key><data>AAE=</data></dict></plist>".utf8)),
        ("application/x-plist", Array("<plist><array><true/></array></plist>".utf8)),
        ("text/plain", Array("hello".utf8)),
    ]

    @Test(arguments: 0..<bodies.count)
    func theTreelessPathAgreesWithTheTree(index: Int) throws {
        let (type, body) = Self.bodies[index]
        let input = RequestInput(method: "POST", query: nil, contentType: type, body: body)
        let treeless: Result<[UInt8]?, RequestSerializationError>
        do throws(RequestSerializationError) { treeless = .success(try RequestParameters.json(input)) } catch { treeless = .failure(error) }
        let tree: Result<[UInt8]?, RequestSerializationError>
        do throws(RequestSerializationError) {
            tree = .success(try RequestParameters.decode(input).map { NormalizedJSON(.object($0)).bytes })
        } catch { tree = .failure(error) }
        #expect(treeless == tree, "\(type): \(String(decoding: body, as: UTF8.self))")
    }

    @Test func aBinaryPlistDictionaryToo() throws {
        let body = try Fixture.bytes("plist/sample.bplist")
        let input = RequestInput(method: "POST", query: nil, contentType: "application/x-plist", body: body)
        let tree = try RequestParameters.decode(input).map { NormalizedJSON(.object($0)).bytes }
        #expect(try RequestParameters.json(input) == tree)
        #expect(try RequestSerializerRegistry.make("json").serialize(input).body == tree)
    }
}
