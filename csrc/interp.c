/* PM_MODE_INTERP's bounds and values in flat arrays: the per-instance half of libpcp
 * 6.0.3's __pmLogFetchInterp (interp.c there), driven record by record from
 * pcp/_archive/interp.py, which reads the archive as libpcp reads it. The rules are
 * libpcp's, quirks included (see the Python driver's docstring and
 * archive-format.md §13); the arithmetic is its double arithmetic, with its double to
 * integer conversions as gcc compiles them for x86-64. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "convert.h"
#include "cursor.h"
#include "interp.h"

/* the state of a bound (libpcp's S_* bits) */
#define S_UNDEFINED 1
#define S_MARK 2
#define S_VALUE 4
#define S_SCANNED 16

/* One observation bracketing the requested time: its time (-1 none), state, and the
 * value when it is one: an INSITU word (vtype -1) or a block's type, number and
 * payload bytes (inline up to 8 bytes, else on the heap). */
typedef struct {
    double t;
    int32_t s;
    int32_t has;            /* holds a value (libpcp's non-NULL v_prior / v_next) */
    int32_t vtype;
    uint32_t len;
    int64_t ival;
    double dval;
    uint8_t small[8];
    uint8_t *heap;
    uint32_t cap;
} bound;

/* One (metric, instance): libpcp's instcntl_t. */
typedef struct {
    int32_t metric;
    int32_t inst;
    uint8_t search;
    uint8_t inresult;
    uint32_t listed;        /* the fetch that last put it on the want list */
    uint32_t touched;       /* the run (pcp_interp_fold_run) that last gave it a value */
    bound prior, next;
    double t_first, t_last, t_birth, t_death;
    int64_t pend;           /* a sweep: the first grid row still waiting for its next
                               observation (rows from it on lie after the prior one) */
    uint8_t gone;           /* a sweep: nothing comes for it from the resume point on */
} icp_t;

/* One requested metric: libpcp's pmidcntl_t. Its instances are icps
 * [first_icp, first_icp + ninst), in hash-table order; `table` (at table_off in the
 * shared pool, table_mask + 1 slots) maps an instance id to its icp. */
typedef struct {
    uint32_t pmid;
    int32_t type;
    uint32_t indom;
    int32_t sem;
    int32_t valfmt;
    int32_t numval;
    int32_t last_numval;
    int32_t first_icp;
    int32_t ninst;
    int64_t table_off;
    uint32_t table_mask;
    int64_t seen_off;       /* icp_of_value's memo: ninst slots in seen_pool */
    int32_t req;            /* a sweep: its index in the request (-1: not requested) */
    int32_t sweep_last;     /* a sweep: its numval at the row before the chunk */
} metric_t;

/* A record decoded for folding, kept for the next fold of the same record (a scan
 * reads the records around the requested time again at every fetch). `key` is the
 * caller's name for the record (file and offset), `used` when it was last folded. */
#define DECODED_SLOTS 16
typedef struct {
    uint64_t key;
    uint64_t used;          /* 0: the slot is empty */
    size_t len;
    int32_t nmetrics;       /* the metrics declared when it was decoded: only their sets
                               are kept, so a later declaration makes it stale */
    pcp_result res;
    void *mem;
    size_t cap;
} decoded_t;

/* metric_of_set's answers by set position (see there). */
#define SET_MEMO_MAX (1 << 20)
typedef struct {
    uint32_t *pmid;
    int32_t *metric;
    int32_t len, cap;
    int32_t at;                     /* is_declared: the set being asked about */
    int32_t nmetrics;               /* the declared metrics the answers are for */
} set_memo;

struct pcp_interp {
    int counter_wrap;
    int nearest;                    /* pcp_interp_set_nearest: 6.3's DISCRETE / INSTANT rule */
    metric_t *metrics;
    int32_t nmetrics, metrics_cap;
    int32_t *pmid_slots;            /* pmid -> metric, open addressing; -1 empty */
    uint32_t pmid_mask;
    icp_t *icps;
    int32_t nicps, icps_cap;
    int32_t *inst_pool;             /* every metric's instance table; -1 empty */
    int64_t pool_len, pool_cap;
    int32_t *seen_pool;             /* per metric, the icp of the value at each position
                                       of its last set (icp_of_value); -1 none */
    int32_t seen_len, seen_cap;
    /* the fetch under way */
    int32_t *request;               /* metric of each requested pmid, -1 for PM_ID_NULL */
    uint32_t *request_pmid;
    int32_t nrequest, request_cap;
    int32_t *want;                  /* icps, in libpcp's want-list order */
    int32_t nwant, want_cap;
    int32_t *unbound;               /* the search pass's list */
    int32_t nunbound, unbound_cap;
    int32_t *scratch;               /* room for sorting the unbound list */
    int32_t scratch_cap;
    uint32_t fetch_serial;
    int32_t pass_pos;
    int32_t pass_count;
    int32_t found;                  /* instances a search pass has found */
    int done_roll;
    int seen_mark;                  /* libpcp's seen_mark */
    /* recently folded records, decoded, in memory reused from record to record */
    decoded_t decoded[DECODED_SLOTS];
    uint64_t decode_clock;
    set_memo sets;
    uint32_t run_serial;            /* pcp_interp_fold_run's runs, for icp->touched */
    double probe_t_req, probe_t_this;   /* set_moves_bounds's times */
    /* a forward grid swept in one pass (pcp_interp_sweep_*): the chunk being filled */
    struct {
        pcp_interp_grid *grid;
        int64_t row0;               /* the chunk's first row, counted from the sweep's */
        int32_t base;               /* the grid matrices' row of row0 */
        int32_t nrows;
        int32_t rows_cap;
        double *t;                  /* [nrows] the rows' times */
        uint8_t *mark;              /* [nrows] a <mark> lies between a row and the one before */
        int32_t *numval;            /* [nrows * nrequest] libpcp's numval of each counter */
        int64_t numval_cap;
        int32_t npending;           /* icps still waiting in a lookahead */
        uint8_t *staged;            /* strings and aggregates of the chunk (grid->staged) */
        uint64_t staged_cap;
    } sw;
};

static uint32_t hash32(uint32_t x)
{
    return x * 2654435761u;
}

static int grow(void **arr, int32_t *cap, int32_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    int64_t n = *cap > 0 ? *cap : 16;
    while (n < need)
        n *= 2;
    if (n > INT32_MAX / 2 || (size_t)n > SIZE_MAX / size)
        return PM_ERR_TOOBIG;
    void *p = realloc(*arr, (size_t)n * size);
    if (p == NULL)
        return -ENOMEM;
    *arr = p;
    *cap = (int32_t)n;
    return 0;
}

pcp_interp *pcp_interp_new(int counter_wrap)
{
    pcp_interp *ip = calloc(1, sizeof *ip);
    if (ip == NULL)
        return NULL;
    ip->counter_wrap = counter_wrap != 0;
    ip->pmid_mask = 63;
    ip->pmid_slots = malloc(64 * sizeof *ip->pmid_slots);
    if (ip->pmid_slots == NULL) {
        free(ip);
        return NULL;
    }
    memset(ip->pmid_slots, 0xff, 64 * sizeof *ip->pmid_slots);
    return ip;
}

void pcp_interp_free(pcp_interp *ip)
{
    if (ip == NULL)
        return;
    for (int32_t i = 0; i < ip->nicps; i++) {
        free(ip->icps[i].prior.heap);
        free(ip->icps[i].next.heap);
    }
    free(ip->metrics);
    free(ip->pmid_slots);
    free(ip->icps);
    free(ip->inst_pool);
    free(ip->seen_pool);
    free(ip->request);
    free(ip->request_pmid);
    free(ip->want);
    free(ip->unbound);
    free(ip->scratch);
    for (int i = 0; i < DECODED_SLOTS; i++)
        free(ip->decoded[i].mem);
    free(ip->sets.pmid);
    free(ip->sets.metric);
    free(ip->sw.t);
    free(ip->sw.mark);
    free(ip->sw.numval);
    free(ip->sw.staged);
    free(ip);
}

static int32_t find_metric(const pcp_interp *ip, uint32_t pmid)
{
    uint32_t h = hash32(pmid) & ip->pmid_mask;
    while (ip->pmid_slots[h] >= 0) {
        if (ip->metrics[ip->pmid_slots[h]].pmid == pmid)
            return ip->pmid_slots[h];
        h = (h + 1) & ip->pmid_mask;
    }
    return -1;
}

/* Keep the pmid table at most half full. */
static int pmid_table_room(pcp_interp *ip)
{
    if ((uint32_t)(ip->nmetrics + 1) * 2 <= ip->pmid_mask + 1)
        return 0;
    uint32_t size = (ip->pmid_mask + 1) * 2;
    int32_t *slots = malloc(size * sizeof *slots);
    if (slots == NULL)
        return -ENOMEM;
    memset(slots, 0xff, size * sizeof *slots);
    for (int32_t m = 0; m < ip->nmetrics; m++) {
        uint32_t h = hash32(ip->metrics[m].pmid) & (size - 1);
        while (slots[h] >= 0)
            h = (h + 1) & (size - 1);
        slots[h] = m;
    }
    free(ip->pmid_slots);
    ip->pmid_slots = slots;
    ip->pmid_mask = size - 1;
    return 0;
}

static int32_t find_icp(const pcp_interp *ip, const metric_t *m, int32_t inst)
{
    if (m->ninst == 0)
        return -1;
    const int32_t *table = ip->inst_pool + m->table_off;
    uint32_t h = hash32((uint32_t)inst) & m->table_mask;
    while (table[h] >= 0) {
        if (ip->icps[table[h]].inst == inst)
            return table[h];
        h = (h + 1) & m->table_mask;
    }
    return -1;
}

/* The icp a value of instance `inst` at position j of a set of metric m folds into: the
 * instance's, else the metric's PM_IN_NULL one (-1: none). A logger writes a metric's
 * instances in the same order record after record, so each position remembers its last
 * answer, taken when it is for the same instance. */
static int32_t icp_of_value(pcp_interp *ip, const metric_t *m, int32_t j, int32_t inst)
{
    int32_t *seen = j >= 0 && j < m->ninst ? &ip->seen_pool[m->seen_off + j] : NULL;
    if (seen != NULL && *seen >= 0 && ip->icps[*seen].inst == inst)
        return *seen;
    int32_t ci = find_icp(ip, m, inst);
    if (ci >= 0) {
        if (seen != NULL)
            *seen = ci;
        return ci;
    }
    return find_icp(ip, m, PM_IN_NULL);
}

static void bound_forget(bound *b)
{
    b->t = -1.0;
    b->s = S_UNDEFINED;
    b->has = 0;
}

int pcp_interp_add_metric(pcp_interp *ip, uint32_t pmid, int32_t type, uint32_t indom,
                          int32_t sem, int32_t ninst, const int32_t *insts,
                          const double *births, const double *deaths)
{
    if (find_metric(ip, pmid) >= 0)
        return 0;
    if (ninst < 0 || ninst > INT32_MAX / 4 || ip->nicps > INT32_MAX - ninst)
        return PM_ERR_TOOBIG;
    int sts;
    if ((sts = pmid_table_room(ip)) < 0 ||
        (sts = grow((void **)&ip->metrics, &ip->metrics_cap, ip->nmetrics + 1,
                    sizeof *ip->metrics)) < 0 ||
        (sts = grow((void **)&ip->icps, &ip->icps_cap, ip->nicps + ninst, sizeof *ip->icps)) < 0 ||
        (sts = grow((void **)&ip->seen_pool, &ip->seen_cap, ip->seen_len + ninst + 1,
                    sizeof *ip->seen_pool)) < 0)
        return sts;
    uint32_t size = 0;
    if (ninst > 0) {
        size = 4;
        while (size < 2u * (uint32_t)ninst)
            size <<= 1;
        if (ip->pool_len + size > ip->pool_cap) {
            int64_t cap = ip->pool_cap > 0 ? ip->pool_cap : 256;
            while (cap < ip->pool_len + size)
                cap *= 2;
            if ((uint64_t)cap > SIZE_MAX / sizeof *ip->inst_pool)
                return PM_ERR_TOOBIG;
            int32_t *pool = realloc(ip->inst_pool, (size_t)cap * sizeof *pool);
            if (pool == NULL)
                return -ENOMEM;
            ip->inst_pool = pool;
            ip->pool_cap = cap;
        }
    }
    metric_t *m = &ip->metrics[ip->nmetrics];
    m->pmid = pmid;
    m->type = type;
    m->indom = indom;
    m->sem = sem;
    m->valfmt = -1;
    m->numval = 0;
    m->last_numval = -1;
    m->first_icp = ip->nicps;
    m->ninst = ninst;
    m->table_off = ip->pool_len;
    m->seen_off = ip->seen_len;
    for (int32_t i = 0; i < ninst; i++)
        ip->seen_pool[ip->seen_len + i] = -1;
    ip->seen_len += ninst;
    m->table_mask = size ? size - 1 : 0;
    int32_t *table = ip->inst_pool ? ip->inst_pool + ip->pool_len : NULL;
    if (size)
        memset(table, 0xff, size * sizeof *table);
    for (int32_t i = 0; i < ninst; i++) {
        icp_t *icp = &ip->icps[ip->nicps + i];
        memset(icp, 0, sizeof *icp);
        icp->metric = ip->nmetrics;
        icp->inst = insts[i];
        bound_forget(&icp->prior);
        bound_forget(&icp->next);
        icp->t_first = icp->t_last = -1.0;
        icp->t_birth = births ? births[i] : -1.0;
        icp->t_death = deaths ? deaths[i] : -1.0;
        uint32_t h = hash32((uint32_t)insts[i]) & m->table_mask;
        while (table[h] >= 0 && ip->icps[table[h]].inst != insts[i])
            h = (h + 1) & m->table_mask;
        if (table[h] < 0)
            table[h] = ip->nicps + i;   /* a repeated id: the first one is found */
    }
    ip->pool_len += size;
    ip->nicps += ninst;
    uint32_t h = hash32(pmid) & ip->pmid_mask;
    while (ip->pmid_slots[h] >= 0)
        h = (h + 1) & ip->pmid_mask;
    ip->pmid_slots[h] = ip->nmetrics;
    ip->nmetrics++;
    return 0;
}

void pcp_interp_reset(pcp_interp *ip, double t_req)
{
    for (int32_t i = 0; i < ip->nicps; i++) {
        icp_t *icp = &ip->icps[i];
        if (icp->prior.t > t_req || icp->next.t < t_req) {
            bound_forget(&icp->prior);
            bound_forget(&icp->next);
        }
    }
}

int pcp_interp_begin(pcp_interp *ip, const uint32_t *pmids, int32_t npmids,
                     const pcp_profile *profile)
{
    int sts;
    if (npmids < 0)
        return PM_ERR_TOOBIG;
    if ((sts = grow((void **)&ip->request, &ip->request_cap, npmids + 1,
                    sizeof *ip->request)) < 0)
        return sts;
    uint32_t *names = realloc(ip->request_pmid, ((size_t)npmids + 1) * sizeof *names);
    if (names == NULL)
        return -ENOMEM;
    ip->request_pmid = names;
    /* every icp is wanted at most once, and the unbound lists are parts of the want list */
    if ((sts = grow((void **)&ip->want, &ip->want_cap, ip->nicps + 1, sizeof *ip->want)) < 0 ||
        (sts = grow((void **)&ip->unbound, &ip->unbound_cap, ip->nicps + 1,
                    sizeof *ip->unbound)) < 0 ||
        (sts = grow((void **)&ip->scratch, &ip->scratch_cap, ip->nicps + 1,
                    sizeof *ip->scratch)) < 0)
        return sts;
    ip->fetch_serial++;
    if (ip->fetch_serial == 0) {            /* wrapped: no icp may look listed */
        for (int32_t i = 0; i < ip->nicps; i++)
            ip->icps[i].listed = 0;
        ip->fetch_serial = 1;
    }
    ip->nrequest = npmids;
    ip->nwant = 0;
    ip->nunbound = 0;
    ip->done_roll = 0;
    ip->seen_mark = 0;
    for (int32_t r = 0; r < npmids; r++) {
        ip->request_pmid[r] = pmids[r];
        if (pmids[r] == 0xffffffffu) {      /* PM_ID_NULL */
            ip->request[r] = -1;
            continue;
        }
        int32_t mi = find_metric(ip, pmids[r]);
        if (mi < 0)
            return PM_ERR_PMID_LOG;
        ip->request[r] = mi;
        metric_t *m = &ip->metrics[mi];
        m->numval = 0;
        if (m->type == -1) {
            m->numval = PM_ERR_PMID_LOG;
            continue;
        }
        for (int32_t i = m->first_icp; i < m->first_icp + m->ninst; i++) {
            icp_t *icp = &ip->icps[i];
            icp->search = 0;
            if (m->indom == PM_INDOM_NULL ||
                (profile == NULL || pcp_profile_includes(profile, m->indom, icp->inst))) {
                icp->inresult = 1;
                if (icp->listed != ip->fetch_serial) {   /* once, if a pmid is repeated */
                    icp->listed = ip->fetch_serial;
                    ip->want[ip->nwant++] = i;
                }
                m->numval++;
            } else {
                icp->inresult = 0;
            }
        }
    }
    /* libpcp pushes each onto the front of its list */
    for (int32_t a = 0, b = ip->nwant - 1; a < b; a++, b--) {
        int32_t t = ip->want[a];
        ip->want[a] = ip->want[b];
        ip->want[b] = t;
    }
    return 0;
}

void pcp_interp_forget_last_numval(pcp_interp *ip)
{
    for (int32_t r = 0; r < ip->nrequest; r++)
        if (ip->request[r] >= 0)
            ip->metrics[ip->request[r]].last_numval = -1;
}

/* ---- folding records ------------------------------------------------------------ */

static int is_copied_type(int32_t type)
{
    return type == PM_TYPE_AGGREGATE || type == PM_TYPE_EVENT ||
           type == PM_TYPE_HIGHRES_EVENT || type == PM_TYPE_STRING;
}

static void bound_swap(bound *a, bound *b)
{
    bound t = *a;
    *a = *b;
    *b = t;
}

static const uint8_t *bound_bytes(const bound *b)
{
    return b->len <= sizeof b->small ? b->small : b->heap;
}

/* An untyped block (vtype 0, from archives converted from the v1 format) of a 64-bit,
 * double or float metric, as libpcp holds it: its reader swaps only typed blocks out of
 * network order, so these bytes stay as they lie and its interpolation reads them in
 * host order. The bound then holds that number, as a block of the metric's type in
 * network order (how every other block of a result is held here). */
static void untyped_as_libpcp(bound *b, int32_t mtype)
{
    if ((mtype == PM_TYPE_64 || mtype == PM_TYPE_U64 || mtype == PM_TYPE_DOUBLE) &&
        b->len == 8) {
        uint64_t host;
        memcpy(&host, b->small, sizeof host);
        b->ival = (int64_t)host;
        b->dval = pcp_double_from_bits(host);
        pcp_store_be64(b->small, host);
    } else if (mtype == PM_TYPE_FLOAT && b->len == 4) {
        uint32_t host;
        memcpy(&host, b->small, sizeof host);
        b->ival = 0;
        b->dval = (double)pcp_float_from_bits(host);
        pcp_store_be32(b->small, host);
    } else {
        return;
    }
    if (mtype != PM_TYPE_DOUBLE && mtype != PM_TYPE_FLOAT)
        b->dval = 0.0;
    else
        b->ival = 0;
    b->vtype = mtype;
}

/* Make `b` hold value j of `rec` (an INSITU word or a block, its payload copied). */
static int bound_set_value(bound *b, const pcp_result *rec, const uint8_t *data,
                           size_t data_len, int32_t j, int insitu, int32_t mtype)
{
    b->has = 1;
    if (insitu) {
        b->vtype = -1;
        b->ival = rec->ival[j];
        b->dval = 0.0;
        b->len = 0;
        return 0;
    }
    uint32_t off = rec->boff[j], len = rec->blen[j];
    if ((size_t)off > data_len || (size_t)len > data_len - off)
        return PM_ERR_LOGREC;
    b->vtype = rec->vtype[j];
    b->ival = rec->ival[j];
    b->dval = rec->dval[j];
    if (len > sizeof b->small) {
        if (len > b->cap) {
            uint8_t *p = realloc(b->heap, len);
            if (p == NULL)
                return -ENOMEM;
            b->heap = p;
            b->cap = len;
        }
        memcpy(b->heap, data + off, len);
    } else if (len) {
        memcpy(b->small, data + off, len);
    }
    b->len = len;
    if (b->vtype == 0)
        untyped_as_libpcp(b, mtype);
    return 0;
}

static void fold_mark(pcp_interp *ip, double t_req, double t_this, int do_mark, int counting)
{
    for (int32_t w = 0; w < ip->nwant; w++) {
        icp_t *icp = &ip->icps[ip->want[w]];
        if (t_this <= t_req && (t_this >= icp->prior.t || icp->prior.t > t_req)) {
            icp->prior.t = t_this;
            icp->prior.s = S_MARK;
            if (do_mark == PCP_INTERP_MARK_BACK) {
                if (icp->search && counting) {
                    icp->search = 0;
                    ip->found++;
                    icp->prior.s |= S_SCANNED;
                }
            } else {
                ip->seen_mark = 1;
            }
            icp->prior.has = 0;
        }
        if (t_this >= t_req &&
            (t_this <= icp->next.t || icp->next.t < 0 || icp->next.t < t_req)) {
            icp->next.t = t_this;
            icp->next.s = S_MARK;
            if (do_mark == PCP_INTERP_MARK_FORW) {
                if (icp->search && counting) {
                    icp->search = 0;
                    ip->found++;
                    icp->next.s |= S_SCANNED;
                }
            } else {
                ip->seen_mark = 1;
            }
            icp->next.has = 0;
        }
    }
}

/* A metric's first values fix its value format: 32-bit integers must be INSITU, FLOAT
 * may be either, every other type in a block; later sets must agree. */
static int check_valfmt(metric_t *m, int32_t valfmt)
{
    if (m->valfmt == -1) {
        int ok;
        if (m->type == PM_TYPE_32 || m->type == PM_TYPE_U32)
            ok = valfmt == PM_VAL_INSITU;
        else if (m->type == PM_TYPE_FLOAT)
            ok = valfmt == PM_VAL_INSITU || valfmt == PM_VAL_DPTR || valfmt == PM_VAL_SPTR;
        else
            ok = valfmt == PM_VAL_DPTR || valfmt == PM_VAL_SPTR;
        if (!ok)
            return PM_ERR_LOGREC;
        m->valfmt = valfmt;
        return 0;
    }
    return m->valfmt == valfmt ? 0 : PM_ERR_LOGREC;
}

/* Set k of a decoded record as folding takes it: the declared metric it is of and its
 * values [*base, *base + *numval). Returns 1, 0 when it has nothing to fold, or
 * PM_ERR_LOGREC. */
static int record_set(pcp_interp *ip, const pcp_result *rec, int32_t k, metric_t **m,
                      int32_t *base, int32_t *numval)
{
    int32_t mi = find_metric(ip, rec->pmid[k]);
    if (mi < 0 || rec->numval[k] <= 0)
        return 0;
    *m = &ip->metrics[mi];
    *numval = rec->numval[k];
    *base = rec->first[k];
    if (*base < 0 || *base > rec->nvalues || *numval > rec->nvalues - *base)
        return PM_ERR_LOGREC;
    return 1;
}

static int fold_record(pcp_interp *ip, double t_req, double t_this, const pcp_result *rec,
                       const uint8_t *data, size_t data_len, int do_mark, int counting)
{
    if (rec->numpmid < 0 || rec->nvalues < 0)
        return PM_ERR_LOGREC;
    int back = do_mark == PCP_INTERP_MARK_BACK && counting;
    int forw = do_mark == PCP_INTERP_MARK_FORW && counting;
    for (int32_t k = 0; k < rec->numpmid; k++) {
        metric_t *m;
        int32_t base, numval;
        int sts = record_set(ip, rec, k, &m, &base, &numval);
        if (sts <= 0) {
            if (sts < 0)
                return sts;
            continue;
        }
        if ((sts = check_valfmt(m, rec->valfmt[k])) < 0)
            return sts;
        int insitu = m->valfmt == PM_VAL_INSITU;
        for (int32_t j = base; j < base + numval; j++) {
            int32_t ci = icp_of_value(ip, m, j - base, rec->inst[j]);
            if (ci < 0)
                continue;
            icp_t *icp = &ip->icps[ci];
            double t_prior = icp->prior.t, t_next = icp->next.t;
            if (t_this <= t_req && (t_prior > t_req || t_this >= t_prior)) {
                if (t_prior < t_next && t_prior >= t_req) {
                    /* the prior becomes the next: swap, then overwrite the prior */
                    bound_swap(&icp->prior, &icp->next);
                    icp->next.s &= ~S_SCANNED;
                    t_next = t_prior;
                }
                if ((sts = bound_set_value(&icp->prior, rec, data, data_len, j, insitu, m->type)) < 0)
                    return sts;
                icp->prior.t = t_prior = t_this;
                icp->prior.s = S_VALUE;
                if (back && icp->search) {
                    icp->search = 0;
                    ip->found++;
                    icp->prior.s |= S_SCANNED;
                }
            }
            if (t_this >= t_req && (t_next < t_req || t_this <= t_next)) {
                if (t_prior < t_next && t_next <= t_req) {
                    bound_swap(&icp->prior, &icp->next);
                    icp->prior.s &= ~S_SCANNED;
                }
                if ((sts = bound_set_value(&icp->next, rec, data, data_len, j, insitu, m->type)) < 0)
                    return sts;
                icp->next.t = t_this;
                icp->next.s = S_VALUE;
                if (forw && icp->search) {
                    icp->search = 0;
                    ip->found++;
                    icp->next.s |= S_SCANNED;
                }
            }
        }
    }
    return 0;
}

/* After a record of a search (read at t_this): drop from the unbound list what the
 * record found, and what can no longer be found beyond it. The backward list is in
 * descending t_first: those first seen after this record cannot be behind it. The
 * forward list is in ascending t_last, those with none (-1) first, which this walk
 * leaves alone. */
static void walk_unbound(pcp_interp *ip, double t_this, int backward)
{
    int32_t lo = 0;
    if (!backward) {
        int32_t hi = ip->nunbound;
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (ip->icps[ip->unbound[mid]].t_last < 0.0)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    int32_t kept = lo, n = lo;
    for (; n < ip->nunbound; n++) {
        icp_t *icp = &ip->icps[ip->unbound[n]];
        if (backward ? icp->t_first < t_this : icp->t_last > t_this)
            break;
        if (icp->search) {
            icp->search = 0;
            (backward ? &icp->prior : &icp->next)->s |= S_SCANNED;
            ip->found++;
        } else {
            ip->unbound[kept++] = ip->unbound[n];
        }
    }
    for (; n < ip->nunbound; n++)
        ip->unbound[kept++] = ip->unbound[n];
    ip->nunbound = kept;
}

int pcp_interp_fold(pcp_interp *ip, double t_req, double t_this, const pcp_result *rec,
                    const uint8_t *data, size_t data_len, int do_mark, int counting, int walk)
{
    if (rec == NULL) {
        if (do_mark != PCP_INTERP_MARK_NONE)
            fold_mark(ip, t_req, t_this, do_mark, counting);
    } else {
        int sts = fold_record(ip, t_req, t_this, rec, data, data_len, do_mark, counting);
        if (sts < 0)
            return sts;
    }
    if (walk == PCP_INTERP_WALK_BACK || walk == PCP_INTERP_WALK_FORW)
        walk_unbound(ip, t_this, walk == PCP_INTERP_WALK_BACK);
    return ip->found;
}

/* The metric of set i of a record (-1: not declared). A logger writes its records with
 * the same pmids in the same order, so the answers are remembered by set position and a
 * pmid that matches the one remembered there is answered without a hash lookup. */
static int32_t metric_of_set(pcp_interp *ip, int32_t i, uint32_t pmid)
{
    set_memo *memo = &ip->sets;
    if (memo->nmetrics != ip->nmetrics) {       /* declared since: forget */
        memo->nmetrics = ip->nmetrics;
        memo->len = 0;
    }
    if (i >= 0 && i < memo->len && memo->pmid[i] == pmid)
        return memo->metric[i];
    int32_t mi = find_metric(ip, pmid);
    if (i >= memo->cap && i < SET_MEMO_MAX) {
        int32_t cap = memo->cap ? memo->cap * 2 : 256;
        while (cap <= i)
            cap *= 2;
        uint32_t *pmids = realloc(memo->pmid, (size_t)cap * sizeof *pmids);
        if (pmids != NULL)
            memo->pmid = pmids;
        int32_t *metrics = pmids ? realloc(memo->metric, (size_t)cap * sizeof *metrics) : NULL;
        if (metrics != NULL) {
            memo->metric = metrics;
            memo->cap = cap;
        }
    }
    if (i >= 0 && i < memo->cap && i <= memo->len) {
        memo->pmid[i] = pmid;
        memo->metric[i] = mi;
        if (i == memo->len)
            memo->len = i + 1;
    }
    return mi;
}

/* Whether a record's set of `pmid` is kept: asked for each set in order, twice per
 * record decoded (count, then fill), so the set's position is counted here. */
static int is_declared(const void *ctx, uint32_t pmid)
{
    pcp_interp *ip = (pcp_interp *)(uintptr_t)ctx;   /* the state passed by decoded_record */
    return metric_of_set(ip, ip->sets.at++, pmid) >= 0;
}

/* Before asking is_declared about a record's sets: from the first set. */
static void keep_memo_start(pcp_interp *ip)
{
    ip->sets.at = 0;
}

/* The decoded form of record `key`, only the value sets of declared metrics (the rest is
 * skipped unread: folding ignores it, and the reader checked the whole record): the slot
 * that holds it, or the least recently used slot refilled. NULL with *sts set when the
 * record does not decode. */
static const pcp_result *decoded_record(pcp_interp *ip, uint64_t key, const uint8_t *rec,
                                        size_t len, int version, int *sts)
{
    decoded_t *slot = &ip->decoded[0];
    for (int i = 0; i < DECODED_SLOTS; i++) {
        decoded_t *d = &ip->decoded[i];
        if (d->used && d->key == key && d->len == len && d->nmetrics == ip->nmetrics) {
            d->used = ++ip->decode_clock;
            return &d->res;
        }
        if (d->used < slot->used)
            slot = d;
    }
    slot->used = 0;
    int32_t nsets, nvalues;
    keep_memo_start(ip);
    if ((*sts = pcp_archive_record_keep(rec, len, version, is_declared, ip, &nsets, &nvalues,
                                        NULL)) < 0)
        return NULL;
    size_t need = pcp_result_mem_size(nsets, nvalues);
    if (need > slot->cap) {
        /* malloc's alignment suits the 8-byte columns pcp_result_bind puts first */
        void *mem = malloc(need);
        if (mem == NULL) {
            *sts = -ENOMEM;
            return NULL;
        }
        free(slot->mem);
        slot->mem = mem;
        slot->cap = need;
    }
    pcp_result_bind(&slot->res, slot->mem, nsets, nvalues);
    keep_memo_start(ip);
    if ((*sts = pcp_archive_record_keep(rec, len, version, is_declared, ip, &nsets, &nvalues,
                                        &slot->res)) < 0)
        return NULL;
    slot->key = key;
    slot->len = len;
    slot->nmetrics = ip->nmetrics;
    slot->used = ++ip->decode_clock;
    return &slot->res;
}

typedef int (*set_fn)(pcp_interp *ip, metric_t *m, int32_t valfmt, pcp_cursor *values,
                      int32_t numval);
static int each_declared_set(pcp_interp *ip, const uint8_t *rec, size_t len, int version,
                             set_fn each);

/* 1 when folding one of the set's values at t_this would move a bound (fold_record's
 * tests: at t_this > t_req only the next bound can move, at t_this < t_req only the
 * prior one); also the value format check folding makes (an error ends the walk). */
static int set_moves_bounds(pcp_interp *ip, metric_t *m, int32_t valfmt, pcp_cursor *values,
                            int32_t numval)
{
    int sts = check_valfmt(m, valfmt);
    if (sts < 0)
        return sts;
    double t_req = ip->probe_t_req, t_this = ip->probe_t_this;
    for (int32_t j = 0; j < numval; j++) {
        int32_t inst = pcp_read_i32(values);
        pcp_read_i32(values);
        if (values->bad)
            return PM_ERR_LOGREC;
        int32_t ci = icp_of_value(ip, m, j, inst);
        if (ci < 0)
            continue;
        const icp_t *icp = &ip->icps[ci];
        if (t_this > t_req ? icp->next.t < t_req || t_this <= icp->next.t
                           : icp->prior.t > t_req || t_this >= icp->prior.t)
            return 1;
    }
    return 0;
}

int pcp_interp_fold_record(pcp_interp *ip, double t_req, double t_this, uint64_t key,
                           const uint8_t *rec, size_t len, int version, int do_mark,
                           int counting, int walk)
{
    int sts = 0;
    if (t_this != t_req) {
        /* a search reading on past records that only hold values its bounds already
         * have nearer (a forward search after instances that never come again reads to
         * the end of the archive): nothing to decode, the search's list still walked */
        ip->probe_t_req = t_req;
        ip->probe_t_this = t_this;
        if (each_declared_set(ip, rec, len, version, set_moves_bounds) == 0) {
            pcp_result none;
            memset(&none, 0, sizeof none);
            return pcp_interp_fold(ip, t_req, t_this, &none, rec, len, do_mark, counting, walk);
        }
    }
    const pcp_result *res = decoded_record(ip, key, rec, len, version, &sts);
    if (res == NULL)
        return sts;
    return pcp_interp_fold(ip, t_req, t_this, res, rec, len, do_mark, counting, walk);
}

/* ---- a roll's records at once ------------------------------------------------------- */

/* The value sets of a record (read and checked before) as they lie: calls `each` with
 * every set of a declared metric that has values, in order, until it returns non-zero.
 * Returns that, 0, or PM_ERR_LOGREC when the sets do not fit the record. */
static int each_declared_set(pcp_interp *ip, const uint8_t *rec, size_t len, int version,
                             set_fn each)
{
    size_t fixed = version == 3 ? 20 : 16;
    if (len < fixed + 4)
        return PM_ERR_LOGREC;
    int32_t numpmid = (int32_t)pcp_load_be32(rec + fixed - 4);
    pcp_cursor c = pcp_cursor_at(rec, len - 4, fixed);
    if (numpmid < 0 || (size_t)numpmid > pcp_cursor_left(&c) / 8)
        return PM_ERR_LOGREC;
    for (int32_t i = 0; i < numpmid; i++) {
        uint32_t pmid = pcp_read_u32(&c);
        int32_t numval = pcp_read_i32(&c);
        if (c.bad)
            return PM_ERR_LOGREC;
        if (numval <= 0)
            continue;
        int32_t valfmt = pcp_read_i32(&c);
        if (c.bad || (size_t)numval > pcp_cursor_left(&c) / 8)
            return PM_ERR_LOGREC;
        pcp_cursor values = c;
        pcp_skip(&c, (size_t)numval * 8);
        int32_t mi = metric_of_set(ip, i, pmid);
        if (mi < 0)
            continue;
        int sts = each(ip, &ip->metrics[mi], valfmt, &values, numval);
        if (sts != 0)
            return sts;
    }
    return 0;
}

/* The value format checks folding makes (check_valfmt), in the same order. */
static int run_check_valfmt(pcp_interp *ip, metric_t *m, int32_t valfmt, pcp_cursor *values,
                            int32_t numval)
{
    (void)ip;
    (void)values;
    (void)numval;
    return check_valfmt(m, valfmt);
}

/* 1 when a value of the set is of an instance no later record of the run gave one. */
static int run_has_untouched(pcp_interp *ip, metric_t *m, int32_t valfmt, pcp_cursor *values,
                             int32_t numval)
{
    (void)valfmt;
    for (int32_t j = 0; j < numval; j++) {
        int32_t inst = pcp_read_i32(values);
        pcp_read_i32(values);
        if (values->bad)
            return PM_ERR_LOGREC;
        int32_t ci = icp_of_value(ip, m, j, inst);
        if (ci >= 0 && ip->icps[ci].touched != ip->run_serial)
            return 1;
    }
    return 0;
}

/* A record before t_req folded after the later ones of its run: only the instances no
 * later record gave a value take this record's (the last of a record's values first,
 * as the one that would stay). For such a record every value folds into the prior bound
 * (t_this < t_req), and only the last value of an instance in time order is left there
 * in the end (with a swap of a prior beyond t_req into the next bound, which the first
 * value folded would make and the last makes alike): so folding the last alone is the
 * same. */
static int fold_latest_first(pcp_interp *ip, double t_req, double t_this, const pcp_result *rec,
                             const uint8_t *data, size_t data_len)
{
    for (int32_t k = rec->numpmid - 1; k >= 0; k--) {
        metric_t *m;
        int32_t base, numval;
        int sts = record_set(ip, rec, k, &m, &base, &numval);
        if (sts <= 0) {
            if (sts < 0)
                return sts;
            continue;
        }
        int insitu = m->valfmt == PM_VAL_INSITU;
        for (int32_t j = base + numval - 1; j >= base; j--) {
            int32_t ci = icp_of_value(ip, m, j - base, rec->inst[j]);
            if (ci < 0)
                continue;
            icp_t *icp = &ip->icps[ci];
            if (icp->touched == ip->run_serial)
                continue;
            icp->touched = ip->run_serial;
            double t_prior = icp->prior.t, t_next = icp->next.t;
            if (!(t_prior > t_req || t_this >= t_prior))
                continue;
            if (t_prior < t_next && t_prior >= t_req) {
                bound_swap(&icp->prior, &icp->next);
                icp->next.s &= ~S_SCANNED;
            }
            sts = bound_set_value(&icp->prior, rec, data, data_len, j, insitu, m->type);
            if (sts < 0)
                return sts;
            icp->prior.t = t_this;
            icp->prior.s = S_VALUE;
        }
    }
    return 0;
}

static int fold_one(pcp_interp *ip, double t_req, const pcp_interp_run_record *r, int version)
{
    if (r->numpmid == 0) {
        fold_mark(ip, t_req, r->t_this, PCP_INTERP_MARK_FORW, 0);
        return 0;
    }
    int sts = pcp_interp_fold_record(ip, t_req, r->t_this, r->key, r->rec, r->len, version,
                                     PCP_INTERP_MARK_FORW, 0, PCP_INTERP_WALK_NONE);
    return sts < 0 ? sts : 0;
}

int pcp_interp_fold_run(pcp_interp *ip, double t_req, const pcp_interp_run_record *recs,
                        int32_t n, int version, int32_t *failed)
{
    *failed = -1;
    /* the records before t_req, in time order, with no <mark> among them */
    int32_t early = 0;
    while (early < n && recs[early].numpmid != 0 && recs[early].t_this < t_req &&
           (early == 0 || recs[early].t_this >= recs[early - 1].t_this))
        early++;
    int32_t from = 0;
    if (early >= 2) {
        /* the value format checks first, in folding order: a record that fails them is
         * folded one by one up to it (the checks already made pass again alike) */
        int ok = 1;
        for (int32_t i = 0; i < early && ok; i++)
            ok = each_declared_set(ip, recs[i].rec, recs[i].len, version,
                                   run_check_valfmt) == 0;
        if (ok) {
            if (++ip->run_serial == 0) {        /* wrapped: no icp may look touched */
                for (int32_t i = 0; i < ip->nicps; i++)
                    ip->icps[i].touched = 0;
                ip->run_serial = 1;
            }
            for (int32_t i = early - 1; i >= 0; i--) {
                const pcp_interp_run_record *r = &recs[i];
                int sts = each_declared_set(ip, r->rec, r->len, version, run_has_untouched);
                if (sts == 0)
                    continue;           /* every value is replaced by a later record's */
                const pcp_result *res = sts < 0 ? NULL
                                      : decoded_record(ip, r->key, r->rec, r->len, version, &sts);
                if (res == NULL ||
                    (sts = fold_latest_first(ip, t_req, r->t_this, res, r->rec, r->len)) < 0) {
                    *failed = i;
                    return sts;
                }
            }
            from = early;
        }
    }
    for (int32_t i = from; i < n; i++) {
        int sts = fold_one(ip, t_req, &recs[i], version);
        if (sts < 0) {
            *failed = i;
            return sts;
        }
    }
    return 0;
}

/* ---- the search passes ------------------------------------------------------------ */

/* The unbound list is ordered as libpcp's insertions order it: each new entry goes
 * before the first one it does not sort after, so the list is sorted (t_first
 * descending for the backward search, t_last ascending for the forward one) with
 * equal keys in reverse order of arrival. The passes append in arrival order and this
 * makes that order at the end: reverse, then a stable merge sort (usually a no-op:
 * most keys are equal). */
static double unbound_key(const pcp_interp *ip, int32_t ci, int by_first)
{
    /* negated t_first so that both lists sort ascending */
    return by_first ? -ip->icps[ci].t_first : ip->icps[ci].t_last;
}

static void merge_sort(const pcp_interp *ip, int32_t *a, int32_t *tmp, int32_t n, int by_first)
{
    if (n < 2)
        return;
    int32_t half = n / 2;
    merge_sort(ip, a, tmp, half, by_first);
    merge_sort(ip, a + half, tmp, n - half, by_first);
    if (unbound_key(ip, a[half - 1], by_first) <= unbound_key(ip, a[half], by_first))
        return;                         /* already in order */
    int32_t i = 0, j = half, k = 0;
    while (i < half && j < n) {
        if (unbound_key(ip, a[j], by_first) < unbound_key(ip, a[i], by_first))
            tmp[k++] = a[j++];
        else
            tmp[k++] = a[i++];          /* ties keep their order: stable */
    }
    while (i < half)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

static void order_unbound(pcp_interp *ip, int by_first)
{
    int32_t *u = ip->unbound;
    for (int32_t a = 0, b = ip->nunbound - 1; a < b; a++, b--) {
        int32_t t = u[a];
        u[a] = u[b];
        u[b] = t;
    }
    /* most often already in order (equal keys): one look along the list then */
    int32_t i = 1;
    while (i < ip->nunbound &&
           unbound_key(ip, u[i - 1], by_first) <= unbound_key(ip, u[i], by_first))
        i++;
    if (i < ip->nunbound)
        merge_sort(ip, u, ip->scratch, ip->nunbound, by_first);
}

static int outside_lifetime(const icp_t *icp, double t_req)
{
    return (icp->t_birth >= 0 && t_req < icp->t_birth) ||
           (icp->t_death >= 0 && t_req > icp->t_death);
}

/* One side of the search: the backward pass looks for prior bounds (those first seen
 * after t_req cannot be found behind it: t_first), the forward pass for next bounds
 * (t_last), each the mirror of the other, as in libpcp. */
typedef struct {
    int backward;
} side_t;

static bound *near_bound(icp_t *icp, side_t side)
{
    return side.backward ? &icp->prior : &icp->next;
}

static bound *far_bound(icp_t *icp, side_t side)
{
    return side.backward ? &icp->next : &icp->prior;
}

/* Whether time x lies beyond t_req on this side (later for the prior bound, earlier
 * for the next one): such a bound does not bracket t_req. */
static int beyond(double x, double t_req, side_t side)
{
    return side.backward ? x > t_req : x < t_req;
}

/* t_first / t_last: the instance cannot be found on this side of t_req */
static int out_of_reach(const icp_t *icp, double t_req, side_t side)
{
    return side.backward ? icp->t_first >= 0 && t_req < icp->t_first
                         : icp->t_last >= 0 && t_req > icp->t_last;
}

static int search_pass(pcp_interp *ip, double t_req, int direction, int resume,
                       int32_t *count, side_t side)
{
    if (!resume) {
        ip->pass_pos = 0;
        ip->pass_count = 0;
        ip->nunbound = 0;
        ip->found = 0;
    }
    /* travelling away from this side, libpcp rolls on at the first instance to search
     * for; travelling towards it, a bound beyond t_req is searched for again even when
     * it was scanned */
    int away = side.backward ? direction > 0 : direction < 0;
    int towards = side.backward ? direction < 0 : direction > 0;
    for (; ip->pass_pos < ip->nwant; ip->pass_pos++) {
        int32_t ci = ip->want[ip->pass_pos];
        icp_t *icp = &ip->icps[ci];
        if (out_of_reach(icp, t_req, side) || outside_lifetime(icp, t_req))
            continue;
        bound *near = near_bound(icp, side), *far = far_bound(icp, side);
        if (near->t < 0 || beyond(near->t, t_req, side)) {
            if (ip->pass_count == 0 && !ip->done_roll) {
                ip->done_roll = 1;
                if (away) {
                    *count = ip->pass_count;
                    return 1;       /* roll, then resume at this instance */
                }
            }
        }
        if ((near->s & S_UNDEFINED && !(near->s & S_SCANNED)) ||
            (beyond(near->t, t_req, side) && (towards || !(near->s & S_SCANNED))) ||
            (far->s & S_MARK && near->t == t_req)) {
            ip->pass_count++;
            icp->search = 1;
            ip->unbound[ip->nunbound++] = ci;
        }
    }
    *count = ip->pass_count;
    ip->found = 0;
    order_unbound(ip, side.backward);
    return 0;
}

int pcp_interp_prior_pass(pcp_interp *ip, double t_req, int direction, int resume,
                          int32_t *count)
{
    side_t side = {1};
    return search_pass(ip, t_req, direction, resume, count, side);
}

int pcp_interp_next_pass(pcp_interp *ip, double t_req, int direction, int resume,
                         int32_t *count)
{
    side_t side = {0};
    return search_pass(ip, t_req, direction, resume, count, side);
}

/* After the search: an instance still unbound on this side cannot be found there from
 * t_req on; t_first / t_last say so for later fetches. */
static void search_finish(pcp_interp *ip, double t_req, side_t side)
{
    for (int32_t n = 0; n < ip->nunbound; n++) {
        icp_t *icp = &ip->icps[ip->unbound[n]];
        bound *near = near_bound(icp, side);
        if (side.backward) {
            if ((near->s & S_UNDEFINED || near->t > t_req) && icp->t_first < t_req) {
                icp->t_first = t_req;
                near->s |= S_SCANNED;
            }
        } else if (near->t < t_req && (icp->t_last < 0 || t_req < icp->t_last)) {
            icp->t_last = t_req;
            near->s |= S_SCANNED;
        }
        icp->search = 0;
    }
    ip->nunbound = 0;
}

void pcp_interp_prior_finish(pcp_interp *ip, double t_req)
{
    side_t side = {1};
    search_finish(ip, t_req, side);
}

void pcp_interp_next_finish(pcp_interp *ip, double t_req)
{
    side_t side = {0};
    search_finish(ip, t_req, side);
}

/* ---- values ----------------------------------------------------------------------- */

static int is_numeric_type(int32_t type)
{
    return type >= PM_TYPE_32 && type <= PM_TYPE_DOUBLE;
}

/* Whether libpcp leaves an instance out at t_req whatever its value: DISCRETE needs a
 * prior value within the instance's life, the others a value on both sides. */
static int left_out(const metric_t *m, const icp_t *icp, const bound *prior,
                    const bound *next, double t_req)
{
    if (m->sem == PM_SEM_DISCRETE)
        return prior->s & S_MARK || prior->s & S_UNDEFINED || prior->t > t_req ||
               (icp->t_birth != -1 && icp->t_birth > t_req) ||
               (icp->t_death != -1 && t_req > icp->t_death);
    return prior->s & S_MARK || prior->s & S_UNDEFINED || prior->t > t_req ||
           next->s & S_MARK || next->s & S_UNDEFINED || next->t < t_req;
}

/* Which instances get a value (libpcp decides before it computes any): left_out's
 * rule; a counter is silent for one fetch after a <mark>, and a non-numeric counter is
 * PM_ERR_TYPE. */
static void decide(pcp_interp *ip, double t_req)
{
    for (int32_t w = 0; w < ip->nwant; w++) {
        icp_t *icp = &ip->icps[ip->want[w]];
        metric_t *m = &ip->metrics[icp->metric];
        if (left_out(m, icp, &icp->prior, &icp->next, t_req)) {
            m->numval--;
            icp->inresult = 0;
        } else if (m->sem == PM_SEM_COUNTER) {
            if (!is_numeric_type(m->type))
                m->numval = PM_ERR_TYPE;
            else if (ip->seen_mark && m->last_numval > 0) {
                m->numval--;
                icp->inresult = 0;
            }
        }
    }
}

/* One value of the result: an INSITU word (vtype -1, len 0) or a block's type, number
 * and payload (pointing into a bound, or into `own` for a computed number). */
typedef struct {
    int32_t vtype;
    int64_t ival;
    double dval;
    const uint8_t *bytes;
    uint32_t len;
    uint8_t own[8];
} value_t;

/* C's conversions of a double to an integer as gcc compiles them for x86-64 (toward
 * zero; NaN and out-of-range values give cvttsd2si's "integer indefinite"): written
 * out, since the conversions themselves are undefined out of range. */
static int32_t to_i32(double x)
{
    if (isnan(x) || !(x >= -2147483648.0 && x < 2147483648.0))
        return INT32_MIN;
    return (int32_t)x;
}

static int64_t to_i64(double x)
{
    if (isnan(x) || !(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)x;
}

/* U32 goes through a 64-bit signed conversion, its low 32 bits kept. */
static uint32_t to_u32(double x)
{
    return (uint32_t)(uint64_t)to_i64(x);
}

/* Below 2**63 a signed conversion; from 2**63 one of x - 2**63 with the top bit flipped. */
static uint64_t to_u64(double x)
{
    if (!isnan(x) && x >= 9223372036854775808.0)
        return (uint64_t)to_i64(x - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
    return (uint64_t)to_i64(x);
}

/* A double rounded to a C float; out of range it is an infinity (IEEE), which is
 * written out so no conversion is undefined. */
static float to_float(double x)
{
    const double overflow = 0x1.ffffffp+127;  /* FLT_MAX + half an ulp: rounds to infinity */
    if (x >= overflow)
        return (float)INFINITY;
    if (x <= -overflow)
        return (float)-INFINITY;
    return (float)x;
}

static uint32_t bits_of_float(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* A counter between its prior and next values, in libpcp's arithmetic. */
static int interpolate(const pcp_interp *ip, const metric_t *m, const bound *prior,
                       const bound *next, double t_req, value_t *v)
{
    double dt = t_req - prior->t;
    double span = next->t - prior->t;
    int wrap = ip->counter_wrap;
    v->bytes = v->own;
    v->len = 0;
    v->dval = 0.0;
    if (m->valfmt == PM_VAL_INSITU) {
        int64_t pv = prior->ival, nxt = next->ival;
        v->vtype = -1;
        if (m->type == PM_TYPE_32) {
            int32_t diff = (int32_t)(uint32_t)((uint64_t)nxt - (uint64_t)pv);
            if (nxt >= pv || !wrap) {
                v->ival = to_i32((0.5 + (double)pv) + dt * (double)diff / span);
            } else {
                /* libpcp adds the prior value into the next slot, not this one (a bug of
                 * its signed wrap path): this slot keeps the bare increment */
                v->ival = to_i32(0.5 + dt * (double)diff / span);
            }
            return 1;
        }
        if (m->type == PM_TYPE_U32) {
            uint32_t up = (uint32_t)pv, un = (uint32_t)nxt;
            uint32_t word;
            if (un >= up)
                word = to_u32((0.5 + (double)up) + dt * (double)(uint32_t)(un - up) / span);
            else if (wrap)
                word = to_u32(0.5 + dt * (double)(uint32_t)(un - up) / span) + up;
            else
                word = to_u32((0.5 + (double)up) - dt * (double)(uint32_t)(up - un) / span);
            v->ival = (int32_t)word;
            return 1;
        }
        /* old-style INSITU float: interpolated as a float, stored as its bits */
        double fp = (double)pcp_float_from_bits((uint32_t)pv);
        double fn = (double)pcp_float_from_bits((uint32_t)nxt);
        float f = to_float(fp + dt * (double)to_float(fn - fp) / span);
        v->ival = (int32_t)bits_of_float(f);
        return 1;
    }
    v->vtype = m->type;
    v->ival = 0;
    if (m->type == PM_TYPE_FLOAT) {
        double pd = prior->dval, nd = next->dval;
        float f = to_float(pd + dt * (double)to_float(nd - pd) / span);
        v->dval = (double)f;
        pcp_store_be32(v->own, bits_of_float(f));
        v->len = 4;
        return 1;
    }
    if (m->type == PM_TYPE_DOUBLE) {
        double pd = prior->dval, nd = next->dval;
        double d = pd + dt * (nd - pd) / span;
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        v->dval = d;
        pcp_store_be64(v->own, bits);
        v->len = 8;
        return 1;
    }
    int64_t lp = prior->ival, ln = next->ival;
    uint64_t up = (uint64_t)lp, un = (uint64_t)ln;
    if (m->type == PM_TYPE_64) {
        /* with or without the wrap rule the difference is next - prior modulo 2**64 */
        int64_t diff = (int64_t)(un - up);
        int64_t r = to_i64((0.5 + (double)lp) + dt * (double)diff / span);
        v->ival = r;
        pcp_store_be64(v->own, (uint64_t)r);
        v->len = 8;
        return 1;
    }
    if (m->type == PM_TYPE_U64) {
        /* libpcp holds both in signed 64-bit variables, and its "next >= prior" is
         * compiled as "next - prior >= 0" in wrapping arithmetic: that test, and the
         * prior converted to double as signed */
        uint64_t u;
        if ((int64_t)(un - up) >= 0 || wrap)
            u = to_u64((0.5 + (double)lp) + dt * (double)(un - up) / span);
        else
            u = to_u64((0.5 + (double)lp) - dt * (double)(up - un) / span);
        v->ival = (int64_t)u;
        pcp_store_be64(v->own, u);
        v->len = 8;
        return 1;
    }
    return 0;
}

static void value_of_bound(value_t *v, const bound *b, int32_t vtype)
{
    v->vtype = vtype;
    v->ival = b->ival;
    v->dval = b->dval;
    v->bytes = bound_bytes(b);
    v->len = b->len;
}

void pcp_interp_set_nearest(pcp_interp *ip, int nearest)
{
    ip->nearest = nearest != 0;
}

/* DISCRETE and INSTANT numbers between two observations: libpcp before 6.3 takes the
 * prior one; from 6.3 the nearer one, the prior one on a tie (t_req at or before the
 * midpoint, computed in double as libpcp does) and for a DISCRETE metric whose next
 * bound is no value (a <mark>, the archive's end). */
static const bound *discrete_or_instant(const pcp_interp *ip, const metric_t *m,
                                        const bound *prior, const bound *next, double t_req)
{
    if (!ip->nearest || (m->sem == PM_SEM_DISCRETE && !(next->s & S_VALUE)) ||
        t_req <= (prior->t + next->t) / 2)
        return prior;
    return next;
}

/* The value of one instance at t_req between its prior and next bounds, or 0 when
 * libpcp leaves it out. Numbers: the observation at t_req if there is one, else for
 * DISCRETE (a prior bound) and INSTANT (both bounds) the prior or nearer one
 * (discrete_or_instant), else the interpolated counter. Strings, aggregates and
 * events: always the prior one. */
static int value_between(const pcp_interp *ip, const metric_t *m, const bound *prior,
                         const bound *next, double t_req, value_t *v)
{
    if (is_copied_type(m->type)) {
        if (prior->t < 0 || !prior->has)
            return 0;
        value_of_bound(v, prior, prior->vtype);
        return 1;
    }
    if (!is_numeric_type(m->type))
        return 0;
    int has_both = prior->t >= 0 && next->t >= 0;
    const bound *source;
    if (prior->t == t_req)
        source = prior;
    else if (next->t == t_req)
        source = next;
    else if (m->sem == PM_SEM_DISCRETE)
        source = prior->t >= 0 ? discrete_or_instant(ip, m, prior, next, t_req) : NULL;
    else if (m->sem == PM_SEM_INSTANT)
        source = has_both ? discrete_or_instant(ip, m, prior, next, t_req) : NULL;
    else if (has_both)
        return interpolate(ip, m, prior, next, t_req, v);
    else
        return 0;
    if (source == NULL || !source->has)
        return 0;
    if (m->valfmt == PM_VAL_INSITU) {
        v->vtype = -1;
        v->ival = source->ival;
        v->dval = 0.0;
        v->bytes = v->own;
        v->len = 0;
        return 1;
    }
    value_of_bound(v, source, m->type);
    return 1;
}

static int value_at(const pcp_interp *ip, const metric_t *m, const icp_t *icp, double t_req,
                    value_t *v)
{
    return value_between(ip, m, &icp->prior, &icp->next, t_req, v);
}

/* The size of the result decided: its value count and the bytes its blocks need. */
static int result_size(const pcp_interp *ip, double t_req, int32_t *nvalues, int64_t *nbytes)
{
    int64_t n = 0, bytes = 0;
    for (int32_t r = 0; r < ip->nrequest; r++) {
        if (ip->request[r] < 0)
            continue;
        const metric_t *m = &ip->metrics[ip->request[r]];
        if (m->numval <= 0)
            continue;
        for (int32_t i = m->first_icp; i < m->first_icp + m->ninst; i++) {
            const icp_t *icp = &ip->icps[i];
            value_t v;
            if (!icp->inresult || !value_at(ip, m, icp, t_req, &v))
                continue;
            n++;
            bytes += v.len;
        }
    }
    if (n > INT32_MAX || bytes > UINT32_MAX)
        return PM_ERR_TOOBIG;
    *nvalues = (int32_t)n;
    *nbytes = bytes;
    return 0;
}

/* Fill `out` (bound for the request's number of sets and the size's values) and `data`
 * (nbytes long). Every requested metric remembers how many values it had. */
static int result_fill(pcp_interp *ip, double t_req, pcp_result *out, uint8_t *data,
                       int64_t nbytes)
{
    if (out->numpmid < ip->nrequest)
        return PM_ERR_TOOBIG;
    int32_t room = out->nvalues;
    int32_t k = 0;
    int64_t used = 0;
    for (int32_t r = 0; r < ip->nrequest; r++) {
        out->pmid[r] = ip->request_pmid[r];
        out->first[r] = k;
        if (ip->request[r] < 0) {
            out->numval[r] = 0;
            out->valfmt[r] = 0;
            continue;
        }
        metric_t *m = &ip->metrics[ip->request[r]];
        int32_t first = k;
        int32_t valfmt = m->valfmt;
        if (m->numval > 0) {
            for (int32_t i = m->first_icp; i < m->first_icp + m->ninst; i++) {
                const icp_t *icp = &ip->icps[i];
                value_t v;
                if (!icp->inresult || !value_at(ip, m, icp, t_req, &v))
                    continue;
                if (k >= room || (int64_t)v.len > nbytes - used)
                    return PM_ERR_TOOBIG;
                out->inst[k] = icp->inst;
                out->vtype[k] = v.vtype;
                out->ival[k] = v.ival;
                out->dval[k] = v.dval;
                out->boff[k] = (uint32_t)used;
                out->blen[k] = v.len;
                if (v.len)
                    memcpy(data + used, v.bytes, v.len);
                used += v.len;
                k++;
                if (v.vtype >= 0)
                    valfmt = PM_VAL_DPTR;
            }
        }
        int32_t numval = m->numval;
        /* libpcp counts first and fills after; a value it cannot compute leaves a slot
         * unfilled: keep the ones there are */
        if (numval > 0 && k - first != numval)
            numval = k - first;
        out->numval[r] = numval;
        out->valfmt[r] = numval > 0 ? valfmt : 0;
        m->last_numval = m->numval;
    }
    out->numpmid = ip->nrequest;
    out->nvalues = k;
    return 0;
}

int pcp_interp_result(pcp_interp *ip, double t_req, int decided, pcp_result *out,
                      uint8_t *data, int64_t data_room, int32_t *nvalues, int64_t *nbytes)
{
    if (!decided)
        decide(ip, t_req);
    int sts = result_size(ip, t_req, nvalues, nbytes);
    if (sts < 0)
        return sts;
    if (out == NULL || out->nvalues != *nvalues || out->numpmid < ip->nrequest ||
        data_room < *nbytes)
        return PCP_INTERP_NEED_ROOM;
    return result_fill(ip, t_req, out, data, *nbytes);
}

/* ---- regular-grid reads ------------------------------------------------------------ */

/* A string's payload up to its first NUL (as the raw column reads keep it). */
static uint32_t string_len(const uint8_t *p, uint32_t n)
{
    const uint8_t *nul = n ? memchr(p, 0, n) : NULL;
    return nul ? (uint32_t)(nul - p) : n;
}

/* Bytes the step's strings and aggregates need in the staging area. */
static uint64_t grid_row_bytes(const pcp_interp *ip, double t_req, int32_t nmetrics,
                               const pcp_interp_grid_metric *gms)
{
    uint64_t need = 0;
    for (int32_t r = 0; r < ip->nrequest && r < nmetrics; r++) {
        if (ip->request[r] < 0)
            continue;
        const metric_t *m = &ip->metrics[ip->request[r]];
        if (m->numval <= 0 || !is_copied_type(m->type))
            continue;
        for (int32_t i = 0; i < m->ninst; i++) {
            const icp_t *icp = &ip->icps[m->first_icp + i];
            value_t v;
            if (gms[r].column[i] < 0 || !icp->inresult || !value_at(ip, m, icp, t_req, &v))
                continue;
            need += v.len;
        }
    }
    return need;
}

/* One value into its cell: pmExtractValue(type, type) of it, or the staged bytes of a
 * string or aggregate. Returns 1 stored, 0 refused (counted). */
static int grid_store(pcp_interp_grid *grid, pcp_interp_grid_metric *gm, const metric_t *m,
                      const value_t *v, uint8_t *cell)
{
    if (is_copied_type(m->type)) {
        if (m->type != PM_TYPE_STRING && m->type != PM_TYPE_AGGREGATE) {
            gm->nerr++;
            return 0;
        }
        if (v->vtype != 0 && v->vtype != m->type) {
            gm->nerr++;
            return 0;
        }
        uint32_t n = m->type == PM_TYPE_STRING ? string_len(v->bytes, v->len) : v->len;
        uint64_t to = grid->staged_used;
        if (n)
            memcpy(grid->staged + to, v->bytes, n);
        grid->staged_used = to + n;
        gm->nbytes += n;
        int64_t ref = (int64_t)(((uint64_t)n << PCP_INTERP_REF_SHIFT) | to);
        memcpy(cell, &ref, sizeof ref);
        return 1;
    }
    pcp_atom atom;
    int sts;
    if (v->vtype < 0)
        sts = pcp_convert_extract(PM_VAL_INSITU, (uint32_t)v->ival, 0, NULL, 0, m->type,
                                  m->type, &atom);
    else
        sts = pcp_convert_extract(PM_VAL_DPTR, 0, v->vtype, v->bytes, v->len, m->type,
                                  m->type, &atom);
    if (sts < 0) {
        gm->nerr++;
        return 0;
    }
    switch (m->type) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
        memcpy(cell, &atom.ul, 4);
        break;
    case PM_TYPE_FLOAT:
        memcpy(cell, &atom.f, 4);
        break;
    case PM_TYPE_DOUBLE:
        memcpy(cell, &atom.d, 8);
        break;
    default:
        memcpy(cell, &atom.ull, 8);
        break;
    }
    return 1;
}

int pcp_interp_grid_row(pcp_interp *ip, double t_req, pcp_interp_grid *grid, int32_t row,
                        int decided)
{
    if (grid->nmetrics < ip->nrequest || row < 0)
        return PM_ERR_TOOBIG;
    if (!decided)
        decide(ip, t_req);
    uint64_t need = grid_row_bytes(ip, t_req, grid->nmetrics, grid->metrics);
    if (need > grid->staged_cap - grid->staged_used) {
        grid->room_need = grid->staged_used + need;
        return PCP_INTERP_NEED_ROOM;
    }
    for (int32_t r = 0; r < ip->nrequest; r++) {
        if (ip->request[r] < 0)
            continue;
        metric_t *m = &ip->metrics[ip->request[r]];
        pcp_interp_grid_metric *gm = &grid->metrics[r];
        if (m->numval > 0) {
            size_t size = m->type == PM_TYPE_32 || m->type == PM_TYPE_U32 ||
                          m->type == PM_TYPE_FLOAT ? 4 : 8;
            uint8_t *vrow = gm->values + (int64_t)row * gm->values_stride;
            uint8_t *prow = gm->present + (int64_t)row * gm->present_stride;
            for (int32_t i = 0; i < m->ninst; i++) {
                const icp_t *icp = &ip->icps[m->first_icp + i];
                int32_t col = gm->column[i];
                value_t v;
                if (!icp->inresult || !value_at(ip, m, icp, t_req, &v))
                    continue;
                if (col < 0) {
                    gm->dropped++;
                    continue;
                }
                if (grid_store(grid, gm, m, &v, vrow + (size_t)col * size)) {
                    prow[col] = 1;
                    gm->nvalues++;
                }
            }
        }
        m->last_numval = m->numval;
    }
    return 0;
}

/* ---- forward grids in one pass ---------------------------------------------------- */

/* A regular forward grid over a context's archives whose records (and the <mark>s
 * libpcp makes up between archives) come in strictly increasing time, no <mark> at a
 * grid time: there libpcp's moves (a roll to the request time, a
 * forward search from the position after the last record at or before it) leave every
 * instance bounded by its latest observation at or before the row's time and its first
 * at or after it, each a value or a <mark>, which the records give in one forward pass. A
 * sweep keeps, per instance, that prior observation and the rows after it that wait
 * for the next one (icp->pend on); each observation settles the rows before it, with
 * the same rules and arithmetic as a fetch (left_out, value_between), straight into the
 * chunk's matrices. A chunk's last rows may wait for records beyond it: those are read
 * ahead (settling rows, moving no prior) and read again for the next chunk. The
 * counter's silence after a <mark> needs the row before: applied when a chunk is done. */

int pcp_interp_sweep_begin(pcp_interp *ip, const uint32_t *pmids, int32_t npmids)
{
    int sts = pcp_interp_begin(ip, pmids, npmids, NULL);
    if (sts < 0)
        return sts;
    for (int32_t m = 0; m < ip->nmetrics; m++)
        ip->metrics[m].req = -1;
    for (int32_t r = 0; r < ip->nrequest; r++) {
        if (ip->request[r] < 0)
            continue;
        metric_t *m = &ip->metrics[ip->request[r]];
        if (m->req >= 0)
            return PM_ERR_TOOBIG;       /* a repeated pmid: not for a sweep */
        m->req = r;
        m->sweep_last = -1;
    }
    for (int32_t w = 0; w < ip->nwant; w++) {
        icp_t *icp = &ip->icps[ip->want[w]];
        bound_forget(&icp->prior);
        bound_forget(&icp->next);
        icp->pend = 0;
        icp->gone = 0;
    }
    ip->sw.row0 = 0;
    ip->sw.nrows = 0;
    return 0;
}

int pcp_interp_sweep_chunk(pcp_interp *ip, pcp_interp_grid *grid, int32_t base,
                           int32_t nrows, const double *t)
{
    if (nrows < 0 || base < 0 || grid->nmetrics < ip->nrequest)
        return PM_ERR_TOOBIG;
    int64_t cells = (int64_t)nrows * (ip->nrequest > 0 ? ip->nrequest : 1);
    if (nrows > ip->sw.rows_cap) {
        double *tt = realloc(ip->sw.t, (size_t)nrows * sizeof *tt);
        if (tt == NULL)
            return -ENOMEM;
        ip->sw.t = tt;
        uint8_t *mark = realloc(ip->sw.mark, (size_t)nrows);
        if (mark == NULL)
            return -ENOMEM;
        ip->sw.mark = mark;
        ip->sw.rows_cap = nrows;
    }
    if (cells > ip->sw.numval_cap) {
        if ((uint64_t)cells > SIZE_MAX / sizeof *ip->sw.numval)
            return PM_ERR_TOOBIG;
        int32_t *nv = realloc(ip->sw.numval, (size_t)cells * sizeof *nv);
        if (nv == NULL)
            return -ENOMEM;
        ip->sw.numval = nv;
        ip->sw.numval_cap = cells;
    }
    ip->sw.row0 += ip->sw.nrows;
    ip->sw.nrows = nrows;
    ip->sw.base = base;
    ip->sw.grid = grid;
    if (nrows) {
        memcpy(ip->sw.t, t, (size_t)nrows * sizeof *t);
        memset(ip->sw.mark, 0, (size_t)nrows);
        memset(ip->sw.numval, 0, (size_t)cells * sizeof *ip->sw.numval);
    }
    if (grid->staged != ip->sw.staged) {        /* the chunk's first rows swept */
        grid->staged = ip->sw.staged;
        grid->staged_cap = ip->sw.staged_cap;
        grid->staged_used = 0;
    }
    return 0;
}

/* Room for `n` more staged bytes (the sweep's own area, grown here). */
static int sweep_staging_room(pcp_interp *ip, pcp_interp_grid *grid, uint64_t n)
{
    if (n <= grid->staged_cap - grid->staged_used)
        return 0;
    uint64_t cap = ip->sw.staged_cap ? ip->sw.staged_cap : 4096;
    while (cap - grid->staged_used < n) {
        if (cap > UINT64_MAX / 2 || cap > SIZE_MAX / 2)
            return PM_ERR_TOOBIG;
        cap *= 2;
    }
    uint8_t *p = realloc(ip->sw.staged, (size_t)cap);
    if (p == NULL)
        return -ENOMEM;
    ip->sw.staged = grid->staged = p;
    ip->sw.staged_cap = grid->staged_cap = cap;
    return 0;
}

static size_t cell_size(int32_t type)
{
    return type == PM_TYPE_32 || type == PM_TYPE_U32 || type == PM_TYPE_FLOAT ? 4 : 8;
}

/* A number of the metric's own type written straight into its cell, as
 * pcp_convert_extract(type, type) gives it; 0 for what grid_store must convert. */
static int store_own_type(const metric_t *m, const value_t *v, uint8_t *cell)
{
    if (v->vtype < 0) {
        if (m->type != PM_TYPE_32 && m->type != PM_TYPE_U32)
            return 0;
        uint32_t word = (uint32_t)v->ival;
        memcpy(cell, &word, sizeof word);
        return 1;
    }
    if (v->vtype != m->type)
        return 0;
    switch (m->type) {
    case PM_TYPE_64:
    case PM_TYPE_U64:
        if (v->len != 8)
            return 0;
        memcpy(cell, &v->ival, 8);
        return 1;
    case PM_TYPE_DOUBLE:
        if (v->len != 8)
            return 0;
        memcpy(cell, &v->dval, 8);
        return 1;
    case PM_TYPE_FLOAT: {
        if (v->len != 4)
            return 0;
        float f = (float)v->dval;      /* a float's value held as a double: exact */
        memcpy(cell, &f, sizeof f);
        return 1;
    }
    }
    return 0;
}

/* Row k of the chunk (0-based) for one instance between these bounds, as a fetch there
 * would give it: counted in a counter's numval when libpcp keeps the instance, its
 * value stored in its cell. */
static int sweep_store(pcp_interp *ip, metric_t *m, const icp_t *icp, const bound *prior,
                       const bound *next, int32_t k)
{
    double t = ip->sw.t[k];
    if (left_out(m, icp, prior, next, t))
        return 0;
    if (m->sem == PM_SEM_COUNTER) {
        if (!is_numeric_type(m->type))
            return 0;                   /* PM_ERR_TYPE */
        ip->sw.numval[(int64_t)k * ip->nrequest + m->req]++;
    }
    value_t v;
    if (!value_between(ip, m, prior, next, t, &v))
        return 0;
    pcp_interp_grid *grid = ip->sw.grid;
    pcp_interp_grid_metric *gm = &grid->metrics[m->req];
    int32_t col = gm->column[(icp - ip->icps) - m->first_icp];
    if (col < 0) {
        gm->dropped++;
        return 0;
    }
    int sts;
    if (is_copied_type(m->type) && (sts = sweep_staging_room(ip, grid, v.len)) < 0)
        return sts;
    int64_t row = (int64_t)ip->sw.base + k;
    uint8_t *cell = gm->values + row * gm->values_stride + (size_t)col * cell_size(m->type);
    if (store_own_type(m, &v, cell) || grid_store(grid, gm, m, &v, cell)) {
        gm->present[row * gm->present_stride + col] = 1;
        gm->nvalues++;
    }
    return 0;
}

/* The instance's waiting rows of the chunk before time `until` settled between its
 * prior and `next`; icp->pend moves past them. */
static int sweep_settle(pcp_interp *ip, metric_t *m, icp_t *icp, const bound *next,
                        double until)
{
    int64_t end = ip->sw.row0 + ip->sw.nrows;
    int64_t k = icp->pend;
    for (; k < end && ip->sw.t[k - ip->sw.row0] < until; k++) {
        int sts = sweep_store(ip, m, icp, &icp->prior, next, (int32_t)(k - ip->sw.row0));
        if (sts < 0)
            return sts;
    }
    icp->pend = k;
    return 0;
}

static int waiting(const pcp_interp *ip, const icp_t *icp)
{
    return icp->pend < ip->sw.row0 + ip->sw.nrows && icp->pend >= ip->sw.row0;
}

int pcp_interp_sweep_fold(pcp_interp *ip, double t_this, uint64_t key, const uint8_t *rec,
                          size_t len, int version, int ahead)
{
    if (rec == NULL) {                          /* a <mark>: an observation of every one */
        bound mark;
        bound_forget(&mark);
        mark.t = t_this;
        mark.s = S_MARK;
        for (int32_t w = 0; w < ip->nwant; w++) {
            icp_t *icp = &ip->icps[ip->want[w]];
            int was = waiting(ip, icp);
            int sts = sweep_settle(ip, &ip->metrics[icp->metric], icp, &mark, t_this);
            if (sts < 0)
                return sts;
            if (ahead) {
                if (was && !waiting(ip, icp) && !icp->gone)
                    ip->sw.npending--;
                continue;
            }
            icp->prior.t = t_this;
            icp->prior.s = S_MARK;
            icp->prior.has = 0;
        }
        if (ahead)
            return ip->sw.npending;
        int32_t k = 0;
        while (k < ip->sw.nrows && ip->sw.t[k] < t_this)
            k++;
        if (k < ip->sw.nrows)
            ip->sw.mark[k] = 1;
        return 0;
    }
    int sts = 0;
    const pcp_result *res = decoded_record(ip, key, rec, len, version, &sts);
    if (res == NULL)
        return sts;
    if (res->numpmid < 0 || res->nvalues < 0)
        return PM_ERR_LOGREC;
    for (int32_t s = 0; s < res->numpmid; s++) {
        metric_t *m;
        int32_t base, numval;
        if ((sts = record_set(ip, res, s, &m, &base, &numval)) <= 0) {
            if (sts < 0)
                return sts;
            continue;
        }
        if ((sts = check_valfmt(m, res->valfmt[s])) < 0)
            return sts;
        if (m->req < 0)
            continue;
        int insitu = m->valfmt == PM_VAL_INSITU;
        for (int32_t j = base; j < base + numval; j++) {
            int32_t ci = icp_of_value(ip, m, j - base, res->inst[j]);
            if (ci < 0)
                continue;
            icp_t *icp = &ip->icps[ci];
            int settles = waiting(ip, icp) && ip->sw.t[icp->pend - ip->sw.row0] < t_this;
            if (ahead && !settles)
                continue;
            bound *into = settles ? &icp->next : &icp->prior;
            if ((sts = bound_set_value(into, res, rec, len, j, insitu, m->type)) < 0)
                return sts;
            into->t = t_this;
            into->s = S_VALUE;
            if (settles && (sts = sweep_settle(ip, m, icp, &icp->next, t_this)) < 0)
                return sts;
            if (ahead) {
                ip->sw.npending -= !icp->gone;
                continue;
            }
            if (settles)
                bound_swap(&icp->prior, &icp->next);
            /* a row at t_this: this observation on both sides (libpcp reads the record
             * there whenever that differs from its earlier bounds: an unbounded prior
             * rolls, a <mark> before a next at t_req is searched again) */
            if (waiting(ip, icp) && ip->sw.t[icp->pend - ip->sw.row0] == t_this) {
                sts = sweep_store(ip, m, icp, &icp->prior, &icp->prior,
                                  (int32_t)(icp->pend - ip->sw.row0));
                if (sts < 0)
                    return sts;
                icp->pend++;
            }
        }
    }
    return ahead ? ip->sw.npending : 0;
}

int32_t pcp_interp_sweep_waiting(pcp_interp *ip)
{
    int32_t n = 0;
    for (int32_t w = 0; w < ip->nwant; w++) {
        const icp_t *icp = &ip->icps[ip->want[w]];
        n += waiting(ip, icp) && !icp->gone;
    }
    ip->sw.npending = n;
    return n;
}

int pcp_interp_sweep_chunk_done(pcp_interp *ip, int eof)
{
    bound none;
    bound_forget(&none);
    for (int32_t w = 0; w < ip->nwant; w++) {
        icp_t *icp = &ip->icps[ip->want[w]];
        if (!waiting(ip, icp))
            continue;
        if (!icp->gone && !eof)
            return PM_ERR_TOOBIG;           /* the caller stopped reading too early */
        int sts = sweep_settle(ip, &ip->metrics[icp->metric], icp, &none, INFINITY);
        if (sts < 0)
            return sts;
        icp->gone = 1;
    }
    /* a counter that had values at the row before a <mark> is silent for one row */
    pcp_interp_grid *grid = ip->sw.grid;
    for (int32_t r = 0; r < ip->nrequest; r++) {
        if (ip->request[r] < 0)
            continue;
        metric_t *m = &ip->metrics[ip->request[r]];
        if (m->sem != PM_SEM_COUNTER)
            continue;
        pcp_interp_grid_metric *gm = &grid->metrics[r];
        int32_t last = m->sweep_last;
        for (int32_t k = 0; k < ip->sw.nrows; k++) {
            int32_t *numval = &ip->sw.numval[(int64_t)k * ip->nrequest + r];
            if (ip->sw.mark[k] && last > 0 && *numval > 0) {
                uint8_t *prow = gm->present + ((int64_t)ip->sw.base + k) * gm->present_stride;
                for (int32_t i = 0; i < m->ninst; i++) {
                    int32_t col = gm->column[i];
                    if (col >= 0 && prow[col]) {
                        prow[col] = 0;
                        gm->nvalues--;
                    }
                }
                *numval = 0;
            }
            last = *numval;
        }
        m->sweep_last = last;
    }
    return 0;
}
