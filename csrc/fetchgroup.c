/* Fetchgroup values (fetchgroup.h): libpcp 6.0.3's pmFetchGroup for items and instance
 * domains, over decoded results. */
#include "fetchgroup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- instance order ----
 * libpcp sorts each value set by instance before filling the group (pmSortHighResInstances:
 * glibc's qsort, a merge sort, with the comparator `a->inst - b->inst` in int arithmetic).
 * The same merge sort over value indices, with the same wrapping comparator, gives the
 * same order even for instances far enough apart to overflow it. */

static int inst_cmp(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static void merge_sort(int32_t *idx, int32_t *tmp, size_t n, const int32_t *inst)
{
    if (n <= 1)
        return;
    size_t n1 = n / 2, n2 = n - n1;
    int32_t *b1 = idx, *b2 = idx + n1, *t = tmp;
    merge_sort(b1, tmp, n1, inst);
    merge_sort(b2, tmp, n2, inst);
    while (n1 > 0 && n2 > 0) {
        if (inst_cmp(inst[*b1], inst[*b2]) <= 0) {
            *t++ = *b1++;
            n1--;
        } else {
            *t++ = *b2++;
            n2--;
        }
    }
    if (n1 > 0)
        memcpy(t, b1, n1 * sizeof *t);
    memcpy(idx, tmp, (n - n2) * sizeof *idx);
}

/* ---- finding values ---- */

/* The value set of `pmid`: where the group's fetch put it, else searched for. */
static int32_t find_vset(const pcp_result *r, uint32_t pmid, int32_t hint)
{
    if (hint >= 0 && hint < r->numpmid && r->pmid[hint] == pmid)
        return hint;
    for (int32_t i = 0; i < r->numpmid; i++)
        if (r->pmid[i] == pmid)
            return i;
    return -1;
}

/* pmfg_extract_item's lookup: the index of the value of `inst` (any value when the
 * metric is singular), or a status: the value set's error, or PM_ERR_VALUE. `near` is
 * the position to try first (value sets of consecutive results are usually alike). */
static int32_t find_value(const pcp_result *r, const pcp_fg_item *it, int32_t inst,
                          int32_t near, int32_t *status)
{
    int32_t v = find_vset(r, it->pmid, it->vset);
    if (v < 0) {
        *status = PM_ERR_VALUE;
        return -1;
    }
    int32_t numval = r->numval[v];
    if (numval < 0) {
        *status = numval;
        return -1;
    }
    if (numval == 0) {
        *status = PM_ERR_VALUE;
        return -1;
    }
    int32_t first = r->first[v];
    if (it->singular)
        return first;
    if (near >= 0 && near < numval && r->inst[first + near] == inst)
        return first + near;
    for (int32_t j = 0; j < numval; j++)
        if (r->inst[first + j] == inst)
            return first + j;
    *status = PM_ERR_VALUE;
    return -1;
}

/* pmExtractValue, plus the string<->number conversions libpcp's fetchgroup adds
 * (__pmExtractValue2). A STRING output records where its text comes from in *src. */
static int extract_raw(int32_t valfmt, uint32_t word, int32_t vtype, const uint8_t *payload,
                       uint32_t plen, int32_t itype, int32_t otype, pcp_atom *out,
                       int32_t *src)
{
    if (itype == PM_TYPE_STRING) {
        int sts = pcp_convert_extract(valfmt, word, vtype, payload, plen, itype,
                                      PM_TYPE_STRING, out);
        if (sts < 0)
            return sts;
        if (otype == PM_TYPE_STRING) {
            *src = PCP_FG_STRING_PAYLOAD;
            return 0;
        }
        return pcp_convert_string(payload, plen, otype, out);
    }
    int sts;
    if (otype == PM_TYPE_STRING) {
        *src = PCP_FG_STRING_FORMAT_TYPE;
        sts = pcp_convert_extract(valfmt, word, vtype, payload, plen, itype, itype, out);
    } else {
        sts = pcp_convert_extract(valfmt, word, vtype, payload, plen, itype, otype, out);
    }
    /* an aggregate "as it is" has no number to give (the Python side refuses such items
     * before they get here) */
    return sts > 0 ? PM_ERR_CONV : sts;
}

/* extract_raw for value k of a decoded result. */
static int extract(const pcp_fg_source *s, int32_t k, int32_t valfmt, int32_t itype,
                   int32_t otype, pcp_atom *out, int32_t *src)
{
    const pcp_result *r = s->r;
    const uint8_t *payload = NULL;
    uint32_t plen = 0;
    if (r->vtype[k] >= 0) {
        if ((size_t)r->boff[k] > s->len || (size_t)r->blen[k] > s->len - r->boff[k])
            return PM_ERR_CONV;     /* cannot happen for a decoded result; checked anyway */
        payload = s->buf + r->boff[k];
        plen = r->blen[k];
    }
    int sts = extract_raw(valfmt, (uint32_t)(uint64_t)r->ival[k], r->vtype[k], payload, plen,
                          itype, otype, out, src);
    if (sts >= 0 && *src == PCP_FG_STRING_PAYLOAD)
        *src = k;
    return sts;
}

/* pmtimespecSub: libpcp adds the nanoseconds in long double. */
static double seconds_between(const pcp_result *a, const pcp_result *b)
{
    return (double)((double)(a->sec - b->sec) + (long double)(a->nsec - b->nsec) / 1000000000.0L);
}

/* The end of pmfg_extract_convert_item: rescale (pmConvScale with 7.2's extra-unit step,
 * then the multiplier) and store the double as the output type. */
static int finish(const pcp_fg_item *it, double value, pcp_atom *out, int32_t *src)
{
    if (it->unit) {
        if (it->unit_sts < 0)
            return it->unit_sts;
        pcp_atom in, scaled;
        in.d = value;
        int sts = pcp_convert_scale(PM_TYPE_DOUBLE, &in, it->mult, it->div, &scaled);
        if (sts < 0)
            return sts;
        if (it->extra)      /* __pmConvExtraScale on the double, as pmConvScale ends */
            scaled.d = (double)(it->extra_a + it->extra_b * (scaled.d + it->extra_c) / it->extra_d);
        value = scaled.d * it->multiplier;
    }
    if (it->otype == PM_TYPE_STRING) {
        *src = PCP_FG_STRING_FORMAT_DOUBLE;
        out->d = value;
        return 0;
    }
    return pcp_convert_from_double(value, it->otype, out);
}

int pcp_fetchgroup_convert(const pcp_fg_item *it, int32_t valfmt, uint32_t word,
                           int32_t vtype, const uint8_t *payload, uint32_t plen,
                           pcp_atom *out, int32_t *src)
{
    if (!it->unit)
        return extract_raw(valfmt, word, vtype, payload, plen, it->itype, it->otype, out, src);
    pcp_atom v;
    int sts = extract_raw(valfmt, word, vtype, payload, plen, it->itype, PM_TYPE_DOUBLE, &v, src);
    if (sts < 0)
        return sts;
    return finish(it, v.d, out, src);
}

/* pmfg_extract_convert_item (rate and unit conversion through a double) or plain
 * extraction, for value k of the current result, whose instance is `inst` and which sits
 * at position `j` of its value set. */
static int convert_one(const pcp_fg_item *it, const pcp_fg_source *cur,
                       const pcp_fg_source *prev, int32_t wrap, int32_t valfmt, int32_t k,
                       int32_t inst, int32_t j, pcp_atom *out, int32_t *src)
{
    if (!it->rate && !it->unit)
        return extract(cur, k, valfmt, it->itype, it->otype, out, src);

    pcp_atom now;
    int sts = extract(cur, k, valfmt, it->itype, PM_TYPE_DOUBLE, &now, src);
    if (sts < 0)
        return sts;
    double value = now.d;
    if (it->rate) {
        if (prev == NULL)
            return PM_ERR_AGAIN;
        double dt = seconds_between(cur->r, prev->r);
        if (dt < 0.000000001)       /* libpcp's guard against dividing by zero */
            dt = 0.000000001;
        int32_t pk = find_value(prev->r, it, inst, j, &sts);
        if (pk < 0)
            return sts;
        int32_t pv = find_vset(prev->r, it->pmid, it->vset);
        pcp_atom then;
        int32_t unused = 0;
        sts = extract(prev, pk, prev->r->valfmt[pv], it->itype, PM_TYPE_DOUBLE, &then, &unused);
        if (sts < 0)
            return sts;
        double delta = value - then.d;
        if (delta < 0.0) {
            if (!wrap)
                return PM_ERR_VALUE;
            if (it->itype == PM_TYPE_32 || it->itype == PM_TYPE_U32)
                delta += 4294967296.0;
            else if (it->itype == PM_TYPE_64 || it->itype == PM_TYPE_U64)
                delta += 18446744073709551616.0;
        }
        value = delta / dt;
    }
    return finish(it, value, out, src);
}

/* Store a converted value in slot `slot` (an item's values are packed by type size). */
static void put_value(const pcp_fg_item *it, uint8_t *val, int32_t j, const pcp_atom *a)
{
    uint8_t *base = val + (size_t)it->slot * 8;
    switch (it->otype) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
    case PM_TYPE_FLOAT:
        memcpy(base + (size_t)j * 4, a, 4);
        break;
    default:
        memcpy(base + (size_t)j * 8, a, 8);
    }
}

/* ---- the two kinds of item ---- */

static void fill_one(const pcp_fg_item *it, const pcp_fg_source *cur,
                     const pcp_fg_source *prev, int32_t wrap, pcp_fg_out *out, int32_t n)
{
    const pcp_result *r = cur->r;
    if (it->discrete) {
        int32_t v = find_vset(r, it->pmid, it->vset);
        if (v >= 0 && r->numval[v] == 0)
            return;                 /* a DISCRETE metric keeps its last value */
    }
    int32_t sts;
    int32_t k = find_value(r, it, it->inst, -1, &sts);
    if (k >= 0) {
        int32_t v = find_vset(r, it->pmid, it->vset);
        pcp_atom a;
        int32_t src = 0;
        sts = convert_one(it, cur, prev, wrap, r->valfmt[v], k, it->inst, k - r->first[v],
                          &a, &src);
        if (sts >= 0) {
            put_value(it, out->val, 0, &a);
            out->src[it->slot] = src;
            out->inst[it->slot] = r->inst[k];
        }
    }
    out->sts[n] = sts;
    out->num[n] = sts >= 0 ? 1 : 0;
}

/* An indom item's value count, how many of them failed, and whether its instance list
 * changed (`moved`: an instance differs in some slot; a new count is a change too). */
static void set_count(pcp_fg_out *out, int32_t n, int32_t num, int32_t failed, int32_t moved)
{
    if (moved || out->num[n] != num)
        out->insts_gen[n]++;
    out->num[n] = num;
    out->nfailed[n] = failed;
}

static int fill_indom(const pcp_fg_item *it, const pcp_fg_source *cur,
                      const pcp_fg_source *prev, int32_t wrap, pcp_fg_out *out, int32_t n,
                      int32_t **order, size_t *order_cap)
{
    const pcp_result *r = cur->r;
    int32_t v = find_vset(r, it->pmid, it->vset);
    int32_t numval = v < 0 ? PM_ERR_VALUE : r->numval[v];
    if (numval < 0) {
        if (!it->discrete)          /* a DISCRETE metric keeps its values, not its status */
            set_count(out, n, 0, 0, 0);
        out->sts[n] = numval;
        return 0;
    }
    if (it->discrete && numval == 0)
        return 0;                   /* everything stays as the last fetch left it */

    /* the value set in instance order */
    if ((size_t)numval * 2 > *order_cap) {
        int32_t *grown = realloc(*order, (size_t)numval * 2 * sizeof **order);
        if (grown == NULL)
            return -ENOMEM;
        *order = grown;
        *order_cap = (size_t)numval * 2;
    }
    int32_t *idx = *order;
    int32_t first = r->first[v];
    for (int32_t j = 0; j < numval; j++)
        idx[j] = first + j;
    if (numval > 1)
        merge_sort(idx, idx + numval, (size_t)numval, r->inst);

    int32_t moved = 0, failed = 0;
    for (int32_t j = 0; j < numval; j++) {
        if (j >= it->maxnum) {      /* libpcp stops here and leaves num at 0 */
            set_count(out, n, 0, 0, 1);
            out->sts[n] = PM_ERR_TOOBIG;
            return 0;
        }
        int32_t k = idx[j];
        int32_t slot = it->slot + j;
        pcp_atom a;
        int32_t src = 0;
        moved |= out->inst[slot] != r->inst[k];
        out->inst[slot] = r->inst[k];
        int32_t sts = convert_one(it, cur, prev, wrap, r->valfmt[v], k, r->inst[k],
                                  k - first, &a, &src);
        if (sts >= 0) {
            put_value(it, out->val, j, &a);
            out->src[slot] = src;
        }
        out->stss[slot] = sts;
        failed += sts < 0;
    }
    set_count(out, n, numval, failed, moved);
    out->sts[n] = 0;
    return 0;
}

int pcp_fetchgroup_fill(const pcp_fg_item *items, int32_t nitems, const pcp_fg_source *cur,
                        const pcp_fg_source *prev, int32_t wrap, pcp_fg_out *out)
{
    int32_t *order = NULL;
    size_t order_cap = 0;
    int sts = 0;
    for (int32_t n = 0; n < nitems && sts == 0; n++) {
        if (items[n].all)
            sts = fill_indom(&items[n], cur, prev, wrap, out, n, &order, &order_cap);
        else
            fill_one(&items[n], cur, prev, wrap, out, n);
    }
    free(order);
    return sts;
}
