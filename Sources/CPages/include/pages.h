#ifndef SERIALIZERD_CPAGES_H
#define SERIALIZERD_CPAGES_H
// Anonymous page mappings for buffers that grow large: mremap moves or extends a mapping
// without copying it, and munmap returns its pages at once. (mremap is variadic in C,
// which Swift cannot call; this is its fixed-argument form.)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <sys/mman.h>

static inline void *serializerd_map(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static inline void *serializerd_remap(void *p, size_t old_bytes, size_t new_bytes) {
    void *q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
    return q == MAP_FAILED ? NULL : q;
}

static inline void serializerd_unmap(void *p, size_t bytes) { munmap(p, bytes); }

// A hint that `p` is written soon: a table probe's cache miss overlaps other work
// (Swift has no prefetch of its own).
static inline void serializerd_prefetch(const void *p) { __builtin_prefetch(p, 1, 3); }
#endif
