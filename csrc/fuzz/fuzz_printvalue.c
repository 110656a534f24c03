/* libFuzzer harness for pmdumplog's value lines (printvalue.c).
 *
 * Each input is a plan and a RESULT PDU:
 *   byte 0      bit 0: the PDU is a HIGHRES_RESULT; bits 1-3: how many sets to write
 *   bytes 1..   per set: its index (one byte, may be past the result's sets), its type
 *               (one byte, -1 .. 10), head offset and length (one byte each, over a
 *               32-byte head pool: may run past it), names_first and names_count (one
 *               byte each, signed: may be out of the table)
 *   then        one byte: the output room for the small call (0..255)
 *   the rest    the PDU, decoded by pcp_result_pdu_decode into exact-size arrays.
 * The names table (8 rows, one with a length past its pool) and the error table are
 * fixed. Both entry points must return a status of their contract, never write past
 * the room, and agree between a small room and a large one: the large one's text, or
 * PCP_PRINTVALUE_ROOM when it does not fit the small one. */
#include "fuzz_common.h"
#include "printvalue.h"

#define MAX_SETS 8

static const uint8_t HEADS[32] = "    1.2.3 (a.b):    4.5.6 (c):  ";
static const uint8_t POOL[16] = "cpu0cpu1diskxyz!";
static const uint8_t ERRPOOL[8] = "Bad x no";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    uint8_t ctrl = fz_u8(&r);
    int highres = ctrl & 1;
    int32_t nsets = (ctrl >> 1) & 7;
    pcp_printvalue_set *sets = fz_alloc(MAX_SETS, sizeof *sets);
    for (int32_t i = 0; i < nsets; i++) {
        sets[i].set = fz_u8(&r) % 16;
        sets[i].type = (int32_t)(fz_u8(&r) % 12) - 1;
        sets[i].head_off = fz_u8(&r) % 40;
        sets[i].head_len = fz_u8(&r) % 40;
        sets[i].names_first = (int8_t)fz_u8(&r);
        sets[i].names_count = (int8_t)fz_u8(&r);
    }
    size_t small = fz_u8(&r);
    const uint8_t *pdu = r.p;
    size_t len = r.left;

    pcp_printvalue_text names[8] = {
        {0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {7, 12, 3}, {9, 12, 4}, {11, 15, 1},
        {12, 16, 0}, {13, 10, 9},           /* the last runs past the pool */
    };
    pcp_printvalue_text errors[2] = {{-12357, 0, 5}, {-1, 6, 2}};

    int32_t numpmid = 0, nvalues = 0;
    uint8_t *copy = fz_dup(pdu, len);       /* its own block: ASan sees reads past it */
    if (pcp_result_pdu_scan(copy, len, highres, &numpmid, &nvalues) == 0) {
        pcp_result res;
        fz_result_alloc(&res, numpmid, nvalues);
        CHECK(pcp_result_pdu_decode(copy, len, highres, &res) == 0);

        size_t big = 1 << 16;
        uint8_t *out_big = fz_alloc(big, 1);
        uint8_t *out_small = fz_alloc(small, 1);
        int64_t a = pcp_printvalue_dump_sets(out_big, big, sets, nsets, &res, copy, len, HEADS,
                                             sizeof HEADS, names, 8, POOL, sizeof POOL, errors,
                                             2, ERRPOOL, sizeof ERRPOOL);
        int64_t b = pcp_printvalue_dump_sets(out_small, small, sets, nsets, &res, copy, len,
                                             HEADS, sizeof HEADS, names, 8, POOL, sizeof POOL,
                                             errors, 2, ERRPOOL, sizeof ERRPOOL);
        CHECK(a >= 0 || a == PCP_PRINTVALUE_OTHER || a == PCP_PRINTVALUE_ROOM ||
              a == PM_ERR_TOOSMALL);
        CHECK(a <= (int64_t)big);
        if (a >= 0 && (size_t)a <= small) {
            CHECK(b == a);
            CHECK(a == 0 || memcmp(out_big, out_small, (size_t)a) == 0);
        } else if (a >= 0) {
            CHECK(b == PCP_PRINTVALUE_ROOM);
        } else if (a != PCP_PRINTVALUE_ROOM) {
            /* a failure found before the room ran out is found with less room too,
             * unless the small room ran out first */
            CHECK(b == a || b == PCP_PRINTVALUE_ROOM);
        }
        /* NULL room: nothing fits but an empty text */
        int64_t c = pcp_printvalue_dump_sets(NULL, 0, sets, nsets, &res, copy, len, HEADS,
                                             sizeof HEADS, names, 8, POOL, sizeof POOL, errors, 2,
                                             ERRPOOL, sizeof ERRPOOL);
        CHECK(c == 0 ? a == 0 : c < 0);

        int64_t n = pcp_printvalue_record_size(sets, nsets, &res, 24);
        CHECK(n == PM_ERR_TOOSMALL || n >= 24 + 8 * (int64_t)nsets);
        free(out_big);
        free(out_small);
        fz_result_free(&res);
    }
    free(copy);
    free(sets);
    return 0;
}
