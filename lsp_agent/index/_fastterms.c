/* Native chunk_terms() and identifier_counts() for lsp_agent.index.tokens (same results, byte for byte).
 *
 * The Python versions in tokens.py are the reference. For one text:
 *   1. scan it for identifiers ([A-Za-z_][A-Za-z0-9_]*, ASCII only, so every other code point is a separator),
 *      classifying 64 characters at a time into bitmasks, reading the str in place whatever its kind;
 *   2. tally each distinct identifier and its count in a small per-call table (first-seen order);
 *   3. for each distinct identifier, look up its terms and its own hash in a per-process cache (filled once per
 *      identifier: _ft_words.c splits it natively, asks the Python normalize_word() given to configure() once
 *      per distinct word part and the Python term_hash() given there once per distinct term) and add them,
 *      times its count, to a per-call term counter (first-seen order);
 *   4. write the packed int64 values `term << 16 | min(count, 0xFFFF)` straight into a bytes object.
 *
 * The GIL is held throughout, but a Python callable may let another thread run and use the cache, so nothing
 * from the cache is kept across a call into Python: a lookup's result is used before the next lookup.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_ft_mem.h"
#include "_ft_words.h"

/* SSE2 (every x86-64 CPU) classifies 16 characters at a time; elsewhere the scanner goes one by one.
 * -DFT_PORTABLE compiles the portable scanner on x86-64 too (tests/index/test_fastterms_portable.py). */
#if defined(__SSE2__) && !defined(FT_PORTABLE) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define HAVE_SSE2 1
#define SCANNER "sse2"
#else
#define SCANNER "portable"
#endif

#define COUNT_MASK 0xFFFF
#define COUNT_BITS 16
#define TERM_LIMIT ((int64_t)1 << 47) /* a term t needs -2^47 <= t < 2^47 for t << 16 to fit an int64 */
#define CACHE_MAX_ENTRIES (1 << 20)   /* the identifier cache is emptied when it grows past this */
#define CACHE_MIN_SLOTS 1024
#define COUNTER_MIN_SLOTS 64
#define TALLY_MIN_SLOTS 32
#define LOOKAHEAD 4 /* cache records are asked for this many identifiers before they are read */

/* ------------------------------------------------------------------------------------------------------ */
/* Character classes of the identifier regex by code point below 256 (code points from 128 up are separators). */

enum { CH_OTHER = 0, CH_DIGIT = 1, CH_START = 2 };

static unsigned char char_class[256];

static void init_char_class(void)
{
    for (int c = 0; c < 256; c++) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
            char_class[c] = CH_START;
        else if (c >= '0' && c <= '9')
            char_class[c] = CH_DIGIT;
        else
            char_class[c] = CH_OTHER;
    }
}

static inline int class_of(Py_UCS4 c)
{
    return c < 256 ? char_class[c] : CH_OTHER;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Hashing and comparing identifier bytes. */

/* Unaligned loads of 4 and 8 bytes. */
static inline uint64_t load32(const char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

static inline uint64_t load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* A 64-bit hash of n bytes. Overlapping loads cover every byte without a byte loop or reading past the end:
 * whole words then the last 8 bytes; or the first and last 4; or bytes 0, n/2 and n-1 when n < 4. */
static inline uint64_t key_hash(const char *s, size_t n)
{
    uint64_t h = n * 0x9e3779b97f4a7c15ULL;
    if (n >= 8) {
        for (; n > 8; s += 8, n -= 8) {
            h = (h ^ load64(s)) * 0x9e3779b97f4a7c15ULL;
            h ^= h >> 32;
        }
        h ^= load64(s + n - 8);
    }
    else if (n >= 4)
        h ^= load32(s) << 32 | load32(s + n - 4);
    else if (n > 0)
        h ^= (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[n >> 1] << 8 | (unsigned char)s[n - 1];
    /* a multiply carries every bit upwards; folding the top half back spreads them over the low (slot) bits */
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

/* Whether n bytes are equal, with the same overlapping loads as key_hash(). */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        for (; n > 8; a += 8, b += 8, n -= 8) {
            if (load64(a) != load64(b))
                return 0;
        }
        return load64(a + n - 8) == load64(b + n - 8);
    }
    if (n >= 4)
        return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
    return n == 0 || (a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1]);
}

/* A hint to start loading the cache line at p (no effect where the compiler has no such builtin). */
static inline void prefetch(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* ------------------------------------------------------------------------------------------------------ */
/* Converting Python ints. */

/* A term hash from a Python int; OverflowError (as array('q') raises) when t << 16 would not fit an int64. */
static int term_from_object(PyObject *obj, int64_t *out)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow); /* the digit loop: quicker than AsLongLong */
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < -TERM_LIMIT || v >= TERM_LIMIT) {
        PyErr_SetString(PyExc_OverflowError, "term hash too large to pack as term << 16 | count in an int64");
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* ------------------------------------------------------------------------------------------------------ */
/* The per-process identifier cache: identifier bytes -> its terms and its own term hash, both computed at first
 * sight and never changed. Each identifier is one record in a shared buffer (header, terms, then its bytes, so
 * a lookup touches one place); an open-addressing index (linear probing) of 8-byte slots finds it. */

typedef struct {
    uint64_t hash;      /* key_hash() of the identifier's bytes */
    int64_t ident_hash; /* term_hash(identifier) */
    uint32_t len;       /* byte length of the identifier */
    uint32_t n_terms;   /* number of identifier_terms() */
    /* followed by n_terms int64 terms, then the len bytes padded to 8 */
} IdentRecord;

#define RECORD_WORDS(n_terms, len) ((sizeof(IdentRecord) + 7) / 8 + (n_terms) + ((len) + 7) / 8)
#define SLOT_TAG(hash) ((hash) & 0xFFFFFFFF00000000ULL) /* a slot: the hash's top half | record offset + 1 */
#define SLOT_OFFSET(slot) ((size_t)((slot) & 0xFFFFFFFFULL) - 1)

static inline const int64_t *record_terms(const IdentRecord *r)
{
    return (const int64_t *)(r + 1);
}

static inline const char *record_key(const IdentRecord *r)
{
    return (const char *)(record_terms(r) + r->n_terms);
}

static struct {
    uint64_t *slots;  /* 0 marks an empty slot */
    size_t mask;      /* slot count - 1 (the slot count is a power of two) */
    size_t n_entries;
    uint64_t *words;  /* the records, back to back, in 8-byte words */
    size_t n_words, cap_words;
} cache;

/* Forget every identifier and free the buffers. */
static void cache_clear(void)
{
    PyMem_Free(cache.slots);
    PyMem_Free(cache.words);
    memset(&cache, 0, sizeof(cache));
}

static inline IdentRecord *record_at(size_t offset)
{
    return (IdentRecord *)(cache.words + offset);
}

/* The record of an identifier, or NULL if it is not cached; valid until the next insertion. */
static IdentRecord *cache_find(const char *key, size_t len, uint64_t hash)
{
    if (cache.slots == NULL)
        return NULL;
    for (size_t i = hash & cache.mask;; i = (i + 1) & cache.mask) {
        uint64_t slot = cache.slots[i];
        if (slot == 0)
            return NULL;
        if (SLOT_TAG(slot) != SLOT_TAG(hash))
            continue;
        IdentRecord *r = record_at(SLOT_OFFSET(slot));
        if (r->hash == hash && r->len == len && same_bytes(record_key(r), key, len))
            return r;
    }
}

/* Put the record at offset into a free slot of the index. */
static void cache_place(size_t offset)
{
    uint64_t hash = record_at(offset)->hash;
    size_t i = hash & cache.mask;
    while (cache.slots[i] != 0)
        i = (i + 1) & cache.mask;
    cache.slots[i] = SLOT_TAG(hash) | (uint64_t)(offset + 1);
}

/* Rebuild the index with n_slots slots (a power of two), walking the records in order. */
static int cache_reindex(size_t n_slots)
{
    uint64_t *slots = PyMem_Calloc(n_slots, sizeof(uint64_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(cache.slots);
    cache.slots = slots;
    cache.mask = n_slots - 1;
    for (size_t offset = 0; offset < cache.n_words;) {
        const IdentRecord *r = record_at(offset);
        cache_place(offset);
        offset += RECORD_WORDS(r->n_terms, r->len);
    }
    return 0;
}

/* Add an identifier known to be absent; empties the cache first when it is full. */
static IdentRecord *cache_insert(const char *key, size_t len, uint64_t hash, const int64_t *terms, size_t n_terms,
                                 int64_t ident_hash)
{
    size_t words = RECORD_WORDS(n_terms, len);
    if (cache.n_entries >= CACHE_MAX_ENTRIES || cache.n_words + words >= UINT32_MAX)
        cache_clear();
    /* room: the index stays at most half full */
    if (cache.slots == NULL || (cache.n_entries + 1) * 2 > cache.mask + 1) {
        size_t n_slots = cache.slots == NULL ? CACHE_MIN_SLOTS : (cache.mask + 1) * 2;
        if (cache_reindex(n_slots) < 0)
            return NULL;
    }
    uint64_t *buf = ft_reserve(cache.words, &cache.cap_words, cache.n_words + words, sizeof(uint64_t));
    if (buf == NULL)
        return NULL;
    cache.words = buf;
    /* the record: header, terms, bytes (zero padded) */
    size_t offset = cache.n_words;
    memset(cache.words + offset, 0, words * sizeof(uint64_t));
    IdentRecord *r = record_at(offset);
    *r = (IdentRecord){hash, ident_hash, (uint32_t)len, (uint32_t)n_terms};
    if (n_terms > 0)
        memcpy((int64_t *)record_terms(r), terms, n_terms * sizeof(int64_t));
    memcpy((char *)record_key(r), key, len);
    cache.n_words += words;
    cache.n_entries++;
    cache_place(offset);
    return r;
}

/* The record of an identifier, computed at first sight (which may call Python); valid until the next call into
 * this cache. */
static IdentRecord *cache_lookup(const char *key, size_t len, uint64_t hash)
{
    IdentRecord *r = cache_find(key, len, hash);
    if (r != NULL)
        return r;
    if (len > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "identifier too long");
        return NULL;
    }
    int64_t *terms = NULL;
    size_t n_terms = 0;
    int64_t ident_hash;
    if (ft_identifier_terms(key, len, &terms, &n_terms, &ident_hash) < 0)
        return NULL;
    /* Python ran (and may have filled or emptied the cache): look again before inserting. */
    r = cache_find(key, len, hash);
    if (r == NULL)
        r = cache_insert(key, len, hash, terms, n_terms, ident_hash);
    PyMem_Free(terms);
    return r;
}

/* ------------------------------------------------------------------------------------------------------ */
/* The per-call counter: distinct terms in first-seen order, with an open-addressing index over them. */

typedef struct {
    int64_t term;
    int64_t count;
} TermCount;

typedef struct {
    TermCount *items; /* distinct terms, first-seen order; room for half the slot count */
    size_t n_items;
    uint32_t *slots;  /* index into items + 1; 0 marks an empty slot */
    size_t mask;      /* slot count - 1 (the slot count is a power of two) */
} Counter;

/* The slot where a term's probe starts. */
static inline size_t counter_home(const Counter *c, int64_t term)
{
    uint64_t x = (uint64_t)term * 0x9e3779b97f4a7c15ULL; /* one multiply spreads small values too */
    return (x ^ (x >> 32)) & c->mask;
}

/* An empty counter with n_slots slots (a power of two). */
static int counter_alloc(Counter *c, size_t n_slots)
{
    c->slots = PyMem_Calloc(n_slots, sizeof(uint32_t));
    c->items = PyMem_Malloc(n_slots / 2 * sizeof(TermCount));
    c->n_items = 0;
    c->mask = n_slots - 1;
    if (c->slots == NULL || c->items == NULL) {
        PyMem_Free(c->slots);
        PyMem_Free(c->items);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void counter_free(Counter *c)
{
    PyMem_Free(c->slots);
    PyMem_Free(c->items);
}

/* Double the slot count, keeping the items and their order. */
static int counter_grow(Counter *c)
{
    Counter bigger;
    if (counter_alloc(&bigger, (c->mask + 1) * 2) < 0)
        return -1;
    memcpy(bigger.items, c->items, c->n_items * sizeof(TermCount));
    bigger.n_items = c->n_items;
    for (size_t k = 0; k < c->n_items; k++) {
        size_t i = counter_home(&bigger, c->items[k].term);
        while (bigger.slots[i] != 0)
            i = (i + 1) & bigger.mask;
        bigger.slots[i] = (uint32_t)(k + 1);
    }
    counter_free(c);
    *c = bigger;
    return 0;
}

/* Count n more occurrences of a term. */
static inline int counter_add(Counter *c, int64_t term, int64_t n)
{
    /* keep the index at most half full, so a free slot always ends a probe */
    if ((c->n_items + 1) * 2 > c->mask + 1 && counter_grow(c) < 0)
        return -1;
    size_t i = counter_home(c, term);
    for (; c->slots[i] != 0; i = (i + 1) & c->mask) {
        TermCount *item = &c->items[c->slots[i] - 1];
        if (item->term == term) {
            item->count += n;
            return 0;
        }
    }
    c->items[c->n_items] = (TermCount){term, n};
    c->slots[i] = (uint32_t)++c->n_items;
    return 0;
}

/* The sum of all counts (uncapped), as a Python int. */
static PyObject *counter_total(const Counter *c)
{
    long long total = 0;
    for (size_t k = 0; k < c->n_items; k++)
        total += c->items[k].count;
    return PyLong_FromLongLong(total);
}

/* pack_terms(): native int64 values `term << 16 | min(count, 0xFFFF)`, first-seen order, as bytes. */
static PyObject *counter_pack(const Counter *c)
{
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(c->n_items * sizeof(int64_t)));
    if (out == NULL)
        return NULL;
    char *dest = PyBytes_AS_STRING(out);
    for (size_t k = 0; k < c->n_items; k++) {
        int64_t count = c->items[k].count < COUNT_MASK ? c->items[k].count : COUNT_MASK;
        int64_t packed = (int64_t)(((uint64_t)c->items[k].term << COUNT_BITS) | (uint64_t)count);
        memcpy(dest + k * sizeof(int64_t), &packed, sizeof(int64_t));
    }
    return out;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Character classes 64 at a time: two bitmasks per block of text (bit i for the character at base + i), built
 * with SSE2 16 characters at a time where there is SSE2 (every x86-64 CPU), else one by one. */

typedef struct {
    uint64_t ident; /* [A-Za-z0-9_] */
    uint64_t start; /* [A-Za-z_]: the characters an identifier can start with */
} BlockBits;

/* The classes of n <= 64 characters from base, one by one. Where kind is a constant (the calls in
 * classify_each), the compiler makes one loop per kind. */
static inline BlockBits classify_kind(int kind, const void *data, Py_ssize_t base, int n)
{
    BlockBits b = {0, 0};
    for (int i = 0; i < n; i++) {
        int c = class_of(PyUnicode_READ(kind, data, base + i));
        b.ident |= (uint64_t)(c != CH_OTHER) << i;
        b.start |= (uint64_t)(c == CH_START) << i;
    }
    return b;
}

static BlockBits classify_each(int kind, const void *data, Py_ssize_t base, int n)
{
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        return classify_kind(PyUnicode_1BYTE_KIND, data, base, n);
    case PyUnicode_2BYTE_KIND:
        return classify_kind(PyUnicode_2BYTE_KIND, data, base, n);
    default:
        return classify_kind(PyUnicode_4BYTE_KIND, data, base, n);
    }
}

#ifdef HAVE_SSE2
/* 16 characters from pos as 16 bytes. Wider code points saturate to 0 or 255, both separators. */
static inline __m128i load16(int kind, const void *data, Py_ssize_t pos)
{
    if (kind == PyUnicode_1BYTE_KIND)
        return _mm_loadu_si128((const __m128i *)((const Py_UCS1 *)data + pos));
    if (kind == PyUnicode_2BYTE_KIND) {
        const __m128i *p = (const __m128i *)((const Py_UCS2 *)data + pos);
        return _mm_packus_epi16(_mm_loadu_si128(p), _mm_loadu_si128(p + 1));
    }
    const __m128i *p = (const __m128i *)((const Py_UCS4 *)data + pos);
    __m128i low = _mm_packs_epi32(_mm_loadu_si128(p), _mm_loadu_si128(p + 1));
    __m128i high = _mm_packs_epi32(_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3));
    return _mm_packus_epi16(low, high);
}

/* Bytes of x in [lo, hi] as 0xFF (signed compares: bytes from 128 up are negative, so never in range). */
static inline __m128i in_range(__m128i x, char lo, char hi)
{
    return _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8((char)(lo - 1))),
                         _mm_cmplt_epi8(x, _mm_set1_epi8((char)(hi + 1))));
}

/* The classes of 64 characters from base, 16 at a time. */
static inline BlockBits classify_64(int kind, const void *data, Py_ssize_t base)
{
    BlockBits b = {0, 0};
    for (int i = 0; i < 64; i += 16) {
        __m128i x = load16(kind, data, base + i);
        /* x | 0x20 folds 'A'-'Z' onto 'a'-'z' (and nothing else onto them) */
        __m128i letter = in_range(_mm_or_si128(x, _mm_set1_epi8(0x20)), 'a', 'z');
        __m128i start = _mm_or_si128(letter, _mm_cmpeq_epi8(x, _mm_set1_epi8('_')));
        __m128i ident = _mm_or_si128(start, in_range(x, '0', '9'));
        b.start |= (uint64_t)(unsigned)_mm_movemask_epi8(start) << i;
        b.ident |= (uint64_t)(unsigned)_mm_movemask_epi8(ident) << i;
    }
    return b;
}
#endif

/* The classes of the block of (up to) 64 characters from base. */
static inline BlockBits classify_block(int kind, const void *data, Py_ssize_t base, Py_ssize_t len)
{
#ifdef HAVE_SSE2
    if (base + 64 <= len)
        return classify_64(kind, data, base);
#endif
    return classify_each(kind, data, base, len - base < 64 ? (int)(len - base) : 64);
}

/* The index of the lowest set bit of m (m != 0). */
static inline int lowest_bit(uint64_t m)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(m);
#else
    int i = 0;
    while (!(m & 1)) {
        m >>= 1;
        i++;
    }
    return i;
#endif
}

/* ------------------------------------------------------------------------------------------------------ */
/* The identifier scanner: findall() of [A-Za-z_][A-Za-z0-9_]* over any str kind, without copying 1-byte text.
 * An identifier starts at a start character outside an identifier (digits before it are skipped like
 * separators) and ends at the next character that is not an identifier character. */

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t len;
    Py_ssize_t base;       /* where the current block starts */
    BlockBits bits;        /* its classes */
    int bit;               /* where to look next in the block (0-63) */
    Py_ssize_t open_start; /* the start of the identifier being scanned, or -1 between identifiers */
    char *scratch;         /* ASCII copy of the current identifier for 2- and 4-byte kinds */
    Py_ssize_t scratch_cap;
} Scanner;

static int scanner_init(Scanner *s, PyObject *text)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return -1;
#endif
    s->kind = PyUnicode_KIND(text);
    s->data = PyUnicode_DATA(text);
    s->len = PyUnicode_GET_LENGTH(text);
    s->base = 0;
    s->bits = classify_block(s->kind, s->data, 0, s->len);
    s->bit = 0;
    s->open_start = -1;
    s->scratch = NULL;
    s->scratch_cap = 0;
    return 0;
}

static void scanner_free(Scanner *s)
{
    PyMem_Free(s->scratch);
}

/* Move to the next block of 64 characters; 0 past the end of the text (an empty block from then on). */
static inline int next_block(Scanner *s)
{
    s->base += 64;
    s->bit = 0;
    if (s->base >= s->len) {
        s->bits = (BlockBits){0, 0};
        return 0;
    }
    s->bits = classify_block(s->kind, s->data, s->base, s->len);
    return 1;
}

/* The next identifier's [start, end); 0 at the end of the text. */
static inline int scan_next(Scanner *s, Py_ssize_t *start, Py_ssize_t *end)
{
    for (;;) {
        /* between identifiers: the next start character (a character past the text has no bits) */
        if (s->open_start < 0) {
            uint64_t starts = s->bits.start & (~0ULL << s->bit);
            if (starts == 0) {
                if (!next_block(s))
                    return 0;
                continue;
            }
            s->bit = lowest_bit(starts);
            s->open_start = s->base + s->bit;
        }
        /* in an identifier: the next character that is not an identifier character */
        uint64_t others = ~s->bits.ident & (~0ULL << s->bit);
        if (others == 0) {
            if (next_block(s))
                continue;
            *end = s->len; /* the identifier runs to the end of the text */
        }
        else {
            s->bit = lowest_bit(others);
            *end = s->base + s->bit;
        }
        *start = s->open_start;
        s->open_start = -1;
        return 1;
    }
}

/* The ASCII bytes of the wide-text identifier [start, end), narrowed into the scratch buffer. */
static const char *narrow(Scanner *s, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t n = end - start;
    if (n > s->scratch_cap) {
        char *grown = PyMem_Realloc(s->scratch, (size_t)n);
        if (grown == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        s->scratch = grown;
        s->scratch_cap = n;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        s->scratch[i] = (char)PyUnicode_READ(s->kind, s->data, start + i);
    return s->scratch;
}

/* The next identifier as (key, n) ASCII bytes: 1 found, 0 at the end, -1 on error. */
static inline int scanner_next(Scanner *s, const char **key, size_t *n)
{
    Py_ssize_t start, end;
    if (!scan_next(s, &start, &end))
        return 0;
    *n = (size_t)(end - start);
    /* 1-byte text is used in place; wider text is narrowed (identifiers are ASCII) */
    *key = s->kind == PyUnicode_1BYTE_KIND ? (const char *)s->data + start : narrow(s, start, end);
    return *key != NULL ? 1 : -1;
}

/* ------------------------------------------------------------------------------------------------------ */
/* The per-call identifier tally: each distinct identifier of one text in first-seen order, with its count.
 * Repeats cost a lookup in this small table only; then each distinct identifier's terms are counted once, times
 * its count (the same totals and the same first-seen term order as counting every occurrence). */

typedef struct {
    uint64_t hash;   /* key_hash() of the identifier */
    size_t key_at;   /* its bytes are tally.keys[key_at, key_at + len) */
    size_t len;
    int64_t count;
} TallyItem;

typedef struct {
    TallyItem *items;
    size_t n_items, cap_items;
    uint32_t *slots; /* open addressing (linear probing): index into items + 1; 0 marks an empty slot */
    size_t mask;     /* slot count - 1 (the slot count is a power of two) */
    char *keys;
    size_t n_keys, cap_keys;
} Tally;

static void tally_free(Tally *t)
{
    PyMem_Free(t->items);
    PyMem_Free(t->slots);
    PyMem_Free(t->keys);
}

/* The item of an identifier seen before in this text, or NULL. */
static inline TallyItem *tally_find(const Tally *t, const char *key, size_t len, uint64_t hash)
{
    for (size_t i = hash & t->mask; t->slots != NULL && t->slots[i] != 0; i = (i + 1) & t->mask) {
        TallyItem *item = &t->items[t->slots[i] - 1];
        if (item->hash == hash && item->len == len && same_bytes(t->keys + item->key_at, key, len))
            return item;
    }
    return NULL;
}

/* Rebuild the index with n_slots slots (a power of two). */
static int tally_reindex(Tally *t, size_t n_slots)
{
    uint32_t *slots = PyMem_Calloc(n_slots, sizeof(uint32_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = n_slots - 1;
    for (size_t k = 0; k < t->n_items; k++) {
        size_t i = t->items[k].hash & t->mask;
        while (slots[i] != 0)
            i = (i + 1) & t->mask;
        slots[i] = (uint32_t)(k + 1);
    }
    return 0;
}

/* Append an identifier first seen in this text, with count 1. */
static int tally_append(Tally *t, const char *key, size_t len, uint64_t hash)
{
    /* room: the index stays at most half full */
    if (t->slots == NULL || (t->n_items + 1) * 2 > t->mask + 1) {
        size_t n_slots = t->slots == NULL ? TALLY_MIN_SLOTS : (t->mask + 1) * 2;
        if (tally_reindex(t, n_slots) < 0)
            return -1;
    }
    TallyItem *items = ft_reserve(t->items, &t->cap_items, t->n_items + 1, sizeof(TallyItem));
    if (items == NULL)
        return -1;
    t->items = items;
    char *keys = ft_reserve(t->keys, &t->cap_keys, t->n_keys + len, 1);
    if (keys == NULL)
        return -1;
    t->keys = keys;
    /* the bytes, the item, its slot; and a request for its slot in the cache, which count_tally() will read */
    if (cache.slots != NULL)
        prefetch(&cache.slots[hash & cache.mask]);
    memcpy(t->keys + t->n_keys, key, len);
    t->items[t->n_items] = (TallyItem){hash, t->n_keys, len, 1};
    t->n_keys += len;
    size_t i = hash & t->mask;
    while (t->slots[i] != 0)
        i = (i + 1) & t->mask;
    t->slots[i] = (uint32_t)++t->n_items;
    return 0;
}

/* Tally every identifier occurrence of text. */
static int tally_text(Tally *t, PyObject *text)
{
    Scanner s;
    if (scanner_init(&s, text) < 0)
        return -1;
    /* sized up front: distinct identifiers' bytes never outgrow the text; about one distinct one in 8 chars */
    size_t n_chars = (size_t)s.len;
    t->keys = ft_reserve(t->keys, &t->cap_keys, n_chars, 1);
    t->items = t->keys != NULL ? ft_reserve(t->items, &t->cap_items, n_chars / 8, sizeof(TallyItem)) : NULL;
    if (t->items == NULL) {
        scanner_free(&s);
        return -1;
    }
    const char *key;
    size_t len;
    int found;
    while ((found = scanner_next(&s, &key, &len)) == 1) {
        uint64_t hash = key_hash(key, len);
        TallyItem *item = tally_find(t, key, len, hash);
        if (item != NULL)
            item->count++;
        else if (tally_append(t, key, len, hash) < 0)
            break;
    }
    scanner_free(&s);
    return found == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Counting terms. */

/* A counter sized for a tally's terms (about three per identifier) plus a few extra ones. */
static int counter_for(Counter *c, const Tally *t)
{
    size_t n_slots = COUNTER_MIN_SLOTS;
    while (n_slots < 8 * t->n_items + 32)
        n_slots *= 2;
    return counter_alloc(c, n_slots);
}

/* The terms of one tallied identifier (by_ident_hash: its own hash), times its count. */
static inline int count_item(Counter *c, const Tally *t, const TallyItem *item, int by_ident_hash)
{
    const IdentRecord *r = cache_lookup(t->keys + item->key_at, item->len, item->hash);
    if (r == NULL)
        return -1;
    /* the record stays valid until the next cache lookup */
    if (by_ident_hash)
        return counter_add(c, r->ident_hash, item->count);
    const int64_t *terms = record_terms(r);
    for (uint32_t i = 0; i < r->n_terms; i++) {
        if (counter_add(c, terms[i], item->count) < 0)
            return -1;
    }
    return 0;
}

/* Every tallied identifier's terms, in first-seen order. Cache lookups mostly miss the CPU caches:
 * tally_append() asked for each item's slot, and here each item's record is asked for LOOKAHEAD items before
 * it is read, so those misses overlap. */
static int count_tally(Counter *c, const Tally *t, int by_ident_hash)
{
    for (size_t k = 0; k < t->n_items + LOOKAHEAD; k++) {
        if (k < t->n_items && cache.slots != NULL) {
            uint64_t slot = cache.slots[t->items[k].hash & cache.mask];
            if (slot != 0)
                prefetch(record_at(SLOT_OFFSET(slot)));
        }
        if (k >= LOOKAHEAD && count_item(c, t, &t->items[k - LOOKAHEAD], by_ident_hash) < 0)
            return -1;
    }
    return 0;
}

/* Every term of an iterable of ints (the extra field terms of a chunk). */
static int count_extra(Counter *c, PyObject *extra)
{
    PyObject *seq = PySequence_Fast(extra, "extra must be an iterable of ints"); /* a list or tuple as is */
    if (seq == NULL)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
        int64_t term;
        rc = term_from_object(PySequence_Fast_GET_ITEM(seq, i), &term) < 0 || counter_add(c, term, 1) < 0 ? -1 : 0;
    }
    Py_DECREF(seq);
    return rc;
}

/* The counted terms of text (by_ident_hash: each identifier as its own hash) plus extra (may be NULL). */
static int count_text(Counter *c, PyObject *text, int by_ident_hash, PyObject *extra)
{
    Tally t;
    memset(&t, 0, sizeof(t));
    int rc = tally_text(&t, text);
    if (rc == 0)
        rc = counter_for(c, &t);
    if (rc == 0 && (count_tally(c, &t, by_ident_hash) < 0 || (extra != NULL && count_extra(c, extra) < 0))) {
        counter_free(c);
        rc = -1;
    }
    tally_free(&t);
    return rc;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Module functions. */

PyDoc_STRVAR(configure_doc,
             "configure(normalize_word, term_hash)\n--\n\n"
             "Set the callables that map a lowercased word part to its word (or None) and a term to its hash in "
             "[0, 2**47); empties both caches.");

static PyObject *fastterms_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "configure() takes two callables: normalize_word and term_hash");
        return NULL;
    }
    ft_words_configure(args[0], args[1]);
    cache_clear();
    Py_RETURN_NONE;
}

PyDoc_STRVAR(chunk_terms_doc,
             "chunk_terms(text, extra=())\n--\n\n"
             "(token count, pack_terms() blob) of a chunk: its text's terms plus extra term hashes (path, symbol).");

static PyObject *fastterms_chunk_terms(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"text", "extra", NULL};
    PyObject *text, *extra = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|O:chunk_terms", keywords, &text, &extra))
        return NULL;
    Counter c;
    if (count_text(&c, text, 0, extra) < 0)
        return NULL;
    PyObject *result = NULL;
    PyObject *total = counter_total(&c);
    PyObject *blob = total != NULL ? counter_pack(&c) : NULL;
    if (blob != NULL)
        result = PyTuple_Pack(2, total, blob);
    Py_XDECREF(total);
    Py_XDECREF(blob);
    counter_free(&c);
    return result;
}

PyDoc_STRVAR(identifier_counts_doc,
             "identifier_counts(text)\n--\n\n"
             "Each distinct identifier as written, packed like terms: `term_hash(identifier) << 16 | count`.");

static PyObject *fastterms_identifier_counts(PyObject *module, PyObject *args)
{
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:identifier_counts", &text))
        return NULL;
    Counter c;
    if (count_text(&c, text, 1, NULL) < 0)
        return NULL;
    PyObject *result = counter_pack(&c);
    counter_free(&c);
    return result;
}

PyDoc_STRVAR(identifier_terms_doc,
             "identifier_terms(identifier)\n--\n\n"
             "tokens.identifier_terms() of an ASCII identifier, through the per-process cache.");

static PyObject *fastterms_identifier_terms(PyObject *module, PyObject *ident)
{
    if (!PyUnicode_Check(ident) || !PyUnicode_IS_ASCII(ident)) {
        PyErr_SetString(PyExc_TypeError, "identifier_terms() takes an ASCII str");
        return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(ident);
    const char *key = (const char *)PyUnicode_DATA(ident);
    const IdentRecord *r = cache_lookup(key, (size_t)len, key_hash(key, (size_t)len));
    if (r == NULL)
        return NULL;
    /* the record is read before anything else can touch the cache */
    PyObject *out = PyTuple_New(r->n_terms);
    for (uint32_t i = 0; out != NULL && i < r->n_terms; i++) {
        PyObject *term = PyLong_FromLongLong(record_terms(r)[i]);
        if (term == NULL)
            Py_CLEAR(out);
        else
            PyTuple_SET_ITEM(out, i, term);
    }
    return out;
}

PyDoc_STRVAR(cache_size_doc, "cache_size()\n--\n\nThe number of identifiers in the per-process cache.");

static PyObject *fastterms_cache_size(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(cache.n_entries);
}

PyDoc_STRVAR(word_cache_size_doc, "word_cache_size()\n--\n\nThe number of word parts in the per-process cache.");

static PyObject *fastterms_word_cache_size(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(ft_words_cache_size());
}

static PyMethodDef fastterms_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))fastterms_configure, METH_FASTCALL, configure_doc},
    {"chunk_terms", (PyCFunction)(void (*)(void))fastterms_chunk_terms, METH_VARARGS | METH_KEYWORDS,
     chunk_terms_doc},
    {"identifier_counts", fastterms_identifier_counts, METH_VARARGS, identifier_counts_doc},
    {"identifier_terms", fastterms_identifier_terms, METH_O, identifier_terms_doc},
    {"cache_size", fastterms_cache_size, METH_NOARGS, cache_size_doc},
    {"word_cache_size", fastterms_word_cache_size, METH_NOARGS, word_cache_size_doc},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------------------------------------------------ */
/* Module definition (single-phase: the cache and the callables are per process). */

static void fastterms_free(void *module)
{
    cache_clear();
    ft_words_free();
}

static struct PyModuleDef fastterms_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "lsp_agent.index._fastterms",
    .m_doc = "Native chunk_terms() and identifier_counts() for lsp_agent.index.tokens.",
    .m_size = -1,
    .m_methods = fastterms_methods,
    .m_free = fastterms_free,
};

PyMODINIT_FUNC PyInit__fastterms(void)
{
    init_char_class();
    PyObject *module = PyModule_Create(&fastterms_module);
    /* which identifier scanner was compiled in: "sse2" or "portable" */
    if (module != NULL && PyModule_AddStringConstant(module, "SCANNER", SCANNER) < 0)
        Py_CLEAR(module);
    return module;
}
