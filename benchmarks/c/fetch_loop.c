/*
 * Benchmark (a): pmFetch + pmFreeResult round trips over libpcp.
 * usage: fetch_loop [-r rounds] [-t secs] [-h host] metric [metric ...]
 * Default metric: sample.long.one.  Prints JSON (see bench_common.h).
 */
#include "bench_common.h"

static int     npmids;
static pmID   *pmids;

static long
op_fetch(void)
{
    pmResult *rp;
    int sts = pmFetch(npmids, pmids, &rp);
    if (sts < 0)
        bench_die("pmFetch", sts);
    pmFreeResult(rp);
    return 1;
}

int
main(int argc, char **argv)
{
    static const char *dflt[] = { "sample.long.one" };
    char **names;
    int n, sts;

    n = bench_parse_args(argc, argv, &names, NULL, NULL);
    if (n == 0) {
        names = (char **)dflt;
        n = 1;
    }
    bench_connect();
    npmids = n;
    pmids = calloc(n, sizeof(pmID));
    if ((sts = pmLookupName(n, (const char **)names, pmids)) < 0)
        bench_die("pmLookupName", sts);
    if (sts != n)
        bench_die("pmLookupName (some names unknown)", PM_ERR_NAME);
    bench_main("fetch", op_fetch);
    return 0;
}
