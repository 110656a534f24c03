/* The value half of libpcp 6.0.3's pmFetchGroup: after each fetch, every item of a
 * fetchgroup is filled from the decoded result (and the previous one, for rates) into
 * flat per-group arrays, converted through the one conversion core (convert.h). Names,
 * descriptors, instance names, events and timestamps are pcp/_libpcp/fetchgroup.py's. */
#ifndef PCP_FETCHGROUP_H
#define PCP_FETCHGROUP_H

#include "convert.h"
#include "result.h"

/* One pmExtendFetchGroup_item / _indom request, as the Python side resolved it. */
typedef struct {
    uint32_t pmid;
    int32_t vset;       /* index of the pmid's value set in the group's results */
    int32_t inst;       /* one-value items: the instance wanted (not used when singular) */
    int32_t all;        /* 1: every instance (an indom item), 0: one value */
    int32_t singular;   /* the metric has no instance domain: its first value is taken */
    int32_t itype;      /* the metric's PM_TYPE_* */
    int32_t otype;      /* the PM_TYPE_* asked for */
    int32_t discrete;   /* PM_SEM_DISCRETE: outputs survive a fetch with no values */
    int32_t rate;       /* convert to a rate over the previous result */
    int32_t unit;       /* rescale: pmConvScale with mult/div, then times multiplier */
    int32_t unit_sts;   /* pmConvScale's error for these units (0: they convert) */
    int64_t mult;
    int64_t div;
    double multiplier;  /* pmParseUnitsStr's multiplier, the rate's time scale folded in */
    int32_t extra;      /* libpcp 7.2's extra units: after mult/div, a + b * (x + c) / d */
    double extra_a, extra_b, extra_c, extra_d;
    int32_t maxnum;     /* output slots of the item */
    int32_t slot;       /* the item's first slot */
} pcp_fg_item;

/* A decoded result and the bytes its value blocks live in. */
typedef struct {
    const pcp_result *r;
    const uint8_t *buf;
    size_t len;
} pcp_fg_source;

/* For a STRING output, what a slot's pcp_atom holds (pcp_fg_out.src). */
#define PCP_FG_STRING_FORMAT_TYPE (-1)    /* a number of the item's itype, to print */
#define PCP_FG_STRING_FORMAT_DOUBLE (-2)  /* a converted double, printed "%.17e" */
#define PCP_FG_STRING_PAYLOAD (-3)        /* the value's own payload (pcp_fetchgroup_convert) */
/* src >= 0: the string is the payload of value `src` of the current result */

/* Outputs, owned by the caller. Per item: `sts` (the item's status, as libpcp's
 * output_sts), `num` (values written), and for items of every instance `nfailed` (how
 * many of the `num` values failed) and `insts_gen` (a count bumped each time the item's
 * instance list changes, so a reader can tell at a glance that it did not). Per slot: `stss`, `inst`, `src` (STRING
 * outputs only) and 8 bytes of `val`; numeric outputs are packed by the output type's
 * size from the item's first slot (an item of 4-byte values uses 4 bytes per value), so
 * each item's values read as one typed array. */
typedef struct {
    int32_t *sts;
    int32_t *num;
    int32_t *nfailed;
    uint32_t *insts_gen;
    int32_t *stss;
    int32_t *inst;
    int32_t *src;
    uint8_t *val;
} pcp_fg_out;

/* Fill every item from `cur` (a result with no value sets stands for a failed fetch),
 * computing rates against `prev` (NULL when there is none yet). `wrap` is
 * PCP_COUNTER_WRAP's setting when the group was made. Returns 0, or -ENOMEM. */
int pcp_fetchgroup_fill(const pcp_fg_item *items, int32_t nitems, const pcp_fg_source *cur,
                        const pcp_fg_source *prev, int32_t wrap, pcp_fg_out *out);

/* One value converted as the item asks, with no rate (event record fields): `valfmt`,
 * `word`, `vtype`, `payload` as for pcp_convert_extract. */
int pcp_fetchgroup_convert(const pcp_fg_item *it, int32_t valfmt, uint32_t word,
                           int32_t vtype, const uint8_t *payload, uint32_t plen,
                           pcp_atom *out, int32_t *src);

#endif
