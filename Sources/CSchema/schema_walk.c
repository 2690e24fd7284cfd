// The contract's one-pass walk (schema_walk.h). Recursive descent over the normalized
// output: compact JSON, so any whitespace or other surprise gives up rather than guessing.
// Strings are skipped 16 bytes at a time to their closing quote; member names are found
// in the node's table by their first 8 bytes and length, the rest compared only on a hit.
#include "schema_walk.h"
#include <stdlib.h>
#include <string.h>
#include "json_string.h"

typedef struct {
    sw_program program;
    const uint8_t *base, *end;
    sw_deferrals *out;
    int depth;
} sw_run;

#define SW_FAIL NULL
#define SW_MAX_DEFERRED ((size_t)1 << 24)

int serializerd_schema_defer(sw_deferrals *out, int32_t node, size_t start, size_t length) {
    if (out->count == out->capacity) {
        if (out->capacity >= SW_MAX_DEFERRED) return 0;
        size_t capacity = out->capacity ? out->capacity * 2 : 64;
        sw_deferred *grown = realloc(out->items, capacity * sizeof *grown);
        if (!grown) return 0;
        out->items = grown;
        out->capacity = capacity;
    }
    if (length > UINT32_MAX) return 0;
    out->items[out->count++] = (sw_deferred){node, (uint32_t)length, start};
    return 1;
}

static inline int sw_defer(sw_run *r, int32_t node, const uint8_t *start, const uint8_t *stop) {
    return serializerd_schema_defer(r->out, node, (size_t)(start - r->base), (size_t)(stop - start));
}

// The entry naming the n bytes at `name` in node's table, NULL when none does: first the
// one that came after `*last` the last time (and then that is the last), else the table
// (and it becomes the one after, as serializerd_schema_learn allows).
static inline const sw_prop *sw_member(const sw_run *r, const sw_node *node, const sw_prop **last, const uint8_t *name, size_t n) {
    if (node->props < 0) return NULL;
    sw_name key = serializerd_schema_name(name, n, r->end);
    const sw_prop *guess = serializerd_schema_guess(*last);
    if (serializerd_schema_names(&r->program, guess, &key)) return *last = guess;
    const sw_prop *e = serializerd_schema_find(&r->program, node, &key);
    if (!e) return NULL;
    serializerd_schema_learn(&r->program, node, *last, e);
    return *last = e;
}

static inline const uint8_t *sw_value(sw_run *r, const uint8_t *p, int32_t id);

// Containers recurse (not inlined); scalars are read inline in their container's loop.
__attribute__((noinline)) static const uint8_t *sw_object(sw_run *r, const uint8_t *p, const sw_node *node) {
    const uint8_t *end = r->end;
    uint64_t seen = 0;
    uint32_t count = 0;
    // The node's start entry, then its last declared member's.
    const sw_prop *last = node->props >= 0 ? r->program.props + node->props - 1 : NULL;
    p++;
    if (p < end && *p == '}') goto close;
    for (;;) {
        if (p >= end || *p != '"') return SW_FAIL;
        int escaped = 0;
        const uint8_t *name = p + 1, *q = serializerd_json_string_end(name, end, &escaped);
        // An escaped name could equal a declared one once decoded.
        if (!q || escaped) return SW_FAIL;
        size_t n = (size_t)(q - name);
        p = q + 1;
        if (p >= end || *p != ':') return SW_FAIL;
        p++;
        int32_t child = node->additional;
        const sw_prop *e = sw_member(r, node, &last, name, n);
        if (e) {
            child = e->child.node;
            seen |= 1ull << e->bit;
        } else if (node->props >= 0) {
            // Names compare by canonical equivalence (U+212A KELVIN SIGN is `K`): where a
            // declared name or this one is not ASCII, the tree decides.
            if (node->flags & SW_WIDE_NAMES) return SW_FAIL;
            for (size_t k = 0; k < n; k++) if (name[k] >= 0x80) return SW_FAIL;
        }
        p = sw_value(r, p, child);
        if (!p) return SW_FAIL;
        count++;
        if (p >= end) return SW_FAIL;
        if (*p == ',') { p++; continue; }
        if (*p == '}') break;
        return SW_FAIL;
    }
close:
    if ((seen & node->required) != node->required || count < node->min_props || count > node->max_props) return SW_FAIL;
    return p + 1;
}

__attribute__((noinline)) static const uint8_t *sw_array(sw_run *r, const uint8_t *p, const sw_node *node) {
    const uint8_t *end = r->end;
    uint32_t count = 0;
    p++;
    if (p < end && *p == ']') goto close;
    for (;;) {
        p = sw_value(r, p, node->items);
        if (!p) return SW_FAIL;
        if (count < UINT32_MAX) count++;
        if (p >= end) return SW_FAIL;
        if (*p == ',') { p++; continue; }
        if (*p == ']') break;
        return SW_FAIL;
    }
close:
    if (count < node->min_items || count > node->max_items) return SW_FAIL;
    return p + 1;
}

static inline const uint8_t *sw_literal(const uint8_t *p, const uint8_t *end, const char *word, size_t n) {
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : SW_FAIL;
}

static inline __attribute__((always_inline)) const uint8_t *sw_value(sw_run *r, const uint8_t *p, int32_t id) {
    const sw_node *node = r->program.nodes + id;
    const uint8_t *end = r->end, *start = p, *q;
    if (p >= end) return SW_FAIL;
    if (node->dispatch >= 0) {
        // The one branch that allows this kind; the others fail on `type` (a branch is
        // never itself a dispatch, so this is one step).
        id = r->program.branches[node->dispatch + serializerd_schema_kind(*p)];
        if (id < 0) return SW_FAIL;
        node = r->program.nodes + id;
    }
    uint32_t flags = node->flags;
    if (flags & SW_GIVE_UP) return SW_FAIL;
    switch (*p) {
    case '{':
    case '[':
        if ((flags & SW_DEFER_SCALAR) || r->depth >= SERIALIZERD_SCHEMA_WALK_DEPTH) return SW_FAIL;
        if (!(node->types & (*p == '{' ? SW_OBJECT : SW_ARRAY))) return SW_FAIL;
        r->depth++;
        q = *p == '{' ? sw_object(r, p, node) : sw_array(r, p, node);
        r->depth--;
        return q;
    case '"': {
        if (!(node->types & SW_STRING)) return SW_FAIL;
        int escaped = 0;
        q = serializerd_json_string_end(p + 1, end, &escaped);
        if (!q) return SW_FAIL;
        size_t n = (size_t)(q - p - 1);
        q++;
        // A code point is 1 to 4 bytes, or up to 12 as escapes: the byte count decides
        // most lengths; the rest are the full validator's.
        int lengths_decided = n <= node->max_length &&
            (node->min_length == 0 || n / (escaped ? 12 : 4) >= node->min_length);
        if ((flags & (SW_DEFER_STRING | SW_DEFER_SCALAR)) || !lengths_decided) {
            if (!sw_defer(r, id, start, q)) return SW_FAIL;
        }
        return q;
    }
    case 't':
        if (!(node->types & SW_BOOLEAN)) return SW_FAIL;
        q = sw_literal(p, end, "true", 4);
        break;
    case 'f':
        if (!(node->types & SW_BOOLEAN)) return SW_FAIL;
        q = sw_literal(p, end, "false", 5);
        break;
    case 'n':
        if (!(node->types & SW_NULL)) return SW_FAIL;
        q = sw_literal(p, end, "null", 4);
        break;
    default: {
        uint32_t kind = SW_INTEGER;
        q = p;
        if (q < end && *q == '-') q++;
        if (q >= end || (unsigned)(*q - '0') > 9) return SW_FAIL;
        while (q < end) {
            uint8_t c = *q;
            if ((unsigned)(c - '0') <= 9 || c == '+' || c == '-') q++;
            else if (c == '.' || c == 'e' || c == 'E') { kind = SW_NUMBER; q++; }
            else break;
        }
        if (!(node->types & kind)) return SW_FAIL;
        if ((flags & (SW_DEFER_NUMBER | SW_DEFER_SCALAR)) && !sw_defer(r, id, start, q)) return SW_FAIL;
        return q;
    }
    }
    if (q && (flags & SW_DEFER_SCALAR) && !sw_defer(r, id, start, q)) return SW_FAIL;
    return q;
}

int serializerd_schema_walk(const sw_program *program, int32_t root, const uint8_t *bytes, size_t n,
                            sw_deferrals *out) {
    sw_run r = {*program, bytes, bytes + n, out, 0};
    const uint8_t *p = sw_value(&r, bytes, root);
    return p == bytes + n;
}
