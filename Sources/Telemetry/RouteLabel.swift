/// Route label values for requests no configured route served. Route names are
/// `[a-z0-9_-]+`, so these can never collide with one.
public enum RouteLabel {
    public static let unmatched = "(unmatched)"
    public static let admin = "(admin)"
}
