import HTTPCore

/// Takes an answer as it arrives instead of whole (DESIGN §9). Loop-bound: libcurl's
/// callbacks call it on the worker's thread, from inside `curl_multi_socket_action`.
public protocol UpstreamStreamSink: AnyObject {
    /// The final head (after redirects and 1xx). True takes the body as it arrives: from
    /// then on the transfer has no overall timeout and no size cap (the sink keeps its own
    /// idle time), and its completion comes at the end with an empty body.
    func streams(status: Int, headers: HeaderFields) -> Bool
    /// Body bytes as they come. `.pause` does not take them: libcurl holds them and the
    /// transfer until `resume`, then offers them again. `.stop` ends the transfer (its
    /// completion then says `.aborted`).
    func received(_ bytes: UnsafeRawBufferPointer) -> StreamIntake
    /// The stream's summary so far, a JSON object, for progress and `/-/inflight`; nil
    /// while the answer does not stream.
    var streamProgress: String? { get }
}

public enum StreamIntake {
    case taken, pause, stop
}

/// A started transfer, to resume or cancel it.
public struct UpstreamTask: Hashable {
    let easy: UnsafeMutableRawPointer
}
