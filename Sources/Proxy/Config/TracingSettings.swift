import Telemetry
import Tracing

/// `tracing:` (DESIGN §12): where spans go, which requests start a trace, and the
/// service name the collector shows.
public struct TracingSettings: Sendable, Equatable {
    /// The OTLP/HTTP traces endpoint, e.g. `http://127.0.0.1:4318/v1/traces`.
    public var otlp: String
    /// The fraction of requests without a `traceparent` that start a sampled trace.
    public var sample = 1.0
    public var serviceName = "serializerd"

    public var export: ExportSettings { ExportSettings(url: otlp, serviceName: serviceName) }
}

extension ConfigLoader {
    static func tracing(_ node: ConfigNode) throws(ConfigError) -> TracingSettings {
        let m = try node.mapping(allowed: ["otlp", "sample", "service_name"])
        guard let url = m["otlp"] else { throw node.error("missing required key 'otlp'") }
        let text = try url.string()
        // The endpoint as written (its path is the collector's), but only http(s) to a host.
        guard UpstreamBase(text) != nil else {
            throw url.error("expected the collector's OTLP/HTTP traces URL, such as http://127.0.0.1:4318/v1/traces, found '\(Redaction().url(text))'")
        }
        var settings = TracingSettings(otlp: text)
        if let n = m["sample"] {
            let value = try n.string()
            guard let fraction = Double(value), fraction >= 0, fraction <= 1 else {
                throw n.error("expected a fraction of requests from 0 to 1, such as 0.1, found '\(value)'")
            }
            settings.sample = fraction
        }
        if let n = m["service_name"] {
            let name = try n.string()
            guard !name.isEmpty, name.count <= 256, !name.contains(where: { $0.isNewline }) else {
                throw n.error("expected a service name of 1 to 256 characters on one line")
            }
            settings.serviceName = name
        }
        return settings
    }
}
