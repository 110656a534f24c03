/* Derived metrics compiled for pmFetch (pcp/_libpcp/derived/program.py): each bound
 * numeric expression becomes a flat array of nodes in post-order (operands before the
 * node that uses them, the root last), and one call per fetch evaluates every derived
 * metric of the request over the fetched result with the kernels of derived_eval.c,
 * libpcp 6.0.3's eval_expr() order and error propagation included. The nodes keep their
 * values between fetches (delta() and rate() need the last ones) in buffers this file
 * allocates; pcp_derived_program_free releases them.
 *
 * Two things need Python, and make the evaluation stop at the node that needs them and
 * report it (the caller answers, then calls again to resume there): the instance id of
 * metric[name] (PCP_DNODE_NEED_INSTANCE) and the instance names matchinst() has not
 * seen yet (PCP_DNODE_NEED_NAMES). A rescale() whose scale factors could not be made
 * stops with PCP_DNODE_RAISE (the caller raises its error). */
#ifndef PCP_DERIVED_PROGRAM_H
#define PCP_DERIVED_PROGRAM_H

#include <stdint.h>

#include "derived.h"

/* pcp_dnode.filter */
enum { PCP_DFILTER_NONE = 0, PCP_DFILTER_EXACT = 1, PCP_DFILTER_REGEX = 2 };
/* pcp_dnode.exact_state */
enum { PCP_DEXACT_UNKNOWN = 0, PCP_DEXACT_KNOWN = 1, PCP_DEXACT_MISSING = 2 };
/* why an evaluation stopped (pcp_dnode.need) */
enum { PCP_DNODE_NEED_INSTANCE = 1, PCP_DNODE_NEED_NAMES = 2, PCP_DNODE_RAISE = 3 };

typedef struct {
    /* the definition, set once by the compiler */
    int32_t op;             /* libpcp's N_* */
    int32_t type;           /* PM_TYPE_* of the node's values */
    int32_t left, right;    /* operand nodes (index in the program), -1 none */
    int32_t parent;         /* -1 for the root */
    int32_t indom_null;     /* the node's instance domain is PM_INDOM_NULL */
    int64_t mul, div;       /* the scale map_units() puts on this node as an operand */
    uint32_t pmid;          /* N_NAME: the operand */
    int32_t save_last;      /* N_NAME: keep the last fetch's values (delta()/rate()) */
    int32_t otype;          /* binary operators: the type the operation is computed in */
    int32_t relational;     /* binary operators: relational or boolean (0/1 results) */
    int64_t scale_mult;     /* rescale(): pmConvScale's factors */
    int64_t scale_div;
    int32_t error;          /* rescale(): its factors failed with this code (raised) */
    double time_scale;      /* rate(): the factor for a time counter, else 1 */
    pcp_atom constant;      /* numbers and defined(): the value */
    int32_t filter;         /* N_FILTERINST: PCP_DFILTER_* */
    /* evaluation state */
    pcp_dvec cur, last;     /* this fetch's values, and the last fetch's (save_last) */
    int64_t stamp_sec, stamp_nsec, last_sec, last_nsec;  /* rate(): fetch times */
    int32_t need;           /* why the evaluation stopped here (PCP_DNODE_*) */
    int32_t exact_state;    /* metric[name]: PCP_DEXACT_* */
    int32_t exact_inst;     /* metric[name]: its instance, once known */
    int32_t *table_inst;    /* matchinst(): instances seen (ascending), whether each */
    int32_t *table_match;   /* matches, how often each was used since the table was */
    int32_t *table_used;    /* last compacted */
    int32_t ntable, table_cap, table_uses;
    int32_t *unknown;       /* matchinst(): instances without a name yet (nunknown) */
    int32_t nunknown, unknown_cap;
} pcp_dnode;

typedef struct {
    int32_t nnodes;
    pcp_dnode *nodes;       /* [nnodes], the root last */
} pcp_dprogram;

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

/* matchinst(): record whether instance `inst` matches (kept in instance order; nothing
 * changes when it is known already). Returns 0 or an error code (no memory). */
int pcp_derived_table_add(pcp_dnode *node, int32_t inst, int32_t match);

/* Whether a program can be run: every node's type numeric (PM_TYPE_32 .. DOUBLE) and
 * its op known, operands before the nodes that use them (post-order) and present where
 * the op reads them, each node's parent the node that names it, the root last, the
 * evaluation state empty. The compiler's programs pass; run nothing that does not.
 * Returns 0 or PM_ERR_CONV. */
int pcp_derived_program_check(const pcp_dprogram *prog);

/* Release the buffers of a program's nodes (not the nodes themselves). */
void pcp_derived_program_free(pcp_dprogram *prog);

#endif
