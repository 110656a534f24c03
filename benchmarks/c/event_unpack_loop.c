/*
 * Event record benchmarks over libpcp: pmUnpackEventRecords /
 * pmUnpackHighResEventRecords of every event value, reading every value set of every
 * record, then pmFreeEventResult / pmFreeHighResEventResult.
 *
 *   event_unpack_loop [-r rounds] [-t secs] [-u events|params] -c corpus
 *       corpus: one RESULT / HIGHRES_RESULT PDU per line, in hex (as pcp-native
 *       received them); each is decoded once by libpcp before timing, so only the
 *       unpacking is timed. One op unpacks every event value of every PDU.
 *   event_unpack_loop [-r rounds] [-t secs] [-u events|params] [-h host] -l metric...
 *       live: one op is pmFetch of the metrics plus the unpacking above.
 *
 * Prints one JSON object (bench_common.h's fields). The number of events (or
 * parameters, -u params) per op is the mean over all timed ops, since a live PMDA
 * returns a different number of events at each fetch.
 */
#include "bench_common.h"

typedef uint32_t pdu_word;
typedef struct { int64_t sec; int32_t nsec; } ts_internal;
typedef struct { ts_internal timestamp; int numpmid; pmValueSet *vset[1]; } result_internal;
extern pdu_word *__pmFindPDUBuf(int);
extern int __pmDecodeResult(pdu_word *, result_internal **);
extern int __pmDecodeHighResResult(pdu_word *, result_internal **);

static int count_params;
static long total_units;
static volatile long sink;

static int ncorpus;
static result_internal **corpus;

static int npmids;
static pmID *pmids;

static int hexval(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static void load_corpus(const char *path)
{
    FILE *fp = fopen(path, "r");
    static char line[1 << 24];
    int cap = 64;

    if (fp == NULL) {
        printf("{\"error\": \"cannot open %s\"}\n", path);
        exit(1);
    }
    corpus = malloc(cap * sizeof *corpus);
    while (fgets(line, sizeof line, fp) != NULL) {
        size_t n = strcspn(line, "\r\n") / 2;
        if (n < 12)
            continue;
        unsigned char *p = (unsigned char *)__pmFindPDUBuf((int)n);
        for (size_t i = 0; i < n; i++)
            p[i] = (unsigned char)(hexval(line[2 * i]) * 16 + hexval(line[2 * i + 1]));
        uint32_t type = ((uint32_t)p[4] << 24) | ((uint32_t)p[5] << 16) | ((uint32_t)p[6] << 8) | p[7];
        for (int w = 0; w < 3; w++) {  /* the PDU reader leaves the header in host order */
            uint32_t v = ((uint32_t)p[4 * w] << 24) | ((uint32_t)p[4 * w + 1] << 16) |
                         ((uint32_t)p[4 * w + 2] << 8) | p[4 * w + 3];
            memcpy(p + 4 * w, &v, 4);
        }
        result_internal *rp;
        int sts = type == 0x7015 ? __pmDecodeHighResResult((pdu_word *)p, &rp)
                                 : __pmDecodeResult((pdu_word *)p, &rp);
        if (sts < 0)
            bench_die("__pmDecodeResult", sts);
        if (ncorpus == cap)
            corpus = realloc(corpus, (cap *= 2) * sizeof *corpus);
        corpus[ncorpus++] = rp;
    }
    fclose(fp);
}

/* Read every value set of every unpacked record, as a consumer would. */
static long touch(pmValueSet **vsets, int numpmid, long *params)
{
    long acc = 0;
    for (int k = 0; k < numpmid; k++) {
        pmValueSet *vs = vsets[k];
        if (vs->pmid != 0x7fc00001u && vs->pmid != 0x7fc00002u)
            (*params)++;
        acc += vs->valfmt == PM_VAL_INSITU ? vs->vlist[0].value.lval
                                           : vs->vlist[0].value.pval->vbuf[0];
    }
    return acc;
}

/* Unpack every event value of one result; returns events, adds to *params. */
static long unpack_all(pmValueSet **vsets, int numpmid, long *params)
{
    long events = 0, acc = 0;
    for (int i = 0; i < numpmid; i++) {
        pmValueSet *vsp = vsets[i];
        if (vsp->numval < 1 || vsp->valfmt == PM_VAL_INSITU)
            continue;
        for (int j = 0; j < vsp->numval; j++) {
            int vtype = vsp->vlist[j].value.pval->vtype;
            if (vtype == PM_TYPE_EVENT) {
                pmResult **rr;
                int n = pmUnpackEventRecords(vsp, j, &rr);
                if (n < 0)
                    bench_die("pmUnpackEventRecords", n);
                for (int r = 0; r < n; r++)
                    acc += touch(rr[r]->vset, rr[r]->numpmid, params);
                if (n > 0)
                    pmFreeEventResult(rr);
                events += n;
            } else if (vtype == PM_TYPE_HIGHRES_EVENT) {
                pmHighResResult **rr;
                int n = pmUnpackHighResEventRecords(vsp, j, &rr);
                if (n < 0)
                    bench_die("pmUnpackHighResEventRecords", n);
                for (int r = 0; r < n; r++)
                    acc += touch(rr[r]->vset, rr[r]->numpmid, params);
                if (n > 0)
                    pmFreeHighResEventResult(rr);
                events += n;
            }
        }
    }
    sink += acc;
    return events;
}

static long op_corpus(void)
{
    long events = 0, params = 0;
    for (int c = 0; c < ncorpus; c++)
        events += unpack_all(corpus[c]->vset, corpus[c]->numpmid, &params);
    return count_params ? params : events;
}

static long op_live(void)
{
    pmResult *rp;
    long params = 0, events;
    int sts = pmFetch(npmids, pmids, &rp);
    if (sts < 0)
        bench_die("pmFetch", sts);
    events = unpack_all(rp->vset, rp->numpmid, &params);
    pmFreeResult(rp);
    return count_params ? params : events;
}

/* bench_main(), but units per op are averaged over every timed op. */
static void run(const char *name, long (*op)(void))
{
    long i, iters, ops = 0;
    double t0, t1, per_op, sum = 0.0;
    double *times = malloc(bench_rounds * sizeof(double));
    int n = 0;

    op();
    t0 = bench_now();
    do {
        op();
        n++;
        t1 = bench_now();
    } while (t1 - t0 < 0.05);
    per_op = (t1 - t0) / n;
    iters = (long)(bench_round_seconds / per_op);
    if (iters < 1)
        iters = 1;
    for (int r = 0; r < bench_rounds; r++) {
        t0 = bench_now();
        for (i = 0; i < iters; i++)
            total_units += op();
        t1 = bench_now();
        ops += iters;
        times[r] = (t1 - t0) / iters;
        sum += times[r];
    }
    qsort(times, bench_rounds, sizeof(double), bench_cmp_double);
    printf("{\"impl\": \"libpcp-c\", \"bench\": \"%s\", "
           "\"ops_per_s\": %.3f, \"best_ops_per_s\": %.3f, \"mean_ops_per_s\": %.3f, "
           "\"median_s_per_op\": %.9g, \"units_per_op\": %.6f, "
           "\"rounds\": %d, \"iters_per_round\": %ld}\n",
           name, 1.0 / times[bench_rounds / 2], 1.0 / times[0], bench_rounds / sum,
           times[bench_rounds / 2], (double)total_units / ops, bench_rounds, iters);
    free(times);
}

static const char *corpus_path;
static int live;

static void extra(int c, const char *arg)
{
    if (c == 'c')
        corpus_path = arg;
    else if (c == 'l')
        live = 1;
    else if (c == 'u')
        count_params = strcmp(arg, "params") == 0;
}

int main(int argc, char **argv)
{
    char **names;
    int n = bench_parse_args(argc, argv, &names, "c:lu:", extra);

    bench_connect();  /* also the context pmUnpack* names event.flags through */
    if (live) {
        npmids = n;
        pmids = malloc(n * sizeof(pmID));
        int sts = pmLookupName(n, (const char **)names, pmids);
        if (sts < 0)
            bench_die("pmLookupName", sts);
        run("events_live", op_live);
    } else {
        if (corpus_path == NULL) {
            fprintf(stderr, "need -c corpus or -l metric...\n");
            return 2;
        }
        load_corpus(corpus_path);
        run("events_corpus", op_corpus);
    }
    return 0;
}
