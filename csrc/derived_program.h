/* Derived metrics for pmFetch (pcp/_libpcp/derived/program.py): each bound numeric
 * expression is a program of derived_node.h, and one call per fetch evaluates every
 * derived metric of the request over the fetched result, libpcp 6.0.3's eval_expr()
 * order and error propagation included; a second call assembles the result.
 *
 * Python answers what the evaluation stops for (pcp_dnode.need): the caller answers,
 * then calls again to resume at the node that stopped. */
#ifndef PCP_DERIVED_PROGRAM_H
#define PCP_DERIVED_PROGRAM_H

#include <stdint.h>

#include "derived_node.h"

/* Evaluate the derived metrics of one fetch over result `r`: for each of the `nsets`
 * output sets whose progs[j] is not NULL, run that program and set numvals[j] (its
 * root's numval, < 0 an error) and vecs[j] (its root's values, NULL unless numval > 0).
 * Starts at set at[0], node at[1] (0, 0 for a new fetch). Returns 0 when every program
 * has run, 1 when one stopped at set at[0], node at[1] (see pcp_dnode.need), or an
 * error code (no memory). */
int pcp_derived_plan_eval(const pcp_result *r, int32_t nsets, pcp_dprogram **progs,
                          int32_t *numvals, pcp_dvec **vecs, int32_t *at);

/* A pmFetch request's derived metrics (pcp/_libpcp/derived/program.py's Plan): its
 * `nsets` output sets as pcp_derived_assemble takes them (pmids, src_set, types), the
 * programs, and what a fetch leaves in it. */
typedef struct {
    int32_t nsets;
    const uint32_t *pmids;
    const int32_t *src_set;
    const int32_t *types;
    pcp_dprogram **progs;
    int32_t *numvals;
    pcp_dvec **vecs;
    int32_t at[2];          /* where an evaluation stopped (set, node) */
    int32_t nvalues;        /* the result's values, */
    uint32_t nbytes;        /* payload bytes */
    uint64_t memsize;       /* and column bytes (pcp_result_mem_size) */
} pcp_dplan;

/* The first half of a fetch: evaluate the derived metrics over `r` (from the start, or
 * from where the last call stopped when `resume`), then size the result. Returns 0
 * (sizes set), 1 (stopped at plan->at, as pcp_derived_plan_eval) or an error code. */
int pcp_derived_plan_start(pcp_dplan *plan, const pcp_result *r, const uint8_t *data,
                           uint32_t len, int32_t resume);

/* The second half: the result in `out`, its columns in `mem` (plan->memsize bytes,
 * 8-byte aligned), its payloads in `buf` (plan->nbytes). */
int pcp_derived_plan_fill(pcp_dplan *plan, const pcp_result *r, const uint8_t *data,
                          uint32_t len, pcp_result *out, void *mem, uint8_t *buf);

#endif
