/* Derived metrics (pcp/_libpcp/derived/): the POSIX extended regular expressions of
 * matchinst(), compiled and matched by the C library exactly as libpcp does it
 * (regcomp with REG_EXTENDED|REG_NOSUB, regexec on the instance name). */
#ifndef PCP_DERIVED_H
#define PCP_DERIVED_H

#include <stddef.h>

#include "convert.h"
#include "result.h"

/* Compile `pattern` (NUL-terminated). Returns an opaque handle, or NULL with
 * regerror's message in `errbuf` (at most `errlen` bytes, NUL-terminated). */
void *pcp_derived_regex_new(const char *pattern, char *errbuf, size_t errlen);

/* 1 when `text` (NUL-terminated) matches, else 0. */
int pcp_derived_regex_match(const void *regex, const char *text);

void pcp_derived_regex_free(void *regex);

/* Evaluation of derived metrics (libpcp 6.0.3's eval_expr), one expression node at a
 * time over whole instance vectors: pcp/_libpcp/derived/evaluate.py walks the tree and
 * calls one kernel per node; values never become Python objects. */

/* One node's values: numval (< 0 an error code), room for `cap` values. */
typedef struct {
    int32_t numval;
    int32_t cap;
    int32_t *inst;
    pcp_atom *val;
} pcp_dvec;

/* The values of value set `set` of `r` as PM_TYPE_* `type`: numval, or PM_ERR_LOGREC
 * (a 64-bit or DOUBLE value held in a word), PM_ERR_TYPE (not a number), PM_ERR_TOOBIG
 * (no room in `out`). */
int pcp_derived_load(const pcp_result *r, int32_t set, int32_t type, pcp_dvec *out);

/* Binary operator `op` (libpcp's N_* number) computed in `otype` (relational and
 * boolean results become 0/1 words when `relational`), operands scaled by mul/div in
 * DOUBLE arithmetic, instances matched as libpcp matches them. Returns numval. */
int pcp_derived_binary(int32_t op, int32_t otype, int32_t relational,
                       int32_t ltype, int64_t lmul, int64_t ldiv, int32_t lnull,
                       const pcp_dvec *l, int32_t rtype, int64_t rmul, int64_t rdiv,
                       int32_t rnull, const pcp_dvec *r, pcp_dvec *out);

/* ! (op N_NOT) and unary minus (N_NEG) of an operand of type `ltype`. */
int pcp_derived_unary(int32_t op, int32_t ltype, const pcp_dvec *in, pcp_dvec *out);

/* delta() (rate == 0) and rate() of an operand of type `ltype` between its last and
 * current values; `dt` the seconds between the two fetches, `time_scale` the factor
 * applied to time utilization (rate of a time counter). */
int pcp_derived_delta(int32_t rate, int32_t ltype, const pcp_dvec *cur, const pcp_dvec *last,
                      double dt, double time_scale, pcp_dvec *out);

/* avg count sum max min (N_*) of the operand's values into out->val[0] (max and min
 * keep what out held when there are no values, as libpcp's buffer does). */
int pcp_derived_aggregate(int32_t op, int32_t type, int32_t ltype, const pcp_dvec *in,
                          pcp_dvec *out);

/* guard ? yes : no, the guard of type `gtype`; instances from `no` when `inst_from_no`. */
int pcp_derived_ternary(int32_t gtype, const pcp_dvec *g, const pcp_dvec *yes,
                        const pcp_dvec *no, int32_t inst_from_no, pcp_dvec *out);

/* pmConvScale of every value (factors from pcp._core.units); failures are left out. */
int pcp_derived_rescale(int32_t type, int64_t mult, int64_t div, const pcp_dvec *in,
                        pcp_dvec *out);

/* The value of one instance (metric[name]), or none. */
int pcp_derived_filter_exact(int32_t inst, const pcp_dvec *in, pcp_dvec *out);

/* matchinst(): the values whose instance the table (sorted by instance) marks as
 * matching, counting each instance's use. Instances not in the table are written to
 * `unknown` (room for in->numval) and their number returned negated (-n, nothing else
 * written); else numval. */
int pcp_derived_filter_table(const pcp_dvec *in, const int32_t *insts, const int32_t *match,
                             int32_t *used, int32_t ntable, int32_t *unknown, pcp_dvec *out);

/* The fetched result with the derived value sets in place: for each of `nsets` output
 * sets, src_set[j] >= 0 copies that set of `src`; else vecs[j] (of PM_TYPE_* types[j])
 * holds the values, or numvals[j] is its numval when vecs[j] is NULL. Sizing call
 * (data == NULL): reports the values and payload bytes needed. */
int pcp_derived_assemble(const pcp_result *src, const uint8_t *src_data, uint32_t src_len,
                         int32_t nsets, const uint32_t *pmids, const int32_t *src_set,
                         const int32_t *numvals, pcp_dvec **vecs, const int32_t *types,
                         pcp_result *out, uint8_t *data, int32_t *nvalues, uint32_t *nbytes);

/* Derived metrics over whole chunks of rows (the bulk readers' derived columns): the
 * operands come as matrices, rows x instance columns, with a presence matrix, whatever
 * made them (an archive scan, a time grid); every row is one fetch, evaluated node by
 * node with the kernels above exactly as pcp/_libpcp/derived/kernels.py walks the tree
 * for one pmFetch, with the state libpcp carries between fetches kept in the nodes. */

/* One operand metric of a chunk: row r's cells start at values + r * values_stride
 * (PM_TYPE_* `type`, 4 or 8 bytes each), its presence at present + r * present_stride;
 * col_inst[c] is the instance of column c. */
typedef struct {
    int32_t type;
    int32_t ncols;
    const int32_t *col_inst;
    const uint8_t *values;
    int64_t values_stride;
    const uint8_t *present;
    int64_t present_stride;
} pcp_dchunk_operand;

/* One node of a bound tree (pcp/_bulk/derived_columns.py fills it from the Node), and
 * its state between rows and chunks. */
typedef struct {
    int32_t type;              /* libpcp's N_* */
    int32_t vtype;             /* PM_TYPE_* of the node's values */
    int32_t left, right;       /* child nodes' indexes, -1 for none */
    int32_t null_indom;        /* the node's instance domain is PM_INDOM_NULL */
    int64_t mul, div;          /* map_units() factors on the node as an operand */
    int32_t operand;           /* N_NAME: index of its operand matrices */
    int32_t save_last;         /* N_NAME under delta()/rate(): keep the previous values */
    int32_t otype;             /* binary operators: the type the operation is done in */
    int32_t relational;        /* binary operators: relational or boolean */
    int32_t inst_from_no;      /* N_QUEST: instances from the "no" operand */
    int64_t scale_mult, scale_div;   /* N_RESCALE: pmConvScale factors */
    double time_scale;         /* N_RATE: factor for a time counter's utilization */
    pcp_atom constant;         /* N_INTEGER, N_DOUBLE, N_DEFINED */
    int32_t exact_inst;        /* N_FILTERINST by name: the instance */
    int64_t exact_from;        /* ... known from this row of the chunk on */
    int32_t regex;             /* N_FILTERINST: matchinst() over the table below */
    const int32_t *table_inst; /* instances (sorted) whose names have been matched */
    const int32_t *table_match;
    int32_t *table_used;
    int32_t ntable;
    pcp_dvec cur;              /* this row's values (room for the chunk's widest) */
    pcp_dvec last;             /* N_NAME with save_last: the previous row's */
    const pcp_dvec *out;       /* where the node's values are (N_INSTANT: its operand's) */
    int64_t stamp_sec, stamp_nsec;   /* N_DELTA, N_RATE: this and the last fetch's time */
    int64_t last_sec, last_nsec;
} pcp_dchunk_node;

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

/* One derived metric of a chunk: its tree (root at index 0), its operands' matrices,
 * its output columns and matrices (cells of the root's type, a row `out_stride` /
 * `out_present_stride` bytes after the one before); `nvalues` counts the values
 * written, `unplaced` those of an instance without a column, `status` is 0 or the
 * PM_ERR_* that stopped it (too little room in a node: the caller sizes every vector
 * for the chunk's widest operand). */
typedef struct {
    pcp_dchunk_node *nodes;
    int32_t nnodes;
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
