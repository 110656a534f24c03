/* pmFetch on an archive in PM_MODE_FORW / PM_MODE_BACK: the requested value sets picked
 * out of one decoded record, in the order of the request, filtered by the instance
 * profile. The output is a pcp_result like any other, whose blocks stay in the record's
 * bytes, so nothing per value goes through Python. */
#include <stdlib.h>

#include "result.h"

int pcp_profile_includes(const pcp_profile *profile, uint32_t indom, int32_t inst)
{
    for (int32_t e = 0; e < profile->nentries; e++) {
        if (profile->indom[e] != indom)
            continue;
        /* binary search of the entry's ascending instance list */
        int32_t lo = profile->first[e], hi = lo + profile->count[e];
        if (lo < 0 || hi < lo || hi > profile->ninsts)
            return 0;
        int listed = 0;
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (profile->insts[mid] == inst) {
                listed = 1;
                break;
            }
            if (profile->insts[mid] < inst)
                lo = mid + 1;
            else
                hi = mid;
        }
        return listed == (profile->listed_pass[e] != 0);
    }
    return profile->include_by_default != 0;
}

/* pmid -> index of its first set in the record: open addressing, sized a power of two
 * at least twice the number of sets so a probe always ends at an empty slot. */
typedef struct {
    uint32_t mask;
    int32_t *slot;              /* set index, or -1 */
} set_table;

static uint32_t pmid_hash(uint32_t pmid)
{
    return pmid * 2654435761u;
}

static int set_table_build(set_table *t, const pcp_result *src)
{
    uint32_t size = 8;
    while (size < 2u * (uint32_t)src->numpmid)
        size <<= 1;
    t->mask = size - 1;
    t->slot = malloc(size * sizeof *t->slot);
    if (t->slot == NULL)
        return -1;
    for (uint32_t i = 0; i < size; i++)
        t->slot[i] = -1;
    for (int32_t i = 0; i < src->numpmid; i++) {
        uint32_t h = pmid_hash(src->pmid[i]) & t->mask;
        while (t->slot[h] >= 0 && src->pmid[t->slot[h]] != src->pmid[i])
            h = (h + 1) & t->mask;
        if (t->slot[h] < 0)
            t->slot[h] = i;     /* the first set of a pmid wins, as libpcp's search */
    }
    return 0;
}

static int32_t set_table_find(const set_table *t, const pcp_result *src, uint32_t pmid)
{
    uint32_t h = pmid_hash(pmid) & t->mask;
    while (t->slot[h] >= 0) {
        if (src->pmid[t->slot[h]] == pmid)
            return t->slot[h];
        h = (h + 1) & t->mask;
    }
    return -1;
}

/* Whether a value stays in the output: metrics with no instance domain have no profile. */
static int keeps(const pcp_profile *profile, uint32_t indom, int32_t inst)
{
    if (indom == PM_INDOM_NULL || profile == NULL)
        return 1;
    return pcp_profile_includes(profile, indom, inst);
}

int pcp_result_select(const pcp_result *src, const pcp_select_request *request,
                      const pcp_profile *profile, pcp_result *out)
{
    if (src->numpmid < 0 || src->nvalues < 0 || request->npmids < 0)
        return PM_ERR_LOGREC;
    /* the source's sets must lie within its values (a decoder's output, checked anyway) */
    for (int32_t i = 0; i < src->numpmid; i++) {
        int32_t n = src->numval[i];
        if (n > 0 && (src->first[i] < 0 || src->first[i] > src->nvalues ||
                      n > src->nvalues - src->first[i]))
            return PM_ERR_LOGREC;
    }
    /* with `out`, its numpmid and nvalues on entry are the room its arrays have */
    if (out && out->numpmid < request->npmids)
        return PM_ERR_TOOBIG;
    int64_t room = out ? out->nvalues : INT32_MAX;
    set_table table;
    if (set_table_build(&table, src) < 0)
        return PM_ERR_TOOBIG;
    int sts = 0;
    int found_any = 0;
    int64_t k = 0;
    for (int32_t r = 0; r < request->npmids; r++) {
        uint32_t pmid = request->pmid[r];
        int32_t s = set_table_find(&table, src, pmid);
        int32_t numval = 0, valfmt = 0;
        int64_t first = k;
        if (s >= 0) {
            found_any = 1;
            numval = src->numval[s];
            if (numval > 0) {
                if (!request->known[r]) {
                    sts = PM_ERR_PMID_LOG;
                    break;
                }
                uint32_t indom = request->indom[r];
                int32_t base = src->first[s];
                for (int32_t j = 0; j < numval; j++) {
                    int32_t v = base + j;
                    if (!keeps(profile, indom, src->inst[v]))
                        continue;
                    if (k >= room) {
                        sts = PM_ERR_TOOBIG;
                        break;
                    }
                    if (out) {
                        out->inst[k] = src->inst[v];
                        out->vtype[k] = src->vtype[v];
                        out->ival[k] = src->ival[v];
                        out->dval[k] = src->dval[v];
                        out->boff[k] = src->boff[v];
                        out->blen[k] = src->blen[v];
                    }
                    k++;
                }
                if (sts < 0)
                    break;
                numval = (int32_t)(k - first);
                valfmt = numval > 0 ? src->valfmt[s] : 0;
            }
        }
        if (out) {
            out->pmid[r] = pmid;
            out->numval[r] = numval;
            out->valfmt[r] = valfmt;
            out->first[r] = (int32_t)first;
        }
    }
    free(table.slot);
    if (sts < 0)
        return sts;
    if (out == NULL)
        return (int)k;
    out->sec = src->sec;
    out->nsec = src->nsec;
    out->numpmid = request->npmids;
    out->nvalues = (int32_t)k;
    return found_any;
}
