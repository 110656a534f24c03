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
    int sts, i, j, k, ctx, maxf = 1 << 30, a = 3;
    long fetches = 0, values = 0;
    unsigned long long int_sum = 0;
    double float_sum = 0.0;
    pmLogLabel label;
    pmResult *rp;
    pmAtomValue atom;

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
    pmID *pmids = calloc(nnames, sizeof(pmID));
    int *types = calloc(nnames, sizeof(int));
    if ((sts = pmLookupName(nnames, (const char **)names, pmids)) < 0) {
        printf("{\"error\": \"pmLookupName: %s\"}\n", pmErrStr(sts));
        return 1;
    }
    for (i = 0; i < nnames; i++) {
        pmDesc desc;
        if ((sts = pmLookupDesc(pmids[i], &desc)) < 0) {
            printf("{\"error\": \"pmLookupDesc: %s\"}\n", pmErrStr(sts));
            return 1;
        }
        types[i] = desc.type;
    }
    pmGetArchiveLabel(&label);
    pmSetMode(PM_MODE_INTERP, &label.ll_start, atoi(argv[2]));
    double start = cpu_now();
    while (fetches < maxf && pmFetch(nnames, pmids, &rp) >= 0) {
        fetches++;
        for (i = 0; i < rp->numpmid; i++) {
            pmValueSet *vsp = rp->vset[i];
            int t = types[i];
            if (vsp->numval <= 0 || t > PM_TYPE_DOUBLE)
                continue;
            for (j = 0; j < vsp->numval; j++) {
                if (pmExtractValue(vsp->valfmt, &vsp->vlist[j], t, &atom, t) < 0)
                    continue;
                switch (t) {
                case PM_TYPE_32: int_sum += (unsigned long long)(long long)atom.l; break;
                case PM_TYPE_U32: int_sum += atom.ul; break;
                case PM_TYPE_64: int_sum += (unsigned long long)atom.ll; break;
                case PM_TYPE_U64: int_sum += atom.ull; break;
                case PM_TYPE_FLOAT: float_sum += atom.f; break;
                case PM_TYPE_DOUBLE: float_sum += atom.d; break;
                }
            }
            values += vsp->numval;
        }
        pmFreeResult(rp);
    }
    double cpu = cpu_now() - start;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    k = 0;
    (void)k;
    printf("{\"metrics\": %d, \"fetches\": %ld, \"values\": %ld, \"cpu_s\": %.6f, "
           "\"values_per_cpu_s\": %.1f, \"int_sum\": %llu, \"float_sum\": %.17g, "
           "\"maxrss_kb\": %ld}\n", nnames, fetches, values, cpu,
           cpu > 0 ? values / cpu : 0.0, int_sum, float_sum, ru.ru_maxrss);
    return 0;
}
