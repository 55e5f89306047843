/* BLAKE2b as RFC 7693 specifies it, reduced to what term_hash() needs: no key, an 8-byte digest, the whole
 * message in memory. Checked against hashlib in tests/index/test_fastterms.py. */

#include "_ft_blake2b.h"

#include <string.h>

#define BLOCK 128  /* bytes per compressed block */
#define DIGEST 8   /* digest bytes (nn in the RFC) */
#define ROUNDS 12

/* The initialisation vector (RFC 7693 section 2.6: SHA-512's). */
static const uint64_t IV[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

/* The message word schedule of each round (section 2.7); rounds 10 and 11 repeat rounds 0 and 1. */
static const uint8_t SIGMA[ROUNDS][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static inline uint64_t rotr64(uint64_t x, int n)
{
    return (x >> n) | (x << (64 - n));
}

/* A little-endian 64-bit word (compilers turn this into one load on little-endian machines). */
static inline uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* The mixing function G (section 3.1) on words a, b, c, d of v with message words x and y. */
#define G(a, b, c, d, x, y)                  \
    do {                                     \
        v[a] = v[a] + v[b] + (x);            \
        v[d] = rotr64(v[d] ^ v[a], 32);      \
        v[c] = v[c] + v[d];                  \
        v[b] = rotr64(v[b] ^ v[c], 24);      \
        v[a] = v[a] + v[b] + (y);            \
        v[d] = rotr64(v[d] ^ v[a], 16);      \
        v[c] = v[c] + v[d];                  \
        v[b] = rotr64(v[b] ^ v[c], 63);      \
    } while (0)

/* One round: G on the four columns, then on the four diagonals, with round r's message schedule. */
#define ROUND(r)                                                    \
    do {                                                            \
        G(0, 4, 8, 12, m[SIGMA[r][0]], m[SIGMA[r][1]]);             \
        G(1, 5, 9, 13, m[SIGMA[r][2]], m[SIGMA[r][3]]);             \
        G(2, 6, 10, 14, m[SIGMA[r][4]], m[SIGMA[r][5]]);            \
        G(3, 7, 11, 15, m[SIGMA[r][6]], m[SIGMA[r][7]]);            \
        G(0, 5, 10, 15, m[SIGMA[r][8]], m[SIGMA[r][9]]);            \
        G(1, 6, 11, 12, m[SIGMA[r][10]], m[SIGMA[r][11]]);          \
        G(2, 7, 8, 13, m[SIGMA[r][12]], m[SIGMA[r][13]]);           \
        G(3, 4, 9, 14, m[SIGMA[r][14]], m[SIGMA[r][15]]);           \
    } while (0)

/* The compression function F (section 3.2): one block into the state h; t counts the bytes so far (this
 * function never sees messages of 2^64 bytes, so the counter's high word stays 0); last marks the final block. */
static void compress(uint64_t h[8], const uint8_t block[BLOCK], uint64_t t, int last)
{
    uint64_t v[16], m[16];
    for (int i = 0; i < 16; i++)
        m[i] = load_le64(block + 8 * i);
    memcpy(v, h, 8 * sizeof(uint64_t));
    memcpy(v + 8, IV, 8 * sizeof(uint64_t));
    v[12] ^= t;
    if (last)
        v[14] = ~v[14];
    /* twelve rounds, written out so that every index is a constant and v and m can live in registers */
    ROUND(0);
    ROUND(1);
    ROUND(2);
    ROUND(3);
    ROUND(4);
    ROUND(5);
    ROUND(6);
    ROUND(7);
    ROUND(8);
    ROUND(9);
    ROUND(10);
    ROUND(11);
    for (int i = 0; i < 8; i++)
        h[i] ^= v[i] ^ v[i + 8];
}

uint64_t ft_blake2b64(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t h[8];
    memcpy(h, IV, sizeof(h));
    h[0] ^= 0x01010000 | DIGEST; /* parameter block: depth 1, fanout 1, no key, digest length */
    /* every block but the last as is; the last (possibly empty, for an empty message) zero padded */
    uint64_t t = 0;
    for (; n > BLOCK; p += BLOCK, n -= BLOCK) {
        t += BLOCK;
        compress(h, p, t, 0);
    }
    uint8_t last[BLOCK] = {0};
    if (n > 0)
        memcpy(last, p, n);
    compress(h, last, t + n, 1);
    /* the digest is h's first 8 bytes, little-endian: h[0] itself as an integer */
    return h[0];
}
