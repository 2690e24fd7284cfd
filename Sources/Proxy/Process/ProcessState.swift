import Contracts
import Tapes
import Upstream

/// What the process keeps across reloads, made once by whoever runs it and handed to
/// every config load and to the server: the tapes by file (recordings not yet written
/// included), each `cookies: jar` route's jar, each route's reachability, its learned
/// shapes and its gate (`limits`). Two loads with one state share these; a load with a state of its own shares
/// nothing.
public final class ProcessState: Sendable {
    public let tapes: TapeStore
    public let cookieJars: CookieJars
    public let reachability: ReachabilityBoard
    public let shapes: ShapeBoard
    public let gates: GateBoard

    public init() {
        tapes = TapeStore()
        cookieJars = CookieJars()
        reachability = ReachabilityBoard()
        shapes = ShapeBoard()
        gates = GateBoard()
    }
}
