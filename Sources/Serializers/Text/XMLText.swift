/// Text escaped for XML content (and, with `quotes`, for a double-quoted attribute value).
public enum XMLText {
    public static func escaped(_ s: String, quotes: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
