"""Reporting time zones against the official binding: pmNewZone (libpcp's check of unsafe
values, its "+0" for three-letter zones), pmUseZone, pmWhichZone, pmNewContextZone on
an archive and on the live pmcd, and pmLocaltime / pmCtime at fixed instants in
several zones."""
from __future__ import annotations

import pytest

from support.cliutil import DEMO_ARCHIVE, kept_tz
from support.difftest import Pair

INSTANTS = [0, 86399, 951782400, 1704067199, 1704067200, 1711846800, 1730000000, 2147483647,
            4102444800]

BODY = r'''
R = {}
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, %(archive)r)
R["which_before"] = catch(P.pmWhichZone)
handles = {}
for tz in ["UTC", "EST5EDT", ":Australia/Melbourne", "GMT", "Europe/Paris", "IST-5:30",
           "/etc/localtime", "a..b", "bad zone", "", "NZST-12NZDT"]:
    handles[tz] = catch(P.pmNewZone, tz)
    R["which " + tz] = catch(P.pmWhichZone)
R["new"] = handles
R["use_bad"] = catch(P.pmUseZone, 99)
R["use_neg"] = catch(P.pmUseZone, -1)
def tmfields(t):
    return [t.tm_sec, t.tm_min, t.tm_hour, t.tm_mday, t.tm_mon, t.tm_year, t.tm_wday,
            t.tm_yday, t.tm_isdst, t.tm_gmtoff, t.tm_zone]
times = {}
for tz, h in handles.items():
    if not isinstance(h, int):
        continue
    R["use " + tz] = catch(P.pmUseZone, h)
    times[tz] = [[tmfields(ctx.pmLocaltime(s)), ctx.pmCtime(s)] for s in %(instants)r]
R["times"] = times
R["context_zone_archive"] = catch(ctx.pmNewContextZone)
R["which_archive"] = catch(P.pmWhichZone)
R["archive_times"] = [ctx.pmCtime(s) for s in %(instants)r]
live = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
h = catch(live.pmNewContextZone)
R["context_zone_live_is_int"] = isinstance(h, int)
R["which_live"] = catch(P.pmWhichZone)
RESULT = R
'''


@pytest.fixture(scope="module")
def pair(pmcd, reference_binding):
    return Pair(BODY % {"archive": DEMO_ARCHIVE, "instants": INSTANTS}, parallel=False)


@pytest.mark.parametrize("key", ["which_before", "new", "use_bad", "use_neg", "times",
                                 "context_zone_archive", "which_archive", "archive_times",
                                 "context_zone_live_is_int", "which_live"])
def test_zones_as_the_official_binding(pair, key):
    pair.check(key)


def test_conversion_after_a_tzset_by_someone_else():
    """A conversion skips the two tzset() calls when TZ already is the current zone and
    this module last applied it; a tzset() made since by other code (the archive
    writer's zone, the CLI's -z, a test restoring TZ) leaves libc in another zone with
    the same TZ text back in place, and must not be taken for that."""
    import os
    import time

    from pcp._libpcp import zones
    start = 1704067200                      # 2024-01-01 00:00 UTC: 19:00 in EST5EDT
    with kept_tz(), zones.using("EST5EDT"):
        os.environ["TZ"] = "EST5EDT"
        time.tzset()
        assert zones.broken_down(start).tm_hour == 19
        assert zones.broken_down(start + 3600).tm_hour == 20    # the shortcut
        os.environ["TZ"] = "UTC"        # someone else's tzset() ...
        time.tzset()
        os.environ["TZ"] = "EST5EDT"    # ... and TZ's text put back without one
        assert zones.broken_down(start + 7200).tm_hour == 21
