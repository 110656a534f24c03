/* One PDU round trip with pmcd per C call (see exchange.h). */
#include "exchange.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "cursor.h"
#include "pdu.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0      /* platforms without it set SO_NOSIGPIPE instead */
#endif

/* The whole request, as Python's sendall does it: EINTR retried, EAGAIN (the socket's
 * send timeout) a timeout, any other failure the connection's end. */
static int send_whole(int fd, const uint8_t *request, size_t reqlen)
{
    size_t sent = 0;
    while (sent < reqlen) {
        ssize_t n = send(fd, request + sent, reqlen - sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return PM_ERR_TIMEOUT;
            return PM_ERR_IPC;
        }
        sent += (size_t)n;
    }
    return 0;
}

int pcp_exchange_roundtrip(int fd, const uint8_t *request, size_t reqlen, uint8_t *buf,
                           size_t cap, pcp_exchange_reply *reply)
{
    if (reply == NULL)
        return PM_ERR_IPC;
    reply->received = 0;
    reply->length = 0;
    reply->type = 0;
    reply->noagent = 0;
    if (fd < 0 || request == NULL || buf == NULL || cap < 12 || cap > INT32_MAX)
        return PM_ERR_IPC;
    int sts = send_whole(fd, request, reqlen);
    if (sts < 0)
        return sts;
    ssize_t n = recv(fd, buf, cap, 0);
    if (n < 0) {
        if (errno == EINTR)
            return PCP_EXCHANGE_PARTIAL;    /* Python's signal handlers run, then it reads */
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return PM_ERR_TIMEOUT;
        return PM_ERR_IPC;
    }
    if (n == 0)
        return PM_ERR_IPC;                  /* pmcd closed the connection */
    reply->received = (int32_t)n;
    if ((size_t)n < 12)
        return PCP_EXCHANGE_PARTIAL;
    int32_t type, from;
    int32_t length = pcp_pdu_header(buf, (size_t)n, &type, &from);
    if (length < 0)
        return PM_ERR_IPC;
    reply->length = length;
    reply->type = type;
    return (size_t)length == (size_t)n ? 0 : PCP_EXCHANGE_PARTIAL;
}

int pcp_exchange_fetch(int fd, const uint8_t *request, size_t reqlen, uint8_t *buf,
                       size_t cap, int highres, int32_t expect, pcp_result *out, void *mem,
                       size_t memsize, int32_t *numpmid, int32_t *nvalues,
                       pcp_exchange_reply *reply)
{
    if (out == NULL || mem == NULL || numpmid == NULL || nvalues == NULL || reply == NULL
        || *numpmid < 0 || *nvalues < 0)
        return PM_ERR_IPC;
    if (memsize < pcp_result_mem_size(*numpmid, *nvalues))
        return PM_ERR_TOOSMALL;
    int sts = pcp_exchange_roundtrip(fd, request, reqlen, buf, cap, reply);
    if (sts != 0)
        return sts;
    if (reply->type != expect)
        return PCP_EXCHANGE_PARTIAL;        /* an ERROR PDU: the caller's loop reads it */
    pcp_result_bind(out, mem, *numpmid, *nvalues);
    out->numpmid = *numpmid;
    out->nvalues = *nvalues;
    sts = pcp_result_pdu_index_sized(buf, (size_t)reply->length, highres, out, numpmid,
                                     nvalues);
    if (sts == 0)
        for (int32_t i = 0; i < out->numpmid; i++)
            reply->noagent += out->numval[i] == PM_ERR_NOAGENT;
    return sts;
}

/* ---- a metadata request encoded, sent, answered and decoded in one call ----
 *
 * The request is encoded at the start of buf (the connection's receive buffer, free
 * between requests), sent from there, and the reply received over it. A whole reply of
 * the expected type whose items fit the caller's arrays is decoded at once; anything
 * else is left to Python's general path with the same checks as a round trip. */

/* The round trip of a request `reqlen` bytes long at the start of buf (a negative
 * reqlen: the encoder's refusal, nothing sent). Returns 0 when buf holds one whole PDU
 * of type `expect` at least `minlen` bytes long, else the round trip's status or
 * PCP_EXCHANGE_OTHER / PCP_EXCHANGE_UNSENT. */
static int ask(int fd, uint8_t *buf, size_t cap, int reqlen, int32_t expect,
               pcp_exchange_reply *reply)
{
    if (reply == NULL)
        return PM_ERR_IPC;
    if (reqlen < 0) {
        reply->received = reply->length = reply->type = reply->noagent = 0;
        return PCP_EXCHANGE_UNSENT;
    }
    int sts = pcp_exchange_roundtrip(fd, buf, (size_t)reqlen, buf, cap, reply);
    if (sts != 0)
        return sts;
    return reply->type == expect ? 0 : PCP_EXCHANGE_OTHER;
}

int pcp_exchange_pmns_ids(int fd, uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                          const uint8_t *names, const int32_t *lens, int32_t idcap,
                          uint32_t *ids, int32_t *count, pcp_exchange_reply *reply)
{
    if (count == NULL)
        return PM_ERR_IPC;
    *count = 0;
    int sts = ask(fd, buf, cap, pcp_pdu_encode_pmns_names(buf, cap, from, numnames, names, lens),
                  PDU_PMNS_IDS, reply);
    if (sts != 0)
        return sts;
    if (((size_t)reply->length - 20) / 4 > (size_t)idcap)
        return PCP_EXCHANGE_OTHER;          /* more room than the caller has: Python's */
    int32_t idsts;
    int n = pcp_pdu_decode_pmns_ids(buf, (size_t)reply->length, &idsts, idcap, ids);
    if (n < 0)
        return n;
    *count = n;
    return 0;
}

/* The PMNS_NAMES reply of a request already encoded (reqlen bytes at buf). */
static int ask_names(int fd, uint8_t *buf, size_t cap, int reqlen, int32_t namecap,
                     int32_t *has_status, int32_t *status, uint32_t *name_off,
                     int32_t *name_len, int32_t *count, pcp_exchange_reply *reply)
{
    if (count == NULL)
        return PM_ERR_IPC;
    *count = 0;
    int sts = ask(fd, buf, cap, reqlen, PDU_PMNS_NAMES, reply);
    if (sts != 0)
        return sts;
    if (reply->length < 24 || ((size_t)reply->length - 24) / 4 > (size_t)namecap)
        return PCP_EXCHANGE_OTHER;
    int n = pcp_pdu_decode_pmns_names(buf, (size_t)reply->length, namecap, has_status, status,
                                      name_off, name_len);
    if (n < 0)
        return n;
    *count = n;
    return 0;
}

int pcp_exchange_name_all(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t pmid,
                          int32_t namecap, int32_t *has_status, int32_t *status,
                          uint32_t *name_off, int32_t *name_len, int32_t *count,
                          pcp_exchange_reply *reply)
{
    int reqlen = pcp_pdu_encode_ids(buf, cap, from, PDU_PMNS_IDS, 0, 1, &pmid);
    return ask_names(fd, buf, cap, reqlen, namecap, has_status, status, name_off, name_len,
                     count, reply);
}

int pcp_exchange_children(int fd, uint8_t *buf, size_t cap, int32_t from, int32_t subtype,
                          const uint8_t *name, size_t namelen, int32_t namecap,
                          int32_t *has_status, int32_t *status, uint32_t *name_off,
                          int32_t *name_len, int32_t *count, pcp_exchange_reply *reply)
{
    int reqlen = pcp_pdu_encode_pmns_node(buf, cap, from, PDU_PMNS_CHILD, subtype, name,
                                          namelen);
    return ask_names(fd, buf, cap, reqlen, namecap, has_status, status, name_off, name_len,
                     count, reply);
}

int pcp_exchange_text(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t ident,
                      int32_t type, uint32_t *off, int32_t *tlen, pcp_exchange_reply *reply)
{
    int sts = ask(fd, buf, cap, pcp_pdu_encode_text_req(buf, cap, from, ident, type), PDU_TEXT,
                  reply);
    if (sts != 0)
        return sts;
    return pcp_pdu_decode_text(buf, (size_t)reply->length, off, tlen);
}

int pcp_exchange_desc(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t pmid,
                      pcp_desc *out, pcp_exchange_reply *reply)
{
    int sts = ask(fd, buf, cap, pcp_pdu_encode_desc_req(buf, cap, from, pmid), PDU_DESC, reply);
    if (sts != 0)
        return sts;
    return pcp_pdu_decode_desc(buf, (size_t)reply->length, out);
}

int pcp_exchange_instance(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                          int32_t inst, const uint8_t *name, size_t namelen, int32_t instcap,
                          int32_t *insts, uint32_t *name_off, int32_t *name_len,
                          int32_t *count, pcp_exchange_reply *reply)
{
    if (count == NULL)
        return PM_ERR_IPC;
    *count = 0;
    int sts = ask(fd, buf, cap,
                  pcp_pdu_encode_instance_req(buf, cap, from, indom, inst, name, namelen),
                  PDU_INSTANCE, reply);
    if (sts != 0)
        return sts;
    if (reply->length < 20 || ((size_t)reply->length - 20) / 8 > (size_t)instcap)
        return PCP_EXCHANGE_OTHER;
    uint32_t reply_indom;
    int n = pcp_pdu_decode_instance(buf, (size_t)reply->length, &reply_indom, instcap, insts,
                                    name_off, name_len);
    if (n < 0)
        return n;
    *count = n;
    return 0;
}
