"""`python -m pcp export`: every value of the table checked against pmdumplog's dump of
the same archive (the bundled one, and the pmlogger corpus), CSV and Parquet, wide and
long layouts, counter rates, and the error when pyarrow is missing."""
from __future__ import annotations

import csv
import io
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from support.cliutil import DEMO_ARCHIVE, need_qa_archive, need_tool, run_cli, run_tool, tool_env

_TIME = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) (\d+) metrics?$|^(\d\d:\d\d:\d\d\.\d+)  <mark>$")
_SET = re.compile(r"^    [\d.]+ \((.*)\):(.*)$")
_VAL = re.compile(r'^\s*(?:inst \[(-?\d+) or (?:"(.*)"|\?\?\?)\] )?value (.*)$')


def pmdumplog_values(archive, names=()):
    """{time of day: {(metric, inst or None): value text}} from pmdumplog in UTC."""
    env_tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    try:
        text = run_tool("pmdumplog", archive, *names, check=True).stdout
    finally:
        if env_tz is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = env_tz
    out = {}
    cur = None
    metric = None
    for line in text.splitlines():
        m = _TIME.match(line)
        if m:
            cur = out.setdefault(m.group(1) or m.group(3), {})
            continue
        m = _SET.match(line)
        if m:
            metric = tuple(m.group(1).split(" or "))
            rest = m.group(2).strip()
            if rest.startswith("value") or rest.startswith("inst"):
                _add(cur, metric, rest)
            continue
        if line.startswith("        ") and "value " in line and cur is not None:
            _add(cur, metric, line.strip())
    return out


INST_NAMES = {}       # (metric, inst) -> the instance's name pmdumplog printed last


def _add(cur, metric, text):
    m = _VAL.match(text)
    assert m, text
    inst = int(m.group(1)) if m.group(1) is not None else None
    cur[(metric, inst)] = m.group(3)
    if m.group(2) is not None:
        INST_NAMES[(metric, inst)] = m.group(2)


def _same(mine, theirs):
    if theirs.startswith('"'):
        return mine == theirs[1:-1]
    if mine == "":
        return False
    a, b = float(mine), float(theirs)
    return a == b or math.isclose(a, b, rel_tol=1e-7)


def _csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def _time_of_day(iso, digits):
    return iso[11:20] + iso[20:20 + digits]


def _check_wide(header, rows, ref, digits, extra_names=None):
    """Every non-empty cell equals pmdumplog's value; every pmdumplog value is there."""
    seen = 0
    by_time = {_time_of_day(r[0], digits): r for r in rows}
    for t, values in ref.items():
        if t not in by_time:
            continue
        row = by_time[t]
        for (metric, inst), value in values.items():
            cols = [c for c in names_of(metric, inst) if c in header]
            if not cols and extra_names and inst is not None:
                cols = ["%s[%s]" % (m, extra_names[(m, inst)]) for m in metric
                        if (m, inst) in extra_names]
                cols = [c for c in cols if c in header]
            if not cols:
                continue
            cell = row[header.index(cols[0])]
            if value == '""':
                assert cell == ""       # an empty string: an empty cell, as a missing value
                continue
            assert _same(cell, value), (t, cols[0], cell, value)
            seen += 1
    filled = sum(1 for r in rows for c in r[1:] if c != "")
    assert seen == filled
    return seen


def names_of(metrics, inst):
    """The column names a (pmdumplog "a or b" metric, instance) value may be under."""
    out = []
    for metric in metrics:
        if inst is None:
            out.append(metric)
        elif (metrics, inst) in INST_NAMES:
            out.append("%s[%s]" % (metric, INST_NAMES[(metrics, inst)]))
        out.append("%s[%s]" % (metric, inst))
    return out


def test_export_csv_matches_pmdumplog_values():
    got = run_cli("export", "--demo", "-r")
    assert got.status == 0, got.err
    header, rows = _csv(got.out)
    assert header[0] == "time"
    ref = pmdumplog_values(DEMO_ARCHIVE)
    seen = _check_wide(header, rows, ref, 9)
    assert seen > 300


@pytest.mark.parametrize("window", [["-S", "+1", "-T", "+2"], ["-T", "-1.5"], ["-S", "+2.5sec"],
                                    ["-S", "+1000"]], ids=lambda w: " ".join(w))
def test_export_time_window_keeps_the_records_pmdumplog_dumps(window):
    """-S / -T in libpcp's forms: the rows are the records pmdumplog prints with the same
    window (and hold its values)."""
    got = run_cli("export", "--demo", "-r", *window)
    assert got.status == 0, got.err
    header, rows = _csv(got.out)
    env_tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    try:
        text = run_tool("pmdumplog", *window, DEMO_ARCHIVE, check=True).stdout
    finally:
        if env_tz is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = env_tz
    times = [m.group(1) or m.group(3) for m in map(_TIME.match, text.splitlines()) if m]
    assert [_time_of_day(row[0], 9) for row in rows] == times
    ref = pmdumplog_values(DEMO_ARCHIVE)
    _check_wide(header, rows, {t: ref[t] for t in times}, 9)


def test_export_selected_metrics_and_long_layout():
    got = run_cli("export", "--demo", "-r", "--layout", "long", "sample.colour", "kernel.all.load",
                  "kernel.uname.release")
    assert got.status == 0, got.err
    header, rows = _csv(got.out)
    assert header == ["time", "metric", "inst", "instance", "value"]
    ref = pmdumplog_values(DEMO_ARCHIVE, ["sample.colour", "kernel.all.load", "kernel.uname.release"])
    n = 0
    for t, metric, inst, iname, value in rows:
        want = ref[_time_of_day(t, 9)]
        key = [k for k in want if metric in k[0] and
               (k[1] == (int(inst) if inst else None))]
        assert len(key) == 1, (metric, inst)
        assert _same(value, want[key[0]])
        n += 1
    assert n == sum(len(v) for v in ref.values())
    assert {r[1] for r in rows} == {"sample.colour", "kernel.all.load", "kernel.uname.release"}


def test_export_rates():
    raw = _csv(run_cli("export", "--demo", "-r", "sample.seconds", "kernel.all.cpu.user").out)
    rates = _csv(run_cli("export", "--demo", "sample.seconds", "kernel.all.cpu.user").out)
    assert raw[0] == rates[0]
    times = [np.datetime64(r[0][:-1]) for r in raw[1]]
    col = raw[0].index("sample.seconds")
    vals = [(t, int(r[col])) for t, r in zip(times, raw[1]) if r[col]]
    rcol = [float(r[col]) for r in rates[1] if r[col]]
    assert len(rcol) == len(vals) - 1
    for (t0, v0), (t1, v1), r in zip(vals, vals[1:], rcol):
        dt = (t1 - t0) / np.timedelta64(1, "ns") * 1e-9
        assert r == pytest.approx((v1 - v0) / dt)
        assert 0.5 < r < 1.5              # sample.seconds counts seconds


# (with -T, pmrep -u also writes the first record past the end of the window, which
# pmdumplog and export leave out: test_export_time_window_... checks -T against pmdumplog)
@pytest.mark.parametrize("window", [[], ["-S", "+2"], ["-S", "@06:14:53", "-Z", "UTC"]],
                         ids=["all", "-S", "-S @"])
def test_export_rates_match_pmrep(window):
    """Counters as rates by default, in pmrep's units (ms/s for a millisecond counter,
    not pmval's time utilization): the rows and values pmrep -u writes (its CSV, six
    decimals), the same window. pmrep runs on the official binding (system Python)."""
    pmrep = need_tool("pmrep")
    metrics = ["kernel.all.cpu.user", "disk.dev.read_bytes", "sample.seconds", "kernel.all.load",
               "network.interface.in.bytes", "sample.colour"]
    ref = subprocess.run(["/usr/bin/python3", pmrep, "-a", DEMO_ARCHIVE, "-u", "-o", "csv",
                          "-0", "6", "-Z", "UTC", *window, *metrics],
                         capture_output=True, text=True, env=tool_env(), timeout=120)
    assert ref.returncode == 0, ref.stderr
    theirs = list(csv.reader(io.StringIO(ref.stdout)))
    header, rows = _csv(run_cli("export", "--demo", *window, *metrics).out)
    assert [h.replace("[", "-").rstrip("]") for h in header[1:]] == theirs[0][1:]
    assert len(rows) == len(theirs) - 1 > 3
    for ours, their in zip(rows, theirs[1:]):
        assert ours[0][:19].replace("T", " ") == their[0]
        for a, b in zip(ours[1:], their[1:]):
            assert (a == "") == (b == "")
            if a:
                assert float(a) == pytest.approx(float(b), abs=1e-6)


@pytest.mark.parametrize("argv", [["-t", "1"], ["-t", "0.3"], ["-t", "2.5", "-S", "+1.5"],
                                  ["-t", "4", "-r"], ["-t", "1", "-A", "2sec", "-T", "+7"],
                                  ["-t", "0.7", "-O", "+2"]],
                         ids=lambda a: " ".join(a))
def test_export_interpolated_matches_pmrep(argv):
    """-t: pmrep's interpolated rows (libpcp's PM_MODE_INTERP at the origin and every
    interval after it), counters as pmrep's rates; the same times and values as pmrep's
    CSV (six decimals). Columns that have no value in any row export leaves out."""
    pmrep = need_tool("pmrep")
    metrics = ["kernel.all.cpu.user", "disk.dev.read_bytes", "sample.seconds", "kernel.all.load",
               "network.interface.in.bytes", "sample.colour"]
    ref = subprocess.run(["/usr/bin/python3", pmrep, "-a", DEMO_ARCHIVE, "-o", "csv",
                          "-0", "6", "-Z", "UTC", *argv, *metrics],
                         capture_output=True, text=True, env=tool_env(), timeout=120)
    assert ref.returncode == 0, ref.stderr
    theirs = list(csv.reader(io.StringIO(ref.stdout)))
    got = run_cli("export", "--demo", "-Z", "UTC", *argv, *metrics)
    assert got.status == 0, got.err
    header, rows = _csv(got.out)
    their_names = theirs[0][1:]
    assert len(rows) == len(theirs) - 1 > 1
    compared = 0
    for ours, their in zip(rows, theirs[1:]):
        assert ours[0][:19].replace("T", " ") == their[0]
        for name, a in zip(header[1:], ours[1:]):
            b = their[1 + their_names.index(name.replace("[", "-").rstrip("]"))]
            assert (a == "") == (b == ""), (ours[0], name)
            if a:
                assert float(a) == pytest.approx(float(b), abs=1e-6)
                compared += 1
    assert compared > 5


def test_export_parquet_matches_csv(tmp_path):
    # pyarrow is an optional extra: setup.sh installs it into .venv, but the interpreter
    # of .ci/sanitize.sh may not have it
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "demo.parquet"
    got = run_cli("export", "--demo", "-r", "-o", "parquet", "-F", str(out))
    assert got.status == 0, got.err
    table = pq.read_table(out)
    header, rows = _csv(run_cli("export", "--demo", "-r").out)
    assert table.column_names == header
    assert table.num_rows == len(rows)
    assert table.schema.field("time").type == pa.timestamp("ns", tz="UTC")
    assert table.schema.field("kernel.all.cpu.user").type == pa.uint64()
    assert table.schema.field("sample.long.one").type == pa.int32()
    assert table.schema.field("kernel.uname.release").type == pa.string()
    meta = table.schema.field("kernel.all.cpu.user").metadata
    assert meta[b"units"] == b"millisec" and meta[b"semantics"] == b"counter"
    for name in header[1:]:
        col = table.column(name).to_pylist()
        for cell, value in zip((r[header.index(name)] for r in rows), col):
            if cell == "":
                assert value is None
            elif isinstance(value, str):
                assert value == cell
            else:
                assert float(value) == pytest.approx(float(cell), rel=1e-7)
    ns = table.column("time").cast(pa.int64()).to_pylist()
    assert [np.datetime64(r[0][:-1], "ns").astype(np.int64) for r in rows] == ns


def test_export_parquet_long(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "long.pq"
    assert run_cli("export", "--demo", "-o", str(out), "--layout", "long", "kernel.all.load").status == 0
    t = pq.read_table(out, columns=["metric", "instance", "value"]).to_pydict()
    ref = pmdumplog_values(DEMO_ARCHIVE, ["kernel.all.load"])
    assert len(t["value"]) == sum(len(v) for v in ref.values())
    assert set(t["metric"]) == {"kernel.all.load"}
    assert set(t["instance"]) == {"1 minute", "5 minute", "15 minute"}


def test_export_parquet_without_pyarrow_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    got = run_cli("export", "--demo", "-o", str(tmp_path / "x.parquet"))
    assert got.status == 1
    assert "pyarrow" in got.err and "Traceback" not in got.err
    assert not (tmp_path / "x.parquet").exists()


def test_export_takes_pmreps_output_options(tmp_path):
    """pmrep's forms: -o the target, -F the file, counters as rates unless -r."""
    out = tmp_path / "rep.out"
    assert run_cli("export", "--demo", "-o", "csv", "-F", str(out), "hinv").status == 0
    assert out.read_text() == run_cli("export", "--demo", "hinv").out
    assert run_cli("export", "--demo", "-o", "parquet", "hinv").status == 1        # needs -F
    got = run_cli("export", "--demo", "-o", "json", "-F", str(out), "hinv")
    assert got.status == 1 and "output target" in got.err
    got = run_cli("export", "--demo", "-A", "2sec", "hinv")
    assert got.status == 1 and "pmrep -u" in got.err
    assert run_cli("export", "--demo", "-u", "hinv").out == run_cli("export", "--demo", "hinv").out
    got = run_cli("export", "--demo", "--layout", "tall")
    assert got.status == 1 and "Usage: pcp-native export [option...] [metricspec ...]" in got.err


def test_export_to_file(tmp_path):
    out = tmp_path / "demo.csv"
    assert run_cli("export", "--demo", "-o", str(out), "hinv").status == 0
    header, rows = _csv(out.read_text())
    assert header == ["time", "hinv.ncpu", "hinv.physmem"]
    assert len(rows) == 1


@pytest.mark.pmcd
@pytest.mark.parametrize("name", ["v2", "v3native", "mv3", "marks"])
def test_export_corpus_matches_pmdumplog(pmcd, name):
    from support import archives
    from pcp import pmapi
    import cpmapi as c_api

    path = archives.get_corpus()[name]
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, path)
    digits = 9 if ctx.pmGetArchiveLabel().magic & 0xFF == 3 else 6
    metrics = ["sample.colour", "sample.proc", "sample.many.int", "sample.double",
               "sample.ulonglong", "sample.string", "sample.seconds", "hinv.ncpu"]
    got = run_cli("export", "-r", "-a", path, *metrics)
    assert got.status == 0, got.err
    header, rows = _csv(got.out)
    ref = pmdumplog_values(path, metrics)
    # instances pmdumplog could not name at the time ("inst [N or ???]") are named in
    # the table after any instance-domain record of the archive that knows them
    extra = {}
    for leaf in {h.split("[")[0] for h in header[1:]}:
        desc = ctx.pmLookupDescs(ctx.pmLookupName([leaf]))[0]
        if desc.contents.indom != c_api.PM_INDOM_NULL:
            for i, n in zip(*ctx.pmGetInDomArchive(desc)):
                extra[(leaf, i)] = n
    assert _check_wide(header, rows, ref, digits, extra) > 100


# ---- refusals and damaged archives -------------------------------------------------------

def test_an_output_suffix_that_names_no_format_is_refused(tmp_path):
    target = str(tmp_path / "x.json")
    got = run_cli("export", "--demo", "-o", target)
    assert got.status == 1 and got.out == ""
    assert got.err.count("\n") == 1 and "x.json" in got.err and "-o csv|parquet" in got.err
    assert not os.path.exists(target)
    assert run_cli("export", "--demo", "-o", "csv", "-F", target).status == 0     # said explicitly
    with open(target) as f:
        assert f.readline().startswith("time,")


def test_an_output_in_a_missing_directory_is_a_one_line_error(tmp_path):
    got = run_cli("export", "--demo", "-o", str(tmp_path / "no" / "such" / "x.csv"))
    assert got.status == 1 and got.err.count("\n") == 1 and "no such directory" in got.err
    assert "Traceback" not in got.err


def test_a_damaged_archive_is_reported_and_can_be_skipped_past(tmp_path, pmcd):
    from support import archives
    base = archives.copy_archive(archives.get_corpus()["v2"], str(tmp_path), "cut")
    recs = archives.records(base + ".0")
    archives.truncate(base + ".0", recs[-1][0] + recs[-1][1] // 2)      # the last one cut
    got = run_cli("export", "-a", base, "sample.long.one")
    assert got.status == 1 and got.out == ""
    assert base in got.err and "--errors skip" in got.err and got.err.count("\n") == 1
    skipped = run_cli("export", "--errors", "skip", "-a", base, "sample.long.one")
    assert skipped.status == 0, skipped.err
    rows = skipped.out.splitlines()[1:]
    assert rows and len(rows) <= len(recs) - 1


def test_the_progress_bar_follows_the_flags():
    pytest.importorskip("tqdm")
    quiet = run_cli("export", "--demo", "kernel.all.load")            # stderr is no terminal here
    assert quiet.status == 0 and quiet.err == ""
    assert run_cli("export", "--demo", "--no-progress", "kernel.all.load").err == ""
    shown = run_cli("export", "--demo", "--progress", "kernel.all.load")
    assert shown.status == 0 and "archive" in shown.err and quiet.out == shown.out


# ---- what other readers make of the files -------------------------------------------

def _read_back(path, suffix):
    """The column names pandas, pyarrow, polars and duckdb read from the file, each
    reader's own way (any of them raising fails the test)."""
    import duckdb
    import pandas as pd
    import polars as pl
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if suffix == ".parquet":
        return {"pandas": list(pd.read_parquet(path).columns),
                "pyarrow": pq.read_table(path).column_names,
                "polars": pl.read_parquet(path).columns,
                "duckdb": duckdb.sql("SELECT * FROM read_parquet('%s')" % path).columns}
    return {"pandas": list(pd.read_csv(path).columns),
            "pyarrow": pacsv.read_csv(path).column_names,
            "polars": pl.read_csv(path).columns,
            "duckdb": duckdb.sql("SELECT * FROM read_csv('%s', header=true)" % path).columns}


@pytest.mark.parametrize("suffix,layout", [(".parquet", "wide"), (".parquet", "long"),
                                           (".csv", "wide")])
def test_every_reader_reads_the_export_back_with_its_header(tmp_path, suffix, layout):
    """20180102's pmcd.agent.status has ten instances named "sample": the wide header
    names them as to_pandas() does (the instance id after a repeated name), so pandas,
    pyarrow, polars and duckdb each read the file and see the names it was written with."""
    from pcp import bulk

    archive = need_qa_archive("20180102")
    metrics = ["pmcd.agent.status", "kernel.all.load", "pmcd.pmlogger.host"]
    out = str(tmp_path / ("out" + suffix))
    got = run_cli("export", "-a", archive, "-o", out, "--layout", layout, *metrics)
    assert got.status == 0, got.err
    seen = _read_back(out, suffix)
    written = seen["pyarrow"]
    assert all(names == written for names in seen.values()), seen
    assert len(set(written)) == len(written)
    if layout == "wide":
        frame = bulk.read_archive(archive, metrics).to_pandas()
        assert written == ["time"] + list(frame.columns)
        assert sum(n.startswith("pmcd.agent.status[sample] (") for n in written) == 10


# ---- several archives ----------------------------------------------------------------

def _fleet():
    return [need_qa_archive(n) for n in ("naslog", "pcp-pidstat", "20130706")]


def test_export_of_a_fleet_gives_each_archive_what_it_has(tmp_path):
    """Three hosts' archives (-a each): a host column; an archive that lacks a metric
    gives no rows for it, said in a warning line naming the archive and the metric; each
    host's rows are its archive's export alone."""
    naslog, pidstat, billing = _fleet()
    metrics = ["kernel.all.load", "mem.util.used"]
    got = run_cli("export", "-a", naslog, "-a", pidstat, "-a", billing, *metrics)
    assert got.status == 0, got.err
    warned = got.err.splitlines()
    assert all(line.startswith("pcp-native export: Warning: ") for line in warned)
    assert any(naslog in line and "mem.util.used" in line for line in warned)
    assert any(pidstat in line and "kernel.all.load" in line for line in warned)
    header, rows = _csv(got.out)
    assert header[:2] == ["time", "host"] and "mem.util.used" in header
    for path, have in ((naslog, ["kernel.all.load"]), (billing, metrics)):
        alone_header, alone = _csv(run_cli("export", "-a", path, *have).out)
        host = run_tool("pmdumplog", "-l", path, check=True).stdout.split("host ")[1].split()[0]
        mine = [r for r in rows if r[1] == host]
        assert len(mine) == len(alone)
        for name in alone_header[1:]:
            k = header.index(name)
            assert [r[k] for r in mine] == [a[alone_header.index(name)] for a in alone]
    # Parquet, long: the same values, readable with the host column
    pd = pytest.importorskip("pandas")
    out = tmp_path / "fleet.parquet"
    assert run_cli("export", "-a", ",".join(_fleet()), "--layout", "long", "-o", str(out),
                   *metrics).status == 0
    frame = pd.read_parquet(out)
    assert sorted(frame["metric"].unique()) == sorted(metrics)
    assert len(frame.loc[frame["metric"] == "mem.util.used", "host"].unique()) == 1


def test_export_of_a_fleet_strictly_and_with_a_damaged_archive(tmp_path):
    naslog, pidstat, billing = _fleet()
    got = run_cli("export", "--strict", "-a", naslog, "-a", billing, "mem.util.used")
    assert (got.status, got.out) == (1, "")
    assert got.err == "pcp-native export: %s: mem.util.used: Unknown metric name\n" % naslog
    junk = str(tmp_path / "junk")
    for suffix in (".0", ".meta", ".index"):
        with open(junk + suffix, "wb") as f:
            f.write(os.urandom(300))
    got = run_cli("export", "-a", naslog, "-a", junk, "kernel.all.load")
    assert (got.status, got.out) == (1, "")
    # pminfo -a A,B names the whole argument of a list it cannot open
    assert got.err.startswith('pcp-native export: Cannot open archive "%s,%s": '
                              % (naslog, junk))
    got = run_cli("export", "--errors", "skip", "-a", naslog, "-a", junk, "kernel.all.load")
    assert got.status == 0 and junk in got.err and "left out" in got.err
    assert len(got.out.splitlines()) == len(run_cli("export", "-a", naslog,
                                                    "kernel.all.load").out.splitlines())


# The peak of this process image: VmHWM, not ru_maxrss, which Linux carries across
# execve, so that a child started by a large pytest worker (1.1 GB late in a full run)
# reported the worker's peak as its own
MEMORY_PROGRAM = r'''
import re, sys
from pcp.cli import main
status = main(["export", "-a", sys.argv[1], "-o", sys.argv[2]] + sys.argv[3:])
with open("/proc/self/status") as f:
    print(status, int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) // 1024)
'''


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_csv_export_streams_by_chunks(tmp_path, layout):
    """20180102 (7 MB, 9022 columns x 724 rows, 37 MB of matrices) is written chunk by
    chunk (a first pass learns the columns, a second writes): the peak is the chunks'
    and the imports', not the archive's. Whole reads peaked at 189 MB (wide) and 388 MB
    (long); streamed, 96 MB and 75 MB, and 81 MB for the first two hours of the archive
    alone (wide)."""
    from support.cliutil import our_env

    archive = need_qa_archive("20180102")
    p = subprocess.run([sys.executable, "-c", MEMORY_PROGRAM, archive,
                        str(tmp_path / "all.csv"), "--layout", layout],
                       capture_output=True, text=True, env=our_env(), timeout=300)
    status, peak_mb = (int(x) for x in p.stdout.split())
    assert status == 0, p.stderr
    assert peak_mb < 130, peak_mb
    with open(tmp_path / "all.csv") as f:
        header = f.readline()
    if layout == "wide":
        assert header.count(",") == 7034        # the columns holding a value
    else:
        assert header == "time,metric,inst,instance,value\n"


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_chunks_of_any_size_write_what_a_whole_read_writes(monkeypatch, tmp_path, layout):
    """pcp-pidstat-process-args' processes (246 instances, strings and counters) written
    two rows per chunk and a few rows per row group: the CSV (header and column order
    included: long rows metric by metric across chunks) and the Parquet table and
    metadata equal those of a single chunk (a whole read)."""
    import pyarrow.parquet as pq
    from pcp.cli import export

    archive = need_qa_archive("pcp-pidstat-process-args")
    names = ["-T", "+1min", "proc.psinfo.utime", "proc.psinfo.cmd"]

    def written(rows):
        monkeypatch.setattr(export, "CHUNK_ROWS", rows)
        monkeypatch.setattr(export, "ROW_GROUP_CELLS", 1000 if rows else 1 << 30)
        monkeypatch.setattr(export, "FOOTER_ROWS", 0)
        out = io.StringIO()
        assert export.main(["-a", archive, "--layout", layout] + names, out) == 0
        path = str(tmp_path / ("%s.parquet" % rows))
        assert export.main(["-a", archive, "--layout", layout, "-o", path] + names) == 0
        return out.getvalue(), pq.read_table(path)

    whole_csv, whole_table = written(None)
    csv_text, table = written(2)
    assert csv_text == whole_csv and len(whole_csv.splitlines()) > 5
    assert table.schema.equals(whole_table.schema, check_metadata=True)
    for name in table.column_names:       # NaN (long: the value of a string) as NaN
        got, want = table.column(name).to_pandas(), whole_table.column(name).to_pandas()
        assert got.equals(want), name


def test_wide_columns_are_the_rated_columns_that_hold_a_value(monkeypatch):
    """The first pass learns presence from the counters as logged, rating only the
    instances that held no rate yet: its header must be the columns of a rated read
    that hold a value. pcp-pidstat-process-args' proc.psinfo.utime has 939 instances
    with a value and 772 with a rate (a process seen once has none), read in chunks of
    64 rows (instances rated across chunks)."""
    from pcp import bulk
    from pcp._bulk.export import wide_names
    from pcp.cli import export

    archive = need_qa_archive("pcp-pidstat-process-args")
    monkeypatch.setattr(export, "CHUNK_ROWS", 64)
    out = io.StringIO()
    assert export.main(["-a", archive, "proc.psinfo.utime"], out) == 0
    header = next(csv.reader(io.StringIO(out.getvalue().split("\n", 1)[0])))
    rated = bulk.ArchiveReader(archive, ["proc.psinfo.utime"], rate=True).read()
    m = rated.metrics["proc.psinfo.utime"]
    held = m.present.any(axis=0)
    want = [name for name, h in zip(wide_names(m), held.tolist()) if h]
    assert len(want) == 772 and int(np.count_nonzero(
        bulk.ArchiveReader(archive, ["proc.psinfo.utime"]).read()
        .metrics["proc.psinfo.utime"].present.any(axis=0))) == 939
    assert header == ["time"] + want
