/// The one place the product version is written; `--version`, `/-/health` and
/// `serializerd_build_info` all read it.
public enum ServerVersion {
    public static let string = "0.1.0"
}
