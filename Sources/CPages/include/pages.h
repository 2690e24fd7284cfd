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
#include <unistd.h>

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

// Page-cache copies between files (a tape's new file starts as a copy of the old one):
// glibc declares copy_file_range only under _GNU_SOURCE, which Swift's Glibc lacks.
static inline ssize_t serializerd_copy_file_range(int in, long long *in_off, int out, long long *out_off, size_t len) {
    off_t i = (off_t)*in_off, o = (off_t)*out_off;
    ssize_t n = copy_file_range(in, &i, out, &o, len, 0);
    *in_off = (long long)i;
    *out_off = (long long)o;
    return n;
}
#endif
