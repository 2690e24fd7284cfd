import HTTPCore
import Synchronization

/// A stored answer: the route's normalized output with what it was made from. A class:
/// a lookup hands out one reference, and two workers answering from one entry at once
/// share one reference count rather than one for each of its arrays and strings.
public final class StoredResponse: Sendable {
    public let status: Int
    /// The fields serializerd forwards with it, in order (`Last-Modified` among them): a
    /// hit copies them into its reply whole.
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

    public convenience init(status: Int, fields: HeaderFields, body: [UInt8], serializer: String, freshness: Freshness,
                            vary: [String], request: (String) -> String?, route: String, upstreamETag: String? = nil, tag: String? = nil) {
        self.init(status: status, fields: fields, body: body, serializer: serializer, freshness: freshness, upstreamETag: upstreamETag,
                  tag: tag ?? OutputTag.of(body), vary: vary, selecting: vary.map { request($0).map(StoredResponse.normalized) }, route: route)
    }

    private init(status: Int, fields: HeaderFields, body: [UInt8], serializer: String, freshness: Freshness,
                 upstreamETag: String?, tag: String, vary: [String], selecting: [String?], route: String) {
        self.status = status
        self.fields = fields
        self.body = body
        self.serializer = serializer
        self.freshness = freshness
        self.upstreamETag = upstreamETag
        lastModified = fields.first("Last-Modified")
        control = CacheControl(fields.values("Cache-Control"))
        self.tag = tag
        self.vary = vary
        self.selecting = selecting
        self.route = route
    }

    /// The same output after a 304 (RFC 9111 §4.3.4): `fields` (the stored ones merged
    /// with the 304's) and a new freshness; body, tag and variant are kept.
    public func refreshed(fields: HeaderFields, upstreamETag: String?, freshness: Freshness) -> StoredResponse {
        StoredResponse(status: status, fields: fields, body: body, serializer: serializer, freshness: freshness,
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
    public func merging(_ updates: HeaderFields) -> HeaderFields {
        var names: [String] = []
        updates.forEach { name, _ in names.append(String(decoding: name, as: UTF8.self)) }
        let updated = HeaderNames(names)
        var merged = HeaderFields()
        fields.appending(where: { !updated.contains($0) }, to: &merged)
        merged.append(contentsOf: updates)
        return merged
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
        body.count + fields.bytes.count + selecting.reduce(0) { $0 + ($1?.utf8.count ?? 0) } + 256
    }
}
