/* PCP archive files (format v2 and v3): labels, metadata records, the temporal index and
 * data records. Every function works on the bytes of one whole file (memory-mapped or
 * decompressed by the caller) and an offset into it, and reproduces what libpcp 6.0.3
 * does with the same bytes, including where its stream position ends up after an error.
 * See archive-format.md for the layouts. */
#ifndef PCP_ARCHIVE_H
#define PCP_ARCHIVE_H

#include "pcp_core.h"
#include "result.h"
#include "pdu.h"

/* ---- labels (the first record of every file) ------------------------------------ */

typedef struct {
    int32_t version;    /* 2 or 3 */
    int32_t magic;
    int32_t pid;
    int32_t vol;        /* N for data volume N, -1 for .meta, -2 for .index */
    int64_t sec;
    int64_t nsec;
    uint32_t features;  /* v3 only */
    uint32_t len;       /* 132 (v2) or 808 (v3): where the file's records start */
    uint32_t host_off;  /* NUL-terminated-or-full strings, as byte ranges of buf */
    uint32_t host_len;
    uint32_t tz_off;
    uint32_t tz_len;
    uint32_t zone_off;  /* zoneinfo (v3), length 0 for v2 */
    uint32_t zone_len;
} pcp_log_label;

/* Returns 0, PM_ERR_NODATA (fewer than 8 bytes: an empty file) or PM_ERR_LABEL. */
int pcp_archive_label_decode(const uint8_t *buf, size_t len, pcp_log_label *out);

/* ---- data records ------------------------------------------------------------------ */

#define PCP_LOG_END 1   /* no record in that direction: the caller changes volume */

typedef struct {
    uint64_t off;       /* where the record starts (its leading length word) */
    uint32_t len;       /* whole record length, both length words included */
    int32_t numpmid;    /* 0 for a mark record */
    int32_t nvalues;    /* values in all its value sets (sizes a decode) */
    int64_t sec;
    int64_t nsec;
} pcp_log_record;

/* One step of libpcp's record reader, forwards (backward == 0) or backwards from byte
 * position `pos` of a volume whose records start at `label_len`. Returns 0 with *rec
 * filled, PCP_LOG_END, or PM_ERR_LOGREC; *newpos is where libpcp's stream would be
 * afterwards (so a truncated record stays put and fails again, while a record whose two
 * length words differ is stepped over). `paranoid` adds pmGetArchiveEnd's extra check. */
int pcp_archive_record_read(const uint8_t *buf, size_t len, size_t label_len, int version,
                            int backward, int paranoid, uint64_t pos, uint64_t *newpos,
                            pcp_log_record *rec);

/* A single whole record (rec[0..len), length words included), checked as libpcp's
 * decoder checks it: scan reports its sizes, decode fills a result sized from the scan.
 * Both return 0 or PM_ERR_LOGREC. */
/* The time and numpmid (0: a <mark>) of the record at pos, read forwards, with only its
 * framing checked (its length words and room for its fixed part): 0, PCP_LOG_END or
 * PM_ERR_LOGREC, *newpos past it. */
int pcp_archive_record_time(const uint8_t *buf, size_t len, int version, uint64_t pos,
                            uint64_t *newpos, int64_t *sec, int64_t *nsec, int32_t *numpmid);

int pcp_archive_record_scan(const uint8_t *rec, size_t len, int version, int32_t *numpmid,
                            int32_t *nvalues);
int pcp_archive_record_decode(const uint8_t *rec, size_t len, int version, pcp_result *out);

/* The value sets of a record (read, and so checked, before) that `keep` accepts, as
 * pcp_result_valuesets_keep takes them: count with out NULL, then fill. Returns 0 or
 * PM_ERR_LOGREC. */
int pcp_archive_record_keep(const uint8_t *rec, size_t len, int version,
                            pcp_pmid_filter keep, const void *keep_ctx, int32_t *nsets,
                            int32_t *nvalues, pcp_result *out);

/* The pmids of a record's value sets (read, and so checked, before), in the record's
 * order, into pmids[0 .. cap): only the set headers are walked (as pcp_archive_record_keep
 * walks them; no value is decoded). Returns how many sets the record has (more than cap:
 * the first cap written) or PM_ERR_LOGREC. */
int pcp_archive_record_pmids(const uint8_t *rec, size_t len, int version, uint32_t *pmids,
                             int32_t cap);

#define PCP_SELECT_NEED_ROOM 2  /* pcp_archive_record_select: `out` or `data` is not the
                                   size *nvalues and *nbytes say, nothing was filled */

/* pmFetch's result (pcp_result_select's; defined in result_select.c) made straight from
 * one whole archive data record (rec[0..len), length words included, read, and so
 * checked, by pcp_archive_record_read): only the requested pmids' value sets are decoded, then selected as pcp_result_select does, and the
 * payloads of the selected value blocks copied into `data` (boff then relative to it).
 * *nvalues gets the number of values of the result, *nbytes an upper bound of the
 * payload bytes (then, once filled, the bytes used). `out` must be bound for exactly
 * *nvalues values (out->nvalues on entry) and request->npmids sets, `data` hold
 * data_room bytes; otherwise nothing is filled and PCP_SELECT_NEED_ROOM is returned
 * (call again with those sizes). Returns 1 or 0 as pcp_result_select, or its errors;
 * PM_ERR_LOGREC for a malformed record. */
int pcp_archive_record_select(const uint8_t *rec, size_t len, int version,
                              const pcp_select_request *request, const pcp_profile *profile,
                              pcp_result *out, uint8_t *data, int64_t data_room,
                              int32_t *nvalues, int64_t *nbytes);

/* Many records at once, for bulk readers: columns the caller allocates, appended to. */
typedef struct {
    int32_t rec_cap, set_cap, val_cap;  /* room in the arrays */
    int32_t nrec, nset, nval;           /* used so far */
    int64_t *sec;       /* [rec_cap] per record */
    int64_t *nsec;
    int32_t *numpmid;
    int32_t *rec_first; /* index of the record's first value set */
    uint64_t *rec_off;  /* where the record starts in the volume (boff/blen are relative) */
    uint32_t *pmid;     /* [set_cap] per value set */
    int32_t *numval;
    int32_t *valfmt;
    int32_t *set_first; /* index of the set's first value (chunk-wide) */
    int32_t *inst;      /* [val_cap] per value, as in pcp_result */
    int32_t *vtype;
    int64_t *ival;
    double *dval;
    uint32_t *boff;
    uint32_t *blen;
} pcp_log_columns;

/* Decode whole records forwards from *pos while they fit in the columns (one call, no
 * Python in between: cffi releases the GIL around it). Returns 0 when the columns are
 * full, PCP_LOG_END at the end of the volume, PM_ERR_LOGREC at a bad record (with *pos
 * where libpcp's reader would be), or PM_ERR_TOOBIG if one record alone does not fit. */
int pcp_archive_records_scan(const uint8_t *buf, size_t len, int version, uint64_t *pos,
                             pcp_log_columns *cols);

/* ---- metadata (.meta) records ------------------------------------------------------ */

#define PCP_META_DESC 1
#define PCP_META_INDOM_V2 2
#define PCP_META_LABEL_V2 3
#define PCP_META_TEXT 4
#define PCP_META_INDOM 5
#define PCP_META_INDOM_DELTA 6
#define PCP_META_LABEL 7

/* The 8-byte header (length, type) of the record at pos. Returns 0, PCP_LOG_END at the
 * end of the file (fewer than 8 bytes left: libpcp ignores a partial header) or
 * PM_ERR_LOGREC (a length that is not positive). */
int pcp_archive_meta_header(const uint8_t *buf, size_t len, uint64_t pos, int32_t *type,
                            int32_t *rec_len);

/* Each record decoder below starts at the record's header, checks the trailer where
 * libpcp looks for it and sets *next to the following record. Arrays are filled up to
 * `cap` entries; the return value is the true count (call again with more room if it is
 * larger than cap) or a negative PM_ERR_*. Names and strings are byte ranges of buf. */

/* TYPE_DESC: the descriptor and its names. */
int pcp_archive_meta_desc(const uint8_t *buf, size_t len, uint64_t pos, pcp_desc *desc,
                          int32_t cap, uint32_t *name_off, int32_t *name_len, uint64_t *next);

typedef struct {
    int64_t sec;
    int64_t nsec;
    uint32_t indom;
    int32_t numinst;
} pcp_indom_head;

/* TYPE_INDOM_V2, TYPE_INDOM, TYPE_INDOM_DELTA: name_len[i] is -1 for an instance a
 * delta record deletes. */
int pcp_archive_meta_indom(const uint8_t *buf, size_t len, uint64_t pos, pcp_indom_head *head,
                           int32_t cap, int32_t *inst, uint32_t *name_off, int32_t *name_len,
                           uint64_t *next);

typedef struct {
    int64_t sec;
    int64_t nsec;
    uint32_t type;      /* PM_LABEL_* class as stored */
    uint32_t ident;
} pcp_label_head;

/* TYPE_LABEL_V2, TYPE_LABEL: returns nsets; labels of all sets are concatenated (each
 * set's `first` indexes them). */
int pcp_archive_meta_labels(const uint8_t *buf, size_t len, uint64_t pos, pcp_label_head *head,
                            int32_t set_cap, pcp_labelset *sets, int32_t label_cap,
                            pcp_label *labels, int32_t *nlabels_total, uint64_t *next);

/* TYPE_TEXT: returns 0, or 1 for a record libpcp skips (a text type it does not know;
 * libpcp then resumes at the trailer word, which *next reproduces). */
int pcp_archive_meta_text(const uint8_t *buf, size_t len, uint64_t pos, uint32_t *text_type,
                          uint32_t *ident, uint32_t *text_off, uint32_t *text_len, uint64_t *next);

/* ---- the whole .meta in one pass (archive_meta_scan.c) ------------------------------ */

/* One instance-domain record: its instances are inst[first .. first+numinst). */
typedef struct {
    int64_t sec;
    int64_t nsec;
    uint32_t indom;
    int32_t type;       /* PCP_META_INDOM_V2, PCP_META_INDOM or PCP_META_INDOM_DELTA */
    int32_t first;
    int32_t numinst;
} pcp_meta_indom_rec;

/* One label record, checked; its sets are decoded later by pcp_archive_meta_labels at
 * `off`, with arrays sized from `room` (the record's length, or the bytes left if fewer). */
typedef struct {
    int64_t sec;
    int64_t nsec;
    uint32_t type;
    uint32_t ident;
    uint32_t off;
    int32_t room;
} pcp_meta_label_rec;

/* One help-text record libpcp keeps (not the skipped kinds): the text up to its NUL. */
typedef struct {
    uint32_t type;
    uint32_t ident;
    uint32_t off;
    uint32_t len;
} pcp_meta_text_rec;

/* Everything __pmLogLoadMeta reads from one .meta, as flat arrays in file order, which
 * the walk allocates and grows (*_cap is their room; start from a zeroed struct and
 * release it with pcp_archive_meta_index_free). Descriptors are columns (Python unpacks
 * each in one call); descriptor i has desc_nnames[i] names from name index
 * desc_first[i], a name's length ending at its first NUL as libpcp reads it. All offsets
 * are into buf. */
struct pcp_meta_pmns_slot;     /* archive_meta_scan.c's own */

typedef struct {
    int32_t desc_cap, name_cap, indom_cap, inst_cap, label_cap, text_cap;
    int32_t ndesc, nname, nindom, ninst, nlabel, ntext;
    uint64_t end;           /* where the walk stopped: the end, or the bad record */
    uint32_t *desc_pmid;
    int32_t *desc_type;
    uint32_t *desc_indom;
    int32_t *desc_sem;
    uint32_t *desc_units;
    int32_t *desc_first;
    int32_t *desc_nnames;
    uint32_t *name_off;
    int32_t *name_len;
    uint32_t *name_pmid;    /* the pmid of the descriptor the name came with */
    pcp_meta_indom_rec *indom;
    int32_t *inst;
    uint32_t *inst_name_off;
    int32_t *inst_name_len; /* -1 for an instance a delta record deletes */
    pcp_meta_label_rec *label;
    pcp_meta_text_rec *text;
    struct pcp_meta_pmns_slot *pmns;    /* pcp_archive_meta_names_index's hash set */
    uint64_t pmns_mask;
} pcp_meta_index;

/* Walk the records of a .meta from `pos` (after its label) to the end of the file, as
 * libpcp's loader does. Returns 0 at the end, or the PM_ERR_* of the first bad record
 * (PM_ERR_LOGREC, PM_ERR_RECTYPE for an unknown type; -ENOMEM if memory ran out): the
 * records before it are in `ix`, as libpcp has loaded them when it fails. Conflicting
 * descriptors are the caller's to find (they span archives). */
int pcp_archive_meta_scan(const uint8_t *buf, size_t len, uint64_t pos, pcp_meta_index *ix);
void pcp_archive_meta_index_free(pcp_meta_index *ix);

/* The archive PMNS of one scanned .meta without its tree: libpcp adds the descriptors'
 * names in file order and drops a name that is bound already (the first binding wins),
 * has an empty component, passes through a leaf or names a node with children. A hash
 * set of the names and their dotted prefixes (ix->pmns, freed with the index) decides
 * the same. Returns how many names are kept, or PM_ERR_LOGREC (ix is not a scan of buf)
 * or -ENOMEM. */
int32_t pcp_archive_meta_names_index(const uint8_t *buf, size_t len, pcp_meta_index *ix);

/* The pmid of a name the index keeps, or -1 (buf is the scanned .meta). */
int64_t pcp_archive_meta_name_pmid(const uint8_t *buf, const pcp_meta_index *ix,
                                   const uint8_t *name, size_t n);

/* ---- temporal index (.index) ------------------------------------------------------- */

typedef struct {
    int64_t sec;
    int64_t nsec;
    int32_t vol;
    int64_t off_meta;
    int64_t off_data;
} pcp_index_entry;

/* Entries after the label; a partial entry at the end is ignored. Returns the count. */
int pcp_archive_index_decode(const uint8_t *buf, size_t len, size_t label_len, int version,
                             int32_t cap, pcp_index_entry *out);

#endif
