/* Event record arrays (PM_TYPE_EVENT / PM_TYPE_HIGHRES_EVENT values): validation and
 * unpacking into flat columns, with libpcp's pmUnpack[HighRes]EventRecords semantics
 * (docs events.md). Many value blocks of one buffer decode in one call. */
#ifndef PCP_EVENTS_H
#define PCP_EVENTS_H

#include "pcp_core.h"
#include "result.h"

/* Unpacked events. Per-record columns have `nrecords` entries, per-set columns `nsets`:
 * one entry per pmValueSet libpcp would build (event.flags / event.missed included). */
typedef struct {
    int32_t nrecords;
    int32_t nsets;
    /* per record */
    int64_t *sec;       /* event timestamp, seconds */
    int64_t *nsec;      /* nanoseconds (microseconds * 1000 for classic arrays) */
    uint32_t *flags;    /* er_flags */
    int32_t *nparams;   /* er_nparams as stored (the missed count of a MISSED record) */
    int32_t *numpmid;   /* numpmid of libpcp's result: may be < 0 when nparams is */
    int32_t *first;     /* index of the record's first value set */
    int32_t *block;     /* which input block the record came from */
    /* per value set */
    int64_t *ival;      /* INSITU word sign-extended, or the 64-bit integer */
    double *dval;       /* FLOAT / DOUBLE value, else 0 */
    int32_t *rec;       /* owning record */
    int32_t *param;     /* index among the record's parameters; -1 event.flags, -2 event.missed */
    uint32_t *pmid;
    int32_t *type;      /* PM_TYPE_* of the value (U32 for event.flags / event.missed) */
    int32_t *vtype;     /* -1 for INSITU sets, else the value block type (= type) */
    uint32_t *boff;     /* byte offset of the value bytes in the buffer (0 for INSITU) */
    uint32_t *blen;     /* value bytes: vlen - 4 of libpcp's block (0 for INSITU) */
} pcp_events;

/* pmIDs of the anonymous metrics libpcp reports flags and missed counts under. */
#define PCP_EVENT_FLAGS_PMID 0x7fc00001u
#define PCP_EVENT_MISSED_PMID 0x7fc00002u

/* Validate `nblocks` event arrays lying in buf[0..len). Block b starts (header word
 * included) at off[b] and has blen[b] bytes available; kind[b] is the expected type
 * (PM_TYPE_EVENT or PM_TYPE_HIGHRES_EVENT). status[b] gets 0 or the PM_ERR_* code
 * libpcp's unpack would return for that block alone. *nrecords / *nsets get the totals
 * over the blocks that passed. Returns 0, or PM_ERR_TOOBIG when a total (or len) does
 * not fit the 32-bit columns. */
int pcp_events_scan(const uint8_t *buf, size_t len, int32_t nblocks, const uint32_t *off,
                    const uint32_t *blen, const int32_t *kind, int32_t *status,
                    int32_t *nrecords, int32_t *nsets);

/* Fill `out` (columns sized from the totals of a scan of the same arguments) with the
 * records of every block whose status is 0, in block order. */
int pcp_events_decode(const uint8_t *buf, size_t len, int32_t nblocks, const uint32_t *off,
                      const uint32_t *blen, const int32_t *kind, const int32_t *status,
                      pcp_events *out);

/* Find the event arrays among the values of `n` decoded results (result.h) whose bytes
 * lie end to end in buf: result r's bytes start at base[r] and are size[r] long, and
 * its blocks are located by its own boff / blen columns. A value is an event array
 * when its set is DPTR / SPTR and the type byte of its block header (read from the
 * bytes, not from the vtype column) is PM_TYPE_EVENT or PM_TYPE_HIGHRES_EVENT; with
 * npmids > 0 only sets whose pmid is in pmids[] are looked at. For each array found,
 * in result / set / value order: off, blen and kind (as pcp_events_scan takes them),
 * and where it came from: result index, value index in that result, set pmid and
 * instance. At most `cap` are stored; returns how many were found (may exceed cap),
 * or PM_ERR_TOOBIG when a base or size puts a block outside the buffer. */
int pcp_events_collect(const uint8_t *buf, size_t len, int32_t n,
                       const pcp_result *const *results, const uint32_t *base,
                       const uint32_t *size, int32_t npmids, const uint32_t *pmids,
                       int32_t cap, uint32_t *off, uint32_t *blen, int32_t *kind,
                       int32_t *src_result, int32_t *src_value, uint32_t *src_pmid,
                       int32_t *src_inst);

/* Copy the n byte strings buf[boff[i] .. boff[i] + blen[i]) into consecutive rows of
 * `width` bytes of out (n * width bytes), zero-padding each row: how string and
 * aggregate parameters become one fixed-width array. Returns 0, or PM_ERR_TOOBIG when
 * a string lies outside the buffer or is longer than width (nothing is copied then). */
int pcp_events_pad(const uint8_t *buf, size_t len, int32_t n, const uint32_t *boff,
                   const uint32_t *blen, uint32_t width, uint8_t *out);

/* The columnar form of unpacked events: the per-record columns a consumer keeps, and
 * the parameters (event.flags and event.missed sets left out) grouped by pmid, so that
 * each parameter metric's values are one contiguous slice of every per-parameter
 * column. Sized exactly (records, parameters, groups), to be handed out as is. */
typedef struct {
    int32_t nrecords;
    int32_t nparams;
    int32_t ngroups;
    /* per record */
    int64_t *sec;
    int64_t *nsec;
    uint32_t *flags;
    int32_t *missed;    /* er_nparams of a MISSED record, else 0 */
    int32_t *count;     /* parameters of the record */
    int32_t *result;    /* bres[block] of the record's block (0 without bres) */
    uint32_t *metric;   /* bpmid[block] (0 without bpmid) */
    int32_t *inst;      /* binst[block] (PM_IN_NULL without binst) */
    /* per parameter: groups in ascending pmid, record order within a group */
    int64_t *value;     /* integers as int64; FLOAT / DOUBLE as the bits of a double */
    int32_t *event;     /* the record it belongs to */
    int32_t *type;
    uint32_t *boff;
    uint32_t *blen;
    /* per group */
    uint32_t *gpmid;
    int32_t *gtype;     /* the group's PM_TYPE_*, or -1 when its parameters differ */
    int32_t *gstart;    /* index of the group's first parameter */
    int32_t *gcount;
    uint32_t *gwidth;   /* the longest blen in the group */
} pcp_event_columns;

/* The parameter sets of `ev` in column order: their indices go to order[] (room for
 * ev->nsets; tmp is as large), the number of distinct pmids to *ngroups. Returns the
 * number of parameters. */
int32_t pcp_events_param_order(const pcp_events *ev, int32_t *order, int32_t *tmp,
                               int32_t *ngroups);

/* One allocation for the columns (8-byte columns first), their binding, and the fill
 * from `ev` and an order made by pcp_events_param_order(). bres / bpmid / binst, per
 * input block, may be NULL. Returns 0, or PM_ERR_TOOBIG if the sizes do not match. */
size_t pcp_events_columns_mem_size(int32_t nrecords, int32_t nparams, int32_t ngroups);
void pcp_events_columns_bind(pcp_event_columns *out, void *mem, int32_t nrecords,
                             int32_t nparams, int32_t ngroups);
int pcp_events_columns_fill(const pcp_events *ev, const int32_t *order, const int32_t *bres,
                            const uint32_t *bpmid, const int32_t *binst, pcp_event_columns *out);

/* One allocation for every column (8-byte columns first, so all are aligned when `mem`
 * is), and the call that points the columns of `out` into it. */
size_t pcp_events_mem_size(int32_t nrecords, int32_t nsets);
void pcp_events_bind(pcp_events *out, void *mem, int32_t nrecords, int32_t nsets);

#endif
