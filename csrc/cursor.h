/* The one checked cursor: every read of untrusted bytes goes through these helpers.
 *
 * A cursor is a {base, len, pos} triple. Each read checks the remaining length first
 * and, on a short buffer, sets the sticky `bad` flag and yields 0, so a decoder can read
 * a whole fixed part and test `bad` once. Big-endian conversion is explicit and done
 * byte by byte: no unaligned loads, no host-endianness assumptions. */
#ifndef PCP_CURSOR_H
#define PCP_CURSOR_H

#include <stdint.h>
#include <string.h>

typedef struct {
    const uint8_t *base;
    size_t len;
    size_t pos;
    int bad;
} pcp_cursor;

static inline pcp_cursor pcp_cursor_at(const uint8_t *base, size_t len, size_t pos)
{
    pcp_cursor c;
    c.base = base;
    c.len = len;
    c.pos = pos;
    c.bad = pos > len;
    return c;
}

static inline size_t pcp_cursor_left(const pcp_cursor *c)
{
    return c->bad ? 0 : c->len - c->pos;
}

static inline int pcp_cursor_need(pcp_cursor *c, size_t n)
{
    if (c->bad || c->len - c->pos < n) {
        c->bad = 1;
        return 0;
    }
    return 1;
}

static inline uint32_t pcp_load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t pcp_load_be64(const uint8_t *p)
{
    return ((uint64_t)pcp_load_be32(p) << 32) | (uint64_t)pcp_load_be32(p + 4);
}

static inline void pcp_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void pcp_store_be64(uint8_t *p, uint64_t v)
{
    pcp_store_be32(p, (uint32_t)(v >> 32));
    pcp_store_be32(p + 4, (uint32_t)v);
}

/* IEEE bit patterns (already in host order) as numbers, without aliasing casts. */
static inline float pcp_float_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline double pcp_double_from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline uint32_t pcp_read_u32(pcp_cursor *c)
{
    if (!pcp_cursor_need(c, 4))
        return 0;
    uint32_t v = pcp_load_be32(c->base + c->pos);
    c->pos += 4;
    return v;
}

static inline int32_t pcp_read_i32(pcp_cursor *c)
{
    return (int32_t)pcp_read_u32(c);
}

static inline int64_t pcp_read_i64(pcp_cursor *c)
{
    if (!pcp_cursor_need(c, 8))
        return 0;
    uint64_t v = pcp_load_be64(c->base + c->pos);
    c->pos += 8;
    return (int64_t)v;
}

/* Skip n bytes; fails (sticky) if fewer remain. */
static inline void pcp_skip(pcp_cursor *c, size_t n)
{
    if (pcp_cursor_need(c, n))
        c->pos += n;
}

/* Round a byte count up to the next multiple of 4, without overflow for n < SIZE_MAX-3. */
static inline size_t pcp_pad4(size_t n)
{
    return (n + 3) & ~(size_t)3;
}

/* Writer: the caller sizes the buffer from the encoder's return value, so writes are
 * still checked (a mismatch is a bug, reported as PM_ERR_TOOBIG, never an overflow). */
typedef struct {
    uint8_t *base;
    size_t cap;
    size_t pos;
    int bad;
} pcp_writer;

static inline pcp_writer pcp_writer_at(uint8_t *base, size_t cap)
{
    pcp_writer w;
    w.base = base;
    w.cap = base ? cap : 0;
    w.pos = 0;
    w.bad = 0;
    return w;
}

/* Counting-only writers (base == NULL) still advance pos so the size can be computed. */
static inline int pcp_writer_room(pcp_writer *w, size_t n)
{
    if (w->base == NULL || w->bad)
        return 0;
    if (w->pos > w->cap || w->cap - w->pos < n) {
        w->bad = 1;
        return 0;
    }
    return 1;
}

static inline void pcp_write_u32(pcp_writer *w, uint32_t v)
{
    if (pcp_writer_room(w, 4))
        pcp_store_be32(w->base + w->pos, v);
    w->pos += 4;
}

static inline void pcp_write_i32(pcp_writer *w, int32_t v)
{
    pcp_write_u32(w, (uint32_t)v);
}

static inline void pcp_write_u64(pcp_writer *w, uint64_t v)
{
    if (pcp_writer_room(w, 8))
        pcp_store_be64(w->base + w->pos, v);
    w->pos += 8;
}

/* Bytes followed by `fill` up to the next 4-byte boundary when pad is set. */
static inline void pcp_write_bytes(pcp_writer *w, const uint8_t *src, size_t n, int pad)
{
    size_t total = pad ? pcp_pad4(n) : n;
    if (pcp_writer_room(w, total)) {
        if (n)
            memcpy(w->base + w->pos, src, n);
        if (total > n)
            memset(w->base + w->pos + n, '~', total - n);
    }
    w->pos += total;
}

/* Patch a word already reserved at byte offset `at`. */
static inline void pcp_patch_u32(pcp_writer *w, size_t at, uint32_t v)
{
    if (w->base != NULL && !w->bad && at + 4 <= w->cap)
        pcp_store_be32(w->base + at, v);
}

#endif
