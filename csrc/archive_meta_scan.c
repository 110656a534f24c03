/* The whole .meta file in one pass: every record decoded and checked by the record
 * decoders of archive_meta.c, in file order, into the flat arrays of a pcp_meta_index.
 *
 * Opening an archive context reads all of its metadata (libpcp's __pmLogLoadMeta does);
 * doing it record by record from Python cost a Python call or several per record, which
 * made an open ten times dearer than libpcp's. Here Python makes one call per file and
 * builds its indexes from the arrays only when they are asked for.
 *
 * The input is untrusted: every offset and length is checked by the record decoders;
 * this walk sizes its arrays from the counts the decoders report (growing them, never
 * trusting a count to fit) and checks its own counts for overflow. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "cursor.h"

/* Make room for `need` entries in each of the `n` arrays of one group (they share the
 * capacity *cap): capacity doubles, so a file costs a few reallocs per group. */
static int reserve(int32_t *cap, int32_t need, void **arrays[], const size_t sizes[], int n)
{
    if (need <= *cap)
        return 0;
    if (need < 0)
        return PM_ERR_TOOBIG;
    int64_t want = *cap > 0 ? (int64_t)*cap : 16;
    while (want < need)
        want *= 2;
    if (want > INT32_MAX)
        want = INT32_MAX;
    for (int i = 0; i < n; i++) {
        if ((uint64_t)want > SIZE_MAX / sizes[i])
            return -ENOMEM;
        void *grown = realloc(*arrays[i], (size_t)want * sizes[i]);
        if (grown == NULL)
            return -ENOMEM;
        *arrays[i] = grown;
    }
    *cap = (int32_t)want;
    return 0;
}

static int reserve_descs(pcp_meta_index *ix, int32_t need)
{
    void **arrays[] = {(void **)&ix->desc_pmid, (void **)&ix->desc_type,
                       (void **)&ix->desc_indom, (void **)&ix->desc_sem,
                       (void **)&ix->desc_units, (void **)&ix->desc_first,
                       (void **)&ix->desc_nnames};
    const size_t sizes[] = {4, 4, 4, 4, 4, 4, 4};
    return reserve(&ix->desc_cap, need, arrays, sizes, 7);
}

static int reserve_names(pcp_meta_index *ix, int32_t need)
{
    void **arrays[] = {(void **)&ix->name_off, (void **)&ix->name_len, (void **)&ix->name_pmid};
    const size_t sizes[] = {4, 4, 4};
    return reserve(&ix->name_cap, need, arrays, sizes, 3);
}

static int reserve_insts(pcp_meta_index *ix, int32_t need)
{
    void **arrays[] = {(void **)&ix->inst, (void **)&ix->inst_name_off,
                       (void **)&ix->inst_name_len};
    const size_t sizes[] = {4, 4, 4};
    return reserve(&ix->inst_cap, need, arrays, sizes, 3);
}

static int reserve_one(int32_t *cap, int32_t need, void **array, size_t size)
{
    void **arrays[] = {array};
    return reserve(cap, need, arrays, &size, 1);
}

/* a count grown by n must stay an int32 (it cannot, for a file under 4 GB, but the
 * arithmetic is checked rather than argued) */
static int32_t plus(int32_t count, int32_t n)
{
    return n > INT32_MAX - count ? -1 : count + n;
}

static int scan_desc(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *ix,
                     uint64_t *next)
{
    pcp_desc d;
    int32_t at = ix->nname;
    int n;
    for (;;) {
        /* the names go straight into the name arrays; with too little room the decoder
         * says how many there are and is called again */
        int32_t room = ix->name_cap - at;
        n = pcp_archive_meta_desc(buf, len, pos, &d, room, room ? ix->name_off + at : NULL,
                                  room ? ix->name_len + at : NULL, next);
        if (n <= room)
            break;
        int sts = reserve_names(ix, plus(at, n));
        if (sts < 0)
            return sts;
    }
    if (n < 0)
        return n;
    int sts = reserve_descs(ix, plus(ix->ndesc, 1));
    if (sts < 0)
        return sts;
    /* libpcp reads each name as a C string: it ends at its first NUL */
    for (int32_t i = at; i < at + n; i++) {
        const uint8_t *s = buf + ix->name_off[i];
        const uint8_t *nul = memchr(s, 0, (size_t)ix->name_len[i]);
        if (nul != NULL)
            ix->name_len[i] = (int32_t)(nul - s);
        ix->name_pmid[i] = d.pmid;
    }
    int32_t k = ix->ndesc++;
    ix->desc_pmid[k] = d.pmid;
    ix->desc_type[k] = d.type;
    ix->desc_indom[k] = d.indom;
    ix->desc_sem[k] = d.sem;
    ix->desc_units[k] = d.units;
    ix->desc_first[k] = at;
    ix->desc_nnames[k] = n;
    ix->nname = at + n;
    return 0;
}

static int scan_indom(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *ix,
                      uint64_t *next)
{
    pcp_indom_head head;
    int32_t at = ix->ninst;
    int n;
    for (;;) {
        int32_t room = ix->inst_cap - at;
        n = pcp_archive_meta_indom(buf, len, pos, &head, room, room ? ix->inst + at : NULL,
                                   room ? ix->inst_name_off + at : NULL,
                                   room ? ix->inst_name_len + at : NULL, next);
        if (n <= room)
            break;
        int sts = reserve_insts(ix, plus(at, n));
        if (sts < 0)
            return sts;
    }
    if (n <= 0)
        return n;               /* an error, or a record with no instances: libpcp adds none */
    int sts = reserve_one(&ix->indom_cap, plus(ix->nindom, 1), (void **)&ix->indom,
                          sizeof *ix->indom);
    if (sts < 0)
        return sts;
    pcp_meta_indom_rec *r = &ix->indom[ix->nindom++];
    r->sec = head.sec;
    r->nsec = head.nsec;
    r->indom = head.indom;
    r->type = (int32_t)pcp_load_be32(buf + pos + 4);    /* the decoder read this header */
    r->first = at;
    r->numinst = n;
    ix->ninst = at + n;
    return 0;
}

static int scan_labels(const uint8_t *buf, size_t len, uint64_t pos, int32_t rec_len,
                       pcp_meta_index *ix, uint64_t *next)
{
    pcp_label_head head;
    int32_t total = 0;
    /* checked now (libpcp fails the open on a bad label record), decoded when asked */
    int n = pcp_archive_meta_labels(buf, len, pos, &head, 0, NULL, 0, NULL, &total, next);
    if (n < 0)
        return n;
    int sts = reserve_one(&ix->label_cap, plus(ix->nlabel, 1), (void **)&ix->label,
                          sizeof *ix->label);
    if (sts < 0)
        return sts;
    pcp_meta_label_rec *r = &ix->label[ix->nlabel++];
    size_t left = len - (size_t)pos;
    r->sec = head.sec;
    r->nsec = head.nsec;
    r->type = head.type;
    r->ident = head.ident;
    r->off = (uint32_t)pos;     /* the decoder refused files over 4 GB */
    r->room = (size_t)rec_len < left ? rec_len : (int32_t)left;
    return 0;
}

static int scan_text(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *ix,
                     uint64_t *next)
{
    pcp_meta_text_rec t;
    int sts = pcp_archive_meta_text(buf, len, pos, &t.type, &t.ident, &t.off, &t.len, next);
    if (sts != 0)
        return sts < 0 ? sts : 0;   /* 1: a kind libpcp skips */
    sts = reserve_one(&ix->text_cap, plus(ix->ntext, 1), (void **)&ix->text, sizeof *ix->text);
    if (sts < 0)
        return sts;
    ix->text[ix->ntext++] = t;
    return 0;
}

int pcp_archive_meta_scan(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *ix)
{
    for (;;) {
        int32_t type, rec_len;
        ix->end = pos;
        int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
        if (sts == PCP_LOG_END)
            return 0;
        if (sts < 0)
            return sts;
        uint64_t next = pos;
        switch (type) {
        case PCP_META_DESC:
            sts = scan_desc(buf, len, pos, ix, &next);
            break;
        case PCP_META_INDOM_V2:
        case PCP_META_INDOM:
        case PCP_META_INDOM_DELTA:
            sts = scan_indom(buf, len, pos, ix, &next);
            break;
        case PCP_META_LABEL_V2:
        case PCP_META_LABEL:
            sts = scan_labels(buf, len, pos, rec_len, ix, &next);
            break;
        case PCP_META_TEXT:
            sts = scan_text(buf, len, pos, ix, &next);
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

void pcp_archive_meta_index_free(pcp_meta_index *ix)
{
    void *arrays[] = {ix->desc_pmid, ix->desc_type, ix->desc_indom, ix->desc_sem,
                      ix->desc_units, ix->desc_first, ix->desc_nnames, ix->name_off,
                      ix->name_len, ix->name_pmid, ix->indom, ix->inst, ix->inst_name_off,
                      ix->inst_name_len, ix->label, ix->text, ix->pmns};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    memset(ix, 0, sizeof *ix);
}

/* ---- which names the archive PMNS keeps ---------------------------------------------
 *
 * libpcp adds the names of the descriptors, in file order, to a PMNS tree, and a name is
 * dropped when it is bound already (the first binding wins), has an empty component,
 * passes through a leaf, or names a node that has children. The tree itself is only
 * needed to list children; a name lookup needs the kept names. A hash set of the names
 * and of their dotted prefixes decides the same thing without building the tree. */

enum { NODE_NONE = 0, NODE_LEAF = 1, NODE_INTERIOR = 2 };

struct pcp_meta_pmns_slot {
    uint32_t off;       /* the string buf[off, off+len) */
    uint32_t len;
    uint32_t kind;      /* NODE_* */
    uint32_t pmid;      /* of a leaf */
};

typedef struct pcp_meta_pmns_slot pmns_slot;

/* FNV-1a, one byte at a time so that the hash of every dotted prefix of a name comes
 * out of one pass over it */
#define FNV_BASIS 1469598103934665603ull
#define FNV_STEP(h, byte) (((h) ^ (byte)) * 1099511628211ull)

static uint64_t hash_bytes(const uint8_t *s, size_t n)
{
    uint64_t h = FNV_BASIS;
    for (size_t i = 0; i < n; i++)
        h = FNV_STEP(h, s[i]);
    return h;
}

/* The slot of the string s[0, n) whose hash is h: its entry, or the empty slot it would
 * take. The table is never more than half full, so the probe ends. */
static pmns_slot *pmns_find(const uint8_t *buf, pmns_slot *slots, uint64_t mask,
                            const uint8_t *s, size_t n, uint64_t h)
{
    size_t i = (size_t)(h & mask);
    for (;;) {
        pmns_slot *slot = &slots[i];
        if (slot->kind == NODE_NONE)
            return slot;
        if (slot->len == n && memcmp(buf + slot->off, s, n) == 0)
            return slot;
        i = (i + 1) & mask;
    }
}

/* Whether a proper dotted prefix of s[0, n) is a leaf (record != 0: also record every
 * such prefix not yet known as an interior node, starting at off in buf). */
static int prefixes(const uint8_t *buf, pmns_slot *slots, uint64_t mask, uint32_t off,
                    uint32_t n, int record)
{
    const uint8_t *s = buf + off;
    uint64_t h = FNV_BASIS;
    for (uint32_t k = 0; k < n; k++) {
        if (s[k] == '.') {
            pmns_slot *prefix = pmns_find(buf, slots, mask, s, k, h);
            if (!record && prefix->kind == NODE_LEAF)
                return 1;
            if (record && prefix->kind == NODE_NONE)
                *prefix = (pmns_slot){off, k, NODE_INTERIOR, 0};
        }
        h = FNV_STEP(h, s[k]);
    }
    return 0;
}

static int empty_component(const uint8_t *s, uint32_t n)
{
    if (n == 0 || s[0] == '.' || s[n - 1] == '.')
        return 1;
    for (uint32_t i = 1; i < n; i++)
        if (s[i] == '.' && s[i - 1] == '.')
            return 1;
    return 0;
}

int32_t pcp_archive_meta_names_index(const uint8_t *buf, size_t len, pcp_meta_index *ix)
{
    free(ix->pmns);
    ix->pmns = NULL;
    ix->pmns_mask = 0;
    /* every name and every dotted prefix of it may take a slot */
    size_t strings = 0;
    for (int32_t i = 0; i < ix->nname; i++) {
        if (ix->name_len[i] < 0 || ix->name_off[i] > len ||
            (size_t)ix->name_len[i] > len - ix->name_off[i])
            return PM_ERR_LOGREC;       /* not from this buffer's scan */
        const uint8_t *s = buf + ix->name_off[i];
        strings += 1;
        for (int32_t k = 0; k < ix->name_len[i]; k++)
            strings += s[k] == '.';
    }
    size_t cap = 16;
    while (cap < 2 * strings) {
        if (cap > SIZE_MAX / 4 / sizeof(pmns_slot))
            return -ENOMEM;
        cap *= 2;
    }
    pmns_slot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -ENOMEM;
    uint64_t mask = cap - 1;
    int32_t nkept = 0;
    for (int32_t i = 0; i < ix->nname; i++) {
        uint32_t off = ix->name_off[i], n = (uint32_t)ix->name_len[i];
        const uint8_t *s = buf + off;
        uint64_t h = hash_bytes(s, n);
        if (pmns_find(buf, slots, mask, s, n, h)->kind != NODE_NONE || empty_component(s, n))
            continue;       /* bound already, or a node with children, or unusable */
        if (prefixes(buf, slots, mask, off, n, 0))
            continue;       /* through a leaf */
        prefixes(buf, slots, mask, off, n, 1);
        /* the prefixes took other slots: find this name's again */
        *pmns_find(buf, slots, mask, s, n, h) = (pmns_slot){off, n, NODE_LEAF, ix->name_pmid[i]};
        nkept++;
    }
    ix->pmns = slots;
    ix->pmns_mask = mask;
    return nkept;
}

int64_t pcp_archive_meta_name_pmid(const uint8_t *buf, const pcp_meta_index *ix,
                                   const uint8_t *name, size_t n)
{
    if (ix->pmns == NULL)
        return -1;
    const pmns_slot *slot = pmns_find(buf, ix->pmns, ix->pmns_mask, name, n,
                                      hash_bytes(name, n));
    return slot->kind == NODE_LEAF ? (int64_t)slot->pmid : -1;
}
