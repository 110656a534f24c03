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
    int sts, i, j, ctx, a;
    long fetches = 0, values = 0;
    unsigned long long int_sum = 0;
    double float_sum = 0.0;
    pmLogLabel label;
    pmResult *rp;
    pmAtomValue atom;

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
    pmID *pmids = calloc(nnames, sizeof(pmID));
    int *types = calloc(nnames, sizeof(int));
    if ((sts = pmLookupName(nnames, (const char **)names, pmids)) < 0) {
        printf("{\"error\": \"pmLookupName: %s\"}\n", pmErrStr(sts));
        return 1;
    }
    for (i = 0; i < nnames; i++) {
        pmDesc desc;
        if ((sts = pmLookupDesc(pmids[i], &desc)) < 0) {
            printf("{\"error\": \"pmLookupDesc %s: %s\"}\n", names[i], pmErrStr(sts));
            return 1;
        }
        types[i] = desc.type;
    }
    pmGetArchiveLabel(&label);
    pmSetMode(PM_MODE_FORW, &label.ll_start, 0);
    double start = cpu_now();
    while (pmFetch(nnames, pmids, &rp) >= 0) {
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
    printf("{\"metrics\": %d, \"fetches\": %ld, \"values\": %ld, \"cpu_s\": %.6f, "
           "\"values_per_cpu_s\": %.1f, \"int_sum\": %llu, \"float_sum\": %.17g, "
           "\"maxrss_kb\": %ld}\n", nnames, fetches, values, cpu,
           cpu > 0 ? values / cpu : 0.0, int_sum, float_sum, ru.ru_maxrss);
    return 0;
}
