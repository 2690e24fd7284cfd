// Shared by the libFuzzer targets that list it in their `sources`.
import Glibc

/// A failed oracle, said on stderr first (an optimized precondition drops its message),
/// named by the target's module.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID) {
    guard !condition else { return }
    fputs("oracle (\(file)): \(message())\n", stderr)
    abort()
}
