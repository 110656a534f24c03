/*
 * Archive-scan benchmark (b): a full forward scan of an archive over libpcp.
 *
 *   pmNewContext(PM_CONTEXT_ARCHIVE, archive), then pmFetchArchive until
 *   PM_ERR_EOL; every value of every value set goes through pmExtractValue to
 *   its metric's own type (each pmid's descriptor is looked up once with
 *   pmLookupDesc and cached), and the results are folded into a checksum so
 *   the work cannot be optimised away:
 *     int_sum    sum of all 32/U32/64/U64 values, modulo 2^64 (each value taken
 *                as its natural C type, then converted to uint64)
 *     float_sum  sum of all FLOAT and DOUBLE values, in archive order
 *     strings    number of STRING values, str_bytes their total strlen
 *   Extracted strings are freed.  pmFreeResult after every record.
 *
 * usage: archive_scan [-n maxrecords] archive
 * -n stops after that many records (marks included), for prefix runs.
 *
 * Prints one JSON object: values, records (marks included), marks, sets,
 * open_s (pmNewContext), scan_s (the fetch loop, elapsed), cpu_s (its CPU
 * time, user + system), values_per_s = values / scan_s, the checksum, and
 * memory: rss_base_kb (VmRSS before the scan),
 * hwm_open_kb (VmHWM then: the peak of start-up and pmNewContext),
 * scan_hwm_kb (VmHWM of the scan alone: the peak is reset through
 * /proc/self/clear_refs before it starts), max_rss_anon_kb / max_rss_file_kb
 * (largest RssAnon / RssFile seen, sampled every 64 records and at the end).
 * The process's peak RSS is max(hwm_open_kb, scan_hwm_kb).
 */
#include <pcp/pmapi.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define now()     clock_s(CLOCK_MONOTONIC)
#define cpu_now() clock_s(CLOCK_PROCESS_CPUTIME_ID)

static void
die(const char *what, int sts)
{
    printf("{\"error\": \"%s: %s\"}\n", what, pmErrStr(sts));
    exit(1);
}

/* ---- /proc/self/status ------------------------------------------------- */

typedef struct {
    long rss, hwm, anon, file;
} mem_t;

static void
read_mem(mem_t *m)
{
    char line[256];
    FILE *fp = fopen("/proc/self/status", "r");

    m->rss = m->hwm = m->anon = m->file = -1;
    if (fp == NULL)
        return;
    while (fgets(line, sizeof(line), fp) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            m->rss = atol(line + 6);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            m->hwm = atol(line + 6);
        else if (strncmp(line, "RssAnon:", 8) == 0)
            m->anon = atol(line + 8);
        else if (strncmp(line, "RssFile:", 8) == 0)
            m->file = atol(line + 8);
    }
    fclose(fp);
}

static int
reset_hwm(void)
{
    FILE *fp = fopen("/proc/self/clear_refs", "w");
    int ok;

    if (fp == NULL)
        return 0;
    ok = fputs("5", fp) >= 0;
    return (fclose(fp) == 0) && ok;
}

/* ---- pmid -> type cache (open addressing, never full) ------------------- */

typedef struct {
    pmID pmid;
    int type;
} slot_t;

static slot_t *slots;
static unsigned nslots, nused;

static void
cache_init(unsigned n)
{
    unsigned i;
    nslots = n;
    nused = 0;
    slots = malloc(n * sizeof(slot_t));
    for (i = 0; i < n; i++)
        slots[i].pmid = PM_ID_NULL;
}

static slot_t *
cache_find(pmID pmid)
{
    unsigned h = (pmid * 2654435761u) & (nslots - 1);
    while (slots[h].pmid != PM_ID_NULL && slots[h].pmid != pmid)
        h = (h + 1) & (nslots - 1);
    return &slots[h];
}

static int
type_of(pmID pmid)
{
    slot_t *s = cache_find(pmid);
    pmDesc desc;
    int sts;

    if (s->pmid == pmid)
        return s->type;
    if (2 * (nused + 1) > nslots) {          /* grow: keep the load below 1/2 */
        slot_t *old = slots;
        unsigned i, n = nslots;
        cache_init(2 * n);
        for (i = 0; i < n; i++)
            if (old[i].pmid != PM_ID_NULL) {
                *cache_find(old[i].pmid) = old[i];
                nused++;
            }
        free(old);
        s = cache_find(pmid);
    }
    if ((sts = pmLookupDesc(pmid, &desc)) < 0) {
        if (sts != PM_ERR_PMID_LOG && sts != PM_ERR_PMID)
            die("pmLookupDesc", sts);
        desc.type = PM_TYPE_UNKNOWN;         /* data without a descriptor: skipped */
    }
    s->pmid = pmid;
    s->type = desc.type;
    nused++;
    return desc.type;
}

/* ---- main --------------------------------------------------------------- */

int
main(int argc, char **argv)
{
    long maxrecords = 0, records = 0, marks = 0, sets = 0, values = 0, skipped = 0;
    long strings = 0, str_bytes = 0;
    uint64_t int_sum = 0;
    double float_sum = 0.0, t0, t1, t2, c1, c2, open_s;
    mem_t base, m;
    long max_anon, max_file;
    int c, sts, i, j, hwm_reset;
    pmResult *rp;
    pmAtomValue atom;

    while ((c = getopt(argc, argv, "n:")) != -1) {
        switch (c) {
        case 'n': maxrecords = atol(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-n maxrecords] archive\n", argv[0]);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: %s [-n maxrecords] archive\n", argv[0]);
        return 2;
    }
    cache_init(1024);

    t0 = now();
    if ((sts = pmNewContext(PM_CONTEXT_ARCHIVE, argv[optind])) < 0)
        die("pmNewContext", sts);
    open_s = now() - t0;
    read_mem(&base);                /* base.hwm: the peak of start-up and open */
    hwm_reset = reset_hwm();
    max_anon = base.anon;
    max_file = base.file;

    c1 = cpu_now();
    t1 = now();
    while (maxrecords == 0 || records < maxrecords) {
        if ((sts = pmFetchArchive(&rp)) < 0) {
            if (sts == PM_ERR_EOL)
                break;
            die("pmFetchArchive", sts);
        }
        records++;
        if (rp->numpmid == 0)
            marks++;
        for (i = 0; i < rp->numpmid; i++) {
            pmValueSet *vsp = rp->vset[i];
            int type;
            sets++;
            if (vsp->numval <= 0)
                continue;
            type = type_of(vsp->pmid);
            for (j = 0; j < vsp->numval; j++) {
                if (type < PM_TYPE_32 || type > PM_TYPE_STRING) {
                    skipped++;
                    continue;
                }
                if ((sts = pmExtractValue(vsp->valfmt, &vsp->vlist[j], type, &atom, type)) < 0)
                    die("pmExtractValue", sts);
                switch (type) {
                case PM_TYPE_32:     int_sum += (uint64_t)(int64_t)atom.l; break;
                case PM_TYPE_U32:    int_sum += atom.ul; break;
                case PM_TYPE_64:     int_sum += (uint64_t)atom.ll; break;
                case PM_TYPE_U64:    int_sum += atom.ull; break;
                case PM_TYPE_FLOAT:  float_sum += atom.f; break;
                case PM_TYPE_DOUBLE: float_sum += atom.d; break;
                case PM_TYPE_STRING:
                    strings++;
                    str_bytes += strlen(atom.cp);
                    free(atom.cp);
                    break;
                }
                values++;
            }
        }
        pmFreeResult(rp);
        if ((records & 63) == 0) {
            read_mem(&m);
            if (m.anon > max_anon) max_anon = m.anon;
            if (m.file > max_file) max_file = m.file;
        }
    }
    t2 = now();
    c2 = cpu_now();
    read_mem(&m);
    if (m.anon > max_anon) max_anon = m.anon;
    if (m.file > max_file) max_file = m.file;

    printf("{\"impl\": \"libpcp-c\", \"path\": \"pmFetchArchive+pmExtractValue\", "
           "\"values\": %ld, \"records\": %ld, \"marks\": %ld, \"sets\": %ld, "
           "\"skipped\": %ld, \"open_s\": %.6f, \"scan_s\": %.6f, \"cpu_s\": %.6f, "
           "\"values_per_s\": %.1f, "
           "\"int_sum\": %" PRIu64 ", \"float_sum\": %.17g, \"strings\": %ld, "
           "\"str_bytes\": %ld, \"rss_base_kb\": %ld, \"hwm_open_kb\": %ld, \"scan_hwm_kb\": %ld, "
           "\"hwm_reset\": %s, \"rss_end_kb\": %ld, \"max_rss_anon_kb\": %ld, "
           "\"max_rss_file_kb\": %ld, \"descs\": %u, \"limited\": %s}\n",
           values, records, marks, sets, skipped, open_s, t2 - t1, c2 - c1,
           t2 > t1 ? values / (t2 - t1) : 0.0,
           int_sum, float_sum, strings, str_bytes, base.rss, base.hwm, m.hwm,
           hwm_reset ? "true" : "false", m.rss, max_anon, max_file, nused,
           (maxrecords && records >= maxrecords) ? "true" : "false");
    return 0;
}
