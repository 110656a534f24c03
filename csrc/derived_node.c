/* Derived metric programs: see derived_node.h and derived_walk.h. Each node is
 * evaluated as libpcp 6.0.3's eval_expr() evaluates it once its operands have been
 * (derive_fetch.c), the arithmetic being the kernels of derived_eval.c; only an
 * operand's values come from the caller (pcp_dinput.load). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "derived_walk.h"

/* libpcp's node numbers (pcp/_libpcp/derived/nodes.py) */
enum { N_INTEGER = 1, N_NAME = 2, N_AVG = 7, N_COUNT = 8, N_DELTA = 9, N_MAX = 10,
       N_MIN = 11, N_SUM = 12, N_ANON = 13, N_RATE = 14, N_INSTANT = 15, N_DOUBLE = 16,
       N_NOT = 25, N_NEG = 26, N_QUEST = 27, N_COLON = 28, N_RESCALE = 29, N_SCALE = 30,
       N_DEFINED = 31, N_FILTERINST = 32, N_PATTERN = 33, N_SCALAR = 34 };
/* matchinst() forgets the instances it has not used much every so many fetches, as
 * libpcp's table of instances seen does */
enum { REGEX_INST_COMPACT = 100 };

int
pcp_dvec_grow(pcp_dvec *v, int32_t need)
{
    int32_t cap;
    int32_t *inst;
    pcp_atom *val;

    cap = need > 2 * v->cap ? need : 2 * v->cap;
    if (cap < 1)
        cap = 1;
    if ((size_t)cap > SIZE_MAX / sizeof(pcp_atom))
        return PCP_DWALK_NOMEM;
    if ((inst = realloc(v->inst, (size_t)cap * sizeof(int32_t))) == NULL)
        return PCP_DWALK_NOMEM;
    v->inst = inst;
    if ((val = realloc(v->val, (size_t)cap * sizeof(pcp_atom))) == NULL)
        return PCP_DWALK_NOMEM;
    /* new room reads as zeros (max() and min() of nothing report what is there) */
    memset(val + v->cap, 0, (size_t)(cap - v->cap) * sizeof(pcp_atom));
    memset(inst + v->cap, 0, (size_t)(cap - v->cap) * sizeof(int32_t));
    v->val = val;
    v->cap = cap;
    return 0;
}

static int32_t
nonneg(int32_t n)
{
    return n > 0 ? n : 0;
}

/* one value, no instance (numbers, defined(), count() of an operand in error) */
static int
set_one(pcp_dvec *v, pcp_atom value)
{
    int sts = pcp_dvec_room(v, 1);
    if (sts < 0)
        return sts;
    v->val[0] = value;
    v->inst[0] = -1;
    return v->numval = 1;
}

/* pmtimespecToReal(): the nanoseconds added in long double */
static double
seconds(int64_t sec, int64_t nsec)
{
    if (nsec == 0)
        return (double)sec;
    return (double)((long double)sec + (long double)nsec / 1000000000.0L);
}

static int
eval_delta(pcp_dnode *np, const pcp_dnode *left, const pcp_dinput *in)
{
    int32_t n = left->cur.numval < left->last.numval ? left->cur.numval : left->last.numval;
    double dt = 1.0;
    int sts;

    np->last_sec = np->stamp_sec;
    np->last_nsec = np->stamp_nsec;
    np->stamp_sec = in->sec;
    np->stamp_nsec = in->nsec;
    if ((sts = pcp_dvec_room(&np->cur, nonneg(n))) < 0)
        return sts;
    if (np->op == N_RATE) {
        int64_t sec = np->stamp_sec - np->last_sec, nsec = np->stamp_nsec - np->last_nsec;
        if (nsec < 0) {
            sec--;
            nsec += 1000000000;
        }
        dt = seconds(sec, nsec);
    }
    return pcp_derived_delta(np->op == N_RATE, left->type, &left->cur, &left->last, dt,
                             np->op == N_RATE ? np->time_scale : 1.0, &np->cur);
}

static void
compact_table(pcp_dnode *np)
{
    int32_t i, k = 0;
    for (i = 0; i < np->ntable; i++) {
        if (np->table_used[i] >= REGEX_INST_COMPACT / 2) {
            np->table_inst[k] = np->table_inst[i];
            np->table_match[k] = np->table_match[i];
            np->table_used[k] = 0;
            k++;
        }
    }
    np->ntable = k;
    np->table_uses = 0;
}

/* metric[name]: the instance's value, once the caller has found the instance */
static int
eval_exact(pcp_dnode *np, const pcp_dvec *operand, const pcp_dinput *in)
{
    int sts;

    if (np->exact_state == PCP_DEXACT_MISSING) {
        /* the caller found no such instance for this fetch */
        np->exact_state = PCP_DEXACT_UNKNOWN;
        return np->cur.numval = 0;
    }
    if (operand->numval > 0 && np->exact_state == PCP_DEXACT_UNKNOWN && in->answers) {
        np->need = PCP_DNODE_NEED_INSTANCE;
        return PCP_DWALK_STOP;
    }
    if (np->exact_state != PCP_DEXACT_KNOWN || in->row < np->exact_from)
        return np->cur.numval = 0;
    if ((sts = pcp_dvec_room(&np->cur, 1)) < 0)
        return sts;
    return pcp_derived_filter_exact(np->exact_inst, operand, &np->cur);
}

/* matchinst(): the values of the instances the table says match */
static int
eval_matchinst(pcp_dnode *np, const pcp_dvec *operand, const pcp_dinput *in)
{
    int32_t n = nonneg(operand->numval);
    int sts;

    if ((sts = pcp_dvec_room(&np->cur, n)) < 0)
        return sts;
    if (n > np->unknown_cap) {
        int32_t *room = realloc(np->unknown, (size_t)n * sizeof(int32_t));
        if (room == NULL)
            return PCP_DWALK_NOMEM;
        np->unknown = room;
        np->unknown_cap = n;
    }
    sts = pcp_derived_filter_table(operand, np->table_inst, np->table_match, np->table_used,
                                   np->ntable, np->unknown, &np->cur);
    if (sts < 0 && np->unknown_cap > 0 && -sts <= np->unknown_cap) {
        /* instances without a name yet */
        if (!in->answers)
            return np->cur.numval = 0;
        np->nunknown = -sts;
        np->need = PCP_DNODE_NEED_NAMES;
        return PCP_DWALK_STOP;
    }
    if (sts < 0)
        return sts;
    if (in->answers && ++np->table_uses >= REGEX_INST_COMPACT)
        compact_table(np);
    return sts;
}

/* eval_expr() of node `i` once its operands have been evaluated: numval (< 0 an
 * error), or PCP_DWALK_STOP when the caller must answer first */
static int
eval_node(pcp_dnode *nodes, int32_t i, const pcp_dinput *in)
{
    pcp_dnode *np = &nodes[i];
    pcp_dnode *left = np->left >= 0 ? &nodes[np->left] : NULL;
    pcp_dnode *right = np->right >= 0 ? &nodes[np->right] : NULL;
    int sts;

    np->out = &np->cur;
    switch (np->op) {
    case N_INTEGER:
    case N_DOUBLE:
        if (np->cur.numval == 0 && (sts = set_one(&np->cur, np->constant)) < 0)
            return sts;
        return 1;
    case N_DEFINED:
        return set_one(&np->cur, np->constant);
    case N_ANON:
    case N_SCALE:
    case N_PATTERN:
    case N_COLON:
        return 0;
    case N_NAME:
        return in->load(in, np, &np->cur);
    case N_DELTA:
    case N_RATE:
        return eval_delta(np, left, in);
    case N_NOT:
    case N_NEG:
        if ((sts = pcp_dvec_room(&np->cur, nonneg(left->out->numval))) < 0)
            return sts;
        return pcp_derived_unary(np->op, left->type, left->out, &np->cur);
    case N_QUEST: {
        const pcp_dnode *yes = &nodes[right->left], *no = &nodes[right->right];
        int32_t need = yes->out->numval > no->out->numval ? yes->out->numval :
                       no->out->numval;
        if ((sts = pcp_dvec_room(&np->cur, nonneg(need))) < 0)
            return sts;
        return pcp_derived_ternary(left->type, left->out, yes->out, no->out,
                                   yes->indom_null && !no->indom_null, &np->cur);
    }
    case N_RESCALE:
        if (np->error < 0) {
            np->need = PCP_DNODE_RAISE;
            return PCP_DWALK_STOP;
        }
        if ((sts = pcp_dvec_room(&np->cur, nonneg(left->out->numval))) < 0)
            return sts;
        return pcp_derived_rescale(np->type, np->scale_mult, np->scale_div, left->out,
                                   &np->cur);
    case N_INSTANT:
        /* the operand's values as they are: nothing to compute or copy */
        np->out = left->out;
        return left->out->numval;
    case N_AVG:
    case N_COUNT:
    case N_SUM:
    case N_MAX:
    case N_MIN:
        if ((sts = pcp_dvec_room(&np->cur, 1)) < 0)
            return sts;
        return pcp_derived_aggregate(np->op, np->type, left->type, left->out, &np->cur);
    case N_SCALAR:
        if ((sts = pcp_dvec_room(&np->cur, 1)) < 0)
            return sts;
        np->cur.numval = left->out->numval < 1 ? left->out->numval : 1;
        if (np->cur.numval > 0) {
            np->cur.val[0] = left->out->val[0];
            np->cur.inst[0] = -1;
        }
        return np->cur.numval;
    case N_FILTERINST:
        if (np->filter == PCP_DFILTER_EXACT)
            return eval_exact(np, right->out, in);
        return eval_matchinst(np, right->out, in);
    default:
        if ((sts = pcp_dvec_room(&np->cur, nonneg(left->out->numval > right->out->numval ?
                                                  left->out->numval :
                                                  right->out->numval))) < 0)
            return sts;
        return pcp_derived_binary(np->op, np->otype, np->relational, left->type, left->mul,
                                  left->div, left->indom_null, left->out, right->type,
                                  right->mul, right->div, right->indom_null, right->out,
                                  &np->cur);
    }
}

int
pcp_derived_walk(pcp_dprogram *prog, int32_t start, const pcp_dinput *in, int32_t *stop)
{
    pcp_dnode *nodes = prog->nodes;
    int32_t i = start;
    int sts = 0;

    *stop = -1;
    while (i < prog->nnodes) {
        nodes[i].need = 0;
        sts = eval_node(nodes, i, in);
        if (nodes[i].need) {
            *stop = i;
            return PCP_DWALK_STOP;
        }
        if (sts == PCP_DWALK_NOMEM)
            return sts;
        if (sts < 0) {
            int32_t p = nodes[i].parent;
            pcp_atom zero;
            while (p >= 0 && nodes[p].op != N_COUNT)
                p = nodes[p].parent;
            if (p < 0)
                return sts;
            memset(&zero, 0, sizeof(zero));
            if ((sts = set_one(&nodes[p].cur, zero)) < 0)
                return sts;
            nodes[p].out = &nodes[p].cur;
            i = p;
        }
        i++;
    }
    return sts;
}

int
pcp_derived_table_add(pcp_dnode *np, int32_t inst, int32_t match)
{
    int32_t lo = 0, hi = np->ntable;
    size_t tail;

    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (np->table_inst[mid] == inst)
            return 0;
        if (np->table_inst[mid] < inst)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (np->ntable == np->table_cap) {
        int32_t cap = np->table_cap ? 2 * np->table_cap : 16;
        int32_t *a, *b, *c;
        if ((a = realloc(np->table_inst, (size_t)cap * sizeof(int32_t))) == NULL)
            return -ENOMEM;
        np->table_inst = a;
        if ((b = realloc(np->table_match, (size_t)cap * sizeof(int32_t))) == NULL)
            return -ENOMEM;
        np->table_match = b;
        if ((c = realloc(np->table_used, (size_t)cap * sizeof(int32_t))) == NULL)
            return -ENOMEM;
        np->table_used = c;
        np->table_cap = cap;
    }
    tail = (size_t)(np->ntable - lo) * sizeof(int32_t);
    memmove(np->table_inst + lo + 1, np->table_inst + lo, tail);
    memmove(np->table_match + lo + 1, np->table_match + lo, tail);
    memmove(np->table_used + lo + 1, np->table_used + lo, tail);
    np->table_inst[lo] = inst;
    np->table_match[lo] = match ? 1 : 0;
    np->table_used[lo] = 0;
    np->ntable++;
    return 0;
}

/* which operands an op reads: 1 left, 2 right */
static int
operands_of(int32_t op)
{
    switch (op) {
    case N_INTEGER: case N_NAME: case N_DOUBLE: case N_DEFINED: case N_ANON: case N_SCALE:
    case N_PATTERN: case N_COLON:
        return 0;
    case N_DELTA: case N_RATE: case N_NOT: case N_NEG: case N_RESCALE: case N_INSTANT:
    case N_AVG: case N_COUNT: case N_SUM: case N_MAX: case N_MIN: case N_SCALAR:
        return 1;
    case N_FILTERINST:
        return 2;
    default:
        return 3;       /* the binary operators, and ?: (its right a COLON) */
    }
}

/* whether the values of a node of this op are computed in its type (the others only
 * pass an operand's values on, or hold none) */
static int
computed(int32_t op)
{
    return op != N_NAME && op != N_PATTERN && op != N_SCALE;
}

int
pcp_derived_program_links(const pcp_dprogram *prog)
{
    int32_t i, n = prog->nnodes;

    if (n <= 0 || prog->nodes == NULL)
        return PM_ERR_CONV;
    for (i = 0; i < n; i++) {
        const pcp_dnode *np = &prog->nodes[i];
        int uses = operands_of(np->op);
        if (np->op < N_INTEGER || np->op > N_SCALAR || np->otype < 0 ||
            np->otype > 5 /* PM_TYPE_DOUBLE */ ||
            (computed(np->op) && (np->type < 0 || np->type > 5)))
            return PM_ERR_CONV;
        if (np->left < -1 || np->left >= i || np->right < -1 || np->right >= i)
            return PM_ERR_CONV;
        if (((uses & 1) && np->left < 0) || ((uses & 2) && np->right < 0))
            return PM_ERR_CONV;
        if (np->left >= 0 && prog->nodes[np->left].parent != i)
            return PM_ERR_CONV;
        if (np->right >= 0 && prog->nodes[np->right].parent != i)
            return PM_ERR_CONV;
        if (i == n - 1 ? np->parent != -1 : (np->parent <= i || np->parent >= n))
            return PM_ERR_CONV;
        if (np->op == N_QUEST) {
            const pcp_dnode *colon = &prog->nodes[np->right];
            if (colon->op != N_COLON || colon->left < 0 || colon->right < 0)
                return PM_ERR_CONV;
        }
        if (np->op == N_FILTERINST && np->filter != PCP_DFILTER_EXACT &&
            np->filter != PCP_DFILTER_REGEX)
            return PM_ERR_CONV;
    }
    return 0;
}

static int
empty_state(const pcp_dnode *np)
{
    return np->cur.cap == 0 && np->cur.inst == NULL && np->cur.val == NULL &&
           np->cur.numval == 0 && np->last.cap == 0 && np->last.inst == NULL &&
           np->last.val == NULL && np->last.numval == 0 && np->out == NULL &&
           np->table_inst == NULL && np->table_match == NULL && np->table_used == NULL &&
           np->ntable == 0 && np->table_cap == 0 && np->unknown == NULL &&
           np->nunknown == 0 && np->unknown_cap == 0 &&
           np->exact_state == PCP_DEXACT_UNKNOWN;
}

int
pcp_derived_program_check(const pcp_dprogram *prog)
{
    int32_t i;
    int sts = pcp_derived_program_links(prog);

    if (sts < 0)
        return sts;
    for (i = 0; i < prog->nnodes; i++)
        if (!empty_state(&prog->nodes[i]))
            return PM_ERR_CONV;
    return 0;
}

void
pcp_derived_program_free(pcp_dprogram *prog)
{
    int32_t i;
    for (i = 0; i < prog->nnodes; i++) {
        pcp_dnode *np = &prog->nodes[i];
        free(np->cur.inst);
        free(np->cur.val);
        free(np->last.inst);
        free(np->last.val);
        free(np->table_inst);
        free(np->table_match);
        free(np->table_used);
        free(np->unknown);
        memset(&np->cur, 0, sizeof(np->cur));
        memset(&np->last, 0, sizeof(np->last));
        np->out = NULL;
        np->table_inst = np->table_match = np->table_used = np->unknown = NULL;
        np->ntable = np->table_cap = np->nunknown = np->unknown_cap = 0;
    }
}
