internal import CSchema
internal import CVector
import Glibc
import HTTPCore

/// The C fast path (`json_fast.c`): valid input normalized 64 bytes a step, and the
/// numbers `output.numbers` must look at decided in its walk.
extension JSONNormalizer {
    /// The fast path's best kernel on this machine (`json_fast.c`): 0 none, 1 AVX2 (with
    /// BMI2 and PCLMUL), 2 AVX-512 (BW, VL, VBMI2).
    static let fastKernel = Int(serializerd_json_fast_available())

    /// Whether this machine runs the fast path (and with it a contract's check as the
    /// output is written).
    public static var fastPathAvailable: Bool { fastKernel != 0 }

    /// The C fast path: the same output as `normalizeUTF8(_:from:options:scan:)` for valid
    /// input, nil for invalid input or where the fast path does not run. `kernel` chooses
    /// one of the kernels this machine runs (tests run each of them). With `inPlace` and `BodyRoom`
    /// of spare capacity in `input`, input that is already normalized comes back as
    /// itself (its storage shared, nothing copied); the fast path reads into that spare
    /// capacity (a number's digits 32 bytes at a time) and writes nothing there.
    static func fastNormalizeUTF8(_ input: [UInt8], from start: Int, options: JSONReadOptions, kernel: Int = fastKernel,
                                  inPlace: Bool = true) -> [UInt8]? {
        fastNormalizeCounting(input, from: start, options: options, kernel: kernel, inPlace: inPlace, countingNumbers: false)?.bytes
    }

    /// The fast path's output and the count of numbers no double holds exactly (nil when
    /// some were left to `NumberSafety`).
    static func fastNormalizeCounting(_ input: [UInt8], from start: Int, options: JSONReadOptions, kernel: Int = fastKernel,
                                      inPlace: Bool = true, countingNumbers: Bool = true, checking contract: OutputContract? = nil)
        -> (bytes: [UInt8], unsafe: Int?, vouch: ContractVouch?)? {
        let n = input.count - start
        guard kernel != 0, kernel <= fastKernel, n > 0 else { return nil }
        let room = inPlace && start == 0 && input.capacity - input.count >= BodyRoom.bytes
        var run = FastRun(countingNumbers: countingNumbers, contract: contract)
        defer { if run.deferred.items != nil { free(run.deferred.items) } }
        let out: [UInt8]
        if n + 64 <= Int(SERIALIZERD_JSON_SCRATCH) {
            // Small output goes through this thread's scratch, copied out only when it is
            // not the input: an uninitialized [UInt8] is made by the standard library's
            // unspecialized path, a generic metadata lookup dearer than the copy.
            let scratch = serializerd_json_scratch()!
            let length = fastRun(input, from: start, into: scratch, options: options, kernel: kernel, room: room, &run)
            if run.outputIsInput != 0 { return (input, run.unsafe, run.vouch) }
            guard length >= 0 else { return nil }
            out = Array(UnsafeBufferPointer(start: scratch, count: length))
        } else {
            out = [UInt8](unsafeUninitializedCapacity: n + 64) { outBuf, count in
                let length = fastRun(input, from: start, into: outBuf.baseAddress!, options: options, kernel: kernel, room: room, &run)
                count = length >= 0 && run.outputIsInput == 0 ? length : 0
            }
            if run.outputIsInput != 0 { return (input, run.unsafe, run.vouch) }
            guard !out.isEmpty else { return nil }   // valid JSON is never empty
        }
        return (out, run.unsafe, run.vouch)
    }

    /// What one run of the C fast path says besides its length.
    struct FastRun {
        let countingNumbers: Bool
        let contract: OutputContract?
        var outputIsInput: Int32 = 0
        /// Numbers by verdict: safe, unsafe, left to NumberSafety.
        var numbers: (Int, Int, Int) = (0, 0, 0)
        /// The count of numbers no double holds exactly, nil when some were left.
        var unsafe: Int? { countingNumbers && numbers.2 == 0 ? numbers.1 : nil }
        /// The contract's check: whether it vouched, and the values it left (the caller
        /// frees `items`).
        var vouched: Int32 = 0
        var deferred = sw_deferrals(items: nil, count: 0, capacity: 0)

        init(countingNumbers: Bool, contract: OutputContract? = nil) {
            self.countingNumbers = countingNumbers
            self.contract = contract
        }

        var vouch: ContractVouch? {
            guard let contract, vouched == 1 else { return nil }
            let deferred = (0..<deferred.count).map { k in
                let item = self.deferred.items[k]
                return ContractVouch.Deferred(node: item.node, start: item.start, length: Int(item.length))
            }
            return ContractVouch(program: contract.program, root: contract.root, deferred: deferred)
        }
    }

    /// The C fast path over `input[start...]` into `out`, which has room for 64 bytes
    /// past the input's length (whole blocks are written).
    static func fastRun(_ input: [UInt8], from start: Int, into out: UnsafeMutablePointer<UInt8>, options: JSONReadOptions,
                        kernel: Int, room: Bool, _ run: inout FastRun) -> Int {
        let counting = run.countingNumbers
        return input.withUnsafeBufferPointer { inBuf in
            withUnsafeMutableBytes(of: &run.numbers) { counts in
                let numbers = counting ? counts.baseAddress!.assumingMemoryBound(to: Int.self) : nil
                guard let contract = run.contract else {
                    return serializerd_json_fast_normalize(inBuf.baseAddress! + start, inBuf.count - start, out,
                                                           options.allowFragments ? 1 : 0, options.maxDepth, Int32(kernel),
                                                           room ? 1 : 0, &run.outputIsInput, numbers)
                }
                return serializerd_json_fast_normalize_checked(inBuf.baseAddress! + start, inBuf.count - start, out,
                                                               options.allowFragments ? 1 : 0, options.maxDepth, Int32(kernel),
                                                               room ? 1 : 0, &run.outputIsInput, numbers,
                                                               contract.program.assumingMemoryBound(to: sw_program.self),
                                                               contract.root, &run.deferred, &run.vouched)
            }
        }
    }
}
