/* libpcp's time differences in long double, computed as libpcp computes them: on x86-64
 * (x87 long double, a 64-bit significand) pcp/_core/longdouble.py emulates the same
 * arithmetic exactly in integers, at about ten times the cost of this one C line, which
 * an interpolated fetch pays for its request time. */
#ifndef PCP_LONGDOUBLE_H
#define PCP_LONGDOUBLE_H

#include <stdint.h>

/* The significand bits of this build's long double (LDBL_MANT_DIG): the caller uses
 * pcp_ld_timestamp_sub only where that is the 64 its emulation assumes. */
int pcp_ld_mant_dig(void);

/* libpcp 6.0.3's __pmTimestampSub: (double)((long double)(a_sec - b_sec) +
 * (long double)(a_nsec - b_nsec) / (long double)1000000000), the differences made
 * without overflow. */
double pcp_ld_timestamp_sub(int64_t a_sec, int64_t a_nsec, int64_t b_sec, int64_t b_nsec);

#endif
