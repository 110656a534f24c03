/* How derived_program.c and derived_chunk.c run a program (derived_node.h) over one
 * fetch: the walk is derived_node.c's; what differs is where an operand's values come
 * from, which the caller's pcp_dinput says. Not part of the Python interface. */
#ifndef PCP_DERIVED_WALK_H
#define PCP_DERIVED_WALK_H

#include "derived_node.h"

/* eval_expr() stopped for the caller (pcp_dnode.need says why); out of memory (no
 * numval or error code of a result can be this) */
enum { PCP_DWALK_STOP = 1, PCP_DWALK_NOMEM = -0x7fffffff };

typedef struct pcp_dinput pcp_dinput;
struct pcp_dinput {
    /* N_NAME node `np`: the values of its operand in this fetch into `out` (its cur),
     * room made with pcp_dvec_room and pcp_dnode_keep_last called once the operand is
     * found: numval, or an error code */
    int (*load)(const pcp_dinput *in, pcp_dnode *np, pcp_dvec *out);
    const void *source;     /* what load() reads: a result, a chunk row's operands */
    int64_t row;            /* the row of a chunk (metric[name] known from exact_from) */
    int64_t sec, nsec;      /* the fetch's time */
    int32_t answers;        /* 1: stop for the caller (PCP_DNODE_NEED_*); 0: it has put
                             * every answer in the nodes beforehand, what is not known
                             * has no values, and matchinst()'s table stays whole */
};

/* Room for more than `v` has (what it holds is kept; new room reads as zeros).
 * Returns 0 or PCP_DWALK_NOMEM. */
int pcp_dvec_grow(pcp_dvec *v, int32_t need);

/* Room for `need` values in `v`: inline, as it is asked of every node of every fetch
 * and is nearly always there. */
static inline int
pcp_dvec_room(pcp_dvec *v, int32_t need)
{
    if (need <= v->cap && v->inst != NULL)
        return 0;
    return pcp_dvec_grow(v, need);
}

/* N_NAME with save_last: keep this fetch's values as the last ones, before the next
 * are loaded (delta() and rate() read both). */
static inline void
pcp_dnode_keep_last(pcp_dnode *np)
{
    if (np->save_last) {
        pcp_dvec swap = np->cur;
        np->cur = np->last;
        np->last = swap;
    }
}

/* Run a program over one fetch from node `start` (0 for a new fetch): the root's numval
 * (< 0 an error; its values at the root's `out`) with *stop -1, or PCP_DWALK_STOP with
 * *stop the node the caller must answer for, or PCP_DWALK_NOMEM. An operand's error
 * ends the evaluation of every node above it up to a count(), which counts 0 values,
 * as eval_expr() returns it up the tree. */
int pcp_derived_walk(pcp_dprogram *prog, int32_t start, const pcp_dinput *in,
                     int32_t *stop);

#endif
