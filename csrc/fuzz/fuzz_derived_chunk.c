/* libFuzzer harness for derived metrics over chunks of rows (derived_chunk.c).
 *
 * The input is read as a program: a tree of up to 10 nodes with arbitrary node types,
 * value types, links (cycles, missing operands and out-of-range indexes included),
 * constants, filters and vector capacities; one or two operand matrices of arbitrary
 * cell types, presence and instances; output columns (a dense table or a sorted list,
 * either of them naming columns that do not exist); and the rows' times. Every array
 * is allocated with exactly its size so ASan reports any access past it; the call must
 * return 0 or an error code, and never count more values than the output holds. */
#include "fuzz_common.h"
#include "derived.h"

#define MAXNODES 10
#define MAXROWS 6
#define MAXCOLS 5

static void
new_vec(pcp_dvec *v, int32_t cap)
{
    v->cap = cap;
    v->numval = 0;
    v->inst = fz_alloc((size_t)cap, sizeof *v->inst);
    v->val = fz_alloc((size_t)cap, sizeof *v->val);
    if (cap) {
        memset(v->inst, 0, (size_t)cap * sizeof *v->inst);
        memset(v->val, 0, (size_t)cap * sizeof *v->val);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader rd = { data, size };
    int32_t nnodes = 1 + fz_u8(&rd) % MAXNODES, nops = 1 + fz_u8(&rd) % 2;
    int64_t nrows = fz_u8(&rd) % (MAXROWS + 1);
    int32_t ncand = fz_u8(&rd) % (MAXCOLS + 2), k, r;
    pcp_dchunk_node *nodes = fz_alloc((size_t)nnodes, sizeof *nodes);
    pcp_dchunk_operand *ops = fz_alloc((size_t)nops, sizeof *ops);
    int32_t *table_inst[MAXNODES], *table_match[MAXNODES], *table_used[MAXNODES];
    uint8_t *op_values[2], *op_present[2];
    int32_t *op_inst[2];
    int64_t *times = fz_alloc((size_t)nrows, sizeof *times);
    pcp_dchunk_columns cols;
    pcp_dchunk_program prog;
    int32_t *dense = NULL, *sorted = NULL, *sorted_col = NULL;
    uint8_t *out_values, *out_present;

    memset(nodes, 0, (size_t)nnodes * sizeof *nodes);
    for (k = 0; k < nnodes; k++) {
        pcp_dchunk_node *np = &nodes[k];
        int32_t cap = fz_u8(&rd) % 8, ntable = fz_u8(&rd) % 4, i;
        np->type = 1 + fz_u8(&rd) % 34;
        np->vtype = fz_u8(&rd) % 7;
        np->left = (int32_t)(int8_t)fz_u8(&rd) % (MAXNODES + 2);
        np->right = (int32_t)(int8_t)fz_u8(&rd) % (MAXNODES + 2);
        np->null_indom = fz_u8(&rd) & 1;
        np->mul = (int64_t)(int8_t)fz_u8(&rd);
        np->div = (int64_t)(int8_t)fz_u8(&rd);
        np->operand = (int32_t)(int8_t)fz_u8(&rd) % 4;
        np->save_last = fz_u8(&rd) & 1;
        np->otype = fz_u8(&rd) % 7;
        np->relational = fz_u8(&rd) & 1;
        np->inst_from_no = fz_u8(&rd) & 1;
        np->scale_mult = (int64_t)(int8_t)fz_u8(&rd);
        np->scale_div = (int64_t)(int8_t)fz_u8(&rd);
        np->time_scale = (double)fz_u8(&rd) / 7.0;
        np->constant.ull = (uint64_t)fz_u32(&rd) << 32 | fz_u32(&rd);
        np->exact_inst = (int32_t)(fz_u8(&rd) % 8) - 1;
        np->exact_from = (int64_t)(fz_u8(&rd) % 8);
        np->regex = fz_u8(&rd) & 1;
        table_inst[k] = fz_alloc((size_t)ntable, sizeof(int32_t));
        table_match[k] = fz_alloc((size_t)ntable, sizeof(int32_t));
        table_used[k] = fz_alloc((size_t)ntable, sizeof(int32_t));
        for (i = 0; i < ntable; i++) {
            table_inst[k][i] = i - 1 + (int32_t)(fz_u8(&rd) % 2);   /* sorted */
            table_match[k][i] = fz_u8(&rd) & 1;
            table_used[k][i] = 0;
        }
        np->table_inst = table_inst[k];
        np->table_match = table_match[k];
        np->table_used = table_used[k];
        np->ntable = ntable;
        new_vec(&np->cur, cap);
        new_vec(&np->last, cap + (int32_t)(fz_u8(&rd) % 2));
    }
    for (k = 0; k < nops; k++) {
        int32_t ncols = fz_u8(&rd) % (MAXCOLS + 1), c;
        size_t cells = (size_t)nrows * (size_t)ncols;
        ops[k].type = fz_u8(&rd) % 7;
        ops[k].ncols = ncols;
        op_inst[k] = fz_alloc((size_t)ncols, sizeof(int32_t));
        for (c = 0; c < ncols; c++)
            op_inst[k][c] = (int32_t)(fz_u8(&rd) % 8) - 1;
        op_values[k] = fz_bytes(&rd, cells * 8);
        op_present[k] = fz_alloc(cells, 1);
        for (c = 0; c < (int32_t)cells; c++)
            op_present[k][c] = fz_u8(&rd) & 1;
        ops[k].col_inst = op_inst[k];
        ops[k].values = op_values[k];
        ops[k].values_stride = (int64_t)ncols * 8;
        ops[k].present = op_present[k];
        ops[k].present_stride = ncols;
    }
    for (r = 0; r < nrows; r++)
        times[r] = 1700000000LL * 1000000000LL + (int64_t)fz_u32(&rd) * 1000;
    memset(&cols, 0, sizeof cols);
    if (fz_u8(&rd) & 1) {
        cols.ndense = 1 + fz_u8(&rd) % 9;
        cols.base = (int32_t)(fz_u8(&rd) % 4) - 2;
        dense = fz_alloc((size_t)cols.ndense, sizeof *dense);
        for (k = 0; k < cols.ndense; k++)
            dense[k] = (int32_t)(fz_u8(&rd) % (MAXCOLS + 3)) - 1;
        cols.dense = dense;
    } else {
        cols.n = fz_u8(&rd) % 6;
        sorted = fz_alloc((size_t)cols.n, sizeof *sorted);
        sorted_col = fz_alloc((size_t)cols.n, sizeof *sorted_col);
        for (k = 0; k < cols.n; k++) {
            sorted[k] = k - 1;
            sorted_col[k] = (int32_t)(fz_u8(&rd) % (MAXCOLS + 3)) - 1;
        }
        cols.inst = sorted;
        cols.col = sorted_col;
    }
    out_values = fz_alloc((size_t)nrows * (size_t)ncand * 8, 1);
    out_present = fz_alloc((size_t)nrows * (size_t)ncand, 1);
    if (nrows * ncand)
        memset(out_present, 0, (size_t)(nrows * ncand));
    memset(&prog, 0, sizeof prog);
    prog.nodes = nodes;
    prog.nnodes = nnodes;
    prog.ops = ops;
    prog.nops = nops;
    prog.columns = &cols;
    prog.out_ncols = ncand;
    prog.out_values = out_values;
    prog.out_stride = (int64_t)ncand * 8;
    prog.out_present = out_present;
    prog.out_present_stride = ncand;
    {
        int sts = pcp_derived_chunk_eval(&prog, 1, times, nrows);
        CHECK(sts <= 0);
        CHECK(prog.nvalues >= 0 && prog.nvalues <= nrows * 8);
    }

    for (k = 0; k < nnodes; k++) {
        free(nodes[k].cur.inst);
        free(nodes[k].cur.val);
        free(nodes[k].last.inst);
        free(nodes[k].last.val);
        free(table_inst[k]);
        free(table_match[k]);
        free(table_used[k]);
    }
    for (k = 0; k < nops; k++) {
        free(op_inst[k]);
        free(op_values[k]);
        free(op_present[k]);
    }
    free(nodes);
    free(ops);
    free(times);
    free(dense);
    free(sorted);
    free(sorted_col);
    free(out_values);
    free(out_present);
    return 0;
}
