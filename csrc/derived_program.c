/* Derived metrics for pmFetch: see derived_program.h. The programs are derived_node.c's;
 * what is this file's is where their operands come from (the value sets of the fetched
 * result) and where their values go (the result handed back, assembled by
 * pcp_derived_assemble). */
#include <errno.h>
#include <string.h>

#include "derived_program.h"
#include "derived_walk.h"

static int32_t
nonneg(int32_t n)
{
    return n > 0 ? n : 0;
}

/* the first value set of `r` for `pmid`, or -1 */
static int32_t
set_of(const pcp_result *r, uint32_t pmid)
{
    int32_t j;
    for (j = 0; j < r->numpmid; j++)
        if (r->pmid[j] == pmid)
            return j;
    return -1;
}

/* pcp_dinput.load: the operand's value set in the fetched result */
static int
load_set(const pcp_dinput *in, pcp_dnode *np, pcp_dvec *out)
{
    const pcp_result *r = in->source;
    int32_t j = set_of(r, np->pmid);
    int sts;

    if (j < 0)
        return PM_ERR_PMID;
    pcp_dnode_keep_last(np);
    if ((sts = pcp_dvec_room(out, nonneg(r->numval[j]))) < 0)
        return sts;
    return out->numval = pcp_derived_load(r, j, np->type, out);
}

int
pcp_derived_plan_eval(const pcp_result *r, int32_t nsets, pcp_dprogram **progs,
                      int32_t *numvals, pcp_dvec **vecs, int32_t *at)
{
    pcp_dinput in;
    int32_t j, start = at[1], stop = 0;

    memset(&in, 0, sizeof(in));
    in.load = load_set;
    in.source = r;
    in.sec = r->sec;
    in.nsec = r->nsec;
    in.answers = 1;
    for (j = at[0]; j < nsets; j++, start = 0) {
        pcp_dprogram *prog = progs[j];
        int sts;
        if (prog == NULL || prog->nnodes <= 0)
            continue;
        sts = pcp_derived_walk(prog, start, &in, &stop);
        if (stop >= 0) {
            at[0] = j;
            at[1] = stop;
            return 1;
        }
        if (sts == PCP_DWALK_NOMEM)
            return -ENOMEM;
        numvals[j] = sts;
        vecs[j] = sts > 0 ? prog->nodes[prog->nnodes - 1].out : NULL;
    }
    at[0] = nsets;
    at[1] = 0;
    return 0;
}

int
pcp_derived_plan_start(pcp_dplan *plan, const pcp_result *r, const uint8_t *data,
                       uint32_t len, int32_t resume)
{
    int sts;

    if (!resume)
        plan->at[0] = plan->at[1] = 0;
    sts = pcp_derived_plan_eval(r, plan->nsets, plan->progs, plan->numvals, plan->vecs,
                                plan->at);
    if (sts != 0)
        return sts;
    sts = pcp_derived_assemble(r, data, len, plan->nsets, plan->pmids, plan->src_set,
                               plan->numvals, plan->vecs, plan->types, NULL, NULL,
                               &plan->nvalues, &plan->nbytes);
    plan->memsize = pcp_result_mem_size(plan->nsets, plan->nvalues);
    return sts;
}

int
pcp_derived_plan_fill(pcp_dplan *plan, const pcp_result *r, const uint8_t *data,
                      uint32_t len, pcp_result *out, void *mem, uint8_t *buf)
{
    int32_t nvalues;
    uint32_t nbytes;

    /* the inputs are the sizing call's, so the values and bytes are those it counted */
    pcp_result_bind(out, mem, plan->nsets, plan->nvalues);
    return pcp_derived_assemble(r, data, len, plan->nsets, plan->pmids, plan->src_set,
                                plan->numvals, plan->vecs, plan->types, out, buf, &nvalues,
                                &nbytes);
}
