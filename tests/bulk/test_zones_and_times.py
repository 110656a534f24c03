"""The bulk readers' time zone and time forms: pandas indexes carry the archive label's
zone (pcp.bulk, pcp.sampler, pcp.dask), and start= / end= take PCP's -S / -T forms
("@13:30", "-5min", "+2") read by the options' own parser (pcp._libpcp.timewindow),
dates in the archive's zone: the rows kept are the records pmdumplog -z keeps for the
same window."""
from __future__ import annotations

import pickle
import re
import zoneinfo

import numpy as np
import pytest

from pcp import bulk, pmapi
from pcp.sampler import Sampler
import cpmapi as c_api

from support import archive_bytes as ab
from support.cliutil import DEMO_ARCHIVE, run_tool

pd = pytest.importorskip("pandas")

SYDNEY_TZ = b"AEST-10AEDT,M10.1.0,M4.1.0/3"
START = 1704412800 + 3600           # Fri Jan  5 01:00:00 2024 UTC: 12:00 in Sydney (AEDT)
PMID = (29 << 22) | 1


def _zoned_archive(tmp_path, version: int, zone: bytes = b":Australia/Sydney") -> str:
    """Twenty records a second apart, 250 ms into each second, under a label in Sydney's
    zone (TZ rule, and a zoneinfo name in v3 labels)."""
    base = str(tmp_path / ("sydney%d" % version))
    label = lambda vol: ab.label(version, vol, START, 250000000, tz=SYDNEY_TZ,  # noqa: E731
                                 zone=zone)
    with open(base + ".meta", "wb") as f:
        f.write(label(-1) + ab.desc_record(PMID, 0, 0xFFFFFFFF, 3, 0, [b"sample.long.one"]))
    with open(base + ".0", "wb") as f:
        f.write(label(0) + b"".join(ab.data_record(version, START + k, 250000000,
                                                   [(PMID, 1, 0, [(-1, k)])])
                                    for k in range(1, 21)))
    return base


def test_dask_index_carries_the_zone(tmp_path):
    dd = pytest.importorskip("dask.dataframe")  # noqa: F841
    from pcp import dask as pcpdask
    base = _zoned_archive(tmp_path, 3)
    ddf = pcpdask.read_archives(base, ["sample.long.one"], start="@12:00:05", end="-5")
    assert str(ddf.index.dtype) == "datetime64[ns, Australia/Sydney]"
    df = ddf.compute()
    assert [t.strftime("%H:%M:%S") for t in df.index] == \
        ["12:00:%02d" % k for k in range(5, 16)]


@pytest.mark.parametrize("version", [2, 3])
def test_pandas_indexes_carry_the_archives_zone(tmp_path, version):
    base = _zoned_archive(tmp_path, version)
    cols = bulk.read_archive(base, ["sample.long.one"])
    wide = cols.to_pandas()
    want = "Australia/Sydney" if version == 3 else SYDNEY_TZ.decode()
    assert str(wide.index.tz) in (want, "tzstr('%s')" % want)
    # the same instants, shown in Sydney's summer time (UTC+11)
    np.testing.assert_array_equal(wide.index.asi8, cols.time.view(np.int64))
    assert wide.index[0].strftime("%Y-%m-%d %H:%M:%S %z") == "2024-01-05 12:00:01 +1100"
    assert cols.to_pandas("long")["time"].dt.tz == wide.index.tz
    again = pickle.loads(pickle.dumps(wide))         # a rule's zone pickles as its rule
    assert again.index.equals(wide.index) and again.index.tz == wide.index.tz
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, base)
    s = Sampler(ctx, ["sample.long.one"], capacity=32)
    s.run()
    assert s.to_pandas().index[0].strftime("%H:%M:%S %z") == "12:00:01 +1100"


def test_an_unreadable_zone_falls_back_to_utc(tmp_path):
    base = _zoned_archive(tmp_path, 2)
    with open(base + ".meta", "r+b") as f:       # the label's TZ rule, now nonsense
        data = f.read().replace(SYDNEY_TZ, b"!!".ljust(len(SYDNEY_TZ), b"\0"))
        f.seek(0)
        f.write(data)
    with open(base + ".0", "r+b") as f:
        data = f.read().replace(SYDNEY_TZ, b"!!".ljust(len(SYDNEY_TZ), b"\0"))
        f.seek(0)
        f.write(data)
    idx = bulk.read_archive(base, ["sample.long.one"]).to_pandas().index
    assert idx[0].utcoffset().total_seconds() == 0


def test_the_demo_archives_zone():
    idx = bulk.read_archive(DEMO_ARCHIVE, ["sample.long.one"]).to_pandas().index
    label = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, DEMO_ARCHIVE).pmGetHighResArchiveLabel()
    assert idx.tz == zoneinfo.ZoneInfo(label.get_zoneinfo().lstrip(":"))


_STAMP = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) \d+ metrics?$", re.M)


def _pmdumplog_stamps(base, start, end, names):
    argv = ["pmdumplog", "-z"]
    if start is not None:
        argv += ["-S", start]
    if end is not None:
        argv += ["-T", end]
    return _STAMP.findall(run_tool(*argv, base, *names, check=True).stdout)


def _our_stamps(base, start, end, names, digits):
    idx = bulk.read_archive(base, names, start=start, end=end).to_pandas().index
    return ["%s.%0*d" % (t.strftime("%H:%M:%S"), digits,
                         (t.value % 1000000000) // (10 ** (9 - digits))) for t in idx]


WINDOWS = [("+2", "+5"), ("@06:14:52", "-3sec"), (None, "-2.5"), ("+1.5sec", None),
           ("@ Nov 21 06:14:50", "@06:14:55.5"), ("2sec", "8sec"), (None, "5min"),
           ("@06:14:53", "@06:14:53")]


@pytest.mark.parametrize("start,end", WINDOWS, ids=["%s %s" % w for w in WINDOWS])
def test_pcp_time_forms_keep_the_records_pmdumplog_keeps(start, end):
    names = ["kernel.all.load"]
    assert _our_stamps(DEMO_ARCHIVE, start, end, names, 9) == \
        _pmdumplog_stamps(DEMO_ARCHIVE, start, end, names)


@pytest.mark.parametrize("start,end", [("@12:00:05", "@12:00:09"), ("+3", "-10"),
                                       ("@ Jan 5 12:00:10", None), ("January 5, 2024 12:00:15", None),
                                       ("5 Jan 2024 12:00:15", "+3")])
def test_pcp_dates_are_read_in_the_archives_zone(tmp_path, start, end):
    """"@12:00:05" is noon in Sydney, where the archive was recorded (pmdumplog -z),
    whatever the zone of the machine reading it."""
    base = _zoned_archive(tmp_path, 2)
    ours = _our_stamps(base, start, end, ["sample.long.one"], 6)
    assert ours and ours == _pmdumplog_stamps(base, start, end, ["sample.long.one"])


def test_a_bad_pcp_time_says_what_libpcp_says():
    with pytest.raises(ValueError) as err:
        bulk.read_archive(DEMO_ARCHIVE, ["kernel.all.load"], start="@bogus")
    assert "invalid time window" in str(err.value) and "^ -- unexpected value" in str(err.value)


def test_iso_and_numeric_times_are_unchanged(tmp_path):
    """ISO 8601 strings stay UTC, as naive datetimes are (not the archive's zone)."""
    cols = bulk.read_archive(DEMO_ARCHIVE, ["kernel.all.load"])
    t = cols.time
    again = bulk.read_archive(DEMO_ARCHIVE, ["kernel.all.load"], start=str(t[2]), end=t[5])
    np.testing.assert_array_equal(again.time, t[2:6])
    base = _zoned_archive(tmp_path, 3)
    utc = bulk.read_archive(base, ["sample.long.one"], start="2024-01-05T01:00:15")
    assert len(utc) == 6 and utc.to_pandas().index[0].hour == 12


@pytest.mark.parametrize("version", [2, 3])
def test_write_frame_keeps_the_zone(tmp_path, version):
    """pmi.write_frame labels the archive with the zone of the frame's times, so an
    export and an import round-trip the zone too."""
    from pcp import pmi
    frame = bulk.read_archive(_zoned_archive(tmp_path, version), ["sample.long.one"]).to_pandas()
    pmi.write_frame(frame, str(tmp_path / "copy"))
    again = bulk.read_archive(str(tmp_path / "copy"), ["sample.long.one"]).to_pandas()
    assert again.index.tz == frame.index.tz
    pd.testing.assert_frame_equal(again, frame)
