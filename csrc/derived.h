/* Derived metrics (pcp/_libpcp/derived/): the POSIX extended regular expressions of
 * matchinst(), compiled and matched by the C library exactly as libpcp does it
 * (regcomp with REG_EXTENDED|REG_NOSUB, regexec on the instance name). */
#ifndef PCP_DERIVED_H
#define PCP_DERIVED_H

#include <stddef.h>

/* Compile `pattern` (NUL-terminated). Returns an opaque handle, or NULL with
 * regerror's message in `errbuf` (at most `errlen` bytes, NUL-terminated). */
void *pcp_derived_regex_new(const char *pattern, char *errbuf, size_t errlen);

/* 1 when `text` (NUL-terminated) matches, else 0. */
int pcp_derived_regex_match(const void *regex, const char *text);

void pcp_derived_regex_free(void *regex);

#endif
