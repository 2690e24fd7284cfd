@testable import Contracts
import Serializers
import TestSupport
import Testing

/// Drift learning (DESIGN §10): what is learned, what is reported, and once.
@Suite struct ShapeDriftTests {
    /// Learns `text` as one answer of `GET /orders/{id}`, 200.
    @discardableResult
    func observe(_ shapes: RouteShapes, _ text: String, endpoint: String = "GET /orders/{id}", status: Int = 200, after: Int = 3) -> [ShapeChange] {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { shapes.observe(endpoint: endpoint, status: status, body: $0, after: after, now: 0) }.map(\.change)
    }

    static let order = #"{"id":1,"total":12.5,"items":[{"sku":"a","qty":1}],"note":"x","when":"2026-11-29T08:00:00Z"}"#

    func learned(after: Int = 3) -> RouteShapes {
        let shapes = RouteShapes(route: "api")
        for _ in 0..<after { #expect(observe(shapes, Self.order, after: after).isEmpty) }
        return shapes
    }

    @Test func eachKindOfChangeIsReportedOnceWithItsPointer() {
        let shapes = learned()
        let cases: [(String, ShapeChange)] = [
            (#"{"id":1,"total":12.5,"items":[{"sku":"a","qty":1}],"note":"x","when":"2026-11-29T08:00:00Z","extra":true}"#,
             ShapeChange(kind: .newMember, pointer: "/extra", was: "absent", now: "boolean")),
            (#"{"id":1,"total":12.5,"items":[{"sku":"a","qty":1}],"when":"2026-11-29T08:00:00Z"}"#,
             ShapeChange(kind: .missingMember, pointer: "/note", was: "string", now: "absent")),
            (#"{"id":1,"total":"12.5","items":[{"sku":"a","qty":1}],"note":"x","when":"2026-11-29T08:00:00Z"}"#,
             ShapeChange(kind: .type, pointer: "/total", was: "number", now: "string")),
            (#"{"id":1,"total":12.5,"items":[{"sku":"a","qty":null}],"note":"x","when":"2026-11-29T08:00:00Z"}"#,
             ShapeChange(kind: .null, pointer: "/items/*/qty", was: "number", now: "null")),
            // The XML singleton: the array became its element, and nothing under it is reported apart.
            (#"{"id":1,"total":12.5,"items":{"sku":"a","qty":1},"note":"x","when":"2026-11-29T08:00:00Z"}"#,
             ShapeChange(kind: .type, pointer: "/items", was: "array", now: "object")),
        ]
        for (text, expected) in cases {
            #expect(observe(shapes, text) == [expected], "\(text)")
            #expect(observe(shapes, text).isEmpty, "reported twice: \(text)")
        }
        // A refusal after readable answers.
        #expect(shapes.observe(endpoint: "GET /orders/{id}", status: 200, body: nil, refusal: "unacceptable-content-type", after: 3, now: 0).map(\.change)
            == [ShapeChange(kind: .refused, pointer: "", was: "readable", now: "unacceptable-content-type")])
        #expect(shapes.observe(endpoint: "GET /orders/{id}", status: 200, body: nil, refusal: "unacceptable-content-type", after: 3, now: 0).isEmpty)
        let summary = shapes.summary
        #expect(summary.recent.count == 6 && summary.counts.first { $0.0 == .type }?.1 == 2)
    }

    @Test func nothingIsReportedBeforeTheShapeIsLearnedOrForAnotherStatus() {
        let shapes = RouteShapes(route: "api")
        // Differences among the first answers are what the shape is.
        #expect(observe(shapes, #"{"a":1}"#, after: 4).isEmpty)
        #expect(observe(shapes, #"{"a":"x","b":null}"#, after: 4).isEmpty)
        #expect(observe(shapes, #"{"b":2}"#, after: 4).isEmpty)
        #expect(observe(shapes, #"{"a":null,"b":"y"}"#, after: 4).isEmpty)
        // Another status is another shape, still learning.
        #expect(observe(shapes, #"{"error":"gone"}"#, status: 404, after: 4).isEmpty)
        #expect(observe(shapes, #"{"c":[]}"#, after: 4) == [ShapeChange(kind: .newMember, pointer: "/c", was: "absent", now: "array")])
    }

    @Test func valuesThatVaryInAStableShapeAreNeverReported() {
        var random = SplitMix(state: 46)
        let shapes = RouteShapes(route: "api")
        var reports: [ShapeChange] = []
        for n in 0..<10_000 {
            reports += observe(shapes, Self.varied(&random, n), endpoint: ShapeEndpoint.key(method: "GET", path: "orders/\(random.next() % 100_000)"), after: 20)
        }
        #expect(reports.isEmpty, "\(reports.prefix(5))")
        let summary = shapes.summary
        #expect(summary.endpoints == 1 && summary.answers == 10_000 && summary.unlearnedPointers == 0)
    }

    /// An answer whose values vary but whose shape does not: numbers with and without
    /// fractions, strings of any text, lists of any length (empty too), maps keyed by ids.
    static func varied(_ random: inout SplitMix, _ n: Int) -> String {
        let items = (0..<Int(random.next() % 4)).map { k in #"{"sku":"s\#(k)-\#(random.next() % 1000)","qty":\#(random.next() % 9),"price":\#(random.next() % 2 == 0 ? "3" : "3.25")}"# }
        let byID = (0..<Int(random.next() % 3)).map { _ in #""\#(random.next() % 100_000)":{"seen":\#(random.next() % 2 == 0)}"# }
        let uuid = "123e4567-e89b-12d3-a456-\(String(100_000_000_000 + random.next() % 800_000_000_000, radix: 16))"
        return #"{"id":\#(n),"uuid":"\#(uuid)","name":"n\#(random.next())","when":"2026-11-\#(10 + n % 18)T08:00:00Z","items":[\#(items.joined(separator: ","))],"by_id":{\#(byID.joined(separator: ","))},"ok":\#(n % 3 == 0)}"#
    }

    /// An answer whose fingerprint was learned skips the walk: it must teach exactly what
    /// the walk would have (its strings' formats), and reports stay the same.
    @Test func answersOfALearnedShapeTeachWhatTheWalkWould() {
        let skipping = learned()
        let walking = RouteShapes(route: "api", fingerprints: false)
        for _ in 0..<3 { observe(walking, Self.order) }
        // The same shape, `when` no longer a date-time and `note` escaped: formats narrow.
        let same = #"{"id":2,"total":9.5,"items":[{"sku":"b","qty":3}],"note":"a\"b","when":"soon"}"#
        #expect(observe(skipping, same).isEmpty && observe(walking, same).isEmpty)
        let document = skipping.document(title: "t")
        #expect(document == walking.document(title: "t"))
        #expect(!JSONText.of(document).contains("date-time"), "\(JSONText.of(document))")
        // The shortcut was taken: every answer after the first by its fingerprint.
        #expect(skipping.fingerprintedAnswers == 3 && walking.fingerprintedAnswers == 0)
        // An element of another shape is another fingerprint, and its change is found.
        #expect(observe(skipping, #"{"id":1,"total":12.5,"items":[{"sku":"a","qty":1},{"sku":"c","qty":"2"}],"note":"x","when":"x"}"#)
            == [ShapeChange(kind: .type, pointer: "/items/*/qty", was: "number", now: "string")])
    }

    /// Lists of one shape print alike whatever their length; a string in any repeated
    /// element still narrows its node's formats.
    @Test func listsOfOneShapeShareAFingerprintAndStillTeachFormats() {
        let skipping = RouteShapes(route: "api")
        let walking = RouteShapes(route: "api", fingerprints: false)
        let answers = [
            #"{"items":[{"at":"2026-11-29T08:00:00Z","n":1}],"next":"2026-11-30"}"#,
            #"{"items":[{"at":"2026-11-29T09:00:00Z","n":2},{"at":"2026-11-29T10:00:00Z","n":3}],"next":"2026-12-01"}"#,
            #"{"items":[],"next":"2026-12-02"}"#,
            #"{"items":[{"at":"2026-11-29T09:00:00Z","n":2},{"at":"2026-11-29T10:00:00Z","n":3},{"at":"late","n":4}],"next":"2026-12-03"}"#,
        ]
        for answer in answers {
            #expect(observe(skipping, answer) == observe(walking, answer))
        }
        // The second and fourth answers took the shortcut; the empty list is a shape of its own.
        #expect(skipping.fingerprintedAnswers == 2)
        let document = skipping.document(title: "t")
        #expect(document == walking.document(title: "t"))
        let text = JSONText.of(document)
        #expect(!text.contains("date-time") && text.contains(#""format":"date""#), "\(text)")
    }

    /// Names print apart whatever their length around the 8-byte words the fingerprint
    /// reads, near the body's end or not: each answer here is a new shape, so none may
    /// take the shortcut.
    @Test func namesOfEveryLengthPrintApart() {
        let skipping = RouteShapes(route: "api")
        let walking = RouteShapes(route: "api", fingerprints: false)
        var answers: [String] = []
        for length in 1...20 {
            let name = String(repeating: "a", count: length)
            answers += [#"{"\#(name)":1}"#, #"{"\#(name)":1,"z":2}"#, #"{"\#(name)é":1,"z":2}"#, #"{"\#(name)\"":1,"z":2}"#]
        }
        for answer in answers {
            #expect(observe(skipping, answer) == observe(walking, answer))
        }
        #expect(skipping.fingerprintedAnswers == 0)
        // The last ones are still known (8 prints are kept): learned again, by their prints.
        for answer in answers.suffix(8) { _ = observe(skipping, answer) }
        #expect(skipping.fingerprintedAnswers == 8)
    }

    /// More strings than the stack list holds: the list moves to the heap, and the
    /// shortcut and its format checks still hold.
    @Test func answersWithManyStringsAreFingerprintedToo() {
        let skipping = RouteShapes(route: "api")
        let walking = RouteShapes(route: "api", fingerprints: false)
        func answer(_ last: String) -> String {
            "{" + (0..<100).map { #""m\#($0)":"2026-11-29""# }.joined(separator: ",") + #","last":"\#(last)"}"#
        }
        for text in [answer("2026-11-29"), answer("2026-11-30"), answer("never")] {
            #expect(observe(skipping, text) == observe(walking, text))
        }
        #expect(skipping.fingerprintedAnswers == 2)
        #expect(skipping.document(title: "t") == walking.document(title: "t"))
        #expect(JSONText.of(skipping.document(title: "t")).contains(#""last":{"type":"string"}"#))
    }

    @Test func endpointsReadIDsAsTemplates() {
        #expect(ShapeEndpoint.key(method: "GET", path: "orders/1234/lines") == "GET /orders/{id}/lines")
        #expect(ShapeEndpoint.key(method: "GET", path: "u/123e4567-e89b-12d3-a456-426614174000") == "GET /u/{id}")
        #expect(ShapeEndpoint.key(method: "GET", path: "c/deadbeef1/x/deadbeef") == "GET /c/{id}/x/deadbeef")
        #expect(ShapeEndpoint.key(method: "POST", path: "") == "POST /")
        #expect(ShapeEndpoint.key(method: "GET", path: "a/") == "GET /a/")
        // Cut at the last whole segment that fits.
        #expect(ShapeEndpoint.key(method: "GET", path: String(repeating: "abc/", count: 500)[...]) == "GET " + String(repeating: "/abc", count: 128))
        // A path is a part of the request's target: read where it lies.
        #expect(ShapeEndpoint.key(method: "GET", path: "/api//v1/items/42?x".dropFirst(5).dropLast(2)) == "GET /v1/items/{id}")
    }

    @Test func pointersAndEndpointsAreBoundedAndCounted() {
        let shapes = RouteShapes(route: "api")
        let wide = "{" + (0..<12_000).map { #""m\#($0)":1"# }.joined(separator: ",") + "}"
        observe(shapes, wide)
        var summary = shapes.summary
        // The status's root is one of the endpoint's pointers.
        #expect(summary.pointers == RouteShapes.maxPointers && summary.unlearnedPointers == 12_001 - RouteShapes.maxPointers)
        for n in 0..<(RouteShapes.maxEndpoints + 5) { observe(shapes, "{}", endpoint: "GET /e\(n)") }
        summary = shapes.summary
        #expect(summary.endpoints == RouteShapes.maxEndpoints && summary.unlearnedAnswers == 6)
        // Depth past the walk's limit is skipped, not recursed into.
        let deep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        #expect(observe(shapes, deep, endpoint: "GET /deep").isEmpty)
    }

    /// Strings are scanned eight bytes at a time: an escaped quote or backslash at any
    /// offset, in a name or a value, ends nothing early.
    @Test func escapesAtEveryOffsetAreReadWhole() {
        for length in 0..<24 {
            for at in 0...length {
                let plain = String(repeating: "x", count: length)
                for escape in [#"\""#, #"\\"#, #"\u0041"#] {
                    var text = plain
                    text.insert(contentsOf: escape, at: text.index(text.startIndex, offsetBy: at))
                    let shapes = RouteShapes(route: "api")
                    #expect(observe(shapes, #"{"\#(text)":"\#(text)","n":1}"#, after: 1).isEmpty)
                    let changes = observe(shapes, #"{"\#(text)":1,"n":1}"#, after: 1)
                    #expect(changes.count == 1 && changes.first?.kind == .type, "\(text): \(changes)")
                    #expect(shapes.summary.pointers == 3, "\(text)")
                }
            }
        }
    }

    @Test func brokenBytesLearnNothingTheyCouldReport() {
        let shapes = learned()
        for text in [#"{"id":1,"#, #"{"id" 1}"#, "[1,2", "tru", #""abc"#, "", "{}}", "-"] {
            #expect(observe(shapes, text).isEmpty, "\(text)")
        }
    }

    @Test func theLearnedDocumentAcceptsWhatItWasLearnedFrom() throws {
        var random = SplitMix(state: 7)
        let shapes = RouteShapes(route: "api")
        var answers: [(String, String)] = []
        for n in 0..<200 {
            let path = n % 2 == 0 ? "orders/\(n)" : "orders/\(n)/lines/\(n + 1)"
            let text = n % 2 == 0 ? Self.varied(&random, n) : #"[{"line":\#(n),"note":\#(n % 5 == 0 ? "null" : "\"x\"")}]"#
            answers.append((path, text))
            observe(shapes, text, endpoint: ShapeEndpoint.key(method: "GET", path: path[...]), after: 20)
        }
        let document = shapes.document(title: "api")
        let text = String(decoding: NormalizedJSON(document).bytes, as: UTF8.self)
        #expect(text.contains(#""/orders/{id}/lines/{id2}":{"get":{"parameters":[{"name":"id","#), "\(text)")
        let contract = try OpenAPIContract.compile(document, uri: "file:///learned.json")
        for (path, answer) in answers {
            let schema = try #require(contract.schema(path: "/" + path, method: "GET", status: 200))
            #expect(schema.validate(try JSONValue.parse(answer)).isEmpty, "\(path): \(answer)")
        }
        let order = try #require(contract.schema(path: "/orders/3", method: "GET", status: 200))
        // What the answers always had is required; a date-time is asserted; a new type fails.
        #expect(!order.validate(try JSONValue.parse(#"{"id":1}"#)).isEmpty)
        let changed = Self.varied(&random, 1).replacingOccurrences(of: #""when":"2026-11-11T08:00:00Z""#, with: #""when":"soon""#)
        #expect(order.validate(try JSONValue.parse(changed)).map(\.keyword) == ["format"], "\(changed)")
        #expect(text.contains(#""note":{"type":["string","null"]}"#) && text.contains(#""by_id":{"type":"object","additionalProperties":{"#), "\(text)")
    }
}
