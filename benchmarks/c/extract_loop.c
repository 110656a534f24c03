/*
 * Benchmark (b): pmFetch of many values, then pmExtractValue of every value
 * (to its own descriptor type), then pmFreeResult -- over libpcp.
 * usage: extract_loop [-r rounds] [-t secs] [-h host] metric [metric ...]
 * units_per_op in the JSON output is the number of values per fetch.
 */
#include "bench_common.h"

static int     npmids;
static pmID   *pmids;
static int    *types;
static volatile double sink;

static long
op_extract(void)
{
    pmResult *rp;
    pmAtomValue atom;
    long nvalues = 0;
    double acc = 0.0;
    int i, j, sts;

    if ((sts = pmFetch(npmids, pmids, &rp)) < 0)
        bench_die("pmFetch", sts);
    for (i = 0; i < rp->numpmid; i++) {
        pmValueSet *vsp = rp->vset[i];
        int type = types[i];
        for (j = 0; j < vsp->numval; j++) {
            if ((sts = pmExtractValue(vsp->valfmt, &vsp->vlist[j], type, &atom, type)) < 0)
                bench_die("pmExtractValue", sts);
            switch (type) {
            case PM_TYPE_32:     acc += atom.l; break;
            case PM_TYPE_U32:    acc += atom.ul; break;
            case PM_TYPE_64:     acc += (double)atom.ll; break;
            case PM_TYPE_U64:    acc += (double)atom.ull; break;
            case PM_TYPE_FLOAT:  acc += atom.f; break;
            case PM_TYPE_DOUBLE: acc += atom.d; break;
            case PM_TYPE_STRING: acc += atom.cp[0]; free(atom.cp); break;
            default:             break;
            }
            nvalues++;
        }
    }
    pmFreeResult(rp);
    sink = acc;
    return nvalues;
}

int
main(int argc, char **argv)
{
    char **names;
    pmDesc *descs;
    int n, i, sts;

    n = bench_parse_args(argc, argv, &names, NULL, NULL);
    if (n == 0) {
        fprintf(stderr, "need metric names\n");
        return 2;
    }
    bench_connect();
    npmids = n;
    pmids = calloc(n, sizeof(pmID));
    types = calloc(n, sizeof(int));
    descs = calloc(n, sizeof(pmDesc));
    if ((sts = pmLookupName(n, (const char **)names, pmids)) < 0)
        bench_die("pmLookupName", sts);
    if (sts != n)
        bench_die("pmLookupName (some names unknown)", PM_ERR_NAME);
    if ((sts = pmLookupDescs(n, pmids, descs)) < 0)
        bench_die("pmLookupDescs", sts);
    for (i = 0; i < n; i++)
        types[i] = descs[i].type;
    bench_main("extract", op_extract);
    return 0;
}
