#ifndef SERIALIZERD_SCHEMA_WALK_H
#define SERIALIZERD_SCHEMA_WALK_H
// A contract's common keywords checked on the normalized output's bytes in one pass, with
// no tree (DESIGN §10): `type`, `properties`, `required`, `additionalProperties`, `items`,
// lengths and counts, and an `anyOf` or `oneOf` whose branches allow different kinds of
// value (`{"$ref": …}` or null, the nullable idiom of OpenAPI 3.1). The Swift side lowers a compiled schema into the tables below; a
// keyword they cannot express makes its node one the walk gives up at. The walk only ever
// says "valid" or "ask the full validator": any doubt (a violation, an escaped member
// name, a keyword it does not run) is the latter, so it never decides a violation itself.
// Leaf keywords it does not run (pattern, format, enum, const, numeric bounds) are listed
// as deferred values for the full validator's checks on that value alone.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// Kinds of value a node allows (`type`); a number with a fraction or exponent is
// SW_NUMBER even when its value is an integer (the full validator then decides).
enum {
    SW_NULL = 1, SW_BOOLEAN = 2, SW_OBJECT = 4, SW_ARRAY = 8, SW_NUMBER = 16, SW_INTEGER = 32, SW_STRING = 64,
    SW_ANY_TYPE = 127
};

// Node flags.
enum {
    SW_GIVE_UP = 1,          // a keyword the walk does not run (or the `false` schema)
    SW_DEFER_STRING = 2,     // strings here have leaf checks the full validator runs
    SW_DEFER_NUMBER = 4,     // numbers likewise
    SW_DEFER_SCALAR = 8,     // every scalar (enum, const); an object or array here gives up
    SW_WIDE_NAMES = 16,      // a declared name is not ASCII: an unmatched name gives up
    SW_ESCAPED_NAMES = 32,   // a declared name has a backslash, which a raw name could match
                             // unescaped, or a quote: the normalizer's check gives up at its
                             // members
    SW_COUNTED = 64,         // minProperties or maxProperties: the normalizer's check takes
                             // each member off its quick path, where it is counted
};

// Node 0 allows anything; node 1 always gives up.
enum { SW_NODE_ANY = 0, SW_NODE_GIVE_UP = 1 };

typedef struct {
    uint32_t types;
    uint32_t flags;
    uint64_t required;       // the bits of the required members' entries (never SW_UNREQUIRED)
    int32_t props;           // the node's first member entry, -1 with none (its start
                             // entry is the one before)
    int32_t slots;           // its first slot in the slot table, the names' hash table
    int32_t other;           // a node that allows objects: the entry of its undeclared members
                             // (a head no name matches, `additional` as its child), else 0
    uint32_t mask;           // its slots - 1 (a power of two)
    int32_t additional;      // the node for members no slot names
    int32_t items;           // the node for array items
    int32_t dispatch;        // an `anyOf`/`oneOf` whose branches allow kinds apart: its first
                             // entry in the branch table (SW_KINDS, by sw_kind), else -1
    uint32_t min_length, max_length;   // code points
    uint32_t min_items, max_items, min_props, max_props;
    uint32_t quick;          // the kinds (SW_NULL…) a value meets here with nothing more to
                             // check than a string's byte count against max_length
} sw_node;

// What a value in one place must meet: its node, and the cases the normalizer's check
// decides inline there (the node's `quick` kinds; a string of fewer bytes than `strings`).
typedef struct {
    int32_t node;
    uint32_t quick;
    uint32_t strings;        // max_length + 1 where strings are quick, else 0
} sw_check;

static inline sw_check serializerd_schema_check(const sw_node *nodes, int32_t id) {
    const sw_node *node = nodes + id;
    uint32_t strings = node->quick & SW_STRING ? (node->max_length == UINT32_MAX ? UINT32_MAX : node->max_length + 1) : 0;
    return (sw_check){id, node->quick, strings};
}

// A member entry: a declared or required name. A node's entries are in the order the
// schema declares them, after a start entry (one whose head no name matches); entry 0 is
// one that never names anything either, with `next` 0 and a child that allows anything.
// One cache line each: the entries are allocated 64-byte aligned. In the normalizer's
// check, what a value must meet is always some entry's `child`, so the entry of the last
// member is known from it.
typedef struct {
    uint8_t head[32];        // the name and a quote after it, zero padded; a name of 32
                             // bytes or more has its first 31 and a zero, which no name's
                             // 32nd byte is (JSON strings hold no raw controls)
    uint32_t care;           // the bits of `head` a name matches when it is this one: its
                             // bytes and the quote (all 32 for a name of 31 bytes or more)
    uint32_t name;           // offset of the name's bytes in the names block, which has
                             // each name's length (4 bytes) before it
    const sw_check *next;    // the child of the declared member that came after this one
                             // when last seen (at first, the next one declared): a pointer,
                             // not an offset, so that following it is one load; read and
                             // written relaxed, by any thread, and always checked
    sw_check child;          // what its value must meet (the owner's `additional` for a
                             // name only `required` lists)
    uint8_t bit;             // its bit in the owner's `required`, SW_UNREQUIRED when none
    uint8_t reserved[3];
} sw_prop;
_Static_assert(sizeof(sw_prop) == 64, "a member entry is one cache line");

// The bit a member that is not required sets among the members seen (never required).
#define SW_UNREQUIRED 63

// The `care` of a name of n bytes.
static inline uint32_t serializerd_schema_care(size_t n) {
    return n < 31 ? (uint32_t)((2ull << n) - 1) : UINT32_MAX;
}

// A container's state in the normalizer's check (json_fast.c), as it opens: each node's,
// as an object and as an array, is made once, so opening one is a copy.
typedef struct {
    const sw_check *first;   // as an object opens, what stands for its last member: the
                             // child of the node's start entry (of entry 0 where names need
                             // escapes, of `other` without members), so that the first
                             // member is guessed as the one after it
    const sw_check *parent;  // the check current in this container as a child of it opened
    uint64_t required;       // the node's (none for an array)
    int32_t node;
    uint32_t count;          // items so far, or members where the node counts them
    uint32_t min, span;      // the count it must have: min to min + span (min_items and
                             // max_items for an array; none when max < min: UINT32_MAX, 0)
    sw_check items;
    uint32_t array;          // 1 for an array's
    uint64_t seen;           // while a container in it is open, the bits of the members met
                             // so far (the walk keeps them in a register)
} sw_frame;
_Static_assert(sizeof(sw_frame) == 64, "a container's state is a cache line");

// The kinds a branch table tells apart: null, boolean, object, array, number, string.
#define SW_KINDS 6

typedef struct {
    const sw_node *nodes;
    const sw_prop *props;
    const int32_t *slots;        // per node with members, its hash table of their entries
                                 // (-1: empty)
    const uint8_t *names;        // 32 readable bytes past the last name
    const int32_t *branches;     // per dispatching node, SW_KINDS nodes (-1: no branch)
    const sw_frame *frames;      // per node, its containers' state as they open: as an
                                 // object, then as an array
} sw_program;

// A value whose leaf keywords the full validator checks: its node and bytes.
typedef struct {
    int32_t node;
    uint32_t length;
    size_t start;
} sw_deferred;

// Grown by the walk with realloc; the caller frees `items`.
typedef struct {
    sw_deferred *items;
    size_t count, capacity;
} sw_deferrals;

// The slot a name hashes to first in a table of mask + 1 slots (Swift builds the tables
// with the same function). Names often share their first 8 bytes (`profile_…`), so the
// last 8 and the length are mixed in, and every input bit reaches the low bits.
static inline uint32_t serializerd_schema_slot(uint64_t prefix, uint64_t suffix, uint32_t length, uint32_t mask) {
    uint64_t h = prefix * 0x9E3779B97F4A7C15ull ^ suffix * 0xC2B2AE3D27D4EB4Full ^ length;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (uint32_t)h & mask;
}

// A value's kind by its first byte, as the branch tables list them.
static inline int serializerd_schema_kind(uint8_t c) {
    switch (c) {
    case 'n': return 0;
    case 't': case 'f': return 1;
    case '{': return 2;
    case '[': return 3;
    case '"': return 5;
    default: return 4;
    }
}

// A member name as the tables compare it: its first 8 bytes (zero padded), its last 8
// when it has more than 8, its first 8 as an entry's `head` holds them (where a name of
// under 8 bytes has its quote), and its `care`.
typedef struct {
    const uint8_t *name;
    size_t n;
    uint64_t prefix, suffix, head;
    uint32_t care;
} sw_name;

// The name of the n bytes at `name`; `end` bounds what may be read past it.
static inline sw_name serializerd_schema_name(const uint8_t *name, size_t n, const uint8_t *end) {
    sw_name key = {name, n, 0, 0, 0, serializerd_schema_care(n)};
    if (end - name >= 8) {
        memcpy(&key.prefix, name, 8);
        if (n < 8) key.prefix &= (n ? ~0ull >> (64 - 8 * n) : 0);
    } else {
        memcpy(&key.prefix, name, n < 8 ? n : 8);
    }
    if (n > 8) memcpy(&key.suffix, name + n - 8, 8);
    key.head = n < 8 ? key.prefix | (uint64_t)'"' << (8 * n) : key.prefix;
    return key;
}

// Whether entry e names `key`: names of up to 16 bytes are decided by their first and
// last 8, compared with the entry's `head`.
static inline int serializerd_schema_names(const sw_program *program, const sw_prop *e, const sw_name *key) {
    size_t n = key->n;
    if (e->care != key->care) return 0;
    if (n >= 31) {
        // (Entries that name nothing have `care` all set, and a head that is all zeros.)
        if (e->head[0] == 0) return 0;
        uint32_t length;
        memcpy(&length, program->names + e->name - 4, 4);
        if (length != n) return 0;
    }
    uint64_t first, last = 0;
    memcpy(&first, e->head, 8);
    // A name of up to 30 bytes has its last 8 in `head`.
    if (n > 8) memcpy(&last, n < 31 ? e->head + n - 8 : program->names + e->name + n - 8, 8);
    return first == key->head && last == key->suffix && (n <= 16 || memcmp(program->names + e->name + 8, key->name + 8, n - 16) == 0);
}

// The entry naming `key` in node's table, NULL when none does.
static inline const sw_prop *serializerd_schema_find(const sw_program *program, const sw_node *node, const sw_name *key) {
    if (node->props < 0 || key->n >= UINT32_MAX) return NULL;
    const int32_t *slots = program->slots + node->slots;
    for (uint32_t slot = serializerd_schema_slot(key->prefix, key->suffix, (uint32_t)key->n, node->mask);; slot = (slot + 1) & node->mask) {
        if (slots[slot] < 0) return NULL;
        const sw_prop *e = program->props + slots[slot];
        if (serializerd_schema_names(program, e, key)) return e;
    }
}

// The entry whose child `check` is.
static inline const sw_prop *serializerd_schema_entry(const sw_check *check) {
    return (const sw_prop *)((const char *)check - offsetof(sw_prop, child));
}

// The entry of the member likely after `last`'s (sw_prop's `next`).
static inline const sw_prop *serializerd_schema_guess(const sw_prop *last) {
    return serializerd_schema_entry(__atomic_load_n(&last->next, __ATOMIC_RELAXED));
}

// Makes `e` the member guessed after `last` in node's objects; except after entry 0
// (which stands in for nodes that never guess) and in a node that counts its members
// (the normalizer's check takes each one off its quick path there).
static inline void serializerd_schema_learn(const sw_program *program, const sw_node *node, const sw_prop *last,
                                            const sw_prop *e) {
    if (last != program->props && !(node->flags & SW_COUNTED))
        __atomic_store_n((const sw_check **)&last->next, &e->child, __ATOMIC_RELAXED);
}

// Appends a deferred value (node, its `length` bytes at `start`); 0 when the list is full
// (16 M values) or memory is not to be had: the full validator then decides.
int serializerd_schema_defer(sw_deferrals *out, int32_t node, size_t start, size_t length);

// Deepest nesting the walk follows; deeper gives up.
#define SERIALIZERD_SCHEMA_WALK_DEPTH 256

// 1 when the n bytes at `bytes`, one JSON value, meet node `root` as far as the program
// checks (the values in `out` still to be checked); 0 when the full validator must decide.
int serializerd_schema_walk(const sw_program *program, int32_t root, const uint8_t *bytes, size_t n,
                            sw_deferrals *out);

#endif
