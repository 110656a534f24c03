/* pmLocaltime's TZ swap in C (see zones.h). */
/* setenv, unsetenv, tzset, localtime_r and tm_gmtoff / tm_zone are POSIX / BSD:
 * visible under -std=c99 only when asked for */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zones.h"

/* TZ back to `saved` (NULL: unset), then libc's zone to match. */
static void restore_tz(const char *saved)
{
    if (saved != NULL)
        setenv("TZ", saved, 1);
    else
        unsetenv("TZ");
    tzset();
}

int pcp_zone_localtime(const char *zone, int64_t seconds, pcp_zone_tm *out)
{
    const char *current = getenv("TZ");
    char *saved = NULL;
    struct tm tm;
    time_t clock = (time_t)seconds;
    int ok;

    if ((int64_t)clock != seconds)
        return -1;
    /* setenv may free the string getenv gave: keep a copy to put back */
    if (current != NULL && (saved = strdup(current)) == NULL)
        return -1;
    if (setenv("TZ", zone, 1) != 0) {
        free(saved);
        return -1;
    }
    tzset();
    ok = localtime_r(&clock, &tm) != NULL;
    /* the zone's name lives in libc's zone state: copied before the restore moves it */
    if (ok) {
        out->sec = tm.tm_sec;
        out->min = tm.tm_min;
        out->hour = tm.tm_hour;
        out->mday = tm.tm_mday;
        out->mon = tm.tm_mon;
        out->year = tm.tm_year;
        out->wday = tm.tm_wday;
        out->yday = tm.tm_yday;
        out->isdst = tm.tm_isdst;
        out->gmtoff = tm.tm_gmtoff;
        out->zone[0] = '\0';
        if (tm.tm_zone != NULL) {
            strncpy(out->zone, tm.tm_zone, sizeof(out->zone) - 1);
            out->zone[sizeof(out->zone) - 1] = '\0';
        }
    }
    restore_tz(saved);
    free(saved);
    return ok ? 0 : -1;
}
