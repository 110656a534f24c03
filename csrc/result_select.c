/* pmFetch on an archive in PM_MODE_FORW / PM_MODE_BACK: the requested value sets picked
 * out of one decoded record, in the order of the request, filtered by the instance
 * profile. The output is a pcp_result like any other, whose blocks stay in the record's
 * bytes, so nothing per value goes through Python. */
#include <stdlib.h>
#include <string.h>

#include "archive.h"
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

/* pmid -> index of its first occurrence in a pmid array (a record's sets, or a
 * request): open addressing, sized a power of two at least twice the number of entries
 * so a probe always ends at an empty slot. */
typedef struct {
    uint32_t mask;
    int32_t *slot;              /* set index, or -1 */
} set_table;

static uint32_t pmid_hash(uint32_t pmid)
{
    return pmid * 2654435761u;
}

static int set_table_build(set_table *t, const uint32_t *pmid, int32_t n)
{
    uint32_t size = 8;
    while (size < 2u * (uint32_t)n)
        size <<= 1;
    t->mask = size - 1;
    t->slot = malloc(size * sizeof *t->slot);
    if (t->slot == NULL)
        return -1;
    for (uint32_t i = 0; i < size; i++)
        t->slot[i] = -1;
    for (int32_t i = 0; i < n; i++) {
        uint32_t h = pmid_hash(pmid[i]) & t->mask;
        while (t->slot[h] >= 0 && pmid[t->slot[h]] != pmid[i])
            h = (h + 1) & t->mask;
        if (t->slot[h] < 0)
            t->slot[h] = i;     /* the first set of a pmid wins, as libpcp's search */
    }
    return 0;
}

static int32_t set_table_find(const set_table *t, const uint32_t *pmids, uint32_t pmid)
{
    uint32_t h = pmid_hash(pmid) & t->mask;
    while (t->slot[h] >= 0) {
        if (pmids[t->slot[h]] == pmid)
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
    if (set_table_build(&table, src->pmid, src->numpmid) < 0)
        return PM_ERR_TOOBIG;
    int sts = 0;
    int found_any = 0;
    int64_t k = 0;
    for (int32_t r = 0; r < request->npmids; r++) {
        uint32_t pmid = request->pmid[r];
        int32_t s = set_table_find(&table, src->pmid, pmid);
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

/* ---- straight from the record: pmFetch's result in one call ------------------------- */

typedef struct {
    set_table table;
    const uint32_t *pmid;
} request_pmids;

static int request_has(const void *ctx, uint32_t pmid)
{
    const request_pmids *r = ctx;
    return set_table_find(&r->table, r->pmid, pmid) >= 0;
}

/* The selected values' payloads copied into `data`, their offsets made relative to it. */
static int compact_blocks(const uint8_t *rec, size_t len, pcp_result *out, uint8_t *data,
                          int64_t data_room, int64_t *nbytes)
{
    int64_t used = 0;
    for (int32_t k = 0; k < out->nvalues; k++) {
        uint32_t off = out->boff[k], n = out->blen[k];
        if (out->vtype[k] < 0 || n == 0) {
            out->boff[k] = 0;
            continue;
        }
        if (off > len || n > len - off || n > data_room - used)
            return PM_ERR_LOGREC;
        memcpy(data + used, rec + off, n);
        out->boff[k] = (uint32_t)used;
        used += n;
    }
    *nbytes = used;
    return 0;
}

/* The payload bytes of the sets a request selects from `kept` (each time it names one),
 * before the profile: room enough for the blocks of the result. -1: no memory. */
static int64_t payload_bound(const pcp_result *kept, const pcp_select_request *request)
{
    set_table table;
    if (set_table_build(&table, kept->pmid, kept->numpmid) < 0)
        return -1;
    int64_t bytes = 0;
    for (int32_t r = 0; r < request->npmids; r++) {
        int32_t s = set_table_find(&table, kept->pmid, request->pmid[r]);
        if (s < 0)
            continue;
        for (int32_t j = 0; j < kept->numval[s]; j++) {
            int32_t k = kept->first[s] + j;
            if (k >= 0 && k < kept->nvalues && kept->vtype[k] >= 0)
                bytes += kept->blen[k];
        }
    }
    free(table.slot);
    return bytes;
}

int pcp_archive_record_select(const uint8_t *rec, size_t len, int version,
                              const pcp_select_request *request, const pcp_profile *profile,
                              pcp_result *out, uint8_t *data, int64_t data_room,
                              int32_t *nvalues, int64_t *nbytes)
{
    if (request->npmids < 0 || data_room < 0)
        return PM_ERR_TOOBIG;
    request_pmids wanted;
    wanted.pmid = request->pmid;
    if (set_table_build(&wanted.table, request->pmid, request->npmids) < 0)
        return PM_ERR_TOOBIG;
    /* the requested sets alone, decoded into columns of their size (the others are
     * skipped by their length) */
    int32_t nsets = 0, nkept = 0;
    int sts = pcp_archive_record_keep(rec, len, version, request_has, &wanted, &nsets, &nkept,
                                      NULL);
    void *mem = NULL;
    pcp_result kept;
    if (sts == 0) {
        mem = malloc(pcp_result_mem_size(nsets, nkept) + 8);
        if (mem == NULL)
            sts = PM_ERR_TOOBIG;
    }
    if (sts == 0) {
        pcp_result_bind(&kept, mem, nsets, nkept);
        kept.numpmid = nsets;
        kept.nvalues = nkept;
        sts = pcp_archive_record_keep(rec, len, version, request_has, &wanted, &nsets, &nkept,
                                      &kept);
    }
    free(wanted.table.slot);
    if (sts < 0) {
        free(mem);
        return sts;
    }
    /* then pmFetch's selection: sized, and filled when `out` and `data` have the room */
    int need = pcp_result_select(&kept, request, profile, NULL);
    int64_t bytes = need < 0 ? 0 : payload_bound(&kept, request);
    *nvalues = need;
    *nbytes = bytes;
    if (need < 0 || bytes < 0) {
        free(mem);
        return need < 0 ? need : PM_ERR_TOOBIG;
    }
    if (out == NULL || need != out->nvalues || out->numpmid < request->npmids ||
        bytes > data_room) {
        free(mem);
        return PCP_SELECT_NEED_ROOM;
    }
    int found = pcp_result_select(&kept, request, profile, out);
    if (found >= 0)
        sts = compact_blocks(rec, len, out, data, data_room, nbytes);
    free(mem);
    return sts < 0 ? sts : found;
}
