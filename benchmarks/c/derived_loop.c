/*
 * Derived metrics over libpcp: load a derived configuration (pmLoadDerivedConfig), then
 * pmFetch the named derived metrics from every record of an archive (PM_MODE_FORW) and
 * pmExtractValue every value to its own type; prints the same JSON fields as
 * interp_loop.c (the floor for test_bench_derived.py).
 * usage: derived_loop archive config name [name ...]
 */
#include <pcp/pmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "loop_common.h"

int
main(int argc, char **argv)
{
    int sts, ctx, a;
    long fetches = 0, values = 0;
    unsigned long long int_sum = 0;
    double float_sum = 0.0;
    pmLogLabel label;
    pmResult *rp;

    if (argc < 4) {
        printf("{\"error\": \"usage: derived_loop archive config name ...\"}\n");
        return 1;
    }
    if ((sts = pmLoadDerivedConfig(argv[2])) < 0) {
        printf("{\"error\": \"pmLoadDerivedConfig: %s\"}\n", pmErrStr(sts));
        return 1;
    }
    if ((ctx = pmNewContext(PM_CONTEXT_ARCHIVE, argv[1])) < 0) {
        printf("{\"error\": \"pmNewContext: %s\"}\n", pmErrStr(ctx));
        return 1;
    }
    for (a = 3; a < argc; a++)
        add_name(argv[a]);
    pmID *pmids;
    int *types = lookup_types(&pmids);
    if (types == NULL)
        return 1;
    pmGetArchiveLabel(&label);
    pmSetMode(PM_MODE_FORW, &label.ll_start, 0);
    double start = cpu_now();
    while (pmFetch(nnames, pmids, &rp) >= 0) {
        fetches++;
        values += extract_all(rp, types, &int_sum, &float_sum);
        pmFreeResult(rp);
    }
    print_summary(nnames, fetches, values, cpu_now() - start, int_sum, float_sum);
    return 0;
}
