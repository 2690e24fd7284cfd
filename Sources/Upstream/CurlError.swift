internal import CCurl
internal import CShims
#if canImport(Glibc)
import Glibc
#endif

/// A libcurl call that did not succeed: its code, libcurl's own message, and which
/// option or call in which function (STYLE habit 6: every return code through one checker).
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let code: Int
    public let message: String
    public let call: String
    public let function: String

    public var description: String { "\(call) in \(function): \(message) (\(code))" }
}
