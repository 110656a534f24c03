/* libFuzzer harness for the archive decoders (csrc/archive_*.c).
 *
 * The first input byte picks the format version (2 or 3); the rest is treated as each
 * kind of archive file in turn:
 *   - a label (pcp_archive_label_decode): string ranges must lie inside the label;
 *   - a data volume: pcp_archive_record_read forwards and backwards from every position it
 *     reaches (bounded steps), each good record re-decoded by pcp_archive_record_decode with
 *     exact-size arrays (and pmFetch's selection from it, pcp_archive_record_select, must
 *     equal decode then pcp_result_select, payloads included), and
 *     pcp_archive_records_scan with small columns;
 *   - a .meta file: every record header, decoded by the decoder for its type, then the
 *     whole file in one pass (pcp_archive_meta_scan), which must agree with that walk
 *     record for record, with every array entry addressing bytes inside the input, and
 *     its archive PMNS (pcp_archive_meta_names_index) answering for every name;
 *   - a .index file.
 * Every offset handed back must address bytes inside the input. */
#include "fuzz_common.h"
#include "archive.h"

#define MAX_STEPS 256

/* The filter of check_kept: pmids with an odd hash are kept. */
static int odd_pmid(const void *ctx, uint32_t pmid)
{
    (void)ctx;
    return ((pmid * 2654435761u) >> 31) & 1;
}

/* pcp_archive_record_keep on a good record must count and fill the same sets, and give
 * each kept set exactly the values the full decode (`all`) gave it. */
static void check_kept(const uint8_t *r, uint32_t len, int version, const pcp_result *all)
{
    int32_t nsets = -1, nvalues = -1;
    CHECK(pcp_archive_record_keep(r, len, version, odd_pmid, NULL, &nsets, &nvalues, NULL) == 0);
    CHECK(nsets >= 0 && nsets <= all->numpmid && nvalues >= 0 && nvalues <= all->nvalues);
    pcp_result kept;
    void *mem = fz_alloc(pcp_result_mem_size(nsets, nvalues), 1);
    pcp_result_bind(&kept, mem, nsets, nvalues);
    CHECK(pcp_archive_record_keep(r, len, version, odd_pmid, NULL, &nsets, &nvalues,
                                  &kept) == 0);
    CHECK(kept.numpmid == nsets && kept.nvalues == nvalues);
    int32_t s = 0;
    for (int32_t i = 0; i < all->numpmid; i++) {
        if (!odd_pmid(NULL, all->pmid[i]))
            continue;
        CHECK(s < nsets && kept.pmid[s] == all->pmid[i] && kept.numval[s] == all->numval[i]);
        int32_t n = all->numval[i] > 0 ? all->numval[i] : 0;
        if (n)
            CHECK(kept.valfmt[s] == all->valfmt[i]);
        for (int32_t j = 0; j < n; j++) {
            int32_t a = all->first[i] + j, b = kept.first[s] + j;
            CHECK(kept.inst[b] == all->inst[a] && kept.vtype[b] == all->vtype[a] &&
                  kept.ival[b] == all->ival[a] && kept.boff[b] == all->boff[a] &&
                  kept.blen[b] == all->blen[a] &&
                  memcmp(&kept.dval[b], &all->dval[a], sizeof(double)) == 0);
        }
        s++;
    }
    CHECK(s == nsets);
    free(mem);
}

/* Any bytes: the kept sets' values must address bytes inside the record. */
static void check_kept_unchecked(const uint8_t *r, size_t len, int version)
{
    int32_t nsets, nvalues;
    if (pcp_archive_record_keep(r, len, version, odd_pmid, NULL, &nsets, &nvalues, NULL) != 0)
        return;
    pcp_result kept;
    void *mem = fz_alloc(pcp_result_mem_size(nsets, nvalues), 1);
    pcp_result_bind(&kept, mem, nsets, nvalues);
    if (pcp_archive_record_keep(r, len, version, odd_pmid, NULL, &nsets, &nvalues, &kept) == 0) {
        for (int32_t k = 0; k < kept.nvalues; k++)
            if (kept.vtype[k] >= 0)
                CHECK(kept.boff[k] <= len && kept.blen[k] <= len - kept.boff[k]);
    }
    free(mem);
}

/* pmFetch's result straight from the record: a request of the odd pmids of `all` in
 * reverse, one of them twice, and a pmid no record has; every instance passes. Sized,
 * then filled: the same sets and values as pcp_result_select over the whole decode, the
 * payloads copied into `data`. With `all` NULL (unchecked bytes: the request is words
 * where v2 and v3 records have their first pmids) only bounds. */
static void check_selected(const uint8_t *r, size_t len, int version, const pcp_result *all)
{
    uint32_t pmids[18];
    uint32_t indoms[18];
    uint8_t known[18];
    int32_t n = 0;
    int32_t have = all ? all->numpmid : 0;
    for (int32_t i = have - 1; i >= 0 && n < 16; i--)
        if (odd_pmid(NULL, all->pmid[i]))
            pmids[n++] = all->pmid[i];
    for (size_t at = 12; all == NULL && at + 4 <= len && n < 8; at += 4)
        pmids[n++] = fz_be32(r + at);
    if (n > 0)
        pmids[n++] = pmids[0];
    pmids[n++] = 0x7ffffffeu;
    for (int32_t i = 0; i < n; i++) {
        indoms[i] = PM_INDOM_NULL;
        known[i] = 1;
    }
    pcp_select_request request = {n, pmids, indoms, known};
    pcp_profile profile = {1, 0, NULL, NULL, NULL, NULL, NULL, 0};
    int32_t nvalues = -1;
    int64_t nbytes = -1;
    int sts = pcp_archive_record_select(r, len, version, &request, &profile, NULL, NULL, 0,
                                        &nvalues, &nbytes);
    if (all == NULL && sts != PCP_SELECT_NEED_ROOM)
        return;
    CHECK(sts == PCP_SELECT_NEED_ROOM && nvalues >= 0 && nbytes >= 0);
    pcp_result out;
    void *mem = fz_alloc(pcp_result_mem_size(n, nvalues), 1);
    pcp_result_bind(&out, mem, n, nvalues);
    out.numpmid = n;
    out.nvalues = nvalues;
    uint8_t *data = fz_alloc((size_t)nbytes + 1, 1);
    int64_t room = nbytes;
    sts = pcp_archive_record_select(r, len, version, &request, &profile, &out, data, room,
                                    &nvalues, &nbytes);
    CHECK(sts == 0 || sts == 1 || (all == NULL && sts == PM_ERR_LOGREC));
    if (sts >= 0) {
        CHECK(out.numpmid == n && out.nvalues == nvalues && nbytes <= room);
        for (int32_t k = 0; k < out.nvalues; k++)
            if (out.vtype[k] >= 0)
                CHECK(out.boff[k] <= nbytes && out.blen[k] <= nbytes - out.boff[k]);
    }
    if (all != NULL) {
        pcp_result ref;
        void *ref_mem = fz_alloc(pcp_result_mem_size(n, nvalues), 1);
        pcp_result_bind(&ref, ref_mem, n, nvalues);
        ref.numpmid = n;
        ref.nvalues = nvalues;
        CHECK(pcp_result_select(all, &request, &profile, &ref) == sts);
        for (int32_t i = 0; i < n; i++)
            CHECK(ref.pmid[i] == out.pmid[i] && ref.numval[i] == out.numval[i] &&
                  ref.valfmt[i] == out.valfmt[i] && ref.first[i] == out.first[i]);
        for (int32_t k = 0; k < nvalues; k++) {
            CHECK(ref.inst[k] == out.inst[k] && ref.vtype[k] == out.vtype[k] &&
                  ref.ival[k] == out.ival[k] && ref.blen[k] == out.blen[k] &&
                  memcmp(&ref.dval[k], &out.dval[k], sizeof(double)) == 0);
            if (out.vtype[k] >= 0)
                CHECK(memcmp(r + ref.boff[k], data + out.boff[k], out.blen[k]) == 0);
        }
        free(ref_mem);
    }
    free(data);
    free(mem);
}

static void check_record(const uint8_t *vol, size_t len, int version, const pcp_log_record *rec)
{
    CHECK(rec->off < len && rec->len <= len - rec->off);
    const uint8_t *r = vol + rec->off;
    int32_t numpmid = -1, nvalues = -1;
    int sts = pcp_archive_record_scan(r, rec->len, version, &numpmid, &nvalues);
    CHECK(sts == 0);
    CHECK(numpmid == rec->numpmid);
    pcp_result out;
    void *mem = fz_alloc(pcp_result_mem_size(numpmid, nvalues), 1);
    pcp_result_bind(&out, mem, numpmid, nvalues);
    CHECK(pcp_archive_record_decode(r, rec->len, version, &out) == 0);
    for (int32_t k = 0; k < nvalues; k++) {
        if (out.vtype[k] < 0)
            continue;
        CHECK(out.boff[k] <= rec->len && out.blen[k] <= rec->len - out.boff[k]);
    }
    for (int32_t i = 0; i < numpmid; i++)
        CHECK(out.first[i] >= 0 && out.first[i] <= nvalues);
    check_kept(r, rec->len, version, &out);
    check_selected(r, rec->len, version, &out);
    /* the pmids from the set headers alone are the full decode's, in order; a short
     * room gets the first of them and the whole count */
    uint32_t *pmids = fz_alloc((size_t)numpmid + 1, sizeof(uint32_t));
    CHECK(pcp_archive_record_pmids(r, rec->len, version, pmids, numpmid) == numpmid);
    for (int32_t i = 0; i < numpmid; i++)
        CHECK(pmids[i] == out.pmid[i]);
    if (numpmid > 0)
        CHECK(pcp_archive_record_pmids(r, rec->len, version, pmids, numpmid - 1) == numpmid);
    free(pmids);
    free(mem);
}

static void walk_volume(const uint8_t *vol, size_t len, int version, size_t label_len,
                        int backward)
{
    uint64_t pos = backward ? len : label_len;
    for (int step = 0; step < MAX_STEPS; step++) {
        uint64_t newpos = 0;
        pcp_log_record rec;
        int sts = pcp_archive_record_read(vol, len, label_len, version, backward, step & 1, pos,
                                          &newpos, &rec);
        if (sts == PCP_LOG_END)
            return;
        CHECK(sts == 0 || sts == PM_ERR_LOGREC);
        CHECK(newpos <= (uint64_t)len + 4);
        if (sts == 0)
            check_record(vol, len, version, &rec);
        if (newpos == pos)
            return;   /* a sticky error: libpcp would fail here again */
        pos = newpos;
    }
}

static void scan_volume(const uint8_t *vol, size_t len, int version, size_t label_len)
{
    enum { RECS = 4, SETS = 16, VALS = 64 };
    int64_t *sec = fz_alloc(RECS, 8), *nsec = fz_alloc(RECS, 8), *ival = fz_alloc(VALS, 8);
    double *dval = fz_alloc(VALS, 8);
    uint64_t *rec_off = fz_alloc(RECS, 8);
    int32_t *numpmid = fz_alloc(RECS, 4), *rec_first = fz_alloc(RECS, 4);
    uint32_t *pmid = fz_alloc(SETS, 4), *boff = fz_alloc(VALS, 4), *blen = fz_alloc(VALS, 4);
    int32_t *numval = fz_alloc(SETS, 4), *valfmt = fz_alloc(SETS, 4);
    int32_t *set_first = fz_alloc(SETS, 4), *inst = fz_alloc(VALS, 4), *vtype = fz_alloc(VALS, 4);
    uint64_t pos = label_len;
    for (int round = 0; round < MAX_STEPS; round++) {
        pcp_log_columns c = {RECS, SETS, VALS, 0, 0, 0, sec, nsec, numpmid, rec_first,
                             rec_off, pmid, numval, valfmt, set_first, inst, vtype, ival,
                             dval, boff, blen};
        uint64_t before = pos;
        int sts = pcp_archive_records_scan(vol, len, version, &pos, &c);
        CHECK(c.nrec >= 0 && c.nrec <= RECS && c.nset <= SETS && c.nval <= VALS);
        for (int32_t k = 0; k < c.nrec; k++) {
            CHECK(rec_first[k] >= 0 && rec_first[k] + numpmid[k] <= c.nset);
            CHECK(rec_off[k] < len);
        }
        for (int32_t i = 0; i < c.nset; i++)
            CHECK(set_first[i] >= 0 && set_first[i] <= c.nval);
        if (sts != 0 || pos == before)
            break;
    }
    free(sec); free(nsec); free(ival); free(dval); free(rec_off); free(numpmid);
    free(rec_first); free(pmid); free(boff); free(blen); free(numval); free(valfmt);
    free(set_first); free(inst); free(vtype);
}

/* What the record-by-record walk saw, for the one-pass scan to agree with. */
typedef struct {
    int complete;       /* the walk reached the end or an error within MAX_STEPS */
    int status;         /* 0 at the end, else the error */
    int32_t ndesc, nname, nindom, ninst, nlabel, ntext;
} meta_walk;

static void walk_meta(const uint8_t *buf, size_t len, size_t label_len, meta_walk *w)
{
    uint64_t pos = label_len;
    memset(w, 0, sizeof *w);
    for (int step = 0; step < MAX_STEPS; step++) {
        int32_t type = 0, rec_len = 0;
        int sts = pcp_archive_meta_header(buf, len, pos, &type, &rec_len);
        if (sts != 0) {
            w->complete = 1;
            w->status = sts == PCP_LOG_END ? 0 : sts;
            return;
        }
        uint64_t next = 0;
        /* size arrays from the bytes really there, never from the record's claim */
        size_t avail = len - (size_t)pos;
        size_t bound = (size_t)rec_len < avail ? (size_t)rec_len : avail;
        size_t cap = bound / 8 + 1;
        if (type == PCP_META_DESC) {
            pcp_desc d;
            uint32_t *off = fz_alloc(4, 4);
            int32_t *nl = fz_alloc(4, 4);
            sts = pcp_archive_meta_desc(buf, len, pos, &d, 4, off, nl, &next);
            for (int32_t i = 0; i < sts && i < 4; i++)
                CHECK(nl[i] >= 0 && off[i] <= len && (size_t)nl[i] <= len - off[i]);
            if (sts >= 0) {
                w->ndesc++;
                w->nname += sts;
            }
            free(off);
            free(nl);
        } else if (type == PCP_META_INDOM_V2 || type == PCP_META_INDOM ||
                   type == PCP_META_INDOM_DELTA) {
            pcp_indom_head h;
            int32_t *inst = fz_alloc(cap, 4), *nl = fz_alloc(cap, 4);
            uint32_t *off = fz_alloc(cap, 4);
            sts = pcp_archive_meta_indom(buf, len, pos, &h, (int32_t)cap, inst, off, nl, &next);
            CHECK(sts < 0 || (size_t)sts <= cap);
            if (sts > 0) {
                w->nindom++;
                w->ninst += sts;
            }
            for (int32_t i = 0; i < sts; i++) {
                CHECK(inst[i] >= 0);
                if (nl[i] >= 0)
                    CHECK(off[i] <= len && (size_t)nl[i] < len - off[i] && buf[off[i] + nl[i]] == 0);
            }
            free(inst);
            free(nl);
            free(off);
        } else if (type == PCP_META_LABEL_V2 || type == PCP_META_LABEL) {
            pcp_label_head h;
            size_t set_cap = bound / 12 + 1;
            pcp_labelset *sets = fz_alloc(set_cap, sizeof *sets);
            pcp_label *labels = fz_alloc(cap, sizeof *labels);
            int32_t total = 0;
            sts = pcp_archive_meta_labels(buf, len, pos, &h, (int32_t)set_cap, sets, (int32_t)cap,
                                          labels, &total, &next);
            for (int32_t i = 0; i < sts; i++) {
                CHECK(sets[i].json_off <= len && (size_t)sets[i].json_len <= len - sets[i].json_off);
                CHECK(sets[i].first >= 0 && sets[i].first <= total);
            }
            CHECK(sts < 0 || (size_t)total <= cap);
            if (sts >= 0)
                w->nlabel++;
            free(sets);
            free(labels);
        } else if (type == PCP_META_TEXT) {
            uint32_t tt, ident, toff, tlen;
            sts = pcp_archive_meta_text(buf, len, pos, &tt, &ident, &toff, &tlen, &next);
            if (sts == 0) {
                CHECK(toff <= len && tlen <= len - toff);
                w->ntext++;
            }
        } else {
            w->complete = 1;
            w->status = PM_ERR_RECTYPE;
            return;
        }
        if (sts < 0) {
            w->complete = 1;
            w->status = sts;
            return;
        }
        if (next <= pos)
            return;
        pos = next;
    }
}

/* The one-pass scan of the same bytes: every entry inside the input, and the same
 * records as the walk found. Label records it kept must decode where it says. */
static void scan_meta(const uint8_t *buf, size_t len, size_t label_len, const meta_walk *w)
{
    pcp_meta_index ix;
    memset(&ix, 0, sizeof ix);
    int sts = pcp_archive_meta_scan(buf, len, label_len, &ix);
    CHECK(sts <= 0);
    CHECK(ix.ndesc <= ix.desc_cap || ix.ndesc == 0);
    CHECK(ix.nname <= ix.name_cap || ix.nname == 0);
    CHECK(ix.ninst <= ix.inst_cap || ix.ninst == 0);
    if (w->complete) {
        CHECK(sts == w->status);
        CHECK(ix.ndesc == w->ndesc && ix.nname == w->nname && ix.nindom == w->nindom);
        CHECK(ix.ninst == w->ninst && ix.nlabel == w->nlabel && ix.ntext == w->ntext);
    }
    int32_t names = 0;
    for (int32_t i = 0; i < ix.ndesc; i++) {
        CHECK(ix.desc_first[i] == names && ix.desc_nnames[i] >= 0);
        names += ix.desc_nnames[i];
    }
    CHECK(names == ix.nname);
    for (int32_t i = 0; i < ix.nname; i++) {
        CHECK(ix.name_len[i] >= 0 && ix.name_off[i] <= len);
        CHECK((size_t)ix.name_len[i] <= len - ix.name_off[i]);
        CHECK(memchr(buf + ix.name_off[i], 0, (size_t)ix.name_len[i]) == NULL);
    }
    int32_t insts = 0;
    for (int32_t i = 0; i < ix.nindom; i++) {
        const pcp_meta_indom_rec *r = &ix.indom[i];
        CHECK(r->first == insts && r->numinst > 0);
        CHECK(r->type == PCP_META_INDOM_V2 || r->type == PCP_META_INDOM ||
              r->type == PCP_META_INDOM_DELTA);
        insts += r->numinst;
    }
    CHECK(insts == ix.ninst);
    for (int32_t i = 0; i < ix.ninst; i++) {
        CHECK(ix.inst[i] >= 0);
        if (ix.inst_name_len[i] < 0)
            continue;
        CHECK(ix.inst_name_off[i] <= len);
        CHECK((size_t)ix.inst_name_len[i] < len - ix.inst_name_off[i]);
        CHECK(buf[ix.inst_name_off[i] + (size_t)ix.inst_name_len[i]] == 0);
    }
    for (int32_t i = 0; i < ix.nlabel; i++) {
        const pcp_meta_label_rec *r = &ix.label[i];
        CHECK(r->off < len && r->room > 0 && (size_t)r->room <= len - r->off);
        size_t set_cap = (size_t)r->room / 12 + 1, label_cap = (size_t)r->room / 8 + 1;
        pcp_labelset *sets = fz_alloc(set_cap, sizeof *sets);
        pcp_label *labels = fz_alloc(label_cap, sizeof *labels);
        pcp_label_head h;
        int32_t total = 0;
        uint64_t next = 0;
        int n = pcp_archive_meta_labels(buf, len, r->off, &h, (int32_t)set_cap, sets,
                                        (int32_t)label_cap, labels, &total, &next);
        CHECK(n >= 0 && (size_t)n <= set_cap && (size_t)total <= label_cap);
        CHECK(h.type == r->type && h.ident == r->ident);
        free(sets);
        free(labels);
    }
    for (int32_t i = 0; i < ix.ntext; i++)
        CHECK(ix.text[i].off <= len && ix.text[i].len <= len - ix.text[i].off);
    /* the archive PMNS's hash set: every name looked up, kept ones found, and a kept
     * name's pmid is one its descriptors gave it */
    int32_t kept = pcp_archive_meta_names_index(buf, len, &ix);
    CHECK(kept >= 0 && kept <= ix.nname);
    int32_t found = 0;
    for (int32_t i = 0; i < ix.nname; i++) {
        int64_t pmid = pcp_archive_meta_name_pmid(buf, &ix, buf + ix.name_off[i],
                                                  (size_t)ix.name_len[i]);
        if (pmid < 0)
            continue;
        int64_t first = -1;
        for (int32_t k = 0; k < ix.nname && first < 0; k++)
            if (ix.name_len[k] == ix.name_len[i] &&
                memcmp(buf + ix.name_off[k], buf + ix.name_off[i], (size_t)ix.name_len[i]) == 0)
                first = k;
        CHECK(first >= 0 && pmid == (int64_t)ix.name_pmid[first]);
        found += first == i;
    }
    CHECK(found == kept);
    CHECK(pcp_archive_meta_name_pmid(buf, &ix, buf, len < 64 ? len : 64) >= -1);
    pcp_archive_meta_index_free(&ix);
    CHECK(ix.ndesc == 0 && ix.desc_pmid == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int version = (data[0] & 1) ? 3 : 2;
    size_t label_len = (data[0] & 2) ? (version == 3 ? 808 : 132) : (data[0] >> 4);
    uint8_t *buf = fz_dup(data + 1, size - 1);
    size_t len = size - 1;
    if (label_len > len)
        label_len = len;

    pcp_log_label label;
    if (pcp_archive_label_decode(buf, len, &label) == 0) {
        CHECK(label.len <= len);
        CHECK(label.host_off + label.host_len <= label.len);
        CHECK(label.tz_off + label.tz_len <= label.len);
        CHECK(label.zone_off + label.zone_len <= label.len);
    }
    walk_volume(buf, len, version, label_len, 0);
    walk_volume(buf, len, version, label_len, 1);
    check_kept_unchecked(buf, len, version);
    check_selected(buf, len, version, NULL);
    if (label_len < len) {
        check_kept_unchecked(buf + label_len, len - label_len, version);
        check_selected(buf + label_len, len - label_len, version, NULL);
    }
    scan_volume(buf, len, version, label_len);
    meta_walk w;
    walk_meta(buf, len, label_len, &w);
    scan_meta(buf, len, label_len, &w);

    pcp_index_entry entries[8];
    int n = pcp_archive_index_decode(buf, len, label_len, version, 8, entries);
    CHECK(n >= 0);
    free(buf);
    return 0;
}
