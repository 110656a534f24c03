/* Derived metrics over whole chunks of rows: see derived.h. Each row is one pmFetch in
 * PM_MODE_FORW: the tree is walked as pcp/_libpcp/derived/kernels.py's evaluate() walks
 * it (children first, an error stopping the walk of the subtree above it, so that the
 * state of the nodes not reached stays as libpcp leaves it), each node computed by the
 * kernels of derived_eval.c over the row's instance vector. */
#include <stdint.h>
#include <string.h>

#include "derived.h"

/* libpcp's node numbers (pcp/_libpcp/derived/nodes.py) */
enum { N_INTEGER = 1, N_NAME = 2, N_PLUS = 3, N_MINUS = 4, N_STAR = 5, N_SLASH = 6,
       N_AVG = 7, N_COUNT = 8, N_DELTA = 9, N_MAX = 10, N_MIN = 11, N_SUM = 12,
       N_ANON = 13, N_RATE = 14, N_INSTANT = 15, N_DOUBLE = 16, N_NOT = 25, N_NEG = 26,
       N_QUEST = 27, N_COLON = 28, N_RESCALE = 29, N_SCALE = 30, N_DEFINED = 31,
       N_FILTERINST = 32, N_PATTERN = 33, N_SCALAR = 34 };

#define IN_NULL (-1)

typedef struct {
    pcp_dchunk_node *nodes;
    int32_t nnodes;
    const pcp_dchunk_operand *ops;
    int32_t nops;
    int64_t row;
    int64_t sec, nsec;          /* the row's time */
} chunk_walk;

static int
cell_size(int32_t type)
{
    return (type == PM_TYPE_32 || type == PM_TYPE_U32 || type == PM_TYPE_FLOAT) ? 4 : 8;
}

/* the present cells of one operand row, in column order, as pcp_derived_load gives a
 * value set (the cells hold the metric's own type) */
static int
load_row(const pcp_dchunk_operand *op, int64_t row, pcp_dvec *out)
{
    const uint8_t *pres = op->present + row * op->present_stride;
    const uint8_t *vals = op->values + row * op->values_stride;
    int size = cell_size(op->type);
    int32_t c, k = 0;

    for (c = 0; c < op->ncols; c++) {
        if (!pres[c])
            continue;
        if (k >= out->cap)
            return PM_ERR_TOOBIG;
        memset(&out->val[k], 0, sizeof(pcp_atom));
        memcpy(&out->val[k], vals + (int64_t)c * size, (size_t)size);
        out->inst[k++] = op->col_inst[c];
    }
    return out->numval = k;
}

static void
set_one(pcp_dchunk_node *np, pcp_atom value)
{
    np->cur.val[0] = value;
    np->cur.inst[0] = IN_NULL;
    np->cur.numval = 1;
}

static int
eval_node(chunk_walk *w, int32_t k)
{
    pcp_dchunk_node *np = &w->nodes[k];
    pcp_dchunk_node *left = np->left >= 0 ? &w->nodes[np->left] : NULL;
    pcp_dchunk_node *right = np->right >= 0 ? &w->nodes[np->right] : NULL;
    int sts;

    np->out = &np->cur;
    if (np->cur.cap < 1)
        return PM_ERR_TOOBIG;
    if (left != NULL) {
        sts = eval_node(w, np->left);
        if (sts < 0) {
            if (np->type == N_COUNT) {
                pcp_atom zero;
                memset(&zero, 0, sizeof(zero));
                set_one(np, zero);
                return 1;
            }
            return sts;
        }
    }
    if (right != NULL) {
        sts = eval_node(w, np->right);
        if (sts < 0)
            return sts;
    }
    switch (np->type) {
    case N_INTEGER:
    case N_DOUBLE:
        if (np->cur.numval == 0)
            set_one(np, np->constant);
        return 1;
    case N_DEFINED:
        set_one(np, np->constant);
        return 1;
    case N_ANON:
    case N_SCALE:
    case N_PATTERN:
    case N_COLON:
        return 0;
    case N_NAME:
        if (np->operand < 0 || np->operand >= w->nops)
            return PM_ERR_PMID;
        if (np->save_last) {
            pcp_dvec tmp = np->cur;
            np->cur = np->last;
            np->last = tmp;
        }
        return load_row(&w->ops[np->operand], w->row, &np->cur);
    case N_DELTA:
    case N_RATE: {
        int64_t sec, nsec;
        double dt;
        np->last_sec = np->stamp_sec;
        np->last_nsec = np->stamp_nsec;
        np->stamp_sec = w->sec;
        np->stamp_nsec = w->nsec;
        sec = np->stamp_sec - np->last_sec;
        nsec = np->stamp_nsec - np->last_nsec;
        if (nsec < 0) {
            sec -= 1;
            nsec += 1000000000;
        }
        /* pmtimespecToReal: the seconds and the fraction added in long double */
        dt = (double)((long double)sec + (long double)nsec / (long double)1000000000);
        return pcp_derived_delta(np->type == N_RATE, left->vtype, &left->cur, &left->last,
                                 dt, np->type == N_RATE ? np->time_scale : 1.0, &np->cur);
    }
    case N_NOT:
    case N_NEG:
        return pcp_derived_unary(np->type, left->vtype, left->out, &np->cur);
    case N_QUEST: {
        const pcp_dchunk_node *yes = &w->nodes[right->left], *no = &w->nodes[right->right];
        return pcp_derived_ternary(left->vtype, left->out, yes->out, no->out,
                                   np->inst_from_no, &np->cur);
    }
    case N_RESCALE:
        return pcp_derived_rescale(np->vtype, np->scale_mult, np->scale_div, left->out,
                                   &np->cur);
    case N_INSTANT:
        np->out = left->out;
        return left->out->numval;
    case N_AVG:
    case N_COUNT:
    case N_SUM:
    case N_MAX:
    case N_MIN:
        return pcp_derived_aggregate(np->type, np->vtype, left->vtype, left->out, &np->cur);
    case N_SCALAR: {
        int32_t n = left->out->numval < 1 ? left->out->numval : 1;
        np->cur.numval = n;
        if (n > 0) {
            np->cur.val[0] = left->out->val[0];
            np->cur.inst[0] = IN_NULL;
        }
        return n;
    }
    case N_FILTERINST: {
        const pcp_dvec *in = right->out;
        if (!np->regex) {
            if (w->row < np->exact_from) {
                np->cur.numval = 0;
                return 0;
            }
            return pcp_derived_filter_exact(np->exact_inst, in, &np->cur);
        }
        /* the caller puts every instance of the operands in the table beforehand; the
         * unused `last` vector takes the list of any it would not know */
        if (in->numval > np->last.cap)
            return PM_ERR_TOOBIG;
        sts = pcp_derived_filter_table(in, np->table_inst, np->table_match, np->table_used,
                                       np->ntable, np->last.inst, &np->cur);
        if (sts < 0 && sts != PM_ERR_TOOBIG)
            return np->cur.numval = 0;
        return sts;
    }
    default:
        if (left == NULL || right == NULL)
            return PM_ERR_PMID;
        return pcp_derived_binary(np->type, np->otype, np->relational, left->vtype,
                                  left->mul, left->div, left->null_indom, left->out,
                                  right->vtype, right->mul, right->div, right->null_indom,
                                  right->out, &np->cur);
    }
}

static int32_t
find_column(const int32_t *insts, const int32_t *cols, int32_t n, int32_t inst)
{
    int32_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (insts[mid] == inst)
            return cols[mid];
        if (insts[mid] < inst)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int
pcp_derived_chunk_eval(pcp_dchunk_node *nodes, int32_t nnodes, int32_t root,
                       const pcp_dchunk_operand *ops, int32_t nops,
                       const int64_t *time_ns, int64_t nrows,
                       const int32_t *cand_inst, const int32_t *cand_col, int32_t ncand,
                       uint8_t *out_values, int64_t out_stride, uint8_t *out_present,
                       int64_t out_present_stride, int64_t *nvalues, int64_t *unplaced)
{
    chunk_walk w;
    int32_t k, size;
    int64_t r;

    if (nnodes < 1 || root < 0 || root >= nnodes)
        return PM_ERR_PMID;
    for (k = 0; k < nnodes; k++) {
        pcp_dchunk_node *np = &nodes[k];
        if (np->left >= nnodes || np->right >= nnodes)
            return PM_ERR_PMID;
        if (np->type == N_QUEST && (np->right < 0 || nodes[np->right].left < 0 ||
                                    nodes[np->right].right < 0))
            return PM_ERR_PMID;
        if ((np->type == N_FILTERINST) && np->right < 0)
            return PM_ERR_PMID;
        if (np->out == NULL)
            np->out = &np->cur;
    }
    w.nodes = nodes;
    w.nnodes = nnodes;
    w.ops = ops;
    w.nops = nops;
    size = cell_size(nodes[root].vtype);
    for (r = 0; r < nrows; r++) {
        const pcp_dvec *res;
        uint8_t *vals = out_values + r * out_stride;
        uint8_t *pres = out_present + r * out_present_stride;
        int sts;
        int32_t i;

        w.row = r;
        /* times are after the epoch in an archive: floor and truncation agree */
        w.sec = time_ns[r] / 1000000000;
        w.nsec = time_ns[r] % 1000000000;
        if (w.nsec < 0) {
            w.sec -= 1;
            w.nsec += 1000000000;
        }
        sts = eval_node(&w, root);
        if (sts == PM_ERR_TOOBIG)
            return sts;
        if (sts <= 0)
            continue;
        res = nodes[root].out;
        for (i = 0; i < res->numval; i++) {
            int32_t c = find_column(cand_inst, cand_col, ncand, res->inst[i]);
            if (c < 0) {
                (*unplaced)++;
                continue;
            }
            memcpy(vals + (int64_t)c * size, &res->val[i], (size_t)size);
            pres[c] = 1;
            (*nvalues)++;
        }
    }
    return 0;
}
