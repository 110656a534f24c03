/* libFuzzer harness for derived metric programs (derived_program.c), the pmFetch path.
 *
 * The input is read as a program: up to 10 nodes of arbitrary ops, value types, links
 * (cycles, shared operands, missing operands, out-of-range indexes included), scales,
 * constants and filters. pcp_derived_program_check must refuse what cannot be run; a
 * program it accepts is run over three fetches of a result of up to 4 value sets and 8
 * values (arbitrary pmids, numvals, value types, instances, payload offsets), the
 * stops answered as Python would (an instance found or not, matchinst() table entries),
 * then assembled into exact-size output. Every array is allocated with exactly its
 * size, so ASan reports any access past it. */
#include "fuzz_dnode.h"
#include "derived_program.h"

#define MAXNODES 10
#define MAXSETS 4
#define MAXVALUES 8

static pcp_result *
new_result(fz_reader *rd, uint8_t **data, uint32_t *len)
{
    int32_t numpmid = 1 + fz_u8(rd) % MAXSETS, nvalues = fz_u8(rd) % (MAXVALUES + 1);
    pcp_result *r = fz_alloc(1, sizeof *r);
    void *mem = fz_alloc(pcp_result_mem_size(numpmid, nvalues), 1);
    int32_t j, k, at = 0;

    pcp_result_bind(r, mem, numpmid, nvalues);
    r->numpmid = numpmid;
    r->nvalues = nvalues;
    r->sec = fz_u8(rd);
    r->nsec = (int64_t)(fz_u32(rd) % 1000000000u);
    *len = fz_u8(rd) % 17;
    *data = fz_bytes(rd, *len);
    for (j = 0; j < numpmid; j++) {
        r->pmid[j] = fz_u8(rd) % 4;
        r->numval[j] = (int32_t)(fz_u8(rd) % 6) - 2;        /* errors, none, some */
        r->valfmt[j] = fz_u8(rd) % 2;
        r->first[j] = (fz_u8(rd) & 7) == 7 ? -1 : at;       /* now and then out of range */
        if (r->numval[j] > 0)
            at += r->numval[j];
    }
    for (k = 0; k < nvalues; k++) {
        r->inst[k] = (int32_t)(fz_u8(rd) % 6) - 1;
        r->vtype[k] = (int32_t)(fz_u8(rd) % 8) - 1;
        r->ival[k] = (int64_t)((uint64_t)fz_u32(rd) << 32 | fz_u32(rd));
        r->dval[k] = (double)(int32_t)fz_u32(rd) / 3.0;
        r->boff[k] = fz_u8(rd) % 20;
        r->blen[k] = fz_u8(rd) % 9;
    }
    return r;
}

static void
free_result(pcp_result *r, uint8_t *data)
{
    free(r->ival);             /* the start of the columns' allocation */
    free(r);
    free(data);
}

/* answer what a node stopped for, as pcp/_libpcp/derived/program.py does */
static void
answer(fz_reader *rd, pcp_dnode *np)
{
    int32_t i;

    if (np->need == PCP_DNODE_NEED_INSTANCE) {
        if (fz_u8(rd) & 1) {
            np->exact_inst = (int32_t)(fz_u8(rd) % 6) - 1;
            np->exact_state = PCP_DEXACT_KNOWN;
        } else {
            np->exact_state = PCP_DEXACT_MISSING;
        }
        return;
    }
    CHECK(np->need == PCP_DNODE_NEED_NAMES);
    CHECK(np->nunknown > 0 && np->nunknown <= np->unknown_cap);
    for (i = 0; i < np->nunknown; i++)
        CHECK(pcp_derived_table_add(np, np->unknown[i], fz_u8(rd) & 1) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader rd = { data, size };
    int32_t nnodes = 1 + fz_u8(&rd) % MAXNODES, k, fetch;
    pcp_dnode *nodes = fz_alloc((size_t)nnodes, sizeof *nodes);
    pcp_dprogram prog;
    pcp_dprogram *progs[2];
    int32_t numvals[2] = { 0, 0 }, types[2], src[2] = { -1, 0 };
    uint32_t pmids[2] = { 0x7fc00001u, 0 };
    pcp_dvec *vecs[2] = { NULL, NULL };
    pcp_dplan plan;

    memset(nodes, 0, (size_t)nnodes * sizeof *nodes);
    for (k = 0; k < nnodes; k++) {
        pcp_dnode *np = &nodes[k];
        fz_dnode(&rd, np, MAXNODES);
    }
    prog.nnodes = nnodes;
    prog.nodes = nodes;
    if (pcp_derived_program_check(&prog) == 0) {
        types[0] = nodes[nnodes - 1].type;
        types[1] = 0;
        progs[0] = &prog;
        progs[1] = NULL;
        memset(&plan, 0, sizeof plan);
        plan.nsets = 1 + (fz_u8(&rd) & 1);
        plan.pmids = pmids;
        plan.src_set = src;
        plan.types = types;
        plan.progs = progs;
        plan.numvals = numvals;
        plan.vecs = vecs;
        for (fetch = 0; fetch < 3; fetch++) {
            uint8_t *payload;
            uint32_t len;
            pcp_result *r = new_result(&rd, &payload, &len);
            int sts = pcp_derived_plan_start(&plan, r, payload, len, 0), rounds = 0;
            while (sts == 1 && rounds++ < 64) {
                pcp_dnode *np = &nodes[plan.at[1]];
                CHECK(plan.at[0] == 0 && plan.at[1] >= 0 && plan.at[1] < nnodes);
                if (np->need == PCP_DNODE_RAISE)
                    break;
                answer(&rd, np);
                sts = pcp_derived_plan_start(&plan, r, payload, len, 1);
            }
            if (sts == 0) {
                pcp_result out;
                void *mem = fz_alloc((size_t)plan.memsize, 1);
                uint8_t *buf = fz_alloc(plan.nbytes ? plan.nbytes : 1, 1);
                CHECK(plan.nvalues >= 0);
                sts = pcp_derived_plan_fill(&plan, r, payload, len, &out, mem, buf);
                CHECK(sts <= 0);
                if (sts == 0)
                    CHECK(out.nvalues == plan.nvalues && out.numpmid == plan.nsets);
                free(mem);
                free(buf);
            } else {
                CHECK(sts < 0 || rounds > 0);
            }
            free_result(r, payload);
        }
        pcp_derived_program_free(&prog);
    }
    free(nodes);
    return 0;
}
