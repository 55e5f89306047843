/* An identifier's search terms computed natively, as tokens.identifier_terms() does, calling Python's
 * normalize_word() only once per distinct lowercased word part (a per-process word cache). */
#ifndef FT_WORDS_H
#define FT_WORDS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Use normalize_word (str -> str | None) and term_hash (str -> int in [0, 2**47)) from now on; empties the word
 * cache. Borrows nothing: takes a reference to each. */
void ft_words_configure(PyObject *normalize_word, PyObject *term_hash);

/* Forget every word and drop the callables (module teardown). */
void ft_words_free(void);

/* Words in the cache. */
size_t ft_words_cache_size(void);

/* identifier_terms() of the ASCII identifier key[0:len] as a PyMem array of *n terms (NULL when *n is 0), and
 * term_hash() of the identifier itself; -1 with an exception set on error. Calls Python: normalize_word once per
 * word part not cached yet, term_hash for each new word and for the identifier (and its whole) at first sight. */
int ft_identifier_terms(const char *key, size_t len, int64_t **terms, size_t *n, int64_t *ident_hash);

#endif
