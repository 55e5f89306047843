/* BLAKE2b (RFC 7693), unkeyed, with an 8-byte digest: the hash under tokens.term_hash(). */
#ifndef FT_BLAKE2B_H
#define FT_BLAKE2B_H

#include <stddef.h>
#include <stdint.h>

/* hashlib.blake2b(data, digest_size=8).digest() read as a little-endian integer. */
uint64_t ft_blake2b64(const void *data, size_t n);

/* tokens.term_hash() of a term's UTF-8 bytes: the digest's top 47 bits. */
static inline int64_t ft_term_hash(const void *data, size_t n)
{
    return (int64_t)(ft_blake2b64(data, n) >> 17);
}

#endif
