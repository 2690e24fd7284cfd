/// Spare capacity a body is allocated with past its bytes: the JSON fast path reads up to
/// this far beyond the input, so with it an already normalized body is its own output
/// (no copy). One figure for every allocator of bodies and for the check that needs it.
public enum BodyRoom {
    public static let bytes = 64
}
