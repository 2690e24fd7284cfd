import Serializers

/// RFC 9457 problem documents (`application/problem+json`), shaped as DESIGN §3 shows.
public enum ProblemDocument {
    public static let contentType = "application/problem+json"
    static let textPreviewLimit = 4096
    /// Every problem `type` is this plus the failure's type suffix.
    static let typePrefix = "urn:serializerd:"

    /// `hint` (what the route's settings accept, for a validation failure) joins the detail.
    public static func render(_ failure: ProxyFailure, route: String? = nil, requestID: String? = nil, hint: String? = nil) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("type", .string(typePrefix + failure.typeSuffix)),
            ("title", .string(failure.title)),
            ("status", .number(String(failure.clientStatus))),
        ]
        let detail = [failure.detail, hint].compactMap { $0 }.joined(separator: "; ")
        if !detail.isEmpty { members.append(("detail", .string(detail))) }
        members.append(("code", .number(String(failure.code))))
        if let route { members.append(("route", .string(route))) }
        if let requestID { members.append(("request_id", .string(requestID))) }
        switch failure {
        case .response(let error, let upstream):
            members.append(("upstream", evidence(upstream)))
            if let underlying = error.underlying { members.append(("underlying", chain(underlying))) }
        case .upstreamUnavailable(_, _, let url?), .upstreamTimeout(let url?, _, _), .upstreamBodyTooLarge(_, let url?):
            members.append(("upstream", .object([("url", .string(url))])))
        default:
            break
        }
        return NormalizedJSON(.object(members)).bytes
    }

    static func chain(_ error: SerializationError) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("type", .string(typePrefix + error.typeSuffix)),
            ("code", .number(String(error.code))),
            ("title", .string(error.title)),
        ]
        if let detail = error.detail { members.append(("detail", .string(detail))) }
        if let underlying = error.underlying { members.append(("underlying", chain(underlying))) }
        return .object(members)
    }

    static func evidence(_ upstream: UpstreamEvidence) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let url = upstream.url { members.append(("url", .string(url))) }
        members.append(("status", .number(String(upstream.status))))
        if let type = upstream.contentType { members.append(("content_type", .string(type))) }
        if let parsed = upstream.parsed {
            members.append(("body", parsed.value))
        } else if !upstream.body.isEmpty, let text = textPreview(upstream.body) {
            members.append(("body", .string(text)))
        }
        return .object(members)
    }

    /// The first 4 KiB of a UTF-8 body, cut at a character boundary; nil if not UTF-8.
    static func textPreview(_ body: [UInt8]) -> String? {
        UTF8Text.preview(body, maxBytes: textPreviewLimit)
    }
}
