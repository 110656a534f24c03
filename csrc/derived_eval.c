/* Derived metric evaluation kernels: see derived.h. The arithmetic is libpcp 6.0.3's
 * (derive_fetch.c): operands promoted to the result type, wrapping integer arithmetic,
 * float arithmetic for FLOAT, DOUBLE division that gives 0 for a 0 dividend. Integer
 * wrap-around is done in unsigned arithmetic here, where libpcp relies on what x86-64
 * gives for signed overflow. */
#include <math.h>
#include <string.h>

#include "derived.h"

/* libpcp's node numbers (pcp/_libpcp/derived/nodes.py) */
enum { N_PLUS = 3, N_MINUS = 4, N_STAR = 5, N_SLASH = 6, N_AVG = 7, N_COUNT = 8,
       N_MAX = 10, N_MIN = 11, N_SUM = 12, N_LT = 17, N_LEQ = 18, N_EQ = 19, N_GEQ = 20,
       N_GT = 21, N_NEQ = 22, N_AND = 23, N_OR = 24, N_NOT = 25, N_NEG = 26 };
enum { T_32, T_U32, T_64, T_U64, T_FLOAT, T_DOUBLE };

static int
numeric(int32_t type)
{
    return type >= T_32 && type <= T_DOUBLE;
}

int
pcp_derived_load(const pcp_result *r, int32_t set, int32_t type, pcp_dvec *out)
{
    int32_t numval, first, i;

    if (set < 0 || set >= r->numpmid)
        return PM_ERR_PMID;
    numval = r->numval[set];
    if (numval <= 0)
        return numval;
    first = r->first[set];
    if (first < 0 || numval > r->nvalues - first)
        return PM_ERR_LOGREC;
    if (numval > out->cap)
        return PM_ERR_TOOBIG;
    if (!numeric(type))
        return PM_ERR_TYPE;
    for (i = 0; i < numval; i++) {
        int32_t k = first + i;
        int32_t vtype = r->vtype[k];
        pcp_atom *v = &out->val[i];
        out->inst[i] = r->inst[k];
        switch (type) {
        case T_32:
        case T_U32:
            v->l = (int32_t)(uint32_t)(uint64_t)r->ival[k];
            break;
        case T_64:
        case T_U64:
            if (vtype < 0)
                return PM_ERR_LOGREC;
            v->ll = r->ival[k];
            break;
        case T_FLOAT:
            if (vtype < 0) {
                uint32_t word = (uint32_t)(uint64_t)r->ival[k];
                memcpy(&v->f, &word, sizeof(float));
            } else {
                v->f = (float)r->dval[k];
            }
            break;
        default:
            if (vtype < 0)
                return PM_ERR_LOGREC;
            v->d = r->dval[k];
            break;
        }
    }
    return numval;
}

/* an operand in the result type (bin_op's promotion) */
static pcp_atom
promoted(int type, pcp_atom a, int from)
{
    pcp_atom out = a;
    switch (type) {
    case T_64:
        if (from == T_32)
            out.ll = a.l;
        else if (from == T_U32)
            out.ll = a.ul;
        break;
    case T_U64:
        if (from == T_32)
            out.ull = (uint64_t)(int64_t)a.l;
        else if (from == T_U32)
            out.ull = a.ul;
        break;
    case T_FLOAT:
        switch (from) {
        case T_32: out.f = (float)a.l; break;
        case T_U32: out.f = (float)a.ul; break;
        case T_64: out.f = (float)a.ll; break;
        case T_U64: out.f = (float)a.ull; break;
        default: break;
        }
        break;
    case T_DOUBLE:
        switch (from) {
        case T_32: out.d = a.l; break;
        case T_U32: out.d = a.ul; break;
        case T_64: out.d = (double)a.ll; break;
        case T_U64: out.d = (double)a.ull; break;
        case T_FLOAT: out.d = a.f; break;
        default: break;
        }
        break;
    default:
        break;
    }
    return out;
}

#define COMPARE(res, op, a, b) \
    switch (op) { \
    case N_LT: res = (a) < (b); break; \
    case N_LEQ: res = (a) <= (b); break; \
    case N_EQ: res = (a) == (b); break; \
    case N_GEQ: res = (a) >= (b); break; \
    case N_GT: res = (a) > (b); break; \
    case N_NEQ: res = (a) != (b); break; \
    case N_AND: res = ((a) != 0) && ((b) != 0); break; \
    default: res = ((a) != 0) || ((b) != 0); break; \
    }

static pcp_atom
bin_op(int type, int op, pcp_atom a, int ltype, int64_t lmul, int64_t ldiv,
       pcp_atom b, int rtype, int64_t rmul, int64_t rdiv)
{
    pcp_atom l = promoted(type, a, ltype), r = promoted(type, b, rtype), res;
    int cmp = 0;

    memset(&res, 0, sizeof(res));
    switch (type) {
    case T_32:
    case T_U32:
        if (op == N_PLUS) res.ul = l.ul + r.ul;
        else if (op == N_MINUS) res.ul = l.ul - r.ul;
        else if (op == N_STAR) res.ul = l.ul * r.ul;
        else if (op == N_SLASH) res.ul = 0;
        else {
            if (type == T_32) { COMPARE(cmp, op, l.l, r.l) } else { COMPARE(cmp, op, l.ul, r.ul) }
            res.ul = (uint32_t)cmp;
        }
        break;
    case T_64:
    case T_U64:
        if (op == N_PLUS) res.ull = l.ull + r.ull;
        else if (op == N_MINUS) res.ull = l.ull - r.ull;
        else if (op == N_STAR) res.ull = l.ull * r.ull;
        else if (op == N_SLASH) res.ull = 0;
        else {
            if (type == T_64) { COMPARE(cmp, op, l.ll, r.ll) } else { COMPARE(cmp, op, l.ull, r.ull) }
            res.ull = (uint64_t)cmp;
        }
        break;
    case T_FLOAT:
        if (op == N_PLUS) res.f = l.f + r.f;
        else if (op == N_MINUS) res.f = l.f - r.f;
        else if (op == N_STAR) res.f = l.f * r.f;
        else if (op == N_SLASH) res.f = 0;
        else { COMPARE(cmp, op, l.f, r.f) res.f = (float)cmp; }
        break;
    default:
        l.d = (l.d / (double)ldiv) * (double)lmul;
        r.d = (r.d / (double)rdiv) * (double)rmul;
        if (op == N_PLUS) res.d = l.d + r.d;
        else if (op == N_MINUS) res.d = l.d - r.d;
        else if (op == N_STAR) res.d = l.d * r.d;
        else if (op == N_SLASH) res.d = l.d == 0 ? 0 : l.d / r.d;
        else { COMPARE(cmp, op, l.d, r.d) res.d = cmp; }
        break;
    }
    return res;
}

/* (__uint32_t) of a relational result held in `type` (0 or 1; anything a float cannot
 * be converted to without undefined behaviour becomes 0) */
static uint32_t
as_word(int type, pcp_atom v)
{
    double d;
    switch (type) {
    case T_32: case T_U32: return v.ul;
    case T_64: case T_U64: return (uint32_t)v.ull;
    case T_FLOAT: d = v.f; break;
    default: d = v.d; break;
    }
    return d >= 0 && d < 4294967296.0 ? (uint32_t)d : 0;
}

/* a value of a numeric type as a double, as bin_op promotes it to T_DOUBLE */
static inline double
as_double(int32_t type, pcp_atom a)
{
    switch (type) {
    case T_32: return a.l;
    case T_U32: return a.ul;
    case T_64: return (double)a.ll;
    case T_U64: return (double)a.ull;
    case T_FLOAT: return a.f;
    default: return a.d;
    }
}

/* pcp_derived_binary for an operation done in T_DOUBLE when the operands pair off by
 * position (the same instances in the same order, or one operand singular), as they
 * mostly do: the same values, without the general instance search and per-value
 * dispatch. -1 when the operands are not of that shape (the general loop does it). */
static int
binary_double_paired(int32_t op, int32_t relational, int32_t ltype, int64_t lmul,
                     int64_t ldiv, int32_t lnull, const pcp_dvec *l, int32_t rtype,
                     int64_t rmul, int64_t rdiv, int32_t rnull, const pcp_dvec *r,
                     pcp_dvec *out)
{
    int32_t n, k, lstep = 1, rstep = 1;
    double lm = (double)lmul, ld = (double)ldiv, rm = (double)rmul, rd = (double)rdiv;

    if (lnull && rnull)
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
        default: COMPARE(cmp, op, a, b) res = cmp; break;
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

int
pcp_derived_binary(int32_t op, int32_t otype, int32_t relational,
                   int32_t ltype, int64_t lmul, int64_t ldiv, int32_t lnull,
                   const pcp_dvec *l, int32_t rtype, int64_t rmul, int64_t rdiv,
                   int32_t rnull, const pcp_dvec *r, pcp_dvec *out)
{
    int32_t numval, i = 0, j = 0, k = 0;

    if (!numeric(otype) || !numeric(ltype) || !numeric(rtype) || ldiv == 0 || rdiv == 0)
        return PM_ERR_CONV;
    if (l->numval <= 0 || r->numval <= 0)
        return out->numval = 0;
    if (otype == T_DOUBLE) {
        int sts = binary_double_paired(op, relational, ltype, lmul, ldiv, lnull, l, rtype,
                                       rmul, rdiv, rnull, r, out);
        if (sts != -1)
            return sts;
    }
    if (lnull)
        numval = r->numval;
    else if (rnull)
        numval = l->numval;
    else
        numval = l->numval <= r->numval ? l->numval : r->numval;
    if (numval > out->cap)
        return PM_ERR_TOOBIG;
    while (k < numval) {
        pcp_atom res;
        if (i >= l->numval || j >= r->numval)
            break;
        if (!lnull && !rnull && l->inst[i] != r->inst[j]) {
            for (j = 0; j < r->numval; j++)
                if (l->inst[i] == r->inst[j])
                    break;
            if (j == r->numval) {
                i++;
                j = 0;
                continue;
            }
        }
        res = bin_op(otype, op, l->val[i], ltype, lmul, ldiv, r->val[j], rtype, rmul, rdiv);
        if (relational) {
            uint32_t word = as_word(otype, res);
            memset(&res, 0, sizeof(res));
            res.ul = word;
        }
        out->val[k] = res;
        out->inst[k] = !lnull ? l->inst[i] : r->inst[j];
        k++;
        if (!lnull) {
            i++;
            if (!rnull && ++j >= r->numval)
                j = 0;
        } else if (!rnull) {
            j++;
        }
    }
    return out->numval = k;
}

int
pcp_derived_unary(int32_t op, int32_t ltype, const pcp_dvec *in, pcp_dvec *out)
{
    int32_t i;

    if (in->numval <= 0)
        return out->numval = in->numval;
    if (in->numval > out->cap)
        return PM_ERR_TOOBIG;
    for (i = 0; i < in->numval; i++) {
        pcp_atom v = in->val[i], res;
        memset(&res, 0, sizeof(res));
        if (op == N_NOT) {
            switch (ltype) {
            case T_32: case T_U32: res.ul = v.ul == 0; break;
            case T_64: case T_U64: res.ul = v.ull == 0; break;
            case T_FLOAT: res.ul = v.f == 0; break;
            default: res.ul = v.d == 0; break;
            }
        } else {
            switch (ltype) {
            case T_32: case T_U32: res.ul = 0u - v.ul; break;
            case T_64: case T_U64: res.ull = 0u - v.ull; break;
            case T_FLOAT: res.f = -v.f; break;
            default: res.d = -v.d; break;
            }
        }
        out->val[i] = res;
        out->inst[i] = in->inst[i];
    }
    return out->numval = in->numval;
}

int
pcp_derived_delta(int32_t rate, int32_t ltype, const pcp_dvec *cur, const pcp_dvec *last,
                  double dt, double time_scale, pcp_dvec *out)
{
    int32_t numval = cur->numval <= last->numval ? cur->numval : last->numval;
    int32_t i, j, k = 0;

    if (numval <= 0)
        return out->numval = numval;
    if (numval > out->cap)
        return PM_ERR_TOOBIG;
    if (!numeric(ltype))
        return PM_ERR_CONV;
    for (i = 0; i < cur->numval && k < numval; i++) {
        pcp_atom c, p, res;
        j = i < last->numval ? i : 0;
        if (cur->inst[i] != last->inst[j]) {
            for (j = 0; j < last->numval; j++)
                if (cur->inst[i] == last->inst[j])
                    break;
            if (j == last->numval)
                continue;
        }
        c = cur->val[i];
        p = last->val[j];
        memset(&res, 0, sizeof(res));
        if (!rate) {
            switch (ltype) {
            case T_32: res.ul = c.ul - p.ul; break;
            case T_U32: res.ll = (int64_t)c.ul - (int64_t)p.ul; break;
            case T_64: res.ull = c.ull - p.ull; break;
            case T_U64: res.d = (double)c.ull - (double)p.ull; break;
            case T_FLOAT: res.f = c.f - p.f; break;
            default: res.d = c.d - p.d; break;
            }
        } else {
            switch (ltype) {
            case T_32: res.d = (double)(int32_t)(c.ul - p.ul); break;
            case T_U32: res.d = (double)(c.ul - p.ul); break;
            case T_64: res.d = (double)(int64_t)(c.ull - p.ull); break;
            case T_U64: res.d = (double)(c.ull - p.ull); break;
            case T_FLOAT: res.d = (double)(c.f - p.f); break;
            default: res.d = c.d - p.d; break;
            }
            res.d /= dt;
            res.d *= time_scale;
        }
        out->val[k] = res;
        out->inst[k] = cur->inst[i];
        k++;
    }
    return out->numval = k;
}

int
pcp_derived_aggregate(int32_t op, int32_t type, int32_t ltype, const pcp_dvec *in,
                      pcp_dvec *out)
{
    int32_t i, n = in->numval > 0 ? in->numval : 0;
    pcp_atom acc = out->val[0];

    if (out->cap < 1)
        return PM_ERR_TOOBIG;
    if (op == N_COUNT) {
        memset(&acc, 0, sizeof(acc));
        acc.l = in->numval;
    } else if (op == N_AVG) {
        acc.f = 0;
        for (i = 0; i < n; i++) {
            pcp_atom v = in->val[i];
            float x;
            switch (ltype) {
            case T_32: x = (float)v.l; break;
            case T_U32: x = (float)v.ul; break;
            case T_64: x = (float)v.ll; break;
            case T_U64: x = (float)v.ull; break;
            case T_FLOAT: x = v.f; break;
            default: x = (float)v.d; break;
            }
            acc.f += x / n;
        }
    } else if (op == N_SUM) {
        memset(&acc, 0, sizeof(acc));
        for (i = 0; i < n; i++) {
            pcp_atom v = in->val[i];
            switch (type) {
            case T_32: case T_U32: acc.ul += v.ul; break;
            case T_64: case T_U64: acc.ull += v.ull; break;
            case T_FLOAT: acc.f += v.f; break;
            default: acc.d += v.d; break;
            }
        }
    } else {
        int max = op == N_MAX;
        for (i = 0; i < n; i++) {
            pcp_atom v = in->val[i];
            int take = i == 0;
            switch (type) {
            case T_32: take = take || (max ? acc.l < v.l : acc.l > v.l); break;
            case T_U32: take = take || (max ? acc.ul < v.ul : acc.ul > v.ul); break;
            case T_64: take = take || (max ? acc.ll < v.ll : acc.ll > v.ll); break;
            case T_U64: take = take || (max ? acc.ull < v.ull : acc.ull > v.ull); break;
            case T_FLOAT: take = take || (max ? acc.f < v.f : acc.f > v.f); break;
            default: take = take || (max ? acc.d < v.d : acc.d > v.d); break;
            }
            if (take)
                acc = v;
        }
    }
    out->val[0] = acc;
    out->inst[0] = -1;
    return out->numval = 1;
}

static int
truth(int32_t type, pcp_atom v)
{
    switch (type) {
    case T_32: case T_U32: return v.ul != 0;
    case T_64: case T_U64: return v.ull != 0;
    case T_FLOAT: return v.f != 0;
    default: return v.d != 0;
    }
}

int
pcp_derived_ternary(int32_t gtype, const pcp_dvec *g, const pcp_dvec *yes,
                    const pcp_dvec *no, int32_t inst_from_no, pcp_dvec *out)
{
    const pcp_dvec *pick = NULL, *pinst = inst_from_no ? no : yes;
    int32_t numval, i;

    if (g->numval <= 0)
        return out->numval = g->numval;
    if (yes->numval <= 0)
        return out->numval = yes->numval;
    if (no->numval <= 0)
        return out->numval = no->numval;
    numval = yes->numval > no->numval ? yes->numval : no->numval;
    if (numval > out->cap)
        return PM_ERR_TOOBIG;
    for (i = 0; i < numval; i++) {
        if (i < g->numval)
            pick = truth(gtype, g->val[i]) ? yes : no;
        out->val[i] = i < pick->numval ? pick->val[i] : pick->val[0];
        out->inst[i] = i < pinst->numval ? pinst->inst[i] : 0;
    }
    return out->numval = numval;
}

int
pcp_derived_rescale(int32_t type, int64_t mult, int64_t div, const pcp_dvec *in,
                    pcp_dvec *out)
{
    int32_t i, k = 0;

    if (in->numval <= 0)
        return out->numval = in->numval;
    if (in->numval > out->cap)
        return PM_ERR_TOOBIG;
    for (i = 0; i < in->numval; i++) {
        if (pcp_convert_scale(type, &in->val[i], mult, div, &out->val[k]) < 0)
            continue;
        out->inst[k++] = in->inst[i];
    }
    return out->numval = k;
}

int
pcp_derived_filter_exact(int32_t inst, const pcp_dvec *in, pcp_dvec *out)
{
    int32_t i;

    out->numval = 0;
    if (out->cap < 1)
        return PM_ERR_TOOBIG;
    for (i = 0; i < in->numval; i++) {
        if (in->inst[i] == inst) {
            out->val[0] = in->val[i];
            out->inst[0] = inst;
            return out->numval = 1;
        }
    }
    return 0;
}

static int32_t
table_find(const int32_t *insts, int32_t n, int32_t inst)
{
    int32_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (insts[mid] == inst)
            return mid;
        if (insts[mid] < inst)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int
pcp_derived_filter_table(const pcp_dvec *in, const int32_t *insts, const int32_t *match,
                         int32_t *used, int32_t ntable, int32_t *unknown, pcp_dvec *out)
{
    int32_t i, k = 0, missing = 0;

    for (i = 0; i < in->numval; i++)
        if (table_find(insts, ntable, in->inst[i]) < 0)
            unknown[missing++] = in->inst[i];
    if (missing)
        return -missing;
    if (in->numval > out->cap)
        return PM_ERR_TOOBIG;
    for (i = 0; i < in->numval; i++) {
        int32_t t = table_find(insts, ntable, in->inst[i]);
        used[t]++;
        if (match[t]) {
            out->val[k] = in->val[i];
            out->inst[k++] = in->inst[i];
        }
    }
    return out->numval = k;
}

static void
put_be(uint8_t *p, uint64_t v, int width)
{
    int i;
    for (i = width - 1; i >= 0; i--) {
        p[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

int
pcp_derived_assemble(const pcp_result *src, const uint8_t *src_data, uint32_t src_len,
                     int32_t nsets, const uint32_t *pmids, const int32_t *src_set,
                     const int32_t *numvals, pcp_dvec **vecs, const int32_t *types,
                     pcp_result *out, uint8_t *data, int32_t *nvalues, uint32_t *nbytes)
{
    int32_t j, i, k = 0;
    uint64_t bytes = 0;

    for (j = 0; j < nsets; j++) {
        int32_t numval, valfmt = 0, s = src_set[j];
        if (s >= 0) {
            if (s >= src->numpmid)
                return PM_ERR_PMID;
            numval = src->numval[s];
            valfmt = src->valfmt[s];
            /* libpcp's __dmpostvalueset copies every block into memory of its own, and so
             * makes a PM_VAL_SPTR set PM_VAL_DPTR */
            if (valfmt == PM_VAL_SPTR)
                valfmt = PM_VAL_DPTR;
        } else if (vecs[j] != NULL) {
            numval = vecs[j]->numval;
            if (!numeric(types[j]))
                return PM_ERR_TYPE;
            valfmt = (types[j] == T_32 || types[j] == T_U32) ? 0 : 1;
        } else {
            numval = numvals[j];
        }
        if (data != NULL) {
            out->pmid[j] = pmids[j];
            out->numval[j] = numval;
            out->valfmt[j] = numval > 0 ? valfmt : 0;
            out->first[j] = k;
        }
        if (numval <= 0)
            continue;
        for (i = 0; i < numval; i++, k++) {
            if (s >= 0) {
                int32_t from = src->first[s] + i;
                uint32_t off, len;
                if (src->first[s] < 0 || from >= src->nvalues)
                    return PM_ERR_LOGREC;
                off = src->boff[from];
                len = src->blen[from];
                if ((uint64_t)off + len > src_len)
                    return PM_ERR_LOGREC;
                if (data != NULL) {
                    out->inst[k] = src->inst[from];
                    out->vtype[k] = src->vtype[from];
                    out->ival[k] = src->ival[from];
                    out->dval[k] = src->dval[from];
                    out->boff[k] = (uint32_t)bytes;
                    out->blen[k] = len;
                    if (len)
                        memcpy(data + bytes, src_data + off, len);
                }
                bytes += len;
            } else {
                const pcp_dvec *v = vecs[j];
                pcp_atom a = v->val[i];
                int32_t type = types[j];
                uint32_t len = type == T_32 || type == T_U32 ? 0 : (type == T_FLOAT ? 4 : 8);
                if (data != NULL) {
                    out->inst[k] = v->inst[i];
                    out->vtype[k] = len ? type : -1;
                    out->ival[k] = 0;
                    out->dval[k] = 0;
                    out->boff[k] = len ? (uint32_t)bytes : 0;
                    out->blen[k] = len;
                    if (type == T_32 || type == T_U32) {
                        out->ival[k] = a.l;
                    } else if (type == T_64 || type == T_U64) {
                        out->ival[k] = a.ll;
                        put_be(data + bytes, a.ull, 8);
                    } else if (type == T_FLOAT) {
                        uint32_t word;
                        memcpy(&word, &a.f, 4);
                        out->dval[k] = a.f;
                        put_be(data + bytes, word, 4);
                    } else {
                        uint64_t word;
                        memcpy(&word, &a.d, 8);
                        out->dval[k] = a.d;
                        put_be(data + bytes, word, 8);
                    }
                }
                bytes += len;
            }
        }
        if (bytes > 0xFFFFFFFFu)
            return PM_ERR_TOOBIG;
    }
    *nvalues = k;
    *nbytes = (uint32_t)bytes;
    if (data != NULL) {
        out->sec = src->sec;
        out->nsec = src->nsec;
        out->numpmid = nsets;
        out->nvalues = k;
    }
    return 0;
}
