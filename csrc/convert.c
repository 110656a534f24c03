/* The one conversion core (convert.h): libpcp 6.0.3's value conversions. */
#include "convert.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---- float to integer as x86-64 converts (cvttsd2si and gcc's unsigned sequences) ----
 * An out-of-range or NaN input gives the "integer indefinite" (the most negative value)
 * of the width the instruction converts to; libpcp's own range checks come first, so
 * these matter only for the inputs those checks let through (NaN, mostly). */

static int32_t to_i32(double x)
{
    if (!(x > -2147483649.0 && x < 2147483648.0))
        return INT32_MIN;
    return (int32_t)x;
}

static int64_t to_i64(double x)
{
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)x;
}

/* (uint32_t)x: gcc converts through a 64-bit cvttsd2si and keeps the low half. */
static uint32_t to_u32(double x)
{
    return (uint32_t)(uint64_t)to_i64(x);
}

/* (uint64_t)x: below 2**63 (or NaN, which compares false) one signed conversion; else
 * the conversion of x - 2**63 with the top bit flipped back. */
static uint64_t to_u64(double x)
{
    if (!(x >= 9223372036854775808.0))
        return (uint64_t)to_i64(x);
    return (uint64_t)to_i64(x - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
}

static uint32_t load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t load_be64(const uint8_t *p)
{
    return ((uint64_t)load_be32(p) << 32) | load_be32(p + 4);
}

/* A value block's number as libpcp reads it. libpcp swaps a block out of network order
 * only when its vtype says it holds a 64-bit integer, a double or a float, and its
 * pmExtractValue takes a block of vtype 0 too (archives converted from the v1 format
 * carry no vtype): such a value is then read as the bytes lie, in host order, which on a
 * little-endian host is the number byte reversed. pmdumplog shows the same numbers. */
static uint64_t block_bits64(int32_t vtype, const uint8_t *p)
{
    if (vtype == 0) {
        uint64_t raw;
        memcpy(&raw, p, sizeof raw);
        return raw;
    }
    return load_be64(p);
}

static uint32_t block_bits32(int32_t vtype, const uint8_t *p)
{
    if (vtype == 0) {
        uint32_t raw;
        memcpy(&raw, p, sizeof raw);
        return raw;
    }
    return load_be32(p);
}

/* ---- pmExtractValue, one branch per source kind ---- */

static int from_signed(int64_t src, int is32, int32_t otype, pcp_atom *out)
{
    switch (otype) {
    case PM_TYPE_32:
        if (src > 0x7fffffff)
            return PM_ERR_TRUNC;
        out->l = (int32_t)(uint32_t)(uint64_t)src;   /* only the top is checked: wraps */
        return 0;
    case PM_TYPE_U32:
        if (!is32 && src > (int64_t)0xffffffffu)
            return PM_ERR_TRUNC;
        if (src < 0)
            return PM_ERR_SIGN;
        out->ul = (uint32_t)src;
        return 0;
    case PM_TYPE_64:
        out->ll = src;
        return 0;
    case PM_TYPE_U64:
        if (src < 0)
            return PM_ERR_SIGN;
        out->ull = (uint64_t)src;
        return 0;
    case PM_TYPE_FLOAT:
        out->f = (float)src;
        return 0;
    case PM_TYPE_DOUBLE:
        out->d = (double)src;
        return 0;
    }
    return PM_ERR_CONV;
}

static int from_unsigned(uint64_t src, int32_t otype, pcp_atom *out)
{
    switch (otype) {
    case PM_TYPE_32:
        if (src > 0x7fffffff)
            return PM_ERR_TRUNC;
        out->l = (int32_t)src;
        return 0;
    case PM_TYPE_U32:
        if (src > 0xffffffffu)
            return PM_ERR_TRUNC;
        out->ul = (uint32_t)src;
        return 0;
    case PM_TYPE_64:
        if (src > (uint64_t)INT64_MAX)
            return PM_ERR_TRUNC;
        out->ll = (int64_t)src;
        return 0;
    case PM_TYPE_U64:
        out->ull = src;
        return 0;
    case PM_TYPE_FLOAT:
        out->f = (float)src;
        return 0;
    case PM_TYPE_DOUBLE:
        out->d = (double)src;
        return 0;
    }
    return PM_ERR_CONV;
}

/* A FLOAT source: libpcp compares in float, so the 32-bit limit is (float)0x7fffffff,
 * i.e. 2**31. */
static int from_float(float src, int32_t otype, pcp_atom *out)
{
    switch (otype) {
    case PM_TYPE_32:
        if (fabsf(src) >= 2147483648.0f)
            return PM_ERR_TRUNC;
        out->l = to_i32(src);
        return 0;
    case PM_TYPE_U32:
        if (src >= 4294967296.0f)
            return PM_ERR_TRUNC;
        if (src < 0)
            return PM_ERR_SIGN;
        out->ul = to_u32(src);
        return 0;
    case PM_TYPE_64:
        if (src >= 9223372036854775808.0f)
            return PM_ERR_TRUNC;
        out->ll = to_i64(src);
        return 0;
    case PM_TYPE_U64:
        if (src >= 18446744073709551616.0f)
            return PM_ERR_TRUNC;
        if (src < 0)
            return PM_ERR_SIGN;
        out->ull = to_u64(src);
        return 0;
    case PM_TYPE_FLOAT:
        out->f = src;
        return 0;
    case PM_TYPE_DOUBLE:
        out->d = src;
        return 0;
    }
    return PM_ERR_CONV;
}

/* A DOUBLE source: here the 32-bit limit is 2**31 - 1 and the U32 one 2**32 - 1. */
static int from_double(double src, int32_t otype, pcp_atom *out)
{
    switch (otype) {
    case PM_TYPE_32:
        if (fabs(src) >= 2147483647.0)
            return PM_ERR_TRUNC;
        out->l = to_i32(src);
        return 0;
    case PM_TYPE_U32:
        if (src >= 4294967295.0)
            return PM_ERR_TRUNC;
        if (src < 0)
            return PM_ERR_SIGN;
        out->ul = to_u32(src);
        return 0;
    case PM_TYPE_64:
        if (src >= 9223372036854775808.0)
            return PM_ERR_TRUNC;
        out->ll = to_i64(src);
        return 0;
    case PM_TYPE_U64:
        if (src >= 18446744073709551616.0)
            return PM_ERR_TRUNC;
        if (src < 0)
            return PM_ERR_SIGN;
        out->ull = to_u64(src);
        return 0;
    case PM_TYPE_FLOAT:
        out->f = (float)src;
        return 0;
    case PM_TYPE_DOUBLE:
        out->d = src;
        return 0;
    }
    return PM_ERR_CONV;
}

static float float_of_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static double double_of_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

int pcp_convert_extract(int32_t valfmt, uint32_t word, int32_t vtype, const uint8_t *payload,
                        uint32_t plen, int32_t itype, int32_t otype, pcp_atom *out)
{
    out->ll = 0;
    if (valfmt == PM_VAL_INSITU) {
        switch (itype) {
        case PM_TYPE_32:
        case PM_TYPE_UNKNOWN:
            return from_signed((int32_t)word, 1, otype, out);
        case PM_TYPE_U32:
            return from_unsigned(word, otype, out);
        case PM_TYPE_FLOAT:           /* the old encoding: the float's bits in the word */
            return from_float(float_of_bits(word), otype, out);
        }
        return PM_ERR_CONV;
    }
    if (valfmt != PM_VAL_DPTR && valfmt != PM_VAL_SPTR)
        return PM_ERR_CONV;
    if (vtype != itype && vtype != 0)
        return PM_ERR_CONV;
    switch (itype) {
    case PM_TYPE_64:
        if (plen != 8)
            return PM_ERR_CONV;
        return from_signed((int64_t)block_bits64(vtype, payload), 0, otype, out);
    case PM_TYPE_U64:
        if (plen != 8)
            return PM_ERR_CONV;
        return from_unsigned(block_bits64(vtype, payload), otype, out);
    case PM_TYPE_DOUBLE:
        if (plen != 8)
            return PM_ERR_CONV;
        return from_double(double_of_bits(block_bits64(vtype, payload)), otype, out);
    case PM_TYPE_FLOAT:
        if (plen != 4)
            return PM_ERR_CONV;
        return from_float(float_of_bits(block_bits32(vtype, payload)), otype, out);
    case PM_TYPE_STRING:
    case PM_TYPE_AGGREGATE:
        return otype == itype ? 1 : PM_ERR_CONV;
    }
    /* 32-bit integers never travel in blocks; events and the rest do not convert */
    return PM_ERR_CONV;
}

int pcp_convert_extract_at(int32_t valfmt, uint32_t word, int32_t vtype,
                           const uint8_t *payload, uint32_t plen, int32_t itype,
                           int32_t otype, uintptr_t out)
{
    return pcp_convert_extract(valfmt, word, vtype, payload, plen, itype, otype,
                               (pcp_atom *)out);
}

/* ---- pmConvScale ----
 * libpcp multiplies in int64 and lets it overflow: the products are formed in uint64
 * here (defined wrapping) and read back as int64, which is what the hardware gives. */

static int64_t wrap_mul(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* C's truncating division, with INT64_MIN / -1 wrapping instead of trapping. */
static int64_t c_div(int64_t a, int64_t b)
{
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a);
    return a / b;
}

int pcp_convert_scale(int32_t type, const pcp_atom *in, int64_t mult, int64_t div,
                      pcp_atom *out)
{
    if (div == 0)
        return PM_ERR_CONV;
    if (div == -1 || mult % div == 0) {
        mult = c_div(mult, div);
        div = 1;
    }
    int64_t half = div / 2;
    switch (type) {
    case PM_TYPE_32:
        out->l = (int32_t)(uint32_t)(uint64_t)c_div(wrap_add(wrap_mul(in->l, mult), half), div);
        return 0;
    case PM_TYPE_U32:           /* uint32 promotes to int64: signed arithmetic */
        out->ul = (uint32_t)(uint64_t)c_div(wrap_add(wrap_mul(in->ul, mult), half), div);
        return 0;
    case PM_TYPE_64:
        out->ll = c_div(wrap_add(wrap_mul(in->ll, mult), half), div);
        return 0;
    case PM_TYPE_U64:           /* int64 factors convert to uint64 */
        out->ull = (in->ull * (uint64_t)mult + (uint64_t)half) / (uint64_t)div;
        return 0;
    case PM_TYPE_FLOAT:
        out->f = in->f * ((float)mult / (float)div);
        return 0;
    case PM_TYPE_DOUBLE:
        out->d = in->d * ((double)mult / (double)div);
        return 0;
    }
    return PM_ERR_CONV;
}

/* One pmUnits word's fields: the dimensions and the count scale signed 4-bit, the
 * space and time scales unsigned (libpcp's declaration). */
typedef struct {
    int dim_space, dim_time, dim_count, scale_space, scale_time, scale_count;
} units_fields;

static int nibble_signed(uint32_t word, int shift)
{
    int v = (int)((word >> shift) & 0xF);
    return v > 7 ? v - 16 : v;
}

static units_fields units_of(uint32_t word)
{
    units_fields u = {nibble_signed(word, 28), nibble_signed(word, 24), nibble_signed(word, 20),
                      (int)((word >> 16) & 0xF), (int)((word >> 12) & 0xF),
                      nibble_signed(word, 8)};
    if (u.dim_space == 0 && u.dim_time == 0 && u.dim_count == 0)
        u.dim_count = 1;                /* dimensionless: a count */
    return u;
}

/* (divide, multiply) converting from each scale (libpcp's relative to Mbyte, second) */
static const int64_t SPACE_FACTORS[7][2] = {
    {1024 * 1024, 1}, {1024, 1}, {1, 1}, {1, 1024}, {1, 1024 * 1024},
    {1, 1024LL * 1024 * 1024}, {1, 1024LL * 1024 * 1024 * 1024}};
static const int64_t TIME_FACTORS[6][2] = {
    {1000000000, 1}, {1000000, 1}, {1000, 1}, {1, 1}, {1, 60}, {1, 3600}};

static void accumulate(int dim, int64_t d, int64_t m, int64_t *div, int64_t *mult)
{
    for (int i = 0; i < dim; i++) {
        *div = wrap_mul(*div, d);
        *mult = wrap_mul(*mult, m);
    }
    for (int i = 0; i < -dim; i++) {
        *mult = wrap_mul(*mult, d);
        *div = wrap_mul(*div, m);
    }
}

static int64_t power_of_ten(int n)
{
    int64_t p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

int pcp_convert_scale_units(int32_t type, uintptr_t in, uintptr_t inunits, uintptr_t outunits,
                            int32_t extra_units, uintptr_t out)
{
    uint32_t iword, oword;
    memcpy(&iword, (const void *)inunits, sizeof iword);
    memcpy(&oword, (const void *)outunits, sizeof oword);
    if (extra_units && ((iword | oword) & 0xFF))
        return PCP_CONVERT_EXTRA_UNITS;
    units_fields i = units_of(iword), o = units_of(oword);
    if (i.dim_space != o.dim_space || i.dim_time != o.dim_time || i.dim_count != o.dim_count)
        return PM_ERR_CONV;
    int64_t div = 1, mult = 1;
    if (i.dim_space) {
        if (i.scale_space > 6 || o.scale_space > 6)
            return PM_ERR_UNIT;
        const int64_t *f = SPACE_FACTORS[i.scale_space], *g = SPACE_FACTORS[o.scale_space];
        accumulate(i.dim_space, f[0] * g[1], f[1] * g[0], &div, &mult);
    }
    if (i.dim_time) {
        if (i.scale_time > 5 || o.scale_time > 5)
            return PM_ERR_UNIT;
        const int64_t *f = TIME_FACTORS[i.scale_time], *g = TIME_FACTORS[o.scale_time];
        accumulate(i.dim_time, f[0] * g[1], f[1] * g[0], &div, &mult);
    }
    if (i.dim_count) {
        int64_t d = 1, m = 1;
        if (i.scale_count < 0)
            d *= power_of_ten(-i.scale_count);
        else
            m *= power_of_ten(i.scale_count);
        if (o.scale_count < 0)
            m *= power_of_ten(-o.scale_count);
        else
            d *= power_of_ten(o.scale_count);
        accumulate(i.dim_count, d, m, &div, &mult);
    }
    return pcp_convert_scale(type, (const pcp_atom *)in, mult, div, (pcp_atom *)out);
}

/* ---- __pmStringValue ---- */

int pcp_convert_string(const uint8_t *text, uint32_t len, int32_t otype, pcp_atom *out)
{
    /* libpcp parses a C string: the bytes up to the first NUL */
    const uint8_t *nul = memchr(text, 0, len);
    size_t n = nul ? (size_t)(nul - text) : len;
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (buf == NULL)
        return -ENOMEM;
    memcpy(buf, text, n);
    buf[n] = '\0';

    /* Hex only with a 0x prefix and nothing but hex digits after it; libpcp also works
     * out "integer" and "float" flags here but only the hex one changes anything. */
    const char *p = buf;
    while (*p && isspace((unsigned char)*p))
        p++;
    if (*p == '-')
        p++;
    int hex = 0;
    if (p[0] == '0' && p[1] && tolower((unsigned char)p[1]) == 'x') {
        hex = 1;
        for (p += 2; *p; p++)
            if (!isxdigit((unsigned char)*p))
                hex = 0;
    }
    int base = hex ? 16 : 10;
    char *end = buf;
    int range = 0;

    /* libpcp tests errno without clearing it first, so a stale ERANGE from an earlier
     * call can fail a good number there; here only this parse counts. */
    errno = 0;
    switch (otype) {
    case PM_TYPE_32: {
        long v = strtol(buf, &end, base);
        if (errno == ERANGE || v > 0x7fffffffL || v < -0x7fffffffL - 1)
            range = 1;
        else
            out->l = (int32_t)v;
        break;
    }
    case PM_TYPE_U32: {
        unsigned long v = strtoul(buf, &end, base);
        if (errno == ERANGE || v > 0xffffffffUL)
            range = 1;
        else
            out->ul = (uint32_t)v;
        break;
    }
    case PM_TYPE_64:
        out->ll = strtoll(buf, &end, base);
        range = errno == ERANGE;
        break;
    case PM_TYPE_U64:
        out->ull = strtoull(buf, &end, base);
        range = errno == ERANGE;
        break;
    case PM_TYPE_FLOAT:
        if (!hex) {             /* glibc's hex floats are not libpcp's numbers */
            double d = strtod(buf, &end);
            if (errno == ERANGE || fabs(d) < FLT_MIN || fabs(d) > FLT_MAX)
                range = 1;
            else
                out->f = (float)d;
        }
        break;
    case PM_TYPE_DOUBLE:
        if (!hex) {
            out->d = strtod(buf, &end);
            range = errno == ERANGE;
        }
        break;
    default:
        if (buf != small)
            free(buf);
        return PM_ERR_CONV;
    }
    int junk = *end != '\0';
    if (buf != small)
        free(buf);
    if (junk)
        return PM_ERR_TYPE;
    return range ? -ERANGE : 0;
}

/* ---- __pmStuffDoubleValue ---- */

int pcp_convert_from_double(double val, int32_t otype, pcp_atom *out)
{
    switch (otype) {
    case PM_TYPE_32:
        if (val > 2147483647.0 || val < -2147483648.0)
            return PM_ERR_TRUNC;
        out->l = to_i32(val);
        return 0;
    case PM_TYPE_U32:
        if (val > 4294967295.0)
            return PM_ERR_TRUNC;
        if (val < 0.0)
            return PM_ERR_SIGN;
        out->ul = to_u32(val);
        return 0;
    case PM_TYPE_64:
        /* (double)LLONG_MAX rounds up to 2**63, which therefore passes */
        if (val > 9223372036854775808.0 || val < -9223372036854775808.0)
            return PM_ERR_TRUNC;
        out->ll = to_i64(val);
        return 0;
    case PM_TYPE_U64:
        if (val > 18446744073709551616.0)
            return PM_ERR_TRUNC;
        if (val < 0.0)
            return PM_ERR_SIGN;
        out->ull = to_u64(val);
        return 0;
    case PM_TYPE_FLOAT:
        if (fabs(val) > FLT_MAX)
            return PM_ERR_TRUNC;
        out->f = (float)val;
        return 0;
    case PM_TYPE_DOUBLE:
        out->d = val;
        return 0;
    }
    return PM_ERR_CONV;
}
