/* libFuzzer harness for the conversion core (convert.c) and the fetchgroup fill
 * (fetchgroup.c).
 *
 * Input layout: a 16-byte control block, then the rest.
 *   control: [0] valfmt, [1] itype, [2] otype, [3] vtype, [4..7] value word,
 *            [8..15] a 64-bit number used as the pmConvScale divisor and as a double
 *   1. pcp_convert_extract of the rest as a value block payload (and of the word), to
 *      every output type; pcp_convert_string of the rest (an untrusted string: no NUL
 *      need be in it) to every type; pcp_convert_scale with factors from the control
 *      block; pcp_convert_from_double of its double to every type.
 *   2. the rest decoded as a HIGHRES_RESULT PDU (framing patched to match); when it
 *      decodes, a fetchgroup of items made from the control bytes and the result's own
 *      pmids and instances is filled from it, with the same result as the previous one
 *      (rates) and without. Output arrays are sized exactly; every written status must
 *      be 0 or negative and every written instance one of the result's. */
#include "convert.h"
#include "fetchgroup.h"
#include "fuzz_common.h"
#include "result.h"

static void try_conversions(const uint8_t *ctl, const uint8_t *rest, size_t n)
{
    pcp_atom out;
    int32_t valfmt = ctl[0] % 4, itype = (int8_t)ctl[1], vtype = ctl[3] % 12;
    uint32_t word = fz_be32(ctl + 4);
    uint32_t plen = n > 64 ? 64 : (uint32_t)n;
    for (int32_t otype = -1; otype <= 11; otype++) {
        int sts = pcp_convert_extract(valfmt, word, vtype, rest, plen, itype, otype, &out);
        CHECK(sts <= 1);
        sts = pcp_convert_extract(valfmt, word, vtype, rest, plen, itype % 12, otype, &out);
        CHECK(sts <= 1);
        sts = pcp_convert_string(rest, (uint32_t)n, otype, &out);
        CHECK(sts <= 0);
    }
    uint64_t bits = ((uint64_t)fz_be32(ctl + 8) << 32) | fz_be32(ctl + 12);
    pcp_atom in;
    in.ull = bits;
    for (int32_t type = -1; type <= 7; type++) {
        int sts = pcp_convert_scale(type, &in, (int64_t)word - 0x40000000, (int64_t)bits, &out);
        CHECK(sts <= 0);
        sts = pcp_convert_scale(type, &in, (int64_t)bits, (int8_t)ctl[2], &out);
        CHECK(sts <= 0);
        sts = pcp_convert_from_double(in.d, type, &out);
        CHECK(sts <= 0);
    }
}

static void try_fetchgroup(const uint8_t *ctl, const uint8_t *rest, size_t n)
{
    if (n < 12)
        return;
    uint8_t *pdu = fz_dup(rest, n);
    fz_put_be32(pdu, (uint32_t)n);
    fz_put_be32(pdu + 4, PDU_HIGHRES_RESULT);
    int32_t numpmid = 0, nvalues = 0;
    if (pcp_result_pdu_scan(pdu, n, 1, &numpmid, &nvalues) < 0) {
        free(pdu);
        return;
    }
    void *mem = fz_alloc(pcp_result_mem_size(numpmid, nvalues) + 8, 1);
    pcp_result r;
    pcp_result_bind(&r, mem, numpmid, nvalues);
    r.numpmid = numpmid;
    r.nvalues = nvalues;
    if (pcp_result_pdu_decode(pdu, n, 1, &r) < 0) {
        free(mem);
        free(pdu);
        return;
    }

    /* items: one per control byte pair, each naming a pmid of the result (or not) */
    enum { NITEMS = 6 };
    pcp_fg_item items[NITEMS];
    int32_t slots = 0;
    for (int i = 0; i < NITEMS; i++) {
        uint8_t a = ctl[(2 * i) % 16], b = ctl[(2 * i + 1) % 16];
        pcp_fg_item *it = &items[i];
        memset(it, 0, sizeof *it);
        int32_t v = numpmid ? a % (numpmid + 1) : 0;
        it->pmid = v < numpmid ? r.pmid[v] : 0xdeadbeef;
        it->vset = (int32_t)(b % 5) - 1;
        it->inst = nvalues ? r.inst[b % nvalues] : -1;
        it->all = a & 1;
        it->singular = (a >> 1) & 1;
        it->itype = b % 8;
        it->otype = (a >> 2) % 7;
        it->discrete = (b >> 3) & 1;
        it->rate = (b >> 4) & 1;
        it->unit = (b >> 5) & 1;
        it->unit_sts = (b >> 6) & 1 ? PM_ERR_CONV : 0;
        it->mult = (int64_t)(a % 7) - 3;
        it->div = (int64_t)(b % 5) - 2;
        it->multiplier = 1.5;
        it->maxnum = it->all ? a % 9 : 1;
        it->slot = slots;
        slots += it->maxnum;
    }
    size_t ns = (size_t)(slots ? slots : 1);
    pcp_fg_out out;
    out.sts = fz_alloc(NITEMS, sizeof *out.sts);
    out.num = fz_alloc(NITEMS, sizeof *out.num);
    out.nfailed = fz_alloc(NITEMS, sizeof *out.nfailed);
    out.insts_gen = fz_alloc(NITEMS, sizeof *out.insts_gen);
    out.stss = fz_alloc(ns, sizeof *out.stss);
    out.inst = fz_alloc(ns, sizeof *out.inst);
    out.src = fz_alloc(ns, sizeof *out.src);
    out.val = fz_alloc(ns, 8);
    memset(out.sts, 0, NITEMS * sizeof *out.sts);
    memset(out.num, 0, NITEMS * sizeof *out.num);
    memset(out.nfailed, 0, NITEMS * sizeof *out.nfailed);
    memset(out.insts_gen, 0, NITEMS * sizeof *out.insts_gen);
    memset(out.stss, 0, ns * sizeof *out.stss);
    memset(out.inst, 0, ns * sizeof *out.inst);
    memset(out.src, 0, ns * sizeof *out.src);
    pcp_fg_source cur = {&r, pdu, n};
    for (int pass = 0; pass < 2; pass++) {
        CHECK(pcp_fetchgroup_fill(items, NITEMS, &cur, pass ? &cur : NULL, ctl[15] & 1,
                                  &out) == 0);
        for (int i = 0; i < NITEMS; i++) {
            CHECK(out.sts[i] <= 0);
            CHECK(out.num[i] >= 0 && out.num[i] <= items[i].maxnum);
            int32_t failed = 0;
            for (int32_t j = 0; j < out.num[i]; j++) {
                int32_t slot = items[i].slot + j;
                CHECK(out.stss[slot] <= 0);
                failed += out.stss[slot] < 0;
                if (items[i].all)
                    CHECK(out.src[slot] < nvalues);
            }
            if (items[i].all)
                CHECK(out.nfailed[i] == failed);
        }
    }
    free(out.sts);
    free(out.num);
    free(out.nfailed);
    free(out.insts_gen);
    free(out.stss);
    free(out.inst);
    free(out.src);
    free(out.val);
    free(mem);
    free(pdu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    try_conversions(data, data + 16, size - 16);
    uint8_t *rest = fz_dup(data + 16, size - 16);   /* exact size: overreads are caught */
    try_fetchgroup(data, rest, size - 16);
    free(rest);
    return 0;
}
