public struct Timeouts: Sendable, Equatable {
    public var upstream = 30.0
    public var connect = 5.0
    public var clientIdle = 60.0
    public var shutdownGrace = 10.0
}
