/* libFuzzer harness for the value-set decoder (result.c).
 *
 * Each input is treated as
 *   1. a RESULT and a HIGHRES_RESULT PDU exactly as received (highres = 0 and 1);
 *   2. the same bytes with the length word patched to the input size and the type word
 *      patched to the layout being tried, so mutations reach the value sets;
 *   3. an archive-style data record: bytes 8.. of the input in their own allocation,
 *      DPTR words relative to block_base -8, bad code PM_ERR_LOGREC. The sets start at
 *      16 (classic record: len, sec, usec, numpmid) or 24 (HIGHRES type word: len,
 *      numpmid, sec64, nsec64), or for any other type word at 4 * (byte 7 & 15).
 * Output arrays are allocated with exactly the sizes the scan reported, so ASan
 * reports any write past them; decoded offsets are checked against the buffer. A
 * successful PDU decode is repeated into one pcp_result_mem_size() block laid out by
 * pcp_result_bind() (how the Python layer allocates): columns must be in bounds,
 * aligned and disjoint, and the values identical. A live fetch's lazy path
 * (pcp_result_pdu_index_sized, then pcp_result_pdu_fill_values) runs on every PDU
 * too: the same refusals as the scan, the decoder's columns once filled. */
#include "fuzz_common.h"
#include <string.h>

#include "result.h"

static void alloc_result(pcp_result *r, int32_t numpmid, int32_t nvalues)
{
    fz_result_alloc(r, numpmid, nvalues);
    /* Sentinels: every entry must be overwritten by a successful decode. */
    r->numpmid = r->nvalues = -7;
    for (size_t i = 0; i < (size_t)numpmid; i++) {
        r->valfmt[i] = -7;
        r->first[i] = -7;
    }
    for (size_t k = 0; k < (size_t)nvalues; k++)
        r->vtype[k] = -7;
}

/* Postconditions of a successful decode of `len` bytes. */
static void check_decoded(const uint8_t *buf, size_t len, const pcp_result *r,
                          int32_t numpmid, int32_t nvalues)
{
    CHECK(r->numpmid == numpmid);
    CHECK(r->nvalues == nvalues);
    int64_t k = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        CHECK(r->first[i] == k);
        if (r->numval[i] <= 0) {
            /* result.h: valfmt is 0 when numval <= 0 (no valfmt on the wire) */
            CHECK(r->valfmt[i] == PM_VAL_INSITU);
            continue;
        }
        CHECK(r->valfmt[i] >= PM_VAL_INSITU && r->valfmt[i] <= PM_VAL_SPTR);
        for (int32_t j = 0; j < r->numval[i]; j++, k++) {
            CHECK(k < nvalues);
            if (r->valfmt[i] == PM_VAL_INSITU) {
                CHECK(r->vtype[k] == -1);
                CHECK(r->boff[k] == 0 && r->blen[k] == 0);
                CHECK(r->ival[k] >= INT32_MIN && r->ival[k] <= INT32_MAX);
                continue;
            }
            CHECK(r->vtype[k] >= 0 && r->vtype[k] <= 255);
            /* The payload, and the 4-byte header before it, lie inside the buffer. */
            CHECK(r->boff[k] >= 4);
            CHECK((size_t)r->boff[k] <= len);
            CHECK((size_t)r->blen[k] <= len - r->boff[k]);
            const uint8_t *p = buf + r->boff[k];
            uint32_t hdr = fz_be32(p - 4);
            CHECK((hdr >> 24) == (uint32_t)r->vtype[k]);
            CHECK((hdr & 0xffffffu) == r->blen[k] + 4);
            switch (r->vtype[k]) {
            case PM_TYPE_32:
                CHECK(r->blen[k] >= 4);
                CHECK(r->ival[k] == (int32_t)fz_be32(p));
                break;
            case PM_TYPE_U32:
                CHECK(r->blen[k] >= 4);
                CHECK(r->ival[k] == (int64_t)fz_be32(p));
                break;
            case PM_TYPE_64:
            case PM_TYPE_U64:
                CHECK(r->blen[k] >= 8);
                CHECK((uint64_t)r->ival[k] ==
                      (((uint64_t)fz_be32(p) << 32) | (uint64_t)fz_be32(p + 4)));
                break;
            case PM_TYPE_FLOAT: {
                CHECK(r->blen[k] >= 4);
                uint32_t bits = fz_be32(p);
                float f;
                memcpy(&f, &bits, 4);
                CHECK(r->dval[k] == (double)f || (f != f && r->dval[k] != r->dval[k]));
                break;
            }
            case PM_TYPE_DOUBLE: {
                CHECK(r->blen[k] >= 8);
                uint64_t bits = ((uint64_t)fz_be32(p) << 32) | fz_be32(p + 4);
                uint64_t got;
                memcpy(&got, &r->dval[k], 8);
                CHECK(got == bits);
                break;
            }
            default:
                CHECK(r->ival[k] == 0 && r->dval[k] == 0.0);
                break;
            }
        }
    }
    CHECK(k == nvalues);
}

/* pcp_result_bind: every column inside the one allocation, aligned, and disjoint. */
static void check_bind(const pcp_result *r, const void *mem, size_t size, int32_t numpmid,
                       int32_t nvalues)
{
    size_t np = (size_t)numpmid, nv = (size_t)nvalues;
    const struct {
        const void *p;
        size_t n, align;
    } col[] = {
        {r->pmid, np * 4, 4},  {r->numval, np * 4, 4}, {r->valfmt, np * 4, 4},
        {r->first, np * 4, 4}, {r->inst, nv * 4, 4},   {r->vtype, nv * 4, 4},
        {r->ival, nv * 8, 8},  {r->dval, nv * 8, 8},   {r->boff, nv * 4, 4},
        {r->blen, nv * 4, 4},
    };
    const size_t ncol = sizeof col / sizeof col[0];
    uintptr_t lo = (uintptr_t)mem, hi = lo + size;
    for (size_t i = 0; i < ncol; i++) {
        uintptr_t a = (uintptr_t)col[i].p;
        CHECK(a >= lo && a <= hi && col[i].n <= hi - a);
        CHECK(a % col[i].align == 0);
        for (size_t j = 0; j < i; j++) {
            uintptr_t b = (uintptr_t)col[j].p;
            CHECK(a + col[i].n <= b || b + col[j].n <= a);
        }
    }
}

/* Decode again into one pcp_result_mem_size() block bound with pcp_result_bind(), the
 * way the Python layer allocates, and compare with the separate-array decode. */
static void try_bound(const uint8_t *buf, size_t len, int highres, const pcp_result *ref)
{
    int32_t np = ref->numpmid, nv = ref->nvalues;
    size_t size = pcp_result_mem_size(np, nv);
    CHECK(size >= (size_t)nv * 32 + (size_t)np * 16);
    void *mem = fz_alloc(size, 1);
    pcp_result r;
    memset(&r, 0, sizeof r);
    pcp_result_bind(&r, mem, np, nv);
    check_bind(&r, mem, size, np, nv);
    CHECK(pcp_result_pdu_decode(buf, len, highres, &r) == 0);
    CHECK(r.numpmid == np && r.nvalues == nv && r.sec == ref->sec && r.nsec == ref->nsec);
    CHECK(memcmp(r.pmid, ref->pmid, (size_t)np * 4) == 0);
    CHECK(memcmp(r.numval, ref->numval, (size_t)np * 4) == 0);
    CHECK(memcmp(r.valfmt, ref->valfmt, (size_t)np * 4) == 0);
    CHECK(memcmp(r.first, ref->first, (size_t)np * 4) == 0);
    CHECK(memcmp(r.inst, ref->inst, (size_t)nv * 4) == 0);
    CHECK(memcmp(r.vtype, ref->vtype, (size_t)nv * 4) == 0);
    CHECK(memcmp(r.ival, ref->ival, (size_t)nv * 8) == 0);
    CHECK(memcmp(r.dval, ref->dval, (size_t)nv * 8) == 0);
    CHECK(memcmp(r.boff, ref->boff, (size_t)nv * 4) == 0);
    CHECK(memcmp(r.blen, ref->blen, (size_t)nv * 4) == 0);
    free(mem);
}

/* A LOCAL fetch's gather (csrc/result_gather.c) over the decoded result, as two sources
 * (the second one's bytes placed after the first's): the sets in reverse order, each
 * twice (once from each source), then a set with an error code; every copied value
 * must be the source's, offsets moved by the base; bad indexes give PM_ERR_TOOSMALL. */
static void try_gather(const pcp_result *r, size_t len)
{
    int32_t np = r->numpmid, n = 2 * np + 1;
    int32_t *src_of = fz_alloc((size_t)n, 4), *set_of = fz_alloc((size_t)n, 4);
    int32_t *code = fz_alloc((size_t)n, 4);
    uint32_t *pmid = fz_alloc((size_t)n, 4);
    const pcp_result *srcs[2] = {r, r};
    uint32_t base[2] = {0, (uint32_t)len};
    for (int32_t i = 0; i < np; i++) {
        src_of[2 * i] = 0;
        src_of[2 * i + 1] = 1;
        set_of[2 * i] = set_of[2 * i + 1] = np - 1 - i;
        code[2 * i] = code[2 * i + 1] = 0;
        pmid[2 * i] = pmid[2 * i + 1] = 0;
    }
    src_of[n - 1] = -1;
    set_of[n - 1] = 0;
    code[n - 1] = PM_ERR_TOOSMALL;
    pmid[n - 1] = 77;
    int32_t total = pcp_result_gather(NULL, n, pmid, src_of, set_of, code, srcs, base, 2);
    int32_t expect = 0;
    for (int32_t i = 0; i < np; i++)
        expect += r->numval[i] > 0 ? 2 * r->numval[i] : 0;
    CHECK(total == expect);
    pcp_result g;
    fz_result_alloc(&g, n, total);
    CHECK(pcp_result_gather(&g, n, pmid, src_of, set_of, code, srcs, base, 2) == total);
    for (int32_t i = 0; i < 2 * np; i++) {
        int32_t s = set_of[i], nv = r->numval[s];
        CHECK(g.pmid[i] == r->pmid[s] && g.numval[i] == nv && g.valfmt[i] == r->valfmt[s]);
        for (int32_t v = 0; v < nv; v++) {
            int32_t a = g.first[i] + v, b = r->first[s] + v;
            CHECK(g.inst[a] == r->inst[b] && g.vtype[a] == r->vtype[b]);
            CHECK(g.ival[a] == r->ival[b] && g.blen[a] == r->blen[b]);
            CHECK(g.boff[a] == (r->vtype[b] == -1 ? 0 : r->boff[b] + base[src_of[i]]));
        }
    }
    CHECK(g.pmid[n - 1] == 77 && g.numval[n - 1] == PM_ERR_TOOSMALL);
    fz_result_free(&g);
    set_of[0] = np;                                     /* past the source's sets */
    CHECK(np == 0 || pcp_result_gather(NULL, n, pmid, src_of, set_of, code, srcs, base, 2) ==
          PM_ERR_TOOSMALL);
    set_of[0] = 0;
    src_of[0] = 2;                                      /* past the sources */
    CHECK(np == 0 || pcp_result_gather(NULL, n, pmid, src_of, set_of, code, srcs, base, 2) ==
          PM_ERR_TOOSMALL);
    free(src_of);
    free(set_of);
    free(code);
    free(pmid);
}

/* A sized walk (pcp_result_pdu_decode_sized or _index_sized) as a fetch loop runs it:
 * into room for one set and one value, then, asked for a resize, into room of the
 * counts it reported (in bounds). On 0, *r is bound for exactly *np sets and *nv values
 * and filled (the caller frees it); else nothing is left allocated. */
typedef int (*sized_walk)(const uint8_t *, size_t, int, pcp_result *, int32_t *, int32_t *);

static int walk_until_it_fits(sized_walk walk, const uint8_t *buf, size_t len, int highres,
                              pcp_result *r, int32_t *np, int32_t *nv)
{
    *np = *nv = -1;
    fz_result_alloc(r, 1, 1);
    r->numpmid = r->nvalues = 1;
    int sts = walk(buf, len, highres, r, np, nv);
    if (sts == 0)
        return 0;
    fz_result_free(r);
    if (sts != PCP_RESULT_RESIZE)
        return sts;
    CHECK(*np >= 0 && (size_t)*np <= len / 8 && *nv >= 0 && (size_t)*nv <= len / 8);
    alloc_result(r, *np, *nv);
    r->numpmid = *np;
    r->nvalues = *nv;
    sts = walk(buf, len, highres, r, np, nv);
    if (sts != 0)
        fz_result_free(r);
    return sts;
}

/* The one-walk decoder of a fetch loop (pcp_result_pdu_decode_sized) on the same bytes:
 * room of a wrong size asks for a resize with the PDU's counts, or fails as the scan did
 * (scan_sts < 0); room of the right size decodes what the scan and decode give. */
static void try_pdu_sized(const uint8_t *buf, size_t len, int highres, int scan_sts,
                          int32_t numpmid, int32_t nvalues)
{
    pcp_result r;
    int32_t np, nv;
    int sts = walk_until_it_fits(pcp_result_pdu_decode_sized, buf, len, highres, &r, &np, &nv);
    if (sts == 0) {
        check_decoded(buf, len, &r, np, nv);
        fz_result_free(&r);
    }
    CHECK(sts != PCP_RESULT_RESIZE);
    CHECK(scan_sts < 0 ? sts == scan_sts : (sts == 0 && np == numpmid && nv == nvalues));
}

/* A live fetch's lazy path on the same bytes (pcp_result_pdu_index_sized, then
 * pcp_result_pdu_fill_values): the index refuses what the scan refuses, asks for the same
 * resize, and fills the per-set columns only; the fill then gives `ref`'s values (the
 * decoder's, NULL when the scan failed) and leaves the per-set columns as they were. */
static void try_pdu_lazy(const uint8_t *buf, size_t len, int highres, int scan_sts,
                         int32_t numpmid, int32_t nvalues, const pcp_result *ref)
{
    pcp_result r;
    int32_t np, nv;
    int sts = walk_until_it_fits(pcp_result_pdu_index_sized, buf, len, highres, &r, &np, &nv);
    CHECK(sts != PCP_RESULT_RESIZE);
    CHECK(scan_sts < 0 ? sts == scan_sts : (sts == 0 && np == numpmid && nv == nvalues));
    if (sts != 0)
        return;
    CHECK(ref != NULL && r.sec == ref->sec && r.nsec == ref->nsec);
    for (int32_t i = 0; i < np; i++)
        CHECK(r.pmid[i] == ref->pmid[i] && r.numval[i] == ref->numval[i]
              && r.valfmt[i] == ref->valfmt[i] && r.first[i] == ref->first[i]);
    if (np > 0)
        r.numval[0] = 12345;                        /* a caller's edit, kept */
    r.sec = r.nsec = 7;
    CHECK(pcp_result_pdu_fill_values(buf, len, highres, &r) == 0);
    CHECK(r.sec == 7 && r.nsec == 7 && (np == 0 || r.numval[0] == 12345));
    for (int32_t k = 0; k < nv; k++)
        CHECK(r.inst[k] == ref->inst[k] && r.vtype[k] == ref->vtype[k]
              && r.ival[k] == ref->ival[k] && r.boff[k] == ref->boff[k]
              && r.blen[k] == ref->blen[k]
              && memcmp(&r.dval[k], &ref->dval[k], sizeof(double)) == 0);
    if (len > 0)        /* other bytes than those indexed: refused, never read outside */
        CHECK(pcp_result_pdu_fill_values(buf, len - 1, highres, &r) == PM_ERR_IPC);
    fz_result_free(&r);
}

static void try_pdu(const uint8_t *buf, size_t len, int highres)
{
    int32_t numpmid = -1, nvalues = -1;
    int sts = pcp_result_pdu_scan(buf, len, highres, &numpmid, &nvalues);
    try_pdu_sized(buf, len, highres, sts, numpmid, nvalues);
    if (sts < 0)
        try_pdu_lazy(buf, len, highres, sts, numpmid, nvalues, NULL);
    if (sts < 0) {
        CHECK(sts == PM_ERR_IPC);
        return;
    }
    CHECK(sts == 0);
    CHECK(numpmid >= 0 && (size_t)numpmid <= len / 8);
    CHECK(nvalues >= 0 && (size_t)nvalues <= len / 8);
    pcp_result r;
    alloc_result(&r, numpmid, nvalues);
    sts = pcp_result_pdu_decode(buf, len, highres, &r);
    CHECK(sts == 0);
    if (highres) {
        CHECK(r.sec == (int64_t)(((uint64_t)fz_be32(buf + 16) << 32) | fz_be32(buf + 20)));
    } else {
        CHECK(r.sec == (int32_t)fz_be32(buf + 12));
        CHECK(r.nsec == pcp_usec_to_nsec(fz_be32(buf + 16)));
    }
    check_decoded(buf, len, &r, numpmid, nvalues);
    try_pdu_lazy(buf, len, highres, 0, numpmid, nvalues, &r);
    try_bound(buf, len, highres, &r);
    try_gather(&r, len);
    fz_result_free(&r);
}

static void try_archive(const uint8_t *rec, size_t len, size_t sets_off, int32_t numpmid)
{
    pcp_sets_layout layout;
    layout.sets_off = sets_off;
    layout.numpmid = numpmid;
    layout.block_base = -8;
    layout.strict = (int32_t)(len & 1);
    int32_t nvalues = -1;
    int sts = pcp_result_valuesets_scan(rec, len, &layout, PM_ERR_LOGREC, &nvalues);
    if (sts < 0) {
        CHECK(sts == PM_ERR_LOGREC);
        return;
    }
    CHECK(sts == 0);
    CHECK(nvalues >= 0 && (size_t)nvalues <= len / 8);
    pcp_result r;
    alloc_result(&r, numpmid, nvalues);
    sts = pcp_result_valuesets_decode(rec, len, &layout, PM_ERR_LOGREC, &r);
    CHECK(sts == 0);
    check_decoded(rec, len, &r, numpmid, nvalues);
    fz_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. as received */
    try_pdu(data, size, 0);
    try_pdu(data, size, 1);

    if (size < 12)
        return 0;

    /* 2. framing patched to match, for each layout */
    for (int highres = 0; highres <= 1; highres++) {
        uint8_t *copy = fz_dup(data, size);
        fz_put_be32(copy, (uint32_t)size);
        fz_put_be32(copy + 4, highres ? PDU_HIGHRES_RESULT : PDU_RESULT);
        try_pdu(copy, size, highres);
        free(copy);
    }

    /* 3. archive record: the bytes after the PDU's type word, in their own block */
    size_t rlen = size - 8;
    uint8_t *rec = fz_dup(data + 8, rlen);
    uint32_t type = fz_be32(data + 4);
    size_t sets_off;
    int32_t numpmid;
    if (type == PDU_RESULT) {
        sets_off = 16;
    } else if (type == PDU_HIGHRES_RESULT) {
        sets_off = 24;
    } else {
        sets_off = 4 * (size_t)(data[7] & 15);
    }
    if (type == PDU_HIGHRES_RESULT)
        numpmid = rlen >= 8 ? (int32_t)fz_be32(rec + 4) : 0;
    else if (sets_off >= 4 && sets_off <= rlen)
        numpmid = (int32_t)fz_be32(rec + sets_off - 4);
    else
        numpmid = data[6];
    try_archive(rec, rlen, sets_off, numpmid);
    free(rec);
    return 0;
}
