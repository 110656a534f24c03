"""pmParseInterval / pmParseHighResInterval against libpcp 6.0.3: the seconds and the
microseconds or nanoseconds of each specification (libpcp's long double rounding
included), and the message of each bad one (its caret position included), asked of
libpcp itself through the official binding's ctypes handle."""
from __future__ import annotations

import json

import pytest

from pcp import pmapi
from pcp._core import intervals

from support.difftest import require_reference, run_reference

SPECS = [
    "10", "1.5", "2min", "1 hour 30 mins", "10 msec", "1e3", "0.0000001", "3 days", "  7  ",
    "1.5hrs", "2 Minutes", "10secs", "0.0000019", "0.0000015", "0.0000014", "0.0000000019",
    "0.0000000015", "1.9999999", "2.9999999999", "0.3", "0.7", "100.1", "1e-20", "9e9", "1e10",
    "2000000.123456789", "2h 5", "\t", "250ms", "250msec", "0x10", "0x1p-4 sec", "1 day 2",
    "5 nanoseconds", "5 microseconds", "5 milliseconds", "3 usec 4 nsec", ".5m", "5.",
    "1 d 1 h 1 m 1 s", "60 seconds", "2HOURS", "7 hr",
    # refused
    "5x", " 5 x", "  -1", "1,5", "1e20", "3 fortnights", "", "inf", "nan", "1 secss",
    "1.5.5", "10 sec and", "sec", "- 1", "+1", "1e", "1 minutess",
]

PROBE = r'''
import json
from ctypes import byref, c_char_p
from pcp import pmapi
out = {}
for s in %r:
    tv, ts = pmapi.timeval(), pmapi.timespec()
    err, err2 = c_char_p(), c_char_p()
    sts = pmapi.LIBPCP.pmParseInterval(s.encode(), byref(tv), byref(err))
    sts2 = pmapi.LIBPCP.pmParseHighResInterval(s.encode(), byref(ts), byref(err2))
    msg = err.value.decode() if sts < 0 else None
    out[s] = [sts, tv.tv_sec, tv.tv_usec, sts2, ts.tv_sec, ts.tv_nsec, msg]
print(json.dumps(out))
'''


def _ours(spec: str):
    try:
        tv, tvmsg = pmapi.pmContext.pmParseInterval(spec)
        ts, tsmsg = pmapi.pmContext.pmParseHighResInterval(spec)
    except pmapi.pmErr as e:
        return [e.args[0], 0, 0, e.args[0], 0, 0, e.args[1]]
    assert tvmsg == tsmsg == ""
    return [0, tv.tv_sec, tv.tv_usec, 0, ts.tv_sec, ts.tv_nsec, None]


@pytest.mark.reference
def test_intervals_as_libpcp_parses_them():
    require_reference()
    ref = run_reference(PROBE % (SPECS,))
    for spec in SPECS:
        assert _ours(spec) == ref[spec], spec
    assert sum(1 for v in ref.values() if v[0] < 0) >= 12       # the refusals are there


def test_the_struct_helpers_and_their_errors():
    tv = pmapi.timeval.fromInterval("1.5 sec")
    assert (tv.tv_sec, tv.tv_usec) == (1, 500000) and str(tv) == "1.500"
    ts = pmapi.timespec.fromInterval(b"2min 0.25s")
    assert (ts.tv_sec, ts.tv_nsec) == (120, 250000000)
    with pytest.raises(pmapi.pmErr) as e:
        pmapi.timeval.fromInterval("5x")
    assert e.value.args == (-1, "5x\n ^ -- unexpected value\n")
    with pytest.raises(intervals.IntervalError):
        intervals.parse_interval("")
    assert json.dumps(intervals.interval_timespec("1e-20")) == "[0, 0]"
