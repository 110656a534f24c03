/* Archive data records into per-metric time x instance matrices (see columns.h).
 *
 * Every record inside the window goes through pcp_log_read first, the reader libpcp's
 * pmFetchArchive semantics come from, so a record is either rejected whole (with
 * libpcp's stream position) or known to be well formed: every value set and DPTR block
 * lies inside it. The scatter pass below relies on that and reads without checks. */
#include "columns.h"
#include "cursor.h"

#define NSEC_PER_SEC 1000000000LL

/* Seconds and nanoseconds as nanoseconds since the epoch, saturated well inside int64
 * (INT64_MIN is numpy's NaT: never produced). */
static int64_t stamp_ns(int64_t sec, int64_t nsec)
{
    const int64_t lim = INT64_MAX / NSEC_PER_SEC - 1;
    if (sec > lim)
        return INT64_MAX;
    if (sec < -lim)
        return INT64_MIN + 1;
    return sec * NSEC_PER_SEC + nsec;
}

static size_t fixed_len(int version)
{
    return version == 3 ? 20 : 16;
}

/* Timestamp of a record whose fixed part is present (v3: 64-bit seconds in two words,
 * 32-bit nanoseconds; v2: 32-bit seconds and microseconds, libpcp's 32-bit product). */
static int64_t record_time(const uint8_t *r, int version)
{
    if (version == 3) {
        uint64_t lo = pcp_load_be32(r + 4);
        uint64_t hi = pcp_load_be32(r + 8);
        return stamp_ns((int64_t)((hi << 32) | lo), (int32_t)pcp_load_be32(r + 12));
    }
    return stamp_ns((int32_t)pcp_load_be32(r + 4), pcp_usec_to_nsec(pcp_load_be32(r + 8)));
}

/* Forward framing only, with the outcomes of libpcp's reader: 0 (whole record of
 * *rec_len bytes, *next after it), PCP_LOG_END, or PM_ERR_LOGREC (*next as libpcp). */
static int frame(const uint8_t *buf, size_t len, uint64_t pos, uint64_t *next,
                 uint32_t *rec_len)
{
    *next = pos;
    if (pos >= len || len - pos < 4)
        return PCP_LOG_END;
    int32_t head = (int32_t)pcp_load_be32(buf + pos);
    if (head < 8) {
        *next = pos + 4;
        return PM_ERR_LOGREC;
    }
    uint64_t body = (uint64_t)head - 8;
    if (len - (pos + 4) < body + 4)
        return PM_ERR_LOGREC;
    uint64_t trailer = pos + 4 + body;
    *next = trailer + 4;
    if ((int32_t)pcp_load_be32(buf + trailer) != head)
        return PM_ERR_LOGREC;
    *rec_len = (uint32_t)head;
    return 0;
}

static int32_t lookup_metric(const pcp_cols_state *s, uint32_t pmid)
{
    uint32_t h = (uint32_t)(pmid * 2654435761u) & s->map_mask;
    for (;;) {
        uint32_t k = s->map_pmid[h];
        if (k == pmid)
            return s->map_metric[h];
        if (k == 0xffffffffu)
            return -1;
        h = (h + 1) & s->map_mask;
    }
}

/* The column of `inst`: the one after the previous value's column when instances come
 * in the same order as last time (the usual case), else by binary search. An instance
 * without a column takes a spare one; -1 when there is none, -2 when its values are to
 * be dropped. */
static int32_t column_of(pcp_cols_metric *m, int32_t inst, int32_t guess, int drop)
{
    if (guess < m->ncols && m->col_inst[guess] == inst)
        return guess;
    int32_t lo = 0, hi = m->ncols;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (m->sorted_inst[mid] < inst)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->ncols && m->sorted_inst[lo] == inst)
        return m->sorted_col[lo];
    if (drop)
        return -2;
    if (m->ncols >= m->col_cap)
        return -1;
    /* a new column at the end, its instance inserted in order (its cells in the rows
     * already filled are absent: present is zero there) */
    int32_t col = m->ncols;
    memmove(m->sorted_inst + lo + 1, m->sorted_inst + lo, (size_t)(col - lo) * sizeof(int32_t));
    memmove(m->sorted_col + lo + 1, m->sorted_col + lo, (size_t)(col - lo) * sizeof(int32_t));
    m->sorted_inst[lo] = inst;
    m->sorted_col[lo] = col;
    m->col_inst[col] = inst;
    m->ncols = col + 1;
    return col;
}

/* How the values of a value set are stored, from its valfmt and the metric's type, as
 * pmExtractValue(valfmt, v, type, type) extracts them. */
enum { STORE_NONE, STORE_WORD, STORE_BLOCK64, STORE_BLOCK32, STORE_REF };

static int store_kind(int32_t valfmt, int32_t type)
{
    if (valfmt == PM_VAL_INSITU) {
        /* 32-bit integers and a FLOAT's bits: the word as it is */
        if (type == PM_TYPE_32 || type == PM_TYPE_U32 || type == PM_TYPE_FLOAT)
            return STORE_WORD;
        return STORE_NONE;
    }
    switch (type) {
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
        return STORE_BLOCK64;
    case PM_TYPE_FLOAT:
        return STORE_BLOCK32;
    case PM_TYPE_STRING:
    case PM_TYPE_AGGREGATE:
        return STORE_REF;
    default:
        return STORE_NONE;
    }
}

/* A block's header must carry the metric's type (or 0) and, for numbers, its size. */
static int block_ok(uint32_t header, int32_t type, uint32_t vlen)
{
    uint32_t vtype = header >> 24;
    if (vtype != 0 && (int32_t)vtype != type)
        return 0;
    return vlen == 0 || (header & 0xffffffu) == vlen;
}

/* Scatter the selected value sets of a validated record into row `row`. Returns 1 if
 * the record held a selected metric, 0 if not, or PCP_COLS_NEED_COLUMN. */
static int scatter(const uint8_t *buf, uint64_t rec_off, int version, pcp_cols_state *s,
                   int32_t row)
{
    const uint8_t *r = buf + rec_off;
    int32_t numpmid = (int32_t)pcp_load_be32(r + fixed_len(version) - 4);
    const uint8_t *p = r + fixed_len(version);
    int any = 0;
    for (int32_t i = 0; i < numpmid; i++) {
        uint32_t pmid = pcp_load_be32(p);
        int32_t numval = (int32_t)pcp_load_be32(p + 4);
        p += 8;
        int32_t mi = lookup_metric(s, pmid);
        if (numval <= 0) {
            if (mi >= 0)
                any = 1;
            continue;
        }
        int32_t valfmt = (int32_t)pcp_load_be32(p);
        p += 4;
        if (mi < 0) {
            p += 8 * (size_t)numval;
            continue;
        }
        any = 1;
        pcp_cols_metric *m = &s->metrics[mi];
        int kind = store_kind(valfmt, m->type);
        size_t base = (size_t)row * (size_t)m->col_cap;
        uint8_t *present = m->present + base;
        int32_t guess = 0;
        int64_t stored = 0;
        for (int32_t j = 0; j < numval; j++, p += 8) {
            int32_t inst = (int32_t)pcp_load_be32(p);
            uint32_t word = pcp_load_be32(p + 4);
            int32_t col = column_of(m, inst, guess, s->drop_unknown);
            if (col < 0) {
                if (col == -2) {
                    m->dropped++;
                    continue;
                }
                m->nvalues += stored;
                s->miss_metric = mi;
                s->miss_inst = inst;
                return PCP_COLS_NEED_COLUMN;
            }
            guess = col + 1;
            size_t idx = base + (size_t)col;
            if (kind == STORE_WORD) {
                ((uint32_t *)m->values)[idx] = word;
                present[col] = 1;
                stored++;
                continue;
            }
            if (kind == STORE_NONE) {
                m->nerr++;
                continue;
            }
            /* a DPTR block the record reader has checked lies inside the record */
            const uint8_t *b = r - 8 + 4 * (uint64_t)word;
            switch (kind) {
            case STORE_BLOCK64:
                if (!block_ok(pcp_load_be32(b), m->type, 12)) {
                    m->nerr++;
                    continue;
                }
                ((uint64_t *)m->values)[idx] = pcp_load_be64(b + 4);
                break;
            case STORE_BLOCK32:
                if (!block_ok(pcp_load_be32(b), m->type, 8)) {
                    m->nerr++;
                    continue;
                }
                ((uint32_t *)m->values)[idx] = pcp_load_be32(b + 4);
                break;
            case STORE_REF: {
                uint32_t header = pcp_load_be32(b);
                if (!block_ok(header, m->type, 0)) {
                    m->nerr++;
                    continue;
                }
                const uint8_t *pay = b + 4;
                uint64_t n = (header & 0xffffffu) - 4;
                if (m->type == PM_TYPE_STRING && n) {
                    const uint8_t *nul = memchr(pay, 0, n);
                    if (nul)
                        n = (uint64_t)(nul - pay);
                }
                uint64_t at = s->staged_used;
                if (n > s->staged_cap - at) {
                    s->room_need = at + n;
                    m->nvalues += stored;
                    return PCP_COLS_NEED_ROOM;
                }
                if (n)
                    memcpy(s->staged + at, pay, n);
                s->staged_used = at + n;
                ((int64_t *)m->values)[idx] = (int64_t)((n << PCP_COLS_REF_SHIFT) | at);
                break;
            }
            default:
                m->nerr++;
                continue;
            }
            present[col] = 1;
            stored++;
        }
        m->nvalues += stored;
    }
    return any;
}

/* Undo the values a record stored before NEED_COLUMN stopped it: counts and presence
 * of row `row` (values under present == 0 are never read). */
static void clear_row(pcp_cols_state *s, int32_t row)
{
    for (int32_t i = 0; i < s->nmetrics; i++) {
        pcp_cols_metric *m = &s->metrics[i];
        uint8_t *pr = m->present + (size_t)row * (size_t)m->col_cap;
        for (int32_t c = 0; c < m->ncols; c++) {
            if (pr[c]) {
                pr[c] = 0;
                m->nvalues--;
            }
        }
    }
}

int pcp_cols_scan(const uint8_t *buf, size_t len, size_t label_len, int version,
                  uint64_t *pos, pcp_cols_state *s)
{
    size_t fixed = fixed_len(version);
    if (*pos < label_len)
        *pos = label_len;
    uint64_t from = *pos;
    while (s->nrow < s->row_cap) {
        if (*pos >= s->pause_pos && *pos > from)
            return PCP_COLS_PAUSE;
        uint64_t at = *pos, next;
        uint32_t rec_len;
        int sts = frame(buf, len, at, &next, &rec_len);
        if (sts != 0) {
            *pos = next;
            return sts;
        }
        if (rec_len >= fixed + 4) {
            int64_t t = record_time(buf + at, version);
            if (t < s->start_ns) {
                s->skipped++;
                *pos = next;
                continue;
            }
            if (t > s->end_ns)
                return PCP_COLS_PAST_END;
        }
        /* the whole reader: framing again, then every check libpcp makes */
        pcp_log_record rec;
        sts = pcp_log_read(buf, len, label_len, version, 0, 0, at, &next, &rec);
        if (sts != 0) {
            *pos = next;
            return sts < 0 ? sts : PM_ERR_LOGREC;
        }
        if (rec.numpmid == 0) {
            s->records++;
            s->marks++;
            s->pending_flags |= PCP_ROW_AFTER_MARK;
            *pos = next;
            continue;
        }
        int32_t row = s->nrow;
        uint64_t staged_at = s->staged_used;
        sts = scatter(buf, at, version, s, row);
        if (sts == PCP_COLS_NEED_COLUMN || sts == PCP_COLS_NEED_ROOM) {
            clear_row(s, row);
            s->staged_used = staged_at;
            return sts;
        }
        s->records++;
        if (sts == 1) {
            s->time_ns[row] = stamp_ns(rec.sec, rec.nsec);
            s->flags[row] = (uint8_t)s->pending_flags;
            s->pending_flags = 0;
            s->nrow = row + 1;
        }
        *pos = next;
    }
    return 0;
}

/* ---- string and aggregate payloads ------------------------------------------------ */

static uint64_t ref_len(int64_t ref)
{
    return (uint64_t)ref >> PCP_COLS_REF_SHIFT;
}

static uint64_t ref_off(int64_t ref)
{
    return (uint64_t)ref & ((1ULL << PCP_COLS_REF_SHIFT) - 1);
}

void pcp_cols_bind(pcp_cols_state *s, uint8_t *arena, const int64_t *values_off,
                   const int64_t *present_off)
{
    for (int32_t i = 0; i < s->nmetrics; i++) {
        s->metrics[i].values = arena + values_off[i];
        s->metrics[i].present = arena + present_off[i];
    }
}

int64_t pcp_cols_pack(const int64_t *refs, const uint8_t *present, int32_t nrows,
                      int32_t stride, int32_t col0, int32_t col1, const uint8_t *staged,
                      uint64_t staged_len, int64_t *offsets, uint8_t *data)
{
    int64_t at = 0;
    size_t k = 0;
    for (int32_t c = col0; c < col1; c++) {
        for (int32_t r = 0; r < nrows; r++, k++) {
            offsets[k] = at;
            size_t idx = (size_t)r * (size_t)stride + (size_t)c;
            if (!present[idx])
                continue;
            uint64_t off = ref_off(refs[idx]), n = ref_len(refs[idx]);
            if (off > staged_len || n > staged_len - off)
                continue;       /* never for a reference the scan made */
            if (n)
                memcpy(data + at, staged + off, n);
            at += (int64_t)n;
        }
    }
    offsets[k] = at;
    return at;
}
