/* What the archive loops (interp_loop.c, fetchgroup_loop.c, derived_loop.c) share: a
 * growing list of metric names (filled by pmTraversePMNS), the process CPU clock they
 * are timed by, the extraction of every value of a result and the JSON summary. */
#ifndef LOOP_COMMON_H
#define LOOP_COMMON_H

#include <pcp/pmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static char **names;
static int nnames, capnames;

static void
add_name(const char *name)
{
    if (nnames == capnames) {
        capnames = capnames ? 2 * capnames : 256;
        names = realloc(names, capnames * sizeof(char *));
    }
    names[nnames++] = strdup(name);
}

static double
cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The pmids and types of the names collected (NULL after printing the error JSON). */
static inline int *
lookup_types(pmID **pmids_out)
{
    pmID *pmids = calloc(nnames, sizeof(pmID));
    int *types = calloc(nnames, sizeof(int));
    int i, sts;

    if ((sts = pmLookupName(nnames, (const char **)names, pmids)) < 0) {
        printf("{\"error\": \"pmLookupName: %s\"}\n", pmErrStr(sts));
        return NULL;
    }
    for (i = 0; i < nnames; i++) {
        pmDesc desc;
        if ((sts = pmLookupDesc(pmids[i], &desc)) < 0) {
            printf("{\"error\": \"pmLookupDesc %s: %s\"}\n", names[i], pmErrStr(sts));
            return NULL;
        }
        types[i] = desc.type;
    }
    *pmids_out = pmids;
    return types;
}

/* pmExtractValue of every value of a result to its metric's own type (types[i] of
 * value set i), summed as the Python loops sum them (integers modulo 2^64, floats as
 * doubles); returns the values seen. */
static inline long
extract_all(pmResult *rp, const int *types, unsigned long long *int_sum, double *float_sum)
{
    long values = 0;
    pmAtomValue atom;
    int i, j;

    for (i = 0; i < rp->numpmid; i++) {
        pmValueSet *vsp = rp->vset[i];
        int t = types[i];
        if (vsp->numval <= 0 || t > PM_TYPE_DOUBLE)
            continue;
        for (j = 0; j < vsp->numval; j++) {
            if (pmExtractValue(vsp->valfmt, &vsp->vlist[j], t, &atom, t) < 0)
                continue;
            switch (t) {
            case PM_TYPE_32: *int_sum += (unsigned long long)(long long)atom.l; break;
            case PM_TYPE_U32: *int_sum += atom.ul; break;
            case PM_TYPE_64: *int_sum += (unsigned long long)atom.ll; break;
            case PM_TYPE_U64: *int_sum += atom.ull; break;
            case PM_TYPE_FLOAT: *float_sum += atom.f; break;
            case PM_TYPE_DOUBLE: *float_sum += atom.d; break;
            }
        }
        values += vsp->numval;
    }
    return values;
}

/* the JSON line the Python side reads: the loop's figures and checksums */
static inline void
print_summary(int nmetrics, long fetches, long values, double cpu,
              unsigned long long int_sum, double float_sum)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    printf("{\"metrics\": %d, \"fetches\": %ld, \"values\": %ld, \"cpu_s\": %.6f, "
           "\"values_per_cpu_s\": %.1f, \"int_sum\": %llu, \"float_sum\": %.17g, "
           "\"maxrss_kb\": %ld}\n", nmetrics, fetches, values, cpu,
           cpu > 0 ? values / cpu : 0.0, int_sum, float_sum, ru.ru_maxrss);
}

#endif
