/* libFuzzer harness for the archive writers (archive_write.c).
 *
 * Input: a version byte, then a program of ops, each one op byte and its arguments:
 *   0  pmiPutValue: metric slot, type, singular flag, instance, value text (len byte)
 *   1  a value set as pmiPutResult gives it (pmid, numval, valfmt, values with blocks)
 *   2  encode the pending record, decode it again, clear
 *   3  a frame of rows (pcp_archive_write_frame) over fuzzed columns, each record decoded
 *   4  the metadata encoders (label, index, mark, desc, indom, text, label set) with
 *      fuzzed arguments
 * Every encoder is called for its size first, then into an exact-size allocation (ASan
 * catches a write past it), and must return that size; every data record must pass the
 * archive record decoder (pcp_archive_record_decode) with the expected value count. */
#include "fuzz_common.h"
#include "archive.h"
#include "archive_write.h"
#include "result.h"

static void decode_record(const uint8_t *rec, size_t len, int version, int32_t expect_sets)
{
    int32_t numpmid = -1, nvalues = -1;
    CHECK(pcp_archive_record_scan(rec, len, version, &numpmid, &nvalues) == 0);
    CHECK(expect_sets < 0 || numpmid == expect_sets);
    void *mem = fz_alloc(pcp_result_mem_size(numpmid, nvalues), 1);
    pcp_result res;
    pcp_result_bind(&res, mem, numpmid, nvalues);
    res.numpmid = numpmid;
    res.nvalues = nvalues;
    CHECK(pcp_archive_record_decode(rec, len, version, &res) == 0);
    free(mem);
}

static void encode_pending(pcp_pending *p, int version, fz_reader *r)
{
    int64_t sec = (int32_t)fz_u32(r);
    int32_t nsec = (int32_t)(fz_u32(r) % 1000000000u);
    pcp_pending_sort(p);
    int64_t need = pcp_pending_encode(p, version, sec, nsec, NULL, 0);
    CHECK(need > 0 || need == PM_ERR_TOOBIG);
    if (need > 0) {
        uint8_t *buf = fz_alloc((size_t)need, 1);
        CHECK(pcp_pending_encode(p, version, sec, nsec, buf, (size_t)need) == need);
        if (need > 1)
            CHECK(pcp_pending_encode(p, version, sec, nsec, buf, (size_t)need - 1) == need);
        /* a set that failed its first value is written as an error code: records only
         * decode when the caller kept to libpcp's types (always true here) */
        decode_record(buf, (size_t)need, version, pcp_pending_numpmid(p));
        free(buf);
    }
    pcp_pending_clear(p);
}

static void put_text(pcp_pending *p, fz_reader *r)
{
    /* a metric slot always has one type and one indom, as pmiAddMetric fixes them */
    int32_t slot = fz_u8(r) % 16;
    int type = slot % 8;        /* 7 is not a writable type: PM_ERR_TYPE */
    int singular = slot >= 8;
    int32_t inst = singular ? -1 : (int32_t)fz_u32(r);
    size_t n = fz_u8(r);
    uint8_t *text = fz_bytes(r, n + 1);
    text[n] = 0;
    int sts = pcp_pending_put_text(p, slot, 0x1000u + (uint32_t)slot, singular, type, inst,
                                   (const char *)text);
    CHECK(sts == 0 || sts == PMI_ERR_DUPVALUE || sts == PM_ERR_CONV || sts == PM_ERR_TYPE);
    free(text);
}

static void put_set(pcp_pending *p, fz_reader *r)
{
    uint32_t pmid = fz_u32(r);
    int32_t numval = (int32_t)(fz_u8(r) % 6) - 1;   /* -1 (an error code) .. 4 */
    int32_t valfmt = fz_u8(r) & 1;
    CHECK(pcp_pending_add_set(p, pmid, numval < 0 ? PM_ERR_VALUE : 0, valfmt) == 0);
    for (int32_t j = 0; j < numval; j++) {
        int32_t inst = (int32_t)fz_u32(r);
        int32_t vtype = fz_u8(r) % 7;
        /* blocks as a caller's pmResult holds them: the length its type needs */
        uint32_t vlen = (uint32_t)pcp_block_min_len(vtype);
        if (vtype == PM_TYPE_STRING)
            vlen += fz_u8(r) % 24;
        uint8_t *block = fz_bytes(r, vlen);
        CHECK(pcp_pending_add_value(p, inst, (int32_t)fz_u32(r), block, vlen, vtype) == 0);
        free(block);
    }
}

static void frame(int version, fz_reader *r)
{
    static const int types[] = {PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64,
                                PM_TYPE_FLOAT, PM_TYPE_DOUBLE, PM_TYPE_STRING,
                                PM_TYPE_AGGREGATE};
    int32_t nmetrics = fz_u8(r) % 4;
    int32_t nrows = fz_u8(r) % 5;
    pcp_frame_metric m[4];
    void *owned[4][5];
    memset(owned, 0, sizeof owned);
    for (int32_t i = 0; i < nmetrics; i++) {
        int32_t ncol = fz_u8(r) % 4;
        size_t cells = (size_t)ncol * (size_t)nrows;
        m[i].pmid = fz_u32(r);
        m[i].type = types[fz_u8(r) % 8];
        m[i].ncol = ncol;
        int32_t *inst = fz_alloc((size_t)ncol, sizeof *inst);
        for (int32_t c = 0; c < ncol; c++)
            inst[c] = c;
        m[i].inst = inst;
        m[i].values = fz_bytes(r, 8 * cells);
        m[i].present = (fz_u8(r) & 1) ? fz_bytes(r, cells) : NULL;
        int64_t *off = fz_alloc(cells + 1, sizeof *off);
        off[0] = 0;
        for (size_t k = 0; k < cells; k++)
            off[k + 1] = off[k] + fz_u8(r) % 9;
        m[i].str_off = off;
        m[i].str_data = fz_bytes(r, (size_t)off[cells] + 1);
        owned[i][0] = inst;
        owned[i][1] = (void *)m[i].values;
        owned[i][2] = (void *)m[i].present;
        owned[i][3] = off;
        owned[i][4] = (void *)m[i].str_data;
    }
    int64_t *sec = fz_alloc((size_t)nrows, sizeof *sec);
    int32_t *nsec = fz_alloc((size_t)nrows, sizeof *nsec);
    int64_t *reclen = fz_alloc((size_t)nrows, sizeof *reclen);
    for (int32_t k = 0; k < nrows; k++) {
        sec[k] = (int32_t)fz_u32(r);
        nsec[k] = (int32_t)(fz_u32(r) % 1000000000u);
    }
    int64_t total = pcp_archive_write_frame(m, nmetrics, nrows, version, sec, nsec, NULL, 0,
                                            reclen);
    CHECK(total >= 0);
    uint8_t *out = fz_alloc((size_t)total, 1);
    CHECK(pcp_archive_write_frame(m, nmetrics, nrows, version, sec, nsec, out, (size_t)total,
                                  reclen) == total);
    size_t at = 0;
    for (int32_t k = 0; k < nrows; k++) {
        if (reclen[k] == 0)
            continue;
        CHECK(at + (size_t)reclen[k] <= (size_t)total);
        decode_record(out + at, (size_t)reclen[k], version, -1);
        at += (size_t)reclen[k];
    }
    CHECK(at == (size_t)total);
    free(out);
    free(sec);
    free(nsec);
    free(reclen);
    for (int32_t i = 0; i < nmetrics; i++)
        for (int j = 0; j < 5; j++)
            free(owned[i][j]);
}

/* size, then exact-size encode (the return must match; ASan watches the allocation) */
#define SIZED(call_null, call_buf)                  \
    do {                                            \
        int n_ = (call_null);                       \
        if (n_ > 0) {                               \
            uint8_t *buf = fz_alloc((size_t)n_, 1); \
            size_t cap = (size_t)n_;                \
            CHECK((call_buf) == n_);                \
            free(buf);                              \
        }                                           \
    } while (0)

static void metadata(int version, fz_reader *r)
{
    size_t n = fz_u8(r);
    char *text = (char *)fz_bytes(r, n + 1);
    text[n] = 0;
    int64_t sec = (int32_t)fz_u32(r);
    int32_t nsec = (int32_t)fz_u32(r);
    SIZED(pcp_archive_write_label(NULL, 0, version, 1, sec, nsec, -1, text, text, text),
          pcp_archive_write_label(buf, cap, version, 1, sec, nsec, -1, text, text, text));
    SIZED(pcp_archive_write_index(NULL, 0, version, sec, nsec, 0, fz_u32(r), fz_u32(r)),
          pcp_archive_write_index(buf, cap, version, sec, nsec, 0, 1, 2));
    SIZED(pcp_archive_write_mark(NULL, 0, version, sec, nsec),
          pcp_archive_write_mark(buf, cap, version, sec, nsec));
    SIZED(pcp_archive_write_desc(NULL, 0, 1, 2, 3, 4, 5, text, n),
          pcp_archive_write_desc(buf, cap, 1, 2, 3, 4, 5, text, n));
    SIZED(pcp_archive_write_text(NULL, 0, 5, 6, text, n),
          pcp_archive_write_text(buf, cap, 5, 6, text, n));
    int32_t numinst = fz_u8(r) % 5;
    int32_t inst[4] = {1, 2, 3, 4};
    SIZED(pcp_archive_write_indom(NULL, 0, version, sec, nsec, 7, numinst, inst, text, n + 1),
          pcp_archive_write_indom(buf, cap, version, sec, nsec, 7, numinst, inst, text, n + 1));
    int32_t nlabels = fz_u8(r) % 4;
    uint32_t labels[15];
    for (int k = 0; k < 15; k++)
        labels[k] = fz_u32(r);
    SIZED(pcp_archive_write_labelset(NULL, 0, version, sec, nsec, 0x10, 9, 0, text, n, nlabels,
                                     labels),
          pcp_archive_write_labelset(buf, cap, version, sec, nsec, 0x10, 9, 0, text, n,
                                     nlabels, labels));
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    int version = (fz_u8(&r) & 1) ? 3 : 2;
    pcp_pending *p = pcp_pending_new();
    CHECK(p != NULL);
    for (int steps = 0; r.left > 0 && steps < 64; steps++) {
        switch (fz_u8(&r) % 5) {
        case 0:
            put_text(p, &r);
            break;
        case 1:
            put_set(p, &r);
            break;
        case 2:
            encode_pending(p, version, &r);
            break;
        case 3:
            frame(version, &r);
            break;
        default:
            metadata(version, &r);
            break;
        }
    }
    encode_pending(p, version, &r);
    pcp_pending_free(p);
    return 0;
}
