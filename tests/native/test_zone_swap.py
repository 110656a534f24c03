"""csrc/zones.c's pcp_zone_localtime (pmLocaltime's TZ swap in C) against Python's
time.localtime made under the same zone by setting TZ and calling time.tzset(): the
same glibc conversion, so every field must agree, and TZ (set or unset) must be as it
was before the call."""
import os
import time

import pytest

from pcp._libpcp import zones
from pcp._native import ffi, lib

ZONES = ["UTC", "GMT+0", "EST5EDT", ":Australia/Melbourne", "Europe/Paris", "IST-5:30",
         "AEDT-11", "NZST-12NZDT", "XXX+3:45YYY,M3.2.0/2:30,M11.1.0", "/etc/localtime",
         "bad zone", "a..b", "", "Asia/Kolkata"]
INSTANTS = [0, -1, 86399, 951782400, 1514772611, 1704067199, 1704067200, 1711846800,
            1730000000, 2147483647, 4102444800, -2 ** 40, 2 ** 40]


def _python_localtime(zone, seconds):
    """The conversion as pcp._libpcp.zones made it before C did: TZ swapped in Python."""
    return zones._with_tz(zone, lambda: time.localtime(seconds))


def _fields(out):
    return (out.year + 1900, out.mon + 1, out.mday, out.hour, out.min, out.sec,
            (out.wday + 6) % 7, out.yday + 1, out.isdst, ffi.string(out.zone).decode(),
            out.gmtoff)


@pytest.mark.parametrize("caller_tz", ["UTC", "Europe/Paris", None])
def test_as_time_localtime_and_tz_put_back(caller_tz, monkeypatch):
    if caller_tz is None:
        monkeypatch.delenv("TZ", raising=False)
    else:
        monkeypatch.setenv("TZ", caller_tz)
    time.tzset()
    try:
        out = ffi.new("pcp_zone_tm *")
        reference = {seconds: time.localtime(seconds) for seconds in INSTANTS}
        for zone in ZONES:
            for seconds in INSTANTS:
                assert lib.pcp_zone_localtime(zone.encode(), seconds, out) == 0
                want = _python_localtime(zone, seconds)
                assert _fields(out) == tuple(want) + (want.tm_zone, want.tm_gmtoff), \
                    (zone, seconds)
                assert os.environ.get("TZ") == caller_tz
                # libc's zone is the caller's again, not the one converted in
                assert time.localtime(seconds) == reference[seconds]
    finally:
        monkeypatch.undo()
        time.tzset()


def test_an_instant_libc_cannot_convert():
    """-1 and nothing written, as localtime_r's NULL (time.localtime's OverflowError)."""
    out = ffi.new("pcp_zone_tm *")
    out.year = 12345
    assert lib.pcp_zone_localtime(b"UTC", 2 ** 62, out) == -1
    assert out.year == 12345
    with pytest.raises((OverflowError, OSError)):
        time.localtime(2 ** 62)
