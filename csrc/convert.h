/* The one conversion core: libpcp 6.0.3's pmExtractValue, pmConvScale, __pmStringValue
 * and __pmStuffDoubleValue for one value at a time. pcp.pmapi's pmExtractValue and
 * pmConvScale, and the fetchgroup (fetchgroup.h), all convert through these.
 *
 * Where libpcp's C leaves a conversion undefined (a NaN or an out-of-range double made an
 * integer) the result is what libpcp's x86-64 build gives, written out explicitly here so
 * that it is defined behaviour on every platform. */
#ifndef PCP_CONVERT_H
#define PCP_CONVERT_H

#include "pcp_core.h"

/* pmAtomValue's numeric members (strings and blocks are not held in an atom here). */
typedef union {
    int32_t l;
    uint32_t ul;
    int64_t ll;
    uint64_t ull;
    float f;
    double d;
} pcp_atom;

/* pmExtractValue of a number. `valfmt` is PM_VAL_INSITU (then `word` is the value word)
 * or PM_VAL_DPTR/SPTR (then `vtype` is the block's type byte and `payload`/`plen` its
 * payload in network byte order). Only numeric `itype`/`otype` are converted here:
 * STRING and AGGREGATE values give PM_ERR_CONV unless both types are the same, in which
 * case 1 is returned and nothing is written (the caller copies the bytes). Returns 0 or
 * PM_ERR_CONV / PM_ERR_TRUNC / PM_ERR_SIGN. */
int pcp_convert_extract(int32_t valfmt, uint32_t word, int32_t vtype, const uint8_t *payload,
                        uint32_t plen, int32_t itype, int32_t otype, pcp_atom *out);

/* The same, writing to the atom at address `out`: the drop-in pmExtractValue passes a
 * ctypes pmAtomValue's address as a plain integer, which costs less per value than
 * making a cffi pointer for it. */
int pcp_convert_extract_at(int32_t valfmt, uint32_t word, int32_t vtype,
                           const uint8_t *payload, uint32_t plen, int32_t itype,
                           int32_t otype, uintptr_t out);

/* pmConvScale's arithmetic once its factors are known (pcp._core.units computes `mult`
 * and `div` from the two pmUnits, wrapping as libpcp's int64 products do). Returns 0, or
 * PM_ERR_CONV for a non-numeric type or a zero divisor (where libpcp dies of SIGFPE). */
int pcp_convert_scale(int32_t type, const pcp_atom *in, int64_t mult, int64_t div,
                      pcp_atom *out);

/* The whole of pmConvScale below PCP 7.2's extra units: the factors from the two pmUnits
 * words at `inunits` and `outunits` (ctypes pmUnits, the protocol's 32-bit word in
 * host order), as pcp._libpcp.values.scale_factors computes them, then
 * pcp_convert_scale from the atom at `in` into the atom at `out` (addresses of ctypes
 * objects, as pcp_convert_extract_at takes them). With `extra_units` (API level 7.2)
 * a word whose low byte names an extra unit is left to Python: returns
 * PCP_CONVERT_EXTRA_UNITS, nothing written. Else 0, PM_ERR_CONV (other dimensions, a
 * non-numeric type) or PM_ERR_UNIT (a space or time scale libpcp has no factor for). */
#define PCP_CONVERT_EXTRA_UNITS 1
int pcp_convert_scale_units(int32_t type, uintptr_t in, uintptr_t inunits, uintptr_t outunits,
                            int32_t extra_units, uintptr_t out);

/* __pmStringValue for a numeric `otype`: the first `len` bytes of `text`, up to a NUL,
 * parsed as libpcp parses them (decimal or 0x hex integers, strtod for FLOAT/DOUBLE).
 * Returns 0, PM_ERR_TYPE for trailing junk, -ERANGE when out of range. */
int pcp_convert_string(const uint8_t *text, uint32_t len, int32_t otype, pcp_atom *out);

/* __pmStuffDoubleValue for a numeric `otype`: 0, PM_ERR_TRUNC or PM_ERR_SIGN. */
int pcp_convert_from_double(double value, int32_t otype, pcp_atom *out);

#endif
