/* libFuzzer harness for the archive columns kernel (csrc/archive_columns.c).
 *
 * Input: one byte choosing the format version and label length (as fuzz_archive), a
 * selection of CTRL_LEN bytes, then the data volume. The selection gives up to four
 * metrics (pmid, type, instance columns known up front), the rows per chunk, the
 * staging room, the window, whether unknown instances are dropped and the memory layout:
 * the reader's (every metric's row in one arena row, which the scan zeroes as it
 * reaches it; the arena starts each chunk full of garbage) or separate zeroed matrices
 * per metric (the reader's matrices for a metric whose columns grew). The harness then
 * drives pcp_archive_columns_scan as pcp/_bulk/scan.py does: it adds a column for each
 * instance the scan reports missing (or drops them once the columns are full), grows the
 * staging area when asked, starts a new chunk when the rows are full, steps over bad
 * records and pauses at chosen positions. After every call it checks what the scan promises:
 *   - positions stay inside the volume and progress or stop;
 *   - rows are in the window, present cells lie in used columns, absent cells hold
 *     zero, string references address staged bytes, and nvalues / nbytes equal what
 *     the chunk holds;
 *   - a record that failed or stopped left nothing in the row after the last good one;
 *   - pcp_archive_columns_pack of every string column writes within its buffers. */
#include "fuzz_common.h"
#include "archive_columns.h"

#define CTRL_LEN 27
#define MAX_METRICS 4
#define COL_CAP 6
#define MAP_SLOTS 8
#define INST_SLOTS 8            /* more than COL_CAP: the instance tables run nearly full */
#define MAX_CALLS 256
#define STAGED_MAX (1u << 20)

typedef struct {
    pcp_cols_state s;
    pcp_cols_metric m[MAX_METRICS];
    uint32_t map_pmid[MAP_SLOTS];
    int32_t map_metric[MAP_SLOTS];
    int32_t col_inst[MAX_METRICS][COL_CAP];
    int32_t inst_table[MAX_METRICS][2 * INST_SLOTS];
    int32_t hint[MAX_METRICS][2 * COL_CAP];
    int64_t col_serial[MAX_METRICS][COL_CAP];
    int32_t col_next[MAX_METRICS][COL_CAP];
    int64_t chunk_nvalues[MAX_METRICS];   /* nvalues / nbytes when the chunk began */
    int64_t chunk_nbytes[MAX_METRICS];
    uint8_t *arena;         /* the reader's layout: row_cap rows of zero_row_bytes */
} harness;

static int is_ref(int32_t type)
{
    return type == PM_TYPE_STRING || type == PM_TYPE_AGGREGATE;
}

static size_t cell_size(int32_t type)
{
    return type == PM_TYPE_32 || type == PM_TYPE_U32 || type == PM_TYPE_FLOAT ? 4 : 8;
}

static int has_column(const harness *h, int32_t mi, int32_t inst)
{
    for (int32_t c = 0; c < h->m[mi].ncols; c++)
        if (h->col_inst[mi][c] == inst)
            return 1;
    return 0;
}

static void add_column(harness *h, int32_t mi, int32_t inst)
{
    pcp_cols_metric *m = &h->m[mi];
    if (has_column(h, mi, inst))
        return;
    if (m->ncols == COL_CAP) {
        h->s.drop_unknown = 1;  /* as the reader would once it stops growing */
        return;
    }
    h->col_inst[mi][m->ncols++] = inst;
    CHECK(pcp_archive_columns_index(m) == 0);     /* INST_SLOTS > COL_CAP: always room */
}

/* The chunk's memory: one arena in the reader's layout (zeroed by the scan row by row),
 * or a values and a present matrix per metric, zeroed here at each chunk. */
static void alloc_chunk(harness *h, int per_metric)
{
    pcp_cols_state *s = &h->s;
    if (per_metric) {
        for (int32_t i = 0; i < s->nmetrics; i++) {
            pcp_cols_metric *m = &h->m[i];
            m->values = fz_alloc((size_t)s->row_cap * COL_CAP, cell_size(m->type));
            m->present = fz_alloc((size_t)s->row_cap * COL_CAP, 1);
            m->values_stride = (int64_t)(COL_CAP * cell_size(m->type));
            m->present_stride = COL_CAP;
        }
        return;
    }
    size_t vbytes = 0;
    for (int32_t i = 0; i < s->nmetrics; i++)
        vbytes += COL_CAP * cell_size(h->m[i].type);
    /* rows 8-byte aligned, as the cells are (the values rows are 24 or 48 bytes) */
    size_t row_bytes = (vbytes + (size_t)s->nmetrics * COL_CAP + 7) & ~(size_t)7;
    h->arena = fz_alloc((size_t)s->row_cap, row_bytes);
    s->zero_base = h->arena;
    s->zero_row_bytes = (int64_t)row_bytes;
    size_t at = 0;
    for (int32_t i = 0; i < s->nmetrics; i++) {
        pcp_cols_metric *m = &h->m[i];
        m->values = h->arena + at;
        at += COL_CAP * cell_size(m->type);
        m->present = h->arena + vbytes + (size_t)i * COL_CAP;
        m->values_stride = m->present_stride = (int64_t)row_bytes;
    }
}

/* Start a new chunk: rows and staged bytes from zero, cells absent (zeroed matrices,
 * or an arena of garbage the scan zeroes). */
static void new_chunk(harness *h)
{
    pcp_cols_state *s = &h->s;
    if (h->arena) {
        memset(h->arena, 0xa5, (size_t)s->row_cap * (size_t)s->zero_row_bytes);
        s->zeroed_rows = 0;
    }
    for (int32_t i = 0; i < s->nmetrics; i++) {
        pcp_cols_metric *m = &h->m[i];
        if (!h->arena) {
            memset(m->values, 0, (size_t)s->row_cap * COL_CAP * cell_size(m->type));
            memset(m->present, 0, (size_t)s->row_cap * COL_CAP);
        }
        h->chunk_nvalues[i] = m->nvalues;
        h->chunk_nbytes[i] = m->nbytes;
    }
    s->nrow = 0;
    s->staged_used = 0;
}

static void check_chunk(const harness *h)
{
    const pcp_cols_state *s = &h->s;
    CHECK(s->nrow >= 0 && s->nrow <= s->row_cap);
    CHECK(s->staged_used <= s->staged_cap);
    /* the rows the scan has zeroed (all of them with zeroed matrices) */
    int32_t rows = s->row_cap;
    if (h->arena) {
        CHECK(s->zeroed_rows >= s->nrow && s->zeroed_rows <= s->row_cap);
        rows = s->zeroed_rows;
    }
    for (int32_t r = 0; r < s->nrow; r++) {
        CHECK(s->time_ns[r] >= s->start_ns && s->time_ns[r] <= s->end_ns);
        CHECK((s->flags[r] & ~PCP_ROW_AFTER_MARK) == 0);
    }
    for (int32_t i = 0; i < s->nmetrics; i++) {
        const pcp_cols_metric *m = &h->m[i];
        CHECK(m->ncols >= 0 && m->ncols <= COL_CAP);
        int64_t count = 0, bytes = 0;
        /* rows past nrow too: a failed record must leave its row empty */
        size_t size = cell_size(m->type);
        for (int32_t r = 0; r < rows; r++) {
            const uint8_t *values = (const uint8_t *)m->values + (size_t)r * m->values_stride;
            const uint8_t *present = m->present + (size_t)r * m->present_stride;
            for (int32_t c = 0; c < COL_CAP; c++) {
                uint8_t p = present[c];
                CHECK(p == 0 || p == 1);
                if (!p) {
                    for (size_t b = 0; b < size; b++)
                        CHECK(values[(size_t)c * size + b] == 0);
                    continue;
                }
                CHECK(r < s->nrow && c < m->ncols);
                count++;
                if (is_ref(m->type)) {
                    int64_t ref;
                    memcpy(&ref, values + (size_t)c * size, 8);
                    uint64_t off = (uint64_t)ref & ((1ULL << PCP_COLS_REF_SHIFT) - 1);
                    uint64_t n = (uint64_t)ref >> PCP_COLS_REF_SHIFT;
                    CHECK(off <= s->staged_used && n <= s->staged_used - off);
                    if (m->type == PM_TYPE_STRING && n)
                        CHECK(memchr(s->staged + off, 0, n) == NULL);
                    bytes += (int64_t)n;
                }
            }
        }
        CHECK(m->nvalues - h->chunk_nvalues[i] == count);
        CHECK(m->nbytes - h->chunk_nbytes[i] == bytes);
        CHECK(m->nerr >= 0 && m->dropped >= 0);
    }
}

/* Every string column of the chunk as Arrow would lay it out, into exact buffers. */
static void pack_chunk(const harness *h)
{
    const pcp_cols_state *s = &h->s;
    for (int32_t i = 0; i < s->nmetrics; i++) {
        const pcp_cols_metric *m = &h->m[i];
        if (!is_ref(m->type) || m->ncols == 0)
            continue;
        size_t cells = (size_t)m->ncols * (size_t)s->nrow;
        int64_t *offsets = fz_alloc(cells + 1, 8);
        uint8_t *data = fz_alloc(m->nbytes - h->chunk_nbytes[i], 1);
        /* contiguous copies, as Blobs.pack makes of the reader's strided matrices */
        int64_t *refs = fz_alloc((size_t)s->nrow * COL_CAP + 1, 8);
        uint8_t *present = fz_alloc((size_t)s->nrow * COL_CAP + 1, 1);
        for (int32_t r = 0; r < s->nrow; r++) {
            memcpy(refs + (size_t)r * COL_CAP,
                   (const uint8_t *)m->values + (size_t)r * m->values_stride, COL_CAP * 8);
            memcpy(present + (size_t)r * COL_CAP, m->present + (size_t)r * m->present_stride,
                   COL_CAP);
        }
        int64_t n = pcp_archive_columns_pack(refs, present, s->nrow, COL_CAP, 0, m->ncols,
                                             s->staged, s->staged_used, offsets, data);
        free(refs);
        free(present);
        CHECK(n == m->nbytes - h->chunk_nbytes[i]);
        for (size_t k = 0; k < cells; k++)
            CHECK(offsets[k] <= offsets[k + 1]);
        CHECK(offsets[0] == 0 && offsets[cells] == n);
        free(offsets);
        free(data);
    }
}

static int32_t add_metric(harness *h, uint32_t pmid, int32_t type)
{
    if (pmid == 0xffffffffu)
        pmid = 0;                       /* the table's empty mark is never selected */
    uint32_t slot = (uint32_t)(pmid * 2654435761u) & (MAP_SLOTS - 1);
    while (h->map_pmid[slot] != 0xffffffffu) {
        if (h->map_pmid[slot] == pmid)
            return -1;                  /* one metric per pmid, as the reader selects */
        slot = (slot + 1) & (MAP_SLOTS - 1);
    }
    int32_t mi = h->s.nmetrics++;
    h->map_pmid[slot] = pmid;
    h->map_metric[slot] = mi;
    pcp_cols_metric *m = &h->m[mi];
    m->pmid = pmid;
    m->type = type;
    m->next = -1;
    m->col_cap = COL_CAP;
    m->hint = h->hint[mi];
    m->col_serial = h->col_serial[mi];
    m->col_next = h->col_next[mi];
    for (int32_t k = 0; k < COL_CAP; k++) {
        h->hint[mi][2 * k] = 0;
        h->hint[mi][2 * k + 1] = -1;
        h->col_serial[mi][k] = 0;
        h->col_next[mi][k] = -1;
    }
    m->col_inst = h->col_inst[mi];
    m->inst_table = h->inst_table[mi];
    m->inst_mask = INST_SLOTS - 1;
    CHECK(pcp_archive_columns_index(m) == 0);
    return mi;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + CTRL_LEN)
        return 0;
    int version = (data[0] & 1) ? 3 : 2;
    size_t len = size - 1 - CTRL_LEN;
    size_t label_len = (data[0] & 2) ? (version == 3 ? 808 : 132) : (data[0] >> 4);
    if (label_len > len)
        label_len = len;
    fz_reader rd = {data + 1, CTRL_LEN};
    uint8_t *vol = fz_dup(data + 1 + CTRL_LEN, len);

    harness *h = fz_alloc(1, sizeof *h);
    memset(h, 0, sizeof *h);
    for (int k = 0; k < MAP_SLOTS; k++)
        h->map_pmid[k] = 0xffffffffu;
    pcp_cols_state *s = &h->s;
    s->metrics = h->m;
    s->map_mask = MAP_SLOTS - 1;
    s->map_pmid = h->map_pmid;
    s->map_metric = h->map_metric;
    s->first = -1;

    uint8_t shape = fz_u8(&rd);
    int nsel = 1 + (shape & 3);
    s->drop_unknown = (shape >> 2) & 1;
    s->row_cap = 1 + ((shape >> 3) & 7);
    uint8_t room = fz_u8(&rd);
    s->staged_cap = room & 0x3f;
    uint8_t window = fz_u8(&rd);
    uint32_t window_sec = fz_u32(&rd);
    /* the window: everything, or from a chosen second and for up to 3 seconds */
    s->start_ns = INT64_MIN;
    s->end_ns = INT64_MAX;
    if (window & 1)
        s->start_ns = (int64_t)window_sec * 1000000000LL;
    if (window & 2)
        s->end_ns = (int64_t)window_sec * 1000000000LL + ((window >> 2) & 3) * 1000000000LL;
    uint64_t pause_step = (uint64_t)(window >> 4) * 64;
    s->pause_pos = pause_step ? label_len + pause_step : UINT64_MAX;
    static const int32_t types[8] = {PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64,
                                     PM_TYPE_FLOAT, PM_TYPE_DOUBLE, PM_TYPE_STRING,
                                     PM_TYPE_AGGREGATE};
    for (int k = 0; k < nsel; k++) {
        uint8_t t = fz_u8(&rd);
        uint32_t pmid = fz_u32(&rd);
        /* type 8+: a type the kernel does not store (events): values are errors */
        int32_t type = (t & 15) < 8 ? types[t & 7] : PM_TYPE_EVENT;
        int32_t mi = add_metric(h, pmid, type);
        if (mi < 0)
            continue;
        for (int c = 0; c < ((t >> 4) & 3); c++)
            add_column(h, mi, (int32_t)(k * 100 + c * 100 + ((t >> 6) ? 0 : 1)));
    }
    s->time_ns = fz_alloc((size_t)s->row_cap, 8);
    s->flags = fz_alloc((size_t)s->row_cap, 1);
    int32_t miss_metric[2], miss_inst[2];
    s->miss_metric = miss_metric;
    s->miss_inst = miss_inst;
    s->miss_cap = 2;
    s->staged = fz_alloc(s->staged_cap, 1);
    alloc_chunk(h, room >> 7);
    new_chunk(h);

    uint64_t pos = label_len;
    for (int call = 0; call < MAX_CALLS; call++) {
        uint64_t before = pos;
        int32_t rows_before = s->nrow;
        int sts = pcp_archive_columns_scan(vol, len, label_len, version, &pos, s);
        CHECK(pos <= (uint64_t)len + 4);
        check_chunk(h);
        if (sts == 0) {
            CHECK(s->nrow == s->row_cap);
            pack_chunk(h);
            new_chunk(h);
        } else if (sts == PCP_COLS_NEED_COLUMN) {
            CHECK(s->nmiss > 0 && !s->drop_unknown);
            int32_t listed = s->nmiss < s->miss_cap ? s->nmiss : s->miss_cap;
            for (int32_t k = 0; k < listed; k++) {
                CHECK(miss_metric[k] >= 0 && miss_metric[k] < s->nmetrics);
                CHECK(!has_column(h, miss_metric[k], miss_inst[k]));
            }
            for (int32_t k = 0; k < listed; k++)
                add_column(h, miss_metric[k], miss_inst[k]);
        } else if (sts == PCP_COLS_NEED_ROOM) {
            CHECK(s->room_need > s->staged_cap);
            if (s->room_need > STAGED_MAX)
                break;
            /* the reader starts a new chunk when it has rows, else grows the area */
            if (s->nrow > 0) {
                pack_chunk(h);
                new_chunk(h);
            } else {
                free(s->staged);
                s->staged_cap = s->room_need;
                s->staged = fz_alloc(s->staged_cap, 1);
            }
        } else if (sts == PCP_COLS_PAUSE) {
            CHECK(pos >= s->pause_pos && pos > before);
            s->pause_pos = pos + pause_step;
        } else if (sts == PM_ERR_LOGREC) {
            CHECK(s->nrow == rows_before || pos != before);
            if (pos == before)
                break;                  /* a sticky error: libpcp would fail here again */
        } else {
            CHECK(sts == PCP_LOG_END || sts == PCP_COLS_PAST_END);
            break;
        }
    }
    pack_chunk(h);

    if (h->arena) {
        free(h->arena);
    } else {
        for (int32_t i = 0; i < s->nmetrics; i++) {
            free(h->m[i].values);
            free(h->m[i].present);
        }
    }
    free(s->staged);
    free(s->time_ns);
    free(s->flags);
    free(vol);
    free(h);
    return 0;
}
