"""The official module's helpers for tools written in Python (get_current_tz,
posix_tz_to_utc_offset, set_timezone, datetime_to_secs, get_mode_step, prepare_execute),
compared with the official binding under several TZ settings."""
from __future__ import annotations

import pytest

from support.cliutil import DEMO_ARCHIVE
from support.difftest import require_reference, run_program

PROGRAM = r'''
import datetime, json, os, time
from pcp import pmapi
import cpmapi as c
P = pmapi.pmContext
R = {}
def cat(name, f):
    try:
        R[name] = ["ok", f()]
    except Exception as e:
        R[name] = ["raised", type(e).__name__, str(e)]
cat("tz", lambda: [P.get_current_tz(), P.get_current_tz(set_dst=0), P.get_current_tz(set_dst=1)])
cat("offsets", lambda: [P.posix_tz_to_utc_offset(z) for z in
                        ["", "UTC", "EST+5", "AEST-10", "IST-5:30", "XYZ+3:15", "UTC+0"]])
when = [datetime.datetime(2024, 1, 5, 1, 2, 3, 456789), datetime.datetime(1999, 12, 31, 23, 59, 59),
        datetime.datetime(2024, 7, 1, 12, 0, 0)]
cat("secs", lambda: [[P.datetime_to_secs(w, p) for p in (c.PM_TIME_SEC, c.PM_TIME_MSEC,
                      c.PM_TIME_USEC, c.PM_TIME_NSEC)] for w in when])
cat("debug", lambda: [P.pmDebug(1), P.pmDebug(0xffffffff)])
cat("debug_by_name", lambda: P.pmDebug("derive"))
cat("secs_bad", lambda: P.datetime_to_secs(when[0], c.PM_TIME_MIN))
iv = pmapi.timeval(2, 500000)
def step(args):
    mode, s = P.get_mode_step(*args)
    return [mode, None if s is None else [s.tv_sec, s.tv_nsec]]
cat("mode_step", lambda: [step(a) for a in [(None, True, iv), (True, True, iv), (None, False, iv),
                                            (False, 1, iv)]])
class Options:
    def __init__(self, zone, hostzone):
        self.zone, self.hostzone = zone, hostzone
    def pmGetOptionTimezone(self):
        return self.zone
    def pmGetOptionHostZone(self):
        return self.hostzone
    def pmGetOptionOrigin(self):
        return pmapi.timeval(1704412800, 0)
    def pmGetOptionHighResOrigin(self):
        return pmapi.timespec(0, 0)
def zone_after(options):
    P.set_timezone(options)
    return [os.environ.get("TZ"), P.pmWhichZone(), time.tzname[0]]
cat("set_zone", lambda: zone_after(Options("EST5EDT", False)))
cat("set_local", lambda: zone_after(Options(None, False)))
ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, %(archive)r)
ctx.pmNewContextZone()
cat("set_host", lambda: zone_after(Options(None, True)))
def first_after_prepare():
    ctx.prepare_execute(Options("UTC", False), None, False, iv)
    r = ctx.pmFetch(ctx.pmLookupName(["sample.seconds"])).contents
    return [r.timestamp.tv_sec, r.timestamp.tv_usec]
cat("prepare_execute", first_after_prepare)
print(json.dumps(R))
'''


@pytest.mark.reference
@pytest.mark.parametrize("tz", [None, "UTC", "EST5EDT", "Australia/Melbourne", "Asia/Kolkata"])
def test_tool_helpers_as_the_official_binding(tz):
    require_reference()
    env = {} if tz is None else {"TZ": tz}
    program = PROGRAM % {"archive": DEMO_ARCHIVE}
    ref = run_program(program, False, env)
    ours = run_program(program, True, env)
    assert "__crash__" not in ref, ref
    for key in ref:
        assert ours.get(key) == ref[key], (key, ours.get(key), ref[key])
