/* libFuzzer harness for PM_MODE_INTERP's C state (interp.c) and pmFetch's selection of
 * value sets (result_select.c), both fed archive records decoded from the input.
 *
 * Input: a 64-byte control block, then records, each as a 4-byte big-endian length
 * and that many bytes (a v2 or v3 data record, length words included; bit 0 of control
 * byte 0 picks the version). A record the archive decoder refuses stands for a <mark>.
 * The control block declares up to 6 metrics (pmids taken from the first record's sets
 * when it has any, types, semantics, instance lists with lifetimes), then the rest of
 * the input after the records drives fetches: request lists (with PM_ID_NULL and
 * repeats), times, directions, how each record is folded (decoded here, or as bytes
 * through pcp_interp_fold_record and its cache of decoded records), resets. Each fetch runs the
 * passes as the Python driver does (rolling when a pass asks), then sizes and fills a
 * result into exact-size arrays: the fill must succeed with the sizes reported, and
 * every block must lie in the data buffer (or, now and then, stores the values into
 * matrices as a bulk grid read does: check_grid). Each record also goes through
 * pcp_result_select with a request and a profile from the control bytes: the count
 * pass and the fill must agree, and every value selected must be a value of the record
 * under a requested pmid. */
#include <math.h>

#include "fuzz_common.h"
#include "archive.h"
#include "interp.h"

#define MAX_RECORDS 12
#define MAX_METRICS 6

typedef struct {
    uint8_t *bytes;
    size_t len;
    pcp_result res;
    int ok;                 /* decoded; else a <mark> */
} fz_record;

static double fz_time(fz_reader *r)
{
    /* whole and half seconds, -1 .. 30, and now and then a garbage double */
    uint8_t b = fz_u8(r);
    if (b == 0xff) {
        uint64_t bits = ((uint64_t)fz_u32(r) << 32) | fz_u32(r);
        double d;
        memcpy(&d, &bits, sizeof d);
        return isnan(d) ? 0.0 : d;
    }
    return (double)(b % 64) / 2.0 - 1.0;
}

static void check_select(const fz_record *rec, fz_reader *ctl, const uint32_t *pmids,
                         int nmetrics)
{
    uint32_t req_pmid[8], req_indom[8];
    uint8_t known[8];
    int32_t n = fz_u8(ctl) % 9;
    for (int32_t i = 0; i < n; i++) {
        uint8_t b = fz_u8(ctl);
        req_pmid[i] = (b & 7) < nmetrics ? pmids[b & 7] : (b == 0xfe ? 0xffffffffu : b);
        req_indom[i] = (b & 0x40) ? 1u : PM_INDOM_NULL;
        known[i] = (b & 0x80) == 0;
    }
    uint32_t pindom[2] = {1u, 2u};
    int32_t pass[2] = {fz_u8(ctl) & 1, fz_u8(ctl) & 1};
    int32_t first[2] = {0, 2};
    int32_t count[2] = {2, 1};
    int32_t insts[3] = {(int8_t)fz_u8(ctl), 0, 0};
    insts[1] = insts[0] + (fz_u8(ctl) & 3);
    insts[2] = (int8_t)fz_u8(ctl);
    pcp_profile profile = {fz_u8(ctl) & 1, fz_u8(ctl) % 3, pindom, pass, first, count, insts, 3};
    pcp_select_request request = {n, req_pmid, req_indom, known};
    int need = pcp_result_select(&rec->res, &request, &profile, NULL);
    if (need < 0) {
        CHECK(need == PM_ERR_PMID_LOG);
        return;
    }
    pcp_result out;
    fz_result_alloc(&out, n, need);
    int found = pcp_result_select(&rec->res, &request, &profile, &out);
    CHECK(found == 0 || found == 1);
    CHECK(out.numpmid == n && out.nvalues == need);
    for (int32_t i = 0; i < n; i++) {
        CHECK(out.pmid[i] == req_pmid[i]);
        if (out.numval[i] <= 0)
            continue;
        CHECK(out.first[i] >= 0 && out.first[i] + out.numval[i] <= need);
        for (int32_t k = out.first[i]; k < out.first[i] + out.numval[i]; k++) {
            /* a value of the record's set of this pmid */
            int match = 0;
            for (int32_t s = 0; s < rec->res.numpmid && !match; s++) {
                if (rec->res.pmid[s] != req_pmid[i] || rec->res.numval[s] <= 0)
                    continue;
                for (int32_t j = rec->res.first[s]; j < rec->res.first[s] + rec->res.numval[s];
                     j++)
                    if (rec->res.inst[j] == out.inst[k] && rec->res.boff[j] == out.boff[k] &&
                        rec->res.blen[j] == out.blen[k] && rec->res.vtype[j] == out.vtype[k])
                        match = 1;
            }
            CHECK(match);
            CHECK((size_t)out.boff[k] + out.blen[k] <= rec->len);
        }
    }
    fz_result_free(&out);
}

static void check_result(pcp_interp *ip, double t_req, int32_t nrequest)
{
    int32_t nvalues;
    int64_t nbytes;
    if (pcp_interp_result(ip, t_req, 0, NULL, NULL, 0, &nvalues, &nbytes) !=
        PCP_INTERP_NEED_ROOM)
        return;
    CHECK(nvalues >= 0 && nbytes >= 0);
    pcp_result out;
    fz_result_alloc(&out, nrequest, nvalues);
    uint8_t *data = fz_alloc((size_t)nbytes, 1);
    CHECK(pcp_interp_result(ip, t_req, 1, &out, data, nbytes, &nvalues, &nbytes) == 0);
    CHECK(out.numpmid == nrequest && out.nvalues == nvalues);
    int64_t total = 0;
    for (int32_t i = 0; i < nrequest; i++) {
        if (out.numval[i] <= 0)
            continue;
        CHECK(out.first[i] >= 0 && out.first[i] + out.numval[i] <= nvalues);
        total += out.numval[i];
    }
    CHECK(total == nvalues);
    for (int32_t k = 0; k < nvalues; k++)
        CHECK((int64_t)out.boff[k] + out.blen[k] <= nbytes);
    free(data);
    fz_result_free(&out);
}

/* The grid form of a fetch's values (pcp_interp_grid_row) instead of a result: every
 * requested pmid gets a one-row matrix of its declared instances (some without a
 * column), the strings a staging area too small at first; every reference must lie in
 * what was staged, and only mapped columns may be present. */
static void check_grid(pcp_interp *ip, double t_req, const uint32_t *request, int32_t nrequest,
                       const uint32_t *pmids, const int32_t *ninsts, int nmetrics,
                       fz_reader *ctl)
{
    pcp_interp_grid_metric gms[8];
    int32_t columns[8][6];
    uint8_t values[8][6 * 8];
    uint8_t present[8][6];
    memset(gms, 0, sizeof gms);
    memset(present, 0, sizeof present);
    for (int32_t r = 0; r < nrequest; r++) {
        int32_t ninst = 0;
        for (int m = 0; m < nmetrics; m++)
            if (pmids[m] == request[r]) {
                ninst = ninsts[m];      /* the first declaration is the one kept */
                break;
            }
        for (int32_t i = 0; i < 6; i++) {
            uint8_t b = fz_u8(ctl);
            columns[r][i] = i < ninst && (b & 7) < 6 ? (b & 7) : -1;
        }
        gms[r].values = values[r];
        gms[r].values_stride = sizeof values[r];
        gms[r].present = present[r];
        gms[r].present_stride = sizeof present[r];
        gms[r].column = columns[r];
    }
    uint8_t *staged = fz_alloc(4, 1);
    pcp_interp_grid grid = {gms, nrequest, staged, 4, 0, 0};
    int sts = pcp_interp_grid_row(ip, t_req, &grid, 0, 0);
    if (sts == PCP_INTERP_NEED_ROOM) {
        CHECK(grid.room_need > 4);
        free(staged);
        staged = fz_alloc((size_t)grid.room_need, 1);
        grid.staged = staged;
        grid.staged_cap = grid.room_need;
        sts = pcp_interp_grid_row(ip, t_req, &grid, 0, 1);
    }
    CHECK(sts == 0);
    CHECK(grid.staged_used <= grid.staged_cap);
    for (int32_t r = 0; r < nrequest; r++)
        for (int32_t c = 0; c < 6; c++) {
            if (!present[r][c])
                continue;
            int mapped = 0;
            for (int32_t i = 0; i < 6; i++)
                mapped |= columns[r][i] == c;
            CHECK(mapped);
        }
    free(staged);
}

static int fold_version;

/* Fold the next record: its decoded form, or (the time byte's top bit) its bytes
 * through pcp_interp_fold_record, which decodes them itself and keeps them under the
 * record's index. */
static int fold_next(pcp_interp *ip, fz_record *recs, int nrec, int *at, fz_reader *ctl,
                     double t_req, int do_mark, int counting, int walk)
{
    if (nrec == 0)
        return -1;
    int index = *at % nrec;
    fz_record *rec = &recs[index];
    (*at)++;
    int raw = ctl->left > 0 && (*ctl->p & 0x80);
    double t_this = fz_time(ctl);
    int sts;
    if (raw)
        sts = pcp_interp_fold_record(ip, t_req, t_this, (uint64_t)index, rec->bytes, rec->len,
                                     fold_version, do_mark, counting, walk);
    else
        sts = pcp_interp_fold(ip, t_req, t_this, rec->ok ? &rec->res : NULL,
                              rec->ok ? rec->bytes : NULL, rec->ok ? rec->len : 0, do_mark,
                              counting, walk);
    CHECK(sts >= 0 || sts == PM_ERR_LOGREC);
    return sts;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 64)
        return 0;
    fz_reader ctl = {data, 64};
    int version = (data[0] & 1) ? 3 : 2;
    fold_version = version;
    fz_reader rest = {data + 64, size - 64};

    fz_record recs[MAX_RECORDS];
    int nrec = 0;
    while (nrec < MAX_RECORDS && rest.left >= 4) {
        size_t len = fz_u32(&rest) % 65536;
        if (len > rest.left)
            len = rest.left;
        fz_record *rec = &recs[nrec++];
        rec->bytes = fz_bytes(&rest, len);
        rec->len = len;
        rec->ok = 0;
        int32_t numpmid, nvalues;
        if (pcp_archive_record_scan(rec->bytes, len, version, &numpmid, &nvalues) == 0) {
            fz_result_alloc(&rec->res, numpmid, nvalues);
            CHECK(pcp_archive_record_decode(rec->bytes, len, version, &rec->res) == 0);
            rec->ok = 1;
        }
        if ((fz_u8(&rest) & 3) == 0)   /* a separator byte: end of records now and then */
            break;
    }

    uint32_t pmids[MAX_METRICS];
    int32_t ninsts[MAX_METRICS];
    int nmetrics = 1 + fz_u8(&ctl) % MAX_METRICS;
    uint8_t modes = fz_u8(&ctl);      /* $PCP_COUNTER_WRAP; 6.3's nearer DISCRETE/INSTANT */
    pcp_interp *ip = pcp_interp_new(modes & 1);
    CHECK(ip != NULL);
    pcp_interp_set_nearest(ip, modes >> 1 & 1);
    for (int m = 0; m < nmetrics; m++) {
        uint8_t b = fz_u8(&ctl);
        const pcp_result *first = (nrec && recs[0].ok) ? &recs[0].res : NULL;
        pmids[m] = (first && first->numpmid > 0) ? first->pmid[b % first->numpmid] : b;
        int32_t type = (int32_t)(fz_u8(&ctl) % 13) - 1;   /* -1 (no descriptor) .. 11 */
        static const int32_t sems[4] = {PM_SEM_COUNTER, PM_SEM_INSTANT, PM_SEM_DISCRETE, 0};
        int32_t sem = sems[fz_u8(&ctl) & 3];
        uint8_t shape = fz_u8(&ctl);
        uint32_t indom = (shape & 0x80) ? 1u : PM_INDOM_NULL;
        int32_t ninst = indom == PM_INDOM_NULL ? 1 : shape % 6;
        int32_t insts[6];
        double births[6], deaths[6];
        for (int32_t i = 0; i < ninst; i++) {
            insts[i] = indom == PM_INDOM_NULL ? PM_IN_NULL : (int32_t)(int8_t)fz_u8(&ctl) % 8;
            births[i] = (shape & 0x40) ? fz_time(&ctl) : -1.0;
            deaths[i] = (shape & 0x20) ? fz_time(&ctl) : -1.0;
        }
        if (type == -1)
            ninst = 0;
        ninsts[m] = ninst;
        CHECK(pcp_interp_add_metric(ip, pmids[m], type, indom, sem, ninst, insts, births,
                                    deaths) == 0);
    }

    for (int r = 0; r < nrec; r++)
        if (recs[r].ok)
            check_select(&recs[r], &ctl, pmids, nmetrics);

    /* fetches, driven by what is left after the records */
    int at = 0;
    for (int fetch = 0; fetch < 6 && rest.left > 0; fetch++) {
        uint32_t request[8];
        int32_t nrequest = 1 + fz_u8(&rest) % 8;
        for (int32_t i = 0; i < nrequest; i++) {
            uint8_t b = fz_u8(&rest);
            request[i] = b == 0xff ? 0xffffffffu : pmids[b % nmetrics];
        }
        double t_req = fz_time(&rest);
        int direction = (fz_u8(&rest) & 1) ? 1 : -1;
        uint8_t how = fz_u8(&rest);
        if (how & 1)
            pcp_interp_reset(ip, t_req);
        uint32_t pindom = 1u;
        int32_t pass = how & 2 ? 1 : 0, first = 0, count = 1;
        int32_t pinst = (int32_t)(fz_u8(&rest) % 8);
        pcp_profile profile = {(how & 4) ? 1 : 0, (how & 8) ? 1 : 0, &pindom, &pass, &first,
                               &count, &pinst, 1};
        CHECK(pcp_interp_begin(ip, request, nrequest, &profile) == 0);
        if (how & 16) {
            for (int k = fz_u8(&rest) % 4; k > 0; k--)
                fold_next(ip, recs, nrec, &at, &rest, t_req, PCP_INTERP_MARK_NONE, 0,
                          PCP_INTERP_WALK_NONE);
            pcp_interp_forget_last_numval(ip);
        }
        int failed = 0;
        for (int side = 0; side < 2 && !failed; side++) {
            int32_t wanted = 0;
            int resume = 0;
            int rolls = 0;
            while ((side == 0 ? pcp_interp_prior_pass : pcp_interp_next_pass)(
                       ip, t_req, direction, resume, &wanted) == 1) {
                CHECK(++rolls == 1);        /* a pass asks to roll at most once */
                for (int k = fz_u8(&rest) % 3; k > 0; k--)
                    if (fold_next(ip, recs, nrec, &at, &rest, t_req,
                                  direction > 0 ? PCP_INTERP_MARK_FORW : PCP_INTERP_MARK_BACK,
                                  0, PCP_INTERP_WALK_NONE) == PM_ERR_LOGREC)
                        failed = 1;
                resume = 1;
            }
            CHECK(wanted >= 0);
            int found = 0;
            for (int k = 0; k < 2 * MAX_RECORDS && found < wanted && !failed; k++) {
                int sts = fold_next(ip, recs, nrec, &at, &rest, t_req,
                                    side == 0 ? PCP_INTERP_MARK_BACK : PCP_INTERP_MARK_FORW, 1,
                                    side == 0 ? PCP_INTERP_WALK_BACK : PCP_INTERP_WALK_FORW);
                if (sts == PM_ERR_LOGREC || sts == -1)
                    failed = sts == PM_ERR_LOGREC;
                if (sts == -1)
                    break;
                if (sts >= 0) {
                    CHECK(sts >= found && sts <= wanted);
                    found = sts;
                }
            }
            if (side == 0)
                pcp_interp_prior_finish(ip, t_req);
            else
                pcp_interp_next_finish(ip, t_req);
        }
        if (!failed && (how & 32))
            check_grid(ip, t_req, request, nrequest, pmids, ninsts, nmetrics, &rest);
        else if (!failed)
            check_result(ip, t_req, nrequest);
    }

    pcp_interp_free(ip);
    for (int r = 0; r < nrec; r++) {
        free(recs[r].bytes);
        if (recs[r].ok)
            fz_result_free(&recs[r].res);
    }
    return 0;
}
