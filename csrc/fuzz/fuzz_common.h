/* Small helpers shared by the libFuzzer harnesses: a byte reader over the fuzz input,
 * big-endian loads, exact-size allocations (so ASan flags any overrun) and CHECK(),
 * which reports the failed condition and abort()s so libFuzzer saves a reproducer. */
#ifndef PCP_FUZZ_COMMON_H
#define PCP_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcp_core.h"
#include "result.h"

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
            abort();                                                                  \
        }                                                                             \
    } while (0)

static inline uint32_t fz_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void fz_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* malloc of exactly n elements. n == 0 still yields a distinct zero-size block, so a
 * write through it is a heap-buffer-overflow for ASan. */
static inline void *fz_alloc(size_t n, size_t size)
{
    void *p = malloc(n * size);
    CHECK(p != NULL || n * size == 0);
    return p;
}

static inline uint8_t *fz_dup(const uint8_t *data, size_t size)
{
    uint8_t *p = fz_alloc(size, 1);
    if (size)
        memcpy(p, data, size);
    return p;
}

/* Reader: yields zeros once the input is used up, so every input is a valid program. */
typedef struct {
    const uint8_t *p;
    size_t left;
} fz_reader;

static inline uint8_t fz_u8(fz_reader *r)
{
    if (r->left == 0)
        return 0;
    r->left--;
    return *r->p++;
}

static inline uint32_t fz_u32(fz_reader *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = (v << 8) | fz_u8(r);
    return v;
}

/* Up to n bytes copied into an exact-size allocation of n bytes (zero filled). */
static inline uint8_t *fz_bytes(fz_reader *r, size_t n)
{
    uint8_t *p = fz_alloc(n, 1);
    if (n)
        memset(p, 0, n);
    size_t take = n < r->left ? n : r->left;
    if (take)
        memcpy(p, r->p, take);
    r->p += take;
    r->left -= take;
    return p;
}

/* A result's arrays as exact-size allocations (numpmid and nvalues set), so ASan flags
 * a write past any of them; fz_result_free releases them. */
static inline void fz_result_alloc(pcp_result *r, int32_t numpmid, int32_t nvalues)
{
    size_t np = (size_t)numpmid, nv = (size_t)nvalues;
    memset(r, 0, sizeof *r);
    r->pmid = fz_alloc(np, sizeof *r->pmid);
    r->numval = fz_alloc(np, sizeof *r->numval);
    r->valfmt = fz_alloc(np, sizeof *r->valfmt);
    r->first = fz_alloc(np, sizeof *r->first);
    r->inst = fz_alloc(nv, sizeof *r->inst);
    r->vtype = fz_alloc(nv, sizeof *r->vtype);
    r->ival = fz_alloc(nv, sizeof *r->ival);
    r->dval = fz_alloc(nv, sizeof *r->dval);
    r->boff = fz_alloc(nv, sizeof *r->boff);
    r->blen = fz_alloc(nv, sizeof *r->blen);
    r->numpmid = numpmid;
    r->nvalues = nvalues;
}

static inline void fz_result_free(pcp_result *r)
{
    free(r->pmid);
    free(r->numval);
    free(r->valfmt);
    free(r->first);
    free(r->inst);
    free(r->vtype);
    free(r->ival);
    free(r->dval);
    free(r->boff);
    free(r->blen);
}

#endif
