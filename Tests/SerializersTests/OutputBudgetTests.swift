import Serializers
import Testing

/// Every writer charges the one output budget (DESIGN §5, "Bounded work"): past it the
/// serialization fails naming the bound, in the response and the request serializers.
@Suite struct OutputBudgetTests {
    func serialize(_ name: String, cap: Int, _ contentType: String, _ body: [UInt8], options: [String] = []) throws -> SerializationResult {
        var settings = ResponseSettings(serializer: try SerializerName(parsing: name))
        for option in options { try settings.apply(option: option) }
        settings.maxOutput = cap
        return try ResponseSerializerRegistry.make(settings).serialize(UpstreamResponse(status: 200, contentType: contentType, body: body))
    }

    func detail(_ result: SerializationResult) -> String {
        guard case .serializationFailed(_, let detail, _)? = result.error else { return "no serialization failure" }
        return detail
    }

    @Test func eachResponseWriterStopsAtTheCap() throws {
        let cap = 1000
        let nuls = [UInt8](repeating: 0, count: 400)          // 6 bytes each as a JSON string
        #expect(detail(try serialize("text", cap: cap, "text/plain", nuls)) == "the text as a JSON string would exceed 1000 bytes, the output cap (limits.max_response_body)")
        #expect(try serialize("text", cap: 2402, "text/plain", nuls).succeeded)
        let binary = [UInt8](repeating: 0xFF, count: 900)     // 1,200 bytes of base64
        #expect(detail(try serialize("raw", cap: cap, "application/octet-stream", binary)).hasPrefix("the body in base64 would exceed 1000 bytes"))
        let xml = Array(("<r>" + String(repeating: "<a/>", count: 300) + "</r>").utf8)  // 1,203 bytes → 1,505
        #expect(detail(try serialize("xml", cap: cap, "application/xml", xml)).hasPrefix("the JSON would exceed 1000 bytes"))
        #expect(try serialize("xml", cap: 2000, "application/xml", xml).succeeded)
        let plist = Array(("<plist><array>" + String(repeating: "<string>ab</string>", count: 100) + "</array></plist>").utf8)
        #expect(detail(try serialize("plist", cap: 300, "application/x-plist", plist)).hasPrefix("the JSON would exceed 300 bytes"))
        #expect(try serialize("plist", cap: 600, "application/x-plist", plist).succeeded)
        let form = Array((0..<200).map { "k\($0)" }.joined(separator: "&").utf8)  // each key → "kN":null,
        #expect(detail(try serialize("form", cap: cap, "application/x-www-form-urlencoded", form)).hasPrefix("the JSON would exceed 1000 bytes"))
        let json = Array(("[" + String(repeating: "0,", count: 600) + "0]").utf8)
        #expect(detail(try serialize("json", cap: cap, "application/json", json)).hasPrefix("the output would exceed 1000 bytes"))
    }

    /// Linear in the input even under a large cap: 8 bytes per input byte plus 1 MiB.
    @Test func theLinearBoundAppliesBelowTheCap() throws {
        let nuls = [UInt8](repeating: 0, count: 300_000)      // 1.8 MB of JSON, under 8 × 300 kB + 1 MiB
        #expect(try serialize("text", cap: 64 << 20, "text/plain", nuls).succeeded)
        let budget = OutputBudget(input: 300_000, cap: 64 << 20)
        #expect(budget.limit == 300_000 * 8 + (1 << 20))
        #expect(budget.exceeded("x").description == "x would exceed \(budget.limit) bytes, the bound for a 300000-byte body (8 bytes per input byte plus 1 MiB)")
    }

    /// A JSON body nested 60 deep holding many zeros: each zero becomes a query or form
    /// pair whose field repeats `[]` sixty times, or a line of sixty tabs in a plist.
    @Test func requestSerializersChargeWhatTheySendUpstream() throws {
        let body = Array(("{\"a\":" + String(repeating: "[", count: 60) + String(repeating: "0,", count: 20_000) + "0"
                          + String(repeating: "]", count: 60) + "}").utf8)
        let input = { (method: String) in
            RequestInput(method: method, query: nil, contentType: "application/json", body: body, maxDepth: 64, maxOutput: 4 * 40_000)
        }
        for (name, method, what) in [("http", "GET", "the query string"), ("http", "POST", "a form body"), ("plist", "POST", "a property list")] {
            let serializer = try RequestSerializerRegistry.make(name)
            do throws(RequestSerializationError) {
                _ = try serializer.serialize(input(method))
                Issue.record("\(name) \(method) was not bounded")
            } catch {
                #expect(error.description.contains("would exceed 160000 bytes, the output cap (4 × limits.max_request_body)"), "\(error)")
                #expect(error.description.contains(what))
            }
        }
        // Within the cap the same serializers write the body as before.
        let small = RequestInput(method: "POST", query: nil, contentType: "application/json", body: Array("{\"a\":[[1,2]]}".utf8))
        #expect(String(decoding: try RequestSerializerRegistry.make("http").serialize(small).body, as: UTF8.self) == "a%5B%5D%5B%5D=1&a%5B%5D%5B%5D=2")
    }
}
