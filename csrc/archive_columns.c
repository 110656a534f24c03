/* Archive data records into per-metric time x instance matrices (see archive_columns.h).
 *
 * The framing and the record checks are libpcp's, as csrc/archive_record.c and
 * csrc/result.c implement them for pcp_archive_record_read, done here in the pass that stores the
 * values (tests/bulk/test_columns_hostile.py holds the two to the same verdicts and stream
 * positions on random and damaged records). */
#include "archive_columns.h"
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

static uint32_t inst_slot(int32_t inst, uint32_t mask)
{
    return ((uint32_t)inst * 2654435761u) & mask;
}

/* The column of an instance when the hint does not give it, that is when instances
 * came or went before it in the set (a process started or ended): the column that
 * followed the previous value's column before (which such changes seldom break), else
 * the next column, else from the instance table; -1 for an instance without a column.
 * Out of line: the hint check below is the inlined path. */
static int32_t __attribute__((noinline))
column_search(pcp_cols_metric *m, int32_t inst, int32_t j, int32_t prev)
{
    int32_t col = -1;
    int32_t after = prev >= 0 ? m->col_next[prev] : -1;
    if (after >= 0 && after < m->ncols && m->col_inst[after] == inst) {
        col = after;
    } else if (prev + 1 < m->ncols && m->col_inst[prev + 1] == inst) {
        col = prev + 1;
    } else if (m->inst_table) {
        /* the table always has an empty slot (pcp_archive_columns_index): the probe ends */
        for (uint32_t h = inst_slot(inst, m->inst_mask);; h = (h + 1) & m->inst_mask) {
            const int32_t *slot = m->inst_table + 2 * (size_t)h;
            if (slot[1] < 0)
                break;
            if (slot[0] == inst) {
                col = slot[1];
                break;
            }
        }
    }
    if (col >= 0 && prev >= 0)
        m->col_next[prev] = col;
    if (col >= 0 && j < m->col_cap) {
        m->hint[2 * (size_t)j] = inst;
        m->hint[2 * (size_t)j + 1] = col;
    }
    return col;
}

/* The column of the value at position j of a set: the column the value at that
 * position had last time when its instance matches (instances usually come in the same
 * order every time), else column_search. */
static inline int32_t column_of(pcp_cols_metric *m, int32_t inst, int32_t j, int32_t prev)
{
    if (j < m->col_cap) {
        const int32_t *hint = m->hint + 2 * (size_t)j;
        if (hint[0] == inst && hint[1] >= 0)
            return hint[1];
    }
    return column_search(m, inst, j, prev);
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

/* The block a DPTR word points at, checked as libpcp checks it: the word counts 4-byte
 * units from 8 bytes before the record, and the block lies inside the value-set and
 * block bytes r[0..len) with a length its type allows. Returns its offset in the
 * record, or 0 (no block can start there) when the record is bad. */
static size_t block_at(const uint8_t *r, size_t len, uint32_t word, uint32_t *header)
{
    /* one comparison covers words 0 and 1 (wrapping below zero), negative words and
     * blocks whose header would not fit */
    uint64_t off = (uint64_t)word * 4 - 8;
    if (off > (uint64_t)len - 4)
        return 0;
    uint32_t h = pcp_load_be32(r + off);
    uint32_t vlen = h & 0xffffffu;
    if (vlen < pcp_block_min_len(h >> 24) || vlen > len - off)
        return 0;
    *header = h;
    return (size_t)off;
}

/* Copy a string payload of n bytes up to its first NUL; returns the length copied.
 * Eight bytes at a time while no byte of them is zero, then byte by byte: only the n
 * bytes of the payload are read. */
static uint64_t copy_string(uint8_t *dst, const uint8_t *src, uint64_t n)
{
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, src + i, 8);
        if ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL)
            break;
        memcpy(dst + i, &w, 8);
    }
    for (; i < n; i++) {
        if (src[i] == 0)
            return i;
        dst[i] = src[i];
    }
    return n;
}

static uint64_t ref_len(int64_t ref)
{
    return (uint64_t)ref >> PCP_COLS_REF_SHIFT;
}

static uint64_t ref_off(int64_t ref)
{
    return (uint64_t)ref & ((1ULL << PCP_COLS_REF_SHIFT) - 1);
}

/* When a record first reaches a metric: keep its counts, for clear_row. */
static void save_counts(const pcp_cols_state *s, pcp_cols_metric *m)
{
    if (m->undo_serial != s->serial) {
        m->undo_serial = s->serial;
        m->undo_nvalues = m->nvalues;
        m->undo_nbytes = m->nbytes;
        m->undo_nerr = m->nerr;
        m->undo_dropped = m->dropped;
    }
}

/* A value of metric mi for an instance without a column: dropped and counted, or
 * listed for the caller (who adds the column and reads the record again). */
static void no_column(pcp_cols_state *s, int32_t mi, int32_t inst)
{
    if (s->drop_unknown) {
        s->metrics[mi].dropped++;
        return;
    }
    if (s->nmiss < s->miss_cap) {
        s->miss_metric[s->nmiss] = mi;
        s->miss_inst[s->nmiss] = inst;
    }
    s->nmiss++;
}

/* Bytes of one cell of a metric's values matrix. */
static size_t cell_size(int32_t type)
{
    return type == PM_TYPE_32 || type == PM_TYPE_U32 || type == PM_TYPE_FLOAT ? 4 : 8;
}

/* 1 when the record numbered `serial` stores the first value of its row in column
 * col, 0 when it stored one there before (an instance repeated in a value set: the
 * last value wins, counted once). Asked of the metric's small col_serial array, which
 * stays in cache, not of the row's present byte, whose line is new to the cache. */
static inline int first_in_record(pcp_cols_metric *m, int32_t col, int64_t serial)
{
    int first = m->col_serial[col] != serial;
    m->col_serial[col] = serial;
    return first;
}

/* Check and scatter the record of rec_len bytes at buf + at into row `row`, in one
 * pass over its value sets. A record is accepted under exactly the rules of libpcp's
 * decoder (csrc/result.c, strict layout): numpmid and every numval fit, valfmt is known,
 * every DPTR word points at a block inside the record that is long enough for its type,
 * and the blocks, each padded to 4 bytes, fill the rest of the record from the end of
 * the value sets. (libpcp finds where the sets end first and then checks each block
 * against it; here the lowest block is compared with the end of the sets once they are
 * all read, which gives the same verdict.) Returns 1 (a selected metric was there), 0
 * (none), PM_ERR_LOGREC, PCP_COLS_NEED_ROOM or PCP_COLS_NEED_COLUMN; the caller undoes
 * what a record that returns neither 0 nor 1 stored. */
static int scan_record(const uint8_t *buf, uint64_t at, uint32_t rec_len, int version,
                       pcp_cols_state *s, int32_t row)
{
    const uint8_t *r = buf + at;
    size_t fixed = fixed_len(version);
    size_t len = (size_t)rec_len - 4;           /* the value sets and blocks end here */
    int32_t numpmid = (int32_t)pcp_load_be32(r + fixed - 4);
    if (numpmid < 0 || (size_t)numpmid > (len - fixed) / 8)
        return PM_ERR_LOGREC;
    uint64_t blocks = 0;
    size_t lowest = len;
    int64_t total = 0;
    int any = 0, room = 0;
    size_t p = fixed;
    int32_t last = -1;              /* the previous selected metric of this record */
    const int64_t serial = s->serial;
    for (int32_t i = 0; i < numpmid; i++) {
        if (len - p < 8)
            return PM_ERR_LOGREC;
        uint32_t pmid = pcp_load_be32(r + p);
        int32_t numval = (int32_t)pcp_load_be32(r + p + 4);
        p += 8;
        /* records repeat their order of value sets: the metric that came after the
         * previous one last time is tried first */
        int32_t guess = last >= 0 ? s->metrics[last].next : s->first;
        int32_t mi = guess >= 0 && s->metrics[guess].pmid == pmid ? guess
                                                                   : lookup_metric(s, pmid);
        if (mi >= 0) {
            if (last >= 0)
                s->metrics[last].next = mi;
            else
                s->first = mi;
            last = mi;
        }
        if (numval <= 0) {
            if (mi >= 0)
                any = 1;
            continue;
        }
        if (len - p < 4)
            return PM_ERR_LOGREC;
        int32_t valfmt = (int32_t)pcp_load_be32(r + p);
        p += 4;
        if (valfmt < PM_VAL_INSITU || valfmt > PM_VAL_SPTR)
            return PM_ERR_LOGREC;
        if ((size_t)numval > (len - p) / 8)
            return PM_ERR_LOGREC;
        total += numval;
        if (mi < 0 && valfmt == PM_VAL_INSITU) {
            p += 8 * (size_t)numval;            /* nothing to check, nothing to keep */
            continue;
        }
        pcp_cols_metric *m = mi >= 0 ? &s->metrics[mi] : NULL;
        int kind = m ? store_kind(valfmt, m->type) : STORE_NONE;
        /* the metric's row of values and of present */
        uint8_t *vrow = m ? (uint8_t *)m->values + (size_t)row * (size_t)m->values_stride
                          : NULL;
        uint8_t *present = m ? m->present + (size_t)row * (size_t)m->present_stride : NULL;
        int32_t prev = -1;
        int64_t stored = 0;     /* cells this set filled (not refilled) */
        if (m) {
            any = 1;
            save_counts(s, m);
        }
        if (kind == STORE_WORD) {
            /* the usual 32-bit values: nothing to check, the word is the value */
            uint32_t *values = (uint32_t *)vrow;
            for (int32_t j = 0; j < numval; j++, p += 8) {
                int32_t inst = (int32_t)pcp_load_be32(r + p);
                int32_t col = column_of(m, inst, j, prev);
                if (col < 0) {
                    no_column(s, mi, inst);
                    continue;
                }
                prev = col;
                values[col] = pcp_load_be32(r + p + 4);
                present[col] = 1;
                stored += first_in_record(m, col, serial);
            }
            m->nvalues += stored;
            continue;
        }
        for (int32_t j = 0; j < numval; j++, p += 8) {
            uint32_t word = pcp_load_be32(r + p + 4);
            uint32_t header = 0;
            size_t off = 0;
            if (valfmt != PM_VAL_INSITU) {
                off = block_at(r, len, word, &header);
                if (off == 0)
                    return PM_ERR_LOGREC;
                blocks += pcp_pad4(header & 0xffffffu);
                if (off < lowest)
                    lowest = off;
            }
            if (m == NULL)
                continue;
            int32_t inst = (int32_t)pcp_load_be32(r + p);
            int32_t col = column_of(m, inst, j, prev);
            if (col < 0) {
                no_column(s, mi, inst);
                continue;
            }
            prev = col;
            uint32_t vtype = header >> 24;
            switch (kind) {     /* STORE_WORD took the loop above */
            case STORE_BLOCK64:
                if ((header & 0xffffffu) != 12 || (vtype != 0 && (int32_t)vtype != m->type)) {
                    m->nerr++;
                    continue;
                }
                ((uint64_t *)vrow)[col] = pcp_load_be64(r + off + 4);
                break;
            case STORE_BLOCK32:
                if ((header & 0xffffffu) != 8 || (vtype != 0 && (int32_t)vtype != m->type)) {
                    m->nerr++;
                    continue;
                }
                ((uint32_t *)vrow)[col] = pcp_load_be32(r + off + 4);
                break;
            case STORE_REF: {
                if (vtype != 0 && (int32_t)vtype != m->type) {
                    m->nerr++;
                    continue;
                }
                const uint8_t *pay = r + off + 4;
                uint64_t n = (header & 0xffffffu) - 4;
                uint64_t to = s->staged_used;
                if (room || n > s->staged_cap - to) {
                    s->room_need = room ? s->room_need + n : to + n;
                    room = 1;       /* go on checking: a bad record fails first */
                    continue;
                }
                if (m->type == PM_TYPE_STRING)
                    n = copy_string(s->staged + to, pay, n);
                else if (n)
                    memcpy(s->staged + to, pay, n);
                s->staged_used = to + n;
                m->nbytes += (int64_t)n;
                if (m->col_serial[col] == serial)   /* a repeated instance: the last wins */
                    m->nbytes -= (int64_t)ref_len(((int64_t *)vrow)[col]);
                ((int64_t *)vrow)[col] = (int64_t)((n << PCP_COLS_REF_SHIFT) | to);
                break;
            }
            default:
                m->nerr++;
                continue;
            }
            present[col] = 1;
            stored += first_in_record(m, col, serial);
        }
        if (m)
            m->nvalues += stored;
    }
    if (total > INT32_MAX)
        return PM_ERR_LOGREC;
    /* every block lies after the value sets, which end at p, and the blocks fill the
     * record from there exactly */
    if (p + blocks != len || (blocks > 0 && lowest != p))
        return PM_ERR_LOGREC;
    if (room)
        return PCP_COLS_NEED_ROOM;
    if (s->nmiss)
        return PCP_COLS_NEED_COLUMN;
    return any;
}

/* Undo what a record stored before it failed or stopped: the values and presence of
 * row `row` (an absent cell holds zero), and the counts of the metrics it reached. */
static void clear_row(pcp_cols_state *s, int32_t row)
{
    for (int32_t i = 0; i < s->nmetrics; i++) {
        pcp_cols_metric *m = &s->metrics[i];
        if (m->undo_serial != s->serial)
            continue;           /* the record never reached it: nothing to undo */
        m->nvalues = m->undo_nvalues;
        m->nbytes = m->undo_nbytes;
        m->nerr = m->undo_nerr;
        m->dropped = m->undo_dropped;
        size_t size = cell_size(m->type);
        uint8_t *values = (uint8_t *)m->values + (size_t)row * (size_t)m->values_stride;
        uint8_t *pr = m->present + (size_t)row * (size_t)m->present_stride;
        for (int32_t c = 0; c < m->ncols; c++) {
            if (pr[c]) {
                pr[c] = 0;
                memset(values + (size_t)c * size, 0, size);
            }
        }
    }
}

int pcp_archive_columns_scan(const uint8_t *buf, size_t len, size_t label_len, int version,
                             uint64_t *pos, pcp_cols_state *s)
{
    size_t fixed = fixed_len(version);
    if (*pos < label_len)
        *pos = label_len;
    uint64_t from = *pos;
    s->nmiss = 0;
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
        /* libpcp's record checks: the fixed part and trailer must be there */
        if (rec_len < fixed + 4) {
            *pos = next;
            return PM_ERR_LOGREC;
        }
        int64_t t = record_time(buf + at, version);
        if (t < s->start_ns) {
            s->skipped++;
            *pos = next;
            continue;
        }
        if (t > s->end_ns)
            return PCP_COLS_PAST_END;
        int32_t row = s->nrow;
        uint64_t staged_at = s->staged_used;
        if (s->zero_base && row >= s->zeroed_rows) {
            memset(s->zero_base + (size_t)row * (size_t)s->zero_row_bytes, 0,
                   (size_t)s->zero_row_bytes);
            s->zeroed_rows = row + 1;
        }
        s->serial++;
        sts = scan_record(buf, at, rec_len, version, s, row);
        if (sts != 0 && sts != 1) {
            clear_row(s, row);
            s->staged_used = staged_at;
            if (sts == PM_ERR_LOGREC)
                *pos = next;
            return sts;
        }
        s->records++;
        int32_t numpmid = (int32_t)pcp_load_be32(buf + at + fixed - 4);
        if (numpmid == 0) {
            s->marks++;
            s->pending_flags |= PCP_ROW_AFTER_MARK;
        } else if (sts == 1) {
            s->time_ns[row] = t;
            s->flags[row] = (uint8_t)s->pending_flags;
            s->pending_flags = 0;
            s->nrow = row + 1;
        }
        *pos = next;
    }
    return 0;
}

/* ---- chunk memory, and string and aggregate bytes by column ----------------------- */

int pcp_archive_columns_index(pcp_cols_metric *m)
{
    uint32_t slots = m->inst_mask + 1;
    if (m->inst_table == NULL || slots == 0)
        return -1;
    for (uint32_t h = 0; h < slots; h++) {
        m->inst_table[2 * (size_t)h] = 0;
        m->inst_table[2 * (size_t)h + 1] = -1;
    }
    if (m->ncols < 0 || (uint32_t)m->ncols >= slots) {
        m->inst_mask = 0;       /* one empty slot: every lookup misses */
        return -1;
    }
    for (int32_t c = 0; c < m->ncols; c++) {
        uint32_t h = inst_slot(m->col_inst[c], m->inst_mask);
        while (m->inst_table[2 * (size_t)h + 1] >= 0 &&
               m->inst_table[2 * (size_t)h] != m->col_inst[c])
            h = (h + 1) & m->inst_mask;
        if (m->inst_table[2 * (size_t)h + 1] < 0) {     /* the first column wins */
            m->inst_table[2 * (size_t)h] = m->col_inst[c];
            m->inst_table[2 * (size_t)h + 1] = c;
        }
    }
    return 0;
}

void pcp_archive_columns_bind(pcp_cols_state *s, uint8_t *arena, const int64_t *values_off,
                              const int64_t *present_off, const int64_t *values_stride,
                              const int64_t *present_stride)
{
    for (int32_t i = 0; i < s->nmetrics; i++) {
        s->metrics[i].values = arena + values_off[i];
        s->metrics[i].present = arena + present_off[i];
        s->metrics[i].values_stride = values_stride[i];
        s->metrics[i].present_stride = present_stride[i];
    }
}

int64_t pcp_archive_columns_pack(const int64_t *refs, const uint8_t *present, int32_t nrows,
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
