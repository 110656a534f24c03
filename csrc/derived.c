/* matchinst() regular expressions for derived metrics: see derived.h. */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "derived.h"

void *
pcp_derived_regex_new(const char *pattern, char *errbuf, size_t errlen)
{
    regex_t *re = malloc(sizeof(regex_t));
    int sts;

    if (errlen > 0)
        errbuf[0] = '\0';
    if (re == NULL) {
        if (errlen > 0) {
            strncpy(errbuf, "out of memory", errlen - 1);
            errbuf[errlen - 1] = '\0';
        }
        return NULL;
    }
    sts = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
    if (sts != 0) {
        /* libpcp reports regerror's text through a 128-byte buffer */
        if (errlen > 0)
            regerror(sts, re, errbuf, errlen);
        free(re);
        return NULL;
    }
    return re;
}

int
pcp_derived_regex_match(const void *regex, const char *text)
{
    return regexec((const regex_t *)regex, text, 0, NULL, 0) == 0;
}

void
pcp_derived_regex_free(void *regex)
{
    if (regex != NULL) {
        regfree((regex_t *)regex);
        free(regex);
    }
}
