import HTTPCore

/// A stored response's age and freshness for a shared cache (RFC 9111 §4.2), and whether
/// it may be stored at all (§3, with DESIGN §2's additions: never with `Set-Cookie`,
/// never `Vary: *`).
public struct Freshness: Sendable, Equatable {
    /// Seconds the response is fresh for from its generation; 0 when it is stale at once.
    public let lifetime: Int
    /// Its age when received (RFC 9111 §4.2.3 `corrected_initial_age`), in seconds.
    public let initialAge: Double
    /// When it was received (the clock's seconds).
    public let receivedAt: Double
    /// Whether the lifetime came from the heuristic (no explicit freshness given).
    public let heuristic: Bool

    /// The response's fields, the times its request went and its
    /// answer arrived (`Clock` seconds), and the wall clock then (for `Date`, `Expires`).
    public init(status: Int, fields: HeaderFields, requestedAt: Double, receivedAt: Double, wallNow: Double) {
        let control = CacheControl(fields.values("Cache-Control"))
        let date = fields.first("Date").flatMap { HTTPDate.seconds($0, now: wallNow) }
        // RFC 9111 §4.2.3.
        let ageValue = fields.first("Age").flatMap { CacheControl.seconds(Array($0.utf8)).value } ?? 0
        let apparentAge = max(0, wallNow - (date ?? wallNow))
        let responseDelay = max(0, receivedAt - requestedAt)
        initialAge = max(apparentAge, Double(ageValue) + responseDelay)
        self.receivedAt = receivedAt
        // RFC 9111 §4.2.1, for a shared cache: s-maxage, max-age, Expires, else heuristic.
        var heuristic = false
        if control.sMaxAge.isPresent {
            lifetime = control.sMaxAge.value ?? 0
        } else if control.maxAge.isPresent {
            lifetime = control.maxAge.value ?? 0
        } else if let expiresText = fields.first("Expires") {
            // An Expires that is not a date (`0`) means already expired.
            let expires = fields.values("Expires").count == 1 ? HTTPDate.seconds(expiresText, now: wallNow) : nil
            lifetime = expires.map { Self.clamped($0 - (date ?? wallNow)) } ?? 0
        } else if let modified = fields.first("Last-Modified").flatMap({ HTTPDate.seconds($0, now: wallNow) }),
                  Self.heuristicallyCacheable.contains(status) {
            // §4.2.2: a tenth of the time since the last modification.
            lifetime = Self.clamped(((date ?? wallNow) - modified) / 10)
            heuristic = true
        } else {
            lifetime = 0
        }
        self.heuristic = heuristic
    }

    /// Statuses a cache may give a heuristic freshness (RFC 9110 §15.1).
    public static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The response's current age (RFC 9111 §4.2.3) at `now` (the clock's seconds).
    public func age(at now: Double) -> Double { initialAge + max(0, now - receivedAt) }

    /// Whether it is fresh at `now`.
    public func isFresh(at now: Double) -> Bool { Double(lifetime) > age(at: now) }

    static func clamped(_ seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds >= Double(CacheControl.maxSeconds) ? CacheControl.maxSeconds : Int(seconds)
    }
}

/// Whether a shared cache may store a response (RFC 9111 §3), and which request fields
/// then select it (its `Vary`).
public enum Storability: Sendable, Equatable {
    case storable(vary: [String])
    case notStorable(String)

    /// `requestFields`: the client's request as sent upstream; `responseFields` the answer's.
    public static func of(method: String, status: Int, requestFields: HeaderFields, responseFields: HeaderFields)
        -> Storability {
        guard HTTPMethod.isCacheable(method) else { return .notStorable("method \(method)") }
        let request = CacheControl(requestFields.values("Cache-Control"))
        let response = CacheControl(responseFields.values("Cache-Control"))
        if request.noStore || response.noStore { return .notStorable("no-store") }
        if response.isPrivate { return .notStorable("private") }
        if responseFields.first("Set-Cookie") != nil { return .notStorable("Set-Cookie") }
        // §3.5: a request with Authorization only when the response says a shared cache may.
        if requestFields.first("Authorization") != nil,
           !(response.isPublic || response.sMaxAge.isPresent || response.mustRevalidate) {
            return .notStorable("Authorization")
        }
        var vary: [String] = []
        for value in responseFields.values("Vary") {
            for member in value.split(separator: ",") {
                let name = member.trimmingASCIIWhitespace().lowercased()
                if name == "*" { return .notStorable("Vary: *") }
                if !name.isEmpty && !vary.contains(name) { vary.append(name) }
            }
        }
        // Something must say how long it may be used: explicit freshness, a validator for
        // revalidation, or a status a heuristic applies to.
        let explicit = response.maxAge.isPresent || response.sMaxAge.isPresent || responseFields.first("Expires") != nil
        let validator = responseFields.first("ETag") != nil || responseFields.first("Last-Modified") != nil
        guard explicit || validator || response.isPublic || Freshness.heuristicallyCacheable.contains(status) else {
            return .notStorable("status \(status) without freshness information")
        }
        return .storable(vary: vary.sorted())
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> Substring {
        var s = self
        while let first = s.utf8.first, first == 0x20 || first == 0x09 { s = s.dropFirst() }
        while let last = s.utf8.last, last == 0x20 || last == 0x09 { s = s.dropLast() }
        return s
    }
}
