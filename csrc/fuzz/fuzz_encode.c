/* libFuzzer harness for the request encoders (pdu_encode.c) and pmStore packing
 * (store.c).
 *
 * Input: one op byte selecting the encoder, then the bytes its arguments are read from
 * (see each case; make_seeds.py writes seeds in this format). For every encoder:
 *   - the sizing call (buf NULL) gives n; a failure must be one of the documented codes;
 *   - encoding into an exact n-byte allocation returns n and writes a header whose
 *     length and type words match; an (n-1)-byte allocation gives PM_ERR_TOOBIG (ASan
 *     catches any write past either); a larger buffer keeps its canary bytes intact;
 *   - where a decoder exists (PMNS_IDS, PMNS_NAMES, ATTR, and the store RESULT) the
 *     bytes are decoded again and the arguments must survive. */
#include "fuzz_common.h"
#include "pdu.h"
#include "store.h"
#include "result.h"

#define CLIENT_PDU_MAX 65536
#define CANARY 0xa5

/* The encoders share one call shape once their fixed arguments are bound. */
typedef struct enc_call enc_call;
typedef int (*enc_fn)(const enc_call *c, uint8_t *buf, size_t cap);

struct enc_call {
    enc_fn fn;
    int32_t from, a, b, c;
    uint32_t u;
    int32_t n;
    const uint32_t *words;
    const int32_t *i1, *i2, *i3;
    const uint8_t *bytes;
    size_t nbytes;
};

static int c_creds(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_creds(b, cap, c->from, c->u);
}
static int c_attr(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_attr(b, cap, c->from, c->a, c->bytes, c->nbytes);
}
static int c_profile(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_profile(b, cap, c->from, c->a, c->b, c->n, c->words, c->i1, c->i2, c->i3);
}
static int c_fetch(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_fetch(b, cap, c->from, c->c, c->a, c->n, c->words);
}
static int c_desc_req(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_desc_req(b, cap, c->from, c->u);
}
static int c_ids(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_ids(b, cap, c->from, c->a, c->b, c->n, c->words);
}
static int c_instance_req(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_instance_req(b, cap, c->from, c->u, c->a, c->bytes, c->nbytes);
}
static int c_text_req(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_text_req(b, cap, c->from, c->u, c->a);
}
static int c_pmns_names(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_pmns_names(b, cap, c->from, c->n, c->bytes, c->i1);
}
static int c_pmns_node(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_pmns_node(b, cap, c->from, c->a, c->b, c->bytes, c->nbytes);
}
static int c_label_req(const enc_call *c, uint8_t *b, size_t cap)
{
    return pcp_pdu_encode_label_req(b, cap, c->from, c->a, c->b);
}

/* Runs the size / exact / short / roomy protocol. Returns the encoded PDU (caller
 * frees) and its length in *out_len, or NULL when the encoder refused the arguments. */
static uint8_t *exercise(const enc_call *c, int32_t type, size_t *out_len)
{
    int n = c->fn(c, NULL, 0);
    if (n < 0) {
        CHECK(n == PM_ERR_TOOSMALL || n == PM_ERR_TOOBIG);
        /* the same refusal with a real buffer (which it must not overrun) */
        uint8_t *b = fz_alloc(64, 1);
        CHECK(c->fn(c, b, 64) == n);
        free(b);
        return NULL;
    }
    CHECK(n >= PDU_HEADER_LEN && n <= CLIENT_PDU_MAX);

    uint8_t *exact = fz_alloc((size_t)n, 1);
    CHECK(c->fn(c, exact, (size_t)n) == n);
    CHECK(fz_be32(exact) == (uint32_t)n);
    CHECK(fz_be32(exact + 4) == (uint32_t)type);
    CHECK(fz_be32(exact + 8) == (uint32_t)c->from);

    uint8_t *small = fz_alloc((size_t)n - 1, 1);
    CHECK(c->fn(c, small, (size_t)n - 1) == PM_ERR_TOOBIG);
    free(small);

    uint8_t *roomy = fz_alloc((size_t)n + 16, 1);
    memset(roomy, CANARY, (size_t)n + 16);
    CHECK(c->fn(c, roomy, (size_t)n + 16) == n);
    CHECK(memcmp(roomy, exact, (size_t)n) == 0);
    for (int i = 0; i < 16; i++)
        CHECK(roomy[n + i] == CANARY);
    free(roomy);

    *out_len = (size_t)n;
    return exact;
}

/* A count byte: small values as they are; 0xff selects a count near `limit` so the
 * size limits are exercised too (those arrays are zero filled). */
static int32_t count(fz_reader *r, int32_t limit)
{
    uint8_t b = fz_u8(r);
    if (b == 0xff)
        return limit - 4 + (int32_t)(fz_u8(r) & 7);
    return b;
}

static void fuzz_ids(fz_reader *r, enc_call *c)
{
    c->a = (int32_t)fz_u32(r) & 1 ? PDU_DESC_IDS : PDU_PMNS_IDS;
    c->b = (int32_t)fz_u32(r);
    c->n = count(r, (CLIENT_PDU_MAX - 20) / 4);
    uint32_t *ids = (uint32_t *)fz_bytes(r, (size_t)c->n * 4);
    c->words = ids;
    c->fn = c_ids;
    size_t len;
    uint8_t *pdu = exercise(c, c->a, &len);
    if (pdu) {
        CHECK(len == 20 + 4 * (size_t)c->n);
        if (c->a == PDU_PMNS_IDS) {
            size_t cap = (len - 20) / 4;
            uint32_t *out = fz_alloc(cap, 4);
            int32_t sts;
            CHECK(pcp_pdu_decode_pmns_ids(pdu, len, &sts, (int32_t)cap, out) == c->n);
            CHECK(sts == c->b);
            CHECK(memcmp(out, ids, (size_t)c->n * 4) == 0);
            free(out);
        }
        free(pdu);
    } else {
        CHECK(c->n < 1 || c->n > (CLIENT_PDU_MAX - 20) / 4);
    }
    free(ids);
}

static void fuzz_pmns_names(fz_reader *r, enc_call *c)
{
    c->n = count(r, CLIENT_PDU_MAX / 4);
    int32_t *lens = fz_alloc((size_t)c->n, sizeof *lens);
    size_t total = 0;
    int bad = 0;
    for (int32_t i = 0; i < c->n; i++) {
        uint8_t b = fz_u8(r);
        lens[i] = b == 0xff ? -1 : b;
        if (lens[i] < 0)
            bad = 1;
        else
            total += (size_t)lens[i];
    }
    uint8_t *names = fz_bytes(r, total);
    c->bytes = names;
    c->i1 = lens;
    c->fn = c_pmns_names;
    size_t len;
    uint8_t *pdu = exercise(c, PDU_PMNS_NAMES, &len);
    if (pdu) {
        CHECK(!bad && c->n >= 1);
        size_t cap = (len - 24) / 4;
        int32_t has_status;
        int32_t *st = fz_alloc(cap, 4);
        uint32_t *off = fz_alloc(cap, 4);
        int32_t *nl = fz_alloc(cap, 4);
        CHECK(pcp_pdu_decode_pmns_names(pdu, len, (int32_t)cap, &has_status, st, off, nl) == c->n);
        CHECK(has_status == 0);
        CHECK(fz_be32(pdu + 12) == (uint32_t)(total + (size_t)c->n));
        size_t at = 0;
        for (int32_t i = 0; i < c->n; i++) {
            CHECK(nl[i] == lens[i]);
            CHECK(memcmp(pdu + off[i], names + at, (size_t)lens[i]) == 0);
            at += (size_t)lens[i];
        }
        free(st);
        free(off);
        free(nl);
        free(pdu);
    } else {
        CHECK(bad || c->n < 1 || total + (size_t)c->n > CLIENT_PDU_MAX ||
              c->n > CLIENT_PDU_MAX / 4 || 24 + 4 * (size_t)c->n + total > CLIENT_PDU_MAX);
    }
    free(names);
    free(lens);
}

static void fuzz_attr(fz_reader *r, enc_call *c)
{
    c->a = (int32_t)fz_u32(r);
    uint8_t b = fz_u8(r);
    c->nbytes = b == 0xff ? 4090 + (fz_u8(r) & 7) : b;
    uint8_t *value = fz_bytes(r, c->nbytes);
    c->bytes = value;
    c->fn = c_attr;
    size_t len;
    uint8_t *pdu = exercise(c, PDU_ATTR, &len);
    if (pdu) {
        CHECK(len == 16 + c->nbytes);
        int32_t attr, vlen;
        uint32_t off;
        CHECK(pcp_pdu_decode_attr(pdu, len, &attr, &off, &vlen) == 0);
        CHECK(attr == c->a && (size_t)vlen == c->nbytes);
        CHECK(c->nbytes == 0 || memcmp(pdu + off, value, c->nbytes) == 0);
        free(pdu);
    } else {
        CHECK(c->nbytes >= 4096);
    }
    free(value);
}

static void fuzz_profile(fz_reader *r, enc_call *c)
{
    c->a = (int32_t)fz_u32(r);
    c->b = (int32_t)fz_u32(r);
    c->n = fz_u8(r);
    uint32_t *indoms = fz_alloc((size_t)c->n, 4);
    int32_t *states = fz_alloc((size_t)c->n, 4);
    int32_t *numinst = fz_alloc((size_t)c->n, 4);
    int32_t *insts = NULL;
    size_t total = 0;
    int negative = 0;
    for (int32_t i = 0; i < c->n; i++) {
        indoms[i] = fz_u32(r);
        states[i] = (int32_t)fz_u32(r);
        uint8_t b = fz_u8(r);
        numinst[i] = b == 0xff ? -1 : b;
        if (numinst[i] < 0) {
            negative = 1;
            continue;
        }
        insts = realloc(insts, (total + (size_t)numinst[i]) * 4 + 4);
        CHECK(insts != NULL);
        for (int32_t j = 0; j < numinst[i]; j++)
            insts[total++] = (int32_t)fz_u32(r);
    }
    /* exact-size copy of the instances so ASan sees reads past the last one */
    int32_t *exact = fz_alloc(total, 4);
    if (total)
        memcpy(exact, insts, total * 4);
    free(insts);
    c->words = indoms;
    c->i1 = states;
    c->i2 = numinst;
    c->i3 = exact;
    c->fn = c_profile;
    size_t len;
    uint8_t *pdu = exercise(c, PDU_PROFILE, &len);
    if (pdu) {
        CHECK(!negative);
        CHECK(len == 28 + 16 * (size_t)c->n + 4 * total);
        CHECK(fz_be32(pdu + 20) == (uint32_t)c->n);
        for (size_t k = 0; k < total; k++)
            CHECK(fz_be32(pdu + 28 + 16 * (size_t)c->n + 4 * k) == (uint32_t)exact[k]);
        free(pdu);
    } else {
        CHECK(negative || 28 + 16 * (size_t)c->n + 4 * total > CLIENT_PDU_MAX);
    }
    free(indoms);
    free(states);
    free(numinst);
    free(exact);
}

/* ---- pmStore: encode from flat arrays, decode with the RESULT decoder ------------- */

static uint32_t numeric_size(int32_t vtype)
{
    switch (vtype) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
    case PM_TYPE_FLOAT:
        return 4;
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
        return 8;
    default:
        return 0;
    }
}

static void fuzz_store(fz_reader *r)
{
    int32_t from = (int32_t)fz_u32(r);
    int64_t sec = (int32_t)fz_u32(r);
    int64_t usec = (int32_t)fz_u32(r);
    int32_t numpmid = fz_u8(r) % 65;

    /* Sets first (their values' words follow each set header), payload last. */
    uint32_t *pmid = fz_alloc((size_t)numpmid, 4);
    int32_t *numval = fz_alloc((size_t)numpmid, 4);
    int32_t *valfmt = fz_alloc((size_t)numpmid, 4);
    size_t cap = 0, nv = 0;
    int32_t *inst = NULL, *lval = NULL, *vtype = NULL;
    uint32_t *plen = NULL;
    int valid = numpmid >= 1;
    for (int32_t i = 0; i < numpmid; i++) {
        numval[i] = fz_u8(r) % 65;
        uint8_t f = fz_u8(r);
        valfmt[i] = f == 0xff ? -1 : f % 4;
        pmid[i] = fz_u32(r);
        if (numval[i] < 1 || valfmt[i] < 0 || valfmt[i] > 2)
            valid = 0;
        for (int32_t j = 0; j < numval[i]; j++, nv++) {
            if (nv == cap) {
                cap = cap ? 2 * cap : 16;
                inst = realloc(inst, cap * 4);
                lval = realloc(lval, cap * 4);
                vtype = realloc(vtype, cap * 4);
                plen = realloc(plen, cap * 4);
                CHECK(inst && lval && vtype && plen);
            }
            inst[nv] = (int32_t)fz_u32(r);
            lval[nv] = (int32_t)fz_u32(r);
            uint8_t t = fz_u8(r);
            vtype[nv] = t == 0xfe ? -1 : t;
            uint8_t l = fz_u8(r);
            plen[nv] = l == 0xff ? 0xfffffff0u : l;
        }
    }
    /* The payload is the rest of the input; poff runs through it value by value. */
    size_t payload_len = r->left;
    uint8_t *payload = fz_bytes(r, payload_len);
    uint32_t *poff = fz_alloc(nv, 4);
    size_t at = 0, expect_len = 24, blocks = 0;
    size_t k = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        expect_len += 12 + 8 * (size_t)numval[i];
        for (int32_t j = 0; j < numval[i]; j++, k++) {
            poff[k] = (uint32_t)(at <= payload_len ? at : payload_len);
            if (valfmt[i] == PM_VAL_INSITU)
                continue;
            uint32_t need = numeric_size(vtype[k]);
            size_t n = need ? need : plen[k];
            if ((need && plen[k] < need) || vtype[k] < 0 || vtype[k] > 255 ||
                n > payload_len - poff[k])
                valid = 0;
            blocks += (4 + n + 3) & ~(size_t)3;
            at += n;
        }
    }
    expect_len += blocks;
    if (expect_len > CLIENT_PDU_MAX)
        valid = 0;

    /* exact-size per-value arrays */
    int32_t *e_inst = fz_alloc(nv, 4), *e_lval = fz_alloc(nv, 4), *e_vtype = fz_alloc(nv, 4);
    uint32_t *e_plen = fz_alloc(nv, 4);
    if (nv) {
        memcpy(e_inst, inst, nv * 4);
        memcpy(e_lval, lval, nv * 4);
        memcpy(e_vtype, vtype, nv * 4);
        memcpy(e_plen, plen, nv * 4);
    }
    free(inst);
    free(lval);
    free(vtype);
    free(plen);

#define STORE(b, c)                                                                   \
    pcp_store_encode((b), (c), from, sec, usec, numpmid, pmid, numval, valfmt, e_inst, \
                     e_lval, e_vtype, poff, e_plen, payload, payload_len)

    int n = STORE(NULL, 0);
    if (n < 0) {
        CHECK(!valid);
        CHECK(n == PM_ERR_TOOSMALL || n == PM_ERR_TOOBIG || n == PM_ERR_VALUE ||
              n == PM_ERR_CONV || n == PM_ERR_TYPE);
    } else {
        CHECK(valid);
        CHECK((size_t)n == expect_len);
        uint8_t *pdu = fz_alloc((size_t)n, 1);
        CHECK(STORE(pdu, (size_t)n) == n);
        uint8_t *small = fz_alloc((size_t)n - 1, 1);
        CHECK(STORE(small, (size_t)n - 1) == PM_ERR_TOOBIG);
        free(small);

        /* Decode it back. */
        int32_t dn, dv;
        CHECK(pcp_result_pdu_scan(pdu, (size_t)n, 0, &dn, &dv) == 0);
        CHECK(dn == numpmid && (size_t)dv == nv);
        pcp_result res;
        res.pmid = fz_alloc((size_t)dn, 4);
        res.numval = fz_alloc((size_t)dn, 4);
        res.valfmt = fz_alloc((size_t)dn, 4);
        res.first = fz_alloc((size_t)dn, 4);
        res.inst = fz_alloc(nv, 4);
        res.vtype = fz_alloc(nv, 4);
        res.ival = fz_alloc(nv, 8);
        res.dval = fz_alloc(nv, 8);
        res.boff = fz_alloc(nv, 4);
        res.blen = fz_alloc(nv, 4);
        CHECK(pcp_result_pdu_decode(pdu, (size_t)n, 0, &res) == 0);
        CHECK(res.sec == (int32_t)sec && res.nsec == pcp_usec_to_nsec((uint32_t)usec));
        size_t next_block = expect_len - blocks; /* strict layout: blocks follow the sets */
        k = 0;
        for (int32_t i = 0; i < numpmid; i++) {
            CHECK(res.pmid[i] == pmid[i] && res.numval[i] == numval[i]);
            CHECK(res.valfmt[i] == valfmt[i] && res.first[i] == (int32_t)k);
            for (int32_t j = 0; j < numval[i]; j++, k++) {
                CHECK(res.inst[k] == e_inst[k]);
                if (valfmt[i] == PM_VAL_INSITU) {
                    CHECK(res.vtype[k] == -1 && res.ival[k] == e_lval[k]);
                    continue;
                }
                const uint8_t *src = payload + poff[k];
                uint32_t need = numeric_size(e_vtype[k]);
                uint32_t want = need ? need : e_plen[k];
                CHECK(res.vtype[k] == e_vtype[k] && res.blen[k] == want);
                CHECK(res.boff[k] == next_block + 4);
                next_block += (4 + (size_t)want + 3) & ~(size_t)3;
                uint32_t u32;
                uint64_t u64;
                float f;
                switch (e_vtype[k]) {
                case PM_TYPE_32:
                    memcpy(&u32, src, 4);
                    CHECK(res.ival[k] == (int32_t)u32);
                    break;
                case PM_TYPE_U32:
                    memcpy(&u32, src, 4);
                    CHECK(res.ival[k] == (int64_t)u32);
                    break;
                case PM_TYPE_64:
                case PM_TYPE_U64:
                    memcpy(&u64, src, 8);
                    CHECK((uint64_t)res.ival[k] == u64);
                    break;
                case PM_TYPE_FLOAT:
                    memcpy(&f, src, 4);
                    CHECK(res.dval[k] == (double)f || (f != f && res.dval[k] != res.dval[k]));
                    break;
                case PM_TYPE_DOUBLE:
                    memcpy(&u64, &res.dval[k], 8);
                    CHECK(memcmp(&u64, src, 8) == 0);
                    break;
                default:
                    CHECK(want == 0 || memcmp(pdu + res.boff[k], src, want) == 0);
                    break;
                }
            }
        }
        CHECK(next_block == (size_t)n);
        free(res.pmid);
        free(res.numval);
        free(res.valfmt);
        free(res.first);
        free(res.inst);
        free(res.vtype);
        free(res.ival);
        free(res.dval);
        free(res.boff);
        free(res.blen);
        free(pdu);
    }
#undef STORE
    free(pmid);
    free(numval);
    free(valfmt);
    free(e_inst);
    free(e_lval);
    free(e_vtype);
    free(e_plen);
    free(poff);
    free(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    enc_call c;
    memset(&c, 0, sizeof c);
    uint8_t op = fz_u8(&r) % 13;
    if (op == 12) {
        fuzz_store(&r);
        return 0;
    }
    c.from = (int32_t)fz_u32(&r);
    size_t len;
    uint8_t *pdu = NULL;
    uint32_t *words = NULL;
    uint8_t *bytes = NULL;
    switch (op) {
    case 0:
        c.u = fz_u32(&r);
        c.fn = c_creds;
        pdu = exercise(&c, PDU_CREDS, &len);
        CHECK(pdu && len == 20 && fz_be32(pdu + 12) == 1);
        CHECK(fz_be32(pdu + 16) == (0x01020000u | (c.u & 0xffffu)));
        break;
    case 1:
        fuzz_attr(&r, &c);
        break;
    case 2:
        fuzz_profile(&r, &c);
        break;
    case 3:
    case 4:
        c.c = op == 4;
        c.a = (int32_t)fz_u32(&r);
        c.n = count(&r, (CLIENT_PDU_MAX - 28) / 4);
        words = (uint32_t *)fz_bytes(&r, (size_t)c.n * 4);
        c.words = words;
        c.fn = c_fetch;
        pdu = exercise(&c, op == 4 ? PDU_HIGHRES_FETCH : PDU_FETCH, &len);
        if (pdu) {
            CHECK(len == 28 + 4 * (size_t)c.n && fz_be32(pdu + 24) == (uint32_t)c.n);
            for (int32_t i = 0; i < c.n; i++)
                CHECK(fz_be32(pdu + 28 + 4 * (size_t)i) == words[i]);
        } else {
            CHECK(c.n < 1 || c.n > (CLIENT_PDU_MAX - 28) / 4);
        }
        break;
    case 5:
        c.u = fz_u32(&r);
        c.fn = c_desc_req;
        pdu = exercise(&c, PDU_DESC_REQ, &len);
        CHECK(pdu && len == 16 && fz_be32(pdu + 12) == c.u);
        break;
    case 6:
        fuzz_ids(&r, &c);
        break;
    case 7:
    case 10: {
        c.u = fz_u32(&r);
        c.a = (int32_t)fz_u32(&r);
        c.b = (int32_t)fz_u32(&r);
        uint8_t b = fz_u8(&r);
        c.nbytes = b == 0xff ? CLIENT_PDU_MAX - 40 + (fz_u8(&r) & 63) : b;
        bytes = fz_bytes(&r, c.nbytes);
        c.bytes = bytes;
        size_t fixed = op == 7 ? 32 : 20;
        if (op == 7) {
            c.fn = c_instance_req;
            pdu = exercise(&c, PDU_INSTANCE_REQ, &len);
        } else {
            c.fn = c_pmns_node;
            pdu = exercise(&c, c.a, &len);
        }
        if (pdu) {
            CHECK(len == fixed + ((c.nbytes + 3) & ~(size_t)3));
            CHECK(fz_be32(pdu + fixed - 4) == (uint32_t)c.nbytes);
            CHECK(c.nbytes == 0 || memcmp(pdu + fixed, bytes, c.nbytes) == 0);
        } else {
            CHECK(fixed + c.nbytes > CLIENT_PDU_MAX);
        }
        break;
    }
    case 8:
        c.u = fz_u32(&r);
        c.a = (int32_t)fz_u32(&r);
        c.fn = c_text_req;
        pdu = exercise(&c, PDU_TEXT_REQ, &len);
        CHECK(pdu && len == 20);
        break;
    case 9:
        fuzz_pmns_names(&r, &c);
        break;
    case 11:
        c.a = (int32_t)fz_u32(&r);
        c.b = (int32_t)fz_u32(&r);
        c.fn = c_label_req;
        pdu = exercise(&c, PDU_LABEL_REQ, &len);
        CHECK(pdu && len == 20 && fz_be32(pdu + 12) == (uint32_t)c.a);
        break;
    }
    free(pdu);
    free(words);
    free(bytes);
    return 0;
}
