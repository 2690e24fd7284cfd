import Foundation

/// A value shared between test threads, behind a lock.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    public func update(_ body: (inout Value) -> Void) {
        lock.lock(); defer { lock.unlock() }
        body(&value)
    }

    public var current: Value {
        lock.lock(); defer { lock.unlock() }
        return value
    }
}
