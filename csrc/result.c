/* Value-set decoding shared by live RESULT PDUs and archive data records. */
#include "result.h"
#include "cursor.h"

/* Inlined where a loop calls it per value (a fetch checks every block it indexes). */
#if defined(__GNUC__)
#define PCP_HOT_INLINE static inline __attribute__((always_inline))
#else
#define PCP_HOT_INLINE static inline
#endif

/* Locate and check the value block that DPTR word `word` points at. On success the
 * payload is [*payload_off, *payload_off + *payload_len) and lies after the value sets
 * (which end at sets_end <= len <= UINT32_MAX, as every caller ensures). */
PCP_HOT_INLINE int locate_block(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                                size_t sets_end, int32_t word, uint32_t *vtype,
                                size_t *payload_off, uint32_t *payload_len)
{
    if (word < 0)
        return -1;
    /* no overflow: |block_base| and 4 * word are well inside int64 */
    int64_t off = layout->block_base + 4 * (int64_t)word;
    /* at or after the sets' end (so not negative), its 4-byte header inside buf */
    if (off < (int64_t)sets_end || (uint64_t)off + 4 > len)
        return -1;
    uint32_t header = pcp_load_be32(buf + off);
    uint32_t vlen = header & 0xffffffu;
    *vtype = header >> 24;
    /* pcp_block_min_len is at least the 4-byte header */
    if (vlen > len - (size_t)off || vlen < pcp_block_min_len(*vtype))
        return -1;
    *payload_off = (size_t)off + 4;
    *payload_len = vlen - 4;
    return 0;
}

/* Value k of `out`: a value in a block (type vtype, payload at poff, plen bytes long,
 * checked by locate_block), its number decoded from the payload. Offsets are stored as
 * 32 bits: buffers beyond 4 GiB are refused by the callers. */
static void store_block_value(const uint8_t *buf, pcp_result *out, int32_t k, int32_t inst,
                              uint32_t vtype, size_t poff, uint32_t plen)
{
    out->inst[k] = inst;
    out->vtype[k] = (int32_t)vtype;
    out->boff[k] = (uint32_t)poff;
    out->blen[k] = plen;
    out->ival[k] = 0;
    out->dval[k] = 0.0;
    const uint8_t *p = buf + poff;
    switch (vtype) {
    case PM_TYPE_32:
        out->ival[k] = (int32_t)pcp_load_be32(p);
        break;
    case PM_TYPE_U32:
        out->ival[k] = (int64_t)pcp_load_be32(p);
        break;
    case PM_TYPE_64:
    case PM_TYPE_U64:
        out->ival[k] = (int64_t)pcp_load_be64(p);
        break;
    case PM_TYPE_FLOAT:
        out->dval[k] = (double)pcp_float_from_bits(pcp_load_be32(p));
        break;
    case PM_TYPE_DOUBLE:
        out->dval[k] = pcp_double_from_bits(pcp_load_be64(p));
        break;
    default:
        break;
    }
}

static void store_insitu_value(pcp_result *out, int32_t k, int32_t inst, int32_t word)
{
    out->inst[k] = inst;
    out->vtype[k] = -1;
    out->ival[k] = word;
    out->dval[k] = 0.0;
    out->boff[k] = 0;
    out->blen[k] = 0;
}

/* The next value of a set (its instance and word at the cursor), stored as value k of
 * `out`: an INSITU word, or the block its DPTR word points at, checked. Returns 0 or
 * -1. */
static int take_value(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                      size_t sets_end, pcp_cursor *c, int32_t valfmt, pcp_result *out,
                      int32_t k)
{
    int32_t inst = pcp_read_i32(c);
    int32_t word = pcp_read_i32(c);
    if (c->bad)
        return -1;
    if (valfmt == PM_VAL_INSITU) {
        store_insitu_value(out, k, inst, word);
        return 0;
    }
    uint32_t vtype, plen;
    size_t poff;
    if (locate_block(buf, len, layout, sets_end, word, &vtype, &poff, &plen) < 0)
        return -1;
    store_block_value(buf, out, k, inst, vtype, poff, plen);
    return 0;
}

/* One value set's header read and its values stepped over, checked: the pmid and numval
 * (its values, when > 0, lie in the buffer with a valid valfmt). Returns 0 or -1. */
static int skip_set(pcp_cursor *c, uint32_t *pmid, int32_t *numval)
{
    *pmid = pcp_read_u32(c);
    *numval = pcp_read_i32(c);
    if (c->bad)
        return -1;
    if (*numval <= 0)
        return 0;
    int32_t valfmt = pcp_read_i32(c);
    if (c->bad || valfmt < PM_VAL_INSITU || valfmt > PM_VAL_SPTR)
        return -1;
    if ((size_t)*numval > pcp_cursor_left(c) / 8)
        return -1;
    pcp_skip(c, (size_t)*numval * 8);
    return c->bad ? -1 : 0;
}

/* What a walk with `out` fills: the per-set columns, the per-value ones, or both. Every
 * walk checks the same (every set, value word and block), whatever it fills. */
enum { FILL_SETS = 1, FILL_VALUES = 2, FILL_ALL = FILL_SETS | FILL_VALUES };

/* Walk the value sets once. With out == NULL only validate and count; otherwise fill
 * the columns `fill` names. With `sized`, out is bound for exactly out->numpmid sets and
 * out->nvalues values: when the bytes hold another number, nothing is filled,
 * *nvalues_out gets the count and PCP_RESULT_RESIZE is returned. */
static int walk_valuesets(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                          int bad, int32_t *nvalues_out, pcp_result *out, int sized,
                          int fill)
{
    pcp_result *sets_out = (fill & FILL_SETS) ? out : NULL;
    pcp_result *values_out = (fill & FILL_VALUES) ? out : NULL;
    if (layout->numpmid < 0 || layout->sets_off > len)
        return bad;
    /* Each set takes at least 8 bytes: bound numpmid before trusting it. */
    if ((size_t)layout->numpmid > (len - layout->sets_off) / 8)
        return bad;

    /* Pass 1: the set headers and value words, to find where the sets end (skip_set's
     * checks, as plain loads: a fetch walks every set of every result). */
    size_t at = layout->sets_off;
    int64_t total = 0;
    for (int32_t i = 0; i < layout->numpmid; i++) {
        if (len - at < 8)
            return bad;
        int32_t numval = (int32_t)pcp_load_be32(buf + at + 4);
        at += 8;
        if (numval <= 0)
            continue;
        if (len - at < 4)
            return bad;
        int32_t valfmt = (int32_t)pcp_load_be32(buf + at);
        at += 4;
        if (valfmt < PM_VAL_INSITU || valfmt > PM_VAL_SPTR)
            return bad;
        if ((size_t)numval > (len - at) / 8)
            return bad;
        at += (size_t)numval * 8;
        total += numval;
    }
    if (total > INT32_MAX)
        return bad;
    if (sized && (out->numpmid != layout->numpmid || out->nvalues != (int32_t)total)) {
        *nvalues_out = (int32_t)total;
        return PCP_RESULT_RESIZE;
    }
    size_t sets_end = at;
    uint64_t blocks_bytes = 0;           /* strict layout: sum of pad4(vlen) */
    size_t lowest_block = len;           /* strict layout: the first block's offset */

    /* Pass 2: every value, checking each block it points at. Pass 1 has walked the same
     * set headers and value words and found them all inside [sets_off, sets_end): they
     * are loaded here without checking the room again. */
    size_t pos = layout->sets_off;
    int32_t k = 0;
    for (int32_t i = 0; i < layout->numpmid; i++) {
        uint32_t pmid = pcp_load_be32(buf + pos);
        int32_t numval = (int32_t)pcp_load_be32(buf + pos + 4);
        pos += 8;
        int32_t valfmt = PM_VAL_INSITU; /* libpcp leaves it unset when there are no values */
        if (numval > 0) {
            valfmt = (int32_t)pcp_load_be32(buf + pos);
            pos += 4;
        }
        if (sets_out) {
            sets_out->pmid[i] = pmid;
            sets_out->numval[i] = numval;
            sets_out->valfmt[i] = valfmt;
            sets_out->first[i] = k;
        }
        if (numval <= 0)
            continue;
        if ((size_t)numval > (sets_end - pos) / 8)
            return bad;                 /* cannot be: pass 1 read these bytes */
        if (valfmt == PM_VAL_INSITU) {
            /* nothing to check in an INSITU word: an index (no values_out) steps over */
            if (values_out)
                for (int32_t j = 0; j < numval; j++)
                    store_insitu_value(values_out, k + j,
                                       (int32_t)pcp_load_be32(buf + pos + 8 * (size_t)j),
                                       (int32_t)pcp_load_be32(buf + pos + 8 * (size_t)j + 4));
            pos += 8 * (size_t)numval;
            k += numval;
            continue;
        }
        if (!values_out && !layout->strict) {
            /* a live fetch's index: each block checked, nothing stored */
            for (const uint8_t *w = buf + pos + 4, *end = w + 8 * (size_t)numval; w < end;
                 w += 8) {
                uint32_t vtype, plen;
                size_t poff;
                if (locate_block(buf, len, layout, sets_end, (int32_t)pcp_load_be32(w), &vtype,
                                 &poff, &plen) < 0)
                    return bad;
            }
            pos += 8 * (size_t)numval;
            k += numval;
            continue;
        }
        for (int32_t j = 0; j < numval; j++, k++) {
            int32_t inst = (int32_t)pcp_load_be32(buf + pos);
            int32_t word = (int32_t)pcp_load_be32(buf + pos + 4);
            pos += 8;
            uint32_t vtype, plen;
            size_t poff;
            if (locate_block(buf, len, layout, sets_end, word, &vtype, &poff, &plen) < 0)
                return bad;
            if (layout->strict) {
                blocks_bytes += pcp_pad4((size_t)plen + 4);
                if (poff - 4 < lowest_block)
                    lowest_block = poff - 4;
            }
            if (values_out)
                store_block_value(buf, values_out, k, inst, vtype, poff, plen);
        }
    }
    if (pos != sets_end)
        return bad;                     /* cannot be: the same walk as pass 1 */
    /* libpcp accepts a record only if its blocks start right after the value sets and
     * their padded sizes add up to the rest of the record: no gaps, no sharing. */
    if (layout->strict &&
        (sets_end + blocks_bytes != len || (blocks_bytes > 0 && lowest_block != sets_end)))
        return bad;
    if (nvalues_out)
        *nvalues_out = (int32_t)total;
    if (out) {
        out->numpmid = layout->numpmid;
        out->nvalues = (int32_t)total;
    }
    return 0;
}

size_t pcp_result_mem_size(int32_t numpmid, int32_t nvalues)
{
    size_t np = numpmid > 0 ? (size_t)numpmid : 1;
    size_t nv = nvalues > 0 ? (size_t)nvalues : 1;
    return nv * 32 + np * 16;
}

void pcp_result_bind(pcp_result *out, void *mem, int32_t numpmid, int32_t nvalues)
{
    size_t np = numpmid > 0 ? (size_t)numpmid : 1;
    size_t nv = nvalues > 0 ? (size_t)nvalues : 1;
    uint8_t *m = mem;
    out->ival = (int64_t *)(void *)m;
    out->dval = (double *)(void *)(m + nv * 8);
    out->inst = (int32_t *)(void *)(m + nv * 16);
    out->vtype = (int32_t *)(void *)(m + nv * 20);
    out->boff = (uint32_t *)(void *)(m + nv * 24);
    out->blen = (uint32_t *)(void *)(m + nv * 28);
    m += nv * 32;
    out->pmid = (uint32_t *)(void *)m;
    out->numval = (int32_t *)(void *)(m + np * 4);
    out->valfmt = (int32_t *)(void *)(m + np * 8);
    out->first = (int32_t *)(void *)(m + np * 12);
}

int pcp_result_valuesets_scan(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                              int bad, int32_t *nvalues)
{
    if (len > UINT32_MAX)
        return bad;
    return walk_valuesets(buf, len, layout, bad, nvalues, NULL, 0, 0);
}

int pcp_result_valuesets_decode(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                                int bad, pcp_result *out)
{
    if (len > UINT32_MAX || out == NULL)
        return bad;
    return walk_valuesets(buf, len, layout, bad, NULL, out, 0, FILL_ALL);
}

int pcp_result_valuesets_keep(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                              int bad, pcp_pmid_filter keep, const void *keep_ctx,
                              int32_t *nsets, int32_t *nvalues, pcp_result *out)
{
    if (len > UINT32_MAX || layout->numpmid < 0 || layout->sets_off > len)
        return bad;
    if ((size_t)layout->numpmid > (len - layout->sets_off) / 8)
        return bad;
    /* The set headers first: where the sets end (blocks lie beyond), what is kept. */
    pcp_cursor c = pcp_cursor_at(buf, len, layout->sets_off);
    int64_t kept_sets = 0, kept_values = 0;
    for (int32_t i = 0; i < layout->numpmid; i++) {
        uint32_t pmid;
        int32_t numval;
        if (skip_set(&c, &pmid, &numval) < 0)
            return bad;
        int take = keep(keep_ctx, pmid) != 0;
        kept_sets += take;
        if (take && numval > 0)
            kept_values += numval;
    }
    if (c.bad || kept_values > INT32_MAX)
        return bad;
    if (out == NULL) {
        *nsets = (int32_t)kept_sets;
        *nvalues = (int32_t)kept_values;
        return 0;
    }
    if (kept_sets > *nsets || kept_values > *nvalues)
        return bad;     /* not the bytes (or the filter) that were counted */
    size_t sets_end = c.pos;
    c = pcp_cursor_at(buf, len, layout->sets_off);
    int32_t s = 0, k = 0;
    for (int32_t i = 0; i < layout->numpmid; i++) {
        uint32_t pmid = pcp_read_u32(&c);
        int32_t numval = pcp_read_i32(&c);
        int32_t valfmt = numval > 0 ? pcp_read_i32(&c) : PM_VAL_INSITU;
        if (c.bad)
            return bad;
        if (!keep(keep_ctx, pmid)) {
            if (numval > 0)
                pcp_skip(&c, (size_t)numval * 8);
            continue;
        }
        out->pmid[s] = pmid;
        out->numval[s] = numval;
        out->valfmt[s] = valfmt;
        out->first[s] = k;
        s++;
        for (int32_t j = 0; j < numval; j++, k++) {
            if (take_value(buf, len, layout, sets_end, &c, valfmt, out, k) < 0)
                return bad;
        }
    }
    if (c.bad)
        return bad;
    out->numpmid = s;
    out->nvalues = k;
    return 0;
}

/* Fixed part of RESULT / HIGHRES_RESULT: header already checked by the caller's framing,
 * but re-checked here so the decoder stands alone (fuzzing, archives). */
static int result_fixed_part(const uint8_t *buf, size_t len, int highres,
                             pcp_sets_layout *layout, int64_t *sec, int64_t *nsec)
{
    pcp_cursor c = pcp_cursor_at(buf, len, 0);
    int32_t plen = pcp_read_i32(&c);
    int32_t type = pcp_read_i32(&c);
    pcp_skip(&c, 4);
    if (c.bad || plen < 0 || (size_t)plen != len)
        return PM_ERR_IPC;
    if (type != (highres ? PDU_HIGHRES_RESULT : PDU_RESULT))
        return PM_ERR_IPC;
    int32_t numpmid;
    if (highres) {
        numpmid = pcp_read_i32(&c);
        *sec = pcp_read_i64(&c);
        *nsec = pcp_read_i64(&c);
    } else {
        *sec = pcp_read_i32(&c);
        *nsec = pcp_usec_to_nsec(pcp_read_u32(&c));
        numpmid = pcp_read_i32(&c);
    }
    if (c.bad || numpmid < 0 || (size_t)numpmid > len)
        return PM_ERR_IPC;
    layout->sets_off = c.pos;
    layout->numpmid = numpmid;
    layout->block_base = 0;
    layout->strict = 0;
    return 0;
}

int pcp_result_pdu_scan(const uint8_t *buf, size_t len, int highres,
                        int32_t *numpmid, int32_t *nvalues)
{
    pcp_sets_layout layout;
    int64_t sec, nsec;
    int sts = result_fixed_part(buf, len, highres, &layout, &sec, &nsec);
    if (sts < 0)
        return sts;
    *numpmid = layout.numpmid;
    return pcp_result_valuesets_scan(buf, len, &layout, PM_ERR_IPC, nvalues);
}

int pcp_result_pdu_decode(const uint8_t *buf, size_t len, int highres, pcp_result *out)
{
    pcp_sets_layout layout;
    int sts = result_fixed_part(buf, len, highres, &layout, &out->sec, &out->nsec);
    if (sts < 0)
        return sts;
    return pcp_result_valuesets_decode(buf, len, &layout, PM_ERR_IPC, out);
}

/* The sized walks of a RESULT PDU: decode_sized (fill FILL_ALL) and index_sized
 * (FILL_SETS). */
static int pdu_walk_sized(const uint8_t *buf, size_t len, int highres, pcp_result *out,
                          int32_t *numpmid, int32_t *nvalues, int fill)
{
    pcp_sets_layout layout;
    if (out == NULL || numpmid == NULL || nvalues == NULL || len > UINT32_MAX)
        return PM_ERR_IPC;
    int sts = result_fixed_part(buf, len, highres, &layout, &out->sec, &out->nsec);
    if (sts < 0)
        return sts;
    *numpmid = layout.numpmid;
    *nvalues = out->nvalues;
    return walk_valuesets(buf, len, &layout, PM_ERR_IPC, nvalues, out, 1, fill);
}

int pcp_result_pdu_decode_sized(const uint8_t *buf, size_t len, int highres, pcp_result *out,
                                int32_t *numpmid, int32_t *nvalues)
{
    return pdu_walk_sized(buf, len, highres, out, numpmid, nvalues, FILL_ALL);
}

int pcp_result_pdu_index_sized(const uint8_t *buf, size_t len, int highres, pcp_result *out,
                               int32_t *numpmid, int32_t *nvalues)
{
    return pdu_walk_sized(buf, len, highres, out, numpmid, nvalues, FILL_SETS);
}

int pcp_result_pdu_fill_values(const uint8_t *buf, size_t len, int highres, pcp_result *out)
{
    int32_t numpmid, nvalues;
    if (out == NULL)
        return PM_ERR_IPC;
    /* the walk's timestamp goes to a copy: out's (a caller's to edit) stays as it is */
    pcp_result stamp = *out;
    int sts = pdu_walk_sized(buf, len, highres, &stamp, &numpmid, &nvalues, FILL_VALUES);
    if (sts == PCP_RESULT_RESIZE)
        return PM_ERR_IPC;              /* not the bytes that were indexed */
    return sts;
}
