/* PDU framing, request encoders and decoders for the small reply PDUs. */
#ifndef PCP_PDU_H
#define PCP_PDU_H

#include "pcp_core.h"

/* ---- framing -------------------------------------------------------------------- */

/* Check a 12-byte header: returns the total PDU length (>= 12) and sets *type and *from,
 * or PM_ERR_IPC for a length below 12 or above the client ceiling, or a negative type. */
int32_t pcp_pdu_header(const uint8_t *buf, size_t len, int32_t *type, int32_t *from);

/* ---- encoders --------------------------------------------------------------------
 * Each returns the PDU length it needs. When buf is non-NULL and cap is at least that
 * length the PDU is written; a too-small non-NULL buffer yields PM_ERR_TOOBIG. Bad
 * arguments give PM_ERR_TOOSMALL (empty lists) or PM_ERR_TOOBIG (over the limits). */

int pcp_pdu_encode_creds(uint8_t *buf, size_t cap, int32_t from, uint32_t flags);
int pcp_pdu_encode_attr(uint8_t *buf, size_t cap, int32_t from, int32_t attr,
                        const uint8_t *value, size_t vlen);
/* Profile: entries in creation order; instances of all entries concatenated. */
int pcp_pdu_encode_profile(uint8_t *buf, size_t cap, int32_t from, int32_t ctxid, int32_t g_state,
                           int32_t numprof, const uint32_t *indoms, const int32_t *states,
                           const int32_t *numinst, const int32_t *insts);
int pcp_pdu_encode_fetch(uint8_t *buf, size_t cap, int32_t from, int highres, int32_t ctxid,
                         int32_t numpmid, const uint32_t *pmids);
int pcp_pdu_encode_desc_req(uint8_t *buf, size_t cap, int32_t from, uint32_t pmid);
/* PMNS_IDS (sts 0, reverse lookup) and DESC_IDS (sts -1) share one layout. */
int pcp_pdu_encode_ids(uint8_t *buf, size_t cap, int32_t from, int32_t type, int32_t sts,
                       int32_t numids, const uint32_t *ids);
int pcp_pdu_encode_instance_req(uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                                int32_t inst, const uint8_t *name, size_t namelen);
int pcp_pdu_encode_text_req(uint8_t *buf, size_t cap, int32_t from, uint32_t ident, int32_t type);
/* Names are concatenated in `names`; lens[i] is the byte length of name i. */
int pcp_pdu_encode_pmns_names(uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                              const uint8_t *names, const int32_t *lens);
/* PMNS_CHILD (subtype 0/1) and PMNS_TRAVERSE (subtype 0). */
int pcp_pdu_encode_pmns_node(uint8_t *buf, size_t cap, int32_t from, int32_t type, int32_t subtype,
                             const uint8_t *name, size_t namelen);
int pcp_pdu_encode_label_req(uint8_t *buf, size_t cap, int32_t from, int32_t ident, int32_t type);

/* ---- decoders for small replies ---------------------------------------------------
 * Each takes a whole PDU (header included, len == header length) and returns 0 or a
 * count on success, PM_ERR_IPC on malformed input. Text and names are returned as
 * byte offsets/lengths into buf, so nothing is copied. */

/* ERROR: 16 bytes (code) or 20 bytes (code + datum, the greeting). *datum is 0 for 16. */
int pcp_pdu_decode_error(const uint8_t *buf, size_t len, int32_t *code, uint32_t *datum);

typedef struct {
    uint32_t pmid;
    int32_t type;
    uint32_t indom;
    int32_t sem;
    uint32_t units;
} pcp_desc;

int pcp_pdu_decode_desc(const uint8_t *buf, size_t len, pcp_desc *out);
/* DESCS: `expected` is the request's numids; out has room for it. Returns the count. */
int pcp_pdu_decode_descs(const uint8_t *buf, size_t len, int32_t expected, pcp_desc *out);

/* INSTANCE: returns numinst; cap is the room in the three arrays, which a caller can
 * size as (len - 20) / 8 since every entry takes at least 8 bytes. */
int pcp_pdu_decode_instance(const uint8_t *buf, size_t len, uint32_t *indom, int32_t cap,
                            int32_t *inst, uint32_t *name_off, int32_t *name_len);

/* TEXT: the text is buf[*off .. *off + *tlen). */
int pcp_pdu_decode_text(const uint8_t *buf, size_t len, uint32_t *off, int32_t *tlen);

/* PMNS_IDS: returns numids, sets *sts; cap as (len - 20) / 4. */
int pcp_pdu_decode_pmns_ids(const uint8_t *buf, size_t len, int32_t *sts, int32_t cap,
                            uint32_t *ids);

/* PMNS_NAMES: returns numnames; *has_status says whether status[] was filled.
 * cap as (len - 24) / 4. */
int pcp_pdu_decode_pmns_names(const uint8_t *buf, size_t len, int32_t cap, int32_t *has_status,
                              int32_t *status, uint32_t *name_off, int32_t *name_len);

typedef struct {
    int32_t inst;
    int32_t nlabels;    /* < 0: an error code for this set */
    uint32_t json_off;  /* absolute byte offset of the JSON text in buf */
    int32_t json_len;
    int32_t first;      /* index of the set's first label in the label array */
} pcp_labelset;

typedef struct {
    uint32_t name;      /* offsets relative to the set's JSON text */
    uint32_t namelen;
    uint32_t flags;
    uint32_t value;
    uint32_t valuelen;
} pcp_label;

/* LABEL: returns nsets. Room: set_cap as (len - 28) / 16, label_cap as (len - 28) / 8. */
int pcp_pdu_decode_labels(const uint8_t *buf, size_t len, int32_t *ident, int32_t *type,
                          int32_t set_cap, pcp_labelset *sets, int32_t label_cap,
                          pcp_label *labels);

/* ATTR: the value is buf[*off .. *off + *vlen). */
int pcp_pdu_decode_attr(const uint8_t *buf, size_t len, int32_t *attr, uint32_t *off,
                        int32_t *vlen);

#endif
