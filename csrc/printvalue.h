/* pmdumplog's value lines of one record, written straight from a result's flat columns
 * (pcp_result) into a caller's buffer: the dump of a large archive without a Python
 * object per value. The text is pmPrintValue's (minimum width 1) for the numeric types
 * and strings; what it does not write (error codes, event arrays, aggregates, a value
 * whose block type is not the metric's, a string that is not UTF-8) it leaves to the
 * caller's own path by returning PCP_PRINTVALUE_OTHER for the whole record. A metric's
 * error code is written as its text from a table the caller gives (libpcp's words). */
#ifndef PCP_PRINTVALUE_H
#define PCP_PRINTVALUE_H

#include "result.h"

/* The returns besides the length written: a record the caller formats itself, and a
 * buffer too small (the caller grows it and calls again). */
enum { PCP_PRINTVALUE_OTHER = -2, PCP_PRINTVALUE_ROOM = -3 };

/* One value set to write: its index in the result, the metric's PM_TYPE_*, its head
 * text ("    60.0.1 (name):") at heads[head_off .. head_off + head_len), and its
 * instance names: names[names_first .. names_first + names_count), sorted by instance
 * without repeats; names_count -1 for a metric without an instance domain (no "inst"). */
typedef struct {
    int32_t set;
    int32_t type;
    uint32_t head_off;
    uint32_t head_len;
    int32_t names_first;
    int32_t names_count;
} pcp_printvalue_set;

/* A text by its key: an instance's name by instance, an error's text by its code; the
 * text is pool[off .. off + len) of its table's pool. Tables are sorted by key without
 * repeats. */
typedef struct {
    int32_t key;
    uint32_t off;
    uint32_t len;
} pcp_printvalue_text;

/* Write the lines of sets[0 .. nsets) of `result` (block payloads in data[0 .. datalen))
 * to out[0 .. cap), instance names from names[0 .. nnames) over `pool`, error texts from
 * errors[0 .. nerrors) over `error_pool` (a code not there: PCP_PRINTVALUE_OTHER).
 * Returns the bytes written, PCP_PRINTVALUE_OTHER, PCP_PRINTVALUE_ROOM, or
 * PM_ERR_TOOSMALL for an index, offset or length out of range. */
int64_t pcp_printvalue_dump_sets(uint8_t *out, size_t cap, const pcp_printvalue_set *sets,
                                 int32_t nsets, const pcp_result *result, const uint8_t *data,
                                 size_t datalen, const uint8_t *heads, size_t heads_len,
                                 const pcp_printvalue_text *names, int32_t nnames,
                                 const uint8_t *pool, size_t pool_len,
                                 const pcp_printvalue_text *errors, int32_t nerrors,
                                 const uint8_t *error_pool, size_t error_pool_len);

/* pmdumplog -s's size of a record holding sets[0 .. nsets) of `result` (only .set is
 * read): `header` bytes (the record's header and trailer), 8 a set, and for a set with
 * values 4 + 8 a value and, for values in blocks, each block with its 4-byte header
 * padded to a word. Returns it, or PM_ERR_TOOSMALL for an index out of range. */
int64_t pcp_printvalue_record_size(const pcp_printvalue_set *sets, int32_t nsets,
                                   const pcp_result *result, int64_t header);

#endif
