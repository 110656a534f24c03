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
