"""Every command with every kind of awkward metric (an unknown name, a non-leaf, a
derived metric that cannot be evaluated and one that can, a metric with no values, one
not supported, one whose descriptor cannot be had, strings, event records) against
pminfo, pmval and pmdumplog on the same source: the same output and status, and the
same one-line messages under pcp-native's name. Never a traceback. export (pmrep's
options, no byte-for-byte reference) writes what it can and refuses the rest by name."""
from __future__ import annotations

import csv
import io

import pytest

from support.cliutil import DEMO_ARCHIVE, need_qa_archive, run_cli, run_tool

# archive metrics: unknown, non-leaf (two), derived that cannot be evaluated on the demo
# archive (PCP's default disk.dev.await), derived that can, strings, a plain one
ARCHIVE_METRICS = ["no.such.metric", "sample", "kernel.all", "disk.dev.await",
                   "kernel.cpu.util.user", "kernel.uname.release", "sample.string.hullo",
                   "kernel.all.load"]
# live (the sample PMDA): a pmid pmcd does not know, not supported, no values, no
# instances, a fetch error, a string, unknown
LIVE_METRICS = ["sample.bad.unknown", "sample.bad.nosupport", "sample.bad.novalues",
                "sample.noinst", "sample.bad.fetch.again", "sample.string.hullo",
                "no.such.metric", "sample.bad", "disk.dev.await"]

TOOL = {"info": "pminfo", "fetch": "pmval", "dump": "pmdumplog"}


def _same(command, ours, ref):
    assert "Traceback" not in ours.err
    assert ours.status == ref.returncode, (ours.err, ref.stderr)
    assert ours.out == ref.stdout
    assert ours.err.replace("pcp-native %s:" % command, TOOL[command] + ":") == \
        ref.stderr.replace("pmval:", TOOL[command] + ":")


@pytest.mark.parametrize("metric", ARCHIVE_METRICS)
def test_archive_metrics_as_pminfo_pmval_pmdumplog(metric):
    for ours, theirs in ((["info", "-a", DEMO_ARCHIVE, "-df", metric],
                          ["pminfo", "-a", DEMO_ARCHIVE, "-df", metric]),
                         (["fetch", "-U", DEMO_ARCHIVE, "-s", "3", metric],
                          ["pmval", "-U", DEMO_ARCHIVE, "-s", "3", metric]),
                         (["dump", DEMO_ARCHIVE, metric], ["pmdumplog", DEMO_ARCHIVE, metric])):
        _same(ours[0], run_cli(*ours), run_tool(*theirs))


@pytest.mark.pmcd
@pytest.mark.parametrize("metric", LIVE_METRICS)
def test_live_metrics_as_pminfo_and_pmval(metric):
    for ours, theirs in ((["info", "-df", metric], ["pminfo", "-df", metric]),
                         (["fetch", "-s", "1", metric], ["pmval", "-s", "1", metric])):
        _same(ours[0], run_cli(*ours), run_tool(*theirs))


def _table(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def test_export_writes_derived_metrics_fetch_computes():
    """kernel.cpu.util.user (a default derived metric): export -t writes what pmval -t
    prints at each interval."""
    got = run_cli("export", "--demo", "-t", "2", "-Z", "UTC", "kernel.cpu.util.user")
    assert got.status == 0, got.err
    header, rows = _table(got.out)
    assert header == ["time", "kernel.cpu.util.user"]
    ref = run_tool("pmval", "-a", DEMO_ARCHIVE, "-t", "2", "-Z", "UTC",
                   "kernel.cpu.util.user", check=True).stdout.splitlines()
    values = [line.split()[1:] for line in ref if line[:2].isdigit() and ":" in line[:3]]
    assert len(values) == len(rows)
    for (stamp, value), theirs in zip(rows, values):
        if theirs[0] == "No":
            assert value == ""
        else:
            assert abs(float(value) - float(theirs[0])) <= 1e-3 * abs(float(theirs[0]))
    assert sum(value != "" for _, value in rows) >= 3


@pytest.mark.parametrize("argv,message", [
    (["no.such.metric"], "pcp-native export: no.such.metric: Unknown metric name\n"),
    (["disk.dev.await"],
     "pcp-native export: disk.dev.await: pmLookupDesc: Derived metric definition failed\n"),
    (["kernel.all.load", "disk.dev.await"],
     "pcp-native export: disk.dev.await: pmLookupDesc: Derived metric definition failed\n"),
])
def test_export_refuses_what_it_cannot_write_by_name(argv, message):
    got = run_cli("export", "--demo", *argv)
    assert (got.status, got.out, got.err) == (1, "", message)


def test_export_of_strings_non_leaves_and_event_records():
    got = run_cli("export", "--demo", "kernel.uname.release", "sample.string.hullo")
    header, rows = _table(got.out)
    assert header == ["time", "kernel.uname.release", "sample.string.hullo"]
    assert rows and rows[0][2] == "hullo world!"
    got = run_cli("export", "--demo", "kernel.all")       # a non-leaf: the leaves under it
    assert got.status == 0 and "kernel.all.load[1 minute]" in got.out.splitlines()[0]
    events = need_qa_archive("eventrec")
    got = run_cli("export", "-a", events, "sample.event.records")
    assert (got.status, got.out) == (1, "")
    assert got.err.startswith("pcp-native export: sample.event.records: ")
    assert "not exported" in got.err and "\n" not in got.err[:-1]
