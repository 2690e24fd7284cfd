import HTTPCore
import Network
import Serializers
import Testing

@Suite struct ChaosTests {
    func reply(_ json: String, type: String = "application/json") -> UpstreamResponse {
        UpstreamResponse(status: 200, headers: HeaderFields(lines: Array("Content-Type: \(type)\r\nETag: \"1\"\r\n".utf8)),
                         contentType: type, body: Array(json.utf8))
    }

    func run(_ ops: String, on json: String) throws -> (String, [String]) {
        let (out, applied) = Chaos.apply(try ChaosOperation.parse(ops), to: reply(json))
        return (String(decoding: out.body, as: UTF8.self), applied)
    }

    @Test func dropsNullsStringifiesAndUnwraps() throws {
        let doc = #"{"user":{"id":7,"email":"a@b","tags":["x"]},"items":[{"p":1},{"p":2}],"ok":true}"#
        #expect(try run("drop=/user/email", on: doc).0 == #"{"user":{"id":7,"tags":["x"]},"items":[{"p":1},{"p":2}],"ok":true}"#)
        #expect(try run("null=/user/id", on: doc).0 == #"{"user":{"id":null,"email":"a@b","tags":["x"]},"items":[{"p":1},{"p":2}],"ok":true}"#)
        #expect(try run("string=/user/id; string=/ok", on: doc).0
            == #"{"user":{"id":"7","email":"a@b","tags":["x"]},"items":[{"p":1},{"p":2}],"ok":"true"}"#)
        #expect(try run("singleton=/user/tags", on: doc).0 == #"{"user":{"id":7,"email":"a@b","tags":"x"},"items":[{"p":1},{"p":2}],"ok":true}"#)
        #expect(try run("string=/items/*/p", on: doc).0 == #"{"user":{"id":7,"email":"a@b","tags":["x"]},"items":[{"p":"1"},{"p":"2"}],"ok":true}"#)
        #expect(try run("drop=/items/0", on: doc).0 == #"{"user":{"id":7,"email":"a@b","tags":["x"]},"items":[{"p":2}],"ok":true}"#)
    }

    @Test func reportsOnlyWhatChangedTheAnswer() throws {
        let doc = #"{"a":"text","n":[1,2]}"#
        let (body, applied) = try run("drop=/missing; null=/a/deeper; string=/a; singleton=/missing; drop=/n/5; string=/n/1", on: doc)
        #expect(applied == ["string=/n/1"])
        #expect(body == #"{"a":"text","n":[1,"2"]}"#)
        let untouched = try run("drop=/a", on: "not json")
        #expect(untouched == ("not json", []))
    }

    @Test func numbersKeepTheirText() throws {
        #expect(try run("drop=/b", on: #"{"a":12345678901234567890.50,"b":1e400}"#).0 == #"{"a":12345678901234567890.50}"#)
        #expect(try run("string=/a", on: #"{"a":1.0E+2}"#).0 == #"{"a":"1.0E+2"}"#)
    }

    @Test func html200ReplacesTheAnswer() throws {
        var upstream = reply(#"{"a":1}"#)
        upstream.status = 503
        let (out, applied) = Chaos.apply([.drop(try JSONPointer("/a")), .html200], to: upstream)
        #expect(out.status == 200)
        #expect(out.contentType == "text/html; charset=utf-8")
        #expect(out.body == Chaos.errorPage)
        #expect(applied == ["drop=/a", "html_200"])
        #expect(out.headers.pairs.map(\.0) == ["ETag", "Content-Type"])
    }

    @Test func contentTypeIsReplacedInBothPlaces() throws {
        let (out, applied) = Chaos.apply(try ChaosOperation.parse("content_type=text/plain"), to: reply("{}"))
        #expect(out.contentType == "text/plain")
        #expect(out.headers.pairs.filter { $0.0.lowercased() == "content-type" }.map(\.1) == ["text/plain"])
        #expect(applied == ["content_type=text/plain"])
    }

    @Test func aDeepDocumentIsLeftAlone() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let (out, applied) = Chaos.apply(try ChaosOperation.parse("drop=/0"), to: reply(deep))
        #expect(applied.isEmpty)
        #expect(out.body == Array(deep.utf8))
    }
}

@Suite struct FaultDiceTests {
    @Test func aSeedReplaysItsSequence() {
        var s = NetworkSettings()
        s.failRate = 0.5
        s.faults = [.reset, .status(503), .truncate]
        var a = FaultDice(seed: 42), b = FaultDice(seed: 42), c = FaultDice(seed: 43)
        let first = (0..<64).map { _ in a.fault(s) }
        #expect(first == (0..<64).map { _ in b.fault(s) })
        #expect(first != (0..<64).map { _ in c.fault(s) })
        let hits = first.compactMap { $0 }.count
        #expect((16...48).contains(hits))
        #expect(Set(first.compactMap { $0?.applied }) == ["reset", "status=503", "truncate"])
    }

    @Test func noRateNoFaults() {
        var dice = FaultDice(seed: 1)
        var s = NetworkSettings()
        s.faults = [.reset]
        #expect((0..<100).allSatisfy { _ in dice.fault(s) == nil })
        s.failRate = 1
        #expect((0..<100).allSatisfy { _ in dice.fault(s) == .reset })
    }

    @Test func jitterStaysWithinItsBounds() {
        var dice = FaultDice(seed: 7)
        let draws = (0..<1000).map { _ in dice.latency(0.1, jitter: 0.05) }
        #expect(draws.allSatisfy { $0 >= 0.05 && $0 <= 0.15 })
        #expect(draws.min()! < 0.06 && draws.max()! > 0.14)
        #expect(dice.latency(0.01, jitter: 0) == 0.01)
        #expect((0..<100).allSatisfy { _ in dice.latency(0.01, jitter: 1) >= 0 })
    }

    @Test func profilesCarryTheirNumbers() {
        #expect(NetworkProfile(rawValue: "slow-3g")?.settings.latency == 2)
        #expect(NetworkProfile.fast3G.settings.down == 200 << 10)
        #expect(NetworkProfile.lossyWifi.settings.faults == [.reset])
        #expect(NetworkProfile.allCases.allSatisfy { $0.settings.latency > 0 && $0.settings.down != nil })
    }
}

@Suite struct StructuredChaosTests {
    static let xml = #"<?xml version="1.0"?><rss v="2"><channel><item id="1"><t>a &amp; b</t></item><item id="2"><t>c</t></item><n>7</n></channel></rss>"#
    static let plist = #"<?xml version="1.0"?><plist version="1.0"><dict><key>k</key><integer>7</integer><key>s</key><array><string>x</string></array></dict></plist>"#

    func run(_ ops: String, on body: String, type: String) throws -> (String, [String]) {
        let reply = UpstreamResponse(status: 200, contentType: type, body: Array(body.utf8))
        let (out, applied) = Chaos.apply(try ChaosOperation.parse(ops), to: reply)
        return (String(decoding: out.body, as: UTF8.self), applied)
    }

    func xmlJSON(_ text: String) throws -> String {
        String(decoding: try XMLTranscoder.transcode(Array(text.utf8)).bytes, as: UTF8.self)
    }

    @Test func xmlIsEditedInTheShapeItsSerializerMakes() throws {
        #expect(try xmlJSON(Self.xml) == #"{"rss":{"@v":"2","channel":{"item":[{"@id":"1","t":"a & b"},{"@id":"2","t":"c"}],"n":"7"}}}"#)
        let (one, applied) = try run("singleton=/rss/channel/item", on: Self.xml, type: "application/xml")
        #expect(applied == ["singleton=/rss/channel/item"])
        #expect(try xmlJSON(one) == #"{"rss":{"@v":"2","channel":{"item":{"@id":"1","t":"a & b"},"n":"7"}}}"#)
        let (dropped, _) = try run("drop=/rss/channel/item/*/t; null=/rss/channel/n; drop=/rss/@v", on: Self.xml, type: "text/xml")
        #expect(try xmlJSON(dropped) == #"{"rss":{"channel":{"item":[{"@id":"1"},{"@id":"2"}],"n":null}}}"#)
    }

    @Test func plistsAreEditedAndWrittenBackAsXML() throws {
        let (out, applied) = try run("string=/k; singleton=/s", on: Self.plist, type: "application/x-plist")
        #expect(applied == ["string=/k", "singleton=/s"])
        #expect(String(decoding: try PlistTranscoder.transcode(Array(out.utf8)).bytes, as: UTF8.self) == #"{"k":"7","s":"x"}"#)
        // A plist holds no null: nothing is changed, nothing reported.
        let (same, none) = try run("null=/k", on: Self.plist, type: "application/x-plist")
        #expect(none.isEmpty && same == Self.plist)
    }

    @Test func anUnreadableStructuredBodyIsLeftAlone() throws {
        let (out, applied) = try run("drop=/a", on: "<a><b></a>", type: "application/xml")
        #expect(applied.isEmpty && out == "<a><b></a>")
    }
}
