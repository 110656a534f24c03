/* PM_MODE_INTERP's record reading over one archive's volumes, as pcp/_archive/interp.py
 * does it record by record (libpcp 6.0.3's do_roll and the search loops of
 * __pmLogFetchInterp over __pmLogRead_ctx), and a grid's steps in one call. */
/* madvise and sysconf are POSIX / BSD: visible under -std=c99 only when asked for */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "archive.h"
#include "interp_steps.h"

/* ---- remembered reads --------------------------------------------------------------- */

/* One good read: at `pos` of volume `vol` in a direction, the record found there and
 * where the stream is after it. */
typedef struct {
    uint64_t pos;
    uint64_t newpos;
    int32_t vol;                /* -1: empty slot */
    int32_t backward;
    pcp_log_record rec;
} read_t;

struct pcp_interp_reads {
    read_t *slots;
    uint32_t mask;              /* slots - 1 (a power of two) */
    uint32_t used;
};

static void reads_clear(read_t *slots, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        slots[i].vol = -1;
}

pcp_interp_reads *pcp_interp_reads_new(void)
{
    pcp_interp_reads *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->slots = malloc(256 * sizeof *r->slots);
    if (r->slots == NULL) {
        free(r);
        return NULL;
    }
    r->mask = 255;
    reads_clear(r->slots, 256);
    return r;
}

void pcp_interp_reads_free(pcp_interp_reads *reads)
{
    if (reads == NULL)
        return;
    free(reads->slots);
    free(reads);
}

static uint32_t read_hash(int32_t vol, uint64_t pos, int backward)
{
    uint64_t x = (pos << 1 | (uint64_t)(backward != 0)) ^ ((uint64_t)(uint32_t)vol << 48);
    x *= UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(x >> 32);
}

static const read_t *reads_find(const pcp_interp_reads *r, int32_t vol, uint64_t pos,
                                int backward)
{
    uint32_t h = read_hash(vol, pos, backward) & r->mask;
    while (r->slots[h].vol >= 0) {
        const read_t *s = &r->slots[h];
        if (s->vol == vol && s->pos == pos && s->backward == backward)
            return s;
        h = (h + 1) & r->mask;
    }
    return NULL;
}

/* Remember a good read; the table stays at most half full, grows up to
 * PCP_INTERP_READS_MAX entries, then starts again empty (a scan of a larger archive
 * checks some records twice). Out of memory it forgets, which only costs time. */
static void reads_add(pcp_interp_reads *r, int32_t vol, uint64_t pos, int backward,
                      uint64_t newpos, const pcp_log_record *rec)
{
    if (reads_find(r, vol, pos, backward) != NULL)
        return;
    if ((r->used + 1) * 2 > r->mask + 1) {
        uint32_t size = (r->mask + 1) * 2;
        read_t *grown = size <= 2u * PCP_INTERP_READS_MAX ? malloc(size * sizeof *grown) : NULL;
        if (grown == NULL) {
            reads_clear(r->slots, r->mask + 1);
            r->used = 0;
        } else {
            reads_clear(grown, size);
            read_t *old = r->slots;
            uint32_t old_n = r->mask + 1;
            r->slots = grown;
            r->mask = size - 1;
            r->used = 0;
            for (uint32_t i = 0; i < old_n; i++) {
                if (old[i].vol < 0)
                    continue;
                uint32_t h = read_hash(old[i].vol, old[i].pos, old[i].backward) & r->mask;
                while (r->slots[h].vol >= 0)
                    h = (h + 1) & r->mask;
                r->slots[h] = old[i];
                r->used++;
            }
            free(old);
        }
    }
    uint32_t h = read_hash(vol, pos, backward) & r->mask;
    while (r->slots[h].vol >= 0)
        h = (h + 1) & r->mask;
    read_t *s = &r->slots[h];
    s->vol = vol;
    s->pos = pos;
    s->backward = backward;
    s->newpos = newpos;
    s->rec = *rec;
    r->used++;
}

/* ---- the stream ------------------------------------------------------------------- */

static void release_pages(const pcp_interp_volume *v, uint64_t start, uint64_t stop)
{
    if (!v->mapped)
        return;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    start = (start + page - 1) / page * page;
    stop = stop >= v->size ? v->size : stop / page * page;
    if (stop > start)
        madvise((void *)(uintptr_t)(v->buf + start), (size_t)(stop - start), MADV_DONTNEED);
}

/* MappedFile.release_behind: what a reader at pos left behind it. */
static void release_behind(pcp_interp_walk *w, pcp_interp_volume *v, uint64_t pos, int backward)
{
    uint64_t slack = w->release_slack;
    if (!backward && pos < v->kept_lo)
        v->kept_lo = pos > slack ? pos - slack : 0;
    else if (backward && pos > v->kept_hi)
        v->kept_hi = pos + slack < v->size ? pos + slack : v->size;
    if (!backward) {
        if (pos > v->kept_lo && pos - v->kept_lo > 2 * slack) {
            release_pages(v, v->kept_lo, pos - slack);
            v->kept_lo = pos - slack;
        }
    } else if (v->kept_hi > pos && v->kept_hi - pos > 2 * slack) {
        release_pages(v, pos + slack, v->kept_hi);
        v->kept_hi = pos + slack;
    }
}

/* __pmLogChangeVol to a volume that opens (every one does here); the one left behind
 * keeps no pages resident. */
static void change_vol(pcp_interp_walk *w, int32_t vol)
{
    if (vol == w->vol)
        return;
    pcp_interp_volume *old = &w->vols[w->vol];
    release_pages(old, 0, old->size);
    old->kept_lo = 0;
    old->kept_hi = old->size;
    w->vol = vol;
    w->pos = w->vols[vol].data_start;
}

/* __pmLogRead_ctx in one archive: the next record in a direction, or PM_ERR_EOL at
 * either end, or PM_ERR_LOGREC (the stream where libpcp leaves it). */
static int walk_read(pcp_interp_walk *w, int backward, pcp_log_record *rec)
{
    for (;;) {
        if (backward && w->pos <= w->label_len) {
            if (w->vol == 0)
                return PM_ERR_EOL;
            change_vol(w, w->vol - 1);
            w->pos = w->vols[w->vol].size;
            continue;
        }
        pcp_interp_volume *v = &w->vols[w->vol];
        const read_t *known = reads_find(w->reads, w->vol, w->pos, backward);
        if (known != NULL) {
            *rec = known->rec;
            w->pos = known->newpos;
            w->records_read++;
            release_behind(w, v, w->pos, backward);
            return 0;
        }
        uint64_t newpos = w->pos;
        int sts = pcp_archive_record_read(v->buf, v->size, w->label_len, w->version, backward,
                                          0, w->pos, &newpos, rec);
        if (sts == PCP_LOG_END) {
            if (backward || w->vol + 1 >= w->nvols)
                return PM_ERR_EOL;
            change_vol(w, w->vol + 1);
            continue;
        }
        if (sts < 0) {
            w->pos = newpos;
            return sts;
        }
        /* the same record read the other way gives the same answer: the same bytes,
         * the same checks */
        reads_add(w->reads, w->vol, w->pos, backward, newpos, rec);
        reads_add(w->reads, w->vol, newpos, !backward, w->pos, rec);
        w->pos = newpos;
        w->records_read++;
        w->records_checked++;
        release_behind(w, v, newpos, backward);
        return 0;
    }
}

static void remember_position(pcp_interp_walk *w)
{
    w->saved_vol = w->vol;
    w->saved_pos = w->pos;
}

static void restore_position(pcp_interp_walk *w)
{
    change_vol(w, w->saved_vol);
    w->pos = w->saved_pos;
}

/* libpcp's __pmTimestampSub from the label time: the nanoseconds in long double. */
static double seconds_since_label(const pcp_interp_walk *w, int64_t sec, int64_t nsec)
{
    int64_t ds = sec - w->label_sec, dn = nsec - w->label_nsec;
    if (dn == 0)
        return (double)ds;
    return (double)((long double)ds + (long double)dn / 1000000000.0L);
}

static int fold(pcp_interp *ip, pcp_interp_walk *w, double t_req, double t_this,
                const pcp_log_record *rec, int do_mark, int counting, int walk)
{
    if (rec->numpmid == 0)
        return pcp_interp_fold(ip, t_req, t_this, NULL, NULL, 0, do_mark, counting, walk);
    const pcp_interp_volume *v = &w->vols[w->vol];
    /* the record lies in the stream's volume: it was just read there */
    return pcp_interp_fold_record(ip, t_req, t_this, v->serial << 44 | rec->off,
                                  v->buf + rec->off, rec->len, w->version, do_mark,
                                  counting, walk);
}

/* ---- the moves of a fetch ----------------------------------------------------------- */

/* A forward roll's records so far, folded at once (pcp_interp_fold_run); on a failure
 * the stream is put where folding them one by one would have stopped: just after the
 * record that failed, remembered. */
#define RUN_MAX 64
typedef struct {
    pcp_interp_run_record recs[RUN_MAX];
    int32_t vol[RUN_MAX];
    uint64_t pos[RUN_MAX];
    int32_t n;
} run_t;

static int run_flush(pcp_interp *ip, pcp_interp_walk *w, double t_req, run_t *run)
{
    int32_t failed = -1;
    int sts = run->n ? pcp_interp_fold_run(ip, t_req, run->recs, run->n, w->version, &failed)
                     : 0;
    if (sts < 0 && failed >= 0) {
        change_vol(w, run->vol[failed]);
        w->pos = run->pos[failed];
        remember_position(w);
    }
    run->n = 0;
    return sts;
}

/* do_roll forwards, the records read folded a run at a time. */
static int roll_forward(pcp_interp *ip, pcp_interp_walk *w, double t_req)
{
    run_t run;
    run.n = 0;
    for (;;) {
        pcp_log_record rec;
        int sts = walk_read(w, 0, &rec);
        if (sts < 0) {
            int folded = run_flush(ip, w, t_req, &run);
            if (folded < 0)
                return folded;
            return sts == PM_ERR_LOGREC ? sts : 0;
        }
        double t_this = seconds_since_label(w, rec.sec, rec.nsec);
        if (t_this > t_req)
            return run_flush(ip, w, t_req, &run);
        remember_position(w);
        const pcp_interp_volume *v = &w->vols[w->vol];
        pcp_interp_run_record *r = &run.recs[run.n];
        r->key = v->serial << 44 | rec.off;
        r->rec = v->buf + rec.off;
        r->len = rec.len;
        r->numpmid = rec.numpmid;
        r->t_this = t_this;
        run.vol[run.n] = w->vol;
        run.pos[run.n] = w->pos;
        if (++run.n == RUN_MAX && (sts = run_flush(ip, w, t_req, &run)) < 0)
            return sts;
    }
}

/* do_roll: read on in the direction of travel up to the request time. */
static int roll(pcp_interp *ip, pcp_interp_walk *w, double t_req)
{
    int forward = w->direction > 0;
    if (forward)
        return roll_forward(ip, w, t_req);
    for (;;) {
        pcp_log_record rec;
        int sts = walk_read(w, !forward, &rec);
        if (sts < 0)
            return sts == PM_ERR_LOGREC ? sts : 0;
        double t_this = seconds_since_label(w, rec.sec, rec.nsec);
        if (forward ? t_this > t_req : t_this < t_req)
            return 0;
        remember_position(w);
        sts = fold(ip, w, t_req, t_this, &rec, forward ? PCP_INTERP_MARK_FORW
                                                       : PCP_INTERP_MARK_BACK, 0,
                   PCP_INTERP_WALK_NONE);
        if (sts < 0)
            return sts;
    }
}

/* One search pass (interp.py's _search). */
static int search(pcp_interp *ip, pcp_interp_walk *w, double t_req, int backward)
{
    int32_t wanted = 0;
    int resume = 0;
    int sts;
    for (;;) {
        sts = backward ? pcp_interp_prior_pass(ip, t_req, w->direction, resume, &wanted)
                       : pcp_interp_next_pass(ip, t_req, w->direction, resume, &wanted);
        if (sts != 1)
            break;
        if ((sts = roll(ip, w, t_req)) < 0)
            return sts;
        resume = 1;
    }
    if (wanted == 0)
        return 0;
    restore_position(w);
    int32_t found = 0;
    while (found < wanted) {
        pcp_log_record rec;
        sts = walk_read(w, backward, &rec);
        if (sts < 0) {
            if (sts == PM_ERR_LOGREC)
                return sts;
            break;
        }
        double t_this = seconds_since_label(w, rec.sec, rec.nsec);
        if (backward) {
            if (w->direction < 0 && t_this >= t_req)
                remember_position(w);
            found = fold(ip, w, t_req, t_this, &rec, PCP_INTERP_MARK_BACK, 1,
                         PCP_INTERP_WALK_BACK);
        } else {
            if (w->direction > 0 && t_this <= t_req)
                remember_position(w);
            found = fold(ip, w, t_req, t_this, &rec, PCP_INTERP_MARK_FORW, 1,
                         PCP_INTERP_WALK_FORW);
        }
        if (found < 0)
            return found;
    }
    if (backward)
        pcp_interp_prior_finish(ip, t_req);
    else
        pcp_interp_next_finish(ip, t_req);
    return 0;
}

int pcp_interp_walk_bound(pcp_interp *ip, pcp_interp_walk *w, double t_req)
{
    if (w->nvols <= 0 || w->vol < 0 || w->vol >= w->nvols || w->saved_vol < 0 ||
        w->saved_vol >= w->nvols || w->reads == NULL)
        return PM_ERR_TOOBIG;
    restore_position(w);
    int sts = search(ip, w, t_req, 1);
    if (sts < 0)
        return sts;
    return search(ip, w, t_req, 0);
}

/* pmFetch's advance of the request time by the delta (libpcp normalises with > 1e9).
 * The nanoseconds add as libpcp's 32-bit ints do (wrapping, computed unsigned here):
 * an unnormalised XTB delta of up to 2^31-1 ns can take the sum negative. */
static void advance(pcp_interp_walk *w)
{
    int64_t sec = w->origin_sec + w->delta_sec;
    int64_t nsec = (int32_t)((uint32_t)w->origin_nsec + (uint32_t)w->delta_nsec);
    while (nsec > 1000000000) {
        sec++;
        nsec -= 1000000000;
    }
    while (nsec < 0) {
        sec--;
        nsec += 1000000000;
    }
    w->origin_sec = sec;
    w->origin_nsec = nsec;
}

int pcp_interp_grid_steps(pcp_interp *ip, pcp_interp_walk *w, pcp_interp_grid *grid,
                          int32_t row, int32_t nrows, int32_t *done)
{
    *done = 0;
    for (int32_t k = 0; k < nrows; k++) {
        double t_req = seconds_since_label(w, w->origin_sec, w->origin_nsec);
        if (t_req < -0.001 || t_req > w->t_end + 0.001)
            return PCP_INTERP_STEP_ASIDE;
        int sts = pcp_interp_begin(ip, w->pmids, w->npmids, w->profile);
        if (sts < 0)
            return sts;
        if ((sts = pcp_interp_walk_bound(ip, w, t_req)) < 0)
            return sts;
        sts = pcp_interp_grid_row(ip, t_req, grid, row + k, 0);
        if (sts != 0)
            return sts;
        advance(w);
        (*done)++;
    }
    return 0;
}

/* ---- forward grids in one pass ------------------------------------------------------ */

/* The grid rows of a pre-check, met in time order. */
typedef struct {
    pcp_interp_walk at;         /* a copy whose origin advances along the rows */
    int64_t k, nrows;
    double t;
    double last;                /* the time of what came before */
} fits_rows;

/* One more time met in the stream: 1 while the sweep may go on. */
static int fits_next(fits_rows *r, double t_this, int is_mark)
{
    if (!(t_this > r->last))
        return 0;
    while (r->k < r->nrows && r->t < t_this) {
        advance(&r->at);
        r->k++;
        r->t = seconds_since_label(&r->at, r->at.origin_sec, r->at.origin_nsec);
    }
    r->last = t_this;
    /* a <mark> at a row's time: read or not, as it happens */
    return !(is_mark && r->k < r->nrows && r->t == t_this);
}

int pcp_interp_sweep_fits(const pcp_interp_walk *w, int64_t nrows)
{
    fits_rows rows;
    rows.at = *w;
    rows.k = 0;
    rows.nrows = nrows;
    rows.t = seconds_since_label(w, w->origin_sec, w->origin_nsec);
    rows.last = -INFINITY;
    for (int32_t vol = 0; vol < w->nvols; vol++) {
        const pcp_interp_volume *v = &w->vols[vol];
        if (v->mark_before &&
            !fits_next(&rows, seconds_since_label(w, v->mark_sec, v->mark_nsec), 1))
            return 0;
        uint64_t pos = v->data_start, newpos;
        for (;;) {
            int64_t sec, nsec;
            int32_t numpmid;
            int sts = pcp_archive_record_time(v->buf, v->size, w->version, pos, &newpos,
                                              &sec, &nsec, &numpmid);
            if (sts == PCP_LOG_END)
                break;
            if (sts < 0 || !fits_next(&rows, seconds_since_label(w, sec, nsec), numpmid == 0))
                return 0;
            /* the pages read (and those mapped around them) handed back at once */
            release_pages(v, pos, newpos);
            pos = newpos;
        }
    }
    return 1;
}

void pcp_interp_sweep_start(pcp_interp_walk *w)
{
    change_vol(w, 0);
    w->pos = w->vols[0].data_start;
    remember_position(w);
    w->sweep_last_t = -INFINITY;
}

/* The first of the chunk's rows (times t[0..n), ascending) at or after x. */
static int32_t first_row_from(const double *t, int32_t n, double x)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (t[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* What a forward sweep meets next: a record, or the <mark> libpcp makes up before an
 * archive's records when the stream crosses into the archive's first volume. */
typedef struct {
    pcp_log_record rec;         /* numpmid 0: a <mark> */
    int32_t vol;                /* the volume the record lies in */
    double t;
    int32_t after_vol;          /* the stream position just after it */
    uint64_t after_pos;
} sweep_event;

typedef struct {
    int held;                   /* a read made, waiting behind the <mark>s it crossed */
    int held_sts;
    pcp_log_record held_rec;
    int32_t held_vol;
    uint64_t held_pos;
    int32_t crossed;            /* the volumes up to this one have given their <mark> */
} sweep_reader;

static void sweep_reader_init(sweep_reader *r, const pcp_interp_walk *w)
{
    r->held = 0;
    r->crossed = w->vol;
}

/* The next event, or PM_ERR_EOL / PM_ERR_LOGREC. */
static int sweep_read(pcp_interp_walk *w, sweep_reader *r, sweep_event *ev)
{
    if (!r->held) {
        r->crossed = w->vol;
        r->held_sts = walk_read(w, 0, &r->held_rec);
        r->held_vol = w->vol;
        r->held_pos = w->pos;
        r->held = 1;
    }
    while (r->crossed < r->held_vol) {
        const pcp_interp_volume *v = &w->vols[++r->crossed];
        if (!v->mark_before)
            continue;
        memset(&ev->rec, 0, sizeof ev->rec);
        ev->rec.sec = v->mark_sec;
        ev->rec.nsec = v->mark_nsec;
        ev->vol = ev->after_vol = r->crossed;
        ev->after_pos = v->data_start;
        ev->t = seconds_since_label(w, v->mark_sec, v->mark_nsec);
        return 0;
    }
    r->held = 0;
    if (r->held_sts < 0)
        return r->held_sts;
    ev->rec = r->held_rec;
    ev->vol = ev->after_vol = r->held_vol;
    ev->after_pos = r->held_pos;
    ev->t = seconds_since_label(w, ev->rec.sec, ev->rec.nsec);
    return 0;
}

/* An event folded into the sweep. */
static int sweep_fold(pcp_interp *ip, const pcp_interp_walk *w, const sweep_event *ev,
                      int ahead)
{
    if (ev->rec.numpmid == 0)
        return pcp_interp_sweep_fold(ip, ev->t, 0, NULL, 0, w->version, ahead);
    const pcp_interp_volume *v = &w->vols[ev->vol];
    return pcp_interp_sweep_fold(ip, ev->t, v->serial << 44 | ev->rec.off,
                                 v->buf + ev->rec.off, ev->rec.len, w->version, ahead);
}

/* Ahead of the chunk (the event in hand first) until no row waits: 1 at the end of the
 * archives, 0 when every row is settled, or an error. */
static int sweep_ahead(pcp_interp *ip, pcp_interp_walk *w, sweep_reader *r,
                       const sweep_event *first)
{
    if (pcp_interp_sweep_waiting(ip) == 0)
        return 0;
    sweep_event ev = *first;
    double last = ev.t;
    for (;;) {
        int sts = sweep_fold(ip, w, &ev, 1);
        if (sts <= 0)
            return sts;                 /* none waits any more, or an error */
        sts = sweep_read(w, r, &ev);
        if (sts == PM_ERR_EOL)
            return 1;
        if (sts < 0)
            return sts;
        if (!(ev.t > last))
            return PCP_INTERP_SWEEP_ASIDE;
        last = ev.t;
    }
}

int pcp_interp_sweep_rows(pcp_interp *ip, pcp_interp_walk *w, pcp_interp_grid *grid,
                          int32_t row, int32_t nrows, int32_t *done)
{
    *done = 0;
    if (w->nvols <= 0 || w->vol < 0 || w->vol >= w->nvols || w->saved_vol < 0 ||
        w->saved_vol >= w->nvols || w->reads == NULL || nrows < 0)
        return PM_ERR_TOOBIG;
    /* the rows' times, up to the first outside the archive */
    double *t = nrows ? malloc((size_t)nrows * sizeof *t) : NULL;
    if (nrows && t == NULL)
        return -ENOMEM;
    int64_t origin_sec = w->origin_sec, origin_nsec = w->origin_nsec;
    int32_t n = 0;
    for (; n < nrows; n++) {
        double t_req = seconds_since_label(w, w->origin_sec, w->origin_nsec);
        if (t_req < -0.001 || t_req > w->t_end + 0.001 || (n > 0 && !(t_req > t[n - 1])))
            break;
        t[n] = t_req;
        advance(w);
    }
    w->origin_sec = origin_sec;
    w->origin_nsec = origin_nsec;
    if (n == 0) {
        free(t);
        return nrows ? PCP_INTERP_STEP_ASIDE : 0;
    }
    int sts = pcp_interp_sweep_chunk(ip, grid, row, n, t);
    restore_position(w);
    sweep_reader reader;
    sweep_reader_init(&reader, w);
    double last = w->sweep_last_t;
    int eof = 0;
    while (sts >= 0) {
        sweep_event ev;
        sts = sweep_read(w, &reader, &ev);
        if (sts == PM_ERR_EOL) {
            sts = 0;
            eof = 1;
            break;
        }
        if (sts < 0)
            break;
        if (!(ev.t > last)) {
            sts = PCP_INTERP_SWEEP_ASIDE;
            break;
        }
        if (ev.t > t[n - 1]) {
            sts = sweep_ahead(ip, w, &reader, &ev);
            eof = sts == 1;
            break;
        }
        int32_t k = first_row_from(t, n, ev.t);
        if (t[k] == ev.t && ev.rec.numpmid == 0) {
            sts = PCP_INTERP_SWEEP_ASIDE;
            break;
        }
        sts = sweep_fold(ip, w, &ev, 0);
        /* the position to read on from in the next chunk: just after this */
        w->saved_vol = ev.after_vol;
        w->saved_pos = ev.after_pos;
        w->sweep_last_t = last = ev.t;
    }
    free(t);
    if (sts < 0 || sts == PCP_INTERP_SWEEP_ASIDE)
        return sts;
    if ((sts = pcp_interp_sweep_chunk_done(ip, eof)) < 0)
        return sts;
    for (int32_t k = 0; k < n; k++)
        advance(w);
    *done = n;
    return n < nrows ? PCP_INTERP_STEP_ASIDE : 0;
}
