/* Archive data records scattered straight into time x instance matrices, one matrix
 * per selected metric, for the columnar archive reader (pcp/_bulk/scan.py).
 *
 * One call reads whole records of one volume forwards. Each record that carries at
 * least one selected metric becomes one row: its timestamp goes to time_ns[row] and each
 * value of a selected metric to values[row][column of its instance], with present[..]
 * set to 1. A record is checked as libpcp's reader checks it (the same framing, layout
 * and value-block rules as pcp_archive_record_read, in the same pass that stores its values) and a
 * row only counts once its record has passed: a record that fails leaves nothing behind.
 * Records before the window are framed but not decoded; the first record after it stops
 * the scan. No allocation, no Python: cffi releases the GIL around the call. */
#ifndef PCP_ARCHIVE_COLUMNS_H
#define PCP_ARCHIVE_COLUMNS_H

#include "archive.h"

/* Row flags */
#define PCP_ROW_AFTER_MARK 1    /* a <mark> (or the caller's discontinuity) came before */

/* Return codes of pcp_archive_columns_scan besides 0 (rows full), PCP_LOG_END and PM_ERR_LOGREC */
#define PCP_COLS_PAST_END 2     /* a record after the window: *pos is at it */
#define PCP_COLS_NEED_COLUMN 3  /* instances without a column in a (good) record:
                                   miss_metric[] / miss_inst[] list nmiss of them; *pos
                                   is at the record, nothing of it kept */
#define PCP_COLS_NEED_ROOM 4    /* the staging area cannot hold the record's strings:
                                   *pos is at the record, nothing of it kept; room_need
                                   is the least staged_cap that would do */
#define PCP_COLS_PAUSE 5        /* *pos reached pause_pos (at a record boundary) */

/* String and aggregate values are copied to the caller's staging area as the records
 * are read (strings end at their first NUL, as the copy pmExtractValue makes is read)
 * and stored as references (length << 40) | offset into it. */
#define PCP_COLS_REF_SHIFT 40

typedef struct {
    int32_t type;       /* PM_TYPE_* of the metric: how values are stored (see below) */
    int32_t ncols;      /* instance columns in use */
    int32_t col_cap;    /* columns allocated: one row of values/present is col_cap long */
    int32_t next;       /* the selected metric whose value set followed this one's last
                           time (-1: none yet), tried before the pmid table */
    uint32_t pmid;
    int32_t *hint;      /* [2 * col_cap] (instance, column) of the value at each
                           position of the metric's last value set, column -1 when not
                           known: a guess, checked before use */
    int64_t *col_serial;    /* [col_cap] the serial of the record that last stored a
                               value in each column (any other number at first) */
    int32_t *col_next;  /* [col_cap] the column whose value followed each column's in a
                           value set where the hint missed (-1: none yet): a guess,
                           checked before use */
    void *values;       /* [row_cap] rows of col_cap cells: int32, uint32, int64, uint64,
                           float, double for types 0..5; int64 references for STRING and
                           AGGREGATE */
    uint8_t *present;   /* [row_cap] rows of col_cap bytes: 1 where values holds a value */
    int64_t values_stride;  /* bytes from a row of values to the next (rows aligned
                               to the size of their cells) */
    int64_t present_stride; /* bytes from a row of present to the next */
    const int32_t *col_inst;    /* [ncols] the instance of each column */
    /* instance -> column: an open-addressing table of (instance, column) pairs, probed
     * linearly from slot (instance * 2654435761) mod 2^32 & inst_mask; column -1 marks
     * an empty slot. Filled by pcp_archive_columns_index. */
    int32_t *inst_table;        /* [2 * (inst_mask + 1)] */
    uint32_t inst_mask;
    int64_t nvalues;    /* values stored so far (never reset by the scan) */
    int64_t nbytes;     /* string / aggregate bytes staged so far (never reset) */
    int64_t nerr;       /* values pmExtractValue could not convert to the metric's type:
                           left absent */
    int64_t dropped;    /* values of instances without a column, when drop_unknown */
    /* the counts as they were before the record numbered undo_serial reached this
     * metric: a record that fails or must be read again gives them back */
    int64_t undo_serial;
    int64_t undo_nvalues;
    int64_t undo_nbytes;
    int64_t undo_nerr;
    int64_t undo_dropped;
} pcp_cols_metric;

typedef struct {
    /* the selection: pmid -> metric, an open-addressing table with linear probing from
     * slot (pmid * 2654435761) mod 2^32 & map_mask; PM_ID_NULL marks an empty slot */
    int32_t nmetrics;
    pcp_cols_metric *metrics;
    uint32_t map_mask;
    const uint32_t *map_pmid;   /* [map_mask + 1] */
    const int32_t *map_metric;  /* [map_mask + 1] */
    int32_t first;              /* the first selected metric of the last record, or -1 */
    /* the window, inclusive, nanoseconds since the epoch */
    int64_t start_ns;
    int64_t end_ns;
    /* an instance without a column: 0 stops with PCP_COLS_NEED_COLUMN (once the
     * record is known to be good), 1 leaves its values out (counted in dropped) */
    int32_t drop_unknown;
    /* rows, filled from nrow up to row_cap */
    int32_t row_cap;
    int32_t nrow;
    int64_t *time_ns;           /* [row_cap] */
    uint8_t *flags;             /* [row_cap] PCP_ROW_* */
    int32_t pending_flags;      /* flags for the next row (a mark sets AFTER_MARK) */
    /* when zero_base is set, row r of the chunk is the zero_row_bytes at zero_base +
     * r * zero_row_bytes (the values and present rows of every metric laid out in it),
     * and the scan zeroes each row when it first reaches it (rows below zeroed_rows are
     * done): written right after, the row is still in cache, where memory zeroed for
     * the whole chunk beforehand would not be. Else the caller zeroes the matrices. */
    uint8_t *zero_base;
    int64_t zero_row_bytes;
    int32_t zeroed_rows;
    /* filled for PCP_COLS_NEED_COLUMN: up to miss_cap (metric, instance) pairs */
    int32_t *miss_metric;
    int32_t *miss_inst;
    int32_t miss_cap;
    int32_t nmiss;
    /* the staging area for string and aggregate bytes */
    uint8_t *staged;
    uint64_t staged_cap;
    uint64_t staged_used;
    uint64_t room_need;         /* set by PCP_COLS_NEED_ROOM */
    /* return PCP_COLS_PAUSE once *pos is at or past this (to release pages behind) */
    uint64_t pause_pos;
    /* counters (never reset by the scan) */
    int64_t records;            /* records read in the window, marks included */
    int64_t marks;
    int64_t skipped;            /* records before the window, framed only */
    int64_t serial;             /* records the scan has started to store (from 1) */
} pcp_cols_state;

/* Scan the volume buf[0..len) from *pos (at or after its label of label_len bytes).
 * Returns 0 when row_cap rows are filled, PCP_LOG_END at the end of the volume,
 * PCP_COLS_PAST_END, PCP_COLS_NEED_COLUMN, PCP_COLS_NEED_ROOM, PCP_COLS_PAUSE, or
 * PM_ERR_LOGREC at a bad record with *pos
 * where libpcp's reader would then be. *pos is always where the next call may start. */
int pcp_archive_columns_scan(const uint8_t *buf, size_t len, size_t label_len, int version,
                             uint64_t *pos, pcp_cols_state *s);

/* Fill m->inst_table from m->col_inst[0 .. ncols). Returns 0, or -1 when the table has
 * no room for them all and an empty slot (then lookups find no column, safely). */
int pcp_archive_columns_index(pcp_cols_metric *m);

/* Point every metric's values and present at arena + values_off[i] and
 * arena + present_off[i], with rows values_stride[i] and present_stride[i] bytes
 * apart. */
void pcp_archive_columns_bind(pcp_cols_state *s, uint8_t *arena, const int64_t *values_off,
                              const int64_t *present_off, const int64_t *values_stride,
                              const int64_t *present_stride);

/* String or aggregate references (rows [0, nrows) of a refs / present matrix whose rows
 * are `stride` long) packed column by column for columns [col0, col1), as Arrow lays
 * out a string column: cell (r, c) becomes data[offsets[k] .. offsets[k + 1]) with
 * k = (c - col0) * nrows + r (empty when absent). offsets has (col1 - col0) * nrows + 1
 * entries; data room for the bytes of every present cell. Returns the bytes written. */
int64_t pcp_archive_columns_pack(const int64_t *refs, const uint8_t *present, int32_t nrows,
                                 int32_t stride, int32_t col0, int32_t col1, const uint8_t *staged,
                                 uint64_t staged_len, int64_t *offsets, uint8_t *data);

#endif
