internal import CVector
import HTTPCore

/// The C fast path (`json_fast.c`): valid input normalized 64 bytes a step, and the
/// numbers `output.numbers` must look at decided in its walk.
extension JSONNormalizer {
    /// The fast path's best kernel on this machine (`json_fast.c`): 0 none, 1 AVX2 (with
    /// BMI2 and PCLMUL), 2 AVX-512 (BW, VL, VBMI2).
    static let fastKernel = Int(serializerd_json_fast_available())

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
                                      inPlace: Bool = true, countingNumbers: Bool = true) -> (bytes: [UInt8], unsafe: Int?)? {
        let n = input.count - start
        guard kernel != 0, kernel <= fastKernel, n > 0 else { return nil }
        let room = inPlace && start == 0 && input.capacity - input.count >= BodyRoom.bytes
        var valid = false
        var outputIsInput: Int32 = 0
        var unsafe: Int?
        // It writes whole blocks past the output it keeps: 64 bytes of room beyond the input.
        let out = input.withUnsafeBufferPointer { inBuf in
            [UInt8](unsafeUninitializedCapacity: n + 64) { outBuf, count in
                // Numbers by verdict: safe, unsafe, left to NumberSafety.
                withUnsafeTemporaryAllocation(of: Int.self, capacity: 3) { numbers in
                    numbers.initialize(repeating: 0)
                    let base = inBuf.baseAddress!
                    let length = serializerd_json_fast_normalize(base + start, n, outBuf.baseAddress!,
                                                                 options.allowFragments ? 1 : 0, options.maxDepth, Int32(kernel),
                                                                 room ? 1 : 0, &outputIsInput, countingNumbers ? numbers.baseAddress! : nil)
                    valid = length >= 0 && outputIsInput == 0
                    count = valid ? length : 0
                    unsafe = countingNumbers && numbers[2] == 0 ? numbers[1] : nil
                }
            }
        }
        if outputIsInput != 0 { return (input, unsafe) }
        return valid ? (out, unsafe) : nil
    }
}
