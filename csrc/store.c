/* pmStore encoding: packs pmValueSets and pmValueBlocks into a classic RESULT PDU with
 * the strict layout pmcd enforces (blocks contiguous, in value order, after the sets). */
#include "store.h"
#include "cursor.h"

#define CLIENT_PDU_MAX 65536

/* Payload bytes of a block: numbers become big-endian, other types are copied. */
static void write_payload(pcp_writer *w, int32_t vtype, const uint8_t *p, uint32_t n)
{
    uint32_t u32;
    uint64_t u64;
    switch (vtype) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
    case PM_TYPE_FLOAT:
        memcpy(&u32, p, 4);
        pcp_write_u32(w, u32);
        break;
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
        memcpy(&u64, p, 8);
        pcp_write_u64(w, u64);
        break;
    default:
        pcp_write_bytes(w, p, n, 1);
        break;
    }
}

static uint32_t numeric_size(int32_t vtype)
{
    int size = pcp_type_size((uint32_t)vtype);  /* 0 for STRING and the rest */
    return size > 0 ? (uint32_t)size : 0;
}

int pcp_store_encode(uint8_t *buf, size_t cap, int32_t from, int64_t sec, int64_t usec,
                     int32_t numpmid, const uint32_t *pmid, const int32_t *numval,
                     const int32_t *valfmt, const int32_t *inst, const int32_t *lval,
                     const int32_t *vtype, const uint32_t *poff, const uint32_t *plen,
                     const uint8_t *payload, size_t payload_len)
{
    if (numpmid < 1)
        return PM_ERR_TOOSMALL;
    if (numpmid > CLIENT_PDU_MAX / 8)
        return PM_ERR_TOOBIG;

    /* Validate and size everything before writing a byte. */
    int64_t nvalues = 0;
    size_t sets_bytes = 24;
    size_t block_bytes = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        if (numval[i] < 1)
            return PM_ERR_VALUE;
        if (valfmt[i] != PM_VAL_INSITU && valfmt[i] != PM_VAL_DPTR && valfmt[i] != PM_VAL_SPTR)
            return PM_ERR_CONV;
        if (numval[i] > CLIENT_PDU_MAX / 8)
            return PM_ERR_TOOBIG;
        sets_bytes += 12 + 8 * (size_t)numval[i];
        for (int32_t j = 0; j < numval[i]; j++, nvalues++) {
            if (valfmt[i] == PM_VAL_INSITU)
                continue;
            uint32_t need = numeric_size(vtype[nvalues]);
            uint32_t n = need ? need : plen[nvalues];
            if (need && plen[nvalues] < need)
                return PM_ERR_CONV;
            if (poff[nvalues] > payload_len || payload_len - poff[nvalues] < n)
                return PM_ERR_TOOBIG;
            if (vtype[nvalues] < 0 || vtype[nvalues] > 255 || n > 0xffffffu - 4)
                return PM_ERR_TYPE;
            block_bytes += pcp_pad4(4 + (size_t)n);
        }
        if (sets_bytes + block_bytes > CLIENT_PDU_MAX)
            return PM_ERR_TOOBIG;
    }

    pcp_writer w = pcp_writer_at(buf, cap);
    pcp_write_u32(&w, 0);
    pcp_write_i32(&w, PDU_RESULT);
    pcp_write_i32(&w, from);
    pcp_write_i32(&w, (int32_t)sec);
    pcp_write_i32(&w, (int32_t)usec);
    pcp_write_i32(&w, numpmid);
    size_t next_block = sets_bytes; /* byte offset of the next value block */
    int64_t k = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        pcp_write_u32(&w, pmid[i]);
        pcp_write_i32(&w, numval[i]);
        pcp_write_i32(&w, valfmt[i]);
        for (int32_t j = 0; j < numval[i]; j++, k++) {
            pcp_write_i32(&w, inst[k]);
            if (valfmt[i] == PM_VAL_INSITU) {
                pcp_write_i32(&w, lval[k]);
                continue;
            }
            uint32_t need = numeric_size(vtype[k]);
            uint32_t n = need ? need : plen[k];
            pcp_write_u32(&w, (uint32_t)(next_block / 4));
            next_block += pcp_pad4(4 + (size_t)n);
        }
    }
    k = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        for (int32_t j = 0; j < numval[i]; j++, k++) {
            if (valfmt[i] == PM_VAL_INSITU)
                continue;
            uint32_t need = numeric_size(vtype[k]);
            uint32_t n = need ? need : plen[k];
            pcp_write_u32(&w, ((uint32_t)vtype[k] << 24) | (4 + n));
            write_payload(&w, vtype[k], payload + poff[k], n);
        }
    }
    if (w.pos > CLIENT_PDU_MAX || w.bad)
        return PM_ERR_TOOBIG;
    pcp_patch_u32(&w, 0, (uint32_t)w.pos);
    return (int)w.pos;
}
