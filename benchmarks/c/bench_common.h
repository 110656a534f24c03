/*
 * Shared timing harness for the libpcp C benchmark clients.
 *
 * Each client defines one operation (op_run) and calls bench_main(), which
 *   1. runs the op once (warm-up, and to count the work units per op),
 *   2. calibrates how many ops fit in one round of ROUND_SECONDS,
 *   3. times ROUNDS rounds and prints one JSON object on stdout:
 *      ops_per_s (from the median round), best_ops_per_s (fastest round),
 *      mean_ops_per_s, units_per_op (values or names handled per op), ...
 * The same methodology is used by ref_live.py for the official Python binding.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pcp/pmapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int    bench_rounds = 15;
static double bench_round_seconds = 0.2;
static const char *bench_host = "local:";

static double
bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void
bench_die(const char *what, int sts)
{
    printf("{\"error\": \"%s: %s\"}\n", what, pmErrStr(sts));
    exit(1);
}

/* Read newline-separated names from path; returns count, fills *out. */
static int
bench_read_names(const char *path, char ***out)
{
    FILE *fp = fopen(path, "r");
    char line[1024];
    int n = 0, cap = 64;
    char **names = malloc(cap * sizeof(char *));

    if (fp == NULL) {
        printf("{\"error\": \"cannot open %s\"}\n", path);
        exit(1);
    }
    while (fgets(line, sizeof(line), fp) != NULL) {
        size_t len = strcspn(line, "\r\n");
        if (len == 0)
            continue;
        line[len] = '\0';
        if (n == cap) {
            cap *= 2;
            names = realloc(names, cap * sizeof(char *));
        }
        names[n++] = strdup(line);
    }
    fclose(fp);
    *out = names;
    return n;
}

/*
 * Common option parsing: -r rounds, -t seconds per round, -h host,
 * -f file of names; remaining args are names.  Returns the names.
 */
static int
bench_parse_args(int argc, char **argv, char ***names, const char *extra_opts,
                 void (*extra)(int, const char *))
{
    char optstring[64];
    int c;

    snprintf(optstring, sizeof(optstring), "r:t:h:f:%s", extra_opts ? extra_opts : "");
    *names = NULL;
    while ((c = getopt(argc, argv, optstring)) != -1) {
        switch (c) {
        case 'r': bench_rounds = atoi(optarg); break;
        case 't': bench_round_seconds = atof(optarg); break;
        case 'h': bench_host = optarg; break;
        case 'f': return bench_read_names(optarg, names);
        default:
            if (extra != NULL && c != '?') {
                extra(c, optarg);
                break;
            }
            fprintf(stderr, "usage: %s [-r rounds] [-t secs] [-h host] [-f namesfile | name ...]\n", argv[0]);
            exit(2);
        }
    }
    *names = &argv[optind];
    return argc - optind;
}

static void
bench_connect(void)
{
    int sts = pmNewContext(PM_CONTEXT_HOST, bench_host);
    if (sts < 0)
        bench_die("pmNewContext", sts);
}

/* op returns the number of work units (values, names) it handled. */
static void
bench_main(const char *name, long (*op)(void))
{
    long units, i, iters;
    double t0, t1, per_op, *times;
    double sum = 0.0;
    int r, n;

    units = op();  /* warm-up; also counts units per op */
    t0 = bench_now();
    n = 0;
    do {
        op();
        n++;
        t1 = bench_now();
    } while (t1 - t0 < 0.05);
    per_op = (t1 - t0) / n;
    iters = (long)(bench_round_seconds / per_op);
    if (iters < 1)
        iters = 1;

    times = malloc(bench_rounds * sizeof(double));
    for (r = 0; r < bench_rounds; r++) {
        t0 = bench_now();
        for (i = 0; i < iters; i++)
            op();
        t1 = bench_now();
        times[r] = (t1 - t0) / iters;
        sum += times[r];
    }
    qsort(times, bench_rounds, sizeof(double), bench_cmp_double);
    printf("{\"impl\": \"libpcp-c\", \"bench\": \"%s\", "
           "\"ops_per_s\": %.3f, \"best_ops_per_s\": %.3f, \"mean_ops_per_s\": %.3f, "
           "\"median_s_per_op\": %.9g, \"units_per_op\": %ld, "
           "\"rounds\": %d, \"iters_per_round\": %ld}\n",
           name, 1.0 / times[bench_rounds / 2], 1.0 / times[0],
           bench_rounds / sum, times[bench_rounds / 2], units,
           bench_rounds, iters);
    free(times);
}

#endif /* BENCH_COMMON_H */
