import ArgumentParser
import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// Config errors: printed as is on stderr (one per line), exit status 1.
struct ConfigFailure: Error, CustomStringConvertible {
    let message: String
    var count = 1
    var description: String { message }
}
