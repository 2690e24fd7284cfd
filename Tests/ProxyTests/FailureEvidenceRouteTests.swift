import Foundation
@testable import Proxy
import Testing

/// Which refused responses are kept for `/-/failures`, in process. (That the reproduce
/// command redoes the failure is tested through the binary: EndToEndTests.)
@Suite struct FailureEvidenceRouteTests {
    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    @Test func successesAreNotKeptAndOnlyTheLastHundredFailuresAre() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api"))
        #expect(proxy.get("/api/json").status == 200)
        #expect((proxy.get("/-/failures").replyJSON?["failures"] as? [Any])?.isEmpty == true)
        for k in 0..<105 {
            #expect(proxy.get("/api/json?body=" + Self.query("[\(k),]"), headers: [("X-Request-Id", "f\(k)")]).status == 502)
        }
        let entries = proxy.get("/-/failures").replyJSON?["failures"] as? [[String: Any]] ?? []
        // Newest first; the five oldest have left the ring.
        #expect(entries.count == 100 && entries.first?["request_id"] as? String == "f104" && entries.last?["request_id"] as? String == "f5")
        #expect(proxy.get("/-/failures/f4").status == 404)
        #expect(proxy.get("/-/failures/f5").status == 200)
        #expect(proxy.metric("serializerd_failure_evidence") == 100)
    }

    @Test func keepFailuresFalseKeepsNothing() throws {
        let proxy = try InProcessProxy(routes: route("api", prefix: "/api"), top: "admin: { keep_failures: false }\n")
        let failed = proxy.get("/api/json?body=" + Self.query(#"{"a": [1, 2,, 3]}"#), headers: [("X-Request-Id", "secret")])
        #expect(failed.status == 502)
        let list = proxy.get("/-/failures").replyJSON
        #expect(list?["keep_failures"] as? Bool == false && (list?["failures"] as? [Any])?.isEmpty == true)
        #expect(proxy.get("/-/failures/secret").status == 404)
        #expect(proxy.metric("serializerd_failure_evidence") == 0)
    }
}
