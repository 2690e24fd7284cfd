/// Why bytes are not acceptable JSON, with the byte offset where it was noticed.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset into the (UTF-8) input; nil for errors about the whole value.
    public let offset: Int?
    public let line: Int?
    public let column: Int?
    public let message: String

    public init(_ message: String, offset: Int? = nil, in input: UnsafeBufferPointer<UInt8>? = nil) {
        self.message = message
        self.offset = offset
        if let offset, let input {
            var line = 1, lineStart = 0
            for i in 0..<min(offset, input.count) where input[i] == 0x0A {
                line += 1
                lineStart = i + 1
            }
            self.line = line
            self.column = offset - lineStart + 1
        } else {
            self.line = nil
            self.column = nil
        }
    }

    public var description: String {
        guard let offset else { return message }
        if let line, let column {
            return "\(message) at line \(line), column \(column) (byte \(offset))"
        }
        return "\(message) at byte \(offset)"
    }
}
