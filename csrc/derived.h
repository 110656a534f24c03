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

#endif
