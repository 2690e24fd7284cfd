/*
 * How fast can any XML → JSON builder on libxml2's SAX2 be? The parser, input reading and
 * options the XML transcoder uses, driven twice per round over the same bytes: once with callbacks
 * that do nothing (libxml2's own time), once with a minimal builder in C that does the
 * common part of serializerd's work — a key per element from a pointer-keyed name cache,
 * attributes as "@name":"value" with escaping, text collected and trimmed, leaves as
 * strings or null, same-named siblings as arrays. No regrouping, forced arrays, limits or
 * errors: whatever it costs over the no-op pass is a floor for the real builder.
 *
 *   xml_floor FILE [ROUNDS]      prints both medians (MB/s) and their time ratio
 *
 * Built by `make bench-xml-floor`; BENCHMARKS.md has its figures.
 */
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { uint8_t *b; size_t n, cap; } buffer;

static void reserve(buffer *o, size_t k) {
    if (o->n + k <= o->cap) return;
    o->cap = o->cap * 2 > o->n + k ? o->cap * 2 : o->n + k;
    if (!(o->b = realloc(o->b, o->cap))) abort();
}

typedef struct { const void *prefix, *local; int attribute, id; } slot;
typedef struct { size_t textStart; int lastName; uint8_t opened, runOpen; } frame;
enum { MAX_DEPTH = 256, MAX_NAMES = 1024, KEY_MAX = 256 };
typedef struct {
    buffer out, text;
    frame frames[MAX_DEPTH + 2];
    int depth;
    slot cache[256];
    uint8_t keys[MAX_NAMES][KEY_MAX];
    int keyLength[MAX_NAMES], names;
} builder;

static int name_id(builder *s, const xmlChar *prefix, const xmlChar *local, int attribute) {
    uint64_t mixed = ((uint64_t)(uintptr_t)local ^ ((uint64_t)(uintptr_t)prefix * 31) ^ (uint64_t)attribute) * 0x9E3779B97F4A7C15ull;
    slot *c = &s->cache[mixed >> 56];
    if (c->local == local && c->prefix == prefix && c->attribute == attribute) return c->id;
    if (s->names == MAX_NAMES) abort();
    int id = s->names++, n = 0;
    uint8_t *k = s->keys[id];
    size_t p = prefix ? strlen((const char *)prefix) : 0, l = strlen((const char *)local);
    if (p + l + 4 > KEY_MAX) abort();
    k[n++] = '"';
    if (attribute) k[n++] = '@';
    if (prefix) { memcpy(k + n, prefix, p); n += (int)p; k[n++] = ':'; }
    memcpy(k + n, local, l);
    n += (int)l;
    k[n++] = '"';
    s->keyLength[id] = n;
    *c = (slot){ prefix, local, attribute, id };
    return id;
}

static size_t write_quoted(uint8_t *o, const uint8_t *p, size_t n) {
    size_t w = 0;
    o[w++] = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c < 0x20 || c == '"' || c == '\\') {
            o[w++] = '\\';
            o[w++] = c == '\n' ? 'n' : c == '\t' ? 't' : c;
        } else {
            o[w++] = c;
        }
    }
    o[w++] = '"';
    return w;
}

static void put_key(builder *s, buffer *o, int id, uint8_t separator) {
    o->b[o->n++] = separator;
    memcpy(o->b + o->n, s->keys[id], (size_t)s->keyLength[id]);
    o->n += (size_t)s->keyLength[id];
    o->b[o->n++] = ':';
}

static void start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri, int nsCount,
                  const xmlChar **ns, int attributeCount, int defaulted, const xmlChar **attributes) {
    (void)uri; (void)nsCount; (void)ns; (void)defaulted;
    builder *s = ctx;
    if (s->depth == MAX_DEPTH) abort();
    frame *parent = &s->frames[s->depth];
    buffer *o = &s->out;
    int id = name_id(s, prefix, local, 0);
    reserve(o, KEY_MAX + 4);
    if (id == parent->lastName) {
        parent->runOpen = 1;   // the real builder inserts a '[' before the first value here
        o->b[o->n++] = ',';
    } else {
        if (parent->runOpen) o->b[o->n++] = ']';
        put_key(s, o, id, parent->opened ? ',' : '{');
        parent->opened = 1;
        parent->lastName = id;
        parent->runOpen = 0;
    }
    frame *f = &s->frames[++s->depth];
    *f = (frame){ s->text.n, -1, 0, 0 };
    for (int k = 0; k < attributeCount; k++) {
        const xmlChar **a = attributes + 5 * k;
        size_t length = (size_t)(a[4] - a[3]);
        reserve(o, KEY_MAX + 6 * length + 4);
        put_key(s, o, name_id(s, a[1], a[0], 1), f->opened ? ',' : '{');
        o->n += write_quoted(o->b + o->n, a[3], length);
        f->opened = 1;
    }
}

static int is_space(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

static void characters(void *ctx, const xmlChar *text, int length) {
    builder *s = ctx;
    if (s->text.n == s->frames[s->depth].textStart) {
        int k = 0;
        while (k < length && is_space(text[k])) k++;
        if (k == length) return;
    }
    reserve(&s->text, (size_t)length);
    memcpy(s->text.b + s->text.n, text, (size_t)length);
    s->text.n += (size_t)length;
}

static void end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri) {
    (void)local; (void)prefix; (void)uri;
    builder *s = ctx;
    frame *f = &s->frames[s->depth--];
    buffer *o = &s->out;
    size_t low = f->textStart, high = s->text.n;
    while (low < high && is_space(s->text.b[low])) low++;
    while (high > low && is_space(s->text.b[high - 1])) high--;
    reserve(o, 6 * (high - low) + 16);
    if (!f->opened) {
        if (low == high) { memcpy(o->b + o->n, "null", 4); o->n += 4; }
        else o->n += write_quoted(o->b + o->n, s->text.b + low, high - low);
    } else {
        if (f->runOpen) o->b[o->n++] = ']';
        if (low < high) {
            memcpy(o->b + o->n, ",\"#text\":", 9);
            o->n += 9;
            o->n += write_quoted(o->b + o->n, s->text.b + low, high - low);
        }
        o->b[o->n++] = '}';
    }
    s->text.n = f->textStart;
}

static void no_start(void *c, const xmlChar *l, const xmlChar *p, const xmlChar *u, int nn, const xmlChar **ns,
                     int na, int nd, const xmlChar **a) { (void)c; (void)l; (void)p; (void)u; (void)nn; (void)ns; (void)na; (void)nd; (void)a; }
static void no_end(void *c, const xmlChar *l, const xmlChar *p, const xmlChar *u) { (void)c; (void)l; (void)p; (void)u; }
static void no_characters(void *c, const xmlChar *t, int n) { (void)c; (void)t; (void)n; }
static xmlEntityPtr predefined(void *c, const xmlChar *name) { (void)c; return xmlGetPredefinedEntity(name); }

/* The body as libxml2's input, read a few KiB at a time, as the transcoder feeds it. */
typedef struct { const char *next; long left; } source;

static int read_source(void *context, char *buffer, int length) {
    source *s = context;
    int n = s->left < length ? (int)s->left : length;
    memcpy(buffer, s->next, (size_t)n);
    s->next += n;
    s->left -= n;
    return n;
}

/* One parse; returns the JSON's length (0 for the no-op pass), or -1 if not well-formed. */
static long parse(const char *bytes, int length, int build) {
    builder *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->out.cap = (size_t)length;
    s->text.cap = 4096;
    if (!(s->out.b = malloc(s->out.cap)) || !(s->text.b = malloc(s->text.cap))) abort();
    s->frames[0].lastName = -1;
    xmlSAXHandler h;
    memset(&h, 0, sizeof h);
    h.initialized = XML_SAX2_MAGIC;
    h.getEntity = predefined;
    h.startElementNs = build ? start : no_start;
    h.endElementNs = build ? end : no_end;
    h.characters = h.cdataBlock = build ? characters : no_characters;
    source input = { bytes, length };
    xmlParserCtxtPtr ctxt = xmlCreateIOParserCtxt(&h, s, read_source, NULL, &input, XML_CHAR_ENCODING_NONE);
    if (!ctxt) abort();
    xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOENT | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_IGNORE_ENC);
    xmlParseDocument(ctxt);
    long result = ctxt->wellFormed ? (long)s->out.n : -1;
    xmlFreeParserCtxt(ctxt);
    free(s->out.b);
    free(s->text.b);
    free(s);
    return result;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: xml_floor FILE [ROUNDS]\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = malloc((size_t)n + 1);
    if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n || n > 0x7fffffff) { fprintf(stderr, "cannot read %s\n", argv[1]); return 1; }
    fclose(f);
    int rounds = argc > 2 ? atoi(argv[2]) : 21;
    if (rounds < 1 || rounds > 1000) rounds = 21;
    xmlInitParser();
    double *times[2] = { calloc((size_t)rounds, sizeof(double)), calloc((size_t)rounds, sizeof(double)) };
    long json = 0;
    for (int r = 0; r < rounds; r++) {
        for (int build = 0; build < 2; build++) {   // interleaved: host noise hits both alike
            double t0 = now();
            long result = parse(bytes, (int)n, build);
            times[build][r] = now() - t0;
            if (result < 0) { fprintf(stderr, "%s is not well-formed\n", argv[1]); return 1; }
            if (build) json = result;
        }
    }
    qsort(times[0], (size_t)rounds, sizeof(double), by_value);
    qsort(times[1], (size_t)rounds, sizeof(double), by_value);
    double none = times[0][rounds / 2], built = times[1][rounds / 2];
    printf("libxml2 alone %.1f MB/s, with a minimal C builder %.1f MB/s (%ld bytes of JSON): %.3f x the time\n",
           (double)n / none / 1e6, (double)n / built / 1e6, json, built / none);
    return 0;
}
