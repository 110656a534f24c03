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
 *   go               unpack every target with both functions, print one JSON line, and
 *                    forget the mutations (the PDU and the target stay)
 * Each target block is copied into its own buffer with 64 zero bytes after it, so the
 * unchecked reads libpcp makes for too-short parameters stay inside the allocation.
 *
 * Build: cc -O2 -o event_oracle event_oracle.c -lpcp */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void print_unpack(pmValueSet *vs, int j, int highres)
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
    if (decode_sts >= 0 && res != NULL) {
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
            load_pdu(line + 4);
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
        } else if (strcmp(line, "go") == 0) {
            go();
        }
    }
    return 0;
}
