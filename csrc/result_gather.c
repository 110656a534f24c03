/* A result assembled from the value sets of other results: a LOCAL context's fetch asks
 * each domain's PMDA for its pmids and puts the sets back in request order. Column copies
 * a set at a time; nothing here reads wire bytes, but every index and count is checked,
 * since the sources are results decoded from what child processes sent. */
#include <string.h>

#include "result.h"

static int
source_set(const pcp_result *const *srcs, int32_t nsrcs, int32_t src, int32_t set,
           const pcp_result **found)
{
    if (src >= nsrcs || srcs[src] == NULL || set < 0 || set >= srcs[src]->numpmid)
        return PM_ERR_TOOSMALL;
    *found = srcs[src];
    return 0;
}

int
pcp_result_gather(pcp_result *out, int32_t numpmid, const uint32_t *pmid,
                  const int32_t *src_of, const int32_t *set_of, const int32_t *code,
                  const pcp_result *const *srcs, const uint32_t *base, int32_t nsrcs)
{
    int64_t k = 0;

    if (numpmid < 0 || nsrcs < 0)
        return PM_ERR_TOOSMALL;
    for (int32_t i = 0; i < numpmid; i++) {
        const pcp_result *src;
        int32_t n, first;

        if (src_of[i] < 0) {
            if (out != NULL) {
                out->pmid[i] = pmid[i];
                out->numval[i] = code[i];
                out->valfmt[i] = 0;
                out->first[i] = (int32_t)k;
            }
            continue;
        }
        if (source_set(srcs, nsrcs, src_of[i], set_of[i], &src) < 0)
            return PM_ERR_TOOSMALL;
        n = src->numval[set_of[i]];
        first = src->first[set_of[i]];
        if (n > 0 && (first < 0 || first > src->nvalues || n > src->nvalues - first))
            return PM_ERR_TOOSMALL;
        if (out != NULL) {
            out->pmid[i] = src->pmid[set_of[i]];
            out->numval[i] = n;
            out->valfmt[i] = src->valfmt[set_of[i]];
            out->first[i] = (int32_t)k;
        }
        if (n <= 0)
            continue;
        if (k + n > (out != NULL ? (int64_t)out->nvalues : (int64_t)INT32_MAX))
            return PM_ERR_TOOSMALL;
        if (out != NULL) {
            uint32_t shift = base[src_of[i]];

            memcpy(out->inst + k, src->inst + first, (size_t)n * sizeof(int32_t));
            memcpy(out->vtype + k, src->vtype + first, (size_t)n * sizeof(int32_t));
            memcpy(out->ival + k, src->ival + first, (size_t)n * sizeof(int64_t));
            memcpy(out->dval + k, src->dval + first, (size_t)n * sizeof(double));
            memcpy(out->blen + k, src->blen + first, (size_t)n * sizeof(uint32_t));
            for (int32_t v = 0; v < n; v++) {
                uint64_t moved = (uint64_t)src->boff[first + v] + shift;

                if (src->vtype[first + v] == -1)
                    moved = 0;
                else if (moved > UINT32_MAX)
                    return PM_ERR_TOOSMALL;
                out->boff[k + v] = (uint32_t)moved;
            }
        }
        k += n;
    }
    if (out != NULL) {
        out->numpmid = numpmid;
        out->nvalues = (int32_t)k;
    }
    return (int32_t)k;
}
