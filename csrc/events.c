/* Event record arrays: one walk validates (scan) or fills columns (decode).
 *
 * libpcp checks an array in two stages and the error codes depend on it: first the
 * structure of the whole array (record and parameter headers and lengths within
 * ea_len, MISSED never combined with other flags), then, while unpacking, each
 * parameter's type. So a structural error anywhere wins over a bad type earlier in the
 * array. One pass reproduces that by remembering the first type error and returning it
 * only once the structure of the whole array has been walked.
 *
 * One check libpcp lacks belongs to the structure here: a parameter shorter than its
 * own header or than its type's value (PM_ERR_TOOSMALL, see the parameter loop). */
#include "events.h"
#include "cursor.h"

#define EVENT_FLAG_MISSED 0x80000000u
#define EVENT_ARRAY_HDR 8      /* header word + ea_nrecords */
#define EVENT_PARAM_HDR 8      /* ep_pmid + ep_type/ep_len word */

/* Where the walk writes, when it writes: the columns and the next free slots. */
typedef struct {
    pcp_events *out;
    int32_t block;
    int64_t rec;        /* next record slot */
    int64_t set;        /* next value-set slot */
} sink;

static int put_set(sink *s, int32_t param, uint32_t pmid, int32_t type, int32_t vtype,
                   int64_t ival, double dval, uint32_t boff, uint32_t blen)
{
    pcp_events *o = s->out;
    if (s->set >= o->nsets)
        return PM_ERR_TOOBIG;
    int64_t k = s->set++;
    o->ival[k] = ival;
    o->dval[k] = dval;
    o->rec[k] = (int32_t)(s->rec - 1);
    o->param[k] = param;
    o->pmid[k] = pmid;
    o->type[k] = type;
    o->vtype[k] = vtype;
    o->boff[k] = boff;
    o->blen[k] = blen;
    return 0;
}

/* Emit the value set of one parameter whose header starts at block offset `at`. */
static int put_param(sink *s, const uint8_t *blk, size_t block_off, size_t at, int32_t index,
                     uint32_t pmid, uint32_t type, uint32_t plen)
{
    const uint8_t *v = blk + at + EVENT_PARAM_HDR;
    uint32_t voff = (uint32_t)(block_off + at + EVENT_PARAM_HDR);
    switch (type) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
        return put_set(s, index, pmid, (int32_t)type, -1, (int32_t)pcp_load_be32(v), 0.0, 0, 0);
    case PM_TYPE_64:
    case PM_TYPE_U64:
        return put_set(s, index, pmid, (int32_t)type, (int32_t)type,
                       (int64_t)pcp_load_be64(v), 0.0, voff, 8);
    case PM_TYPE_FLOAT:
        return put_set(s, index, pmid, (int32_t)type, (int32_t)type, 0,
                       (double)pcp_float_from_bits(pcp_load_be32(v)), voff, 4);
    case PM_TYPE_DOUBLE:
        return put_set(s, index, pmid, (int32_t)type, (int32_t)type, 0,
                       pcp_double_from_bits(pcp_load_be64(v)), voff, 8);
    default: /* STRING, AGGREGATE, AGGREGATE_STATIC: the bytes as they are */
        return put_set(s, index, pmid, (int32_t)type, (int32_t)type, 0, 0.0, voff, plen - 4);
    }
}

/* Walk one array. Counts go to *nrec / *nsets; with s != NULL the columns are filled. */
static int walk_block(const uint8_t *buf, size_t len, size_t off, size_t avail, int32_t kind,
                      sink *s, int64_t *nrec_out, int64_t *nsets_out)
{
    if (kind != PM_TYPE_EVENT && kind != PM_TYPE_HIGHRES_EVENT)
        return PM_ERR_TYPE;
    if (off > len || avail > len - off)
        return PM_ERR_TOOBIG;
    if (avail < 4)
        return PM_ERR_TOOSMALL;
    const uint8_t *blk = buf + off;
    uint32_t header = pcp_load_be32(blk);
    uint32_t ea_len = header & 0xffffffu;
    if ((int32_t)(header >> 24) != kind)
        return PM_ERR_TYPE;
    if (ea_len < EVENT_ARRAY_HDR)
        return PM_ERR_TOOSMALL;
    if (ea_len > avail)
        return PM_ERR_TOOBIG;

    pcp_cursor c = pcp_cursor_at(blk, ea_len, 4);
    int32_t nrecords = pcp_read_i32(&c);
    if (nrecords < 0)
        return PM_ERR_TOOSMALL;

    int highres = kind == PM_TYPE_HIGHRES_EVENT;
    size_t rec_hdr = highres ? 24 : 16;
    int type_err = 0;
    int64_t nsets = 0;
    int sts;
    /* Every record takes rec_hdr bytes, so this loop ends within ea_len / 16 rounds. */
    for (int32_t r = 0; r < nrecords; r++) {
        if (pcp_cursor_left(&c) < rec_hdr)
            return PM_ERR_TOOBIG;
        int64_t sec, nsec;
        if (highres) {
            sec = pcp_read_i64(&c);
            nsec = pcp_read_i64(&c);
        } else {
            sec = pcp_read_i32(&c);
            nsec = (int64_t)pcp_read_i32(&c) * 1000;
        }
        uint32_t flags = pcp_read_u32(&c);
        int32_t nparams = pcp_read_i32(&c);

        int32_t walk = nparams > 0 ? nparams : 0;
        int64_t numpmid; /* libpcp's count_event_parameters() */
        if (flags & EVENT_FLAG_MISSED) {
            if (flags != EVENT_FLAG_MISSED)
                return PM_ERR_CONV;
            walk = 0;
            numpmid = 2;
        } else {
            numpmid = flags == 0 ? (int64_t)nparams : (int64_t)nparams + 1;
        }

        if (s) {
            pcp_events *o = s->out;
            if (s->rec >= o->nrecords)
                return PM_ERR_TOOBIG;
            int64_t k = s->rec++;
            o->sec[k] = sec;
            o->nsec[k] = nsec;
            o->flags[k] = flags;
            o->nparams[k] = nparams;
            /* Only reachable when the parameters fit, so numpmid is far from the limits. */
            o->numpmid[k] = (int32_t)numpmid;
            o->first[k] = (int32_t)s->set;
            o->block[k] = s->block;
            if (numpmid > 0 && flags != 0) {
                sts = put_set(s, -1, PCP_EVENT_FLAGS_PMID, PM_TYPE_U32, -1, (int32_t)flags,
                              0.0, 0, 0);
                if (sts < 0)
                    return sts;
            }
            if (flags == EVENT_FLAG_MISSED) {
                sts = put_set(s, -2, PCP_EVENT_MISSED_PMID, PM_TYPE_U32, -1, nparams, 0.0, 0, 0);
                if (sts < 0)
                    return sts;
            }
        }
        nsets += numpmid > 0 ? numpmid : 0;

        /* Each parameter advances at least 4 bytes and needs 8 to start, so this loop
         * also ends within ea_len / 4 rounds whatever nparams claims. */
        for (int32_t p = 0; p < walk; p++) {
            size_t at = c.pos;
            uint32_t pmid = pcp_read_u32(&c);
            uint32_t ph = pcp_read_u32(&c);
            if (c.bad)
                return PM_ERR_TOOBIG;
            uint32_t type = ph >> 24;
            uint32_t plen = ph & 0xffffffu;
            size_t size = 4 + pcp_pad4(plen);
            if (size > ea_len - at)
                return PM_ERR_TOOBIG;
            c.pos = at + size;
            /* libpcp checks neither: with ep_len < 4 the next parameter overlaps this
             * one, and a number longer than its parameter is read (and, on receipt,
             * byte-swapped) over the fields that follow, so libpcp's answer depends on
             * bytes that are not this parameter's. Refuse both, at once. */
            int need = pcp_type_size(type);
            if (plen < 4 || (need > 0 && plen - 4 < (uint32_t)need))
                return PM_ERR_TOOSMALL;
            if (type_err)
                continue;
            if (need < 0) {
                type_err = PM_ERR_TYPE;
                continue;
            }
            if (s) {
                sts = put_param(s, blk, off, at, p, pmid, type, plen);
                if (sts < 0)
                    return sts;
            }
        }
    }
    if (type_err)
        return type_err;
    *nrec_out = nrecords;
    *nsets_out = nsets;
    return 0;
}

int pcp_events_scan(const uint8_t *buf, size_t len, int32_t nblocks, const uint32_t *off,
                    const uint32_t *blen, const int32_t *kind, int32_t *status,
                    int32_t *nrecords, int32_t *nsets)
{
    if (len > UINT32_MAX || nblocks < 0)
        return PM_ERR_TOOBIG;
    int64_t tr = 0, ts = 0;
    for (int32_t b = 0; b < nblocks; b++) {
        int64_t r = 0, n = 0;
        status[b] = walk_block(buf, len, off[b], blen[b], kind[b], NULL, &r, &n);
        if (status[b] == 0) {
            tr += r;
            ts += n;
        }
        if (tr > INT32_MAX || ts > INT32_MAX)
            return PM_ERR_TOOBIG;
    }
    *nrecords = (int32_t)tr;
    *nsets = (int32_t)ts;
    return 0;
}

int pcp_events_decode(const uint8_t *buf, size_t len, int32_t nblocks, const uint32_t *off,
                      const uint32_t *blen, const int32_t *kind, const int32_t *status,
                      pcp_events *out)
{
    if (len > UINT32_MAX || nblocks < 0 || out == NULL || out->nrecords < 0 || out->nsets < 0)
        return PM_ERR_TOOBIG;
    sink s;
    s.out = out;
    s.rec = 0;
    s.set = 0;
    for (int32_t b = 0; b < nblocks; b++) {
        if (status[b] != 0)
            continue;
        int64_t r, n;
        s.block = b;
        int sts = walk_block(buf, len, off[b], blen[b], kind[b], &s, &r, &n);
        if (sts < 0)
            return sts;
    }
    /* The capacities came from the scan: anything else means different arguments. */
    if (s.rec != out->nrecords || s.set != out->nsets)
        return PM_ERR_TOOBIG;
    return 0;
}

int pcp_events_collect(const uint8_t *buf, size_t len, int32_t n,
                       const pcp_result *const *results, const uint32_t *base,
                       const uint32_t *size, int32_t npmids, const uint32_t *pmids,
                       int32_t cap, uint32_t *off, uint32_t *blen, int32_t *kind,
                       int32_t *src_result, int32_t *src_value, uint32_t *src_pmid,
                       int32_t *src_inst)
{
    if (len > UINT32_MAX || n < 0)
        return PM_ERR_TOOBIG;
    int64_t found = 0;
    for (int32_t r = 0; r < n; r++) {
        const pcp_result *res = results[r];
        if (base[r] > len || size[r] > len - base[r])
            return PM_ERR_TOOBIG;
        for (int32_t i = 0; i < res->numpmid; i++) {
            int32_t numval = res->numval[i];
            if (numval <= 0 || res->valfmt[i] == PM_VAL_INSITU)
                continue;
            uint32_t pmid = res->pmid[i];
            if (npmids > 0) {
                int32_t m = 0;
                while (m < npmids && pmids[m] != pmid)
                    m++;
                if (m == npmids)
                    continue;
            }
            for (int32_t k = res->first[i]; k < res->first[i] + numval; k++) {
                uint32_t b = res->boff[k], l = res->blen[k];
                if (b < 4 || b > size[r] || l > size[r] - b)
                    return PM_ERR_TOOBIG;
                uint32_t t = buf[base[r] + b - 4];
                if (t != PM_TYPE_EVENT && t != PM_TYPE_HIGHRES_EVENT)
                    continue;
                if (found < cap) {
                    off[found] = base[r] + b - 4;
                    blen[found] = l + 4;
                    kind[found] = (int32_t)t;
                    src_result[found] = r;
                    src_value[found] = k;
                    src_pmid[found] = pmid;
                    src_inst[found] = res->inst[k];
                }
                if (++found > INT32_MAX)
                    return PM_ERR_TOOBIG;
            }
        }
    }
    return (int)found;
}

int pcp_events_pad(const uint8_t *buf, size_t len, int32_t n, const uint32_t *boff,
                   const uint32_t *blen, uint32_t width, uint8_t *out)
{
    if (n < 0)
        return PM_ERR_TOOBIG;
    for (int32_t i = 0; i < n; i++) {
        if (blen[i] > width || boff[i] > len || blen[i] > len - boff[i])
            return PM_ERR_TOOBIG;
    }
    for (int32_t i = 0; i < n; i++) {
        uint8_t *row = out + (size_t)i * width;
        if (blen[i])
            memcpy(row, buf + boff[i], blen[i]);
        if (width > blen[i])
            memset(row + blen[i], 0, width - blen[i]);
    }
    return 0;
}

size_t pcp_events_mem_size(int32_t nrecords, int32_t nsets)
{
    size_t nr = nrecords > 0 ? (size_t)nrecords : 1;
    size_t ns = nsets > 0 ? (size_t)nsets : 1;
    return nr * 36 + ns * 44;
}

void pcp_events_bind(pcp_events *out, void *mem, int32_t nrecords, int32_t nsets)
{
    size_t nr = nrecords > 0 ? (size_t)nrecords : 1;
    size_t ns = nsets > 0 ? (size_t)nsets : 1;
    uint8_t *m = mem;
    out->nrecords = nrecords > 0 ? nrecords : 0;
    out->nsets = nsets > 0 ? nsets : 0;
    /* 8-byte columns first */
    out->ival = (int64_t *)(void *)m;
    out->dval = (double *)(void *)(m + ns * 8);
    m += ns * 16;
    out->sec = (int64_t *)(void *)m;
    out->nsec = (int64_t *)(void *)(m + nr * 8);
    m += nr * 16;
    out->rec = (int32_t *)(void *)m;
    out->param = (int32_t *)(void *)(m + ns * 4);
    out->pmid = (uint32_t *)(void *)(m + ns * 8);
    out->type = (int32_t *)(void *)(m + ns * 12);
    out->vtype = (int32_t *)(void *)(m + ns * 16);
    out->boff = (uint32_t *)(void *)(m + ns * 20);
    out->blen = (uint32_t *)(void *)(m + ns * 24);
    m += ns * 28;
    out->flags = (uint32_t *)(void *)m;
    out->nparams = (int32_t *)(void *)(m + nr * 4);
    out->numpmid = (int32_t *)(void *)(m + nr * 8);
    out->first = (int32_t *)(void *)(m + nr * 12);
    out->block = (int32_t *)(void *)(m + nr * 16);
}

/* ---- the columnar form ------------------------------------------------------------- */

/* Stable merge sort of set indices by pmid (ties keep record order). */
static void sort_by_pmid(int32_t *idx, int32_t *tmp, int32_t n, const uint32_t *pmid)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = pmid[idx[b]] < pmid[idx[a]] ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[k++] = idx[a++];
            while (b < hi)
                tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

int32_t pcp_events_param_order(const pcp_events *ev, int32_t *order, int32_t *tmp,
                               int32_t *ngroups)
{
    int32_t n = 0;
    for (int32_t k = 0; k < ev->nsets; k++)
        if (ev->param[k] >= 0)
            order[n++] = k;
    sort_by_pmid(order, tmp, n, ev->pmid);
    int32_t g = 0;
    for (int32_t i = 0; i < n; i++)
        if (i == 0 || ev->pmid[order[i]] != ev->pmid[order[i - 1]])
            g++;
    *ngroups = g;
    return n;
}

size_t pcp_events_columns_mem_size(int32_t nrecords, int32_t nparams, int32_t ngroups)
{
    size_t nr = nrecords > 0 ? (size_t)nrecords : 1;
    size_t np = nparams > 0 ? (size_t)nparams : 1;
    size_t ng = ngroups > 0 ? (size_t)ngroups : 1;
    return nr * 40 + np * 24 + ng * 20;
}

void pcp_events_columns_bind(pcp_event_columns *out, void *mem, int32_t nrecords,
                             int32_t nparams, int32_t ngroups)
{
    size_t nr = nrecords > 0 ? (size_t)nrecords : 1;
    size_t np = nparams > 0 ? (size_t)nparams : 1;
    size_t ng = ngroups > 0 ? (size_t)ngroups : 1;
    uint8_t *m = mem;
    out->nrecords = nrecords > 0 ? nrecords : 0;
    out->nparams = nparams > 0 ? nparams : 0;
    out->ngroups = ngroups > 0 ? ngroups : 0;
    out->sec = (int64_t *)(void *)m;
    out->nsec = (int64_t *)(void *)(m + nr * 8);
    m += nr * 16;
    out->value = (int64_t *)(void *)m;
    m += np * 8;
    out->flags = (uint32_t *)(void *)m;
    out->missed = (int32_t *)(void *)(m + nr * 4);
    out->count = (int32_t *)(void *)(m + nr * 8);
    out->result = (int32_t *)(void *)(m + nr * 12);
    out->metric = (uint32_t *)(void *)(m + nr * 16);
    out->inst = (int32_t *)(void *)(m + nr * 20);
    m += nr * 24;
    out->event = (int32_t *)(void *)m;
    out->type = (int32_t *)(void *)(m + np * 4);
    out->boff = (uint32_t *)(void *)(m + np * 8);
    out->blen = (uint32_t *)(void *)(m + np * 12);
    m += np * 16;
    out->gpmid = (uint32_t *)(void *)m;
    out->gtype = (int32_t *)(void *)(m + ng * 4);
    out->gstart = (int32_t *)(void *)(m + ng * 8);
    out->gcount = (int32_t *)(void *)(m + ng * 12);
    out->gwidth = (uint32_t *)(void *)(m + ng * 16);
}

int pcp_events_columns_fill(const pcp_events *ev, const int32_t *order, const int32_t *bres,
                            const uint32_t *bpmid, const int32_t *binst, pcp_event_columns *out)
{
    int32_t nrec = ev->nrecords;
    if (out->nrecords != nrec)
        return PM_ERR_TOOBIG;
    for (int32_t r = 0; r < nrec; r++) {
        int32_t b = ev->block[r];
        out->sec[r] = ev->sec[r];
        out->nsec[r] = ev->nsec[r];
        out->flags[r] = ev->flags[r];
        out->missed[r] = ev->flags[r] == EVENT_FLAG_MISSED ? ev->nparams[r] : 0;
        out->count[r] = 0;
        out->result[r] = bres ? bres[b] : 0;
        out->metric[r] = bpmid ? bpmid[b] : 0;
        out->inst[r] = binst ? binst[b] : -1;
    }
    int32_t g = -1;
    for (int32_t i = 0; i < out->nparams; i++) {
        int32_t k = order[i];
        if (k < 0 || k >= ev->nsets || ev->param[k] < 0)
            return PM_ERR_TOOBIG;
        int32_t r = ev->rec[k];
        if (r < 0 || r >= nrec)
            return PM_ERR_TOOBIG;
        out->count[r]++;
        int32_t t = ev->type[k];
        if (t == PM_TYPE_FLOAT || t == PM_TYPE_DOUBLE)
            memcpy(&out->value[i], &ev->dval[k], 8);
        else
            out->value[i] = ev->ival[k];
        out->event[i] = r;
        out->type[i] = t;
        out->boff[i] = ev->boff[k];
        out->blen[i] = ev->blen[k];
        if (g < 0 || ev->pmid[k] != out->gpmid[g]) {
            if (++g >= out->ngroups)
                return PM_ERR_TOOBIG;
            out->gpmid[g] = ev->pmid[k];
            out->gtype[g] = t;
            out->gstart[g] = i;
            out->gcount[g] = 0;
            out->gwidth[g] = 0;
        }
        out->gcount[g]++;
        if (out->gtype[g] != t)
            out->gtype[g] = -1;
        if (ev->blen[k] > out->gwidth[g])
            out->gwidth[g] = ev->blen[k];
    }
    return g + 1 == out->ngroups ? 0 : PM_ERR_TOOBIG;
}
