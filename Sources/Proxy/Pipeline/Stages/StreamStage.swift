import HTTPCore
import Upstream

/// Arms streaming (DESIGN §9): the upstream stage sends the request with its context as
/// the sink, which takes the answer as it arrives when the head says it streams (a relay
/// is made then); any other answer takes the ordinary path at no further cost.
struct StreamStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        if context.request.method != "HEAD" { context.streamsVia = pipeline }
        return .passed
    }
}

extension RequestContext: UpstreamStreamSink {
    func streams(status: Int, headers: HeaderFields) -> Bool {
        guard let pipeline = streamsVia, let route else { return false }
        var kind: StreamKind?
        _ = headers.visitFirst(Self.contentType) { kind = route.stream.kind(contentType: $0) }
        guard let kind else { return false }
        let relay = StreamRelay(self, route: route, pipeline: pipeline, kind: kind)
        stream = relay
        // An unacceptable status is answered with the problem document, from the body.
        if route.response.acceptableStatusCodes?.contains(status) ?? true {
            relay.start(status: status, headers: headers)
        } else {
            relay.collect(status: status, headers: headers)
        }
        return true
    }

    static let contentType = HeaderNames(["content-type"])

    func received(_ bytes: UnsafeRawBufferPointer) -> StreamIntake {
        stream?.received(bytes) ?? .stop
    }

    var streamProgress: String? { stream?.summarySoFar }
}
