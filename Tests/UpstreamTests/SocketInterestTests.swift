internal import CCurl
internal import CShims
import HTTPCore
@testable import Upstream
import Testing

@Suite struct SocketInterestTests {
    @Test func curlPollValuesMapToWatchesAndRemovals() {
        #expect(SocketInterest(CURL_POLL_IN) == .watch(read: true, write: false))
        #expect(SocketInterest(CURL_POLL_OUT) == .watch(read: false, write: true))
        #expect(SocketInterest(CURL_POLL_INOUT) == .watch(read: true, write: true))
        #expect(SocketInterest(CURL_POLL_NONE) == .watch(read: false, write: false))
        #expect(SocketInterest(CURL_POLL_REMOVE) == .forget)
    }

    @Test func aFailedCallKeepsItsCodeMessageAndPlace() {
        do throws(CurlError) {
            try Curl.check(CURLE_URL_MALFORMAT, "CURLOPT_URL")
            Issue.record("no error")
        } catch {
            #expect(error.code == 3 && error.call == "CURLOPT_URL")
            #expect(error.function.contains("aFailedCallKeepsItsCodeMessageAndPlace"))
            #expect(error.description.contains("URL using bad/illegal format or missing URL"))
        }
    }

    /// With a body, `Expect:` and `Content-Type:` (empty: libcurl's own defaults off), then
    /// each line; without one, only the lines (libcurl adds neither then); none at all is
    /// an empty list, not an error.
    @Test func headerListsHoldEveryLineAfterExpect() throws {
        var lines = HeaderFields()
        lines.append("X-One", "1")
        lines.append("Via", "1.1 serializerd-a")
        func entries(_ list: borrowing CurlHeaderList) -> [String] {
            var seen: [String] = []
            var node = list.pointer
            while let current = node {
                seen.append(String(cString: current.pointee.data))
                node = current.pointee.next
            }
            return seen
        }
        #expect(entries(try CurlHeaderList(fields: lines, sendsBody: true)) == ["Expect:", "Content-Type:", "X-One: 1", "Via: 1.1 serializerd-a"])
        #expect(entries(try CurlHeaderList(fields: lines, sendsBody: false)) == ["X-One: 1", "Via: 1.1 serializerd-a"])
        #expect(entries(try CurlHeaderList(fields: HeaderFields(), sendsBody: false)) == [])
        #expect(entries(try CurlHeaderList(fields: HeaderFields(), sendsBody: true)) == ["Expect:", "Content-Type:"])
    }
}
