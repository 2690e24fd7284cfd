import HTTPCore
// fuzz/network compiles these files into one module with the ones they use.
#if canImport(Serializers)
import Serializers
#endif

/// Applies chaos operations to an upstream's answer before the route's serializer
/// (DESIGN §3). Structural operations edit the body by pointer into the JSON the route's
/// serializer would make of it: a JSON body directly; an XML body or a property list is
/// read into that JSON, edited and written back as XML (a binary plist as an XML one).
/// An answer they cannot reach (unreadable, no such member, a pointer into a string, a
/// null a plist cannot hold) is left as it was and the operation is not reported.
public enum Chaos {
    /// What `html_200` puts in place of the body: a gateway's error page.
    public static let errorPage = Array("""
        <!DOCTYPE html>
        <html><head><title>502 Bad Gateway</title></head>
        <body><h1>502 Bad Gateway</h1><p>The server is temporarily unable to service your request.</p></body></html>

        """.utf8)

    /// The answer after `operations`, and the ones that changed it (by their applied names).
    public static func apply(_ operations: [ChaosOperation], to reply: UpstreamResponse,
                             maxDepth: Int = JSONReadOptions.defaultMaxDepth) -> (UpstreamResponse, [String]) {
        var reply = reply
        var applied: [String] = []
        var tree: JSONValue?
        var parsed = false
        var edited = false
        // Structural edits not yet written back.
        var pending: [String] = []
        var format = Format.json
        for operation in operations {
            switch operation {
            case .html200:
                // The page replaces the body: earlier edits of it are moot, later ones find HTML.
                pending = []
                tree = nil
                parsed = true
                edited = false
                reply.status = 200
                reply.body = errorPage
                setContentType("text/html; charset=utf-8", on: &reply)
                applied.append(operation.applied)
            case .contentType(let type):
                setContentType(type, on: &reply)
                applied.append(operation.applied)
            case .drop(let p), .null(let p), .string(let p), .singleton(let p):
                if !parsed {
                    parsed = true
                    format = Format(reply)
                    tree = format.read(reply.body, maxDepth: maxDepth)
                }
                guard var value = tree else { continue }
                if edit(&value, p.tokens[...], operation) {
                    tree = value
                    edited = true
                    pending.append(operation.applied)
                    applied.append(operation.applied)
                }
            }
        }
        // Reported in order as they ran; unreported again if the edit cannot be written.
        if edited, let value = tree, let bytes = format.write(value) {
            reply.body = bytes
        } else if edited {
            applied.removeAll { pending.contains($0) }
        }
        return (reply, applied)
    }

    /// The form a body's structure is read from and written back in.
    enum Format {
        case json, xml, plist

        init(_ reply: UpstreamResponse) {
            let essence = reply.mediaType?.essence ?? ""
            let head = String(decoding: reply.body.prefix(512), as: UTF8.self)
            if essence == "application/x-plist" || reply.body.starts(with: Array("bplist".utf8)) || head.contains("<plist") {
                self = .plist
            } else if essence.hasSuffix("/xml") || essence.hasSuffix("+xml") || head.hasPrefix("<?xml") {
                self = .xml
            } else {
                self = .json
            }
        }

        func read(_ body: [UInt8], maxDepth: Int) -> JSONValue? {
            switch self {
            case .json: return try? JSONValue.parse(body, options: JSONReadOptions(allowFragments: true, maxDepth: maxDepth))
            case .xml:
                guard let json = try? XMLTranscoder.transcode(body, maxDepth: maxDepth) else { return nil }
                return try? JSONValue.parse(json.bytes, options: JSONReadOptions(maxDepth: maxDepth + 1))
            case .plist:
                guard let json = try? PlistTranscoder.transcode(body, maxDepth: maxDepth) else { return nil }
                return try? JSONValue.parse(json.bytes, options: JSONReadOptions(maxDepth: maxDepth + 1))
            }
        }

        func write(_ value: JSONValue) -> [UInt8]? {
            switch self {
            case .json: return try? value.encoded()
            case .xml: return XMLChaosWriter.write(value)
            case .plist: return try? PlistXMLWriter.write(value)
            }
        }
    }

    static func setContentType(_ type: String, on reply: inout UpstreamResponse) {
        var fields = reply.headers.pairs { name in String(decoding: name, as: UTF8.self).lowercased() != "content-type" }
        fields.append(("Content-Type", type))
        reply.headers = HeaderFields(fields)
        reply.contentType = type
    }

    /// Edits the value at `tokens`; true when something changed.
    static func edit(_ value: inout JSONValue, _ tokens: ArraySlice<String>, _ operation: ChaosOperation) -> Bool {
        guard let token = tokens.first else { return change(&value, operation) }
        let last = tokens.count == 1
        let any = token == "*"
        var changed = false
        switch value {
        case .object(var members):
            var kept: [(String, JSONValue)] = []
            kept.reserveCapacity(members.count)
            for index in members.indices {
                guard any || members[index].0 == token else {
                    kept.append(members[index])
                    continue
                }
                if last, case .drop = operation {
                    changed = true
                    continue
                }
                if edit(&members[index].1, tokens.dropFirst(), operation) { changed = true }
                kept.append(members[index])
            }
            if changed { value = .object(kept) }
        case .array(var items):
            var kept: [JSONValue] = []
            kept.reserveCapacity(items.count)
            for index in items.indices {
                guard any || String(index) == token else {
                    kept.append(items[index])
                    continue
                }
                if last, case .drop = operation {
                    changed = true
                    continue
                }
                if edit(&items[index], tokens.dropFirst(), operation) { changed = true }
                kept.append(items[index])
            }
            if changed { value = .array(kept) }
        default:
            return false
        }
        return changed
    }

    static func change(_ value: inout JSONValue, _ operation: ChaosOperation) -> Bool {
        switch operation {
        case .null:
            value = .null
            return true
        case .string:
            switch value {
            case .number(let lexeme): value = .string(lexeme)
            case .bool(let flag): value = .string(flag ? "true" : "false")
            default: return false
            }
            return true
        case .singleton:
            guard case .array(let items) = value, let first = items.first else { return false }
            value = first
            return true
        case .drop:
            // The root itself: nothing is left of the document.
            return false
        case .html200, .contentType:
            return false
        }
    }
}
