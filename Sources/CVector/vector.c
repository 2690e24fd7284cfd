// The module is header-only (static inline operations in include/vector.h).
