/* The nodes of a derived metric's bound numeric expression, as both C evaluators walk
 * them: derived_program.c (one pmFetch's result at a time, for pmFetch) and
 * derived_chunk.c (every row of a chunk's operand matrices, for the bulk readers). A
 * program is a flat array of nodes in post-order (operands before the node that uses
 * them, the root last); each node keeps, between fetches, the state libpcp 6.0.3 keeps
 * in its tree (delta() and rate()'s last values and times, matchinst()'s table of the
 * instances seen, metric[name]'s instance) in buffers derived_node.c allocates;
 * pcp_derived_program_free releases them.
 *
 * Where the evaluation cannot know an answer itself it stops at the node and says why
 * (pcp_dnode.need), when its caller answers (derived_program.c's caller does: the
 * instance id of metric[name], PCP_DNODE_NEED_INSTANCE; the instance names matchinst()
 * has not seen, PCP_DNODE_NEED_NAMES); a rescale() whose scale factors could not be
 * made stops with PCP_DNODE_RAISE. */
#ifndef PCP_DERIVED_NODE_H
#define PCP_DERIVED_NODE_H

#include <stdint.h>

#include "derived.h"

/* pcp_dnode.filter */
enum { PCP_DFILTER_NONE = 0, PCP_DFILTER_EXACT = 1, PCP_DFILTER_REGEX = 2 };
/* pcp_dnode.exact_state */
enum { PCP_DEXACT_UNKNOWN = 0, PCP_DEXACT_KNOWN = 1, PCP_DEXACT_MISSING = 2 };
/* why an evaluation stopped (pcp_dnode.need) */
enum { PCP_DNODE_NEED_INSTANCE = 1, PCP_DNODE_NEED_NAMES = 2, PCP_DNODE_RAISE = 3 };

typedef struct {
    /* the definition, set once by the compiler (pcp/_libpcp/derived/program.py) */
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
    pcp_dvec *out;          /* where this fetch's values are (instant(): its operand's) */
    int64_t stamp_sec, stamp_nsec, last_sec, last_nsec;  /* rate(): fetch times */
    int32_t need;           /* why the evaluation stopped here (PCP_DNODE_*) */
    int32_t exact_state;    /* metric[name]: PCP_DEXACT_* */
    int32_t exact_inst;     /* metric[name]: its instance, once known, */
    int64_t exact_from;     /* ... from this fetch of a chunk on (a row; 0 for pmFetch) */
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

/* matchinst(): record whether instance `inst` matches (kept in instance order; nothing
 * changes when it is known already). Returns 0 or an error code (no memory). */
int pcp_derived_table_add(pcp_dnode *node, int32_t inst, int32_t match);

/* Whether a program can be run: its links and ops (pcp_derived_program_links) and the
 * evaluation state empty. The compiler's programs pass; run nothing that does not.
 * Returns 0 or PM_ERR_CONV. */
int pcp_derived_program_check(const pcp_dprogram *prog);

/* The links and ops alone, whatever the state: every node's op known and its type
 * numeric (PM_TYPE_32 .. DOUBLE; an operand's any, as count() of a string metric
 * needs), operands before the nodes that use them (post-order) and present where the
 * op reads them, each node's parent the node that names it, the root last. Returns 0
 * or PM_ERR_CONV. */
int pcp_derived_program_links(const pcp_dprogram *prog);

/* Release the buffers of a program's nodes (not the nodes themselves). */
void pcp_derived_program_free(pcp_dprogram *prog);

#endif
