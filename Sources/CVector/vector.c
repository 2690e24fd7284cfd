// The module is header-only: static inline operations in include/vector.h and the JSON
// normalizer's fast path in include/json_fast.h.
