internal import CLibxml2
#if canImport(Glibc)
import Glibc
#endif

/// One start tag as libxml2's `startElementNs` reports it.
struct XMLStartTag {
    let localName: UnsafePointer<UInt8>
    let prefix: UnsafePointer<UInt8>?
    /// `nsCount` pairs of (prefix or nil, URI).
    let namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    let nsCount: Int
    /// `attributeCount` quintuples of (localname, prefix, URI, value, valueEnd).
    let attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    let attributeCount: Int

    /// From `startElementNs`'s arguments.
    @inline(__always)
    init(_ localName: UnsafePointer<UInt8>?, _ prefix: UnsafePointer<UInt8>?, _ nsCount: Int32,
         _ namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ attributeCount: Int32,
         _ attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?) {
        self.localName = localName!
        self.prefix = prefix
        self.namespaces = namespaces
        self.nsCount = Int(nsCount)
        self.attributes = attributes
        self.attributeCount = Int(attributeCount)
    }
}
