/* libFuzzer harness for the one-call round trip (exchange.c).
 *
 * Input: byte 0 chooses the receive buffer's size (12 + byte0 * 16 bytes, allocated
 * exactly, so ASan sees a write past it), byte 1 the result's guessed sizes (numpmid
 * byte1 & 15, nvalues byte1 >> 4) and whether it is a HIGHRES fetch (byte1 bit 0 of
 * byte 2); the rest is what "pmcd" sends: it is written into a socketpair whose far
 * end is then shut, and pcp_exchange_roundtrip and pcp_exchange_fetch are run on the
 * near end. Checked: the reply's counts lie inside the buffer; 0 means exactly one
 * whole PDU whose header says so; a fetch indexed by the call (its columns bound by the
 * call to an exactly sized block), its values then filled by pcp_result_pdu_fill_values,
 * matches pcp_result_pdu_decode_sized on a copy of the same bytes, its NOAGENT sets
 * counted; PCP_RESULT_RESIZE and every refusal are what that decoder reports.
 * Then each metadata call (pcp_exchange_pmns_ids, _name_all, _children, _text, _desc,
 * _instance: the request encoded in the buffer, the reply decoded there, into arrays
 * of byte1 & 15 items): the status is one of theirs, a decoded reply's count fits its
 * arrays and every name or text it points at lies inside the reply. */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exchange.h"
#include "fuzz_common.h"
#include "pdu.h"

static const uint8_t REQUEST[16] = {0, 0, 0, 16, 0, 0, 0x70, 0x04, 0, 0, 0, 0, 1, 0, 0, 1};

/* A socketpair holding `data` then EOF on sv[0]'s side; -1 if it cannot be made. */
static int reply_socket(const uint8_t *data, size_t size, int *other)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(sv[1], data + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    shutdown(sv[1], SHUT_WR);
    *other = sv[1];
    return sv[0];
}

static void check_reply(int sts, const pcp_exchange_reply *reply, const uint8_t *buf,
                        size_t cap)
{
    CHECK(reply->received >= 0 && (size_t)reply->received <= cap);
    if (sts == 0) {
        CHECK(reply->length == reply->received && reply->length >= 12);
        int32_t type, from;
        CHECK(pcp_pdu_header(buf, (size_t)reply->received, &type, &from) == reply->length);
        CHECK(type == reply->type);
    } else if (sts == PCP_EXCHANGE_PARTIAL && reply->length != 0) {
        CHECK(reply->received >= 12 && reply->length >= 12);
    }
}

/* Offsets and lengths of `n` decoded names or texts inside a reply of `length` bytes. */
static void check_spans(int32_t n, const uint32_t *off, const int32_t *len, int32_t length)
{
    for (int32_t i = 0; i < n; i++)
        CHECK(len[i] >= 0 && (int64_t)off[i] + len[i] <= length);
}

/* One metadata call on the reply bytes; `which` picks it. */
static void metadata_call(int which, const uint8_t *wire, size_t wlen, size_t cap,
                          int32_t items)
{
    int other;
    int fd = reply_socket(wire, wlen, &other);
    if (fd < 0)
        return;
    uint8_t *buf = fz_alloc(cap, 1);
    pcp_exchange_reply reply;
    int32_t count = -1, has_status = 0;
    int32_t *ints = fz_alloc((size_t)items * sizeof(int32_t) + 1, 1);
    uint32_t *offs = fz_alloc((size_t)items * sizeof(uint32_t) + 1, 1);
    int32_t *lens = fz_alloc((size_t)items * sizeof(int32_t) + 1, 1);
    const uint8_t name[] = "sample.long.one";
    int32_t namelen = (int32_t)sizeof name - 1;
    int sts;
    switch (which) {
    case 0:
        sts = pcp_exchange_pmns_ids(fd, buf, cap, 1, 1, name, &namelen, items, offs, &count,
                                    &reply);
        break;
    case 1:
        sts = pcp_exchange_name_all(fd, buf, cap, 1, 0x1d00001, items, &has_status, ints, offs,
                                    lens, &count, &reply);
        break;
    case 2:
        sts = pcp_exchange_children(fd, buf, cap, 1, 1, name, (size_t)namelen, items,
                                    &has_status, ints, offs, lens, &count, &reply);
        break;
    case 3: {
        uint32_t off = 0;
        int32_t tlen = 0;
        sts = pcp_exchange_text(fd, buf, cap, 1, 0x1d00001, 1 | 4, &off, &tlen, &reply);
        if (sts == 0)
            check_spans(1, &off, &tlen, reply.length);
        count = 0;
        break;
    }
    case 4: {
        pcp_desc desc;
        sts = pcp_exchange_desc(fd, buf, cap, 1, 0x1d00001, &desc, &reply);
        count = 0;
        break;
    }
    default:
        sts = pcp_exchange_instance(fd, buf, cap, 1, 0x1d000001, -1, name, (size_t)namelen,
                                    items, ints, offs, lens, &count, &reply);
        break;
    }
    CHECK(sts == 0 || sts == PCP_EXCHANGE_PARTIAL || sts == PCP_EXCHANGE_OTHER
          || sts == PCP_EXCHANGE_UNSENT || sts == PM_ERR_IPC || sts == PM_ERR_TIMEOUT);
    check_reply(sts == PCP_EXCHANGE_OTHER ? 0 : sts, &reply, buf, cap);
    if (sts == 0) {
        CHECK(count >= 0 && count <= items);
        if (which == 1 || which == 2 || which == 5)
            check_spans(count, offs, lens, reply.length);
    }
    free(lens);
    free(offs);
    free(ints);
    free(buf);
    close(fd);
    close(other);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 65536 + 3)
        return 0;
    size_t cap = 12 + (size_t)data[0] * 16;
    int32_t numpmid = data[1] & 15, nvalues = data[1] >> 4;
    int highres = data[2] & 1;
    const uint8_t *wire = data + 3;
    size_t wlen = size - 3;

    for (int fetch = 0; fetch <= 1; fetch++) {
        int other;
        int fd = reply_socket(wire, wlen, &other);
        if (fd < 0)
            return 0;
        uint8_t *buf = fz_alloc(cap, 1);
        pcp_exchange_reply reply;
        if (!fetch) {
            int sts = pcp_exchange_roundtrip(fd, REQUEST, sizeof REQUEST, buf, cap, &reply);
            CHECK(sts == 0 || sts == PCP_EXCHANGE_PARTIAL || sts == PM_ERR_IPC);
            check_reply(sts, &reply, buf, cap);
        } else {
            pcp_result out;
            size_t memsize = pcp_result_mem_size(numpmid, nvalues);
            void *mem = fz_alloc(memsize, 1);       /* bound by the call, exactly sized */
            int32_t np = numpmid, nv = nvalues;
            int32_t expect = highres ? PDU_HIGHRES_RESULT : PDU_RESULT;
            int sts = pcp_exchange_fetch(fd, REQUEST, sizeof REQUEST, buf, cap, highres,
                                         expect, &out, mem, memsize, &np, &nv, &reply);
            check_reply(sts == 0 || sts == PCP_RESULT_RESIZE ? 0 : sts, &reply, buf, cap);
            if (sts == 0 || sts == PCP_RESULT_RESIZE || (sts < 0 && reply.type == expect
                                                         && reply.length == reply.received
                                                         && reply.length > 0)) {
                /* the decoder's answer on a copy of the same PDU */
                uint8_t *copy = fz_dup(buf, (size_t)reply.length);
                pcp_result again;
                fz_result_alloc(&again, numpmid, nvalues);
                int32_t np2 = numpmid, nv2 = nvalues;
                int sts2 = pcp_result_pdu_decode_sized(copy, (size_t)reply.length, highres,
                                                       &again, &np2, &nv2);
                CHECK(sts2 == sts);
                if (sts == PCP_RESULT_RESIZE)
                    CHECK(np == np2 && nv == nv2);
                if (sts == 0) {
                    int32_t noagent = 0;
                    for (int32_t i = 0; i < numpmid; i++)
                        noagent += again.numval[i] == PM_ERR_NOAGENT;
                    CHECK(reply.noagent == noagent);
                    CHECK(out.numpmid == numpmid && out.nvalues == nvalues);
                    CHECK(out.sec == again.sec && out.nsec == again.nsec);
                    for (int32_t i = 0; i < numpmid; i++)
                        CHECK(out.pmid[i] == again.pmid[i] && out.numval[i] == again.numval[i]
                              && out.valfmt[i] == again.valfmt[i]
                              && out.first[i] == again.first[i]);
                    /* the values, filled later from the PDU the call indexed */
                    CHECK(pcp_result_pdu_fill_values(buf, (size_t)reply.length, highres,
                                                     &out) == 0);
                    for (int32_t k = 0; k < nvalues; k++)
                        CHECK(out.inst[k] == again.inst[k] && out.boff[k] == again.boff[k]
                              && out.blen[k] == again.blen[k] && out.vtype[k] == again.vtype[k]
                              && out.ival[k] == again.ival[k]
                              && memcmp(&out.dval[k], &again.dval[k], sizeof(double)) == 0);
                }
                fz_result_free(&again);
                free(copy);
            }
            free(mem);
        }
        free(buf);
        close(fd);
        close(other);
    }
    for (int which = 0; which < 6; which++)
        metadata_call(which, wire, wlen, cap, data[1] & 15);
    return 0;
}
