/* Archive writing: record encoders and libpcp_import's pending result (archive_write.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive_write.h"
#include "cursor.h"

#define PM_LOG_MAGIC 0x50052600u
#define TYPE_DESC 1
#define TYPE_INDOM_V2 2
#define TYPE_LABEL_V2 3
#define TYPE_TEXT 4
#define TYPE_INDOM 5
#define TYPE_LABEL 7

/* Label string fields: width on disk, and at most width-1 bytes copied (libpcp keeps the
 * last byte for a NUL). */
#define V2_HOST_LEN 64
#define V2_TZ_LEN 40
#define V3_STRING_LEN 256

/* The two timestamp encodings of archive-format.md 3.2: v2 is i32 sec and usec, v3 the
 * low 32 bits of the seconds first, then the high 32 bits, then nsec. */
static void write_stamp(pcp_writer *w, int version, int64_t sec, int32_t nsec)
{
    if (version == 3) {
        pcp_write_u32(w, (uint32_t)((uint64_t)sec & 0xffffffffu));
        pcp_write_u32(w, (uint32_t)((uint64_t)sec >> 32));
        pcp_write_i32(w, nsec);
    } else {
        pcp_write_i32(w, (int32_t)(uint32_t)(uint64_t)sec);
        pcp_write_i32(w, nsec / 1000);
    }
}

static size_t stamp_size(int version)
{
    return version == 3 ? 12 : 8;
}

/* A NUL-padded fixed-width string field holding at most width-1 bytes of s. */
static void write_fixed_string(pcp_writer *w, const char *s, size_t width)
{
    size_t n = s ? strlen(s) : 0;
    if (n > width - 1)
        n = width - 1;
    if (pcp_writer_room(w, width)) {
        memset(w->base + w->pos, 0, width);
        if (n)
            memcpy(w->base + w->pos, s, n);
    }
    w->pos += width;
}

/* What a counting writer learned: the record's length, or PM_ERR_TOOBIG if it cannot be
 * described by the i32 length word. */
static int finish(const pcp_writer *w)
{
    return w->pos > 0x7fffffff ? PM_ERR_TOOBIG : (int)w->pos;
}

int pcp_archive_write_label(uint8_t *out, size_t cap, int version, int32_t pid,
                            int64_t sec, int32_t nsec, int32_t vol, const char *hostname,
                            const char *timezone, const char *zoneinfo)
{
    if (version != 2 && version != 3)
        return PM_ERR_LABEL;
    uint32_t len = version == 3 ? 808u : 132u;
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    pcp_write_u32(&w, len);
    pcp_write_u32(&w, PM_LOG_MAGIC | (uint32_t)version);
    pcp_write_i32(&w, pid);
    if (version == 3) {
        write_stamp(&w, 3, sec, nsec);
        pcp_write_i32(&w, vol);
        pcp_write_u32(&w, 0);   /* features: libpcp_import sets none */
        pcp_write_u32(&w, 0);   /* reserved */
        write_fixed_string(&w, hostname, V3_STRING_LEN);
        write_fixed_string(&w, timezone, V3_STRING_LEN);
        write_fixed_string(&w, zoneinfo, V3_STRING_LEN);
    } else {
        write_stamp(&w, 2, sec, nsec);
        pcp_write_i32(&w, vol);
        write_fixed_string(&w, hostname, V2_HOST_LEN);
        write_fixed_string(&w, timezone, V2_TZ_LEN);
    }
    pcp_write_u32(&w, len);
    return finish(&w);
}

int pcp_archive_write_index(uint8_t *out, size_t cap, int version, int64_t sec, int32_t nsec,
                            int32_t vol, int64_t meta_off, int64_t data_off)
{
    size_t len = version == 3 ? 32 : 20;
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    write_stamp(&w, version, sec, nsec);
    pcp_write_i32(&w, vol);
    if (version == 3) {
        pcp_write_u64(&w, (uint64_t)meta_off);
        pcp_write_u64(&w, (uint64_t)data_off);
    } else {
        /* libpcp refuses offsets past 2 GiB in a v2 index (E2BIG). */
        if (meta_off > 0x7fffffff || data_off > 0x7fffffff)
            return -E2BIG;
        pcp_write_i32(&w, (int32_t)meta_off);
        pcp_write_i32(&w, (int32_t)data_off);
    }
    return finish(&w);
}

int pcp_archive_write_mark(uint8_t *out, size_t cap, int version, int64_t sec, int32_t nsec)
{
    uint32_t len = (uint32_t)(4 + stamp_size(version) + 4 + 4);
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    pcp_write_u32(&w, len);
    write_stamp(&w, version, sec, nsec);
    pcp_write_i32(&w, 0);   /* numpmid 0: the mark */
    pcp_write_u32(&w, len);
    return finish(&w);
}

int pcp_archive_write_desc(uint8_t *out, size_t cap, uint32_t pmid, int32_t type,
                           uint32_t indom, int32_t sem, uint32_t units, const char *name,
                           size_t namelen)
{
    if (namelen > 0x7fffff00u)
        return PM_ERR_TOOBIG;
    size_t len = 4 + 4 + 20 + 4 + 4 + namelen + 4;
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    pcp_write_u32(&w, (uint32_t)len);
    pcp_write_i32(&w, TYPE_DESC);
    pcp_write_u32(&w, pmid);
    pcp_write_i32(&w, type);
    pcp_write_u32(&w, indom);
    pcp_write_i32(&w, sem);
    pcp_write_u32(&w, units);
    pcp_write_i32(&w, 1);   /* numnames */
    pcp_write_u32(&w, (uint32_t)namelen);
    pcp_write_bytes(&w, (const uint8_t *)name, namelen, 0);
    pcp_write_u32(&w, (uint32_t)len);
    return finish(&w);
}

int pcp_archive_write_indom(uint8_t *out, size_t cap, int version, int64_t sec, int32_t nsec,
                            uint32_t indom, int32_t numinst, const int32_t *inst,
                            const char *names, size_t nameslen)
{
    if (numinst < 0 || nameslen > 0x7fff0000u || (size_t)numinst > 0x0fffffffu)
        return PM_ERR_TOOBIG;
    /* Every instance needs its NUL-terminated name inside names[0..nameslen). */
    size_t pos = 0;
    for (int32_t i = 0; i < numinst; i++) {
        const void *nul = pos < nameslen ? memchr(names + pos, 0, nameslen - pos) : NULL;
        if (nul == NULL)
            return PM_ERR_TOOSMALL;
        pos = (size_t)((const char *)nul - names) + 1;
    }
    size_t strtab = pos;
    size_t len = 4 + 4 + stamp_size(version) + 4 + 4 + 8 * (size_t)numinst + strtab + 4;
    if (len > 0x7fffffff)
        return PM_ERR_TOOBIG;
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    pcp_write_u32(&w, (uint32_t)len);
    pcp_write_i32(&w, version == 3 ? TYPE_INDOM : TYPE_INDOM_V2);
    write_stamp(&w, version, sec, nsec);
    pcp_write_u32(&w, indom);
    pcp_write_i32(&w, numinst);
    for (int32_t i = 0; i < numinst; i++)
        pcp_write_i32(&w, inst[i]);
    pos = 0;
    for (int32_t i = 0; i < numinst; i++) {
        pcp_write_u32(&w, (uint32_t)pos);
        pos += strlen(names + pos) + 1;
    }
    pcp_write_bytes(&w, (const uint8_t *)names, strtab, 0);
    pcp_write_u32(&w, (uint32_t)len);
    return finish(&w);
}

int pcp_archive_write_text(uint8_t *out, size_t cap, uint32_t type, uint32_t ident,
                           const char *text, size_t textlen)
{
    if (textlen > 0x7fff0000u)
        return PM_ERR_TOOBIG;
    size_t len = 4 + 4 + 4 + 4 + textlen + 1 + 4;
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    pcp_write_u32(&w, (uint32_t)len);
    pcp_write_i32(&w, TYPE_TEXT);
    pcp_write_u32(&w, type);
    pcp_write_u32(&w, ident);
    pcp_write_bytes(&w, (const uint8_t *)text, textlen, 0);
    pcp_write_bytes(&w, (const uint8_t *)"", 1, 0);
    pcp_write_u32(&w, (uint32_t)len);
    return finish(&w);
}

int pcp_archive_write_labelset(uint8_t *out, size_t cap, int version, int64_t sec,
                               int32_t nsec, uint32_t type, uint32_t ident, uint32_t inst,
                               const char *json, size_t jsonlen, int32_t nlabels,
                               const uint32_t *labels)
{
    if (jsonlen > 0xffff || nlabels > 255)
        return PM_ERR_TOOBIG;
    size_t count = nlabels > 0 ? (size_t)nlabels : 0;
    size_t len = 4 + 4 + stamp_size(version) + 4 + 4 + 4 + 4 + 4 + jsonlen + 4 + 8 * count + 4;
    pcp_writer w = pcp_writer_at(cap >= len ? out : NULL, cap);
    pcp_write_u32(&w, (uint32_t)len);
    pcp_write_i32(&w, version == 3 ? TYPE_LABEL : TYPE_LABEL_V2);
    write_stamp(&w, version, sec, nsec);
    pcp_write_u32(&w, type);
    pcp_write_u32(&w, ident);
    pcp_write_i32(&w, 1);   /* nsets: libpcp_import writes one label set per record */
    pcp_write_u32(&w, inst);
    pcp_write_u32(&w, (uint32_t)jsonlen);
    pcp_write_bytes(&w, (const uint8_t *)json, jsonlen, 0);
    pcp_write_i32(&w, nlabels);
    for (size_t i = 0; i < count; i++) {
        const uint32_t *l = labels + 5 * i;
        /* pmLabel: u16 name offset, u8 name length, u8 flags, u16 value offset and length */
        pcp_write_u32(&w, ((l[0] & 0xffffu) << 16) | ((l[1] & 0xffu) << 8) | (l[2] & 0xffu));
        pcp_write_u32(&w, ((l[3] & 0xffffu) << 16) | (l[4] & 0xffffu));
    }
    pcp_write_u32(&w, (uint32_t)len);
    return finish(&w);
}

/* ---- the pending result ------------------------------------------------------------ */

typedef struct {
    int32_t inst;
    int32_t word;       /* the INSITU value, or the block's offset in the arena */
    uint32_t blen;      /* the block's padded length in the arena, 0 for INSITU */
} pending_value;

typedef struct {
    uint32_t pmid;
    int32_t metric;     /* slot it was created for, -1 for pmiPutResult sets */
    int32_t numval;     /* values held, or a negative error code */
    int32_t valfmt;
    int32_t maxinst;    /* largest instance so far: a bigger one cannot be a duplicate */
    int32_t cap;
    pending_value *v;
} pending_set;

struct pcp_pending {
    pending_set *set;
    int32_t nset, setcap;
    int32_t *set_of_metric;   /* metric slot -> set index + 1 (0: none yet) */
    int32_t nslot;
    uint8_t *arena;           /* value blocks, already big-endian and padded */
    size_t used, arenacap;
};

pcp_pending *pcp_pending_new(void)
{
    return calloc(1, sizeof(pcp_pending));
}

void pcp_pending_free(pcp_pending *p)
{
    if (p == NULL)
        return;
    for (int32_t i = 0; i < p->setcap; i++)
        free(p->set[i].v);
    free(p->set);
    free(p->set_of_metric);
    free(p->arena);
    free(p);
}

void pcp_pending_clear(pcp_pending *p)
{
    for (int32_t i = 0; i < p->nset; i++) {
        int32_t m = p->set[i].metric;
        if (m >= 0 && m < p->nslot)
            p->set_of_metric[m] = 0;
    }
    p->nset = 0;
    p->used = 0;
}

int32_t pcp_pending_numpmid(const pcp_pending *p)
{
    return p->nset;
}

uint32_t pcp_pending_pmid(const pcp_pending *p, int32_t i)
{
    return i >= 0 && i < p->nset ? p->set[i].pmid : 0xffffffffu;
}

static pending_set *new_set(pcp_pending *p, uint32_t pmid, int32_t metric)
{
    if (p->nset == p->setcap) {
        int32_t ncap = p->setcap ? 2 * p->setcap : 16;
        pending_set *grown = realloc(p->set, (size_t)ncap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        memset(grown + p->setcap, 0, (size_t)(ncap - p->setcap) * sizeof *grown);
        p->set = grown;
        p->setcap = ncap;
    }
    pending_set *s = &p->set[p->nset++];
    s->pmid = pmid;
    s->metric = metric;
    s->numval = 0;
    s->valfmt = PM_VAL_INSITU;
    s->maxinst = 0;
    return s;
}

/* Room for one more value in s; NULL when memory runs out. */
static pending_value *next_value(pending_set *s)
{
    if (s->numval >= s->cap) {
        int32_t ncap = s->cap ? 2 * s->cap : 4;
        pending_value *grown = realloc(s->v, (size_t)ncap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        s->v = grown;
        s->cap = ncap;
    }
    return &s->v[s->numval];
}

/* Reserve a padded block of vlen bytes (header word included) in the arena. */
static uint8_t *arena_block(pcp_pending *p, uint32_t vlen, int32_t *offset, uint32_t *blen)
{
    size_t need = pcp_pad4(vlen);
    if (p->arenacap - p->used < need) {
        size_t ncap = p->arenacap ? p->arenacap : 4096;
        while (ncap - p->used < need)
            ncap *= 2;
        uint8_t *grown = realloc(p->arena, ncap);
        if (grown == NULL)
            return NULL;
        p->arena = grown;
        p->arenacap = ncap;
    }
    if (p->used > 0x7fffffff)
        return NULL;
    uint8_t *b = p->arena + p->used;
    *offset = (int32_t)p->used;
    *blen = (uint32_t)need;
    p->used += need;
    if (need > vlen)
        memset(b + vlen, '~', need - vlen);   /* libpcp's padding byte */
    return b;
}

/* The value set a put for this metric slot goes to: the existing one (checking libpcp's
 * rules) or a new one. *status is set when the put must stop there. */
static pending_set *set_for_put(pcp_pending *p, int32_t metric, uint32_t pmid, int singular,
                                int32_t inst, int *status)
{
    *status = 0;
    if (metric < 0) {
        *status = PM_ERR_PMID;
        return NULL;
    }
    if (metric >= p->nslot) {
        int32_t nslot = p->nslot ? p->nslot : 64;
        while (nslot <= metric)
            nslot *= 2;
        int32_t *grown = realloc(p->set_of_metric, (size_t)nslot * sizeof *grown);
        if (grown == NULL) {
            *status = -ENOMEM;
            return NULL;
        }
        memset(grown + p->nslot, 0, (size_t)(nslot - p->nslot) * sizeof *grown);
        p->set_of_metric = grown;
        p->nslot = nslot;
    }
    int32_t at = p->set_of_metric[metric];
    if (at == 0) {
        pending_set *s = new_set(p, pmid, metric);
        if (s == NULL) {
            *status = -ENOMEM;
            return NULL;
        }
        p->set_of_metric[metric] = p->nset;
        return s;
    }
    pending_set *s = &p->set[at - 1];
    if (singular) {
        *status = PMI_ERR_DUPVALUE;     /* a singular metric has one value per record */
        return NULL;
    }
    if (s->numval < 0) {
        *status = s->numval;            /* the set already failed: it stays failed */
        return NULL;
    }
    if (s->numval > 0 && inst <= s->maxinst) {
        for (int32_t j = 0; j < s->numval; j++) {
            if (s->v[j].inst == inst) {
                *status = PMI_ERR_DUPVALUE;
                return NULL;
            }
        }
    }
    return s;
}

/* Record the outcome of converting the value just appended to s. A failure on the first
 * value marks the whole set with the error (libpcp writes it as the set's numval); a later
 * failure just drops the value. */
static int settle(pending_set *s, pending_value *v, int32_t inst, int status)
{
    if (status < 0) {
        if (s->numval == 0)
            s->numval = status;
        return status;
    }
    if (s->numval == 0 || inst > s->maxinst)
        s->maxinst = inst;
    v->inst = inst;
    s->numval++;
    return 0;
}

/* Store a value block of the metric's type: the payload, and a NUL after it for a
 * string (vlen is 24 bits wide: longer blocks cannot be represented). */
static int put_block(pcp_pending *p, pending_set *s, pending_value *v, int type,
                     const uint8_t *payload, size_t paylen, int nul)
{
    if (paylen + 4 + (nul ? 1 : 0) > 0xffffffu)
        return PM_ERR_TOOBIG;
    uint32_t vlen = (uint32_t)(4 + paylen + (nul ? 1 : 0));
    int32_t off;
    uint32_t blen;
    uint8_t *b = arena_block(p, vlen, &off, &blen);
    if (b == NULL)
        return -ENOMEM;
    pcp_store_be32(b, ((uint32_t)type << 24) | vlen);
    if (paylen)
        memcpy(b + 4, payload, paylen);
    if (nul)
        b[4 + paylen] = 0;
    v->word = off;
    v->blen = blen;
    if (s->numval == 0)
        s->valfmt = PM_VAL_DPTR;
    return 0;
}

static int put_insitu(pending_set *s, pending_value *v, uint32_t word)
{
    v->word = (int32_t)word;
    v->blen = 0;
    if (s->numval == 0)
        s->valfmt = PM_VAL_INSITU;
    return 0;
}

static int put_u64(pcp_pending *p, pending_set *s, pending_value *v, int type, uint64_t bits)
{
    uint8_t be[8];
    pcp_store_be64(be, bits);
    return put_block(p, s, v, type, be, 8, 0);
}

static int put_u32_block(pcp_pending *p, pending_set *s, pending_value *v, int type,
                         uint32_t bits)
{
    uint8_t be[4];
    pcp_store_be32(be, bits);
    return put_block(p, s, v, type, be, 4, 0);
}

static int put_string(pcp_pending *p, pending_set *s, pending_value *v, const uint8_t *text,
                      size_t n)
{
    return put_block(p, s, v, PM_TYPE_STRING, text, n, 1);
}

/* One value text converted as libpcp_import converts it: the whole text must be consumed
 * by the C library's conversion (so "" is 0 and leading blanks are allowed). */
static int convert_text(pcp_pending *p, pending_set *s, pending_value *v, int type,
                        const char *text)
{
    char *end = NULL;
    switch (type) {
    case PM_TYPE_32: {
        long l = strtol(text, &end, 10);
        if (*end != '\0')
            return PM_ERR_CONV;
        return put_insitu(s, v, (uint32_t)(unsigned long)l);
    }
    case PM_TYPE_U32: {
        unsigned long u = strtoul(text, &end, 10);
        if (*end != '\0')
            return PM_ERR_CONV;
        return put_insitu(s, v, (uint32_t)u);
    }
    case PM_TYPE_64: {
        long long ll = strtoll(text, &end, 10);
        if (*end != '\0')
            return PM_ERR_CONV;
        return put_u64(p, s, v, type, (uint64_t)ll);
    }
    case PM_TYPE_U64: {
        unsigned long long ull = strtoull(text, &end, 10);
        if (*end != '\0')
            return PM_ERR_CONV;
        return put_u64(p, s, v, type, (uint64_t)ull);
    }
    case PM_TYPE_FLOAT: {
        float f = strtof(text, &end);
        if (*end != '\0')
            return PM_ERR_CONV;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return put_u32_block(p, s, v, type, bits);
    }
    case PM_TYPE_DOUBLE: {
        double d = strtod(text, &end);
        if (*end != '\0')
            return PM_ERR_CONV;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        return put_u64(p, s, v, type, bits);
    }
    case PM_TYPE_STRING:
        return put_string(p, s, v, (const uint8_t *)text, strlen(text));
    default:
        return PM_ERR_TYPE;
    }
}

int pcp_pending_put_text(pcp_pending *p, int32_t metric, uint32_t pmid, int singular,
                         int type, int32_t inst, const char *text)
{
    int status;
    pending_set *s = set_for_put(p, metric, pmid, singular, inst, &status);
    if (s == NULL)
        return status;
    pending_value *v = next_value(s);
    if (v == NULL)
        return -ENOMEM;
    return settle(s, v, inst, convert_text(p, s, v, type, text));
}

int pcp_pending_add_set(pcp_pending *p, uint32_t pmid, int32_t numval, int32_t valfmt)
{
    pending_set *s = new_set(p, pmid, -1);
    if (s == NULL)
        return -ENOMEM;
    s->numval = numval < 0 ? numval : 0;
    s->valfmt = valfmt;
    return 0;
}

/* Block payload from host order to big-endian, as libpcp's __htonpmValueBlock does by the
 * block's vtype (strings and aggregates are bytes; event arrays are copied as they are). */
static void payload_to_disk(uint8_t *payload, uint32_t paylen, int32_t vtype)
{
    if ((vtype == PM_TYPE_64 || vtype == PM_TYPE_U64 || vtype == PM_TYPE_DOUBLE) && paylen >= 8) {
        uint64_t host;
        memcpy(&host, payload, 8);
        pcp_store_be64(payload, host);
    } else if (vtype == PM_TYPE_FLOAT && paylen >= 4) {
        uint32_t host;
        memcpy(&host, payload, 4);
        pcp_store_be32(payload, host);
    }
}

int pcp_pending_add_value(pcp_pending *p, int32_t inst, int32_t lval, const uint8_t *block,
                          uint32_t vlen, int32_t vtype)
{
    if (p->nset == 0)
        return PM_ERR_TOOSMALL;
    pending_set *s = &p->set[p->nset - 1];
    if (s->numval < 0)
        return s->numval;
    pending_value *v = next_value(s);
    if (v == NULL)
        return -ENOMEM;
    v->inst = inst;
    if (s->valfmt == PM_VAL_INSITU) {
        v->word = lval;
        v->blen = 0;
    } else {
        if (vlen < 4 || vlen > 0xffffffu || block == NULL)
            return PM_ERR_TOOSMALL;
        int32_t off;
        uint32_t blen;
        uint8_t *b = arena_block(p, vlen, &off, &blen);
        if (b == NULL)
            return -ENOMEM;
        pcp_store_be32(b, ((uint32_t)(vtype & 0xff) << 24) | vlen);
        memcpy(b + 4, block + 4, vlen - 4);
        payload_to_disk(b + 4, vlen - 4, vtype);
        v->word = off;
        v->blen = blen;
    }
    s->numval++;
    return 0;
}

/* libpcp's comparator: the difference of the instances (wrapping as its int arithmetic
 * does on this platform), so qsort orders exactly as it does in libpcp. */
static int by_instance(const void *a, const void *b)
{
    uint32_t ia = (uint32_t)((const pending_value *)a)->inst;
    uint32_t ib = (uint32_t)((const pending_value *)b)->inst;
    return (int32_t)(ia - ib);
}

void pcp_pending_sort(pcp_pending *p)
{
    for (int32_t i = 0; i < p->nset; i++) {
        pending_set *s = &p->set[i];
        /* already ascending (the usual case) needs no sort */
        int sorted = 1;
        for (int32_t j = 1; j < s->numval && sorted; j++)
            sorted = s->v[j - 1].inst < s->v[j].inst;
        if (!sorted)
            qsort(s->v, (size_t)s->numval, sizeof s->v[0], by_instance);
    }
}

int64_t pcp_pending_encode(const pcp_pending *p, int version, int64_t sec, int32_t nsec,
                           uint8_t *out, size_t cap)
{
    /* sizes first: header, value sets, blocks, trailer */
    size_t head = 4 + stamp_size(version) + 4;
    size_t sets = 0;
    for (int32_t i = 0; i < p->nset; i++) {
        const pending_set *s = &p->set[i];
        sets += 8;
        if (s->numval > 0)
            sets += 4 + 8 * (size_t)s->numval;
    }
    size_t len = head + sets + p->used + 4;
    if (len > 0x7fffffff)
        return PM_ERR_TOOBIG;
    if (out == NULL || cap < len)
        return (int64_t)len;

    pcp_writer w = pcp_writer_at(out, cap);
    pcp_write_u32(&w, (uint32_t)len);
    write_stamp(&w, version, sec, nsec);
    pcp_write_i32(&w, p->nset);
    /* blocks follow the sets in set order; a DPTR word is the block's position in 32-bit
     * words counted from the record start, plus 2 (archive-format.md 6.3) */
    size_t block_at = head + sets;
    size_t blocks_from = block_at;
    for (int32_t i = 0; i < p->nset; i++) {
        const pending_set *s = &p->set[i];
        pcp_write_u32(&w, s->pmid);
        pcp_write_i32(&w, s->numval);
        if (s->numval <= 0)
            continue;
        pcp_write_i32(&w, s->valfmt);
        for (int32_t j = 0; j < s->numval; j++) {
            const pending_value *v = &s->v[j];
            pcp_write_i32(&w, v->inst);
            if (v->blen == 0) {
                pcp_write_i32(&w, v->word);
            } else {
                pcp_write_u32(&w, (uint32_t)(block_at / 4 + 2));
                if (block_at + v->blen <= cap && (size_t)v->word + v->blen <= p->used)
                    memcpy(out + block_at, p->arena + v->word, v->blen);
                block_at += v->blen;
            }
        }
    }
    if (w.bad || block_at - blocks_from != p->used)
        return PM_ERR_TOOBIG;   /* the sizes disagree: a bug, never an overflow */
    w.pos = block_at;
    pcp_write_u32(&w, (uint32_t)len);
    return w.bad ? PM_ERR_TOOBIG : (int64_t)w.pos;
}

/* ---- whole rows at once ------------------------------------------------------------ */

/* Bytes of value k's block (header word included, padded), 0 for an INSITU type. */
static size_t frame_block_size(const pcp_frame_metric *m, size_t k)
{
    switch (m->type) {
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
        return 12;
    case PM_TYPE_FLOAT:
        return 8;
    case PM_TYPE_STRING: {
        int64_t n = m->str_off[k + 1] - m->str_off[k];
        const void *nul = memchr(m->str_data + m->str_off[k], 0, (size_t)n);
        if (nul != NULL)
            n = (const uint8_t *)nul - (m->str_data + m->str_off[k]);
        return pcp_pad4(4 + (size_t)n + 1);
    }
    case PM_TYPE_AGGREGATE:
        return pcp_pad4(4 + (size_t)(m->str_off[k + 1] - m->str_off[k]));
    default:
        return 0;
    }
}

static int frame_bytes_type(int type)
{
    return type == PM_TYPE_STRING || type == PM_TYPE_AGGREGATE;
}

static int frame_metric_ok(const pcp_frame_metric *m)
{
    if (m->ncol < 0 || m->inst == NULL || (m->values == NULL && !frame_bytes_type(m->type)))
        return 0;
    if (frame_bytes_type(m->type))
        return m->str_off != NULL && m->str_data != NULL;
    return m->type >= PM_TYPE_32 && m->type <= PM_TYPE_DOUBLE;
}

/* Write value k's block at out[at..) (room already checked). */
static void frame_block(const pcp_frame_metric *m, size_t k, uint8_t *b, size_t blen)
{
    switch (m->type) {
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, (const uint8_t *)m->values + 8 * k, 8);
        pcp_store_be32(b, ((uint32_t)m->type << 24) | 12u);
        pcp_store_be64(b + 4, bits);
        break;
    }
    case PM_TYPE_FLOAT: {
        uint32_t bits;
        memcpy(&bits, (const uint8_t *)m->values + 4 * k, 4);
        pcp_store_be32(b, ((uint32_t)m->type << 24) | 8u);
        pcp_store_be32(b + 4, bits);
        break;
    }
    case PM_TYPE_STRING: {
        size_t vlen = blen;     /* recomputed exactly below */
        int64_t n = m->str_off[k + 1] - m->str_off[k];
        const uint8_t *text = m->str_data + m->str_off[k];
        const void *nul = memchr(text, 0, (size_t)n);
        if (nul != NULL)
            n = (const uint8_t *)nul - text;
        vlen = 4 + (size_t)n + 1;
        pcp_store_be32(b, ((uint32_t)PM_TYPE_STRING << 24) | (uint32_t)vlen);
        if (n)
            memcpy(b + 4, text, (size_t)n);
        b[4 + n] = 0;
        if (blen > vlen)
            memset(b + vlen, '~', blen - vlen);
        break;
    }
    case PM_TYPE_AGGREGATE: {
        size_t n = (size_t)(m->str_off[k + 1] - m->str_off[k]);
        pcp_store_be32(b, ((uint32_t)PM_TYPE_AGGREGATE << 24) | (uint32_t)(4 + n));
        if (n)
            memcpy(b + 4, m->str_data + m->str_off[k], n);
        if (blen > 4 + n)
            memset(b + 4 + n, '~', blen - 4 - n);
        break;
    }
    default:
        break;
    }
}

/* How many values metric m has in row r. */
static int32_t frame_numval(const pcp_frame_metric *m, int32_t r)
{
    if (m->present == NULL)
        return m->ncol;
    const uint8_t *row = m->present + (size_t)r * (size_t)m->ncol;
    int32_t numval = 0;
    for (int32_t c = 0; c < m->ncol; c++)
        numval += row[c] != 0;
    return numval;
}

int64_t pcp_archive_write_frame(const pcp_frame_metric *metrics, int32_t nmetrics,
                                int32_t nrows, int version, const int64_t *sec,
                                const int32_t *nsec, uint8_t *out, size_t cap,
                                int64_t *reclen)
{
    if (nmetrics < 0 || nrows < 0 || reclen == NULL)
        return PM_ERR_TOOSMALL;
    for (int32_t i = 0; i < nmetrics; i++) {
        if (!frame_metric_ok(&metrics[i]))
            return PM_ERR_TYPE;
        if (frame_bytes_type(metrics[i].type)) {
            /* every offset pair must lie inside the string data, in order */
            const pcp_frame_metric *m = &metrics[i];
            size_t n = (size_t)nrows * (size_t)m->ncol;
            for (size_t k = 0; k < n; k++)
                if (m->str_off[k] < 0 || m->str_off[k + 1] < m->str_off[k]
                        || m->str_off[k + 1] - m->str_off[k] > 0xfffff0)
                    return PM_ERR_CONV;
        }
    }
    size_t head = 4 + stamp_size(version) + 4;
    /* pass 1: each row's record length */
    uint64_t total = 0;
    for (int32_t r = 0; r < nrows; r++) {
        size_t sets = 0, blocks = 0;
        int32_t numpmid = 0;
        for (int32_t i = 0; i < nmetrics; i++) {
            const pcp_frame_metric *m = &metrics[i];
            size_t base = (size_t)r * (size_t)m->ncol;
            int32_t numval = 0;
            for (int32_t c = 0; c < m->ncol; c++) {
                if (m->present != NULL && !m->present[base + c])
                    continue;
                numval++;
                blocks += frame_block_size(m, base + c);
            }
            if (numval) {
                numpmid++;
                sets += 12 + 8 * (size_t)numval;
            }
        }
        size_t len = numpmid ? head + sets + blocks + 4 : 0;
        if (len > 0x7fffffff)
            return PM_ERR_TOOBIG;
        reclen[r] = (int64_t)len;
        total += len;
    }
    if (out == NULL || cap < total)
        return (int64_t)total;

    /* pass 2: the records */
    size_t at = 0;
    for (int32_t r = 0; r < nrows; r++) {
        size_t len = (size_t)reclen[r];
        if (len == 0)
            continue;
        pcp_writer w = pcp_writer_at(out + at, len);
        pcp_write_u32(&w, (uint32_t)len);
        write_stamp(&w, version, sec[r], nsec[r]);
        size_t numpmid_at = w.pos;
        pcp_write_i32(&w, 0);
        size_t sets = 0;
        int32_t numpmid = 0;
        for (int32_t i = 0; i < nmetrics; i++) {
            int32_t numval = frame_numval(&metrics[i], r);
            if (numval) {
                numpmid++;
                sets += 12 + 8 * (size_t)numval;
            }
        }
        pcp_patch_u32(&w, numpmid_at, (uint32_t)numpmid);
        size_t block_at = head + sets;
        for (int32_t i = 0; i < nmetrics; i++) {
            const pcp_frame_metric *m = &metrics[i];
            size_t base = (size_t)r * (size_t)m->ncol;
            int32_t numval = frame_numval(m, r);
            if (numval == 0)
                continue;
            int insitu = m->type == PM_TYPE_32 || m->type == PM_TYPE_U32;
            pcp_write_u32(&w, m->pmid);
            pcp_write_i32(&w, numval);
            pcp_write_i32(&w, insitu ? PM_VAL_INSITU : PM_VAL_DPTR);
            for (int32_t c = 0; c < m->ncol; c++) {
                size_t k = base + c;
                if (m->present != NULL && !m->present[k])
                    continue;
                pcp_write_i32(&w, m->inst[c]);
                if (insitu) {
                    uint32_t word;
                    memcpy(&word, (const uint8_t *)m->values + 4 * k, 4);
                    pcp_write_u32(&w, word);
                } else {
                    size_t blen = frame_block_size(m, k);
                    pcp_write_u32(&w, (uint32_t)(block_at / 4 + 2));
                    if (block_at + blen + 4 <= len)
                        frame_block(m, k, out + at + block_at, blen);
                    block_at += blen;
                }
            }
        }
        if (w.bad || block_at + 4 != len)
            return PM_ERR_TOOBIG;   /* the two passes disagree: a bug, never an overflow */
        w.pos = block_at;
        pcp_write_u32(&w, (uint32_t)len);
        at += len;
    }
    return (int64_t)at;
}
