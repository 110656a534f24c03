/* libFuzzer harness for the derived metric kernels (derived_eval.c) and matchinst's
 * regex (derived.c).
 *
 * The input is read as a program: a small result (value sets with arbitrary instances,
 * value types and payload offsets, some of them lying about the values they hold), then
 * a sequence of kernel calls over vectors loaded from it, with arbitrary operators,
 * types, scale factors and instance orders; finally the result is assembled from a mix
 * of its own sets and the vectors. Vectors are allocated with exactly their capacity so
 * ASan reports a kernel writing past it; every kernel's count must stay within it. The
 * input's tail is also compiled as a regular expression and matched against itself. */
#include "fuzz_common.h"
#include "derived.h"

#define NVEC 4

static pcp_dvec *new_vec(int32_t cap)
{
    pcp_dvec *v = fz_alloc(1, sizeof *v);
    v->cap = cap;
    v->numval = 0;
    v->inst = fz_alloc((size_t)cap, sizeof *v->inst);
    v->val = fz_alloc((size_t)cap, sizeof *v->val);
    memset(v->inst, 0, (size_t)cap * sizeof *v->inst);
    memset(v->val, 0, (size_t)cap * sizeof *v->val);
    return v;
}

static void free_vec(pcp_dvec *v)
{
    free(v->inst);
    free(v->val);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader rd = { data, size };
    pcp_result src;
    int32_t numpmid = 1 + fz_u8(&rd) % 4, nvalues = fz_u8(&rd) % 9, i, j;
    uint32_t dlen = fz_u8(&rd) % 32;
    uint8_t *payload = fz_bytes(&rd, dlen);
    pcp_dvec *vec[NVEC];
    int32_t caps[NVEC];

    memset(&src, 0, sizeof src);
    src.numpmid = numpmid;
    src.nvalues = nvalues;
    src.pmid = fz_alloc((size_t)numpmid, sizeof *src.pmid);
    src.numval = fz_alloc((size_t)numpmid, sizeof *src.numval);
    src.valfmt = fz_alloc((size_t)numpmid, sizeof *src.valfmt);
    src.first = fz_alloc((size_t)numpmid, sizeof *src.first);
    src.inst = fz_alloc((size_t)nvalues, sizeof *src.inst);
    src.vtype = fz_alloc((size_t)nvalues, sizeof *src.vtype);
    src.ival = fz_alloc((size_t)nvalues, sizeof *src.ival);
    src.dval = fz_alloc((size_t)nvalues, sizeof *src.dval);
    src.boff = fz_alloc((size_t)nvalues, sizeof *src.boff);
    src.blen = fz_alloc((size_t)nvalues, sizeof *src.blen);
    for (i = 0; i < numpmid; i++) {
        src.pmid[i] = fz_u32(&rd);
        src.numval[i] = (int32_t)(int8_t)fz_u8(&rd) % 10;
        src.valfmt[i] = fz_u8(&rd) % 3;
        src.first[i] = (int32_t)(int8_t)fz_u8(&rd) % 10;
    }
    for (i = 0; i < nvalues; i++) {
        src.inst[i] = (int32_t)(fz_u8(&rd) % 6);
        src.vtype[i] = (int32_t)(int8_t)fz_u8(&rd) % 8;
        src.ival[i] = (int64_t)((uint64_t)fz_u32(&rd) << 32 | fz_u32(&rd));
        {
            uint64_t bits = (uint64_t)fz_u32(&rd) << 32 | fz_u32(&rd);
            memcpy(&src.dval[i], &bits, sizeof bits);
        }
        src.boff[i] = fz_u8(&rd) % 40;
        src.blen[i] = fz_u8(&rd) % 12;
    }
    for (i = 0; i < NVEC; i++) {
        caps[i] = 1 + fz_u8(&rd) % 9;
        vec[i] = new_vec(caps[i]);
    }

    /* kernel calls */
    for (int step = 0; step < 12 && rd.left > 0; step++) {
        uint8_t op = fz_u8(&rd);
        pcp_dvec *a = vec[fz_u8(&rd) % NVEC], *b = vec[fz_u8(&rd) % NVEC];
        pcp_dvec *out = vec[fz_u8(&rd) % NVEC];
        int32_t t1 = fz_u8(&rd) % 7, t2 = fz_u8(&rd) % 7, sts = 0;
        if (out == a || out == b)
            continue;           /* the Python side never aliases output and input */
        switch (op % 9) {
        case 0:
            sts = pcp_derived_load(&src, (int32_t)(fz_u8(&rd) % 5) - 1, t1, out);
            break;
        case 1:
            sts = pcp_derived_binary(3 + fz_u8(&rd) % 22, t1, fz_u8(&rd) & 1, t2,
                                     1 + fz_u8(&rd) % 4, fz_u8(&rd) % 3, fz_u8(&rd) & 1, a,
                                     t1, 1, 1 + fz_u8(&rd) % 2, fz_u8(&rd) & 1, b, out);
            break;
        case 2:
            sts = pcp_derived_unary(25 + (fz_u8(&rd) & 1), t1, a, out);
            break;
        case 3:
            sts = pcp_derived_delta(fz_u8(&rd) & 1, t1, a, b, (double)(int8_t)fz_u8(&rd),
                                    0.001, out);
            break;
        case 4:
            sts = pcp_derived_aggregate(7 + fz_u8(&rd) % 6, t1, t2, a, out);
            break;
        case 5:
            sts = pcp_derived_ternary(t1, a, b, vec[fz_u8(&rd) % NVEC], fz_u8(&rd) & 1, out);
            break;
        case 6:
            sts = pcp_derived_rescale(t1, (int64_t)fz_u8(&rd) - 3, (int64_t)fz_u8(&rd) % 5, a,
                                      out);
            break;
        case 7:
            sts = pcp_derived_filter_exact(fz_u8(&rd) % 6, a, out);
            break;
        default: {
            int32_t insts[3] = { 1, 3, 5 }, match[3] = { 1, 0, 1 }, used[3] = { 0, 0, 0 };
            int32_t *unknown = fz_alloc((size_t)(a->numval > 0 ? a->numval : 1), sizeof(int32_t));
            sts = pcp_derived_filter_table(a, insts, match, used, 3, unknown, out);
            CHECK(sts >= -(a->numval > 0 ? a->numval : 0));
            free(unknown);
            break;
        }
        }
        CHECK(out->numval <= out->cap);
        CHECK(sts <= out->cap);
        (void)sts;
    }

    /* assembly */
    {
        int32_t nsets = 1 + fz_u8(&rd) % 5, nv = 0;
        uint32_t nbytes = 0, *pmids = fz_alloc((size_t)nsets, sizeof *pmids);
        int32_t *src_set = fz_alloc((size_t)nsets, sizeof *src_set);
        int32_t *numvals = fz_alloc((size_t)nsets, sizeof *numvals);
        int32_t *types = fz_alloc((size_t)nsets, sizeof *types);
        pcp_dvec **vecs = fz_alloc((size_t)nsets, sizeof *vecs);
        for (j = 0; j < nsets; j++) {
            uint8_t how = fz_u8(&rd);
            pmids[j] = j;
            src_set[j] = how % 3 == 0 ? (int32_t)(fz_u8(&rd) % 5) : -1;
            vecs[j] = how % 3 == 1 ? vec[fz_u8(&rd) % NVEC] : NULL;
            numvals[j] = -(int32_t)(fz_u8(&rd) % 3);
            types[j] = fz_u8(&rd) % 7;
            if (vecs[j] != NULL && vecs[j]->numval > vecs[j]->cap)
                vecs[j] = NULL;
        }
        if (pcp_derived_assemble(&src, payload, dlen, nsets, pmids, src_set, numvals, vecs,
                                 types, NULL, NULL, &nv, &nbytes) == 0) {
            pcp_result out;
            uint8_t *buf = fz_alloc(nbytes, 1);
            int32_t nv2 = 0;
            uint32_t nbytes2 = 0;
            memset(&out, 0, sizeof out);
            out.pmid = fz_alloc((size_t)nsets, sizeof *out.pmid);
            out.numval = fz_alloc((size_t)nsets, sizeof *out.numval);
            out.valfmt = fz_alloc((size_t)nsets, sizeof *out.valfmt);
            out.first = fz_alloc((size_t)nsets, sizeof *out.first);
            out.inst = fz_alloc((size_t)nv, sizeof *out.inst);
            out.vtype = fz_alloc((size_t)nv, sizeof *out.vtype);
            out.ival = fz_alloc((size_t)nv, sizeof *out.ival);
            out.dval = fz_alloc((size_t)nv, sizeof *out.dval);
            out.boff = fz_alloc((size_t)nv, sizeof *out.boff);
            out.blen = fz_alloc((size_t)nv, sizeof *out.blen);
            CHECK(pcp_derived_assemble(&src, payload, dlen, nsets, pmids, src_set, numvals,
                                       vecs, types, &out, buf, &nv2, &nbytes2) == 0);
            CHECK(nv2 == nv && nbytes2 == nbytes);
            for (i = 0; i < nv; i++)
                CHECK((uint64_t)out.boff[i] + out.blen[i] <= nbytes);
            free(out.pmid); free(out.numval); free(out.valfmt); free(out.first);
            free(out.inst); free(out.vtype); free(out.ival); free(out.dval);
            free(out.boff); free(out.blen); free(buf);
        }
        free(pmids); free(src_set); free(numvals); free(types); free(vecs);
    }

    /* the rest (at most 32 bytes: glibc's regex needs memory exponential in the
     * length of some patterns, as it does for libpcp) as a regular expression,
     * matched against itself */
    {
        size_t n = rd.left < 32 ? rd.left : 32;
        char *text = fz_alloc(n + 1, 1), err[128];
        void *re;
        if (n)
            memcpy(text, rd.p, n);
        text[n] = '\0';
        /* repetition of a repetition (a+++, {n,m} on a group) is where glibc's regcomp
         * needs memory exponential in the pattern's length: libpcp passes the user's
         * pattern on all the same, as we do; the harness leaves such patterns out */
        int nested = strchr(text, '{') != NULL;
        for (size_t c = 1; c < n && !nested; c++)
            nested = strchr("+*?", text[c]) && (strchr("+*?)", text[c - 1]) != NULL);
        re = nested ? NULL : pcp_derived_regex_new(text, err, sizeof err);
        if (nested)
            err[0] = '\0';
        if (re != NULL) {
            (void)pcp_derived_regex_match(re, text);
            pcp_derived_regex_free(re);
        } else {
            CHECK(memchr(err, '\0', sizeof err) != NULL);
        }
        free(text);
    }

    for (i = 0; i < NVEC; i++)
        free_vec(vec[i]);
    free(payload);
    free(src.pmid); free(src.numval); free(src.valfmt); free(src.first);
    free(src.inst); free(src.vtype); free(src.ival); free(src.dval);
    free(src.boff); free(src.blen);
    return 0;
}
