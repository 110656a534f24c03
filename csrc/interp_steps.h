/* PM_MODE_INTERP's record reading in C: the moves of libpcp 6.0.3's __pmLogFetchInterp
 * over one archive's volumes (the roll, the backward and forward searches, which
 * records they read, in which order, where the stream is left), and a regular grid's
 * steps one after another without returning to Python.
 *
 * The Python driver (pcp/_archive/interp.py) keeps the parts that are rare or need the
 * archive's metadata (the first fetch's positioning by the temporal index, the end of
 * the archive, several archives, $PCP_IGNORE_MARK_RECORDS); for one archive whose
 * volumes all open it hands the stream to this file. Reads are libpcp's reads (framing,
 * checks, errors, positions); a record read and checked once is remembered (where it
 * lies and where the stream goes after it, both ways) so a scan checks each record
 * once; memory is bounded (PCP_INTERP_READS_MAX remembered reads).
 *
 * A regular forward grid may instead be swept in one pass (pcp_interp_sweep_*), over
 * one archive's volumes or every archive's in turn. */
#ifndef PCP_INTERP_STEPS_H
#define PCP_INTERP_STEPS_H

#include "interp.h"

/* One volume of the archive, volumes minvol..maxvol at indices 0..n-1. */
typedef struct {
    const uint8_t *buf;
    uint64_t size;
    uint64_t data_start;        /* where records start (after its label) */
    uint64_t serial;            /* the caller's name of this file in pcp_interp_fold_record
                                   keys (key = serial << 44 | offset) */
    int32_t mapped;             /* a read-only file mapping: pages behind the reader may be
                                   handed back to the kernel (madvise) */
    uint64_t kept_lo, kept_hi;  /* pages outside [kept_lo, kept_hi) are released */
    int32_t mark_before;        /* a sweep over several archives: this volume is the
                                   first of an archive after the first, and libpcp reads
                                   a made-up <mark> at mark_sec/nsec before its records */
    int64_t mark_sec, mark_nsec;
} pcp_interp_volume;

typedef struct pcp_interp_reads pcp_interp_reads;

#define PCP_INTERP_READS_MAX (1 << 16)

/* Reads remembered over a scan; NULL when out of memory. */
pcp_interp_reads *pcp_interp_reads_new(void);
void pcp_interp_reads_free(pcp_interp_reads *reads);

/* The stream and the fetch that walks it (the caller sets every field; the functions
 * below move vol/pos/saved_* and origin, and count). */
typedef struct {
    pcp_interp_volume *vols;
    int32_t nvols;
    int32_t version;
    uint64_t label_len;         /* the archive's label length: reading backwards stops
                                   at or before it, as libpcp does */
    int32_t vol;                /* the stream: volume index and position */
    uint64_t pos;
    int32_t saved_vol;          /* the position remembered between fetches */
    uint64_t saved_pos;
    int32_t direction;          /* of the interpolation: > 0 forwards */
    uint64_t release_slack;     /* pages this far behind the reader are released */
    pcp_interp_reads *reads;
    /* the time: seconds from the archive's label time, as libpcp's long double
     * __pmTimestampSub; the grid's request time and delta */
    int64_t label_sec, label_nsec;
    int64_t origin_sec, origin_nsec;
    int64_t delta_sec, delta_nsec;
    double t_end;               /* the archive end as last seen (a step beyond it returns
                                   to the caller) */
    /* the request of each grid step */
    const uint32_t *pmids;
    int32_t npmids;
    const pcp_profile *profile;
    /* counts */
    int64_t records_read;       /* reads that gave a record */
    int64_t records_checked;    /* of those, the ones checked here (not remembered) */
    double sweep_last_t;        /* a sweep: the time of the record before the resume
                                   position (-inf: none) */
} pcp_interp_walk;

/* Bound every wanted instance of the fetch under way at t_req (after
 * pcp_interp_begin, with the stream where the last fetch left it): back to the
 * remembered position, the backward search (rolling where libpcp rolls), the forward
 * search. Returns 0 or PM_ERR_LOGREC. */
int pcp_interp_walk_bound(pcp_interp *ip, pcp_interp_walk *w, double t_req);

#define PCP_INTERP_STEP_ASIDE 5     /* this step is the caller's (before the start or
                                       past t_end): *done steps were made */

/* Rows row, row + 1, ... (up to nrows of them) of a grid, one fetch each at the walk's
 * origin, which then advances by the delta: begin, bound, pcp_interp_grid_row.
 * Returns 0 (all made), PCP_INTERP_STEP_ASIDE, PCP_INTERP_NEED_ROOM (the step at row +
 * *done is bounded and decided but not stored: grow the staging area, call
 * pcp_interp_grid_row with decided 1, advance the origin), or PM_ERR_* (the step at row
 * + *done failed; the origin has not advanced). */
int pcp_interp_grid_steps(pcp_interp *ip, pcp_interp_walk *w, pcp_interp_grid *grid,
                          int32_t row, int32_t nrows, int32_t *done);

#define PCP_INTERP_SWEEP_ASIDE 6    /* the archive is not for a sweep (records out of time
                                       order, at the same time, a <mark> at a grid time): the
                                       chunk's rows may hold values (clear them) and the
                                       grid goes on with the steps */

/* Whether a forward grid from the walk's origin (nrows rows at most) may be swept: the
 * records' times (their framing only read) and those of the <mark>s made up between
 * archives each after the one before, no <mark> at a row's time. 1 or 0 (also for a
 * record whose framing is bad: the steps then meet it). */
int pcp_interp_sweep_fits(const pcp_interp_walk *w, int64_t nrows);

/* Position a sweep (pcp_interp_sweep_begin, then this) at the first record. */
void pcp_interp_sweep_start(pcp_interp_walk *w);

/* Rows row, row + 1, ... (up to nrows) of a forward grid swept in one pass from the
 * walk's origin (advanced past the rows made): the records from the resume position
 * (w->saved_*) to the last row, then ahead as far as rows still wait. *done rows are
 * made; returns 0 (all), PCP_INTERP_STEP_ASIDE (the row at *done is before the start
 * or past t_end), PCP_INTERP_SWEEP_ASIDE (with *done 0) or PM_ERR_*. */
int pcp_interp_sweep_rows(pcp_interp *ip, pcp_interp_walk *w, pcp_interp_grid *grid,
                          int32_t row, int32_t nrows, int32_t *done);

#endif
