/* Test-only oracle: libpcp's own pmUnpackEventRecords / pmUnpackHighResEventRecords on
 * the bytes our package received, so the two can be compared value by value.
 *
 * Reads commands from stdin, one per line:
 *   pdu <hex>        a RESULT or HIGHRES_RESULT PDU; libpcp decodes it (network to host
 *                    order is libpcp's own conversion)
 *   target all       every DPTR/SPTR value whose block type is EVENT or HIGHRES_EVENT
 *   target <i> <j>   value j of value set i only
 *   u32 <off> <v>    after decoding, store v (host order) at byte <off> of the target's
 *   u64 <off> <v>    value block (ea_len truncation, counts, lengths, flags ...)
 *   numval <n>       replace the target set's numval / valfmt
 *   valfmt <n>
 *   block <hex>      instead of a PDU: one value block exactly as on the wire (header
 *                    word included), for hostile arrays that libpcp 6.0.3's unchecked
 *                    PDU decoder must not see. It is turned to host order by a bounded
 *                    copy of the conversion libpcp applies to a received event array
 *                    (same walk, same fields, but never past the block's bytes), then
 *                    handed to the unpack functions as value 0 of a DPTR set
 *   archive <path>   open the archive with libpcp, read every record with
 *                    pmFetchHighResArchive and print one JSON line per record: its
 *                    time and every event value unpacked as with "target all"
 *   go               unpack every target with both functions, print one JSON line, and
 *                    forget the mutations (the PDU / block and the target stay)
 * Each target block is copied into its own buffer with 64 zero bytes after it, so the
 * unchecked reads libpcp makes for too-short parameters stay inside the allocation.
 *
 * Build: cc -O2 -o event_oracle event_oracle.c -lpcp */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pcp/pmapi.h>

/* libpcp internals (libpcp.h is not installed); 6.0.3 signatures and layout. */
typedef uint32_t __pmPDU;
typedef struct { int64_t sec; int32_t nsec; } oracle_timestamp;
typedef struct {
    oracle_timestamp timestamp;
    int numpmid;
    pmValueSet *vset[1];
} oracle_result;
extern __pmPDU *__pmFindPDUBuf(int);
extern int __pmDecodeResult(__pmPDU *, oracle_result **);
extern int __pmDecodeHighResResult(__pmPDU *, oracle_result **);

#define PAD 64
#define MAXMUT 64

static oracle_result *res;
static int decode_sts = -1;
static int target_i = -1, target_j = -1;
static struct { int wide; long off; long long v; } muts[MAXMUT];
static int nmut;
static int set_numval, set_valfmt, numval_v, valfmt_v;

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void load_pdu(const char *hex)
{
    size_t n = strlen(hex) / 2;
    __pmPDU *buf = __pmFindPDUBuf((int)n + PAD);
    unsigned char *p = (unsigned char *)buf;
    memset(p, 0, n + PAD);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]));
    uint32_t type = ((uint32_t)p[4] << 24) | ((uint32_t)p[5] << 16) | ((uint32_t)p[6] << 8) | p[7];
    /* libpcp's PDU reader hands decoders the header (len, type, from) in host order */
    for (int w = 0; w < 3; w++) {
        uint32_t v = ((uint32_t)p[4 * w] << 24) | ((uint32_t)p[4 * w + 1] << 16) |
                     ((uint32_t)p[4 * w + 2] << 8) | p[4 * w + 3];
        memcpy(p + 4 * w, &v, 4);
    }
    res = NULL;
    if (type == 0x7015)
        decode_sts = __pmDecodeHighResResult(buf, &res);
    else
        decode_sts = __pmDecodeResult(buf, &res);
}

/* ---- block mode: wire block -> host order, bounded ---------------------------------- */

static unsigned char *raw_block;
static size_t raw_len;

static int have(size_t pos, size_t n, size_t avail)
{
    return pos <= avail && avail - pos >= n;
}

static void swap32(unsigned char *p)
{
    uint32_t v = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    memcpy(p, &v, 4);
}

static void swap64(unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    memcpy(p, &v, 8);
}

/* What libpcp does to a received PM_TYPE_[HIGHRES_]EVENT block: header word, count,
 * then each record's timestamp, flags and nparams, and each parameter's pmid, type/len
 * word and 32/64-bit value, walking nparams (none for MISSED) and 4 + pad4(ep_len). */
static void block_to_host(unsigned char *b, size_t avail)
{
    if (avail < 4)
        return;
    swap32(b);
    uint32_t hdr;
    memcpy(&hdr, b, 4);
    unsigned vtype = hdr >> 24;
    if ((vtype != PM_TYPE_EVENT && vtype != PM_TYPE_HIGHRES_EVENT) || avail < 8)
        return;
    swap32(b + 4);
    int32_t nrec;
    memcpy(&nrec, b + 4, 4);
    size_t pos = 8, rh = vtype == PM_TYPE_HIGHRES_EVENT ? 24 : 16;
    for (int32_t r = 0; r < nrec; r++) {
        if (!have(pos, rh, avail))
            return;
        if (vtype == PM_TYPE_HIGHRES_EVENT) {
            swap64(b + pos);
            swap64(b + pos + 8);
        } else {
            swap32(b + pos);
            swap32(b + pos + 4);
        }
        swap32(b + pos + rh - 8);
        swap32(b + pos + rh - 4);
        uint32_t flags;
        int32_t np;
        memcpy(&flags, b + pos + rh - 8, 4);
        memcpy(&np, b + pos + rh - 4, 4);
        if (flags & PM_EVENT_FLAG_MISSED)
            np = 0;
        pos += rh;
        for (int32_t p = 0; p < np; p++) {
            if (!have(pos, 8, avail))
                return;
            swap32(b + pos);
            swap32(b + pos + 4);
            uint32_t w;
            memcpy(&w, b + pos + 4, 4);
            unsigned type = w >> 24, len = w & 0xffffff;
            switch (type) {
            case PM_TYPE_32: case PM_TYPE_U32: case PM_TYPE_FLOAT:
                if (have(pos + 8, 4, avail))
                    swap32(b + pos + 8);
                break;
            case PM_TYPE_64: case PM_TYPE_U64: case PM_TYPE_DOUBLE:
                if (have(pos + 8, 8, avail))
                    swap64(b + pos + 8);
                break;
            }
            pos += 4 + ((len + 3) & ~3u);
        }
    }
}

static void load_block(const char *hex)
{
    free(raw_block);
    raw_len = strlen(hex) / 2;
    raw_block = calloc(1, raw_len + PAD);
    for (size_t i = 0; i < raw_len; i++)
        raw_block[i] = (unsigned char)(hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]));
    block_to_host(raw_block, raw_len);
    res = NULL;
    decode_sts = 0;
}

static void print_vset(const pmValueSet *vs)
{
    printf("{\"pmid\":%u,\"numval\":%d,\"valfmt\":%d", vs->pmid, vs->numval, vs->valfmt);
    if (vs->numval >= 1) {
        const pmValue *v = &vs->vlist[0];
        printf(",\"inst\":%d", v->inst);
        if (vs->valfmt == PM_VAL_INSITU) {
            printf(",\"lval\":%d", v->value.lval);
        } else {
            const pmValueBlock *b = v->value.pval;
            printf(",\"vtype\":%u,\"vlen\":%u,\"hex\":\"", b->vtype, b->vlen);
            /* numbers in host order, as libpcp hands them out */
            for (unsigned k = 0; k + 4 < b->vlen; k++)
                printf("%02x", (unsigned char)b->vbuf[k]);
            printf("\"");
        }
    }
    printf("}");
}

static void print_unpack_here(pmValueSet *vs, int j, int highres);

/* libpcp 6.0.3 crashes on some broken arrays (a string parameter with ep_len < 4 makes
 * it memcpy a negative size): unpack in a child, which keeps its output in a big buffer
 * until it is done, and report {"crash": signal} if it dies. */
static void print_unpack(pmValueSet *vs, int j, int highres)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        static char big[1 << 22];
        setvbuf(stdout, big, _IOFBF, sizeof big);
        print_unpack_here(vs, j, highres);
        fflush(stdout);
        _exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        printf("{\"crash\":%d}", pid > 0 && WIFSIGNALED(st) ? WTERMSIG(st) : -1);
}

static void print_unpack_here(pmValueSet *vs, int j, int highres)
{
    int n;
    printf("{");
    if (highres) {
        pmHighResResult **rr = NULL;
        n = pmUnpackHighResEventRecords(vs, j, &rr);
        printf("\"sts\":%d,\"null\":%d,\"records\":[", n, rr == NULL);
        for (int r = 0; n > 0 && r < n; r++) {
            printf("%s{\"sec\":%lld,\"nsec\":%lld,\"numpmid\":%d,\"vsets\":[", r ? "," : "",
                   (long long)rr[r]->timestamp.tv_sec, (long long)rr[r]->timestamp.tv_nsec,
                   rr[r]->numpmid);
            for (int k = 0; k < rr[r]->numpmid; k++) {
                if (k) printf(",");
                print_vset(rr[r]->vset[k]);
            }
            printf("]}");
        }
        printf("],\"sentinel\":%d", n > 0 ? rr[n] == NULL : 1);
        if (n > 0)
            pmFreeHighResEventResult(rr);
    } else {
        pmResult **rr = NULL;
        n = pmUnpackEventRecords(vs, j, &rr);
        printf("\"sts\":%d,\"null\":%d,\"records\":[", n, rr == NULL);
        for (int r = 0; n > 0 && r < n; r++) {
            printf("%s{\"sec\":%lld,\"nsec\":%lld,\"numpmid\":%d,\"vsets\":[", r ? "," : "",
                   (long long)rr[r]->timestamp.tv_sec, (long long)rr[r]->timestamp.tv_usec * 1000,
                   rr[r]->numpmid);
            for (int k = 0; k < rr[r]->numpmid; k++) {
                if (k) printf(",");
                print_vset(rr[r]->vset[k]);
            }
            printf("]}");
        }
        printf("],\"sentinel\":%d", n > 0 ? rr[n] == NULL : 1);
        if (n > 0)
            pmFreeEventResult(rr);
    }
    printf("}");
}

/* Unpack value j of set i from a private copy (mutations applied to the copy). */
static void run_one(int i, int j, int *first)
{
    const pmValueSet *orig = res->vset[i];
    const pmValueBlock *ob = orig->vlist[j].value.pval;
    size_t vlen = ob->vlen;
    unsigned char *blk = calloc(1, vlen + PAD);
    memcpy(blk, ob, vlen);
    for (int m = 0; m < nmut; m++) {
        if (muts[m].off < 0 || (size_t)muts[m].off + (muts[m].wide ? 8 : 4) > vlen + PAD)
            continue;
        if (muts[m].wide) {
            int64_t v = (int64_t)muts[m].v;
            memcpy(blk + muts[m].off, &v, 8);
        } else {
            uint32_t v = (uint32_t)muts[m].v;
            memcpy(blk + muts[m].off, &v, 4);
        }
    }
    pmValueSet vs;
    memset(&vs, 0, sizeof vs);
    vs.pmid = orig->pmid;
    vs.numval = set_numval ? numval_v : 1;
    vs.valfmt = set_valfmt ? valfmt_v : orig->valfmt;
    vs.vlist[0].inst = orig->vlist[j].inst;
    vs.vlist[0].value.pval = (pmValueBlock *)blk;
    printf("%s{\"vset\":%d,\"value\":%d,\"inst\":%d,\"classic\":", *first ? "" : ",", i, j,
           orig->vlist[j].inst);
    *first = 0;
    print_unpack(&vs, 0, 0);
    printf(",\"highres\":");
    print_unpack(&vs, 0, 1);
    printf("}");
    free(blk);
}

static void go(void)
{
    printf("{\"decode\":%d,\"values\":[", decode_sts);
    int first = 1;
    if (raw_block != NULL && res == NULL) {
        pmValueSet vs;
        memset(&vs, 0, sizeof vs);
        vs.numval = set_numval ? numval_v : 1;
        vs.valfmt = set_valfmt ? valfmt_v : PM_VAL_DPTR;
        vs.vlist[0].inst = PM_IN_NULL;
        vs.vlist[0].value.pval = (pmValueBlock *)raw_block;
        printf("{\"vset\":0,\"value\":0,\"inst\":-1,\"classic\":");
        print_unpack(&vs, 0, 0);
        printf(",\"highres\":");
        print_unpack(&vs, 0, 1);
        printf("}");
    } else if (decode_sts >= 0 && res != NULL) {
        for (int i = 0; i < res->numpmid; i++) {
            const pmValueSet *vs = res->vset[i];
            if (target_i >= 0 && i != target_i)
                continue;
            if (vs->numval < 1 || vs->valfmt == PM_VAL_INSITU)
                continue;
            for (int j = 0; j < vs->numval; j++) {
                if (target_j >= 0 && j != target_j)
                    continue;
                unsigned t = vs->vlist[j].value.pval->vtype;
                if (target_i < 0 && t != PM_TYPE_EVENT && t != PM_TYPE_HIGHRES_EVENT)
                    continue;
                run_one(i, j, &first);
            }
        }
    }
    printf("]}\n");
    fflush(stdout);
    nmut = 0;
    set_numval = set_valfmt = 0;
}

static void archive(const char *path)
{
    int ctx = pmNewContext(PM_CONTEXT_ARCHIVE, path);
    if (ctx < 0) {
        printf("{\"archive_error\":%d}\n", ctx);
        return;
    }
    pmHighResResult *hr;
    int sts;
    while ((sts = pmFetchHighResArchive(&hr)) >= 0) {
        printf("{\"sec\":%lld,\"nsec\":%lld,\"numpmid\":%d,\"values\":[",
               (long long)hr->timestamp.tv_sec, (long long)hr->timestamp.tv_nsec, hr->numpmid);
        int first = 1;
        for (int i = 0; i < hr->numpmid; i++) {
            pmValueSet *vs = hr->vset[i];
            if (vs->numval < 1 || vs->valfmt == PM_VAL_INSITU)
                continue;
            for (int j = 0; j < vs->numval; j++) {
                unsigned t = vs->vlist[j].value.pval->vtype;
                if (t != PM_TYPE_EVENT && t != PM_TYPE_HIGHRES_EVENT)
                    continue;
                printf("%s{\"vset\":%d,\"value\":%d,\"inst\":%d,\"classic\":",
                       first ? "" : ",", i, j, vs->vlist[j].inst);
                first = 0;
                print_unpack(vs, j, 0);
                printf(",\"highres\":");
                print_unpack(vs, j, 1);
                printf("}");
            }
        }
        printf("]}\n");
        pmFreeHighResResult(hr);
    }
    printf("{\"end\":%d}\n", sts);
    fflush(stdout);
    pmDestroyContext(ctx);
}

int main(void)
{
    /* The unpack functions name event.flags / event.missed through the current context. */
    int ctx = pmNewContext(PM_CONTEXT_LOCAL, NULL);
    if (ctx < 0)
        ctx = pmNewContext(PM_CONTEXT_HOST, "local:");
    if (ctx < 0) {
        fprintf(stderr, "event_oracle: no context: %s\n", pmErrStr(ctx));
        return 1;
    }
    static char line[1 << 22];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "pdu ", 4) == 0) {
            free(raw_block);
            raw_block = NULL;
            load_pdu(line + 4);
        } else if (strncmp(line, "block ", 6) == 0) {
            load_block(line + 6);
        } else if (strcmp(line, "target all") == 0) {
            target_i = target_j = -1;
        } else if (sscanf(line, "target %d %d", &target_i, &target_j) == 2) {
            ;
        } else if (strncmp(line, "u32 ", 4) == 0 || strncmp(line, "u64 ", 4) == 0) {
            if (nmut < MAXMUT && sscanf(line + 4, "%ld %lld", &muts[nmut].off, &muts[nmut].v) == 2) {
                muts[nmut].wide = line[1] == '6';
                nmut++;
            }
        } else if (sscanf(line, "numval %d", &numval_v) == 1) {
            set_numval = 1;
        } else if (sscanf(line, "valfmt %d", &valfmt_v) == 1) {
            set_valfmt = 1;
        } else if (strncmp(line, "archive ", 8) == 0) {
            archive(line + 8);
        } else if (strcmp(line, "go") == 0) {
            go();
        }
    }
    return 0;
}
