/* One request/reply round trip with pmcd in one C call: the request sent whole, the
 * reply received into the connection's buffer and its header checked (and a fetch's
 * RESULT decoded), so a PMAPI call costs one crossing from Python instead of a
 * Python frame per step. cffi releases the GIL around the call, so the socket wait
 * lets other threads run.
 *
 * For a plain socket only (TLS goes through Python's ssl module), with its receive
 * timeout already set on the socket (SO_RCVTIMEO: a recv that times out fails with
 * EAGAIN) and nothing left over from an earlier reply. Anything but the common case
 * (a reply in more than one piece, more than one PDU, an interrupted recv) is left to
 * the caller's general receive path with the bytes received so far. */
#ifndef PCP_EXCHANGE_H
#define PCP_EXCHANGE_H

#include "pcp_core.h"
#include "pdu.h"
#include "result.h"

#define PCP_EXCHANGE_PARTIAL 2  /* the reply is not one whole PDU (or the recv was
                                   interrupted): `received` bytes are in buf for the
                                   caller's receive path to go on from */
#define PCP_EXCHANGE_OTHER 3    /* one whole PDU came, but not of the type expected (an
                                   ERROR) or with more items than the caller has room
                                   for: the caller decodes it from buf */
#define PCP_EXCHANGE_UNSENT 4   /* the request does not encode into buf: nothing sent,
                                   the caller's general path takes it */

typedef struct {
    int32_t received;   /* bytes of the reply in buf (0 after an interrupted recv) */
    int32_t length;     /* the first PDU's length from its checked header, 0 when fewer
                           than a header's bytes came */
    int32_t type;       /* its type */
    int32_t noagent;    /* a decoded fetch's value sets whose numval is PM_ERR_NOAGENT
                           (libpcp's anonymous metrics need them rewritten) */
} pcp_exchange_reply;

/* Send `request` on socket `fd`, then one recv of the reply into buf (cap bytes).
 * Returns 0 when buf holds exactly one whole PDU (reply->length == reply->received),
 * PCP_EXCHANGE_PARTIAL, or PM_ERR_TIMEOUT (a send or recv that timed out), PM_ERR_IPC
 * (a failed send or recv, the connection closed, a header whose length or type is
 * out of range). */
int pcp_exchange_roundtrip(int fd, const uint8_t *request, size_t reqlen, uint8_t *buf,
                           size_t cap, pcp_exchange_reply *reply);

/* pcp_exchange_roundtrip for a pmFetch: when the reply is one whole PDU of type
 * `expect` (RESULT or HIGHRES_RESULT, as `highres` says), it is checked whole and
 * indexed into `out` as pcp_result_pdu_index_sized does (the values are left for
 * pcp_result_pdu_fill_values, when something reads them), `out` first bound
 * (pcp_result_bind) to `mem`, which must hold pcp_result_mem_size(*numpmid, *nvalues)
 * bytes (PM_ERR_TOOSMALL if not). Returns 0 (indexed; reply->noagent counted), PCP_RESULT_RESIZE (another size:
 * *numpmid and *nvalues say which, nothing filled), PCP_EXCHANGE_PARTIAL (not one whole
 * PDU, or another type: the caller reads on), or a negative code (the round trip's, or
 * the decoder's). */
int pcp_exchange_fetch(int fd, const uint8_t *request, size_t reqlen, uint8_t *buf,
                       size_t cap, int highres, int32_t expect, pcp_result *out, void *mem,
                       size_t memsize, int32_t *numpmid, int32_t *nvalues,
                       pcp_exchange_reply *reply);

/* The metadata requests in one call each: the request encoded at the start of buf (so
 * nothing is sent when it does not fit: PCP_EXCHANGE_UNSENT), the round trip as
 * pcp_exchange_roundtrip's, then the reply decoded from buf as pdu_decode.c does, into
 * the caller's arrays (offsets of names and text are into buf). Each returns 0 (decoded,
 * *count set where there is one), PCP_EXCHANGE_PARTIAL (as the round trip),
 * PCP_EXCHANGE_OTHER (one whole PDU of reply->length bytes in buf, another type or too
 * many items, not decoded), PCP_EXCHANGE_UNSENT, or a negative code: the round trip's,
 * or the decoder's when reply->type is the expected one and the reply came whole. */

/* pmLookupName: PMNS_NAMES of `numnames` names (concatenated, lens[i] bytes each) ->
 * PMNS_IDS into ids (idcap of them). */
int pcp_exchange_pmns_ids(int fd, uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                          const uint8_t *names, const int32_t *lens, int32_t idcap,
                          uint32_t *ids, int32_t *count, pcp_exchange_reply *reply);
/* pmNameAll: PMNS_IDS of one pmid -> PMNS_NAMES (namecap names at most). */
int pcp_exchange_name_all(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t pmid,
                          int32_t namecap, int32_t *has_status, int32_t *status,
                          uint32_t *name_off, int32_t *name_len, int32_t *count,
                          pcp_exchange_reply *reply);
/* pmGetChildren(Status): PMNS_CHILD of a name -> PMNS_NAMES. */
int pcp_exchange_children(int fd, uint8_t *buf, size_t cap, int32_t from, int32_t subtype,
                          const uint8_t *name, size_t namelen, int32_t namecap,
                          int32_t *has_status, int32_t *status, uint32_t *name_off,
                          int32_t *name_len, int32_t *count, pcp_exchange_reply *reply);
/* pmLookupText: TEXT_REQ -> TEXT (the text at *off, *tlen bytes). */
int pcp_exchange_text(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t ident,
                      int32_t type, uint32_t *off, int32_t *tlen, pcp_exchange_reply *reply);
/* pmGetInDom, pmLookupInDom, pmNameInDom: INSTANCE_REQ -> INSTANCE (instcap instances
 * at most). */
int pcp_exchange_instance(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                          int32_t inst, const uint8_t *name, size_t namelen, int32_t instcap,
                          int32_t *insts, uint32_t *name_off, int32_t *name_len,
                          int32_t *count, pcp_exchange_reply *reply);
/* pmLookupDesc: DESC_REQ -> DESC. */
int pcp_exchange_desc(int fd, uint8_t *buf, size_t cap, int32_t from, uint32_t pmid,
                      pcp_desc *out, pcp_exchange_reply *reply);

#endif
