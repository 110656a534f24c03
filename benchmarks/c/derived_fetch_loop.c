/*
 * The derived metric pmFetch workload of derived_fetch.py over libpcp (the floor for
 * both bindings): the same timed loop of pmFetch and pmFreeResult, then the same
 * checksum pass, the same JSON.
 *
 * usage: derived_fetch_loop archive ARCHIVE forw|interp STEP_MS ROUNDS NAME [NAME ...]
 *        derived_fetch_loop live HOST - 0 FETCHES NAME=EXPR [NAME=EXPR ...]
 */
#include <pcp/pmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loop_common.h"

static int live;
static const char *mode;
static int step_ms;

static void
rewind_archive(void)
{
    pmLogLabel label;
    struct timeval start;

    if (live)
        return;
    pmGetArchiveLabel(&label);
    start = label.ll_start;
    if (strcmp(mode, "forw") == 0)
        pmSetMode(PM_MODE_FORW, &start, 0);
    else
        pmSetMode(PM_MODE_INTERP, &start, step_ms);
}

int
main(int argc, char **argv)
{
    int sts, i, j, ctx, rounds, r, *types;
    long fetches = 0, values = 0, errors = 0, per_round;
    double cpu = 0.0, float_sum = 0.0;
    pmID *pmids;
    pmResult *rp;

    if (argc < 7) {
        printf("{\"error\": \"usage: derived_fetch_loop archive|live TARGET MODE STEP ROUNDS NAME...\"}\n");
        return 1;
    }
    live = strcmp(argv[1], "live") == 0;
    mode = argv[3];
    step_ms = atoi(argv[4]);
    rounds = atoi(argv[5]);
    for (i = 6; i < argc; i++) {
        if (live) {
            char *eq = strchr(argv[i], '=');
            char *errmsg;
            if (eq == NULL)
                return 1;
            *eq = '\0';
            if ((errmsg = pmRegisterDerived(argv[i], eq + 1)) != NULL) {
                printf("{\"error\": \"pmRegisterDerived: %s\"}\n", errmsg);
                return 1;
            }
        }
        add_name(argv[i]);
    }
    ctx = pmNewContext(live ? PM_CONTEXT_HOST : PM_CONTEXT_ARCHIVE, argv[2]);
    if (ctx < 0) {
        printf("{\"error\": \"pmNewContext: %s\"}\n", pmErrStr(ctx));
        return 1;
    }
    pmids = calloc(nnames, sizeof(pmID));
    types = calloc(nnames, sizeof(int));
    if ((sts = pmLookupName(nnames, (const char **)names, pmids)) < 0) {
        printf("{\"error\": \"pmLookupName: %s\"}\n", pmErrStr(sts));
        return 1;
    }
    per_round = live ? rounds : 1L << 30;
    for (r = 0; r < (live ? 1 : rounds); r++) {
        long n = 0;
        double start;
        rewind_archive();
        start = cpu_now();
        while (n < per_round && pmFetch(nnames, pmids, &rp) >= 0) {
            pmFreeResult(rp);
            n++;
        }
        cpu += cpu_now() - start;
        fetches += n;
    }
    rewind_archive();
    for (i = 0; i < nnames; i++) {
        pmDesc desc;
        types[i] = pmLookupDesc(pmids[i], &desc) < 0 ? -1 : desc.type;
    }
    for (r = 0; r < (live ? 3 : 1 << 30) && pmFetch(nnames, pmids, &rp) >= 0; r++) {
        for (i = 0; i < rp->numpmid; i++) {
            pmValueSet *vsp = rp->vset[i];
            if (vsp->numval < 0)
                errors++;
            if (vsp->numval <= 0 || types[i] < 0)
                continue;
            for (j = 0; j < vsp->numval; j++) {
                pmAtomValue atom;
                if (pmExtractValue(vsp->valfmt, &vsp->vlist[j], types[i], &atom,
                                   PM_TYPE_DOUBLE) >= 0)
                    float_sum += atom.d;
            }
            values += vsp->numval;
        }
        pmFreeResult(rp);
    }
    printf("{\"metrics\": %d, \"fetches\": %ld, \"cpu_s\": %.6f, \"us_per_fetch\": %.3f, "
           "\"values\": %ld, \"float_sum\": %.17g, \"errors\": %ld}\n", nnames, fetches, cpu,
           fetches ? 1e6 * cpu / fetches : 0.0, values, float_sum, errors);
    return 0;
}
