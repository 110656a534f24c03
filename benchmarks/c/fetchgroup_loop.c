/*
 * The fetchgroup workload of fetchgroup_loop.py over libpcp's own fetchgroup (the floor
 * for both bindings): every instance of each metric (its own type, default scale, so
 * counters become rates), pmFetchGroup in a loop, every value read after each fetch.
 * Prints the same JSON fields as fetchgroup_loop.py.
 *
 * usage: fetchgroup_loop [--fetch-only] live HOST FETCHES METRIC [METRIC ...]
 *        fetchgroup_loop [--fetch-only] archive ARCHIVE STEP_MS PREFIX [PREFIX ...]
 */
#include <pcp/pmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "loop_common.h"

#define MAXNUM 2000

typedef struct {
    int type;
    int sts;
    unsigned num;
    int stss[MAXNUM];
    int codes[MAXNUM];
    char *names[MAXNUM];
    pmAtomValue values[MAXNUM];
} item_t;

int
main(int argc, char **argv)
{
    int a = 1, read = 1, live, sts, i;
    long fetches = 0, values = 0, maxf = 1L << 30;
    unsigned long long int_sum = 0;
    double float_sum = 0.0;
    pmFG fg;

    if (argc > 1 && strcmp(argv[1], "--fetch-only") == 0) {
        read = 0;
        a = 2;
    }
    if (argc < a + 4) {
        printf("{\"error\": \"usage: fetchgroup_loop [--fetch-only] live|archive ...\"}\n");
        return 1;
    }
    live = strcmp(argv[a], "live") == 0;
    if ((sts = pmCreateFetchGroup(&fg, live ? PM_CONTEXT_HOST : PM_CONTEXT_ARCHIVE,
                                  argv[a + 1])) < 0) {
        printf("{\"error\": \"pmCreateFetchGroup: %s\"}\n", pmErrStr(sts));
        return 1;
    }
    pmUseContext(pmGetFetchGroupContext(fg));
    if (live) {
        maxf = atol(argv[a + 2]);
        for (i = a + 3; i < argc; i++)
            add_name(argv[i]);
    } else {
        for (i = a + 3; i < argc; i++)
            pmTraversePMNS(argv[i], add_name);
    }
    item_t *items = calloc(nnames, sizeof(item_t));
    for (i = 0; i < nnames; i++) {
        pmID pmid;
        pmDesc desc;
        if ((sts = pmLookupName(1, (const char **)&names[i], &pmid)) < 0 ||
            (sts = pmLookupDesc(pmid, &desc)) < 0) {
            printf("{\"error\": \"%s: %s\"}\n", names[i], pmErrStr(sts));
            return 1;
        }
        items[i].type = desc.type;
        sts = pmExtendFetchGroup_indom(fg, names[i], NULL, items[i].codes, items[i].names,
                                       items[i].values, desc.type, items[i].stss, MAXNUM,
                                       &items[i].num, &items[i].sts);
        if (sts < 0) {
            printf("{\"error\": \"extend %s: %s\"}\n", names[i], pmErrStr(sts));
            return 1;
        }
    }
    if (!live) {
        pmLogLabel label;
        pmUseContext(pmGetFetchGroupContext(fg));
        pmGetArchiveLabel(&label);
        pmSetMode(PM_MODE_INTERP, &label.ll_start, atoi(argv[a + 2]));
    }
    double start = cpu_now();
    while (fetches < maxf && pmFetchGroup(fg) >= 0) {
        fetches++;
        if (!read)
            continue;
        for (i = 0; i < nnames; i++) {
            item_t *it = &items[i];
            if (it->sts < 0)
                continue;
            for (unsigned j = 0; j < it->num; j++) {
                if (it->stss[j] < 0)
                    continue;
                values++;
                switch (it->type) {
                case PM_TYPE_32: int_sum += (unsigned long long)(long long)it->values[j].l; break;
                case PM_TYPE_U32: int_sum += it->values[j].ul; break;
                case PM_TYPE_64: int_sum += (unsigned long long)it->values[j].ll; break;
                case PM_TYPE_U64: int_sum += it->values[j].ull; break;
                case PM_TYPE_FLOAT: float_sum += it->values[j].f; break;
                case PM_TYPE_DOUBLE: float_sum += it->values[j].d; break;
                }
            }
        }
    }
    double cpu = cpu_now() - start;
    printf("{\"metrics\": %d, \"fetches\": %ld, \"values\": %ld, \"cpu_s\": %.6f, "
           "\"cpu_us_per_fetch\": %.3f, \"values_per_cpu_s\": %.1f, \"int_sum\": %llu, "
           "\"float_sum\": %.17g}\n", nnames, fetches, values, cpu,
           fetches ? cpu / fetches * 1e6 : 0.0, cpu > 0 ? values / cpu : 0.0, int_sum,
           float_sum);
    pmDestroyFetchGroup(fg);
    return 0;
}
