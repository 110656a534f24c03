/* libFuzzer harness for derived metrics over chunks of rows (derived_chunk.c).
 *
 * The input is read as a program: up to 10 nodes (derived_node.h) of arbitrary ops,
 * value types, links (cycles, missing operands and out-of-range indexes included),
 * constants, filters, metric[name] instances and matchinst() tables; one or two operand
 * matrices of arbitrary pmids, cell types, presence and instances; output columns (a
 * dense table or a sorted list, either of them naming columns that do not exist); and
 * the rows' times. The rows are evaluated in two chunks, so the state carried between
 * calls is used too. Every array is allocated with exactly its size so ASan reports any
 * access past it; each call must return 0 or an error code, and never count more
 * values than the output holds. */
#include "fuzz_dnode.h"
#include "derived_chunk.h"

#define MAXNODES 10
#define MAXROWS 6
#define MAXCOLS 5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader rd = { data, size };
    int32_t nnodes = 1 + fz_u8(&rd) % MAXNODES, nops = 1 + fz_u8(&rd) % 2;
    int64_t nrows = fz_u8(&rd) % (MAXROWS + 1), split;
    int32_t ncand = fz_u8(&rd) % (MAXCOLS + 2), k, r;
    pcp_dnode *nodes = fz_alloc((size_t)nnodes, sizeof *nodes);
    pcp_dprogram program;
    pcp_dchunk_operand *ops = fz_alloc((size_t)nops, sizeof *ops);
    uint8_t *op_values[2], *op_present[2];
    int32_t *op_inst[2];
    int64_t *times = fz_alloc((size_t)nrows, sizeof *times);
    pcp_dchunk_columns cols;
    pcp_dchunk_program prog;
    int32_t *dense = NULL, *sorted = NULL, *sorted_col = NULL;
    uint8_t *out_values, *out_present;

    memset(nodes, 0, (size_t)nnodes * sizeof *nodes);
    for (k = 0; k < nnodes; k++) {
        pcp_dnode *np = &nodes[k];
        int32_t ntable, i;
        fz_dnode(&rd, np, MAXNODES);
        /* what chunks.py puts in the filters beforehand */
        np->exact_state = fz_u8(&rd) % 3;
        np->exact_inst = (int32_t)(fz_u8(&rd) % 8) - 1;
        np->exact_from = (int64_t)(fz_u8(&rd) % 8);
        ntable = fz_u8(&rd) % 4;
        for (i = 0; i < ntable; i++) {
            int32_t inst = (int32_t)(fz_u8(&rd) % 8) - 1;
            CHECK(pcp_derived_table_add(np, inst, fz_u8(&rd) & 1) == 0);
        }
    }
    program.nnodes = nnodes;
    program.nodes = nodes;
    for (k = 0; k < nops; k++) {
        int32_t ncols = fz_u8(&rd) % (MAXCOLS + 1), c;
        size_t cells = (size_t)nrows * (size_t)ncols;
        ops[k].pmid = fz_u8(&rd) % 4;
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
    split = nrows ? fz_u8(&rd) % (nrows + 1) : 0;
    out_values = fz_alloc((size_t)nrows * (size_t)ncand * 8, 1);
    out_present = fz_alloc((size_t)nrows * (size_t)ncand, 1);
    if (nrows * ncand)
        memset(out_present, 0, (size_t)(nrows * ncand));
    memset(&prog, 0, sizeof prog);
    prog.prog = &program;
    prog.ops = ops;
    prog.nops = nops;
    prog.columns = &cols;
    prog.out_ncols = ncand;
    prog.out_values = out_values;
    prog.out_stride = (int64_t)ncand * 8;
    prog.out_present = out_present;
    prog.out_present_stride = ncand;
    {
        /* rows [0, split) then [split, nrows): two chunks, the state carried over */
        int sts = pcp_derived_chunk_eval(&prog, 1, times, split);
        CHECK(sts <= 0);
        prog.out_values = out_values + split * prog.out_stride;
        prog.out_present = out_present + split * prog.out_present_stride;
        for (k = 0; k < nops; k++) {
            ops[k].values += split * ops[k].values_stride;
            ops[k].present += split * ops[k].present_stride;
        }
        sts = pcp_derived_chunk_eval(&prog, 1, times + split, nrows - split);
        CHECK(sts <= 0);
        CHECK(prog.nvalues >= 0 && prog.nvalues <= nrows * MAXCOLS);
    }

    pcp_derived_program_free(&program);
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
