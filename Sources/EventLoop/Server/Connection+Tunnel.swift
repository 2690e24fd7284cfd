#if canImport(Glibc)
import Glibc
#endif
import HTTPCore

/// A connection handed over after `101 Switching Protocols` (a WebSocket): bytes both
/// ways as they come, no HTTP framing. It has no deadline of its own (its user keeps
/// one); it ends with `endStream` (closed once the output has left) or `close`.
extension Connection {
    func startTunnel(_ request: ServerRequest, headers: HeaderFields, input: @escaping (UnsafeRawBufferPointer) -> Void) {
        var head = ReplyHead(status: 101, capacity: 256)
        headers.forEach { name, value in head.add(name: name, value: value) }
        head.end()
        streamChunked = false
        machine.streamStarted()
        current = request
        events?.disarm()
        queue(head.bytes)
        let early = machine.takePending()
        tunnelInput = input
        watchRead()
        if !early.isEmpty { early.withUnsafeBytes { input($0) } }
    }

    func tunnelReadable(_ input: (UnsafeRawBufferPointer) -> Void) {
        let scratch = server.scratch
        let n = read(fd, scratch.baseAddress, scratch.count)
        if n > 0 {
            input(UnsafeRawBufferPointer(start: scratch.baseAddress, count: n))
        } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
            close()
        }
    }

    /// Input waits in the kernel (the other side of the tunnel is behind).
    func pauseTunnelInput() { events?.stopReading() }

    func resumeTunnelInput() {
        guard tunnelInput != nil else { return }
        watchRead()
    }
}
