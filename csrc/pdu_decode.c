/* Framing and decoders for the small reply PDUs (everything but RESULT). */
#include "pdu.h"
#include "cursor.h"

int32_t pcp_pdu_header(const uint8_t *buf, size_t len, int32_t *type, int32_t *from)
{
    pcp_cursor c = pcp_cursor_at(buf, len, 0);
    int32_t plen = pcp_read_i32(&c);
    int32_t ptype = pcp_read_i32(&c);
    int32_t pfrom = pcp_read_i32(&c);
    if (c.bad || plen < PDU_HEADER_LEN || plen > PDU_MAX_LEN || ptype < 0)
        return PM_ERR_IPC;
    *type = ptype;
    *from = pfrom;
    return plen;
}

/* Common start of every decoder: the header must describe exactly these bytes. */
static int expect(pcp_cursor *c, const uint8_t *buf, size_t len, int32_t want_type)
{
    *c = pcp_cursor_at(buf, len, 0);
    int32_t plen = pcp_read_i32(c);
    int32_t type = pcp_read_i32(c);
    pcp_skip(c, 4);
    if (c->bad || plen < PDU_HEADER_LEN || (size_t)plen != len || type != want_type)
        return PM_ERR_IPC;
    return 0;
}

int pcp_pdu_decode_error(const uint8_t *buf, size_t len, int32_t *code, uint32_t *datum)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_ERROR) < 0 || (len != 16 && len != 20))
        return PM_ERR_IPC;
    *code = pcp_read_i32(&c);
    *datum = len == 20 ? pcp_read_u32(&c) : 0;
    return c.bad ? PM_ERR_IPC : 0;
}

static void read_desc(pcp_cursor *c, pcp_desc *d)
{
    d->pmid = pcp_read_u32(c);
    d->type = pcp_read_i32(c);
    d->indom = pcp_read_u32(c);
    d->sem = pcp_read_i32(c);
    d->units = pcp_read_u32(c);
}

int pcp_pdu_decode_desc(const uint8_t *buf, size_t len, pcp_desc *out)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_DESC) < 0 || len != 32)
        return PM_ERR_IPC;
    read_desc(&c, out);
    return c.bad ? PM_ERR_IPC : 0;
}

int pcp_pdu_decode_descs(const uint8_t *buf, size_t len, int32_t expected, pcp_desc *out)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_DESCS) < 0)
        return PM_ERR_IPC;
    int32_t n = pcp_read_i32(&c);
    if (c.bad || n < 0 || n != expected || (size_t)n > (len - 16) / 20 ||
        len != 16 + 20 * (size_t)n)
        return PM_ERR_IPC;
    for (int32_t i = 0; i < n; i++)
        read_desc(&c, &out[i]);
    return c.bad ? PM_ERR_IPC : n;
}

/* A length-prefixed name padded to 4 bytes: checks it fits, returns its offset. */
static int read_name(pcp_cursor *c, int32_t namelen, uint32_t *off)
{
    if (namelen < 0 || (size_t)namelen > pcp_cursor_left(c)) {
        c->bad = 1;
        return -1;
    }
    *off = (uint32_t)c->pos;
    size_t padded = pcp_pad4((size_t)namelen);
    /* The final name may end the PDU without its padding: libpcp only needs the name. */
    if (padded > pcp_cursor_left(c))
        padded = (size_t)namelen;
    pcp_skip(c, padded);
    return 0;
}

int pcp_pdu_decode_instance(const uint8_t *buf, size_t len, uint32_t *indom, int32_t cap,
                            int32_t *inst, uint32_t *name_off, int32_t *name_len)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_INSTANCE) < 0 || len > UINT32_MAX)
        return PM_ERR_IPC;
    *indom = pcp_read_u32(&c);
    int32_t numinst = pcp_read_i32(&c);
    if (c.bad || numinst < 0 || (size_t)numinst > pcp_cursor_left(&c) / 8 || numinst > cap)
        return PM_ERR_IPC;
    for (int32_t i = 0; i < numinst; i++) {
        inst[i] = pcp_read_i32(&c);
        int32_t nlen = pcp_read_i32(&c);
        if (c.bad || read_name(&c, nlen, &name_off[i]) < 0)
            return PM_ERR_IPC;
        name_len[i] = nlen;
    }
    if (c.bad || c.pos != len)
        return PM_ERR_IPC;
    return numinst;
}

int pcp_pdu_decode_text(const uint8_t *buf, size_t len, uint32_t *off, int32_t *tlen)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_TEXT) < 0 || len > UINT32_MAX)
        return PM_ERR_IPC;
    pcp_skip(&c, 4); /* ident: pmcd sends it in its own byte order, so it is ignored */
    int32_t n = pcp_read_i32(&c);
    if (c.bad || n < 0 || (size_t)n > pcp_cursor_left(&c))
        return PM_ERR_IPC;
    *off = (uint32_t)c.pos;
    *tlen = n;
    return 0;
}

int pcp_pdu_decode_pmns_ids(const uint8_t *buf, size_t len, int32_t *sts, int32_t cap,
                            uint32_t *ids)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_PMNS_IDS) < 0)
        return PM_ERR_IPC;
    *sts = pcp_read_i32(&c);
    int32_t n = pcp_read_i32(&c);
    if (c.bad || n < 1 || n > cap || (size_t)n > pcp_cursor_left(&c) / 4 ||
        len != 20 + 4 * (size_t)n)
        return PM_ERR_IPC;
    for (int32_t i = 0; i < n; i++)
        ids[i] = pcp_read_u32(&c);
    return c.bad ? PM_ERR_IPC : n;
}

int pcp_pdu_decode_pmns_names(const uint8_t *buf, size_t len, int32_t cap, int32_t *has_status,
                              int32_t *status, uint32_t *name_off, int32_t *name_len)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_PMNS_NAMES) < 0 || len > UINT32_MAX)
        return PM_ERR_IPC;
    int32_t nstrbytes = pcp_read_i32(&c);
    int32_t numstatus = pcp_read_i32(&c);
    int32_t numnames = pcp_read_i32(&c);
    if (c.bad || nstrbytes < 0 || (size_t)nstrbytes > len || numnames < 0 || numnames > cap)
        return PM_ERR_IPC;
    if (numstatus != 0 && numstatus != numnames)
        return PM_ERR_IPC;
    size_t entry_min = numstatus ? 8 : 4;
    if ((size_t)numnames > pcp_cursor_left(&c) / entry_min)
        return PM_ERR_IPC;
    *has_status = numstatus != 0;
    for (int32_t i = 0; i < numnames; i++) {
        if (numstatus)
            status[i] = pcp_read_i32(&c);
        int32_t nlen = pcp_read_i32(&c);
        if (c.bad || read_name(&c, nlen, &name_off[i]) < 0)
            return PM_ERR_IPC;
        name_len[i] = nlen;
    }
    return c.bad ? PM_ERR_IPC : numnames;
}

int pcp_pdu_decode_labels(const uint8_t *buf, size_t len, int32_t *ident, int32_t *type,
                          int32_t set_cap, pcp_labelset *sets, int32_t label_cap,
                          pcp_label *labels)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_LABEL) < 0 || len > UINT32_MAX)
        return PM_ERR_IPC;
    *ident = pcp_read_i32(&c);
    *type = pcp_read_i32(&c);
    pcp_skip(&c, 4); /* padding */
    int32_t nsets = pcp_read_i32(&c);
    if (c.bad || nsets < 0 || nsets > set_cap || (size_t)nsets > pcp_cursor_left(&c) / 16)
        return PM_ERR_IPC;
    int32_t used = 0;
    size_t json_end = 0;
    for (int32_t i = 0; i < nsets; i++) {
        pcp_labelset *s = &sets[i];
        s->inst = pcp_read_i32(&c);
        s->nlabels = pcp_read_i32(&c);
        int32_t json = pcp_read_i32(&c);
        s->json_len = pcp_read_i32(&c);
        s->first = used;
        if (c.bad || json < 0 || s->json_len < 0 || s->json_len >= 65535 ||
            (size_t)json > len || (size_t)s->json_len > len - (size_t)json)
            return PM_ERR_IPC;
        s->json_off = (uint32_t)json;
        if ((size_t)json + (size_t)s->json_len > json_end)
            json_end = (size_t)json + (size_t)s->json_len;
        if (s->nlabels < 0)
            continue; /* an error code for this set, no labels follow */
        if (s->nlabels >= 255 || s->nlabels > label_cap - used ||
            (size_t)s->nlabels > pcp_cursor_left(&c) / 8)
            return PM_ERR_IPC;
        for (int32_t j = 0; j < s->nlabels; j++) {
            pcp_label *l = &labels[used++];
            uint32_t w0 = pcp_read_u32(&c);
            uint32_t w1 = pcp_read_u32(&c);
            l->name = w0 >> 16;
            l->namelen = (w0 >> 8) & 0xffu;
            l->flags = w0 & 0xffu;
            l->value = w1 >> 16;
            l->valuelen = w1 & 0xffffu;
            if ((size_t)l->name + l->namelen > (size_t)s->json_len ||
                (size_t)l->value + l->valuelen > (size_t)s->json_len)
                return PM_ERR_IPC;
        }
    }
    if (c.bad)
        return PM_ERR_IPC;
    /* Nothing may follow the JSON strings beyond their padding. */
    if (nsets > 0 && json_end > 0 && len > pcp_pad4(json_end))
        return PM_ERR_IPC;
    return nsets;
}

int pcp_pdu_decode_attr(const uint8_t *buf, size_t len, int32_t *attr, uint32_t *off,
                        int32_t *vlen)
{
    pcp_cursor c;
    if (expect(&c, buf, len, PDU_ATTR) < 0 || len > UINT32_MAX)
        return PM_ERR_IPC;
    *attr = pcp_read_i32(&c);
    if (c.bad || len - 16 >= 4096)
        return PM_ERR_IPC;
    *off = 16;
    *vlen = (int32_t)(len - 16);
    return 0;
}
