/* libFuzzer harness for the agent side of the PMDA protocol (pdu_agent.c): pmcd's
 * requests decoded as they arrive and with the length and type words patched to each
 * request type; every name span returned must lie inside the input, the FETCH and
 * PROFILE decoders must fill exactly the room pcp_agent_decode_request announced, and
 * the decoded FETCH is encoded back as a RESULT whose length the sizing pass predicted
 * (and which it refuses when a column is one entry short). */
#include "fuzz_common.h"
#include "pdu_agent.h"

static const uint32_t TYPES[] = {PDU_CREDS, PDU_ERROR, PDU_DESC_REQ, PDU_TEXT_REQ,
                                 PDU_LABEL_REQ, PDU_INSTANCE_REQ, PDU_PMNS_CHILD,
                                 PDU_PMNS_TRAVERSE, PDU_PMNS_IDS, PDU_ATTR, PDU_FETCH,
                                 PDU_PROFILE};

static void decode(const uint8_t *buf, size_t len)
{
    pcp_agent_request req;
    int t = pcp_agent_decode_request(buf, len, &req);
    if (t < 0) {
        CHECK(t == PM_ERR_IPC);
        return;
    }
    CHECK((uint32_t)t == fz_be32(buf + 4));
    if (req.name_len > 0) {
        CHECK((size_t)req.name_off <= len);
        CHECK((size_t)req.name_len <= len - req.name_off);
    }
    if (t == PDU_FETCH) {
        uint32_t *pmids = fz_alloc((size_t)req.b, sizeof *pmids);
        CHECK(pcp_agent_decode_fetch(buf, len, req.b, pmids) == req.b);
        CHECK(pcp_agent_decode_fetch(buf, len, req.b - 1, pmids) == PM_ERR_IPC);
        /* a RESULT with each pmid's word as its numval and its first value in situ */
        int32_t *numval = fz_alloc((size_t)req.b, sizeof *numval);
        int32_t *vtype = fz_alloc((size_t)req.b, sizeof *vtype);
        size_t nvalues = 0;
        for (int32_t i = 0; i < req.b; i++) {
            numval[i] = (pmids[i] & 3) == 3 ? -12357 : (int32_t)(pmids[i] & 3);
            vtype[i] = (int32_t)((pmids[i] >> 2) % 7);
            nvalues += numval[i] > 0 ? (size_t)numval[i] : 0;
        }
        /* the columns: exactly as long as the sets need, or (low pmid bit of the
         * first set) one entry short somewhere, which the sizing pass must refuse */
        size_t nstrings = 0, value_bytes = 0;
        for (int32_t i = 0; i < req.b; i++) {
            if (numval[i] <= 0)
                continue;
            if (vtype[i] == PM_TYPE_STRING)
                nstrings += (size_t)numval[i];
            else
                value_bytes += (size_t)numval[i] * ((vtype[i] == PM_TYPE_64 ||
                                                     vtype[i] == PM_TYPE_U64 ||
                                                     vtype[i] == PM_TYPE_DOUBLE) ? 8 : 4);
        }
        int short_by_one = req.b > 0 && (pmids[0] & 0x100) != 0;
        size_t ninst = nvalues, nvbytes = value_bytes, nstr = nstrings;
        if (short_by_one) {
            switch (pmids[0] % 3) {
            case 0: ninst -= ninst ? 1 : 0; break;
            case 1: nvbytes -= nvbytes ? 1 : 0; break;
            default: nstr -= nstr ? 1 : 0; break;
            }
        }
        int32_t *inst = fz_alloc(nvalues, sizeof *inst);
        uint8_t *values = fz_alloc(value_bytes, 1);
        uint32_t *slen = fz_alloc(nstrings, sizeof *slen);
        for (size_t k = 0; k < nvalues; k++)
            inst[k] = (int32_t)k;
        for (size_t k = 0; k < value_bytes; k++)
            values[k] = (uint8_t)(k * 7);
        for (size_t k = 0; k < nstrings; k++)
            slen[k] = (uint32_t)(k % 5 == 4 ? len + 1 : (len / (nstrings + 1)));
        int need = pcp_agent_encode_result(NULL, 0, 0, 0, req.b, pmids, numval, vtype, inst,
                                           ninst, values, nvbytes, slen, nstr, buf, len);
        if (short_by_one && ninst + nvbytes + nstr < nvalues + value_bytes + nstrings)
            CHECK(need < 0);
        if (need > 0) {
            uint8_t *out = fz_alloc((size_t)need, 1);
            CHECK(pcp_agent_encode_result(out, (size_t)need, 0, 0, req.b, pmids, numval,
                                          vtype, inst, ninst, values, nvbytes, slen, nstr,
                                          buf, len) == need);
            CHECK(fz_be32(out) == (uint32_t)need);
            if (need > 12)
                CHECK(pcp_agent_encode_result(out, (size_t)need - 1, 0, 0, req.b, pmids, numval,
                                              vtype, inst, ninst, values, nvbytes, slen, nstr,
                                              buf, len) == PM_ERR_TOOBIG);
            free(out);
        }
        free(inst); free(values); free(slen);
        free(numval); free(vtype); free(pmids);
    } else if (t == PDU_PROFILE) {
        int32_t g;
        uint32_t *indoms = fz_alloc((size_t)req.b, sizeof *indoms);
        int32_t *states = fz_alloc((size_t)req.b, sizeof *states);
        int32_t *numinst = fz_alloc((size_t)req.b, sizeof *numinst);
        int32_t *insts = fz_alloc((size_t)req.c, sizeof *insts);
        CHECK(pcp_agent_decode_profile(buf, len, &g, req.b, indoms, states, numinst, req.c,
                                       insts) == req.b);
        int64_t total = 0;
        for (int32_t i = 0; i < req.b; i++)
            total += numinst[i];
        CHECK(total == req.c);
        free(indoms); free(states); free(numinst); free(insts);
    } else if (t == PDU_INSTANCE_REQ && req.name_len > 0) {
        /* the reply to a name lookup, with the name echoed */
        int32_t lens[1] = {req.name_len};
        int32_t insts[1] = {req.a};
        int need = pcp_agent_encode_instance(NULL, 0, 0, req.ident, 1, insts,
                                             buf + req.name_off, lens);
        CHECK(need == 20 + 8 + (int)((req.name_len + 3) & ~3));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    decode(data, size);
    if (size < 12)
        return 0;
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
        uint8_t *copy = fz_dup(data, size);
        fz_put_be32(copy, (uint32_t)size);
        fz_put_be32(copy + 4, TYPES[i]);
        decode(copy, size);
        free(copy);
    }
    return 0;
}
