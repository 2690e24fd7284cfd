import Tracing
import Upstream

/// OTLP/HTTP through libcurl (DESIGN §12): a JSON body POSTed to the collector on one kept
/// connection, from the exporter's thread only.
public struct OTLPSender: SpanSender {
    private let poster = BlockingPoster()

    public init() {}

    public func send(_ body: UnsafeBufferPointer<UInt8>, to url: String, timeout: Double) -> Bool {
        guard case .success(let status) = poster.post(body, contentType: "application/json", to: url, timeout: timeout) else { return false }
        return (200..<300).contains(status)
    }
}
