import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// Listening sockets passed by a service manager (sd_listen_fds(3)): descriptors 3…
/// when `$LISTEN_PID` is this process.
public enum SocketActivation {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// nil when nothing was passed to this process; the descriptors otherwise, checked.
    public static func inheritedSockets(environment: [String: String]) throws(Failure) -> [Int32]? {
        guard let pidText = environment["LISTEN_PID"] else { return nil }
        guard let pid = Int32(pidText) else {
            throw Failure(description: "LISTEN_PID: expected a process id, found '\(pidText)'")
        }
        guard pid == getpid() else { return nil }
        let countText = environment["LISTEN_FDS"] ?? ""
        guard let count = Int32(countText), count > 0, count < 64 else {
            throw Failure(description: "LISTEN_FDS: expected the number of inherited listening sockets (1 or more), found '\(countText)'")
        }
        var sockets: [Int32] = []
        for fd in 3..<(3 + count) {
            do { try ListeningSocket.adopt(fd) } catch {
                throw Failure(description: "LISTEN_FDS: \(error); socket activation needs listening TCP sockets (ListenStream=)")
            }
            sockets.append(fd)
        }
        // Children (none today) must not believe the sockets are theirs.
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        return sockets
    }
}
