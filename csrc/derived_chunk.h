/* Derived metrics over whole chunks of rows (the bulk readers' derived columns,
 * pcp/_libpcp/derived/chunks.py): the operands come as matrices, rows x instance
 * columns, with a presence matrix, whatever made them (an archive scan, a time grid);
 * every row is one fetch, each metric a program of derived_node.h run over it as for
 * one pmFetch, with the state libpcp carries between fetches kept in the nodes from one
 * row and chunk to the next. What the pmFetch path asks Python for mid-fetch is put in
 * the nodes beforehand (metric[name]'s instance and the row it is known from,
 * matchinst()'s table), so a chunk is evaluated in one call. */
#ifndef PCP_DERIVED_CHUNK_H
#define PCP_DERIVED_CHUNK_H

#include <stdint.h>

#include "derived_node.h"

/* One operand metric of a chunk: row r's cells start at values + r * values_stride
 * (PM_TYPE_* `type`, 4 or 8 bytes each), its presence at present + r * present_stride;
 * col_inst[c] is the instance of column c. */
typedef struct {
    uint32_t pmid;
    int32_t type;
    int32_t ncols;
    const int32_t *col_inst;
    const uint8_t *values;
    int64_t values_stride;
    const uint8_t *present;
    int64_t present_stride;
} pcp_dchunk_operand;

/* The output columns of a chunk: the column of an instance is found in `dense`
 * (dense[inst - base] for base <= inst < base + ndense, -1 for none) when it is given,
 * else by binary search in `inst` (sorted) with `col` alongside. */
typedef struct {
    const int32_t *inst;
    const int32_t *col;
    int32_t n;
    const int32_t *dense;
    int32_t base;
    int32_t ndense;
} pcp_dchunk_columns;

/* One derived metric of a chunk: its program, its operands' matrices (an N_NAME node's
 * found by pmid), its output columns and matrices (cells of the root's type, a row
 * `out_stride` / `out_present_stride` bytes after the one before); `nvalues` counts the
 * values written, `unplaced` those of an instance without a column, `status` is 0 or
 * the error that stopped it (a malformed program or input, no memory, a rescale()
 * without scale factors). */
typedef struct {
    pcp_dprogram *prog;
    const pcp_dchunk_operand *ops;
    int32_t nops;
    const pcp_dchunk_columns *columns;
    int32_t out_ncols;             /* columns of the output matrices */
    uint8_t *out_values;
    int64_t out_stride;
    uint8_t *out_present;
    int64_t out_present_stride;
    int64_t nvalues;
    int64_t unplaced;
    int32_t status;
} pcp_dchunk_program;

/* Evaluate `nprogs` derived metrics over the `nrows` rows of a chunk at times
 * `time_ns` (ns since the epoch), every row of each in order; the rows are taken in
 * blocks, every metric over a block in turn, so that the operands' rows are read from
 * cache by all of them. Returns 0, or the first program's failing status. */
int pcp_derived_chunk_eval(pcp_dchunk_program *progs, int32_t nprogs, const int64_t *time_ns,
                           int64_t nrows);

#endif
