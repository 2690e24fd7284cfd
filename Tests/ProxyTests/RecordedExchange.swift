import EventLoop
import Foundation
import HTTPCore

/// A client exchange held in memory: what the pipeline replied, and how.
final class RecordedExchange: ClientExchange {
    let method: String
    let target: String
    let headers: [(String, String)]
    let body: [UInt8]
    let failure: HTTPParseError?
    var peerAddress = "127.0.0.1"
    var peerIsUnixSocket = false
    var replies: [(status: Int, headers: [(String, String)], body: [UInt8])] = []

    init(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [], failure: HTTPParseError? = nil) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.failure = failure
    }

    var fields: HeaderFields { HeaderFields(headers) }
    var headBytes: [UInt8] { Array(("\(method) \(target) HTTP/1.1\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n").utf8) }

    func respond(status: Int, headers: HeaderFields, body: [UInt8], recordNow: () -> Void,
                 shaping: ReplyShaping?) -> ServerRequest.Delivery {
        replies.append((status, headers.pairs, body))
        shapings.append(shaping)
        // A shaped reply is out until the test says how it ended (`finish`).
        return shaping == nil ? .delivered : .pending
    }

    /// How each reply was to be shaped (nil: not at all).
    var shapings: [ReplyShaping?] = []
    /// A pending reply's end, for the test to call.
    var finish: ((Bool) -> Void)?
    func whenFinished(_ body: @escaping (Bool) -> Void) { finish = body }
    func startStream(status: Int, headers: HeaderFields, sendBuffer: Int32, onDrained: @escaping () -> Void,
                     onClose: @escaping () -> Void) -> Bool { false }
    func write(_ bytes: [UInt8]) {}
    var bufferedBytes: Int { 0 }
    func endStream() {}
    func abortStream() {}

    var reply: (status: Int, headers: [(String, String)], body: [UInt8])? { replies.first }
    func replyHeader(_ name: String) -> String? { reply?.headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var replyJSON: [String: Any]? { reply.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] } }
}
