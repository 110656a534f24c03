/* The whole .meta file in one pass: every record decoded and checked by the record
 * decoders of archive_meta.c, in file order, into the flat arrays of a pcp_meta_index.
 *
 * Opening an archive context reads all of its metadata (libpcp's __pmLogLoadMeta does);
 * doing it record by record from Python cost a Python call or several per record, which
 * made an open ten times dearer than libpcp's. Here Python makes two calls per file (one
 * to count, one to fill arrays of the counted size) and builds its indexes from the
 * arrays only when they are asked for.
 *
 * The input is untrusted: every offset and length is checked by the record decoders,
 * this walk only adds bounds on the caller's arrays (a record is stored only where there
 * is room for all of it) and on the counts. */
#include <string.h>

#include "archive.h"
#include "cursor.h"

/* Room left in an array of `cap` entries of which `used` are taken. */
static int32_t room_left(int32_t cap, int32_t used)
{
    return used < cap ? cap - used : 0;
}

/* a count grown by n must stay an int32 (it cannot, for a file under 4 GB, but the
 * arithmetic is checked rather than argued) */
static int grow(int32_t *count, int32_t n)
{
    if (n < 0 || n > INT32_MAX - *count)
        return PM_ERR_TOOBIG;
    *count += n;
    return 0;
}

static int scan_desc(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *out,
                     uint64_t *next)
{
    pcp_desc d;
    int32_t room = room_left(out->name_cap, out->nname);
    uint32_t *offs = room ? out->name_off + out->nname : NULL;
    int32_t *lens = room ? out->name_len + out->nname : NULL;
    int n = pcp_archive_meta_desc(buf, len, pos, &d, room, offs, lens, next);
    if (n < 0)
        return n;
    /* libpcp reads each name as a C string: it ends at its first NUL */
    for (int32_t i = 0; i < n && i < room; i++) {
        const uint8_t *s = buf + offs[i];
        const uint8_t *nul = memchr(s, 0, (size_t)lens[i]);
        if (nul != NULL)
            lens[i] = (int32_t)(nul - s);
    }
    int32_t k = out->ndesc;
    if (k < out->desc_cap && n <= room) {
        out->desc_pmid[k] = d.pmid;
        out->desc_type[k] = d.type;
        out->desc_indom[k] = d.indom;
        out->desc_sem[k] = d.sem;
        out->desc_units[k] = d.units;
        out->desc_first[k] = out->nname;
        out->desc_nnames[k] = n;
    }
    if (grow(&out->nname, n) < 0 || grow(&out->ndesc, 1) < 0)
        return PM_ERR_TOOBIG;
    return 0;
}

static int scan_indom(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *out,
                      uint64_t *next)
{
    pcp_indom_head head;
    int32_t room = room_left(out->inst_cap, out->ninst);
    int32_t at = out->ninst;
    int n = pcp_archive_meta_indom(buf, len, pos, &head, room,
                                   room ? out->inst + at : NULL,
                                   room ? out->inst_name_off + at : NULL,
                                   room ? out->inst_name_len + at : NULL, next);
    if (n <= 0)
        return n;               /* an error, or a record with no instances: libpcp adds none */
    int32_t type = (int32_t)pcp_load_be32(buf + pos + 4);
    int32_t k = out->nindom;
    if (k < out->indom_cap && n <= room) {
        pcp_meta_indom_rec *r = &out->indom[k];
        r->sec = head.sec;
        r->nsec = head.nsec;
        r->indom = head.indom;
        r->type = type;
        r->first = at;
        r->numinst = n;
    }
    if (grow(&out->ninst, n) < 0 || grow(&out->nindom, 1) < 0)
        return PM_ERR_TOOBIG;
    return 0;
}

static int scan_labels(const uint8_t *buf, size_t len, uint64_t pos, int32_t rec_len,
                       pcp_meta_index *out, uint64_t *next)
{
    pcp_label_head head;
    int32_t total = 0;
    /* checked now (libpcp fails the open on a bad label record), decoded when asked */
    int n = pcp_archive_meta_labels(buf, len, pos, &head, 0, NULL, 0, NULL, &total, next);
    if (n < 0)
        return n;
    int32_t k = out->nlabel;
    if (k < out->label_cap) {
        pcp_meta_label_rec *r = &out->label[k];
        size_t left = len - (size_t)pos;
        r->sec = head.sec;
        r->nsec = head.nsec;
        r->type = head.type;
        r->ident = head.ident;
        r->off = (uint32_t)pos;   /* the decoder refused files over 4 GB */
        r->room = (size_t)rec_len < left ? rec_len : (int32_t)left;
    }
    return grow(&out->nlabel, 1);
}

static int scan_text(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *out,
                     uint64_t *next)
{
    pcp_meta_text_rec t;
    int sts = pcp_archive_meta_text(buf, len, pos, &t.type, &t.ident, &t.off, &t.len, next);
    if (sts != 0)
        return sts < 0 ? sts : 0;   /* 1: a kind libpcp skips */
    if (out->ntext < out->text_cap)
        out->text[out->ntext] = t;
    return grow(&out->ntext, 1);
}

int pcp_archive_meta_scan(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *out)
{
    out->ndesc = out->nname = out->nindom = out->ninst = out->nlabel = out->ntext = 0;
    for (;;) {
        int32_t type, rec_len;
        out->end = pos;
        int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
        if (sts == PCP_LOG_END)
            return 0;
        if (sts < 0)
            return sts;
        uint64_t next = pos;
        switch (type) {
        case PCP_META_DESC:
            sts = scan_desc(buf, len, pos, out, &next);
            break;
        case PCP_META_INDOM_V2:
        case PCP_META_INDOM:
        case PCP_META_INDOM_DELTA:
            sts = scan_indom(buf, len, pos, out, &next);
            break;
        case PCP_META_LABEL_V2:
        case PCP_META_LABEL:
            sts = scan_labels(buf, len, pos, rec_len, out, &next);
            break;
        case PCP_META_TEXT:
            sts = scan_text(buf, len, pos, out, &next);
            break;
        default:
            return PM_ERR_RECTYPE;
        }
        if (sts < 0)
            return sts;
        /* every decoder moves forwards; a record that did not would loop for ever */
        if (next <= pos)
            return PM_ERR_LOGREC;
        pos = next;
    }
}

/* The arrays of a pcp_meta_index, each 8-byte aligned, in the order bind lays them out:
 * per descriptor 7 words, per name 2, per instance 3, and the record structs. */
static size_t aligned(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static size_t count_of(int32_t n)
{
    return n > 0 ? (size_t)n : 0;
}

size_t pcp_archive_meta_index_mem_size(const pcp_meta_index *ix)
{
    size_t nd = count_of(ix->ndesc), nn = count_of(ix->nname), ni = count_of(ix->ninst);
    return 7 * aligned(nd * 4) + 2 * aligned(nn * 4) + 3 * aligned(ni * 4)
        + aligned(count_of(ix->nindom) * sizeof(pcp_meta_indom_rec))
        + aligned(count_of(ix->nlabel) * sizeof(pcp_meta_label_rec))
        + aligned(count_of(ix->ntext) * sizeof(pcp_meta_text_rec));
}

void pcp_archive_meta_index_bind(pcp_meta_index *ix, void *mem)
{
    size_t nd = count_of(ix->ndesc), nn = count_of(ix->nname), ni = count_of(ix->ninst);
    uint8_t *m = mem;
#define TAKE(field, type, n) (ix->field = (type *)(void *)m, m += aligned((n) * sizeof(type)))
    TAKE(desc_pmid, uint32_t, nd);
    TAKE(desc_type, int32_t, nd);
    TAKE(desc_indom, uint32_t, nd);
    TAKE(desc_sem, int32_t, nd);
    TAKE(desc_units, uint32_t, nd);
    TAKE(desc_first, int32_t, nd);
    TAKE(desc_nnames, int32_t, nd);
    TAKE(name_off, uint32_t, nn);
    TAKE(name_len, int32_t, nn);
    TAKE(inst, int32_t, ni);
    TAKE(inst_name_off, uint32_t, ni);
    TAKE(inst_name_len, int32_t, ni);
    TAKE(indom, pcp_meta_indom_rec, count_of(ix->nindom));
    TAKE(label, pcp_meta_label_rec, count_of(ix->nlabel));
    TAKE(text, pcp_meta_text_rec, count_of(ix->ntext));
#undef TAKE
    ix->desc_cap = ix->ndesc;
    ix->name_cap = ix->nname;
    ix->indom_cap = ix->nindom;
    ix->inst_cap = ix->ninst;
    ix->label_cap = ix->nlabel;
    ix->text_cap = ix->ntext;
}
