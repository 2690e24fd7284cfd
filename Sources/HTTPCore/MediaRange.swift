/// One entry of an acceptable-content-types list: `application/json`, `application/*`,
/// `*/*`, or a suffix pattern `*/*+json` (any type whose subtype ends in `+json`).
///
/// Matching ignores parameters and case, as DESIGN §2 requires.
public struct MediaRange: Sendable, Hashable, CustomStringConvertible {
    public let type: String
    public let subtype: String

    public init?(_ text: String) {
        guard let media = MediaType(text) else { return nil }
        if media.type == "*" && media.subtype != "*" && !media.subtype.hasPrefix("*+") { return nil }
        if media.subtype.hasPrefix("*") && media.subtype != "*" && !media.subtype.hasPrefix("*+") {
            return nil
        }
        type = media.type
        subtype = media.subtype
    }

    public func matches(_ media: MediaType) -> Bool {
        if subtype.hasPrefix("*+") {
            return (type == "*" || type == media.type) && media.suffix == String(subtype.dropFirst(2))
        }
        if type == "*" { return true }
        guard type == media.type else { return false }
        return subtype == "*" || subtype == media.subtype
    }

    public var description: String { "\(type)/\(subtype)" }
}
