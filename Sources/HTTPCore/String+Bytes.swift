extension String {
    /// The text before the first `byte` (all of it when there is none), searched in the
    /// contiguous UTF-8 rather than index by index.
    public func prefix(upToByte byte: UInt8) -> String {
        var text = self
        return text.withUTF8 { bytes in
            bytes.firstIndex(of: byte).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[..<$0]), as: UTF8.self) }
        } ?? self
    }
}
