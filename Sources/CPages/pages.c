// The module is header-only (static inline wrappers in include/pages.h).
