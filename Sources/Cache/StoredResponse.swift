import HTTPCore
import Synchronization

/// A stored answer: the route's normalized output with what it was made from. A class:
/// a lookup hands out one reference, and two workers answering from one entry at once
/// share one reference count rather than one for each of its arrays and strings.
public final class StoredResponse: Sendable {
    public let status: Int
    /// The fields serializerd forwards with it, in order (`Last-Modified` among them).
    public let headers: [(String, String)]
    /// The same fields as lines: a hit copies them into its reply whole.
    public let fields: HeaderFields
    public let body: [UInt8]
    public let serializer: String
    public let freshness: Freshness
    /// The upstream's `ETag`, for revalidation (never sent to the client).
    public let upstreamETag: String?
    /// The upstream's `Last-Modified`, for revalidation.
    public let lastModified: String?
    /// The response's Cache-Control.
    public let control: CacheControl
    /// serializerd's strong `ETag` over `body`.
    public let tag: String
    /// The `Vary` names (lowercased, sorted) and the storing request's values for them
    /// (nil: the request had no such field).
    public let vary: [String]
    public let selecting: [String?]
    /// The route that stored it (`/-/cache` counts and purges by it).
    public let route: String

    public convenience init(status: Int, headers: [(String, String)], body: [UInt8], serializer: String, freshness: Freshness,
                            vary: [String], request: (String) -> String?, route: String, upstreamETag: String? = nil, tag: String? = nil) {
        self.init(status: status, headers: headers, body: body, serializer: serializer, freshness: freshness, upstreamETag: upstreamETag,
                  tag: tag ?? OutputTag.of(body), vary: vary, selecting: vary.map { request($0).map(StoredResponse.normalized) }, route: route)
    }

    private init(status: Int, headers: [(String, String)], body: [UInt8], serializer: String, freshness: Freshness,
                 upstreamETag: String?, tag: String, vary: [String], selecting: [String?], route: String) {
        self.status = status
        self.headers = headers
        fields = HeaderFields(headers)
        self.body = body
        self.serializer = serializer
        self.freshness = freshness
        self.upstreamETag = upstreamETag
        lastModified = Freshness.values("Last-Modified", headers).first
        control = CacheControl(Freshness.values("Cache-Control", headers))
        self.tag = tag
        self.vary = vary
        self.selecting = selecting
        self.route = route
    }

    /// The same output after a 304 (RFC 9111 §4.3.4): `headers` (the stored ones merged
    /// with the 304's) and a new freshness; body, tag and variant are kept.
    public func refreshed(headers: [(String, String)], upstreamETag: String?, freshness: Freshness) -> StoredResponse {
        StoredResponse(status: status, headers: headers, body: body, serializer: serializer, freshness: freshness,
                       upstreamETag: upstreamETag ?? self.upstreamETag, tag: tag, vary: vary, selecting: selecting, route: route)
    }

    /// Whether a 304 with these validators is about this entry (RFC 9111 §4.3.4): its
    /// entity tag equals the stored one (weak comparison, RFC 9110 §8.8.3.2), or it sends
    /// none and its `Last-Modified` equals the stored one. A 304 naming another
    /// representation must not refresh this one.
    public func isValidated(byETag etag: String?, lastModified modified: String?) -> Bool {
        if let etag { return upstreamETag.map { Self.opaque($0) == Self.opaque(etag) } ?? false }
        guard let modified, let lastModified else { return false }
        return modified.trimmingASCIIWhitespace() == lastModified.trimmingASCIIWhitespace()
    }

    /// An entity tag without its weakness mark and surrounding whitespace.
    static func opaque(_ tag: String) -> String {
        let trimmed = tag.trimmingASCIIWhitespace()
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    /// The stored fields with those of a 304 put in their place (names compared in any case).
    public func merging(_ updates: [(String, String)]) -> [(String, String)] {
        let names = Set(updates.map { $0.0.lowercased() })
        return headers.filter { !names.contains($0.0.lowercased()) } + updates
    }

    /// Whether `request` selects this variant (RFC 9111 §4.1: the named fields' values,
    /// whitespace around list members ignored, equal).
    public func matches(_ request: (String) -> String?) -> Bool {
        zip(vary, selecting).allSatisfy { name, stored in request(name).map(Self.normalized) == stored }
    }

    static func normalized(_ value: String) -> String {
        value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingASCIIWhitespace() }.joined(separator: ",")
    }

    /// What keeping it costs, roughly: the body, the fields, a fixed allowance.
    public var cost: Int {
        body.count + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count } + selecting.reduce(0) { $0 + ($1?.utf8.count ?? 0) } + 256
    }
}
