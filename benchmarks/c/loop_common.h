/* What the archive loops (interp_loop.c, fetchgroup_loop.c) share: a growing list of
 * metric names (filled by pmTraversePMNS) and the process CPU clock they are timed by. */
#ifndef LOOP_COMMON_H
#define LOOP_COMMON_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

static char **names;
static int nnames, capnames;

static void
add_name(const char *name)
{
    if (nnames == capnames) {
        capnames = capnames ? 2 * capnames : 256;
        names = realloc(names, capnames * sizeof(char *));
    }
    names[nnames++] = strdup(name);
}

static double
cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
