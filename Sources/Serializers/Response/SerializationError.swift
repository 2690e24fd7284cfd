/// Why a response serializer did not produce a value, nested the way AF nests its
/// NSErrors: a status failure sits on top of a content-type failure; a parse
/// failure sits on top of a status failure.
public indirect enum SerializationError: Error, Sendable, Equatable {
    /// AF NSURLErrorBadServerResponse (-1011).
    case unacceptableStatus(Int, underlying: SerializationError?)
    /// AF NSURLErrorCannotDecodeContentData (-1016); nil when the upstream sent no Content-Type.
    case unacceptableContentType(String?)
    /// Cocoa's NSPropertyListReadCorruptError/JSON read error (3840), with the evidence.
    case serializationFailed(serializer: String, detail: String, underlying: SerializationError?)
    /// The normalized answer breaks the route's `contract` (DESIGN §10, -1017): the detail
    /// names each violation's JSON pointer, keyword and schema location.
    case contractViolation(detail: String)

    /// AF's error code.
    public var code: Int {
        switch self {
        case .unacceptableStatus: return -1011
        case .unacceptableContentType: return -1016
        case .serializationFailed: return 3840
        case .contractViolation: return -1017
        }
    }

    /// The problem type suffix (`urn:serializerd:<suffix>`), also the metrics outcome.
    public var typeSuffix: String {
        switch self {
        case .unacceptableStatus: return "unacceptable-status"
        case .unacceptableContentType: return "unacceptable-content-type"
        case .serializationFailed: return "serialization-failed"
        case .contractViolation: return "contract-violation"
        }
    }

    /// AF's localized description.
    public var title: String {
        switch self {
        case .unacceptableStatus(let code, _):
            return "Request failed: \(HTTPStatus.reasonPhrase(code)) (\(code))"
        case .unacceptableContentType(let type):
            return "Request failed: unacceptable content-type: \(type ?? "(none)")"
        case .serializationFailed:
            return "The data couldn't be read because it isn't in the correct format."
        case .contractViolation:
            return "The answer does not meet the route's contract."
        }
    }

    /// The precise reason, where there is more to say than the title.
    public var detail: String? {
        if case .serializationFailed(let serializer, let detail, _) = self { return "\(serializer): \(detail)" }
        if case .contractViolation(let detail) = self { return detail }
        return nil
    }

    public var underlying: SerializationError? {
        switch self {
        case .unacceptableStatus(_, let u): return u
        case .unacceptableContentType, .contractViolation: return nil
        case .serializationFailed(_, _, let u): return u
        }
    }

    /// True when this error or one under it is a content-type failure: AF then returns
    /// no object at all.
    public var involvesContentType: Bool {
        if case .unacceptableContentType = self { return true }
        return underlying?.involvesContentType ?? false
    }

    /// The unacceptable upstream status anywhere in the chain, when it is 4xx/5xx.
    public var unacceptableErrorStatus: Int? {
        if case .unacceptableStatus(let code, _) = self, (400...599).contains(code) { return code }
        return underlying?.unacceptableErrorStatus
    }
}
