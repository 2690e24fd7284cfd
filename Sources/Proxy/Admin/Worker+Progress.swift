import HTTPCore
import Serializers
import Synchronization
import Upstream

extension Worker {
    /// How often a worker looks at its transfers; progress events go at most this often.
    static let progressInterval = 0.25
    /// A transfer younger than this sends no progress event.
    static let progressAfter = 1.0

    /// The tick: the board gets this worker's transfers, and `/-/events` subscribers a
    /// `progress` event for each running longer than a second. The request path pays
    /// nothing: byte counts are read from libcurl here, four times a second.
    func progressTick() {
        // Spans that have waited a second leave, however few.
        telemetry.spans.handOver(now: Clock.now())
        var flows = session.inflight()
        if !pipeline.openWebSockets.isEmpty {
            let now = Clock.now()
            flows += pipeline.openWebSockets.values.map { $0.progress(now: now) }
        }
        if flows.isEmpty && !hadInflight { return }
        hadInflight = !flows.isEmpty
        inflight.publish(flows, worker: ObjectIdentifier(self))
        guard shared.hub.hasSubscribers else { return }
        let now = Clock.now()
        for flow in flows where now - flow.started >= Self.progressAfter {
            shared.hub.publish(event: "progress", json: NormalizedJSON(Self.describe(flow, now: now)).bytes)
        }
    }

    /// One transfer as `progress` events and `/-/inflight` show it.
    static func describe(_ flow: TransferProgress, now: Double) -> JSONValue {
        .object([
            ("request_id", .string(flow.tag.requestID)), ("route", .string(flow.tag.route)), ("method", .string(flow.tag.method)),
            ("path", .string(flow.tag.path)), ("elapsed_ms", .number(String(Int((now - flow.started) * 1000)))),
            ("bytes_up", .number(String(flow.bytesUp))), ("bytes_down", .number(String(flow.bytesDown))),
            ("total_up", flow.totalUp.map { .number(String($0)) } ?? .null),
            ("total_down", flow.totalDown.map { .number(String($0)) } ?? .null),
            ("stream", flow.stream.flatMap { try? JSONValue.parse(Array($0.utf8)) } ?? .null),
        ])
    }

    /// `GET /-/inflight`.
    func serveInflight(_ r: AdminRequest) {
        let now = Clock.now()
        let flows = inflight.all.map { Self.describe($0, now: now) }
        r.writer.sendJSON(NormalizedJSON(.object([("requests", .array(flows))])).bytes)
    }
}
