/* Decoding of value sets (RESULT / HIGHRES_RESULT PDUs, and archive data records) into
 * flat, caller-owned arrays: one value decoder for live and archived results. */
#ifndef PCP_RESULT_H
#define PCP_RESULT_H

#include "pcp_core.h"

/* One decoded result. Per-metric arrays have `numpmid` entries, per-value arrays
 * `nvalues`; the caller allocates them with the sizes pcp_scan_* reported. */
typedef struct {
    int64_t sec;        /* timestamp, seconds */
    int64_t nsec;       /* timestamp, nanoseconds (microseconds * 1000 for RESULT) */
    int32_t numpmid;
    int32_t nvalues;
    uint32_t *pmid;     /* [numpmid] */
    int32_t *numval;    /* [numpmid] >0 values, 0 none, <0 a PM_ERR_* for this metric */
    int32_t *valfmt;    /* [numpmid] PM_VAL_*, 0 when numval <= 0 (no valfmt on the wire) */
    int32_t *first;     /* [numpmid] index of the metric's first value */
    int32_t *inst;      /* [nvalues] */
    int32_t *vtype;     /* [nvalues] value block type, or -1 for an INSITU value */
    int64_t *ival;      /* [nvalues] INSITU word (sign-extended) or the integer in a 32/64-bit block */
    double *dval;       /* [nvalues] the number in a FLOAT or DOUBLE block, else 0 */
    uint32_t *boff;     /* [nvalues] byte offset of the block payload in the buffer (0 for INSITU) */
    uint32_t *blen;     /* [nvalues] payload length, i.e. vlen - 4 (0 for INSITU) */
} pcp_result;

/* Layout of the bytes that hold the value sets. */
typedef struct {
    size_t sets_off;    /* byte offset of the first value set */
    int32_t numpmid;    /* number of value sets */
    int64_t block_base; /* a DPTR word N points at byte block_base + 4*N of the buffer */
    int32_t strict;     /* archives: blocks must tile the bytes after the value sets exactly,
                           each DPTR value owning one block, as libpcp's record decoder
                           demands; 0 only bounds-checks each block (live PDUs) */
} pcp_sets_layout;

/* Bytes one allocation needs to hold every array of a result of this size, and the call
 * that points the arrays of `out` into such an allocation (8-byte columns first, so every
 * column is aligned when `mem` is). */
size_t pcp_result_mem_size(int32_t numpmid, int32_t nvalues);
void pcp_result_bind(pcp_result *out, void *mem, int32_t numpmid, int32_t nvalues);

/* One result of value sets taken from others (a LOCAL fetch's per-domain replies): set i
 * of `out` is set set_of[i] of srcs[src_of[i]], its value columns copied and its block
 * offsets moved by base[src_of[i]] (where that source's bytes start in the joined
 * buffer); src_of[i] < 0 gives set i pmid[i] and numval code[i]. With out NULL, returns
 * the number of values `out` needs; else fills it (arrays of numpmid sets, and of
 * out->nvalues values on entry: at least that many) and returns it. PM_ERR_TOOSMALL for a source or set index out of range, a
 * value count out of range, or a moved offset past 32 bits. */
int pcp_result_gather(pcp_result *out, int32_t numpmid, const uint32_t *pmid,
                      const int32_t *src_of, const int32_t *set_of, const int32_t *code,
                      const pcp_result *const *srcs, const uint32_t *base, int32_t nsrcs);

/* Validate the value sets and count values. Returns 0 or PM_ERR_IPC (live) / the
 * `bad` code the caller chooses (archives use PM_ERR_LOGREC). */
int pcp_result_valuesets_scan(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                              int bad, int32_t *nvalues);

/* Fill `out` (arrays sized from a successful scan of the same bytes). */
int pcp_result_valuesets_decode(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                                int bad, pcp_result *out);

/* Which value sets a reader wants, by pmid (nonzero: keep). */
typedef int (*pcp_pmid_filter)(const void *ctx, uint32_t pmid);

/* Only the value sets `keep` accepts, in their order, packed. For bytes whose whole
 * check (pcp_result_valuesets_scan) has been made before: the other sets are skipped by
 * their length, so errors inside them go unseen here; what is taken is bounds-checked
 * as the decoder checks it (never a read outside buf). With out NULL it counts: *nsets
 * and *nvalues get the sizes `out` needs. With out (bound for at least *nsets sets and
 * *nvalues values, as counted) it fills it. Returns 0 or `bad`. */
int pcp_result_valuesets_keep(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                              int bad, pcp_pmid_filter keep, const void *keep_ctx,
                              int32_t *nsets, int32_t *nvalues, pcp_result *out);

/* RESULT (classic) and HIGHRES_RESULT PDUs: parse the fixed part, then scan/decode.
 * `highres` selects the layout. Scan reports numpmid and nvalues. */
int pcp_result_pdu_scan(const uint8_t *buf, size_t len, int highres,
                        int32_t *numpmid, int32_t *nvalues);
int pcp_result_pdu_decode(const uint8_t *buf, size_t len, int highres, pcp_result *out);

/* Scan and decode in one walk, into `out` bound for exactly out->numpmid sets and
 * out->nvalues values (the sizes a fetch loop's last result had): 0 when the PDU has that
 * many, PCP_RESULT_RESIZE (nothing filled) when it has another number, or PM_ERR_IPC.
 * *numpmid and *nvalues get the PDU's counts either way (on success: out's). */
#define PCP_RESULT_RESIZE 1
int pcp_result_pdu_decode_sized(const uint8_t *buf, size_t len, int highres, pcp_result *out,
                                int32_t *numpmid, int32_t *nvalues);

/* The lazy form of decode_sized, for a fetch whose values may never be read: the same
 * walk and every check of it (each set, value word and block: the same PM_ERR_IPC for
 * the same bytes), the same return, but only the per-set columns (pmid, numval, valfmt,
 * first), sec and nsec filled. pcp_result_pdu_fill_values fills the per-value columns
 * later from the same bytes (0, or PM_ERR_IPC when they are not what was indexed),
 * leaving the per-set columns and the timestamp as they are (a caller may have edited
 * them). */
int pcp_result_pdu_index_sized(const uint8_t *buf, size_t len, int highres, pcp_result *out,
                               int32_t *numpmid, int32_t *nvalues);
int pcp_result_pdu_fill_values(const uint8_t *buf, size_t len, int highres, pcp_result *out);

/* An instance profile (pmAddProfile / pmDelProfile) as archive contexts apply it: a
 * global state for instance domains with no entry, and per-indom entries whose listed
 * instances are the exceptions to the entry's state. */
typedef struct {
    int32_t include_by_default;   /* 1: an indom with no entry passes (PM_PROFILE_INCLUDE) */
    int32_t nentries;
    const uint32_t *indom;        /* [nentries] */
    const int32_t *listed_pass;   /* [nentries] 1: only the listed instances pass (the
                                     entry's state is EXCLUDE); 0: they are the ones left out */
    const int32_t *first;         /* [nentries] the entry's first instance in `insts` */
    const int32_t *count;         /* [nentries] how many instances it lists */
    const int32_t *insts;         /* the listed instances, ascending within each entry */
    int32_t ninsts;               /* length of `insts` */
} pcp_profile;

/* A pmFetch request against one decoded archive record: the requested pmids in order,
 * and for each the instance domain its descriptor gives (PM_INDOM_NULL: no profile),
 * or `known` 0 when the archive has no descriptor for it. */
typedef struct {
    int32_t npmids;
    const uint32_t *pmid;         /* [npmids] */
    const uint32_t *indom;        /* [npmids] */
    const uint8_t *known;         /* [npmids] */
} pcp_select_request;

/* Whether instance `inst` of `indom` passes the profile. */
int pcp_profile_includes(const pcp_profile *profile, uint32_t indom, int32_t inst);

/* The result pmFetch returns from one archive record: one value set per requested pmid
 * (the record's first set of that pmid, its values filtered by the profile; a pmid the
 * record lacks gets a set with no values), values copied with their block offsets so
 * the output addresses the record's bytes as `src` does. Call with out == NULL to size:
 * the return is then the number of values the output needs (>= 0). With `out` (arrays
 * bound for request->npmids sets and that many values, out->numpmid and out->nvalues
 * saying so on entry) it fills `out` and returns 1 when
 * at least one requested pmid is in the record, 0 when none is. Errors: PM_ERR_PMID_LOG
 * (a set with values whose pmid has no descriptor), PM_ERR_LOGREC (an inconsistent
 * `src`), PM_ERR_TOOBIG (more values than an int32 counts). */
int pcp_result_select(const pcp_result *src, const pcp_select_request *request,
                      const pcp_profile *profile, pcp_result *out);

#endif
