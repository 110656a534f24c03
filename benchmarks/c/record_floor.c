/*
 * The floor of any archive scan that must reject a damaged record as libpcp does:
 * the least work that reads every data record of the given volumes and checks its
 * structure (archive-format.md §4, §6.1-6.4), with nothing decoded, interpolated or
 * stored.
 *
 *   For each volume: mmap it (MAP_PRIVATE, read only), skip the label record, then
 *   for each record: the length word is at least the minimum and lies inside the file,
 *   the trailer equals it; numpmid is not negative; every value set lies inside the
 *   record, with a known valfmt when numval > 0; every DPTR/SPTR value's block starts
 *   exactly where the previous block ended (the first where the sets end), its vlen is
 *   at least 4 and it ends inside the record; the last block ends at the trailer.
 *   (Event arrays inside blocks are not checked: libpcp checks those too, so a real
 *   reader does more than this.)
 *
 * It is a floor, not a competitor: no libpcp, no values. benchmarks/test_bench_interp.py
 * runs it to say how much of a scan's CPU budget reading the records alone takes.
 *
 * usage: record_floor [-r rounds] volume...   (volumes in order, e.g. big.0 big.1)
 * Prints one JSON object: records, marks, sets, values, blocks, and cpu_s, the
 * process CPU time (user + system, page faults included) of the fastest of `rounds`
 * passes over every volume, each pass mapping the volumes afresh.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VALFMT_INSITU 0
#define VALFMT_SPTR 2

typedef struct {
    long records, marks, sets, values, blocks;
    uint64_t checksum;      /* keeps the reads from being optimised away */
} tally;

static double
cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint32_t
word_at(const uint8_t *p)
{
    uint32_t w;
    memcpy(&w, p, sizeof w);
    return ntohl(w);
}

/* One record's structure (rec: after the length word, body: len - 8 bytes). Returns 0
 * or -1 where libpcp would say PM_ERR_LOGREC. */
static int
check_record(const uint8_t *rec, uint32_t len, int version, tally *t)
{
    uint32_t body = len - 8;
    uint32_t stamp = version >= 3 ? 12 : 8;
    if (body < stamp + 4)
        return -1;
    int32_t numpmid = (int32_t)word_at(rec + stamp);
    if (numpmid < 0)
        return -1;
    if (numpmid == 0) {
        t->marks++;
        return 0;
    }
    /* the record as libpcp sees it in a PDU: block positions count 32-bit words from
     * the length word, with 2 added */
    uint64_t pos = stamp + 4;
    uint64_t nblocks = 0;
    const uint8_t *sets = rec;
    for (int32_t i = 0; i < numpmid; i++) {
        if (pos + 8 > body)
            return -1;
        int32_t numval = (int32_t)word_at(sets + pos + 4);
        t->checksum += word_at(sets + pos);
        pos += 8;
        t->sets++;
        if (numval <= 0)
            continue;
        if (pos + 4 + 8 * (uint64_t)numval > body)
            return -1;
        uint32_t valfmt = word_at(sets + pos);
        if (valfmt > VALFMT_SPTR)
            return -1;
        if (valfmt != VALFMT_INSITU)
            nblocks += (uint64_t)numval;
        pos += 4 + 8 * (uint64_t)numval;
        t->values += numval;
    }
    /* second walk: the blocks, contiguous from the end of the sets to the trailer */
    uint64_t next_block = pos;
    if (nblocks > 0) {
        uint64_t at = stamp + 4;
        for (int32_t i = 0; i < numpmid; i++) {
            int32_t numval = (int32_t)word_at(sets + at + 4);
            at += 8;
            if (numval <= 0)
                continue;
            uint32_t valfmt = word_at(sets + at);
            at += 4;
            for (int32_t k = 0; k < numval; k++, at += 8) {
                if (valfmt == VALFMT_INSITU) {
                    t->checksum += word_at(sets + at + 4);
                    continue;
                }
                /* offsets count from the length word; `rec` starts after it */
                uint64_t off = 4 * ((uint64_t)word_at(sets + at + 4) - 2) - 4;
                if (off > body - 4)
                    return -1;
                /* the header is read where the value word says (not where the last
                 * block ended), so the loads do not wait on each other */
                uint32_t header = word_at(rec + off);
                uint32_t vlen = header & 0xffffff;
                if (off != next_block || vlen < 4 || vlen > body - off)
                    return -1;
                next_block += (vlen + 3) & ~3u;
                t->checksum += header;
                t->blocks++;
            }
        }
    }
    return next_block == body ? 0 : -1;
}

static int
scan_volume(const char *path, tally *t)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 8) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    int sts = 0;
    uint32_t label_len = word_at(map);
    int version = (int)(word_at(map + 4) & 0xff);
    size_t off = label_len;
    while (off + 4 <= size) {
        uint32_t len = word_at(map + off);
        if (len < 20 || len > size - off || word_at(map + off + len - 4) != len) {
            sts = -1;
            break;
        }
        if (check_record(map + off + 4, len, version, t) < 0) {
            sts = -1;
            break;
        }
        t->records++;
        off += len;
    }
    munmap((void *)map, size);
    return sts;
}

int
main(int argc, char **argv)
{
    int rounds = 5, c;
    while ((c = getopt(argc, argv, "r:")) != -1) {
        if (c == 'r')
            rounds = atoi(optarg);
        else
            return 2;
    }
    if (optind >= argc || rounds < 1) {
        fprintf(stderr, "usage: record_floor [-r rounds] volume...\n");
        return 2;
    }
    tally t = {0};
    double best = -1;
    for (int r = 0; r < rounds; r++) {
        memset(&t, 0, sizeof t);
        double start = cpu_s();
        for (int i = optind; i < argc; i++) {
            if (scan_volume(argv[i], &t) < 0) {
                fprintf(stderr, "%s: damaged record after %ld records\n", argv[i], t.records);
                return 1;
            }
        }
        double took = cpu_s() - start;
        if (best < 0 || took < best)
            best = took;
    }
    printf("{\"records\": %ld, \"marks\": %ld, \"sets\": %ld, \"values\": %ld, "
           "\"blocks\": %ld, \"checksum\": %llu, \"cpu_s\": %.6f}\n",
           t.records, t.marks, t.sets, t.values, t.blocks,
           (unsigned long long)t.checksum, best);
    return 0;
}
