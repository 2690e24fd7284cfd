import CSchema
import Glibc
import Serializers
import Synchronization

/// A shape change as reported: where, and when.
public struct ShapeDrift: Sendable {
    public let route: String
    public let endpoint: String
    public let status: Int
    public let change: ShapeChange
    /// Wall-clock seconds since the epoch.
    public let at: Double

    /// The `shape_drift` event's members.
    public func json(at text: String) -> JSONValue {
        .object([
            ("route", .string(route)), ("endpoint", .string(endpoint)), ("status", .number(String(status))),
            ("kind", .string(change.kind.rawValue)), ("pointer", .string(change.pointer)),
            ("was", .string(change.was)), ("now", .string(change.now)), ("at", .string(text)),
        ])
    }
}

/// What drift learning keeps of one route (DESIGN §10): each endpoint's shape per status,
/// learned from its answers, and the changes reported. Shared by every worker and kept
/// across reloads; bounded in endpoints and pointers (beyond: counted, not learned).
public final class RouteShapes: Sendable {
    public static let maxEndpoints = 1_000
    /// Per endpoint, every status's pointers together.
    public static let maxPointers = 10_000
    /// Per route: a route's shapes stay within a few tens of MiB.
    public static let maxRoutePointers = 200_000
    /// Statuses learned per endpoint; answers with others are counted, not learned.
    public static let maxStatuses = 16
    /// Refusal kinds learned per status.
    static let maxRefusals = 8
    /// Changes `GET /-/drift` lists per route, newest kept.
    public static let recentLimit = 1_000

    /// Only under the route's lock, so access is not checked at run time.
    final class StatusShape {
        @exclusivity(unchecked) var answers = 0
        @exclusivity(unchecked) var readable = 0
        @exclusivity(unchecked) var refusals: [String] = []
        @exclusivity(unchecked) var tree = ShapeTree()
        /// Fingerprints of answers learned whole (`maxKnown`, the oldest replaced): an
        /// answer with one of them teaches nothing but its strings' formats.
        @exclusivity(unchecked) var prints: [UInt64] = []
        /// By each fingerprint's string slot, the node of each string whose formats were
        /// still being narrowed (-1: none).
        @exclusivity(unchecked) var tracked: [[Int32]] = []
        @exclusivity(unchecked) var nextKnown = 0
    }

    final class Endpoint {
        let name: String
        @exclusivity(unchecked) var statuses: [(Int, StatusShape)] = []
        @exclusivity(unchecked) var nodes = 0
        init(name: String) { self.name = name }

        func named(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
            name.utf8.withContiguousStorageIfAvailable { $0.count == key.count && memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 }
                ?? name.utf8.elementsEqual(key)
        }
    }

    /// Endpoints found lately, by their name's hash: most answers find theirs with no
    /// String made or hashed.
    static let cachedEndpoints = 64

    struct Table {
        var endpoints: [String: Endpoint] = [:]
        var cache = [(hash: UInt64, endpoint: Endpoint)?](repeating: nil, count: RouteShapes.cachedEndpoints)
        var nodes = 0
        var visit: UInt64 = 0
        var answers = 0
        var unlearnedAnswers = 0
        var unlearnedPointers = 0
        /// Answers learned by their fingerprint alone.
        var fingerprinted = 0
        var counts = [Int](repeating: 0, count: ShapeChange.Kind.allCases.count)
        var recent: [ShapeDrift] = []
        var recentStart = 0
    }

    public let route: String
    private let lock = Mutex(())
    /// Only under `lock`: the nodes are classes, which a Mutex's value may not hand out.
    @exclusivity(unchecked) private nonisolated(unsafe) var state = Table()
    private let notify: @Sendable ([ShapeDrift]) -> Void
    /// Whether answers of a learned fingerprint skip the walk (off only to test that
    /// skipping changes nothing).
    let fingerprints: Bool
    /// Whether some learned shape has strings whose formats still narrow: answers then
    /// list their strings with their fingerprint.
    let tracking = Atomic(false)

    public convenience init(route: String, notify: @escaping @Sendable ([ShapeDrift]) -> Void = { _ in }) {
        self.init(route: route, fingerprints: true, notify: notify)
    }

    init(route: String, fingerprints: Bool, notify: @escaping @Sendable ([ShapeDrift]) -> Void = { _ in }) {
        self.route = route
        self.fingerprints = fingerprints
        self.notify = notify
    }

    /// Learns one answer: its normalized output, or the kind of failure its serializer
    /// refused it with. Once the endpoint's status has seen `after` answers, what differs
    /// is reported (returned and handed to the listener), each change once.
    @discardableResult
    public func observe(endpoint: String, status: Int, body: UnsafeBufferPointer<UInt8>?, refusal: String? = nil,
                        after: Int, now: @autoclosure () -> Double) -> [ShapeDrift] {
        var endpoint = endpoint
        return endpoint.withUTF8 { observe(key: $0, status, body, refusal, after, now) }
    }

    /// The same for a request: `path` is the part after the route's prefix, and the
    /// endpoint's name (`ShapeEndpoint.key`) is made on the stack.
    @discardableResult
    public func observe(method: String, path: Substring, status: Int, body: UnsafeBufferPointer<UInt8>?, refusal: String? = nil,
                        after: Int, now: @autoclosure () -> Double) -> [ShapeDrift] {
        ShapeEndpoint.withKey(method: method, path: path) { observe(key: $0, status, body, refusal, after, now) }
    }

    /// `listed`: whether `strings` lists the answer's strings (else they are listed here
    /// when needed).
    func observe(_ key: UnsafeBufferPointer<UInt8>, _ status: Int, _ body: UnsafeBufferPointer<UInt8>?, _ refusal: String?, _ after: Int,
                 _ now: () -> Double, print: UInt64, strings: UnsafeBufferPointer<sp_string>, listed: Bool) -> [ShapeDrift] {
        let route = self.route
        var endpoint = ""
        let changes: [ShapeChange] = locked { t in
            t.answers += 1
            guard let shape = Self.shape(&t, key: key, status: status) else {
                t.unlearnedAnswers += 1
                return []
            }
            let (endpointShape, statusShape) = shape
            // Reported only once `after` answers taught the shape.
            let report = statusShape.readable >= max(after, 1)
            statusShape.answers += 1
            if let body {
                if print != 0, let known = statusShape.prints.firstIndex(of: print) {
                    let tracked = statusShape.tracked[known]
                    if listed {
                        Self.narrowFormats(statusShape.tree.nodes, tracked, body, strings)
                    } else if !tracked.isEmpty {
                        Self.fingerprint(body) { Self.narrowFormats(statusShape.tree.nodes, tracked, body, $1) }
                    }
                    statusShape.readable += 1
                    t.fingerprinted += 1
                    return []
                }
                let budget = min(Self.maxPointers - endpointShape.nodes, Self.maxRoutePointers - t.nodes)
                var walk = ShapeWalk(body, nodes: statusShape.tree.nodes, budget: budget, visit: t.visit)
                walk.recordsStrings = print != 0
                walk.run(&statusShape.tree, report: report)
                if !walk.broken { statusShape.readable += 1 }
                if print != 0, !walk.broken, walk.unlearned == 0 {
                    let tracks = listed ? walk.stringNodes.count == strings.count && Self.remember(statusShape, print, walk.stringNodes, strings)
                        : Self.fingerprint(body) { again, strings in
                            again == print && walk.stringNodes.count == strings.count && Self.remember(statusShape, print, walk.stringNodes, strings)
                        }
                    if tracks { tracking.store(true, ordering: .relaxed) }
                }
                t.visit = walk.visit
                endpointShape.nodes += walk.added
                t.nodes += walk.added
                t.unlearnedPointers += walk.unlearned
                if !walk.changes.isEmpty { endpoint = endpointShape.name }
                return walk.changes
            }
            guard let refusal, !statusShape.refusals.contains(refusal), statusShape.refusals.count < Self.maxRefusals else { return [] }
            statusShape.refusals.append(refusal)
            guard report else { return [] }
            endpoint = endpointShape.name
            return [ShapeChange(kind: .refused, pointer: "", was: "readable", now: refusal)]
        }
        guard !changes.isEmpty else { return [] }
        let at = now()
        let drifts = changes.map { ShapeDrift(route: route, endpoint: endpoint, status: status, change: $0, at: at) }
        locked { t in
            for drift in drifts {
                if let k = ShapeChange.Kind.allCases.firstIndex(of: drift.change.kind) { t.counts[k] += 1 }
                if t.recent.count < Self.recentLimit {
                    t.recent.append(drift)
                } else {
                    t.recent[t.recentStart] = drift
                    t.recentStart = (t.recentStart + 1) % Self.recentLimit
                }
            }
        }
        notify(drifts)
        return drifts
    }

    var fingerprintedAnswers: Int { locked { $0.fingerprinted } }

    private func locked<R>(_ body: (inout Table) -> R) -> R {
        lock.withLock { _ in body(&state) }
    }

    private static func shape(_ t: inout Table, key: UnsafeBufferPointer<UInt8>, status: Int) -> (Endpoint, StatusShape)? {
        let hash = serializerd_shape_bytes_hash(key.baseAddress, key.count)
        let slot = Int(hash % UInt64(cachedEndpoints))
        var found: Endpoint?
        if let cached = t.cache[slot], cached.hash == hash, cached.endpoint.named(key) {
            found = cached.endpoint
        } else {
            let name = String(decoding: key, as: UTF8.self)
            found = t.endpoints[name]
            if found == nil {
                guard t.endpoints.count < maxEndpoints, t.nodes < maxRoutePointers else { return nil }
                found = Endpoint(name: name)
                t.endpoints[name] = found
            }
            t.cache[slot] = (hash, found!)
        }
        guard let e = found else { return nil }
        if let (_, shape) = e.statuses.first(where: { $0.0 == status }) { return (e, shape) }
        guard e.statuses.count < maxStatuses, e.nodes < maxPointers, t.nodes < maxRoutePointers else { return nil }
        let shape = StatusShape()
        e.statuses.append((status, shape))
        e.nodes += 1
        t.nodes += 1
        return (e, shape)
    }

    /// What `GET /-/drift` shows of the route: totals, counts by kind, the changes reported.
    public struct Summary: Sendable {
        public let endpoints: Int
        public let answers: Int
        public let pointers: Int
        public let unlearnedAnswers: Int
        public let unlearnedPointers: Int
        public let counts: [(ShapeChange.Kind, Int)]
        public let recent: [ShapeDrift]
    }

    public var summary: Summary {
        locked { t in
            Summary(endpoints: t.endpoints.count, answers: t.answers, pointers: t.nodes, unlearnedAnswers: t.unlearnedAnswers,
                    unlearnedPointers: t.unlearnedPointers, counts: Array(zip(ShapeChange.Kind.allCases, t.counts)),
                    recent: Array(t.recent[t.recentStart...] + t.recent[..<t.recentStart]))
        }
    }

    /// An OpenAPI 3.1 document of what was learned: a path per endpoint, a response schema
    /// per status (DESIGN §10, `contract learn`).
    public func document(title: String) -> JSONValue {
        locked { t in
            LearnedDocument.make(title: title, endpoints: t.endpoints.map { key, e in
                (key, e.statuses.map { status, shape in LearnedDocument.Response(status: status, answers: shape.readable, tree: shape.tree) })
            })
        }
    }
}

/// Every route's shapes, by route name: made once per process and handed to each config
/// load, so what was learned survives reloads.
public final class ShapeBoard: Sendable {
    private let routes = Mutex<[String: RouteShapes]>([:])
    private let listener = Mutex<(@Sendable ([ShapeDrift]) -> Void)?>(nil)

    public init() {}

    public func shapes(route: String) -> RouteShapes {
        routes.withLock { all in
            if let found = all[route] { return found }
            let made = RouteShapes(route: route) { [weak self] drifts in self?.publish(drifts) }
            all[route] = made
            return made
        }
    }

    /// Who hears of each change (the log and `/-/events`).
    public func listen(_ hear: @escaping @Sendable ([ShapeDrift]) -> Void) { listener.withLock { $0 = hear } }

    private func publish(_ drifts: [ShapeDrift]) { listener.withLock { $0 }?(drifts) }
}
