@testable import Contracts
import Serializers

extension Schema {
    /// The normalizer's check of `bytes` as a JSON route runs it (DESIGN §10): the
    /// contract's verdict on the output, whether the normalizer vouched for it, and the
    /// output, which must be what the normalizer writes without a contract. Nil where the
    /// fast path does not run (a CPU without its kernel, or bytes that are not JSON).
    func checkedWhileNormalizing(_ bytes: [UInt8], maxDepth: Int = 64) -> (valid: Bool, vouched: Bool, sameOutput: Bool)? {
        let options = JSONReadOptions(allowFragments: true, maxDepth: maxDepth)
        guard let contract = outputContract,
              let made = try? JSONNormalizer.normalize(bytes, options: options, countingNumbers: true, checking: contract) else {
            return nil
        }
        let plain = try? JSONNormalizer.normalize(bytes, options: options)
        let valid = validate(json: made.bytes, vouch: made.vouch, maxDepth: maxDepth).isEmpty
        return (valid, made.vouch != nil, plain == made.bytes)
    }
}
