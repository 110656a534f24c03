/* pmStore's request: value sets and value blocks packed into a RESULT PDU. */
#ifndef PCP_STORE_H
#define PCP_STORE_H

#include "pcp_core.h"

/* pmStore: a classic RESULT PDU packed from flat arrays. For each of numpmid sets:
 * pmid, numval (>= 1), valfmt. Per value (all sets concatenated): inst, and for INSITU
 * sets the 32-bit word in lval[k]; for DPTR sets a block of type vtype[k] whose payload
 * is payload[poff[k] .. poff[k]+plen[k]) in host byte order (numbers are converted to
 * big-endian by vtype, strings and aggregates copied as they are). */
int pcp_store_encode(uint8_t *buf, size_t cap, int32_t from, int64_t sec, int64_t usec,
                     int32_t numpmid, const uint32_t *pmid, const int32_t *numval,
                     const int32_t *valfmt, const int32_t *inst, const int32_t *lval,
                     const int32_t *vtype, const uint32_t *poff, const uint32_t *plen,
                     const uint8_t *payload, size_t payload_len);

#endif
