@testable import Proxy
import Testing

@Suite struct UpstreamBaseTests {
    let base = UpstreamBase("https://api.example.org/v1")!

    func joined(_ remainder: String, _ query: String? = nil) -> String? {
        try? base.join(remainder: Substring(remainder), query: query).get()
    }

    @Test func baseGetsATrailingSlashLikeAF() {
        #expect(base.description == "https://api.example.org/v1/")
        #expect(UpstreamBase("http://h:8080")!.description == "http://h:8080/")
    }

    @Test func remainderAndQueryAreAppended() {
        #expect(joined("users/42", "a=1&b=2") == "https://api.example.org/v1/users/42?a=1&b=2")
        #expect(joined("users/") == "https://api.example.org/v1/users/")
        #expect(joined("") == "https://api.example.org/v1/")
    }

    @Test(arguments: ["..", "../x", "a/../../etc", "./a", "a/.", "%2e%2e/x", "%2E%2e", ".%2e/x", "%252e%252e/x",
                      "//evil.example/x", "a//b", "a%2fb/../c", "a%5c..", "a\\b", "a b", "a\u{7F}"])
    func escapesAreRefused(remainder: String) {
        #expect(joined(remainder) == nil, "\(remainder)")
    }

    /// DESIGN §4: only dots and separators are refused in escaped form.
    @Test func otherPercentEscapesAreForwardedAsSent() {
        #expect(joined("a%20b%2Cc") == "https://api.example.org/v1/a%20b%2Cc")
        #expect(joined("x/%00%7F%41/%E2%82%AC", "q=%20") == "https://api.example.org/v1/x/%00%7F%41/%E2%82%AC?q=%20")
        #expect(joined("%2e%2ex") == "https://api.example.org/v1/%2e%2ex")
    }

    @Test func schemesOtherThanHTTPAreRefused() {
        #expect(UpstreamBase("file:///etc/passwd") == nil && UpstreamBase("gopher://h/") == nil)
        #expect(UpstreamBase("http://user:pw@h/") == nil && UpstreamBase("http://h/?q=1") == nil)
    }
}
