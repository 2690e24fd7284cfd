/// A contract the JSON normalizer checks its output against as it writes it (DESIGN §10):
/// the contract's one-pass program (`schema_walk.h`), run on the tokens the normalizer
/// already finds, so that a JSON route's answer is not read a second time to be checked.
public struct OutputContract: @unchecked Sendable {
    /// The program, an `sw_program`, which `owner` keeps alive.
    let program: UnsafeRawPointer
    let root: Int32
    let owner: AnyObject

    public init(program: UnsafeRawPointer, root: Int32, owner: AnyObject) {
        self.program = program
        self.root = root
        self.owner = owner
    }
}

/// What the normalizer's check found: the output meets the contract's program from `root`
/// as far as the program checks, the values in `deferred` (the program's nodes, and their
/// bytes' place in the output) still to be checked leaf by leaf.
public final class ContractVouch: @unchecked Sendable {
    public let program: UnsafeRawPointer
    public let root: Int32
    public let deferred: [Deferred]

    public struct Deferred: Sendable {
        public let node: Int32
        public let start: Int
        public let length: Int
    }

    init(program: UnsafeRawPointer, root: Int32, deferred: [Deferred]) {
        self.program = program
        self.root = root
        self.deferred = deferred
    }
}
