/* libFuzzer harness for the event record unpacker (events.c).
 *
 * Byte 0 of the input is a control byte: bit 0 picks the kind expected of the blocks
 * (PM_TYPE_EVENT / PM_TYPE_HIGHRES_EVENT); with bit 4 clear the rest of the input is
 * one value block, with bit 4 set bits 1-3 give 1 + the number of blocks, each
 * described by the next 4 bytes (offset, length: 16 bits each, taken modulo a little
 * more than the buffer so some blocks overrun it) and the remainder is the buffer.
 * The buffer sits in an exact-size allocation, and so does every output column, so
 * ASan reports any read or write past them. A successful decode must satisfy the
 * postconditions of events.h (records and value sets consistent, every offset in the
 * buffer, every value equal to its bytes); it is repeated into one bound allocation,
 * and a decode whose status array claims every block is valid must stay in bounds;
 * the columnar layout (param order, columns, padded strings) is built and checked.
 * With bit 5 set the buffer is also taken as a RESULT / HIGHRES_RESULT PDU (bit 0):
 * result.c decodes it and pcp_events_collect() must find exactly its event blocks. */
#include "fuzz_common.h"
#include "events.h"
#include "result.h"

typedef struct {
    pcp_events ev;
    void *cols[16];
} owned;

static void alloc_events(owned *o, int32_t nrec, int32_t nsets)
{
    size_t nr = (size_t)nrec, ns = (size_t)nsets;
    pcp_events *e = &o->ev;
    memset(o, 0, sizeof *o);
    e->nrecords = nrec;
    e->nsets = nsets;
    o->cols[0] = e->sec = fz_alloc(nr, 8);
    o->cols[1] = e->nsec = fz_alloc(nr, 8);
    o->cols[2] = e->flags = fz_alloc(nr, 4);
    o->cols[3] = e->nparams = fz_alloc(nr, 4);
    o->cols[4] = e->numpmid = fz_alloc(nr, 4);
    o->cols[5] = e->first = fz_alloc(nr, 4);
    o->cols[6] = e->block = fz_alloc(nr, 4);
    o->cols[7] = e->ival = fz_alloc(ns, 8);
    o->cols[8] = e->dval = fz_alloc(ns, 8);
    o->cols[9] = e->rec = fz_alloc(ns, 4);
    o->cols[10] = e->param = fz_alloc(ns, 4);
    o->cols[11] = e->pmid = fz_alloc(ns, 4);
    o->cols[12] = e->type = fz_alloc(ns, 4);
    o->cols[13] = e->vtype = fz_alloc(ns, 4);
    o->cols[14] = e->boff = fz_alloc(ns, 4);
    o->cols[15] = e->blen = fz_alloc(ns, 4);
}

static void free_events(owned *o)
{
    for (int i = 0; i < 16; i++)
        free(o->cols[i]);
}

static uint64_t be64(const uint8_t *p)
{
    return ((uint64_t)fz_be32(p) << 32) | fz_be32(p + 4);
}

static void check_set(const uint8_t *buf, size_t len, const pcp_events *e, int32_t k)
{
    int32_t t = e->type[k];
    CHECK(t >= PM_TYPE_32 && t <= PM_TYPE_AGGREGATE_STATIC);
    if (t == PM_TYPE_32 || t == PM_TYPE_U32) {
        CHECK(e->vtype[k] == -1 && e->boff[k] == 0 && e->blen[k] == 0);
        CHECK(e->ival[k] >= INT32_MIN && e->ival[k] <= INT32_MAX);
        return;
    }
    CHECK(e->vtype[k] == t);
    /* the parameter header word precedes the value bytes, inside the buffer */
    CHECK(e->boff[k] >= 8 && (size_t)e->boff[k] <= len);
    CHECK((size_t)e->blen[k] <= len - e->boff[k]);
    const uint8_t *v = buf + e->boff[k];
    uint32_t ph = fz_be32(v - 4);
    CHECK((int32_t)(ph >> 24) == t);
    uint32_t plen = ph & 0xffffffu;
    switch (t) {
    case PM_TYPE_64:
    case PM_TYPE_U64:
        CHECK(e->blen[k] == 8 && plen >= 12);
        CHECK((uint64_t)e->ival[k] == be64(v));
        break;
    case PM_TYPE_FLOAT: {
        CHECK(e->blen[k] == 4 && plen >= 8);
        uint32_t bits = fz_be32(v);
        float f;
        memcpy(&f, &bits, 4);
        CHECK(e->dval[k] == (double)f || (f != f && e->dval[k] != e->dval[k]));
        break;
    }
    case PM_TYPE_DOUBLE: {
        CHECK(e->blen[k] == 8 && plen >= 12);
        uint64_t bits = be64(v), got;
        memcpy(&got, &e->dval[k], 8);
        CHECK(got == bits);
        break;
    }
    default:
        CHECK(plen == e->blen[k] + 4);
        CHECK(e->ival[k] == 0 && e->dval[k] == 0.0);
        break;
    }
}

static void check_decoded(const uint8_t *buf, size_t len, const pcp_events *e,
                          int32_t nblocks, const uint32_t *off, const int32_t *kind,
                          const int32_t *status)
{
    int32_t k = 0;
    for (int32_t r = 0; r < e->nrecords; r++) {
        int32_t b = e->block[r];
        CHECK(b >= 0 && b < nblocks && status[b] == 0);
        CHECK(r == 0 || b >= e->block[r - 1]);
        if (kind[b] == PM_TYPE_EVENT)
            CHECK(e->nsec[r] % 1000 == 0);
        CHECK(e->first[r] == k);
        uint32_t flags = e->flags[r];
        int32_t want = e->numpmid[r] > 0 ? e->numpmid[r] : 0;
        if (flags & 0x80000000u) {
            CHECK(flags == 0x80000000u && e->numpmid[r] == 2);
        } else if (flags == 0) {
            CHECK(e->numpmid[r] == e->nparams[r]);
        } else {
            CHECK((int64_t)e->numpmid[r] == (int64_t)e->nparams[r] + 1);
        }
        for (int32_t n = 0; n < want; n++, k++) {
            CHECK(k < e->nsets);
            CHECK(e->rec[k] == r);
            if (n == 0 && flags != 0) {
                CHECK(e->param[k] == -1 && e->pmid[k] == PCP_EVENT_FLAGS_PMID);
                CHECK(e->type[k] == PM_TYPE_U32 && e->vtype[k] == -1);
                CHECK(e->ival[k] == (int32_t)flags);
            } else if (n == 1 && flags == 0x80000000u) {
                CHECK(e->param[k] == -2 && e->pmid[k] == PCP_EVENT_MISSED_PMID);
                CHECK(e->ival[k] == e->nparams[r]);
            } else {
                CHECK(e->param[k] == n - (flags != 0));
                check_set(buf, len, e, k);
            }
        }
    }
    CHECK(k == e->nsets);
    (void)off;
}

/* Bound layout: columns inside one pcp_events_mem_size() block, aligned, disjoint, and
 * the same decode as with separate columns. */
static void try_bound(const uint8_t *buf, size_t len, int32_t nb, const uint32_t *off,
                      const uint32_t *blen, const int32_t *kind, const int32_t *status,
                      const pcp_events *ref)
{
    int32_t nr = ref->nrecords, ns = ref->nsets;
    size_t size = pcp_events_mem_size(nr, ns);
    uint64_t *mem = fz_alloc((size + 7) / 8, 8);
    pcp_events e;
    memset(&e, 0, sizeof e);
    pcp_events_bind(&e, mem, nr, ns);
    const struct {
        const void *p;
        size_t n, align;
    } col[] = {
        {e.sec, (size_t)nr * 8, 8},   {e.nsec, (size_t)nr * 8, 8},  {e.flags, (size_t)nr * 4, 4},
        {e.nparams, (size_t)nr * 4, 4}, {e.numpmid, (size_t)nr * 4, 4},
        {e.first, (size_t)nr * 4, 4}, {e.block, (size_t)nr * 4, 4}, {e.ival, (size_t)ns * 8, 8},
        {e.dval, (size_t)ns * 8, 8},  {e.rec, (size_t)ns * 4, 4},   {e.param, (size_t)ns * 4, 4},
        {e.pmid, (size_t)ns * 4, 4},  {e.type, (size_t)ns * 4, 4},  {e.vtype, (size_t)ns * 4, 4},
        {e.boff, (size_t)ns * 4, 4},  {e.blen, (size_t)ns * 4, 4},
    };
    uintptr_t lo = (uintptr_t)mem, hi = lo + size;
    for (size_t i = 0; i < sizeof col / sizeof col[0]; i++) {
        uintptr_t a = (uintptr_t)col[i].p;
        CHECK(a >= lo && a <= hi && col[i].n <= hi - a && a % col[i].align == 0);
        for (size_t j = 0; j < i; j++) {
            uintptr_t b = (uintptr_t)col[j].p;
            CHECK(a + col[i].n <= b || b + col[j].n <= a);
        }
    }
    CHECK(pcp_events_decode(buf, len, nb, off, blen, kind, status, &e) == 0);
    CHECK(memcmp(e.sec, ref->sec, (size_t)nr * 8) == 0);
    CHECK(memcmp(e.nsec, ref->nsec, (size_t)nr * 8) == 0);
    CHECK(memcmp(e.flags, ref->flags, (size_t)nr * 4) == 0);
    CHECK(memcmp(e.first, ref->first, (size_t)nr * 4) == 0);
    CHECK(memcmp(e.pmid, ref->pmid, (size_t)ns * 4) == 0);
    CHECK(memcmp(e.ival, ref->ival, (size_t)ns * 8) == 0);
    CHECK(memcmp(e.boff, ref->boff, (size_t)ns * 4) == 0);
    CHECK(memcmp(e.blen, ref->blen, (size_t)ns * 4) == 0);
    free(mem);
}

/* The columnar layout: exact-size allocation, groups partition the parameters in
 * ascending pmid order, counts add up, and every string copies into its padded row. */
static void try_columns(const uint8_t *buf, size_t len, const pcp_events *e, int32_t nb)
{
    size_t ns = e->nsets > 0 ? (size_t)e->nsets : 1;
    int32_t *order = fz_alloc(2 * ns, 4);
    int32_t ngroups = -1;
    int32_t np = pcp_events_param_order(e, order, order + ns, &ngroups);
    CHECK(np >= 0 && np <= e->nsets && ngroups >= 0 && ngroups <= np);
    int32_t *bres = fz_alloc((size_t)(nb > 0 ? nb : 1), 4);
    for (int32_t b = 0; b < nb; b++)
        bres[b] = 1000 + b;
    size_t size = pcp_events_columns_mem_size(e->nrecords, np, ngroups);
    uint64_t *mem = fz_alloc((size + 7) / 8, 8);
    pcp_event_columns c;
    pcp_events_columns_bind(&c, mem, e->nrecords, np, ngroups);
    CHECK(pcp_events_columns_fill(e, order, bres, NULL, NULL, &c) == 0);
    int64_t total = 0;
    for (int32_t r = 0; r < e->nrecords; r++) {
        CHECK(c.sec[r] == e->sec[r] && c.flags[r] == e->flags[r]);
        CHECK(c.result[r] == 1000 + e->block[r] && c.metric[r] == 0 && c.inst[r] == -1);
        total += c.count[r];
    }
    CHECK(total == np);
    int32_t next = 0;
    for (int32_t g = 0; g < ngroups; g++) {
        CHECK(c.gstart[g] == next && c.gcount[g] > 0);
        CHECK(g == 0 || c.gpmid[g] > c.gpmid[g - 1]);
        next += c.gcount[g];
        uint32_t width = c.gwidth[g];
        uint8_t *rows = fz_alloc((size_t)c.gcount[g] * width, 1);
        int sts = pcp_events_pad(buf, len, c.gcount[g], c.boff + c.gstart[g],
                                 c.blen + c.gstart[g], width, rows);
        CHECK(sts == 0);
        for (int32_t i = 0; i < c.gcount[g]; i++) {
            int32_t k = c.gstart[g] + i;
            CHECK(c.event[k] >= 0 && c.event[k] < e->nrecords);
            CHECK(i == 0 || c.event[k] >= c.event[k - 1]);
            CHECK(memcmp(rows + (size_t)i * width, buf + c.boff[k], c.blen[k]) == 0);
        }
        free(rows);
    }
    CHECK(next == np);
    free(mem);
    free(bres);
    free(order);
}

/* A RESULT / HIGHRES_RESULT PDU decoded by result.c, its event arrays found by
 * pcp_events_collect() (exact-size outputs), then scanned and decoded. */
static void try_pdu(const uint8_t *buf, size_t len, int highres)
{
    int32_t numpmid, nvalues;
    if (pcp_result_pdu_scan(buf, len, highres, &numpmid, &nvalues) < 0)
        return;
    size_t size = pcp_result_mem_size(numpmid, nvalues);
    uint64_t *mem = fz_alloc((size + 7) / 8, 8);
    pcp_result r;
    pcp_result_bind(&r, mem, numpmid, nvalues);
    CHECK(pcp_result_pdu_decode(buf, len, highres, &r) == 0);
    const pcp_result *rs[1] = {&r};
    uint32_t base[1] = {0}, size32[1] = {(uint32_t)len};
    int n = pcp_events_collect(buf, len, 1, rs, base, size32, 0, NULL, 0, NULL, NULL, NULL,
                               NULL, NULL, NULL, NULL);
    CHECK(n >= 0 && n <= nvalues);
    size_t nn = n > 0 ? (size_t)n : 1;
    uint32_t *off = fz_alloc(nn, 4), *blen = fz_alloc(nn, 4), *pmid = fz_alloc(nn, 4);
    int32_t *kind = fz_alloc(nn, 4), *res = fz_alloc(nn, 4), *val = fz_alloc(nn, 4);
    int32_t *inst = fz_alloc(nn, 4);
    CHECK(pcp_events_collect(buf, len, 1, rs, base, size32, 0, NULL, n, off, blen, kind, res,
                             val, pmid, inst) == n);
    for (int i = 0; i < n; i++) {
        CHECK(res[i] == 0 && val[i] >= 0 && val[i] < nvalues);
        CHECK(off[i] + 4 == r.boff[val[i]] && blen[i] == r.blen[val[i]] + 4);
        CHECK(kind[i] == r.vtype[val[i]]);
    }
    for (int b = 0; b < n; b += 8) {
        int32_t k = n - b < 8 ? n - b : 8;
        int32_t status[8], nrec, nsets;
        CHECK(pcp_events_scan(buf, len, k, off + b, blen + b, kind + b, status, &nrec,
                              &nsets) == 0);
    }
    free(off); free(blen); free(pmid); free(kind); free(res); free(val); free(inst);
    free(mem);
}

static void run(const uint8_t *buf, size_t len, int32_t nb, const uint32_t *off,
                const uint32_t *blen, const int32_t *kind)
{
    int32_t status[8];
    int32_t nrec = -1, nsets = -1;
    CHECK(pcp_events_scan(buf, len, nb, off, blen, kind, status, &nrec, &nsets) == 0);
    CHECK(nrec >= 0 && nsets >= 0);
    int64_t room = 0;
    for (int32_t b = 0; b < nb; b++) {
        int s = status[b];
        CHECK(s == 0 || s == PM_ERR_TOOSMALL || s == PM_ERR_TOOBIG || s == PM_ERR_TYPE ||
              s == PM_ERR_CONV);
        if (s == 0)
            room += blen[b];
    }
    /* a record takes 16 bytes or more, a value set 4 bytes of parameter or a record */
    CHECK(nrec <= room / 16);
    CHECK(nsets <= room / 4 + 2 * (int64_t)nrec);

    owned o;
    alloc_events(&o, nrec, nsets);
    CHECK(pcp_events_decode(buf, len, nb, off, blen, kind, status, &o.ev) == 0);
    check_decoded(buf, len, &o.ev, nb, off, kind, status);
    try_bound(buf, len, nb, off, blen, kind, status, &o.ev);
    try_columns(buf, len, &o.ev, nb);

    /* A status array that lies (every block "valid") must not take decode out of its
     * columns: it fails, or succeeds when the lie was the truth. */
    int32_t all_ok[8] = {0};
    int sts = pcp_events_decode(buf, len, nb, off, blen, kind, all_ok, &o.ev);
    CHECK(sts == 0 || sts < 0);
    free_events(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fz_reader rd = {data, size};
    uint8_t ctl = fz_u8(&rd);
    int32_t k0 = (ctl & 1) ? PM_TYPE_HIGHRES_EVENT : PM_TYPE_EVENT;
    uint32_t off[8], blen[8];
    int32_t kind[8];
    int32_t nb = 1;
    uint16_t spec[8][2];
    if (ctl & 0x10) {
        nb = 1 + ((ctl >> 1) & 7);
        for (int32_t b = 0; b < nb; b++) {
            spec[b][0] = (uint16_t)((fz_u8(&rd) << 8) | fz_u8(&rd));
            spec[b][1] = (uint16_t)((fz_u8(&rd) << 8) | fz_u8(&rd));
        }
    }
    size_t len = rd.left;
    uint8_t *buf = fz_bytes(&rd, len);
    for (int32_t b = 0; b < nb; b++) {
        kind[b] = (b & 1) ? (PM_TYPE_EVENT + PM_TYPE_HIGHRES_EVENT - k0) : k0;
        if (ctl & 0x10) {
            off[b] = spec[b][0] % (uint32_t)(len + 5);
            blen[b] = spec[b][1] % (uint32_t)(len + 5);
        } else {
            off[b] = 0;
            blen[b] = (uint32_t)len;
        }
    }
    run(buf, len, nb, off, blen, kind);
    if (!(ctl & 0x10)) {
        /* the same bytes as the other kind: PM_ERR_TYPE unless the header says so */
        kind[0] = PM_TYPE_EVENT + PM_TYPE_HIGHRES_EVENT - k0;
        run(buf, len, nb, off, blen, kind);
    }
    if (ctl & 0x20)
        try_pdu(buf, len, ctl & 1);
    free(buf);
    return 0;
}
