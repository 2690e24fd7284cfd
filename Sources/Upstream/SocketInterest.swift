internal import CCurl
internal import CShims
#if canImport(Glibc)
import Glibc
#endif

/// What curl asks of one socket (CURLMOPT_SOCKETFUNCTION's `what`), as a value the
/// session manager maps to a watch or a removal (STYLE habit 9).
enum SocketInterest: Equatable {
    case watch(read: Bool, write: Bool)
    case forget

    init(_ what: Int32) {
        switch what {
        case CURL_POLL_REMOVE: self = .forget
        case CURL_POLL_IN: self = .watch(read: true, write: false)
        case CURL_POLL_OUT: self = .watch(read: false, write: true)
        case CURL_POLL_INOUT: self = .watch(read: true, write: true)
        default: self = .watch(read: false, write: false)   // CURL_POLL_NONE
        }
    }
}
