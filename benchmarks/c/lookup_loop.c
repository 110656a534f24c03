/*
 * Benchmark (c): pmLookupName of a list of names over libpcp.
 * usage: lookup_loop [-r rounds] [-t secs] [-h host] [-s] -f namesfile
 *   default: one pmLookupName call with all the names per op
 *   -s:      one pmLookupName call per name (N round trips per op)
 * units_per_op in the JSON output is the number of names per op.
 */
#include "bench_common.h"

static int          nnames;
static const char **names;
static pmID        *pmids;
static int          single;

static void
extra_opt(int c, const char *arg)
{
    (void)arg;
    if (c == 's')
        single = 1;
}

static long
op_lookup(void)
{
    int i, sts;

    if (single) {
        for (i = 0; i < nnames; i++) {
            if ((sts = pmLookupName(1, &names[i], &pmids[i])) < 0)
                bench_die("pmLookupName", sts);
        }
    } else {
        if ((sts = pmLookupName(nnames, names, pmids)) < 0)
            bench_die("pmLookupName", sts);
        if (sts != nnames)
            bench_die("pmLookupName (some names unknown)", PM_ERR_NAME);
    }
    return nnames;
}

int
main(int argc, char **argv)
{
    char **argnames;

    nnames = bench_parse_args(argc, argv, &argnames, "s", extra_opt);
    if (nnames == 0) {
        fprintf(stderr, "need names (-f file or args)\n");
        return 2;
    }
    names = (const char **)argnames;
    pmids = calloc(nnames, sizeof(pmID));
    bench_connect();
    bench_main(single ? "lookup_single" : "lookup_batch", op_lookup);
    return 0;
}
