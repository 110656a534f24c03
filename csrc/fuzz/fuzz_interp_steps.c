/* libFuzzer harness for the record reading of PM_MODE_INTERP in C (interp_steps.c):
 * the stream of a fetch over volumes made from the input, rolled, searched both ways and
 * stepped along a grid, the records read and checked by the archive reader and folded
 * into the interpolation state as they come.
 *
 * Input: a 16-byte control block, then the volume bytes (split into up to 3 volumes at
 * offsets from the control block; each starts with a label area of the control block's
 * length, unread). Byte 0: bit 0 the version (3 if set), bits 1-2 the volume count - 1,
 * bit 3 the direction (backwards if set). Bytes 1-2: the label length. Byte 3: metric
 * count - 1 (up to 4); their pmids are those of the first record the reader accepts
 * (or made up), each with the instances of that record's set, types and semantics from
 * bytes 4-11. Bytes 12-15: the grid (start, delta, rows, end). The same grid is also
 * swept in one pass (pcp_interp_sweep_rows, 1-4 rows per call); with bit 5 of byte 0 the
 * volumes after the first start archives of their own (a made-up <mark> before each). Every position the walk
 * leaves must lie in its volume, every step counted at most once, every matrix write in
 * bounds (exact-size allocations: ASan). */
#include <errno.h>

#include "fuzz_common.h"
#include "archive.h"
#include "interp_steps.h"

#define MAX_VOLS 3
#define MAX_METRICS 4
#define MAX_INSTS 8
#define MAX_ROWS 6

typedef struct {
    uint32_t pmid;
    int32_t ninst;
    int32_t insts[MAX_INSTS];
    int32_t type;
} fz_metric;

/* The pmids and instances of the first record the reader accepts. */
static int first_record_sets(const uint8_t *buf, size_t size, size_t label_len, int version,
                             fz_metric *metrics, int want)
{
    uint64_t pos = label_len, newpos;
    pcp_log_record rec;
    for (int tries = 0; tries < 8; tries++) {
        int sts = pcp_archive_record_read(buf, size, label_len, version, 0, 0, pos, &newpos,
                                          &rec);
        if (sts == PCP_LOG_END)
            return 0;
        if (sts < 0 || rec.numpmid == 0) {
            if (newpos == pos)
                return 0;
            pos = newpos;
            continue;
        }
        int32_t numpmid, nvalues;
        CHECK(pcp_archive_record_scan(buf + rec.off, rec.len, version, &numpmid, &nvalues) == 0);
        pcp_result res;
        fz_result_alloc(&res, numpmid, nvalues);
        CHECK(pcp_archive_record_decode(buf + rec.off, rec.len, version, &res) == 0);
        int n = 0;
        for (int32_t s = 0; s < res.numpmid && n < want; s++) {
            fz_metric *m = &metrics[n++];
            m->pmid = res.pmid[s];
            m->ninst = 0;
            for (int32_t j = res.first[s]; res.numval[s] > 0 && j < res.first[s] + res.numval[s] &&
                 m->ninst < MAX_INSTS; j++)
                m->insts[m->ninst++] = res.inst[j];
        }
        fz_result_free(&res);
        return n;
    }
    return 0;
}

/* The stream is in one of the volumes, at most at its end (or where it was put: at the
 * label length of a volume shorter than its label). */
static int in_volume(const pcp_interp_walk *w)
{
    if (w->vol < 0 || w->vol >= w->nvols)
        return 0;
    uint64_t size = w->vols[w->vol].size;
    return w->pos <= (size > w->label_len ? size : w->label_len);
}

/* Each metric's values and present matrices of nrows rows (exact-size allocations),
 * one column per instance. */
static void matrices_alloc(const fz_metric *metrics, int nmetrics, int32_t nrows,
                           pcp_interp_grid_metric *gms, int32_t (*columns)[MAX_INSTS + 1])
{
    for (int k = 0; k < nmetrics; k++) {
        int32_t ncol = metrics[k].ninst > 0 ? metrics[k].ninst : 1;
        memset(&gms[k], 0, sizeof gms[k]);
        gms[k].values = fz_alloc((size_t)nrows * (size_t)ncol, 8);
        gms[k].present = fz_alloc((size_t)nrows * (size_t)ncol, 1);
        memset(gms[k].values, 0, (size_t)nrows * (size_t)ncol * 8);
        memset(gms[k].present, 0, (size_t)nrows * (size_t)ncol);
        for (int32_t i = 0; i < ncol; i++)
            columns[k][i] = i;
        gms[k].values_stride = (int64_t)ncol * 8;
        gms[k].present_stride = ncol;
        gms[k].column = columns[k];
    }
}

static void matrices_free(pcp_interp_grid_metric *gms, int nmetrics)
{
    for (int k = 0; k < nmetrics; k++) {
        free(gms[k].values);
        free(gms[k].present);
    }
}

static void run_grid(pcp_interp *ip, pcp_interp_walk *w, const fz_metric *metrics,
                     int nmetrics, int32_t nrows)
{
    pcp_interp_grid_metric gms[MAX_METRICS];
    int32_t columns[MAX_METRICS][MAX_INSTS + 1];
    matrices_alloc(metrics, nmetrics, nrows, gms, columns);
    uint64_t cap = 4;
    uint8_t *staged = fz_alloc(cap, 1);
    pcp_interp_grid grid = {gms, nmetrics, staged, cap, 0, 0};
    int32_t row = 0;
    while (row < nrows) {
        int32_t done = -1;
        int sts = pcp_interp_grid_steps(ip, w, &grid, row, nrows - row, &done);
        CHECK(done >= 0 && done <= nrows - row);
        CHECK(in_volume(w));
        row += done;
        if (sts == 0)
            break;
        if (sts != PCP_INTERP_NEED_ROOM)
            break;                      /* an error, or a step for the caller */
        CHECK(grid.room_need > grid.staged_used);
        uint8_t *grown = fz_alloc(grid.room_need, 1);
        if (grid.staged_used)
            memcpy(grown, grid.staged, grid.staged_used);
        free(grid.staged);
        grid.staged = grown;
        grid.staged_cap = grid.room_need;
        break;                          /* the caller would store the row, then go on */
    }
    CHECK(grid.staged_used <= grid.staged_cap);
    free(grid.staged);
    matrices_free(gms, nmetrics);
}

/* The same grid swept in one pass, on a fresh state, `chunk` rows per call (the reading
 * ahead at each chunk's end, the resume after it). */
static void run_sweep(const fz_metric *metrics, int nmetrics, const uint32_t *pmids,
                      pcp_interp_walk w, int32_t nrows, int32_t chunk, int wrap)
{
    pcp_interp *ip = pcp_interp_new(wrap);
    CHECK(ip != NULL);
    for (int k = 0; k < nmetrics; k++) {
        uint32_t indom = metrics[k].ninst == 1 && metrics[k].insts[0] == -1 ? PM_INDOM_NULL : 1u;
        int32_t sem = k % 3 == 0 ? PM_SEM_COUNTER : k % 3 == 1 ? PM_SEM_INSTANT : PM_SEM_DISCRETE;
        CHECK(pcp_interp_add_metric(ip, metrics[k].pmid, metrics[k].type, indom, sem,
                                    metrics[k].ninst, metrics[k].insts, NULL, NULL) == 0);
    }
    pcp_interp_grid_metric gms[MAX_METRICS];
    int32_t columns[MAX_METRICS][MAX_INSTS + 1];
    matrices_alloc(metrics, nmetrics, nrows, gms, columns);
    pcp_interp_grid grid = {gms, nmetrics, NULL, 0, 0, 0};
    int repeated = 0;
    for (int a = 0; a < nmetrics; a++)
        for (int b = 0; b < a; b++)
            repeated |= pmids[a] == pmids[b];
    int sts = pcp_interp_sweep_begin(ip, pmids, nmetrics);
    CHECK(sts == 0 || (repeated && sts == PM_ERR_TOOBIG));
    if (sts == 0 && w.direction > 0 && pcp_interp_sweep_fits(&w, nrows)) {
        pcp_interp_sweep_start(&w);
        int32_t row = 0;
        while (row < nrows) {
            int32_t done = -1;
            int32_t n = chunk < nrows - row ? chunk : nrows - row;
            sts = pcp_interp_sweep_rows(ip, &w, &grid, row, n, &done);
            CHECK(done >= 0 && done <= n);
            CHECK(in_volume(&w));
            CHECK(grid.staged_used <= grid.staged_cap);
            row += done;
            if (sts != 0) {
                CHECK(sts == PCP_INTERP_STEP_ASIDE || sts == PM_ERR_LOGREC || sts == -ENOMEM);
                break;
            }
        }
    }
    for (int k = 0; k < nmetrics; k++)
        CHECK(gms[k].nvalues >= 0 && gms[k].nvalues <= (int64_t)nrows * MAX_INSTS);
    matrices_free(gms, nmetrics);
    pcp_interp_free(ip);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader ctl = {data, size < 16 ? size : 16};
    uint8_t flags = fz_u8(&ctl);
    int version = flags & 1 ? 3 : 2;
    int nvols = 1 + (flags >> 1 & 3) % MAX_VOLS;
    size_t label_len = ((size_t)fz_u8(&ctl) << 8 | fz_u8(&ctl)) % 512;
    int nmetrics = 1 + fz_u8(&ctl) % MAX_METRICS;
    const uint8_t *body = data + (size < 16 ? size : 16);
    size_t body_len = size < 16 ? 0 : size - 16;

    /* the volumes: the body split into nvols pieces, each an exact-size copy */
    pcp_interp_volume vols[MAX_VOLS];
    uint8_t *bufs[MAX_VOLS];
    size_t at = 0;
    for (int v = 0; v < nvols; v++) {
        size_t len = v == nvols - 1 ? body_len - at : (body_len - at) / (size_t)(nvols - v);
        bufs[v] = fz_dup(body + at, len);
        at += len;
        memset(&vols[v], 0, sizeof vols[v]);
        vols[v].buf = bufs[v];
        vols[v].size = len;
        vols[v].data_start = label_len;
        vols[v].serial = (uint64_t)v + 1;
        vols[v].mapped = 0;
        vols[v].kept_lo = 0;
        vols[v].kept_hi = len;
    }

    fz_metric metrics[MAX_METRICS];
    memset(metrics, 0, sizeof metrics);
    int found = first_record_sets(bufs[0], vols[0].size, label_len, version, metrics, nmetrics);
    for (int k = found; k < nmetrics; k++) {
        metrics[k].pmid = 0x100u + (uint32_t)k;
        metrics[k].ninst = 1;
        metrics[k].insts[0] = -1;
    }
    pcp_interp *ip = pcp_interp_new(flags >> 4 & 1);
    CHECK(ip != NULL);
    uint32_t pmids[MAX_METRICS];
    for (int k = 0; k < nmetrics; k++) {
        uint8_t b = fz_u8(&ctl);
        static const int32_t types[] = {PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64,
                                        PM_TYPE_FLOAT, PM_TYPE_DOUBLE, PM_TYPE_STRING,
                                        PM_TYPE_AGGREGATE};
        int32_t type = types[b & 7];
        int32_t sem = (b >> 3) % 3 == 0 ? PM_SEM_COUNTER
                      : (b >> 3) % 3 == 1 ? PM_SEM_INSTANT : PM_SEM_DISCRETE;
        uint32_t indom = metrics[k].ninst == 1 && metrics[k].insts[0] == -1 ? PM_INDOM_NULL : 1u;
        double births[MAX_INSTS], deaths[MAX_INSTS];
        for (int32_t i = 0; i < MAX_INSTS; i++)
            births[i] = deaths[i] = b & 0x80 ? (double)i : -1.0;
        metrics[k].type = type;
        pmids[k] = metrics[k].pmid;
        CHECK(pcp_interp_add_metric(ip, metrics[k].pmid, type, indom, sem, metrics[k].ninst,
                                    metrics[k].insts, births, deaths) == 0);
        (void)fz_u8(&ctl);
    }
    pcp_interp_reads *reads = pcp_interp_reads_new();
    CHECK(reads != NULL);
    uint8_t g0 = fz_u8(&ctl), g1 = fz_u8(&ctl), g2 = fz_u8(&ctl), g3 = fz_u8(&ctl);
    pcp_interp_walk w;
    memset(&w, 0, sizeof w);
    w.vols = vols;
    w.nvols = nvols;
    w.version = version;
    w.label_len = label_len;
    w.vol = 0;
    w.pos = label_len;
    w.saved_vol = 0;
    w.saved_pos = label_len;
    w.direction = flags & 8 ? -1 : 1;
    w.release_slack = 64;
    w.reads = reads;
    /* record times of the seeds are in the 2000s; the grid starts near the first record */
    pcp_log_record first;
    uint64_t np;
    if (pcp_archive_record_read(bufs[0], vols[0].size, label_len, version, 0, 0, label_len, &np,
                                &first) == 0) {
        w.label_sec = first.sec;
        w.label_nsec = first.nsec;
    }
    /* bit 5: the volumes after the first start archives of their own (the sweep's made-up
     * <mark>s between archives), at times from the grid bytes */
    for (int v = 1; v < nvols && (flags & 0x20); v++) {
        vols[v].mark_before = 1;
        vols[v].mark_sec = w.label_sec + (g2 >> (2 * v)) % 8;
        vols[v].mark_nsec = (int64_t)(g3 % 4) * 250000000;
    }
    w.origin_sec = w.label_sec + (g0 % 8) - 1;
    w.origin_nsec = (int64_t)(g1 % 4) * 250000000;
    w.delta_sec = (g1 >> 2) % 4;
    w.delta_nsec = (g1 >> 4) % 2 ? 500000000 : 0;
    if (w.delta_sec == 0 && w.delta_nsec == 0)
        w.delta_nsec = 100000000;
    w.t_end = (double)(g3 % 40);
    w.pmids = pmids;
    w.npmids = nmetrics;
    w.profile = NULL;

    run_sweep(metrics, nmetrics, pmids, w, 1 + g2 % MAX_ROWS, 1 + (g3 >> 6), flags >> 4 & 1);

    /* a fetch bounded by the walk alone, then grid steps from where it left the stream */
    if (pcp_interp_begin(ip, pmids, nmetrics, NULL) == 0) {
        int sts = pcp_interp_walk_bound(ip, &w, (double)(g0 % 16) / 2.0);
        CHECK(sts == 0 || sts == PM_ERR_LOGREC || sts == -ENOMEM);
        CHECK(in_volume(&w));
        CHECK(w.saved_vol >= 0 && w.saved_vol < w.nvols);
    }
    run_grid(ip, &w, metrics, nmetrics, 1 + g2 % MAX_ROWS);
    CHECK(w.records_checked <= w.records_read);

    pcp_interp_reads_free(reads);
    pcp_interp_free(ip);
    for (int v = 0; v < nvols; v++)
        free(bufs[v]);
    return 0;
}
