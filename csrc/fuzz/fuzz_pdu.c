/* libFuzzer harness for PDU framing and the small-reply decoders (pdu_decode.c).
 *
 * Every decoder sees each input twice: exactly as received, and in a copy whose length
 * and type words are patched to the input size and the decoder's PDU type (so the
 * mutator does not have to rediscover the framing). Output arrays are sized the way
 * pdu.h documents (from len) in exact-size allocations, then once more at half that
 * room; every offset+length a decoder returns must lie inside the buffer (abort()). */
#include "fuzz_common.h"
#include "pdu.h"

static size_t room(size_t len, size_t fixed, size_t per)
{
    return len >= fixed ? (len - fixed) / per : 0;
}

static void check_span(size_t len, uint32_t off, int32_t n)
{
    CHECK(n >= 0);
    CHECK((size_t)off <= len);
    CHECK((size_t)n <= len - off);
}

static void do_header(const uint8_t *buf, size_t len)
{
    int32_t type = -1, from = -1;
    int32_t r = pcp_pdu_header(buf, len, &type, &from);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
        return;
    }
    CHECK(len >= 12);
    CHECK(r >= PDU_HEADER_LEN && r <= PDU_MAX_LEN);
    CHECK((uint32_t)r == fz_be32(buf));
    CHECK(type >= 0 && (uint32_t)type == fz_be32(buf + 4));
    CHECK((uint32_t)from == fz_be32(buf + 8));
}

static void do_error(const uint8_t *buf, size_t len)
{
    int32_t code;
    uint32_t datum;
    int r = pcp_pdu_decode_error(buf, len, &code, &datum);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
        return;
    }
    CHECK(r == 0 && (len == 16 || len == 20));
    CHECK((uint32_t)code == fz_be32(buf + 12));
    CHECK(datum == (len == 20 ? fz_be32(buf + 16) : 0));
}

static void do_desc(const uint8_t *buf, size_t len)
{
    pcp_desc *d = fz_alloc(1, sizeof *d);
    int r = pcp_pdu_decode_desc(buf, len, d);
    CHECK(r == 0 || r == PM_ERR_IPC);
    if (r == 0) {
        CHECK(len == 32);
        CHECK(d->pmid == fz_be32(buf + 12) && d->units == fz_be32(buf + 28));
    }
    free(d);
}

static void descs_with(const uint8_t *buf, size_t len, int32_t expected)
{
    pcp_desc *d = fz_alloc((size_t)expected, sizeof *d);
    int r = pcp_pdu_decode_descs(buf, len, expected, d);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
    } else {
        CHECK(r == expected && len == 16 + 20 * (size_t)r);
        for (int32_t i = 0; i < r; i++)
            CHECK(d[i].pmid == fz_be32(buf + 16 + 20 * (size_t)i));
    }
    free(d);
}

static void do_descs(const uint8_t *buf, size_t len)
{
    descs_with(buf, len, (int32_t)room(len, 16, 20));
    if (len >= 16) {
        uint32_t n = fz_be32(buf + 12);
        if (n <= 4096)
            descs_with(buf, len, (int32_t)n);
    }
}

static void instance_with(const uint8_t *buf, size_t len, size_t cap)
{
    uint32_t indom;
    int32_t *inst = fz_alloc(cap, sizeof *inst);
    uint32_t *off = fz_alloc(cap, sizeof *off);
    int32_t *nlen = fz_alloc(cap, sizeof *nlen);
    int r = pcp_pdu_decode_instance(buf, len, &indom, (int32_t)cap, inst, off, nlen);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
    } else {
        CHECK((size_t)r <= cap);
        CHECK(indom == fz_be32(buf + 12));
        for (int32_t i = 0; i < r; i++) {
            check_span(len, off[i], nlen[i]);
            CHECK(off[i] >= 28); /* after the fixed part and the entry's inst/namelen */
        }
    }
    free(inst);
    free(off);
    free(nlen);
}

static void do_instance(const uint8_t *buf, size_t len)
{
    size_t cap = room(len, 20, 8);
    instance_with(buf, len, cap);
    instance_with(buf, len, cap / 2);
}

static void do_text(const uint8_t *buf, size_t len)
{
    uint32_t off;
    int32_t tlen;
    int r = pcp_pdu_decode_text(buf, len, &off, &tlen);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
        return;
    }
    CHECK(r == 0 && off == 20);
    check_span(len, off, tlen);
}

static void ids_with(const uint8_t *buf, size_t len, size_t cap)
{
    int32_t sts;
    uint32_t *ids = fz_alloc(cap, sizeof *ids);
    int r = pcp_pdu_decode_pmns_ids(buf, len, &sts, (int32_t)cap, ids);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
    } else {
        CHECK(r >= 1 && (size_t)r <= cap && len == 20 + 4 * (size_t)r);
        for (int32_t i = 0; i < r; i++)
            CHECK(ids[i] == fz_be32(buf + 20 + 4 * (size_t)i));
    }
    free(ids);
}

static void do_pmns_ids(const uint8_t *buf, size_t len)
{
    size_t cap = room(len, 20, 4);
    ids_with(buf, len, cap);
    ids_with(buf, len, cap / 2);
}

static void names_with(const uint8_t *buf, size_t len, size_t cap)
{
    int32_t has_status = -1;
    int32_t *status = fz_alloc(cap, sizeof *status);
    uint32_t *off = fz_alloc(cap, sizeof *off);
    int32_t *nlen = fz_alloc(cap, sizeof *nlen);
    int r = pcp_pdu_decode_pmns_names(buf, len, (int32_t)cap, &has_status, status, off, nlen);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
    } else {
        CHECK((size_t)r <= cap);
        CHECK(has_status == 0 || has_status == 1);
        for (int32_t i = 0; i < r; i++) {
            check_span(len, off[i], nlen[i]);
            CHECK(off[i] >= 28);
        }
    }
    free(status);
    free(off);
    free(nlen);
}

static void do_pmns_names(const uint8_t *buf, size_t len)
{
    size_t cap = room(len, 24, 4);
    names_with(buf, len, cap);
    names_with(buf, len, cap / 2);
}

static void labels_with(const uint8_t *buf, size_t len, size_t set_cap, size_t label_cap)
{
    int32_t ident, type;
    pcp_labelset *sets = fz_alloc(set_cap, sizeof *sets);
    pcp_label *labels = fz_alloc(label_cap, sizeof *labels);
    int r = pcp_pdu_decode_labels(buf, len, &ident, &type, (int32_t)set_cap, sets,
                                  (int32_t)label_cap, labels);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
    } else {
        CHECK((size_t)r <= set_cap);
        CHECK((uint32_t)ident == fz_be32(buf + 12) && (uint32_t)type == fz_be32(buf + 16));
        int64_t used = 0;
        for (int32_t i = 0; i < r; i++) {
            const pcp_labelset *s = &sets[i];
            check_span(len, s->json_off, s->json_len);
            CHECK(s->first == used);
            if (s->nlabels < 0)
                continue;
            CHECK(s->nlabels < 255);
            used += s->nlabels;
            CHECK(used <= (int64_t)label_cap);
            for (int32_t j = 0; j < s->nlabels; j++) {
                const pcp_label *l = &labels[s->first + j];
                CHECK((size_t)l->name + l->namelen <= (size_t)s->json_len);
                CHECK((size_t)l->value + l->valuelen <= (size_t)s->json_len);
                /* hence also inside the buffer */
                CHECK((size_t)s->json_off + l->name + l->namelen <= len);
                CHECK((size_t)s->json_off + l->value + l->valuelen <= len);
            }
        }
    }
    free(sets);
    free(labels);
}

static void do_labels(const uint8_t *buf, size_t len)
{
    size_t sc = room(len, 28, 16), lc = room(len, 28, 8);
    labels_with(buf, len, sc, lc);
    labels_with(buf, len, sc / 2, lc / 2);
}

static void do_attr(const uint8_t *buf, size_t len)
{
    int32_t attr;
    uint32_t off;
    int32_t vlen;
    int r = pcp_pdu_decode_attr(buf, len, &attr, &off, &vlen);
    if (r < 0) {
        CHECK(r == PM_ERR_IPC);
        return;
    }
    CHECK(r == 0 && off == 16 && vlen < 4096);
    check_span(len, off, vlen);
    CHECK(off + (size_t)vlen == len);
}

typedef void (*decoder_fn)(const uint8_t *, size_t);

static const struct {
    uint32_t type;
    decoder_fn fn;
} DECODERS[] = {
    {PDU_ERROR, do_error},         {PDU_DESC, do_desc},
    {PDU_DESCS, do_descs},         {PDU_INSTANCE, do_instance},
    {PDU_TEXT, do_text},           {PDU_PMNS_IDS, do_pmns_ids},
    {PDU_PMNS_NAMES, do_pmns_names}, {PDU_LABEL, do_labels},
    {PDU_ATTR, do_attr},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    do_header(data, size);
    for (size_t i = 0; i < sizeof DECODERS / sizeof DECODERS[0]; i++)
        DECODERS[i].fn(data, size);
    if (size < 12)
        return 0;
    for (size_t i = 0; i < sizeof DECODERS / sizeof DECODERS[0]; i++) {
        uint8_t *copy = fz_dup(data, size);
        fz_put_be32(copy, (uint32_t)size);
        fz_put_be32(copy + 4, DECODERS[i].type);
        DECODERS[i].fn(copy, size);
        free(copy);
    }
    return 0;
}
