/* PM_MODE_INTERP's per-instance state and arithmetic, as libpcp 6.0.3's
 * __pmLogFetchInterp keeps and does them (archive-format.md §12-13).
 *
 * The Python driver (pcp/_archive/interp.py) reads the records, in the order libpcp
 * reads them, and hands each one here; this file keeps, per requested (metric,
 * instance), the observations bracketing the requested time (prior and next: a value,
 * a <mark> or nothing) in flat arrays, runs the per-instance passes of a fetch, and
 * assembles the result as a pcp_result. Nothing per value goes through Python. */
#ifndef PCP_INTERP_H
#define PCP_INTERP_H

#include "result.h"

typedef struct pcp_interp pcp_interp;

/* What folding a <mark> does to the bounds (libpcp's update_bounds do_mark). */
#define PCP_INTERP_MARK_NONE 0
#define PCP_INTERP_MARK_FORW 1
#define PCP_INTERP_MARK_BACK 2

/* Which list of unbound instances a folded record is checked against. */
#define PCP_INTERP_WALK_NONE 0
#define PCP_INTERP_WALK_BACK 1
#define PCP_INTERP_WALK_FORW 2

/* A new, empty state; `counter_wrap` is $PCP_COUNTER_WRAP's presence. NULL when out of
 * memory. Free with pcp_interp_free. */
pcp_interp *pcp_interp_new(int counter_wrap);
void pcp_interp_free(pcp_interp *ip);

/* libpcp 6.3's rule for DISCRETE and INSTANT numbers between two observations (the
 * nearer one) when `nearest` is set, else 6.0's (the prior one). Off in a new state. */
void pcp_interp_set_nearest(pcp_interp *ip, int nearest);

/* Declare a metric the first time it is requested: its descriptor (type -1 when the
 * archive has none) and its candidate instances in libpcp's hash-table order, with
 * each instance's birth and death times (-1 unknown). Returns 0 or -ENOMEM /
 * PM_ERR_TOOBIG. A pmid declared twice keeps its first declaration. */
int pcp_interp_add_metric(pcp_interp *ip, uint32_t pmid, int32_t type, uint32_t indom,
                          int32_t sem, int32_t ninst, const int32_t *insts,
                          const double *births, const double *deaths);

/* __pmLogResetInterp: forget the bounds that do not bracket t_req. */
void pcp_interp_reset(pcp_interp *ip, double t_req);

/* Start a fetch of these pmids (PM_ID_NULL allowed; every other one declared): the
 * list of wanted instances, through the profile. Returns 0 or -ENOMEM / PM_ERR_PMID. */
int pcp_interp_begin(pcp_interp *ip, const uint32_t *pmids, int32_t npmids,
                     const pcp_profile *profile);

/* The requested metrics forget how many values they gave last time (after the stream
 * was repositioned). */
void pcp_interp_forget_last_numval(pcp_interp *ip);

/* Fold one record read at time t_this into the bounds (libpcp's update_bounds), then,
 * for a search pass, drop from its unbound list what can no longer be found. `rec` NULL
 * is a <mark>; `data` holds the record's blocks (rec->boff/blen address it). `counting`
 * makes instances found by this record count towards the pass. Returns the pass's count
 * of instances found so far (>= 0) or PM_ERR_LOGREC. */
int pcp_interp_fold(pcp_interp *ip, double t_req, double t_this, const pcp_result *rec,
                    const uint8_t *data, size_t data_len, int do_mark, int counting, int walk);

/* The same for an archive data record as it lies in the file (length words included),
 * read (and so wholly checked) by pcp_archive_record_read: only the value sets of
 * declared metrics are decoded (pcp_archive_record_keep: the others are skipped by their
 * length, unchecked), then folded. The state keeps the last few records it decoded, under the caller's `key` for each (a name that stays
 * the same record's for the life of the state, e.g. file and offset), so a record
 * folded again is not decoded again. Returns as pcp_interp_fold, or PM_ERR_LOGREC /
 * -ENOMEM. */
int pcp_interp_fold_record(pcp_interp *ip, double t_req, double t_this, uint64_t key,
                           const uint8_t *rec, size_t len, int version, int do_mark,
                           int counting, int walk);

/* One record read by a roll (csrc/interp_steps.c): where it lies as for
 * pcp_interp_fold_record, or numpmid 0 for a <mark>, and its time. */
typedef struct {
    uint64_t key;
    const uint8_t *rec;
    size_t len;
    int32_t numpmid;
    double t_this;
} pcp_interp_run_record;

/* A roll's records folded (PCP_INTERP_MARK_FORW, not counting, no walk) with the
 * outcome of folding them one by one in order, but without the work on values a later
 * record of the run replaces: a record before t_req whose every value is of an instance
 * a later record before t_req also has is left undecoded. (Runs with a <mark> or times
 * going back are folded one by one.) Returns 0, or the first failure with *failed the
 * index of the record that failed. */
int pcp_interp_fold_run(pcp_interp *ip, double t_req, const pcp_interp_run_record *recs,
                        int32_t n, int version, int32_t *failed);

/* The searches of a fetch. A pass walks the wanted instances and lists those with no
 * bound on its side; it stops and returns 1 when libpcp would roll on at that point
 * (the caller rolls, folding records with PCP_INTERP_WALK_NONE, and calls again with
 * resume 1), 0 when done, with *count the instances to search for. `finish` settles
 * the instances still unbound after the search. */
int pcp_interp_prior_pass(pcp_interp *ip, double t_req, int direction, int resume,
                          int32_t *count);
void pcp_interp_prior_finish(pcp_interp *ip, double t_req);
int pcp_interp_next_pass(pcp_interp *ip, double t_req, int direction, int resume,
                         int32_t *count);
void pcp_interp_next_finish(pcp_interp *ip, double t_req);

/* The fetch's result: which instances get a value at t_req (not again when `decided`:
 * calling again after PCP_INTERP_NEED_ROOM), then `out` and `data` filled with the values
 * and the blocks' payloads (addressed by out->boff/blen), every requested metric
 * remembering how many values it had. *nvalues and *nbytes get the result's value count
 * and payload bytes; unless `out` is bound for exactly *nvalues values (out->nvalues on
 * entry) and the request's sets, and `data` holds *nbytes, nothing is filled and
 * PCP_INTERP_NEED_ROOM is returned (call again with those sizes, `decided` 1). Returns
 * 0, that, or PM_ERR_TOOBIG. */
int pcp_interp_result(pcp_interp *ip, double t_req, int decided, pcp_result *out,
                      uint8_t *data, int64_t data_room, int32_t *nvalues, int64_t *nbytes);

/* ---- regular-grid reads: a step's values straight into a chunk's matrices ---------- */

/* Where one requested metric's values of a grid step go (pcp/_bulk/grid.py): a row of
 * its values matrix (cells of the metric's type as pmExtractValue(type, type) gives them;
 * int64 references (length << PCP_INTERP_REF_SHIFT | offset) into the staging area for
 * STRING and AGGREGATE) and of its present matrix, and the column of each of its
 * candidate instances in the order they were declared (-1: not kept). The counts add up
 * over the steps. */
#define PCP_INTERP_REF_SHIFT 40     /* as PCP_COLS_REF_SHIFT: pcp._bulk's Blobs read both */
typedef struct {
    uint8_t *values;
    int64_t values_stride;          /* bytes from one row to the next */
    uint8_t *present;
    int64_t present_stride;
    const int32_t *column;          /* [candidate instances] */
    int64_t nvalues;                /* cells filled */
    int64_t nerr;                   /* values pmExtractValue refuses: left absent */
    int64_t nbytes;                 /* string / aggregate bytes staged */
    int64_t dropped;                /* values of instances without a column */
} pcp_interp_grid_metric;

/* A chunk being filled: one pcp_interp_grid_metric per requested pmid (in request
 * order), the staging area of its strings. */
typedef struct {
    pcp_interp_grid_metric *metrics;
    int32_t nmetrics;
    uint8_t *staged;
    uint64_t staged_cap;
    uint64_t staged_used;
    uint64_t room_need;             /* set when PCP_INTERP_NEED_ROOM is returned */
} pcp_interp_grid;

#define PCP_INTERP_NEED_ROOM 4      /* the staging area cannot hold the step's strings:
                                       grow it to room_need and call again with decided 1 */

/* The values of the fetch under way at t_req (after its passes, as for
 * pcp_interp_result_size) stored into row `row` of the grid's matrices, whose row the
 * caller has zeroed. `decided` 0 first decides which instances get a value (once per
 * step), 1 when calling again after PCP_INTERP_NEED_ROOM. Every requested metric
 * remembers how many values it had, as pcp_interp_result_fill does. Returns 0,
 * PCP_INTERP_NEED_ROOM, or PM_ERR_TOOBIG when the grid has fewer metrics than the
 * request. */
int pcp_interp_grid_row(pcp_interp *ip, double t_req, pcp_interp_grid *grid, int32_t row,
                        int decided);

/* ---- forward grids in one pass (a sweep; driven by pcp_interp_sweep_rows) ---------- */

/* Start a sweep of these pmids (declared, none repeated): every instance unbounded,
 * waiting from row 0. Returns 0, PM_ERR_PMID_LOG, PM_ERR_TOOBIG (a repeated pmid) or
 * -ENOMEM. */
int pcp_interp_sweep_begin(pcp_interp *ip, const uint32_t *pmids, int32_t npmids);

/* The next `nrows` rows of the sweep (times t, from the archive's label time) go to
 * rows base.. of the grid's matrices (zeroed by the caller); strings and aggregates to
 * the sweep's own staging area, which grid->staged then is (its use kept while it
 * already was; the caller resets staged_used for a new chunk). Returns 0, -ENOMEM or
 * PM_ERR_TOOBIG. */
int pcp_interp_sweep_chunk(pcp_interp *ip, pcp_interp_grid *grid, int32_t base,
                           int32_t nrows, const double *t);

/* One record at t_this folded into the chunk (rec NULL: a <mark>), as it lies in the
 * volume after pcp_archive_record_read checked it (`key` as for pcp_interp_fold_record).
 * `ahead`: a record after the chunk's last row, read ahead for the rows still waiting
 * (it moves no prior observation, and is read again for the next chunk), after
 * pcp_interp_sweep_waiting counted them. Returns 0 (ahead: how many instances still
 * wait), or PM_ERR_LOGREC / -ENOMEM / PM_ERR_TOOBIG. */
int pcp_interp_sweep_fold(pcp_interp *ip, double t_this, uint64_t key, const uint8_t *rec,
                          size_t len, int version, int ahead);

/* How many instances still wait for an observation after the chunk's last row (those
 * known to get none excepted): the count the reading ahead then counts down. */
int32_t pcp_interp_sweep_waiting(pcp_interp *ip);

/* The chunk finished: rows still waiting settled with no next observation (their
 * instances get none: `eof`, or known gone), then the counters' silence after a
 * <mark>. Returns 0, or PM_ERR_TOOBIG when rows still wait for records not read. */
int pcp_interp_sweep_chunk_done(pcp_interp *ip, int eof);

#endif
