#ifndef SERIALIZERD_CPAGES_H
#define SERIALIZERD_CPAGES_H
// Anonymous page mappings for buffers that grow large: mremap moves or extends a mapping
// without copying it, and munmap returns its pages at once. (mremap is variadic in C,
// which Swift cannot call; this is its fixed-argument form.)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

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

// Opens `path` (relative, '/'-separated) for reading without ever leaving the directory
// `dirfd`: no "..", no absolute or escaping symlink, no magic link — and nothing between
// a check and the open, as the kernel resolves and opens in one step (openat2 with
// RESOLVE_BENEATH, Linux 5.6). Where the kernel lacks openat2, each component is opened
// in turn with O_NOFOLLOW, so no symlink at all is followed. O_NONBLOCK: a FIFO planted
// in the directory must not block the caller. -1 with errno on failure (EXDEV or ELOOP
// for a path that would escape).
static inline int serializerd_open_beneath(int dirfd, const char *path) {
    const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
#ifdef SYS_openat2
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    int opened = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (opened >= 0 || (errno != ENOSYS && errno != EPERM)) return opened;
#endif
    char component[256];
    int current = dirfd;
    const char *at = path;
    for (;;) {
        const char *slash = strchr(at, '/');
        size_t length = slash ? (size_t)(slash - at) : strlen(at);
        if (length == 0 || length >= sizeof component || (length <= 2 && at[0] == '.' && (length == 1 || at[1] == '.'))) {
            if (current != dirfd) close(current);
            errno = length >= sizeof component ? ENAMETOOLONG : EXDEV;
            return -1;
        }
        memcpy(component, at, length);
        component[length] = 0;
        int next = openat(current, component, slash ? (O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW) : (flags | O_NOFOLLOW));
        int saved = errno;
        if (current != dirfd) close(current);
        if (next < 0) { errno = saved; return -1; }
        if (!slash) return next;
        current = next;
        at = slash + 1;
    }
}
#endif
