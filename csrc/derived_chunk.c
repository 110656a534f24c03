/* Derived metrics over whole chunks of rows: see derived_chunk.h. The programs are
 * derived_node.c's; what is this file's is where their operands come from (a row of
 * the operands' matrices, present cells in column order) and where their values go (a
 * row of the output matrices, by instance column). */
#include <errno.h>
#include <string.h>

#include "derived_chunk.h"
#include "derived_walk.h"

/* one row's input: the program's operands at row `row` */
typedef struct {
    const pcp_dchunk_program *p;
    int64_t row;
} chunk_row;

static int
cell_size(int32_t type)
{
    return (type == PM_TYPE_32 || type == PM_TYPE_U32 || type == PM_TYPE_FLOAT) ? 4 : 8;
}

/* pcp_dinput.load: the present cells of the operand's row, in column order, as
 * pcp_derived_load gives a value set (the cells hold the metric's own type) */
static int
load_row(const pcp_dinput *in, pcp_dnode *np, pcp_dvec *out)
{
    const chunk_row *at = in->source;
    const pcp_dchunk_operand *op = NULL;
    const uint8_t *pres, *vals;
    int32_t c, k = 0;
    int sts;

    for (c = 0; c < at->p->nops && op == NULL; c++)
        if (at->p->ops[c].pmid == np->pmid)
            op = &at->p->ops[c];
    if (op == NULL)
        return PM_ERR_PMID;
    pcp_dnode_keep_last(np);
    if ((sts = pcp_dvec_room(out, op->ncols)) < 0)
        return sts;
    pres = op->present + at->row * op->present_stride;
    vals = op->values + at->row * op->values_stride;
    if (cell_size(op->type) == 8) {
        for (c = 0; c < op->ncols; c++) {
            if (!pres[c])
                continue;
            memcpy(&out->val[k].ull, vals + (int64_t)c * 8, 8);
            out->inst[k++] = op->col_inst[c];
        }
    } else {
        for (c = 0; c < op->ncols; c++) {
            if (!pres[c])
                continue;
            out->val[k].ull = 0;
            memcpy(&out->val[k].ul, vals + (int64_t)c * 4, 4);
            out->inst[k++] = op->col_inst[c];
        }
    }
    return out->numval = k;
}

static int32_t
find_column(const pcp_dchunk_columns *cols, int32_t inst)
{
    int32_t lo = 0, hi = cols->n - 1;

    if (cols->dense != NULL) {
        int64_t at = (int64_t)inst - cols->base;
        return at >= 0 && at < cols->ndense ? cols->dense[at] : -1;
    }
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (cols->inst[mid] == inst)
            return cols->col[mid];
        if (cols->inst[mid] < inst)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* rows [r0, r1) of one program */
static int
eval_rows(pcp_dchunk_program *p, const int64_t *time_ns, int64_t r0, int64_t r1)
{
    pcp_dprogram *prog = p->prog;
    const pcp_dnode *root = &prog->nodes[prog->nnodes - 1];
    int32_t size = cell_size(root->type);
    chunk_row at;
    pcp_dinput in;
    int64_t r;

    memset(&in, 0, sizeof(in));
    in.load = load_row;
    in.source = &at;
    in.answers = 0;
    at.p = p;
    for (r = r0; r < r1; r++) {
        const pcp_dvec *res;
        uint8_t *vals = p->out_values + r * p->out_stride;
        uint8_t *pres = p->out_present + r * p->out_present_stride;
        int32_t i, stop;
        int sts;

        at.row = in.row = r;
        in.sec = time_ns[r] / 1000000000;
        in.nsec = time_ns[r] % 1000000000;
        if (in.nsec < 0) {          /* floor, for times before the epoch */
            in.sec -= 1;
            in.nsec += 1000000000;
        }
        sts = pcp_derived_walk(prog, 0, &in, &stop);
        if (stop >= 0)              /* a rescale() without factors: nothing to answer */
            return prog->nodes[stop].error < 0 ? prog->nodes[stop].error : PM_ERR_CONV;
        if (sts == PCP_DWALK_NOMEM)
            return -ENOMEM;
        if (sts <= 0)
            continue;
        res = root->out;
        for (i = 0; i < res->numval; i++) {
            int32_t c = find_column(p->columns, res->inst[i]);
            if (c < 0 || c >= p->out_ncols) {
                p->unplaced++;
                continue;
            }
            memcpy(vals + (int64_t)c * size, &res->val[i], (size_t)size);
            pres[c] = 1;
            p->nvalues++;
        }
    }
    return 0;
}

/* whether a program and its operands and columns can be evaluated */
static int
check(const pcp_dchunk_program *p)
{
    const pcp_dchunk_columns *cols = p->columns;

    if (p->prog == NULL || pcp_derived_program_links(p->prog) < 0)
        return PM_ERR_PMID;
    if (cols == NULL || p->nops < 0 || (p->nops > 0 && p->ops == NULL) ||
        (cols->dense == NULL && cols->n > 0 && (cols->inst == NULL || cols->col == NULL)) ||
        (cols->dense != NULL && cols->ndense < 0))
        return PM_ERR_PMID;
    return 0;
}

/* rows per block: a block of a few hundred operand rows stays in cache while every
 * program reads it */
#define ROW_BLOCK 128

int
pcp_derived_chunk_eval(pcp_dchunk_program *progs, int32_t nprogs, const int64_t *time_ns,
                       int64_t nrows)
{
    int64_t r0;
    int32_t j;

    for (j = 0; j < nprogs; j++)
        progs[j].status = check(&progs[j]);
    for (r0 = 0; r0 < nrows; r0 += ROW_BLOCK) {
        int64_t r1 = r0 + ROW_BLOCK < nrows ? r0 + ROW_BLOCK : nrows;
        for (j = 0; j < nprogs; j++)
            if (progs[j].status == 0)
                progs[j].status = eval_rows(&progs[j], time_ns, r0, r1);
    }
    for (j = 0; j < nprogs; j++)
        if (progs[j].status < 0)
            return progs[j].status;
    return 0;
}
