/* tokens.identifier_terms() in C. For an identifier (ASCII, [A-Za-z_][A-Za-z0-9_]*):
 *   1. split it into parts as tokens._PARTS.findall() does;
 *   2. map each part, lowercased, to its normalised word's term hash through a per-process word cache, which
 *      calls the Python normalize_word() at a part's first sight (None drops the part);
 *   3. put the lowercased identifier, stripped of underscores, first when it has several parts and differs from
 *      every word.
 * Terms are hashed by the Python term_hash() (hashlib's BLAKE2b), once per distinct term: the word cache keeps
 * each word's hash and _fastterms.c's identifier cache each identifier's terms.
 *
 * The GIL is held, but a Python callable may let another thread run and use (or empty) the word cache, so a
 * cache entry is read before the next lookup and never kept. */

#include "_ft_words.h"

#include "_ft_mem.h"

#include <string.h>


#define WORDS_MAX_ENTRIES (1 << 20) /* the word cache is emptied when it grows past this */
#define WORDS_MIN_SLOTS 1024
#define DROPPED (-1)                /* the term of a part normalize_word() dropped (real terms are >= 0) */
#define STACK_BYTES 128             /* identifiers up to this long are lowercased on the stack */
#define SHORT_IDENT 63              /* shorter identifiers skip counting their parts (a small block of terms) */

static PyObject *normalize_fn = NULL;
static PyObject *term_hash_fn = NULL;

/* ------------------------------------------------------------------------------------------------------ */
/* Splitting: _PARTS = [A-Z]+(?=[A-Z][a-z]) | [A-Z]?[a-z]+ | [A-Z]+ | [0-9]+, matched left to right. */

static inline int is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static inline int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static inline int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The end of the run of characters from i on that pass test. */
static inline size_t run_end(const char *s, size_t i, size_t n, int (*test)(char))
{
    while (i < n && test(s[i]))
        i++;
    return i;
}

/* The next part at or after *pos: 1 with [*start, *end) set (and *pos moved past it), 0 when none is left.
 * An upper-case run U followed by a lower-case letter leaves its last letter to start the next word (the
 * lookahead alternative, or [A-Z]?[a-z]+ for a run of one); otherwise the run is a part of its own. */
static int next_part(const char *s, size_t n, size_t *pos, size_t *start, size_t *end)
{
    size_t i = *pos;
    while (i < n && s[i] == '_') /* underscores separate parts */
        i++;
    if (i >= n)
        return 0;
    size_t e;
    if (is_upper(s[i])) {
        size_t u = run_end(s, i, n, is_upper);
        if (u < n && is_lower(s[u]))
            e = u - i >= 2 ? u - 1 : run_end(s, u, n, is_lower);
        else
            e = u;
    }
    else if (is_lower(s[i]))
        e = run_end(s, i, n, is_lower);
    else
        e = run_end(s, i, n, is_digit);
    *start = i;
    *pos = *end = e;
    return 1;
}

/* ------------------------------------------------------------------------------------------------------ */
/* The word cache: a lowercased part -> the term hash of normalize_word(part) (DROPPED for None) and the word's
 * UTF-8 bytes. Entries in an array, their bytes in one buffer, an open-addressing index (linear probing). */

typedef struct {
    uint64_t hash;      /* part_hash() of the part */
    int64_t term;       /* term_hash(word), or DROPPED */
    uint32_t key_at;    /* the part's bytes: bytes[key_at, key_at + key_len) */
    uint32_t key_len;
    uint32_t word_at;   /* the word's UTF-8 bytes: bytes[word_at, word_at + word_len) */
    uint32_t word_len;
} WordEntry;

static struct {
    WordEntry *items;
    size_t n_items, cap_items;
    uint32_t *slots; /* index into items + 1; 0 marks an empty slot */
    size_t mask;     /* slot count - 1 (a power of two) */
    char *bytes;
    size_t n_bytes, cap_bytes;
} words;

/* FNV-1a over the part's bytes, with a final multiply to spread them over the slot bits (parts are short). */
static inline uint64_t part_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    h *= 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

static void words_clear(void)
{
    PyMem_Free(words.items);
    PyMem_Free(words.slots);
    PyMem_Free(words.bytes);
    memset(&words, 0, sizeof(words));
}

/* The entry of a part, or NULL; valid until the next insertion. */
static WordEntry *words_find(const char *key, size_t len, uint64_t hash)
{
    if (words.slots == NULL)
        return NULL;
    for (size_t i = hash & words.mask; words.slots[i] != 0; i = (i + 1) & words.mask) {
        WordEntry *e = &words.items[words.slots[i] - 1];
        if (e->hash == hash && e->key_len == len && memcmp(words.bytes + e->key_at, key, len) == 0)
            return e;
    }
    return NULL;
}

/* Rebuild the index with n_slots slots (a power of two). */
static int words_reindex(size_t n_slots)
{
    uint32_t *slots = PyMem_Calloc(n_slots, sizeof(uint32_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(words.slots);
    words.slots = slots;
    words.mask = n_slots - 1;
    for (size_t k = 0; k < words.n_items; k++) {
        size_t i = words.items[k].hash & words.mask;
        while (slots[i] != 0)
            i = (i + 1) & words.mask;
        slots[i] = (uint32_t)(k + 1);
    }
    return 0;
}

/* Add a part known to be absent (emptying the cache first when it is full); the new entry or NULL. */
static WordEntry *words_insert(const char *key, size_t len, uint64_t hash, int64_t term, const char *word,
                               size_t word_len)
{
    if (words.n_items >= WORDS_MAX_ENTRIES || words.n_bytes + len + word_len >= UINT32_MAX)
        words_clear();
    /* room: the index stays at most half full */
    if (words.slots == NULL || (words.n_items + 1) * 2 > words.mask + 1) {
        if (words_reindex(words.slots == NULL ? WORDS_MIN_SLOTS : (words.mask + 1) * 2) < 0)
            return NULL;
    }
    WordEntry *items = ft_reserve(words.items, &words.cap_items, words.n_items + 1, sizeof(WordEntry));
    if (items == NULL)
        return NULL;
    words.items = items;
    char *bytes = ft_reserve(words.bytes, &words.cap_bytes, words.n_bytes + len + word_len, 1);
    if (bytes == NULL)
        return NULL;
    words.bytes = bytes;
    /* the bytes, the entry, its slot */
    WordEntry *e = &words.items[words.n_items];
    *e = (WordEntry){hash, term, (uint32_t)words.n_bytes, (uint32_t)len, (uint32_t)(words.n_bytes + len),
                     (uint32_t)word_len};
    memcpy(words.bytes + words.n_bytes, key, len);
    if (word_len > 0)
        memcpy(words.bytes + words.n_bytes + len, word, word_len);
    words.n_bytes += len + word_len;
    size_t i = hash & words.mask;
    while (words.slots[i] != 0)
        i = (i + 1) & words.mask;
    words.slots[i] = (uint32_t)++words.n_items;
    return e;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Asking Python for a part's word and a term's hash. */

/* A configured callable called with one argument: a new reference, or NULL with an exception. */
static PyObject *call_configured(PyObject *fn, PyObject *arg)
{
    if (fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fastterms.configure(normalize_word, term_hash) was not called");
        return NULL;
    }
    Py_INCREF(fn); /* configure() may replace the callable while it runs */
    PyObject *result = PyObject_CallOneArg(fn, arg);
    Py_DECREF(fn);
    return result;
}

/* term_hash(term) into *out; -1 with an exception set when it fails or is not an int in [0, 2**47). */
static int hash_term(PyObject *term, int64_t *out)
{
    PyObject *value = call_configured(term_hash_fn, term);
    if (value == NULL)
        return -1;
    int overflow = 0;
    long long h = PyLong_Check(value) ? PyLong_AsLongLongAndOverflow(value, &overflow) : -1;
    Py_DECREF(value);
    if (h == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || h < 0 || h >= ((long long)1 << 47)) {
        PyErr_SetString(PyExc_TypeError, "term_hash() must return an int in [0, 2**47)");
        return -1;
    }
    *out = (int64_t)h;
    return 0;
}

/* term_hash() of the ASCII term s[0:n]. */
static int hash_ascii(const char *s, size_t n, int64_t *out)
{
    PyObject *term = PyUnicode_DecodeASCII(s, (Py_ssize_t)n, NULL);
    if (term == NULL)
        return -1;
    int rc = hash_term(term, out);
    Py_DECREF(term);
    return rc;
}

/* normalize_word(part) for a lowercased part: a new reference (None or a str), or NULL with an exception. */
static PyObject *call_normalize(const char *key, size_t len)
{
    PyObject *part = PyUnicode_DecodeASCII(key, (Py_ssize_t)len, NULL);
    if (part == NULL)
        return NULL;
    PyObject *word = call_configured(normalize_fn, part);
    Py_DECREF(part);
    if (word != NULL && word != Py_None && !PyUnicode_Check(word)) {
        PyErr_Format(PyExc_TypeError, "normalize_word() must return str or None, not %.100s", Py_TYPE(word)->tp_name);
        Py_CLEAR(word);
    }
    return word;
}

/* The entry of a lowercased part, asking normalize_word() at its first sight; NULL on error. Valid until the
 * next lookup. */
static WordEntry *word_lookup(const char *key, size_t len)
{
    uint64_t hash = part_hash(key, len);
    WordEntry *e = words_find(key, len, hash);
    if (e != NULL)
        return e;
    PyObject *word = call_normalize(key, len);
    if (word == NULL)
        return NULL;
    /* the word's term and its UTF-8 bytes (surrogates passed through), compared with the identifier's */
    PyObject *encoded = NULL;
    const char *bytes = NULL;
    Py_ssize_t n = 0;
    int64_t term = DROPPED;
    if (word != Py_None) {
        encoded = PyUnicode_AsEncodedString(word, "utf-8", "surrogatepass");
        if (encoded == NULL || hash_term(word, &term) < 0) {
            Py_XDECREF(encoded);
            Py_DECREF(word);
            return NULL;
        }
        bytes = PyBytes_AS_STRING(encoded);
        n = PyBytes_GET_SIZE(encoded);
    }
    /* Python ran (and may have filled or emptied the cache): look again before inserting */
    e = words_find(key, len, hash);
    if (e == NULL)
        e = words_insert(key, len, hash, term, bytes, (size_t)n);
    Py_XDECREF(encoded);
    Py_DECREF(word);
    return e;
}

/* ------------------------------------------------------------------------------------------------------ */
/* An identifier's terms. */

/* Whether bytes a[0:n] are the identifier key[0:len]. */
static inline int is_key(const char *a, size_t n, const char *key, size_t len)
{
    return n == len && memcmp(a, key, len) == 0;
}

/* Fill out with the identifier's terms (room for one per part, plus one): the words' terms from out[1] on, the whole's hash
 * at out[0] when it belongs there; lower is the identifier lowercased. *ident_hash is set (to -1 if not) when
 * the identifier itself was hashed on the way, as a word or as the whole (saving a term_hash() call). The number of
 * terms and where they start (0 or 1), or -1 on error. */
static Py_ssize_t fill_terms(const char *key, const char *lower, size_t len, int64_t *out, size_t *first,
                             int64_t *ident_hash)
{
    /* the whole: lowercased, underscores stripped from both ends */
    size_t w0 = 0, w1 = len;
    while (w0 < w1 && lower[w0] == '_')
        w0++;
    while (w1 > w0 && lower[w1 - 1] == '_')
        w1--;
    size_t whole_len = w1 - w0;
    /* each part's word; the whole is left out if it equals one of them */
    size_t n = 1, n_parts = 0, pos = 0, start, end;
    int whole_is_a_word = 0;
    while (next_part(key, len, &pos, &start, &end)) {
        n_parts++;
        const WordEntry *e = word_lookup(lower + start, end - start);
        if (e == NULL)
            return -1;
        if (e->term == DROPPED)
            continue;
        out[n++] = e->term;
        const char *word = words.bytes + e->word_at;
        if (e->word_len == whole_len && memcmp(word, lower + w0, whole_len) == 0)
            whole_is_a_word = 1;
        if (is_key(word, e->word_len, key, len))
            *ident_hash = e->term;
    }
    if (n_parts > 1 && whole_len > 0 && !whole_is_a_word) {
        if (hash_ascii(lower + w0, whole_len, &out[0]) < 0)
            return -1;
        if (is_key(lower + w0, whole_len, key, len))
            *ident_hash = out[0];
        *first = 0;
        return (Py_ssize_t)n;
    }
    *first = 1;
    return (Py_ssize_t)(n - 1);
}

int ft_identifier_terms(const char *key, size_t len, int64_t **terms, size_t *n, int64_t *ident_hash)
{
    /* the identifier lowercased (ASCII), on the stack when short */
    char stack[STACK_BYTES];
    char *lower = len <= STACK_BYTES ? stack : PyMem_Malloc(len);
    /* room for a term per part plus the whole: at most one part per character, counted when that is too many */
    size_t room = len + 1;
    if (len >= SHORT_IDENT) {
        size_t pos = 0, start, end;
        for (room = 1; next_part(key, len, &pos, &start, &end);)
            room++;
    }
    int64_t *out = PyMem_Malloc(room * sizeof(int64_t));
    if (lower == NULL || out == NULL) {
        if (lower != stack)
            PyMem_Free(lower);
        PyMem_Free(out);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        lower[i] = is_upper(key[i]) ? (char)(key[i] + ('a' - 'A')) : key[i];
    size_t first = 0;
    *ident_hash = -1;
    Py_ssize_t count = fill_terms(key, lower, len, out, &first, ident_hash);
    if (lower != stack)
        PyMem_Free(lower);
    if (count >= 0 && *ident_hash < 0 && hash_ascii(key, len, ident_hash) < 0)
        count = -1;
    if (count <= 0) {
        PyMem_Free(out);
        *terms = NULL;
        *n = 0;
        return count < 0 ? -1 : 0;
    }
    if (first > 0)
        memmove(out, out + first, (size_t)count * sizeof(int64_t));
    *terms = out;
    *n = (size_t)count;
    return 0;
}

/* ------------------------------------------------------------------------------------------------------ */
/* Configuration. */

void ft_words_configure(PyObject *normalize_word, PyObject *term_hash)
{
    Py_INCREF(normalize_word);
    Py_INCREF(term_hash);
    Py_XSETREF(normalize_fn, normalize_word);
    Py_XSETREF(term_hash_fn, term_hash);
    words_clear();
}

void ft_words_free(void)
{
    words_clear();
    Py_CLEAR(normalize_fn);
    Py_CLEAR(term_hash_fn);
}

size_t ft_words_cache_size(void)
{
    return words.n_items;
}
