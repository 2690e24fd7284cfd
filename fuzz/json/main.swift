// libFuzzer target for the JSON normalizer (Sources/Serializers/JSON), built by fuzz/run.sh.
// Differential, against two decoders that share none of its code path:
// - Foundation's JSONSerialization (an independent implementation): whenever both accept,
//   whenever both read the input, the normalized output must read as the same value.
//   (Only that direction: Foundation is laxer than RFC 8259 — `[1,]` — and stricter on
//   numbers a Double cannot hold.)
// - JSONValue.parse (serializerd's tree parser): same verdict, same value.
// - The normalizer's portable inner loops (ByteScan): the same bytes, or the same error;
//   and the C fast path (json_fast.c): the same bytes, or invalid too.
// Also the normalizer's own promises: output no longer than the UTF-8 input, and stable
// (normalizing normalized JSON changes nothing).
@testable import Serializers
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let options = JSONReadOptions(removeNullValues: size % 5 == 0, allowFragments: true, maxDepth: 64)
    var ours: [UInt8]?
    do throws(JSONError) { ours = try JSONNormalizer.normalize(input, options: options) } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    agreesWithByteScan(input, options: options, ours)
    let tree = try? JSONValue.parse(input, options: options)
    precondition((ours == nil) == (tree == nil), "the normalizer and the tree parser disagree on \(Array(input.prefix(64)))")
    if let ours {
        // output.numbers takes the fast path's count (C) when it has one: the same as
        // NumberGuard's own (Swift, printing where it must).
        if let noted = try? JSONNormalizer.normalizeNotingNumbers(input, options: options), let known = noted.unsafeNumbers {
            precondition(known == NumberGuard.count(noted.bytes), "the fast path counted \(known) unsafe numbers, NumberGuard \(NumberGuard.count(noted.bytes))")
        }
        // NumberSafety against Double's own parse and print, for the plain short forms.
        NumberGuard.forEachNumber(ours) { range, p in
            let lexeme = UnsafeBufferPointer(rebasing: p[range])
            if NumberSafety.isSafeByShape(lexeme) { precondition(NumberSafety.isSafe(lexeme), "shape and value disagree") }
            return true
        }
        precondition(NormalizedJSON(trusted: ours).value == tree, "the normalizer and the tree parser read different values")
        precondition((try? JSONNormalizer.normalize(ours, options: options)) == ours, "normalizing normalized JSON changed it")
        // Never longer than UTF-8 input (UTF-16 input may grow: 2 bytes can be 3 in UTF-8).
        if case .utf8 = input.withUnsafeBufferPointer(JSONEncodingDetection.detect) {
            precondition(ours.count <= size, "\(size) bytes became \(ours.count)")
        }
    }

    // Compared on UTF-8 without NULs: with NULs the two detect UTF-16/32 differently (the
    // normalizer by RFC 4627's pattern of zero bytes; Foundation reads `\0\0\02};` as 2).
    // Nor with a U+FEFF anywhere: Foundation drops one that follows an escape inside a
    // string (`"\/\u{FEFF}x"` reads as "/x"); the normalizer keeps it, as JSON requires.
    guard UTF8Validation.isValid(input), !input.contains(0), !containsBOM(input), let theirsIn = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed]) else {
        return 0
    }
    // Foundation reads more than RFC 8259 (`[1,]` is [1]), so its accepting is no verdict.
    // An escaped `\uFEFF` is written as the character itself, which Foundation may then drop
    // (seen at a string's start): that output is compared with the tree parser only.
    guard let ours, !containsBOM(ours) else { return 0 }
    guard let theirsOut = try? JSONSerialization.jsonObject(with: Data(ours), options: [.fragmentsAllowed]) else {
        preconditionFailure("Foundation reads the input but not its normalized form \(String(decoding: ours.prefix(200), as: UTF8.self))")
    }
    if !options.removeNullValues {
        precondition(equal(theirsIn, theirsOut), "Foundation reads the input and the output as different values: \(String(decoding: ours.prefix(200), as: UTF8.self))")
    }
    return 0
}

/// The vector inner loops change how fast bytes are passed over, never the result: the
/// same output, or the same failure at the same offset.
func agreesWithByteScan(_ input: [UInt8], options: JSONReadOptions, _ ours: [UInt8]?) {
    let detected = input.withUnsafeBufferPointer(JSONEncodingDetection.detect)
    guard case .utf8(let bom) = detected else { return }
    let vector = Result { () throws(JSONError) in try JSONNormalizer.normalizeUTF8(input, from: bom, options: options, scan: VectorScan.self) }
    let bytewise = Result { () throws(JSONError) in try JSONNormalizer.normalizeUTF8(input, from: bom, options: options, scan: ByteScan.self) }
    switch (vector, bytewise) {
    case (.success(let a), .success(let b)):
        precondition(a == b && a == ours, "the vector and bytewise scans wrote different output")
    case (.failure(let a), .failure(let b)):
        precondition(a.description == b.description, "the vector and bytewise scans failed differently: \(a) / \(b)")
    default:
        preconditionFailure("the vector and bytewise scans disagree on \(Array(input.prefix(64)))")
    }
    // The C fast path (json_fast.c) decides valid or not on its own: it must decide as the
    // bytewise scan does, and write the same bytes.
    // Every kernel this machine runs.
    // Each with its output written, and read in place from an input with room to spare.
    var roomy = input
    roomy.reserveCapacity(input.count + 64)
    for kernel in stride(from: 1, through: options.removeNullValues ? 0 : JSONNormalizer.fastKernel, by: 1) {
        for (bytes, inPlace) in [(input, false), (roomy, true)] {
            let fast = JSONNormalizer.fastNormalizeUTF8(bytes, from: bom, options: options, kernel: kernel, inPlace: inPlace)
            precondition(fast == (try? bytewise.get()),
                         "fast path kernel \(kernel) (in place: \(inPlace)) and the bytewise scan disagree on \(Array(input.prefix(64)))")
        }
    }
    precondition(roomy == input, "the fast path changed its input")
}

/// Structural equality of Foundation JSON values (NSNumber, NSString, NSNull, arrays,
/// dictionaries).
func equal(_ a: Any, _ b: Any) -> Bool {
    switch (a, b) {
    case (let x as [Any], let y as [Any]):
        return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
    case (let x as [String: Any], let y as [String: Any]):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
    case (let x as String, let y as String): return x == y
    case (is NSNull, is NSNull): return true
    case (let x as NSNumber, let y as NSNumber): return x == y || (x.doubleValue.isNaN && y.doubleValue.isNaN)
    default: return false
    }
}

func containsBOM(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 3 else { return false }
    for i in 0..<(bytes.count - 2) where bytes[i] == 0xEF && bytes[i + 1] == 0xBB && bytes[i + 2] == 0xBF { return true }
    return false
}
