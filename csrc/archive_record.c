/* Archive data records: libpcp's record reader (framing, positions after errors) and the
 * record decoder, which hands the value sets to the one value decoder in result.c. */
#include "archive.h"
#include "cursor.h"

/* Bytes before the value sets: length word, timestamp, numpmid. */
static size_t fixed_part(int version)
{
    return version == 3 ? 20 : 16;
}

/* The timestamp and numpmid of a record whose fixed part is known to be present. */
static void record_head(const uint8_t *rec, int version, int64_t *sec, int64_t *nsec,
                        int32_t *numpmid)
{
    if (version == 3) {
        uint64_t lo = pcp_load_be32(rec + 4);
        uint64_t hi = pcp_load_be32(rec + 8);
        *sec = (int64_t)((hi << 32) | lo);
        *nsec = (int32_t)pcp_load_be32(rec + 12);
        *numpmid = (int32_t)pcp_load_be32(rec + 16);
    } else {
        *sec = (int32_t)pcp_load_be32(rec + 4);
        *nsec = pcp_usec_to_nsec(pcp_load_be32(rec + 8));
        *numpmid = (int32_t)pcp_load_be32(rec + 12);
    }
}

/* The checks libpcp's result decoder makes before the value sets: the record must hold
 * the fixed part and the trailer, and numpmid must be 0..(PDU length). The value sets and
 * blocks occupy rec[fixed .. len-4); DPTR words count from 8 bytes before the record
 * (the PDU header libpcp overlays on the length word). */
static int record_layout(const uint8_t *rec, size_t len, int version,
                         pcp_sets_layout *layout)
{
    size_t fixed = fixed_part(version);
    if (len < fixed + 4 || len > UINT32_MAX)
        return PM_ERR_LOGREC;
    int64_t sec, nsec;
    int32_t numpmid;
    record_head(rec, version, &sec, &nsec, &numpmid);
    if (numpmid < 0 || (uint64_t)numpmid > (uint64_t)len + 4)
        return PM_ERR_LOGREC;
    layout->sets_off = fixed;
    layout->numpmid = numpmid;
    layout->block_base = -8;
    layout->strict = 1;
    return 0;
}

int pcp_archive_record_scan(const uint8_t *rec, size_t len, int version, int32_t *numpmid,
                            int32_t *nvalues)
{
    pcp_sets_layout layout;
    int sts = record_layout(rec, len, version, &layout);
    if (sts < 0)
        return sts;
    *numpmid = layout.numpmid;
    return pcp_result_valuesets_scan(rec, len - 4, &layout, PM_ERR_LOGREC, nvalues);
}

int pcp_archive_record_decode(const uint8_t *rec, size_t len, int version, pcp_result *out)
{
    pcp_sets_layout layout;
    int sts = record_layout(rec, len, version, &layout);
    if (sts < 0)
        return sts;
    int32_t numpmid;
    record_head(rec, version, &out->sec, &out->nsec, &numpmid);
    return pcp_result_valuesets_decode(rec, len - 4, &layout, PM_ERR_LOGREC, out);
}

int pcp_archive_record_keep(const uint8_t *rec, size_t len, int version,
                            pcp_pmid_filter keep, const void *keep_ctx, int32_t *nsets,
                            int32_t *nvalues, pcp_result *out)
{
    pcp_sets_layout layout;
    int sts = record_layout(rec, len, version, &layout);
    if (sts < 0)
        return sts;
    if (out != NULL) {
        int32_t numpmid;
        record_head(rec, version, &out->sec, &out->nsec, &numpmid);
    }
    return pcp_result_valuesets_keep(rec, len - 4, &layout, PM_ERR_LOGREC, keep, keep_ctx,
                                     nsets, nvalues, out);
}

/* pcp_archive_record_pmids's filter: keeps no set, lists each pmid it is asked about. */
typedef struct {
    uint32_t *pmids;
    int32_t cap;
    int32_t n;
} pmid_list;

static int list_pmid(const void *ctx, uint32_t pmid)
{
    pmid_list *list = (pmid_list *)ctx;     /* the caller's own, writable, list */
    if (list->n < list->cap)
        list->pmids[list->n] = pmid;
    if (list->n < INT32_MAX)
        list->n++;
    return 0;
}

int pcp_archive_record_pmids(const uint8_t *rec, size_t len, int version, uint32_t *pmids,
                             int32_t cap)
{
    pmid_list list = {pmids, cap < 0 ? 0 : cap, 0};
    int32_t nsets = 0, nvalues = 0;
    /* counting only (out NULL): the filter sees every set's pmid once, in order */
    int sts = pcp_archive_record_keep(rec, len, version, list_pmid, &list, &nsets, &nvalues,
                                      NULL);
    return sts < 0 ? sts : list.n;
}

/* pmGetArchiveEnd's extra check: a mark must be exactly the fixed part and trailer. */
static int paranoid_ok(const uint8_t *rec, size_t len, int version)
{
    size_t fixed = fixed_part(version);
    if (len < fixed + 4)
        return 0;
    int64_t sec, nsec;
    int32_t numpmid;
    record_head(rec, version, &sec, &nsec, &numpmid);
    if (numpmid < 1 && len != fixed + 4)
        return 0;
    return 1;
}

/* Check and describe the record at rec_off whose framing has already been read. */
static int finish_record(const uint8_t *buf, uint64_t rec_off, uint32_t rec_len, int version,
                         int paranoid, pcp_log_record *rec)
{
    const uint8_t *r = buf + rec_off;
    if (paranoid && !paranoid_ok(r, rec_len, version))
        return PM_ERR_LOGREC;
    int32_t numpmid, nvalues;
    if (pcp_archive_record_scan(r, rec_len, version, &numpmid, &nvalues) < 0)
        return PM_ERR_LOGREC;
    rec->off = rec_off;
    rec->len = rec_len;
    rec->nvalues = nvalues;
    record_head(r, version, &rec->sec, &rec->nsec, &rec->numpmid);
    return 0;
}

/* The framing of the record at pos, read forwards: header word, body, trailer. Returns
 * 0 with the record's length in *rec_len, PCP_LOG_END or PM_ERR_LOGREC; *newpos is where
 * libpcp's stream is afterwards (past the trailer when the framing is whole). */
static int frame_forward(const uint8_t *buf, size_t len, uint64_t pos, uint64_t *newpos,
                         uint32_t *rec_len)
{
    *newpos = pos;
    if (pos >= len || len - pos < 4)
        return PCP_LOG_END;   /* clean or partial header at the end of the volume */
    int32_t head = (int32_t)pcp_load_be32(buf + pos);
    if (head < 8) {
        *newpos = pos + 4;    /* libpcp has consumed the header word */
        return PM_ERR_LOGREC;
    }
    uint64_t body = pos + 4;
    uint64_t rlen = (uint64_t)head - 8;
    if (len - body < rlen + 4)
        return PM_ERR_LOGREC; /* truncated body or trailer: back to the record start */
    uint64_t trailer = body + rlen;
    *newpos = trailer + 4;
    if ((int32_t)pcp_load_be32(buf + trailer) != head)
        return PM_ERR_LOGREC;
    *rec_len = (uint32_t)head;
    return 0;
}

int pcp_archive_record_time(const uint8_t *buf, size_t len, int version, uint64_t pos,
                            uint64_t *newpos, int64_t *sec, int64_t *nsec, int32_t *numpmid)
{
    uint32_t rec_len;
    int sts = frame_forward(buf, len, pos, newpos, &rec_len);
    if (sts != 0)
        return sts;
    if (rec_len < fixed_part(version) + 4)
        return PM_ERR_LOGREC;
    record_head(buf + pos, version, sec, nsec, numpmid);
    return 0;
}

static int read_forward(const uint8_t *buf, size_t len, int version, int paranoid,
                        uint64_t pos, uint64_t *newpos, pcp_log_record *rec)
{
    uint32_t rec_len;
    int sts = frame_forward(buf, len, pos, newpos, &rec_len);
    if (sts != 0)
        return sts;
    return finish_record(buf, pos, rec_len, version, paranoid, rec);
}

/* Backwards: libpcp reads the trailer word before pos as the length, steps back over the
 * body, then reads the record's first word as "the trailer" and compares the two. */
static int read_backward(const uint8_t *buf, size_t len, size_t label_len, int version,
                         int paranoid, uint64_t pos, uint64_t *newpos, pcp_log_record *rec)
{
    *newpos = pos;
    if (pos <= label_len)
        return PCP_LOG_END;
    if (pos > len || pos < 4)
        return PCP_LOG_END;   /* past the end, or no whole trailer word before pos */
    int32_t head = (int32_t)pcp_load_be32(buf + pos - 4);
    int64_t rlen = (int64_t)head - 8;
    if (rlen < 0 || (uint64_t)rlen > pos)
        return PM_ERR_LOGREC; /* the stream stays where it was: the error repeats */
    if ((uint64_t)rlen + 8 > pos)
        return PM_ERR_LOGREC; /* would start before the file */
    uint64_t start = pos - 8 - (uint64_t)rlen;
    *newpos = start + 4;
    if ((int32_t)pcp_load_be32(buf + start) != head)
        return PM_ERR_LOGREC;
    if (paranoid && !paranoid_ok(buf + start, (size_t)head, version))
        return PM_ERR_LOGREC;
    *newpos = start;
    return finish_record(buf, start, (uint32_t)head, version, 0, rec);
}

int pcp_archive_record_read(const uint8_t *buf, size_t len, size_t label_len, int version,
                            int backward, int paranoid, uint64_t pos, uint64_t *newpos,
                            pcp_log_record *rec)
{
    if (backward)
        return read_backward(buf, len, label_len, version, paranoid, pos, newpos, rec);
    return read_forward(buf, len, version, paranoid, pos, newpos, rec);
}

int pcp_archive_records_scan(const uint8_t *buf, size_t len, int version, uint64_t *pos,
                             pcp_log_columns *cols)
{
    while (cols->nrec < cols->rec_cap) {
        uint64_t at = *pos, next;
        uint32_t rec_len;
        int sts = frame_forward(buf, len, at, &next, &rec_len);
        if (sts != 0) {
            *pos = next;
            return sts;
        }
        const uint8_t *r = buf + at;
        pcp_sets_layout layout;
        if (record_layout(r, rec_len, version, &layout) < 0) {
            *pos = next;
            return PM_ERR_LOGREC;
        }
        /* Every value takes at least 8 bytes of the record: stop while there is still
         * room for the largest record of this size, so the decoder never overflows. */
        if ((int64_t)layout.numpmid > (int64_t)cols->set_cap - cols->nset ||
            (int64_t)rec_len / 8 > (int64_t)cols->val_cap - cols->nval) {
            if (cols->nrec == 0)
                return PM_ERR_TOOBIG;   /* a single record larger than the columns */
            return 0;
        }
        pcp_result view;
        view.pmid = cols->pmid + cols->nset;
        view.numval = cols->numval + cols->nset;
        view.valfmt = cols->valfmt + cols->nset;
        view.first = cols->set_first + cols->nset;
        view.inst = cols->inst + cols->nval;
        view.vtype = cols->vtype + cols->nval;
        view.ival = cols->ival + cols->nval;
        view.dval = cols->dval + cols->nval;
        view.boff = cols->boff + cols->nval;
        view.blen = cols->blen + cols->nval;
        if (pcp_result_valuesets_decode(r, rec_len - 4, &layout, PM_ERR_LOGREC, &view) < 0) {
            *pos = next;
            return PM_ERR_LOGREC;
        }
        int32_t k = cols->nrec;
        int32_t numpmid;
        record_head(r, version, &cols->sec[k], &cols->nsec[k], &numpmid);
        cols->numpmid[k] = numpmid;
        cols->rec_first[k] = cols->nset;
        cols->rec_off[k] = at;
        for (int32_t i = 0; i < numpmid; i++)
            view.first[i] += cols->nval;    /* make value indices chunk-wide */
        cols->nset += numpmid;
        cols->nval += view.nvalues;
        cols->nrec = k + 1;
        *pos = next;
    }
    return 0;
}
