/* Writing PCP archives (format v2 and v3), as libpcp_import 6.0.3 and the libpcp log
 * writers it calls lay them out (archive-format.md sections 5-9).
 *
 * Sans-I/O like the rest of the core: every encoder fills a caller's buffer and the
 * Python side (pcp/_archive/writer.py) owns the files. An encoder returns the byte
 * length of its record; it writes only when `cap` has room for all of it, so a caller
 * passes out == NULL (or a small buffer) to learn the size, then calls again. Negative
 * returns are libpcp error codes.
 *
 * The pending result (pcp_pending) is libpcp_import's __pmResult under construction:
 * pmiPutValue parses each value text with the C library's strtol/strtoul/strtoll/
 * strtoull/strtof/strtod (what libpcp_import calls, so every accepted spelling and every
 * overflow behaves alike), and pmiWrite encodes it as one data record. */
#ifndef PCP_ARCHIVE_WRITE_H
#define PCP_ARCHIVE_WRITE_H

#include "pcp_core.h"

/* libpcp_import's own codes (import.h); Python has them in pcp._core.constants. */
#define PMI_ERR_DUPVALUE (-20008)

/* ---- fixed-layout records ---------------------------------------------------------- */

/* The label record that starts every file: vol is N for volume N, -1 .meta, -2 .index.
 * Strings are NUL-terminated and truncated as libpcp truncates them. */
int pcp_archive_write_label(uint8_t *out, size_t cap, int version, int32_t pid,
                            int64_t sec, int32_t nsec, int32_t vol, const char *hostname,
                            const char *timezone, const char *zoneinfo);

/* One temporal index entry (unframed, 20 or 32 bytes). */
int pcp_archive_write_index(uint8_t *out, size_t cap, int version, int64_t sec, int32_t nsec,
                            int32_t vol, int64_t meta_off, int64_t data_off);

/* A <mark> record: a data record with no value sets. */
int pcp_archive_write_mark(uint8_t *out, size_t cap, int version, int64_t sec, int32_t nsec);

/* ---- metadata records -------------------------------------------------------------- */

/* TYPE_DESC with one name (name[0..namelen), not NUL-terminated on disk). `units` is the
 * packed pmUnits word. */
int pcp_archive_write_desc(uint8_t *out, size_t cap, uint32_t pmid, int32_t type,
                           uint32_t indom, int32_t sem, uint32_t units, const char *name,
                           size_t namelen);

/* A full instance domain (TYPE_INDOM_V2 or TYPE_INDOM): numinst ids and their names,
 * packed NUL-terminated one after the other in names[0..nameslen). */
int pcp_archive_write_indom(uint8_t *out, size_t cap, int version, int64_t sec, int32_t nsec,
                            uint32_t indom, int32_t numinst, const int32_t *inst,
                            const char *names, size_t nameslen);

/* TYPE_TEXT: text[0..textlen) plus the NUL libpcp stores. */
int pcp_archive_write_text(uint8_t *out, size_t cap, uint32_t type, uint32_t ident,
                           const char *text, size_t textlen);

/* A label record holding one label set (TYPE_LABEL_V2 or TYPE_LABEL): its JSONB text and
 * nlabels pmLabel entries given as 5 numbers each (name offset, name length, flags,
 * value offset, value length). */
int pcp_archive_write_labelset(uint8_t *out, size_t cap, int version, int64_t sec,
                               int32_t nsec, uint32_t type, uint32_t ident, uint32_t inst,
                               const char *json, size_t jsonlen, int32_t nlabels,
                               const uint32_t *labels);

/* ---- the pending result ------------------------------------------------------------ */

typedef struct pcp_pending pcp_pending;

pcp_pending *pcp_pending_new(void);
void pcp_pending_free(pcp_pending *p);
/* Forget every value set (after a record is written). */
void pcp_pending_clear(pcp_pending *p);
int32_t pcp_pending_numpmid(const pcp_pending *p);
/* The pmid of value set i, in first-value order (the order libpcp encodes them). */
uint32_t pcp_pending_pmid(const pcp_pending *p, int32_t i);

/* pmiPutValue for the metric at slot `metric` (libpcp_import's metric index; pmid, type
 * and whether it is singular come with it) and instance `inst`: 0, PMI_ERR_DUPVALUE,
 * PM_ERR_CONV, PM_ERR_TYPE, or the error already recorded for the metric's value set. */
int pcp_pending_put_text(pcp_pending *p, int32_t metric, uint32_t pmid, int singular,
                         int type, int32_t inst, const char *text);

/* A value set as a caller's pmResult holds it (pmiPutResult): numval may be a negative
 * error code; each value is an INSITU word or a value block in host byte order
 * (header word vlen/vtype as in memory, payload as the vtype says). */
int pcp_pending_add_set(pcp_pending *p, uint32_t pmid, int32_t numval, int32_t valfmt);
int pcp_pending_add_value(pcp_pending *p, int32_t inst, int32_t lval, const uint8_t *block,
                          uint32_t vlen, int32_t vtype);

/* Sort each value set's values into ascending instance order as libpcp does
 * (qsort with its comparator), then encode the data record stamped sec.nsec. */
void pcp_pending_sort(pcp_pending *p);
int64_t pcp_pending_encode(const pcp_pending *p, int version, int64_t sec, int32_t nsec,
                           uint8_t *out, size_t cap);

/* ---- whole rows at once (DataFrame writers) ------------------------------------------ */

/* One metric over a block of rows: ncol instance columns (instance ids ascending, as
 * libpcp's sort would leave them; PM_IN_NULL for a singular metric) of typed values,
 * row-major [row][col]: int32/uint32/int64/uint64/float/double as `type` says. Strings
 * and aggregates are str_off[row*ncol+col] .. str_off[row*ncol+col+1] into str_data
 * (n*ncol+1 offsets; a string stops at a NUL and gets one, an aggregate is raw). present[row*ncol+col] == 0 leaves that value out (present may be NULL). */
typedef struct {
    uint32_t pmid;
    int32_t type;
    int32_t ncol;
    const int32_t *inst;
    const void *values;
    const uint8_t *present;
    const int64_t *str_off;
    const uint8_t *str_data;
} pcp_frame_metric;

/* Rows [0, nrows) of the metrics as data records, one per row that has a value (a row
 * without any is skipped: reclen[row] = 0), stamped sec[row].nsec[row], value sets in
 * metric order. Returns the bytes of all records; when out is NULL or cap is smaller,
 * only reclen[] and that total are computed. */
int64_t pcp_archive_write_frame(const pcp_frame_metric *metrics, int32_t nmetrics,
                                int32_t nrows, int version, const int64_t *sec,
                                const int32_t *nsec, uint8_t *out, size_t cap,
                                int64_t *reclen);

#endif
