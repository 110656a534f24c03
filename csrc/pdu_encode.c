/* Request encoders. Every encoder writes through the checked writer and returns the
 * length it needs, so Python can size the buffer with a first call on NULL. */
#include "pdu.h"
#include "cursor.h"

/* pmcd drops a client whose PDU exceeds its 64 KiB ceiling (pmcd -L default). */
#define CLIENT_PDU_MAX 65536

static void write_header(pcp_writer *w, int32_t type, int32_t from)
{
    pcp_write_u32(w, 0); /* length, patched by finish() */
    pcp_write_i32(w, type);
    pcp_write_i32(w, from);
}

static int finish(pcp_writer *w)
{
    if (w->pos > CLIENT_PDU_MAX)
        return PM_ERR_TOOBIG;
    if (w->bad)
        return PM_ERR_TOOBIG;
    pcp_patch_u32(w, 0, (uint32_t)w->pos);
    return (int)w->pos;
}

int pcp_pdu_encode_creds(uint8_t *buf, size_t cap, int32_t from, uint32_t flags)
{
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_CREDS, from);
    pcp_write_i32(&w, 1);                                   /* numcreds */
    pcp_write_u32(&w, (1u << 24) | (2u << 16) | (flags & 0xffffu)); /* CVERSION, v2 */
    return finish(&w);
}

int pcp_pdu_encode_attr(uint8_t *buf, size_t cap, int32_t from, int32_t attr,
                        const uint8_t *value, size_t vlen)
{
    if (vlen >= 4096)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_ATTR, from);
    pcp_write_i32(&w, attr);
    pcp_write_bytes(&w, value, vlen, 0); /* ATTR payloads are not padded */
    return finish(&w);
}

int pcp_pdu_encode_profile(uint8_t *buf, size_t cap, int32_t from, int32_t ctxid, int32_t g_state,
                           int32_t numprof, const uint32_t *indoms, const int32_t *states,
                           const int32_t *numinst, const int32_t *insts)
{
    if (numprof < 0 || numprof > CLIENT_PDU_MAX / 16)
        return PM_ERR_TOOBIG;
    int64_t total = 0;
    for (int32_t i = 0; i < numprof; i++) {
        if (numinst[i] < 0)
            return PM_ERR_TOOSMALL;
        total += numinst[i];
        if (total > CLIENT_PDU_MAX / 4)
            return PM_ERR_TOOBIG;
    }
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_PROFILE, from);
    pcp_write_i32(&w, ctxid);
    pcp_write_i32(&w, g_state);
    pcp_write_i32(&w, numprof);
    pcp_write_i32(&w, 0);
    for (int32_t i = 0; i < numprof; i++) {
        pcp_write_u32(&w, indoms[i]);
        pcp_write_i32(&w, states[i]);
        pcp_write_i32(&w, numinst[i]);
        pcp_write_i32(&w, 0);
    }
    for (int64_t k = 0; k < total; k++)
        pcp_write_i32(&w, insts[k]);
    return finish(&w);
}

int pcp_pdu_encode_fetch(uint8_t *buf, size_t cap, int32_t from, int highres, int32_t ctxid,
                         int32_t numpmid, const uint32_t *pmids)
{
    if (numpmid < 1)
        return PM_ERR_TOOSMALL;
    if (numpmid > (CLIENT_PDU_MAX - 28) / 4)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, highres ? PDU_HIGHRES_FETCH : PDU_FETCH, from);
    pcp_write_i32(&w, ctxid);
    pcp_write_u64(&w, 0); /* historical timeval, unused */
    pcp_write_i32(&w, numpmid);
    for (int32_t i = 0; i < numpmid; i++)
        pcp_write_u32(&w, pmids[i]);
    return finish(&w);
}

int pcp_pdu_encode_desc_req(uint8_t *buf, size_t cap, int32_t from, uint32_t pmid)
{
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_DESC_REQ, from);
    pcp_write_u32(&w, pmid);
    return finish(&w);
}

int pcp_pdu_encode_ids(uint8_t *buf, size_t cap, int32_t from, int32_t type, int32_t sts,
                       int32_t numids, const uint32_t *ids)
{
    if (numids < 1)
        return PM_ERR_TOOSMALL;
    if (numids > (CLIENT_PDU_MAX - 20) / 4)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, type, from);
    pcp_write_i32(&w, sts);
    pcp_write_i32(&w, numids);
    for (int32_t i = 0; i < numids; i++)
        pcp_write_u32(&w, ids[i]);
    return finish(&w);
}

int pcp_pdu_encode_instance_req(uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                                int32_t inst, const uint8_t *name, size_t namelen)
{
    if (namelen > CLIENT_PDU_MAX)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_INSTANCE_REQ, from);
    pcp_write_u32(&w, indom);
    pcp_write_u64(&w, 0); /* historical timeval, unused */
    pcp_write_i32(&w, inst);
    pcp_write_i32(&w, (int32_t)namelen);
    pcp_write_bytes(&w, name, namelen, 1);
    return finish(&w);
}

int pcp_pdu_encode_text_req(uint8_t *buf, size_t cap, int32_t from, uint32_t ident, int32_t type)
{
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_TEXT_REQ, from);
    pcp_write_u32(&w, ident);
    pcp_write_i32(&w, type);
    return finish(&w);
}

int pcp_pdu_encode_pmns_names(uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                              const uint8_t *names, const int32_t *lens)
{
    if (numnames < 1)
        return PM_ERR_TOOSMALL;
    if (numnames > CLIENT_PDU_MAX / 4)
        return PM_ERR_TOOBIG;
    int64_t strbytes = 0;
    for (int32_t i = 0; i < numnames; i++) {
        if (lens[i] < 0)
            return PM_ERR_TOOSMALL;
        strbytes += (int64_t)lens[i] + 1;
        if (strbytes > CLIENT_PDU_MAX)
            return PM_ERR_TOOBIG;
    }
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_PMNS_NAMES, from);
    pcp_write_i32(&w, (int32_t)strbytes);
    pcp_write_i32(&w, 0); /* numstatus: requests carry none */
    pcp_write_i32(&w, numnames);
    size_t at = 0;
    for (int32_t i = 0; i < numnames; i++) {
        pcp_write_i32(&w, lens[i]);
        pcp_write_bytes(&w, names + at, (size_t)lens[i], 1);
        at += (size_t)lens[i];
    }
    return finish(&w);
}

int pcp_pdu_encode_pmns_node(uint8_t *buf, size_t cap, int32_t from, int32_t type, int32_t subtype,
                             const uint8_t *name, size_t namelen)
{
    if (namelen > CLIENT_PDU_MAX)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, type, from);
    pcp_write_i32(&w, subtype);
    pcp_write_i32(&w, (int32_t)namelen);
    pcp_write_bytes(&w, name, namelen, 1);
    return finish(&w);
}

int pcp_pdu_encode_label_req(uint8_t *buf, size_t cap, int32_t from, int32_t ident, int32_t type)
{
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_LABEL_REQ, from);
    pcp_write_i32(&w, ident);
    pcp_write_i32(&w, type);
    return finish(&w);
}
