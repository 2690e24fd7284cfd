import Synchronization

/// One failed request's evidence (DESIGN §6): what the upstream sent, as it sent it, the
/// problem document the client got, and the `serializerd transcode` arguments that
/// reproduce the failure on the saved body.
public struct FailureEvidence: Sendable {
    public let requestID: String
    /// Wall-clock seconds since the epoch when the request arrived.
    public let startedAt: Double
    public let route: String
    public let method: String
    public let path: String
    public let upstreamURL: String
    public let status: Int
    public let headers: [(String, String)]
    public let contentType: String?
    /// The body, cut at `FailureStore.bodyLimit`.
    public let body: [UInt8]
    /// The whole body's size.
    public let bodyBytes: Int
    public let problem: [UInt8]
    /// The problem's `type`, kept beside it so a listing need not parse every document.
    public let problemType: String
    /// `transcode`'s arguments (after `serializerd transcode`), the body's file name last.
    public let transcodeArguments: [String]

    public init(requestID: String, startedAt: Double, route: String, method: String, path: String, upstreamURL: String,
                status: Int, headers: [(String, String)], contentType: String?, body: [UInt8], problem: [UInt8],
                problemType: String, transcodeArguments: [String]) {
        self.requestID = requestID
        self.startedAt = startedAt
        self.route = route
        self.method = method
        self.path = path
        self.upstreamURL = upstreamURL
        self.status = status
        self.headers = headers
        self.contentType = contentType
        self.body = body.count > FailureStore.bodyLimit ? Array(body.prefix(FailureStore.bodyLimit)) : body
        self.bodyBytes = body.count
        self.problem = problem
        self.problemType = problemType
        self.transcodeArguments = transcodeArguments
    }

    public var truncated: Bool { bodyBytes > body.count }

    /// What keeping it holds, roughly: the bytes, plus a fixed allowance for the strings.
    var cost: Int {
        body.count + problem.count + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count } + 1024
    }
}

/// The last `capacity` failures' evidence, shared by every worker. Kept only on the
/// failure path, so the success path never takes this lock. At most `capacity` bodies of
/// `bodyLimit` bytes: about 25 MiB at worst; the metrics show what it holds.
public final class FailureStore: Sendable {
    public static let capacity = 100
    public static let bodyLimit = 256 << 10

    struct Ring {
        var items: [FailureEvidence] = []
        var start = 0
        var bytes = 0
    }

    private let ring = Mutex(Ring())
    let metrics: MetricsRegistry

    init(metrics: MetricsRegistry) { self.metrics = metrics }

    public func keep(_ evidence: FailureEvidence) {
        ring.withLock { r in
            if r.items.count < Self.capacity {
                r.items.append(evidence)
            } else {
                r.bytes -= r.items[r.start].cost
                r.items[r.start] = evidence
                r.start = (r.start + 1) % Self.capacity
            }
            r.bytes += evidence.cost
            metrics.failureEvidence.store(r.items.count, ordering: .relaxed)
            metrics.failureEvidenceBytes.store(r.bytes, ordering: .relaxed)
        }
    }

    /// Oldest first.
    public func all() -> [FailureEvidence] {
        ring.withLock { r in Array(r.items[r.start...] + r.items[..<r.start]) }
    }

    /// The newest evidence for a request id (a client may send the same X-Request-Id twice).
    public func find(_ requestID: String) -> FailureEvidence? {
        ring.withLock { r in
            // Newest first: from the slot before `start` backwards around the ring.
            let n = r.items.count
            for k in 0..<n {
                let evidence = r.items[(r.start - 1 - k + 2 * n) % n]
                if evidence.requestID == requestID { return evidence }
            }
            return nil
        }
    }
}
