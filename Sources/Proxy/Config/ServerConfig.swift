import HTTPCore
import Telemetry
#if canImport(Glibc)
import Glibc
#endif

/// The whole configuration (DESIGN §2), validated and resolved: durations in seconds,
/// sizes in bytes, serializers built. Immutable; a reload swaps in a new one.
public struct ServerConfig: Sendable {
    public var listen = ListenAddress(host: "127.0.0.1", port: 8080)
    /// nil = `workers: auto`, see `autoWorkers`.
    public var workers: Int?
    public var limits = Limits()
    public var timeouts = Timeouts()
    public var adminAllow: [CIDR] = [CIDR("127.0.0.0/8")!, CIDR("::1/128")!]

    /// A client in `admin.allow`, by its socket peer (a Unix-socket peer is on this host:
    /// it counts as loopback, DESIGN §4).
    func allowsAdmin(peer: String, unix: Bool) -> Bool {
        guard let address = unix ? IPAddress("127.0.0.1") : IPAddress(peer) else { return false }
        return adminAllow.contains { $0.contains(address) }
    }
    /// `hosts`: DNS names besides `localhost`, `*.localhost`, IP literals and the listen
    /// name that a route's origin-form request may carry in `Host`; lowercased, without a
    /// trailing dot.
    public var hosts: [String] = []

    /// Whether a route may answer a request whose (validated) `Host` is `value` (DESIGN
    /// §4): no page on the web can be given these names, so a DNS-rebinding page cannot
    /// borrow a route's credentials. The common case (an address, `localhost`) allocates
    /// nothing.
    static func namesThisDaemon(host value: UnsafeBufferPointer<UInt8>, hosts: [String]) -> Bool {
        if value.isEmpty || HostField.isLocalOrLiteral(validated: value) { return true }
        guard !hosts.isEmpty, let name = HostField.name(String(decoding: value, as: UTF8.self)) else { return false }
        return hosts.contains(name)
    }

    /// `admin.hosts`: Host names admin answers to besides loopback names and addresses
    /// and the listen address; lowercased, without a trailing dot.
    public var adminHosts: [String] = []
    /// `admin.keep_failures`: keep failed requests' upstream responses for /-/failures
    /// (bodies can hold secrets, so it can be turned off).
    public var keepFailures = true
    /// `capture:`: what is redacted before anything is kept or shown.
    public var capture = Redaction()
    public var log = LogSettings()
    /// `tapes.dir`, resolved against the config file's directory.
    public var tapesDir = "./tapes"
    /// `cache.max_bytes`: the response cache of the whole process.
    public var cacheMaxBytes = 256 << 20
    /// `tracing:`; nil: no spans, and `traceparent` crosses untouched.
    public var tracing: TracingSettings?
    public var routes: [Route] = []
    /// The file it came from, for messages.
    public var source = ""

    public init() {}

    /// `workers: auto`: one per online CPU, at most `maxAutoWorkers` — the systemd unit's
    /// TasksMax is sized from these bounds (scripts/check-ops.sh checks it).
    public static var autoWorkers: Int { min(maxAutoWorkers, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))) }
    public static let maxAutoWorkers = 64
    /// The most an explicit `workers:` may ask for.
    public static let maxWorkers = 256
}
