/* pmdumplog's value lines from a result's columns: see printvalue.h. */
#include "printvalue.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    uint8_t *out;
    size_t cap;
    size_t len;
    int full;           /* a write did not fit: the caller grows the buffer */
} sink;

static void put(sink *s, const void *bytes, size_t n)
{
    if (n == 0)
        return;
    if (s->full || n > s->cap - s->len) {
        s->full = 1;
        return;
    }
    memcpy(s->out + s->len, bytes, n);
    s->len += n;
}

static void put_str(sink *s, const char *text)
{
    put(s, text, strlen(text));
}

/* printf's text of one number, made in a small local buffer (the longest, a %.16g
 * double or a 64-bit integer, is under 32 bytes): `n` is snprintf's return. */
static void put_printed(sink *s, const char *buf, int n, size_t room)
{
    if (n < 0 || (size_t)n >= room) {
        s->full = 1;
        return;
    }
    put(s, buf, (size_t)n);
}

static void put_fmt_i64(sink *s, const char *fmt, long long v)
{
    char buf[48];
    put_printed(s, buf, snprintf(buf, sizeof buf, fmt, v), sizeof buf);
}

static void put_fmt_u64(sink *s, const char *fmt, unsigned long long v)
{
    char buf[48];
    put_printed(s, buf, snprintf(buf, sizeof buf, fmt, v), sizeof buf);
}

static void put_double(sink *s, int digits, double v)
{
    char buf[48];
    put_printed(s, buf, snprintf(buf, sizeof buf, "%.*g", digits, v), sizeof buf);
}

/* 1 when bytes[0 .. n) is UTF-8 as Python's strict decoder takes it (no overlong forms,
 * no surrogates, nothing past U+10FFFF): only then is the caller's text the bytes. */
static int utf8_valid(const uint8_t *b, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = b[i];
        size_t more;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (more > n - i - 1)
            return 0;
        for (size_t k = 1; k <= more; k++) {
            if ((b[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (b[i + k] & 0x3F);
        }
        if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += more + 1;
    }
    return 1;
}

/* The text of `key` among table[0 .. count) (sorted by key), or NULL. */
static const pcp_printvalue_text *find_text(const pcp_printvalue_text *table, int32_t count,
                                            int32_t key)
{
    int32_t lo = 0, hi = count;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (table[mid].key == key)
            return &table[mid];
        if (table[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* One value as pmPrintValue writes it, or PCP_PRINTVALUE_OTHER / PM_ERR_TOOSMALL. */
static int put_value(sink *s, const pcp_result *r, int32_t k, int32_t type, const uint8_t *data,
                     size_t datalen)
{
    int32_t vt = r->vtype[k];
    int64_t iv = r->ival[k];
    /* an INSITU word cannot hold a 64-bit value: pmExtractValue refuses it (PM_ERR_CONV)
     * and pmPrintValue writes the word in its unknown-type form, which the caller does */
    if (vt == -1 && (type == PM_TYPE_64 || type == PM_TYPE_U64 || type == PM_TYPE_DOUBLE))
        return PCP_PRINTVALUE_OTHER;
    if (type >= PM_TYPE_32 && type <= PM_TYPE_DOUBLE && (vt == -1 || vt == type)) {
        switch (type) {
        case PM_TYPE_32:
            put_fmt_i64(s, "%lld", (long long)(int32_t)(uint32_t)(uint64_t)iv);
            return 0;
        case PM_TYPE_U32:
            put_fmt_u64(s, "%llu", (unsigned long long)((uint64_t)iv & 0xFFFFFFFFu));
            return 0;
        case PM_TYPE_64:
            put_fmt_i64(s, "%lld", (long long)iv);
            return 0;
        case PM_TYPE_U64:
            put_fmt_u64(s, "%llu", (unsigned long long)(uint64_t)iv);
            return 0;
        case PM_TYPE_FLOAT:
            if (vt == -1) {
                /* an INSITU float: the word's low 32 bits are the float's */
                uint32_t bits = (uint32_t)((uint64_t)iv & 0xFFFFFFFFu);
                float f;
                memcpy(&f, &bits, sizeof f);
                put_double(s, 8, (double)f);
            } else {
                put_double(s, 8, r->dval[k]);
            }
            return 0;
        default:
            put_double(s, 16, r->dval[k]);
            return 0;
        }
    }
    if (type == PM_TYPE_STRING && vt == PM_TYPE_STRING) {
        uint32_t off = r->boff[k], len = r->blen[k];
        if (off > datalen || len > datalen - off)
            return PM_ERR_TOOSMALL;
        const uint8_t *text = data + off;
        const uint8_t *nul = memchr(text, 0, len);
        size_t n = nul ? (size_t)(nul - text) : len;
        if (!utf8_valid(text, n))
            return PCP_PRINTVALUE_OTHER;
        put(s, "\"", 1);
        put(s, text, n);
        put(s, "\"", 1);
        return 0;
    }
    return PCP_PRINTVALUE_OTHER;
}

int64_t pcp_printvalue_dump_sets(uint8_t *out, size_t cap, const pcp_printvalue_set *sets,
                                 int32_t nsets, const pcp_result *result, const uint8_t *data,
                                 size_t datalen, const uint8_t *heads, size_t heads_len,
                                 const pcp_printvalue_text *names, int32_t nnames,
                                 const uint8_t *pool, size_t pool_len,
                                 const pcp_printvalue_text *errors, int32_t nerrors,
                                 const uint8_t *error_pool, size_t error_pool_len)
{
    sink s = {out, out ? cap : 0, 0, 0};
    if (nsets < 0 || nnames < 0 || nerrors < 0 || result == NULL)
        return PM_ERR_TOOSMALL;
    for (int32_t i = 0; i < nsets; i++) {
        const pcp_printvalue_set *set = &sets[i];
        if (set->set < 0 || set->set >= result->numpmid)
            return PM_ERR_TOOSMALL;
        if (set->head_off > heads_len || set->head_len > heads_len - set->head_off)
            return PM_ERR_TOOSMALL;
        int32_t numval = result->numval[set->set];
        put(&s, heads + set->head_off, set->head_len);
        if (numval < 0) {
            const pcp_printvalue_text *why = find_text(errors, nerrors, numval);
            if (why == NULL)
                return PCP_PRINTVALUE_OTHER;
            if (why->off > error_pool_len || why->len > error_pool_len - why->off)
                return PM_ERR_TOOSMALL;
            put(&s, " ", 1);
            put(&s, error_pool + why->off, why->len);
            put(&s, "\n", 1);
            continue;
        }
        if (numval == 0) {
            put_str(&s, " No values returned!\n");
            continue;
        }
        int32_t first = result->first[set->set];
        if (first < 0 || first > result->nvalues || numval > result->nvalues - first)
            return PM_ERR_TOOSMALL;
        const pcp_printvalue_text *table = NULL;
        if (set->names_count >= 0) {
            if (set->names_first < 0 || set->names_first > nnames ||
                set->names_count > nnames - set->names_first)
                return PM_ERR_TOOSMALL;
            table = names + set->names_first;
        }
        if (numval > 1)
            put_str(&s, "\n       ");
        for (int32_t j = 0; j < numval; j++) {
            int32_t k = first + j;
            if (j)
                put_str(&s, "       ");
            if (set->names_count >= 0) {
                int32_t inst = result->inst[k];
                const pcp_printvalue_text *name = find_text(table, set->names_count, inst);
                put_fmt_i64(&s, " inst [%lld or ", (long long)inst);
                if (name == NULL) {
                    put_str(&s, "???]");
                } else {
                    if (name->off > pool_len || name->len > pool_len - name->off)
                        return PM_ERR_TOOSMALL;
                    put(&s, "\"", 1);
                    put(&s, pool + name->off, name->len);
                    put(&s, "\"]", 2);
                }
            }
            put_str(&s, " value ");
            int sts = put_value(&s, result, k, set->type, data, datalen);
            if (sts < 0)
                return sts;
            put(&s, "\n", 1);
        }
    }
    if (s.full)
        return PCP_PRINTVALUE_ROOM;
    return (int64_t)s.len;
}

int64_t pcp_printvalue_record_size(const pcp_printvalue_set *sets, int32_t nsets,
                                   const pcp_result *result, int64_t header)
{
    if (nsets < 0 || result == NULL)
        return PM_ERR_TOOSMALL;
    int64_t nbyte = header;
    for (int32_t i = 0; i < nsets; i++) {
        int32_t set = sets[i].set;
        if (set < 0 || set >= result->numpmid)
            return PM_ERR_TOOSMALL;
        nbyte += 8;
        int32_t numval = result->numval[set];
        if (numval <= 0)
            continue;
        int32_t first = result->first[set];
        if (first < 0 || first > result->nvalues || numval > result->nvalues - first)
            return PM_ERR_TOOSMALL;
        nbyte += 4 + 8 * (int64_t)numval;
        if (result->valfmt[set] == 0)
            continue;
        for (int32_t j = 0; j < numval; j++)
            nbyte += ((int64_t)result->blen[first + j] + 4 + 3) / 4 * 4;
    }
    return nbyte;
}
