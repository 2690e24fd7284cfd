/// `*` matches within one path segment, `**` across segments, anything else itself. The
/// set of text positions each pattern step can reach, one pass a step: linear in the path
/// for any pattern (backtracking would be exponential in the number of stars).
enum Glob {
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        let text = Array(text), n = text.count
        var reach = [Bool](repeating: false, count: n + 1)
        reach[0] = true
        var p = pattern.startIndex
        while p < pattern.endIndex {
            var next = [Bool](repeating: false, count: n + 1)
            if pattern[p] == UInt8(ascii: "*") {
                let double = p + 1 < pattern.endIndex && pattern[p + 1] == UInt8(ascii: "*")
                var carry = false
                for i in 0...n {
                    if reach[i] { carry = true }
                    next[i] = carry
                    if i < n && !double && text[i] == UInt8(ascii: "/") { carry = false }
                }
                p += double ? 2 : 1
            } else {
                for i in 0..<n where reach[i] && text[i] == pattern[p] { next[i + 1] = true }
                p += 1
            }
            reach = next
        }
        return reach[n]
    }
}
