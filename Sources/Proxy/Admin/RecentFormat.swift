import EventLoop
import HTTPCore
import Serializers
import Tapes
import Telemetry

/// `/-/recent`'s one query parameter.
enum RecentFormat {
    case json, har

    /// No query, or exactly `format=har`.
    static func parse(_ query: String?) -> Result<RecentFormat, ProxyFailure> {
        guard let query, !query.isEmpty else { return .success(.json) }
        let parts = query.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "format", !parts[1].contains("&") else {
            return .failure(.invalidQuery("expected no query or format=har"))
        }
        guard parts[1] == "har" else { return .failure(.invalidQuery("format: expected har, found '\(parts[1])'")) }
        return .success(.har)
    }
}
