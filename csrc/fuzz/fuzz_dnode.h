/* Reading a derived_node.h node from the fuzz input, for the harnesses of both of its
 * evaluators (fuzz_derived_program.c, fuzz_derived_chunk.c): arbitrary ops (past the
 * last one too), value types, links (cycles, missing and out-of-range indexes
 * included), scales, constants and filters; the evaluation state is left as it is. */
#ifndef PCP_FUZZ_DNODE_H
#define PCP_FUZZ_DNODE_H

#include "fuzz_common.h"
#include "derived_node.h"

static inline void fz_dnode(fz_reader *rd, pcp_dnode *np, int32_t maxnodes)
{
    np->op = 1 + fz_u8(rd) % 36;
    np->type = (int32_t)(fz_u8(rd) % 8) - 1;
    np->left = (int32_t)(int8_t)fz_u8(rd) % (maxnodes + 2);
    np->right = (int32_t)(int8_t)fz_u8(rd) % (maxnodes + 2);
    np->parent = (int32_t)(int8_t)fz_u8(rd) % (maxnodes + 2);
    np->indom_null = fz_u8(rd) & 1;
    np->mul = (int64_t)(int8_t)fz_u8(rd);
    np->div = (int64_t)(int8_t)fz_u8(rd);
    np->pmid = fz_u8(rd) % 4;
    np->save_last = fz_u8(rd) & 1;
    np->otype = (int32_t)(fz_u8(rd) % 8) - 1;
    np->relational = fz_u8(rd) & 1;
    np->scale_mult = (int64_t)(int8_t)fz_u8(rd);
    np->scale_div = (int64_t)(int8_t)fz_u8(rd);
    np->error = (fz_u8(rd) & 7) == 7 ? PM_ERR_CONV : 0;
    np->time_scale = (double)fz_u8(rd) / 7.0;
    np->constant.ull = (uint64_t)fz_u32(rd) << 32 | fz_u32(rd);
    np->filter = fz_u8(rd) % 4;
}

#endif
