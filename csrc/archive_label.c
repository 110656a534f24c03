/* Archive labels and the temporal index: the fixed-layout parts of archive files. */
#include "archive.h"
#include "cursor.h"

#define PM_LOG_MAGIC 0x50052600u
#define LABEL_V2_LEN 132u
#define LABEL_V3_LEN 808u

/* A fixed-width, NUL-padded string field: its bytes up to the first NUL, at most `cap`. */
static void string_field(const uint8_t *buf, size_t off, size_t width, size_t cap,
                         uint32_t *out_off, uint32_t *out_len)
{
    size_t n = 0;
    size_t limit = width < cap ? width : cap;
    while (n < limit && buf[off + n] != 0)
        n++;
    *out_off = (uint32_t)off;
    *out_len = (uint32_t)n;
}

/* v3 stamps store the low half of the seconds first (archive-format.md 3.2). */
static int64_t v3_seconds(const uint8_t *p)
{
    uint64_t lo = pcp_load_be32(p);
    uint64_t hi = pcp_load_be32(p + 4);
    return (int64_t)((hi << 32) | lo);
}

int pcp_archive_label_decode(const uint8_t *buf, size_t len, pcp_log_label *out)
{
    memset(out, 0, sizeof *out);
    /* libpcp reads the length and magic first: a short read there means an empty file. */
    if (len < 8)
        return PM_ERR_NODATA;
    uint32_t rlen = pcp_load_be32(buf);
    uint32_t magic = pcp_load_be32(buf + 4);
    uint32_t version = magic & 0xffu;
    if (version == 2) {
        if (rlen != LABEL_V2_LEN)
            return PM_ERR_LABEL;
    } else if (version == 3) {
        if (rlen != LABEL_V3_LEN)
            return PM_ERR_LABEL;
    } else {
        return PM_ERR_LABEL;
    }
    if (len < rlen || pcp_load_be32(buf + rlen - 4) != rlen)
        return PM_ERR_LABEL;
    if ((magic & 0xffffff00u) != PM_LOG_MAGIC)
        return PM_ERR_LABEL;

    out->version = (int32_t)version;
    out->magic = (int32_t)magic;
    out->len = rlen;
    out->pid = (int32_t)pcp_load_be32(buf + 8);
    if (version == 2) {
        out->sec = (int32_t)pcp_load_be32(buf + 12);
        out->nsec = pcp_usec_to_nsec(pcp_load_be32(buf + 16));
        out->vol = (int32_t)pcp_load_be32(buf + 20);
        string_field(buf, 24, 64, 63, &out->host_off, &out->host_len);
        string_field(buf, 88, 40, 39, &out->tz_off, &out->tz_len);
        out->zone_off = 0;
        out->zone_len = 0;
    } else {
        out->sec = v3_seconds(buf + 12);
        out->nsec = (int32_t)pcp_load_be32(buf + 20);
        out->vol = (int32_t)pcp_load_be32(buf + 24);
        out->features = pcp_load_be32(buf + 28);
        string_field(buf, 36, 256, 255, &out->host_off, &out->host_len);
        string_field(buf, 292, 256, 255, &out->tz_off, &out->tz_len);
        string_field(buf, 548, 256, 255, &out->zone_off, &out->zone_len);
    }
    return 0;
}

int pcp_archive_index_decode(const uint8_t *buf, size_t len, size_t label_len, int version,
                             int32_t cap, pcp_index_entry *out)
{
    size_t entry = version == 3 ? 32 : 20;
    if (label_len > len)
        return 0;
    size_t count = (len - label_len) / entry;
    if (count > INT32_MAX)
        return PM_ERR_TOOBIG;
    for (size_t i = 0; i < count && i < (size_t)(cap > 0 ? cap : 0); i++) {
        const uint8_t *p = buf + label_len + i * entry;
        pcp_index_entry *e = &out[i];
        if (version == 3) {
            e->sec = v3_seconds(p);
            e->nsec = (int32_t)pcp_load_be32(p + 8);
            e->vol = (int32_t)pcp_load_be32(p + 12);
            e->off_meta = (int64_t)pcp_load_be64(p + 16);
            e->off_data = (int64_t)pcp_load_be64(p + 24);
        } else {
            e->sec = (int32_t)pcp_load_be32(p);
            e->nsec = pcp_usec_to_nsec(pcp_load_be32(p + 4));
            e->vol = (int32_t)pcp_load_be32(p + 8);
            e->off_meta = (int32_t)pcp_load_be32(p + 12);
            e->off_data = (int32_t)pcp_load_be32(p + 16);
        }
    }
    return (int)count;
}
