/*
 * PM_MODE_INTERP over libpcp: interpolate the metrics under some PMNS prefixes at a
 * fixed step until the end of the archive, pmExtractValue of every value to its own
 * type; prints the same JSON fields as interp_scan.py (the floor for both bindings).
 * usage: interp_loop archive step_ms [-n max_fetches] prefix [prefix ...]
 */
#include <pcp/pmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "loop_common.h"
#include <sys/resource.h>

int
main(int argc, char **argv)
{
    int ctx, maxf = 1 << 30, a = 3;
    long fetches = 0, values = 0;
    unsigned long long int_sum = 0;
    double float_sum = 0.0;
    pmLogLabel label;
    pmResult *rp;

    if (argc < 4) {
        printf("{\"error\": \"usage: interp_loop archive step_ms [-n N] prefix ...\"}\n");
        return 1;
    }
    if (strcmp(argv[3], "-n") == 0 && argc > 5) {
        maxf = atoi(argv[4]);
        a = 5;
    }
    if ((ctx = pmNewContext(PM_CONTEXT_ARCHIVE, argv[1])) < 0) {
        printf("{\"error\": \"pmNewContext: %s\"}\n", pmErrStr(ctx));
        return 1;
    }
    for (; a < argc; a++)
        pmTraversePMNS(argv[a], add_name);
    pmID *pmids;
    int *types = lookup_types(&pmids);
    if (types == NULL)
        return 1;
    pmGetArchiveLabel(&label);
    pmSetMode(PM_MODE_INTERP, &label.ll_start, atoi(argv[2]));
    double start = cpu_now();
    while (fetches < maxf && pmFetch(nnames, pmids, &rp) >= 0) {
        fetches++;
        values += extract_all(rp, types, &int_sum, &float_sum);
        pmFreeResult(rp);
    }
    print_summary(nnames, fetches, values, cpu_now() - start, int_sum, float_sum);
    return 0;
}
