/* Archive metadata (.meta) records: descriptors with their names, instance domains (v2,
 * v3 full and delta), label sets (v2, v3) and help text.
 *
 * libpcp reads .meta as a stream: a descriptor's names are read field by field and the
 * trailer is whatever word follows them; the other record kinds read len-12 bytes of body
 * and then the trailer. These decoders follow the same order, so a damaged record fails
 * (or, for libpcp's own leniencies, passes) at the same point, but every read is bounded
 * by the file and every count by the bytes that are really there. */
#include "archive.h"
#include "cursor.h"

#define MAX_NAME_LEN 4095       /* libpcp reads a name into a MAXPATHLEN buffer */
#define MAX_LABEL_JSON 65535    /* PM_MAXLABELJSONLEN */
#define MAX_LABELS 255          /* PM_MAXLABELS */
#define TEXT_ONELINE 1u
#define TEXT_HELP 2u
#define TEXT_PMID 4u
#define TEXT_INDOM 8u

int pcp_archive_meta_header(const uint8_t *buf, size_t len, uint64_t pos, int32_t *type,
                            int32_t *rec_len)
{
    if (pos >= len || len - pos < 8)
        return PCP_LOG_END;
    *rec_len = (int32_t)pcp_load_be32(buf + pos);
    *type = (int32_t)pcp_load_be32(buf + pos + 4);
    if (*rec_len <= 0)
        return PM_ERR_LOGREC;
    return 0;
}

/* The trailer word at `at` must repeat the record length; *next is the word after it. */
static int check_trailer(const uint8_t *buf, size_t len, uint64_t at, int32_t rec_len,
                         uint64_t *next)
{
    if (at > len || len - at < 4)
        return PM_ERR_LOGREC;
    if ((int32_t)pcp_load_be32(buf + at) != rec_len)
        return PM_ERR_LOGREC;
    *next = at + 4;
    return 0;
}

/* The body of a non-descriptor record: [pos+8, pos+rec_len-4), all of it in the file. */
static int record_body(size_t len, uint64_t pos, int32_t rec_len, uint64_t *body,
                       size_t *body_len)
{
    if (rec_len < 12)
        return PM_ERR_LOGREC;
    *body = pos + 8;
    *body_len = (size_t)rec_len - 12;
    if (*body > len || len - *body < *body_len)
        return PM_ERR_LOGREC;
    return 0;
}

static void load_stamp(pcp_cursor *c, int v3, int64_t *sec, int64_t *nsec)
{
    if (v3) {
        uint64_t lo = pcp_read_u32(c);
        uint64_t hi = pcp_read_u32(c);
        *sec = (int64_t)((hi << 32) | lo);
        *nsec = pcp_read_i32(c);
    } else {
        *sec = pcp_read_i32(c);
        *nsec = pcp_usec_to_nsec(pcp_read_u32(c));
    }
}

int pcp_archive_meta_desc(const uint8_t *buf, size_t len, uint64_t pos, pcp_desc *desc,
                          int32_t cap, uint32_t *name_off, int32_t *name_len, uint64_t *next)
{
    int32_t type, rec_len;
    int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
    if (sts != 0 || type != PCP_META_DESC || len > UINT32_MAX)
        return PM_ERR_LOGREC;
    pcp_cursor c = pcp_cursor_at(buf, len, (size_t)pos + 8);
    desc->pmid = pcp_read_u32(&c);
    desc->type = pcp_read_i32(&c);
    desc->indom = pcp_read_u32(&c);
    desc->sem = pcp_read_i32(&c);
    desc->units = pcp_read_u32(&c);
    int32_t numnames = pcp_read_i32(&c);
    if (c.bad)
        return PM_ERR_LOGREC;
    if (numnames < 0)
        numnames = 0;           /* libpcp's name loop simply does not run */
    for (int32_t i = 0; i < numnames; i++) {
        int32_t n = pcp_read_i32(&c);
        if (c.bad || n < 0 || n > MAX_NAME_LEN)
            return PM_ERR_LOGREC;
        size_t at = c.pos;
        pcp_skip(&c, (size_t)n);
        if (c.bad)
            return PM_ERR_LOGREC;
        if (i < cap) {
            name_off[i] = (uint32_t)at;
            name_len[i] = n;
        }
    }
    sts = check_trailer(buf, len, c.pos, rec_len, next);
    return sts < 0 ? sts : numnames;
}

int pcp_archive_meta_indom(const uint8_t *buf, size_t len, uint64_t pos, pcp_indom_head *head,
                           int32_t cap, int32_t *inst, uint32_t *name_off, int32_t *name_len,
                           uint64_t *next)
{
    int32_t type, rec_len;
    int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
    if (sts != 0 || len > UINT32_MAX)
        return PM_ERR_LOGREC;
    if (type != PCP_META_INDOM_V2 && type != PCP_META_INDOM && type != PCP_META_INDOM_DELTA)
        return PM_ERR_LOGREC;
    uint64_t body;
    size_t body_len;
    if (record_body(len, pos, rec_len, &body, &body_len) < 0)
        return PM_ERR_LOGREC;
    int v3 = type != PCP_META_INDOM_V2;
    size_t fixed = v3 ? 20 : 16;   /* stamp, indom, numinst */
    if (body_len < fixed)
        return PM_ERR_LOGREC;
    pcp_cursor c = pcp_cursor_at(buf, (size_t)(body + body_len), (size_t)body);
    load_stamp(&c, v3, &head->sec, &head->nsec);
    head->indom = pcp_read_u32(&c);
    int32_t numinst = pcp_read_i32(&c);
    head->numinst = numinst;
    if (numinst > 0) {
        if ((size_t)numinst > (body_len - fixed) / 8)
            return PM_ERR_LOGREC;
        size_t insts_at = c.pos;
        size_t idx_at = insts_at + 4 * (size_t)numinst;
        size_t strings_at = idx_at + 4 * (size_t)numinst;
        size_t strings_len = (size_t)(body + body_len) - strings_at;
        for (int32_t i = 0; i < numinst; i++) {
            int32_t id = (int32_t)pcp_load_be32(buf + insts_at + 4 * (size_t)i);
            int32_t idx = (int32_t)pcp_load_be32(buf + idx_at + 4 * (size_t)i);
            if (id < 0)
                return PM_ERR_LOGREC;   /* libpcp: bad internal instance identifier */
            int32_t nlen = -1;
            uint32_t noff = 0;
            if (idx >= 0) {
                /* libpcp allows an index up to the table size; the name must also end
                 * inside the record, which libpcp leaves unchecked. */
                if ((size_t)idx >= strings_len)
                    return PM_ERR_LOGREC;
                const uint8_t *s = buf + strings_at + (size_t)idx;
                const uint8_t *nul = memchr(s, 0, strings_len - (size_t)idx);
                if (nul == NULL)
                    return PM_ERR_LOGREC;
                noff = (uint32_t)(strings_at + (size_t)idx);
                nlen = (int32_t)(nul - s);
            } else if (!(type == PCP_META_INDOM_DELTA && idx == -1)) {
                return PM_ERR_LOGREC;
            }
            if (i < cap) {
                inst[i] = id;
                name_off[i] = noff;
                name_len[i] = nlen;
            }
        }
    }
    sts = check_trailer(buf, len, body + body_len, rec_len, next);
    if (sts < 0)
        return sts;
    return numinst > 0 ? numinst : 0;
}

int pcp_archive_meta_labels(const uint8_t *buf, size_t len, uint64_t pos, pcp_label_head *head,
                            int32_t set_cap, pcp_labelset *sets, int32_t label_cap,
                            pcp_label *labels, int32_t *nlabels_total, uint64_t *next)
{
    int32_t type, rec_len;
    int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
    if (sts != 0 || len > UINT32_MAX)
        return PM_ERR_LOGREC;
    if (type != PCP_META_LABEL_V2 && type != PCP_META_LABEL)
        return PM_ERR_LOGREC;
    uint64_t body;
    size_t body_len;
    if (record_body(len, pos, rec_len, &body, &body_len) < 0)
        return PM_ERR_LOGREC;
    pcp_cursor c = pcp_cursor_at(buf, (size_t)(body + body_len), (size_t)body);
    load_stamp(&c, type == PCP_META_LABEL, &head->sec, &head->nsec);
    head->type = pcp_read_u32(&c);
    head->ident = pcp_read_u32(&c);
    int32_t nsets = pcp_read_i32(&c);
    if (c.bad || nsets < 0)
        return PM_ERR_LOGREC;
    /* every set takes at least 12 bytes */
    if ((size_t)nsets > pcp_cursor_left(&c) / 12)
        return PM_ERR_LOGREC;
    int32_t used = 0;
    for (int32_t i = 0; i < nsets; i++) {
        int32_t inst = pcp_read_i32(&c);
        int32_t jsonlen = pcp_read_i32(&c);
        if (c.bad || jsonlen < 0 || jsonlen > MAX_LABEL_JSON)
            return PM_ERR_LOGREC;
        size_t json_at = c.pos;
        pcp_skip(&c, (size_t)jsonlen);
        int32_t nlabels = pcp_read_i32(&c);
        if (c.bad)
            return PM_ERR_LOGREC;
        if (i < set_cap) {
            sets[i].inst = inst;
            sets[i].nlabels = nlabels;
            sets[i].json_off = (uint32_t)json_at;
            sets[i].json_len = jsonlen;
            sets[i].first = used;
        }
        if (nlabels <= 0)
            continue;           /* none, or an error code stored for this set */
        if (nlabels > MAX_LABELS || (size_t)nlabels > pcp_cursor_left(&c) / 8)
            return PM_ERR_LOGREC;
        for (int32_t j = 0; j < nlabels; j++, used++) {
            uint32_t w0 = pcp_read_u32(&c);
            uint32_t w1 = pcp_read_u32(&c);
            pcp_label l;
            l.name = w0 >> 16;
            l.namelen = (w0 >> 8) & 0xffu;
            l.flags = w0 & 0xffu;
            l.value = w1 >> 16;
            l.valuelen = w1 & 0xffffu;
            /* Label names and values index the set's JSON: keep them inside it. */
            if ((size_t)l.name + l.namelen > (size_t)jsonlen ||
                (size_t)l.value + l.valuelen > (size_t)jsonlen)
                return PM_ERR_LOGREC;
            if (i < set_cap && used < label_cap)
                labels[used] = l;
        }
    }
    if (c.bad)
        return PM_ERR_LOGREC;
    *nlabels_total = used;
    sts = check_trailer(buf, len, body + body_len, rec_len, next);
    return sts < 0 ? sts : nsets;
}

int pcp_archive_meta_text(const uint8_t *buf, size_t len, uint64_t pos, uint32_t *text_type,
                          uint32_t *ident, uint32_t *text_off, uint32_t *text_len, uint64_t *next)
{
    int32_t type, rec_len;
    int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
    if (sts != 0 || type != PCP_META_TEXT || len > UINT32_MAX)
        return PM_ERR_LOGREC;
    uint64_t body;
    size_t body_len;
    if (record_body(len, pos, rec_len, &body, &body_len) < 0 || body_len < 4)
        return PM_ERR_LOGREC;
    *text_type = pcp_load_be32(buf + body);
    if (!(*text_type & (TEXT_ONELINE | TEXT_HELP)) ||
        !(*text_type & (TEXT_PMID | TEXT_INDOM))) {
        /* libpcp skips such a record without reading its trailer, so it resumes at the
         * trailer word and reads that as the next header. */
        *next = body + body_len;
        return 1;
    }
    if (body_len < 8)
        return PM_ERR_LOGREC;
    *ident = pcp_load_be32(buf + body + 4);
    const uint8_t *s = buf + body + 8;
    const uint8_t *nul = memchr(s, 0, body_len - 8);
    *text_off = (uint32_t)(body + 8);
    *text_len = (uint32_t)(nul ? (size_t)(nul - s) : body_len - 8);
    sts = check_trailer(buf, len, body + body_len, rec_len, next);
    return sts < 0 ? sts : 0;
}
