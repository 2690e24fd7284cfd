import Logging
#if canImport(Glibc)
import Glibc
#endif
import Telemetry
import Serializers

/// The whole configuration (DESIGN §2), validated and resolved: durations in seconds,
/// sizes in bytes, serializers built. Immutable; a reload swaps in a new one.
public struct ServerConfig: Sendable {
    public var listen = ListenAddress(host: "127.0.0.1", port: 8080)
    /// nil = `workers: auto`, see `autoWorkers`.
    public var workers: Int?
    public var limits = Limits()
    public var timeouts = Timeouts()
    public var adminAllow: [CIDR] = [CIDR("127.0.0.0/8")!, CIDR("::1/128")!]
    public var log = LogSettings()
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

public struct Limits: Sendable, Equatable {
    public var maxRequestBody = 1 << 20
    public var maxResponseBody = 32 << 20
    public var maxHeaderBytes = 64 << 10
    public var maxJSONDepth = JSONReadOptions.defaultMaxDepth
    /// Open client connections, all workers together.
    public var maxConnections = 4096
    /// Upstream bodies being received plus reply bytes not yet sent, all connections together.
    public var maxBufferedBytes = 256 << 20

    /// What a request serializer may send upstream (DESIGN §5): 4 × `max_request_body`.
    public var maxRequestSerializerOutput: Int {
        let (scaled, overflow) = maxRequestBody.multipliedReportingOverflow(by: 4)
        return overflow ? .max : scaled
    }
}

public struct Timeouts: Sendable, Equatable {
    public var upstream = 30.0
    public var connect = 5.0
    public var clientIdle = 60.0
    public var shutdownGrace = 10.0
}

public struct LogSettings: Sendable, Equatable {
    public enum Format: String, Sendable { case json, text }
    public var format = Format.json
    public var level = Logger.Level.info

    /// Makes these the settings every log line follows from now on.
    public func apply(to output: LogOutput) {
        output.configure(format: format == .json ? .json : .text, level: level)
    }
}

/// `output:` — what the client receives.
public struct OutputSettings: Sendable, Equatable {
    public enum OnFailure: String, Sendable { case problem, passthrough }
    public var envelope = false
    public var canonical = false
    public var onFailure = OnFailure.problem
}

/// One compiled route. A class: it is handed along every stage of every request, and
/// copying a struct of this size retained each of its fields at every step.
public final class Route: Sendable {
    public let name: String
    public let prefix: String
    /// nil = all methods.
    public let methods: Set<String>?
    /// Set for absolute-form (HTTP_PROXY-style) routes: lowercased host[:port].
    public let host: String?
    public let upstream: UpstreamBase
    public let timeout: Double
    public let connectTimeout: Double
    public let followRedirects: Int
    public let headers: [(String, String)]
    /// The names of `headers`, which replace any client header of the same name.
    let headerNames: HeaderNames
    public let requestSerializerName: String
    public let requestSerializer: any RequestSerializer
    public let response: ResponseSettings
    public let responseSerializer: any ResponseSerializer
    public let output: OutputSettings

    init(name: String, prefix: String, methods: Set<String>?, host: String?, upstream: UpstreamBase, timeout: Double,
         connectTimeout: Double, followRedirects: Int, headers: [(String, String)], requestSerializerName: String,
         requestSerializer: any RequestSerializer, response: ResponseSettings, responseSerializer: any ResponseSerializer,
         output: OutputSettings) {
        self.name = name
        self.prefix = prefix
        self.methods = methods
        self.host = host
        self.upstream = upstream
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.followRedirects = followRedirects
        self.headers = headers
        headerNames = HeaderNames(headers.map(\.0))
        self.requestSerializerName = requestSerializerName
        self.requestSerializer = requestSerializer
        self.response = response
        self.responseSerializer = responseSerializer
        self.output = output
    }

    /// Without `methods`, every method but CONNECT and TRACE (DESIGN §2).
    public func allows(_ method: String) -> Bool {
        methods?.contains(method) ?? (method != "CONNECT" && method != "TRACE")
    }
}
