/* Growable arrays for the C tokenizer (_fastterms.c, _ft_words.c), on PyMem: the GIL is always held there. */
#ifndef FT_MEM_H
#define FT_MEM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The buffer with room for `need` items of item_size bytes (doubling *cap; allocated even when need is 0), or
 * NULL with MemoryError set (buf unchanged). */
static inline void *ft_reserve(void *buf, size_t *cap, size_t need, size_t item_size)
{
    if (buf != NULL && need <= *cap)
        return buf;
    size_t n = *cap > 0 ? *cap : 16;
    while (n < need)
        n *= 2;
    void *grown = PyMem_Realloc(buf, n * item_size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    *cap = n;
    return grown;
}

#endif
