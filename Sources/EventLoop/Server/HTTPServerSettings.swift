internal import CLibevent
import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Limits every connection of a server follows (they apply to connections accepted
/// after a change, and to requests read after it on open ones).
public struct HTTPServerSettings: Sendable, Equatable {
    public var maxHeaderBytes: Int
    public var maxBodyBytes: Int
    public var idleTimeout: Double

    public init(maxHeaderBytes: Int, maxBodyBytes: Int, idleTimeout: Double) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
    }

    var parserLimits: RequestParser.Limits { .init(maxHeadBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes) }
}
