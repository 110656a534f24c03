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
       N_ANON = 13, N_RATE = 14, N_INSTANT = 15, N_DOUBLE = 16, N_LT = 17, N_LEQ = 18,
       N_EQ = 19, N_GEQ = 20, N_GT = 21, N_NEQ = 22, N_AND = 23, N_NOT = 25, N_NEG = 26,
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
    int32_t c, k = 0;

    if (cell_size(op->type) == 8) {
        for (c = 0; c < op->ncols; c++) {
            if (!pres[c])
                continue;
            if (k >= out->cap)
                return PM_ERR_TOOBIG;
            memcpy(&out->val[k].ull, vals + (int64_t)c * 8, 8);
            out->inst[k++] = op->col_inst[c];
        }
    } else {
        for (c = 0; c < op->ncols; c++) {
            if (!pres[c])
                continue;
            if (k >= out->cap)
                return PM_ERR_TOOBIG;
            out->val[k].ull = 0;
            memcpy(&out->val[k].ul, vals + (int64_t)c * 4, 4);
            out->inst[k++] = op->col_inst[c];
        }
    }
    return out->numval = k;
}

/* a value of a numeric type as a double, as bin_op promotes it to PM_TYPE_DOUBLE */
static inline double
as_double(int32_t type, pcp_atom a)
{
    switch (type) {
    case PM_TYPE_32: return a.l;
    case PM_TYPE_U32: return a.ul;
    case PM_TYPE_64: return (double)a.ll;
    case PM_TYPE_U64: return (double)a.ull;
    case PM_TYPE_FLOAT: return a.f;
    default: return a.d;
    }
}

/* pcp_derived_binary for an operation done in PM_TYPE_DOUBLE when the operands pair
 * off by position (the same instances in the same order, or one operand singular):
 * the same values, without the general instance search and per-value dispatch. -1
 * when the operands are not of that shape (the general kernel then does it). */
static int
binary_double_paired(int32_t op, int32_t relational, int32_t ltype, int64_t lmul,
                     int64_t ldiv, int32_t lnull, const pcp_dvec *l, int32_t rtype,
                     int64_t rmul, int64_t rdiv, int32_t rnull, const pcp_dvec *r,
                     pcp_dvec *out)
{
    int32_t n, k, lstep = 1, rstep = 1;
    double lm = (double)lmul, ld = (double)ldiv, rm = (double)rmul, rd = (double)rdiv;

    if (ldiv == 0 || rdiv == 0 || l->numval <= 0 || r->numval <= 0 || (lnull && rnull))
        return -1;
    if (ltype < PM_TYPE_32 || ltype > PM_TYPE_DOUBLE || rtype < PM_TYPE_32 ||
        rtype > PM_TYPE_DOUBLE)
        return -1;
    if (lnull) {
        n = r->numval;
        lstep = 0;
    } else if (rnull) {
        n = l->numval;
        rstep = 0;
    } else {
        n = l->numval;
        if (r->numval != n || memcmp(l->inst, r->inst, (size_t)n * sizeof(int32_t)) != 0)
            return -1;
    }
    if (n > out->cap)
        return PM_ERR_TOOBIG;
    for (k = 0; k < n; k++) {
        double a = (as_double(ltype, l->val[k * lstep]) / ld) * lm;
        double b = (as_double(rtype, r->val[k * rstep]) / rd) * rm;
        double res;
        int cmp;
        switch (op) {
        case N_PLUS: res = a + b; break;
        case N_MINUS: res = a - b; break;
        case N_STAR: res = a * b; break;
        case N_SLASH: res = a == 0 ? 0 : a / b; break;
        case N_LT: cmp = a < b; res = cmp; break;
        case N_LEQ: cmp = a <= b; res = cmp; break;
        case N_EQ: cmp = a == b; res = cmp; break;
        case N_GEQ: cmp = a >= b; res = cmp; break;
        case N_GT: cmp = a > b; res = cmp; break;
        case N_NEQ: cmp = a != b; res = cmp; break;
        case N_AND: cmp = a != 0 && b != 0; res = cmp; break;
        default: cmp = a != 0 || b != 0; res = cmp; break;
        }
        if (relational) {
            out->val[k].ull = 0;
            out->val[k].ul = res != 0;      /* a 0/1 word, as as_word() makes it */
        } else {
            out->val[k].d = res;
        }
        out->inst[k] = lnull ? r->inst[k] : l->inst[k];
    }
    return out->numval = n;
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
        if (np->otype == PM_TYPE_DOUBLE) {
            sts = binary_double_paired(np->type, np->relational, left->vtype, left->mul,
                                       left->div, left->null_indom, left->out,
                                       right->vtype, right->mul, right->div,
                                       right->null_indom, right->out, &np->cur);
            if (sts != -1)
                return sts;
        }
        return pcp_derived_binary(np->type, np->otype, np->relational, left->vtype,
                                  left->mul, left->div, left->null_indom, left->out,
                                  right->vtype, right->mul, right->div, right->null_indom,
                                  right->out, &np->cur);
    }
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

/* whether a node of this type needs a left operand */
static int
needs_left(int32_t type)
{
    switch (type) {
    case N_INTEGER: case N_DOUBLE: case N_NAME: case N_DEFINED: case N_ANON:
    case N_SCALE: case N_PATTERN: case N_FILTERINST:
        return 0;
    default:
        return 1;
    }
}

/* The tree's links checked once, before any row: a node's children come after it (a
 * parent before its children: no cycle, the walk's depth bounded by the node count),
 * every node has the operands its type reads, the vectors have room. */
static int
check_tree(pcp_dchunk_node *nodes, int32_t nnodes)
{
    int32_t k;

    if (nodes == NULL || nnodes < 1)
        return PM_ERR_PMID;
    for (k = 0; k < nnodes; k++) {
        pcp_dchunk_node *np = &nodes[k];
        if (np->left >= nnodes || np->right >= nnodes ||
            (np->left >= 0 && np->left <= k) || (np->right >= 0 && np->right <= k))
            return PM_ERR_PMID;
        if (needs_left(np->type) && np->left < 0)
            return PM_ERR_PMID;
        if (np->type == N_QUEST && (np->right < 0 || nodes[np->right].left < 0 ||
                                    nodes[np->right].right < 0))
            return PM_ERR_PMID;
        if (np->type == N_FILTERINST && np->right < 0)
            return PM_ERR_PMID;
        if (np->ntable < 0 || (np->ntable > 0 && (np->table_inst == NULL ||
                                                  np->table_match == NULL ||
                                                  np->table_used == NULL)))
            return PM_ERR_PMID;
        if (np->cur.cap < 1 || np->last.cap < np->cur.cap || np->cur.inst == NULL ||
            np->cur.val == NULL || np->last.inst == NULL || np->last.val == NULL)
            return PM_ERR_TOOBIG;
        if (np->out == NULL)
            np->out = &np->cur;
    }
    return 0;
}

/* rows [r0, r1) of one program */
static int
eval_rows(pcp_dchunk_program *p, const int64_t *time_ns, int64_t r0, int64_t r1)
{
    chunk_walk w;
    int32_t size = cell_size(p->nodes[0].vtype);
    int64_t r;

    w.nodes = p->nodes;
    w.nnodes = p->nnodes;
    w.ops = p->ops;
    w.nops = p->nops;
    for (r = r0; r < r1; r++) {
        const pcp_dvec *res;
        uint8_t *vals = p->out_values + r * p->out_stride;
        uint8_t *pres = p->out_present + r * p->out_present_stride;
        int sts;
        int32_t i;

        w.row = r;
        w.sec = time_ns[r] / 1000000000;
        w.nsec = time_ns[r] % 1000000000;
        if (w.nsec < 0) {           /* floor, for times before the epoch */
            w.sec -= 1;
            w.nsec += 1000000000;
        }
        sts = eval_node(&w, 0);
        if (sts == PM_ERR_TOOBIG)
            return sts;
        if (sts <= 0)
            continue;
        res = p->nodes[0].out;
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

/* rows per block: a block of a few hundred operand rows stays in cache while every
 * program reads it */
#define ROW_BLOCK 128

int
pcp_derived_chunk_eval(pcp_dchunk_program *progs, int32_t nprogs, const int64_t *time_ns,
                       int64_t nrows)
{
    int64_t r0;
    int32_t j;

    for (j = 0; j < nprogs; j++) {
        progs[j].status = check_tree(progs[j].nodes, progs[j].nnodes);
        const pcp_dchunk_columns *cols = progs[j].columns;
        if (progs[j].status == 0 &&
            (cols == NULL || progs[j].nops < 0 || (progs[j].nops > 0 && progs[j].ops == NULL) ||
             (cols->dense == NULL && cols->n > 0 && (cols->inst == NULL || cols->col == NULL)) ||
             (cols->dense != NULL && cols->ndense < 0)))
            progs[j].status = PM_ERR_PMID;
    }
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
