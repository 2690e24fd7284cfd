/// AF's `acceptableStatusCodes` (an NSIndexSet): codes and inclusive ranges.
public struct StatusCodeSet: Sendable, Equatable, CustomStringConvertible {
    public let ranges: [ClosedRange<Int>]

    public init(_ ranges: [ClosedRange<Int>]) {
        self.ranges = ranges
    }

    /// AF's default: 200–299.
    public static let successful = StatusCodeSet([200...299])

    /// Parses `200-299,404` (also accepts the items one by one, as YAML lists give them).
    public init(parsing items: [String]) throws(SettingsError) {
        var ranges: [ClosedRange<Int>] = []
        for raw in items.flatMap({ $0.split(separator: ",") }) {
            let item = raw.trimmingASCIIWhitespace()
            let bounds = item.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let low = Int(bounds[0]), let high = Int(bounds.last!),
                  (100...599).contains(low), (100...599).contains(high), low <= high else {
                throw SettingsError(key: "acceptable_status_codes", "'\(item)' is not a status code (100-599) or a range like 200-299")
            }
            ranges.append(low...high)
        }
        guard !ranges.isEmpty else { throw SettingsError(key: "acceptable_status_codes", "empty list (use null to disable the check)") }
        self.ranges = ranges
    }

    public func contains(_ code: Int) -> Bool { ranges.contains { $0.contains(code) } }

    public var description: String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            .joined(separator: ",")
    }
}

/// Which Content-Types a serializer accepts.
public enum ContentTypePolicy: Sendable, Equatable {
    /// The serializer's own AF defaults.
    case serializerDefault
    /// No check (YAML `null`, AF's nil `acceptableContentTypes`).
    case any
    case only([MediaRange])
}
