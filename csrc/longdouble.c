/* libpcp's long double time arithmetic (see longdouble.h). */
#include <float.h>

#include "longdouble.h"

int pcp_ld_mant_dig(void)
{
    return LDBL_MANT_DIG;
}

double pcp_ld_timestamp_sub(int64_t a_sec, int64_t a_nsec, int64_t b_sec, int64_t b_nsec)
{
    /* the differences in 128 bits: exact for any int64 operands (libpcp's int64 ones
     * would overflow only for times no archive holds), and exact in a 64-bit
     * significand, so the quotient and the sum are the only roundings */
    __int128 sec = (__int128)a_sec - b_sec;
    __int128 nsec = (__int128)a_nsec - b_nsec;

    return (double)((long double)sec + (long double)nsec / (long double)1000000000);
}
