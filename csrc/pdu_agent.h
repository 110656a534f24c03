/* The agent's side of pmcd's PMDA protocol: requests pmcd sends a PMDA decoded, the
 * PMDA's replies encoded. Same checked cursor and writer as the client codec in pdu.h;
 * the layouts a PMDA shares with a client (PMNS_NAMES, PMNS_IDS, ATTR, ERROR, CREDS)
 * use pdu.h's functions. */
#ifndef PCP_PDU_AGENT_H
#define PCP_PDU_AGENT_H

#include "pcp_core.h"

/* ---- requests from pmcd ------------------------------------------------------------ */

/* The fixed fields of one request. Which are set depends on the PDU type:
 *   CREDS         a = version, b = flags (of the first CVERSION credential)
 *   ERROR         a = code
 *   DESC_REQ      ident
 *   TEXT_REQ, LABEL_REQ           ident, a = type
 *   INSTANCE_REQ  ident = indom, a = inst, name_off/name_len (name_len 0: no name)
 *   PMNS_CHILD, PMNS_TRAVERSE     a = subtype, name_off/name_len
 *   PMNS_IDS      a = sts, ident = the first pmid
 *   ATTR          a = attribute, name_off/name_len = the value
 *   FETCH         a = ctxnum, b = numpmid (pmids: pcp_agent_decode_fetch)
 *   PROFILE       a = ctxnum, b = numprof, c = total instances (pcp_agent_decode_profile)
 *   RESULT, PMNS_NAMES            nothing here: decoded by result.h / pdu.h */
typedef struct {
    int32_t type;
    int32_t sender;
    uint32_t ident;
    int32_t a;
    int32_t b;
    int32_t c;
    uint32_t name_off;
    int32_t name_len;
} pcp_agent_request;

/* Decode a whole PDU (header included, len == the header's length). Returns the PDU
 * type, or PM_ERR_IPC for a malformed PDU of a type it knows; other types are returned
 * with only type and from set. */
int pcp_agent_decode_request(const uint8_t *buf, size_t len, pcp_agent_request *out);

/* FETCH: the pmids (cap: numpmid from pcp_agent_decode_request). Returns numpmid. */
int pcp_agent_decode_fetch(const uint8_t *buf, size_t len, int32_t cap, uint32_t *pmids);

/* PROFILE: entries and instances (caps from pcp_agent_decode_request's b and c).
 * Returns numprof, *g_state set. */
int pcp_agent_decode_profile(const uint8_t *buf, size_t len, int32_t *g_state,
                             int32_t entry_cap, uint32_t *indoms, int32_t *states,
                             int32_t *numinst, int32_t inst_cap, int32_t *insts);

/* ---- replies to pmcd ----------------------------------------------------------------
 * Each returns the PDU length it needs; with a non-NULL buf of at least that length the
 * PDU is written (a smaller one gives PM_ERR_TOOBIG). from is the sender (FROM_ANON 0). */

int pcp_agent_encode_error(uint8_t *buf, size_t cap, int32_t from, int32_t code);
int pcp_agent_encode_desc(uint8_t *buf, size_t cap, int32_t from, uint32_t pmid, int32_t type,
                          uint32_t indom, int32_t sem, uint32_t units);
/* INSTANCE: numinst entries; names concatenated in `names`, lens[i] bytes each. */
int pcp_agent_encode_instance(uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                              int32_t numinst, const int32_t *insts, const uint8_t *names,
                              const int32_t *lens);
int pcp_agent_encode_text(uint8_t *buf, size_t cap, int32_t from, uint32_t ident,
                          const uint8_t *text, size_t tlen);
/* PMNS_NAMES reply: names concatenated; status NULL for none (else one per name). */
int pcp_agent_encode_names(uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                           const uint8_t *names, const int32_t *lens, const int32_t *status);

/* LABEL: nsets sets; set s has inst[s], nlabels[s] (< 0: an error code, no labels) and
 * its JSON json[json_off[s] .. + json_len[s]); its labels are entries first[s] ..
 * first[s] + nlabels[s] - 1 of the five label columns (offsets relative to the set's
 * JSON). */
int pcp_agent_encode_labels(uint8_t *buf, size_t cap, int32_t from, int32_t ident,
                            int32_t type, int32_t nsets, const int32_t *inst,
                            const int32_t *nlabels, const int32_t *first,
                            const uint32_t *json_off, const int32_t *json_len,
                            const uint8_t *json, size_t json_total,
                            const uint16_t *name, const uint8_t *namelen,
                            const uint8_t *flags, const uint16_t *value,
                            const uint16_t *valuelen, int32_t nlabels_total);

/* RESULT, the reply to a FETCH. Set i: pmid[i], numval[i] (<= 0: no values or an error
 * code) and the metric type vtype[i]. Value k (the sets' values concatenated, ninst in
 * all) has inst[k]. A numeric value is the next 4 bytes (32, U32, FLOAT) or 8 bytes (64,
 * U64, DOUBLE) of `values`, in host order (as array.array holds them); 32-bit integers
 * go in situ, the others in value blocks after the sets. A STRING value's text is the
 * next slen[s] bytes of `payload`, sent with a NUL. Every column is checked against
 * its length before anything is written. `stamp` is the first timestamp word (the
 * PMDA's state-change flags). */
int pcp_agent_encode_result(uint8_t *buf, size_t cap, int32_t from, int32_t stamp,
                            int32_t numpmid, const uint32_t *pmid, const int32_t *numval,
                            const int32_t *vtype, const int32_t *inst, size_t ninst,
                            const uint8_t *values, size_t values_len, const uint32_t *slen,
                            size_t nstrings, const uint8_t *payload, size_t payload_len);

#endif
