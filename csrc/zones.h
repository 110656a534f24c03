/* pmLocaltime's conversion as libpcp 6.0.3 makes it: TZ set to the reporting zone,
 * tzset(), localtime_r(), TZ put back and tzset() again, all in one call. Python's
 * time.tzset() also recomputes the time module's timezone attributes at every call
 * (several localtime calls and new strings), which made the swap cost several times
 * libpcp's on every new second of a report. */
#ifndef PCP_ZONES_H
#define PCP_ZONES_H

#include <stdint.h>

/* A struct tm's fields in C's conventions (tm_mon from 0, tm_year from 1900, tm_wday
 * from Sunday), tm_zone copied (truncated to the buffer, always terminated). */
typedef struct {
    int32_t sec;
    int32_t min;
    int32_t hour;
    int32_t mday;
    int32_t mon;
    int32_t year;
    int32_t wday;
    int32_t yday;
    int32_t isdst;
    int64_t gmtoff;
    char zone[32];
} pcp_zone_tm;

/* The broken-down time of `seconds` in `zone` (a TZ value); TZ and libc's zone are
 * as before on return, the caller's TZ (or its absence) restored. 0, or -1 when
 * localtime_r cannot represent the instant or the environment cannot be changed (out
 * is then untouched). */
int pcp_zone_localtime(const char *zone, int64_t seconds, pcp_zone_tm *out);

#endif
