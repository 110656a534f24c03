/* The agent's side of the PMDA protocol: pmcd's requests decoded, a PMDA's replies
 * encoded. Every count and length from the wire is checked against the PDU's own
 * length before it is used; the encoders size first (buf NULL) and write second. */
#include "pdu_agent.h"
#include "cursor.h"

/* A sanity ceiling for what a PMDA sends: pmcd reads agents without a size limit, but
 * no reply of ours comes near this and a length past it is a caller's bug. */
#define AGENT_PDU_MAX (64 * 1024 * 1024)
/* pmcd encodes a name (instance, PMNS node) of at most its PDU; keep a bound anyway. */
#define NAME_MAX_LEN (1 << 20)

static int finish(pcp_writer *w)
{
    if (w->bad || w->pos > AGENT_PDU_MAX)
        return PM_ERR_TOOBIG;
    pcp_patch_u32(w, 0, (uint32_t)w->pos);
    return (int)w->pos;
}

static void write_header(pcp_writer *w, int32_t type, int32_t from)
{
    pcp_write_u32(w, 0); /* patched by finish() */
    pcp_write_i32(w, type);
    pcp_write_i32(w, from);
}

/* A name of namelen bytes padded to 4, which must end the PDU exactly. */
static int read_tail_name(pcp_cursor *c, pcp_agent_request *out)
{
    int32_t namelen = pcp_read_i32(c);
    if (c->bad || namelen < 0 || namelen > NAME_MAX_LEN)
        return PM_ERR_IPC;
    size_t padded = pcp_pad4((size_t)namelen);
    if (pcp_cursor_left(c) != padded)
        return PM_ERR_IPC;
    out->name_off = (uint32_t)c->pos;
    out->name_len = namelen;
    return 0;
}

int pcp_agent_decode_request(const uint8_t *buf, size_t len, pcp_agent_request *out)
{
    memset(out, 0, sizeof(*out));
    if (len < PDU_HEADER_LEN || len > (size_t)PDU_MAX_LEN)
        return PM_ERR_IPC;
    pcp_cursor c = pcp_cursor_at(buf, len, 0);
    uint32_t length = pcp_read_u32(&c);
    int32_t type = pcp_read_i32(&c);
    int32_t from = pcp_read_i32(&c);
    if (length != len || type < 0)
        return PM_ERR_IPC;
    out->type = type;
    out->sender = from;
    switch (type) {
    case PDU_CREDS: {
        int32_t numcreds = pcp_read_i32(&c);
        if (c.bad || numcreds < 1 || pcp_cursor_left(&c) != 4 * (size_t)numcreds)
            return PM_ERR_IPC;
        uint32_t cred = pcp_read_u32(&c);
        out->c = (int32_t)(cred >> 24);          /* c_type */
        out->a = (int32_t)((cred >> 16) & 0xff); /* c_version */
        out->b = (int32_t)(cred & 0xffff);       /* c_flags */
        break;
    }
    case PDU_ERROR:
        out->a = pcp_read_i32(&c);
        if (c.bad || (len != 16 && len != 20))
            return PM_ERR_IPC;
        break;
    case PDU_DESC_REQ:
        out->ident = pcp_read_u32(&c);
        if (c.bad || len != 16)
            return PM_ERR_IPC;
        break;
    case PDU_TEXT_REQ:
    case PDU_LABEL_REQ:
        out->ident = pcp_read_u32(&c);
        out->a = pcp_read_i32(&c);
        if (c.bad || len != 20)
            return PM_ERR_IPC;
        break;
    case PDU_INSTANCE_REQ:
        out->ident = pcp_read_u32(&c);
        pcp_skip(&c, 8); /* historical timestamp */
        out->a = pcp_read_i32(&c);
        return read_tail_name(&c, out) < 0 ? PM_ERR_IPC : type;
    case PDU_PMNS_CHILD:
    case PDU_PMNS_TRAVERSE:
        out->a = pcp_read_i32(&c);
        return read_tail_name(&c, out) < 0 ? PM_ERR_IPC : type;
    case PDU_PMNS_IDS: {
        out->a = pcp_read_i32(&c);
        int32_t numids = pcp_read_i32(&c);
        if (c.bad || numids < 1 || pcp_cursor_left(&c) != 4 * (size_t)numids)
            return PM_ERR_IPC;
        out->b = numids;
        out->ident = pcp_read_u32(&c);
        break;
    }
    case PDU_ATTR: {
        out->a = pcp_read_i32(&c);
        size_t n = pcp_cursor_left(&c);
        if (c.bad || n >= 4096)
            return PM_ERR_IPC;
        out->name_off = (uint32_t)c.pos;
        out->name_len = (int32_t)n;
        break;
    }
    case PDU_FETCH: {
        out->a = pcp_read_i32(&c);
        pcp_skip(&c, 8);
        int32_t numpmid = pcp_read_i32(&c);
        if (c.bad || numpmid < 1 || pcp_cursor_left(&c) != 4 * (size_t)numpmid)
            return PM_ERR_IPC;
        out->b = numpmid;
        break;
    }
    case PDU_PROFILE: {
        out->a = pcp_read_i32(&c);
        pcp_read_i32(&c); /* g_state: pcp_agent_decode_profile */
        int32_t numprof = pcp_read_i32(&c);
        pcp_skip(&c, 4);
        if (c.bad || out->a < 0 || numprof < 0 || (size_t)numprof > pcp_cursor_left(&c) / 16)
            return PM_ERR_IPC;
        int64_t total = 0;
        for (int32_t i = 0; i < numprof; i++) {
            pcp_skip(&c, 8);
            int32_t n = pcp_read_i32(&c);
            pcp_skip(&c, 4);
            if (c.bad || n < 0)
                return PM_ERR_IPC;
            total += n;
            if (total > (int64_t)(len / 4))
                return PM_ERR_IPC;
        }
        if (pcp_cursor_left(&c) != 4 * (size_t)total)
            return PM_ERR_IPC;
        out->b = numprof;
        out->c = (int32_t)total;
        break;
    }
    default:
        break;
    }
    return type;
}

int pcp_agent_decode_fetch(const uint8_t *buf, size_t len, int32_t cap, uint32_t *pmids)
{
    pcp_agent_request req;
    if (pcp_agent_decode_request(buf, len, &req) != PDU_FETCH || req.b > cap)
        return PM_ERR_IPC;
    pcp_cursor c = pcp_cursor_at(buf, len, 28);
    for (int32_t i = 0; i < req.b; i++)
        pmids[i] = pcp_read_u32(&c);
    return c.bad ? PM_ERR_IPC : req.b;
}

int pcp_agent_decode_profile(const uint8_t *buf, size_t len, int32_t *g_state,
                             int32_t entry_cap, uint32_t *indoms, int32_t *states,
                             int32_t *numinst, int32_t inst_cap, int32_t *insts)
{
    pcp_agent_request req;
    if (pcp_agent_decode_request(buf, len, &req) != PDU_PROFILE || req.b > entry_cap ||
        req.c > inst_cap)
        return PM_ERR_IPC;
    pcp_cursor c = pcp_cursor_at(buf, len, 16);
    *g_state = pcp_read_i32(&c);
    pcp_skip(&c, 8);
    for (int32_t i = 0; i < req.b; i++) {
        indoms[i] = pcp_read_u32(&c);
        states[i] = pcp_read_i32(&c);
        numinst[i] = pcp_read_i32(&c);
        pcp_skip(&c, 4);
    }
    for (int32_t k = 0; k < req.c; k++)
        insts[k] = pcp_read_i32(&c);
    return c.bad ? PM_ERR_IPC : req.b;
}

int pcp_agent_encode_error(uint8_t *buf, size_t cap, int32_t from, int32_t code)
{
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_ERROR, from);
    pcp_write_i32(&w, code);
    return finish(&w);
}

int pcp_agent_encode_desc(uint8_t *buf, size_t cap, int32_t from, uint32_t pmid, int32_t type,
                          uint32_t indom, int32_t sem, uint32_t units)
{
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_DESC, from);
    pcp_write_u32(&w, pmid);
    pcp_write_i32(&w, type);
    pcp_write_u32(&w, indom);
    pcp_write_i32(&w, sem);
    pcp_write_u32(&w, units);
    return finish(&w);
}

int pcp_agent_encode_instance(uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                              int32_t numinst, const int32_t *insts, const uint8_t *names,
                              const int32_t *lens)
{
    if (numinst < 0 || numinst > AGENT_PDU_MAX / 8)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_INSTANCE, from);
    pcp_write_u32(&w, indom);
    pcp_write_i32(&w, numinst);
    size_t at = 0;
    for (int32_t i = 0; i < numinst; i++) {
        if (lens[i] < 0 || lens[i] > NAME_MAX_LEN)
            return PM_ERR_TOOBIG;
        pcp_write_i32(&w, insts[i]);
        pcp_write_i32(&w, lens[i]);
        pcp_write_bytes(&w, names + at, (size_t)lens[i], 1);
        at += (size_t)lens[i];
        if (w.pos > AGENT_PDU_MAX)
            return PM_ERR_TOOBIG;
    }
    return finish(&w);
}

int pcp_agent_encode_text(uint8_t *buf, size_t cap, int32_t from, uint32_t ident,
                          const uint8_t *text, size_t tlen)
{
    if (tlen > AGENT_PDU_MAX)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_TEXT, from);
    /* libpcp's __pmSendText leaves ident in host order (protocol.md 5.10; its decoder
     * ignores the field): the same bytes as the PMDAs libpcp_pmda runs */
    uint8_t host[4];
    memcpy(host, &ident, 4);
    pcp_write_bytes(&w, host, 4, 0);
    pcp_write_i32(&w, (int32_t)tlen);
    pcp_write_bytes(&w, text, tlen, 1);
    return finish(&w);
}

int pcp_agent_encode_names(uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                           const uint8_t *names, const int32_t *lens, const int32_t *status)
{
    if (numnames < 0 || numnames > AGENT_PDU_MAX / 8)
        return PM_ERR_TOOBIG;
    int64_t strbytes = 0;
    for (int32_t i = 0; i < numnames; i++) {
        if (lens[i] < 0 || lens[i] > NAME_MAX_LEN)
            return PM_ERR_TOOBIG;
        strbytes += (int64_t)lens[i] + 1;
        if (strbytes > AGENT_PDU_MAX)
            return PM_ERR_TOOBIG;
    }
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_PMNS_NAMES, from);
    pcp_write_i32(&w, (int32_t)strbytes);
    pcp_write_i32(&w, status ? numnames : 0);
    pcp_write_i32(&w, numnames);
    size_t at = 0;
    for (int32_t i = 0; i < numnames; i++) {
        if (status)
            pcp_write_i32(&w, status[i]);
        pcp_write_i32(&w, lens[i]);
        pcp_write_bytes(&w, names + at, (size_t)lens[i], 1);
        at += (size_t)lens[i];
    }
    return finish(&w);
}

int pcp_agent_encode_labels(uint8_t *buf, size_t cap, int32_t from, int32_t ident,
                            int32_t type, int32_t nsets, const int32_t *inst,
                            const int32_t *nlabels, const int32_t *first,
                            const uint32_t *json_off, const int32_t *json_len,
                            const uint8_t *json, size_t json_total,
                            const uint16_t *name, const uint8_t *namelen,
                            const uint8_t *flags, const uint16_t *value,
                            const uint16_t *valuelen, int32_t nlabels_total)
{
    if (nsets < 0 || nsets > AGENT_PDU_MAX / 16)
        return PM_ERR_TOOBIG;
    /* the sets' headers and labels first: the JSON texts follow them all */
    size_t headers = 28;
    for (int32_t s = 0; s < nsets; s++) {
        int32_t n = nlabels[s] > 0 ? nlabels[s] : 0;
        if (n > 255 || first[s] < 0 || (n > 0 && first[s] > nlabels_total - n))
            return PM_ERR_TOOBIG;
        if (json_len[s] < 0 || json_len[s] >= 65535 || json_off[s] > json_total ||
            json_total - json_off[s] < (size_t)json_len[s])
            return PM_ERR_TOOBIG;
        headers += 16 + 8 * (size_t)n;
    }
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_LABEL, from);
    pcp_write_i32(&w, ident);
    pcp_write_i32(&w, type);
    pcp_write_i32(&w, 0);
    pcp_write_i32(&w, nsets);
    size_t at = headers;
    for (int32_t s = 0; s < nsets; s++) {
        int32_t n = nlabels[s] > 0 ? nlabels[s] : 0;
        pcp_write_i32(&w, inst[s]);
        pcp_write_i32(&w, nlabels[s]);
        pcp_write_u32(&w, (uint32_t)at);
        pcp_write_i32(&w, json_len[s]);
        for (int32_t j = first[s]; j < first[s] + n; j++) {
            pcp_write_u32(&w, ((uint32_t)name[j] << 16) | ((uint32_t)namelen[j] << 8) | flags[j]);
            pcp_write_u32(&w, ((uint32_t)value[j] << 16) | valuelen[j]);
        }
        at += (size_t)json_len[s];
        if (at > AGENT_PDU_MAX)
            return PM_ERR_TOOBIG;
    }
    for (int32_t s = 0; s < nsets; s++)
        pcp_write_bytes(&w, json + json_off[s], (size_t)json_len[s], 0);
    return finish(&w);
}

/* The payload size of a value block for a metric type, 0 for in-situ values. */
static size_t block_payload(int32_t vtype, uint32_t slen)
{
    switch (vtype) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
        return 0;
    case PM_TYPE_FLOAT:
        return 4;
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
        return 8;
    default:
        return (size_t)slen + 1; /* libpcp sends a string's NUL */
    }
}

/* The width of one value of a numeric type in the values column, 0 for STRING. */
static size_t value_width(int32_t vtype)
{
    int size = pcp_type_size((uint32_t)vtype);
    return size > 0 ? (size_t)size : 0;
}

int pcp_agent_encode_result(uint8_t *buf, size_t cap, int32_t from, int32_t stamp,
                            int32_t numpmid, const uint32_t *pmid, const int32_t *numval,
                            const int32_t *vtype, const int32_t *inst, size_t ninst,
                            const uint8_t *values, size_t values_len, const uint32_t *slen,
                            size_t nstrings, const uint8_t *payload, size_t payload_len)
{
    if (numpmid < 0 || numpmid > AGENT_PDU_MAX / 8)
        return PM_ERR_TOOBIG;
    /* sizing pass: every column must hold what the sets claim, the PDU its bound */
    size_t sets = 24;
    size_t blocks = 0;
    size_t nvalues = 0, value_bytes = 0, strings = 0, string_bytes = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        if (numval[i] <= 0) {
            sets += 8;
            continue;
        }
        if (numval[i] > AGENT_PDU_MAX / 8)
            return PM_ERR_TOOBIG;
        int32_t t = vtype[i];
        if (t != PM_TYPE_32 && t != PM_TYPE_U32 && t != PM_TYPE_64 && t != PM_TYPE_U64 &&
            t != PM_TYPE_FLOAT && t != PM_TYPE_DOUBLE && t != PM_TYPE_STRING)
            return PM_ERR_TYPE;
        size_t n = (size_t)numval[i];
        if (n > ninst - nvalues)
            return PM_ERR_TOOBIG;
        nvalues += n;
        sets += 12 + 8 * n;
        if (t == PM_TYPE_STRING) {
            if (n > nstrings - strings)
                return PM_ERR_TOOBIG;
            for (size_t j = 0; j < n; j++, strings++) {
                if (slen[strings] > 0xffffffu - 5 ||
                    slen[strings] > payload_len - string_bytes)
                    return PM_ERR_TOOBIG;
                string_bytes += slen[strings];
                blocks += pcp_pad4(4 + block_payload(t, slen[strings]));
            }
        } else {
            size_t width = value_width(t);
            if (n > (values_len - value_bytes) / width)
                return PM_ERR_TOOBIG;
            value_bytes += n * width;
            size_t block = block_payload(t, 0);
            if (block)
                blocks += n * pcp_pad4(4 + block);
        }
        if (sets + blocks > AGENT_PDU_MAX)
            return PM_ERR_TOOBIG;
    }
    pcp_writer w = pcp_writer_at(buf, cap);
    write_header(&w, PDU_RESULT, from);
    pcp_write_i32(&w, stamp);
    pcp_write_i32(&w, 0);
    pcp_write_i32(&w, numpmid);
    size_t next_block = sets;
    size_t k = 0, at = 0, s = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        pcp_write_u32(&w, pmid[i]);
        pcp_write_i32(&w, numval[i]);
        if (numval[i] <= 0)
            continue;
        int32_t t = vtype[i];
        int insitu = (t == PM_TYPE_32 || t == PM_TYPE_U32);
        pcp_write_i32(&w, insitu ? 0 : 1); /* PM_VAL_INSITU or PM_VAL_DPTR */
        for (int32_t j = 0; j < numval[i]; j++, k++) {
            pcp_write_i32(&w, inst[k]);
            if (insitu) {
                uint32_t word;
                memcpy(&word, values + at, 4); /* host order, as array.array wrote it */
                at += 4;
                pcp_write_u32(&w, word);
                continue;
            }
            uint32_t len = 0;
            if (t == PM_TYPE_STRING)
                len = slen[s++];
            else
                at += value_width(t); /* its bits go in the block, below */
            pcp_write_u32(&w, (uint32_t)(next_block / 4));
            next_block += pcp_pad4(4 + block_payload(t, len));
        }
    }
    at = 0;
    s = 0;
    size_t from_payload = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        if (numval[i] <= 0)
            continue;
        int32_t t = vtype[i];
        for (int32_t j = 0; j < numval[i]; j++) {
            if (t == PM_TYPE_32 || t == PM_TYPE_U32) {
                at += 4;
                continue;
            }
            if (t == PM_TYPE_STRING) {
                static const uint8_t nul = 0;
                uint32_t len = slen[s++];
                size_t n = block_payload(t, len);
                pcp_write_u32(&w, ((uint32_t)t << 24) | (uint32_t)(4 + n));
                pcp_write_bytes(&w, payload + from_payload, len, 0);
                from_payload += len;
                pcp_write_bytes(&w, &nul, 1, 0);
                size_t fill = pcp_pad4(4 + n) - (4 + n);
                pcp_write_bytes(&w, (const uint8_t *)"~~~", fill, 0);
                continue;
            }
            size_t n = block_payload(t, 0);
            pcp_write_u32(&w, ((uint32_t)t << 24) | (uint32_t)(4 + n));
            if (n == 4) {                        /* FLOAT: its bits as they are */
                uint32_t bits;
                memcpy(&bits, values + at, 4);
                pcp_write_u32(&w, bits);
            } else {                             /* 64-bit integers and DOUBLE */
                uint64_t bits;
                memcpy(&bits, values + at, 8);
                pcp_write_u64(&w, bits);
            }
            at += n;
        }
    }
    return finish(&w);
}
