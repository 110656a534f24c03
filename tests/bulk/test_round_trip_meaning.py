"""The round trip keeps the archive's meaning: PCP QA archives read by pcp.bulk (pandas,
Arrow, Parquet, the CLI's export -r) and written back by pcp.pmi.write_frame give an
archive whose `pmdumplog -dilm` (label, descriptors, instance domains with their
history, values, <mark>s) equals the source's, and pmrep rate-converts its counters as
it does the source's. What must differ in a copy made from a table is masked, and why,
in tests/support/dumplog.py. A frame without the archive's facts (user-built) is
written as it always was."""

from __future__ import annotations

import json

import pytest

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from pcp import bulk, pmi  # noqa: E402
from tests.support.cliutil import need_qa_archive, need_tool, run_cli, run_tool  # noqa: E402
from tests.support.dumplog import comparable, dumplog  # noqa: E402

# event records are no table's values (read_archive leaves them out), so the copy
# cannot hold them: sample.event.records (29.0.136) and its instance domain 29.10, in
# omnibus_v3 sampledso.event.records and .highres_records (30.0.136, 30.0.139; 30.10)
EVENT_RECORDS = ("29.0.136", "29.10")
OMNIBUS_EVENTS = ("30.0.136", "30.0.139", "30.10")


def _same_archive(source: str, copy: str, masked=()) -> None:
    want = comparable(dumplog(source), masked)
    got = comparable(dumplog(copy), masked)
    if want != got:
        # the first lines that differ, not a diff of 400,000 lines
        pairs = [(k, w, g) for k, (w, g) in enumerate(zip(want.splitlines(),
                                                            got.splitlines())) if w != g]
        raise AssertionError("pmdumplog -dilm differs (%d vs %d lines); first: %r"
                             % (want.count("\n"), got.count("\n"), pairs[:5]))


@pytest.fixture(scope="module")
def copy_20180102(tmp_path_factory) -> str:
    """QA archive 20180102 (counters, instant and discrete metrics, strings, u32 / u64
    / 32 / 64 / double, a score of instance domains, 120 <mark>s, instances coming and
    going) through to_pandas() and write_frame."""
    source = need_qa_archive("20180102")
    copy = str(tmp_path_factory.mktemp("rt") / "copy")
    pmi.write_frame(bulk.read_archive(source).to_pandas(), copy)
    return copy


def test_pandas_wide_20180102(copy_20180102: str) -> None:
    _same_archive(need_qa_archive("20180102"), copy_20180102, EVENT_RECORDS)


def test_pmrep_rates_a_counter(copy_20180102: str) -> None:
    """pmrep and pmval convert the counters to rates in the copy as in the source (they
    did not when they came back instant), and show them in the same units."""
    source = need_qa_archive("20180102")
    pmrep = need_tool("pmrep")
    outputs = []
    for archive in (source, copy_20180102):
        # pmrep runs on the official binding (the system Python)
        p = run_tool("/usr/bin/python3", pmrep, "-z", "-a", archive, "-t", "10m", "-p",
                     "disk.dev.read", "kernel.all.cpu.user", "mem.util.used", check=True)
        outputs.append(p.stdout)
    assert outputs[0] == outputs[1]
    assert "count/s" in outputs[0] and "Kbyte" in outputs[0]
    # pmval too; its header names the archive, whose path must differ
    outputs = [run_tool("pmval", "-z", "-a", archive, "-t", "20m", "-f", "3", "disk.dev.read",
                        check=True).stdout.replace(archive, "ARCHIVE")
               for archive in (source, copy_20180102)]
    assert outputs[0] == outputs[1]
    assert "(converting to count / sec)" in outputs[0]


@pytest.mark.parametrize("archive, form", [
    ("20180415.09.16", "arrow-wide"),       # v2: proc instances come and go
    # v3, every type, <mark>s; the long form's values are float64, which holds every
    # value of this archive (not a 64-bit integer above 2**53)
    ("omnibus_v3", "arrow-long"),
    ("omnibus_v3", "pandas-long"),
    ("omnibus-nomark_v3", "parquet-stream"),
])
def test_forms(archive: str, form: str, tmp_path) -> None:
    source = need_qa_archive(archive)
    copy = str(tmp_path / "copy")
    kind, layout = form.split("-")
    if kind == "arrow":
        frame = bulk.read_archive(source).to_arrow(layout)
    elif kind == "pandas":
        frame = bulk.read_archive(source).to_pandas(layout)
    else:
        # chunk by chunk: the schema is made before the rows, so no <mark>s (none here)
        path = str(tmp_path / "x.parquet")
        bulk.ArchiveReader(source).to_parquet(path)
        frame = pq.read_table(path)
    pmi.write_frame(frame, copy)
    _same_archive(source, copy, OMNIBUS_EVENTS)


def test_window(tmp_path) -> None:
    """A time window of the archive comes back as pmdumplog shows that window of the
    source (-S/-T): its descriptors and every record in it."""
    source = need_qa_archive("20180415.09.16")
    copy = str(tmp_path / "copy")
    pmi.write_frame(bulk.read_archive(source, start="+30", end="+90").to_pandas(), copy)
    window = run_tool("pmdumplog", "-z", "-dm", "-S", "+30", "-T", "+90", source,
                      check=True).stdout
    assert comparable(window) == comparable(dumplog(copy, "-dm"))
    assert comparable(window).count(" metrics\n") > 10


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_cli_export_parquet(layout: str, tmp_path) -> None:
    """`pcp-native export -r` to Parquet, read back by pyarrow and by pandas (whose
    read_parquet gives the frame its attrs again; its numpy_nullable dtypes keep the
    integers, where plain numpy dtypes make a column with gaps float64)."""
    source = need_qa_archive("omnibus_v3")
    path = str(tmp_path / "x.parquet")
    assert run_cli("export", "-r", "-a", source, "-o", path, "--layout", layout,
                   "--no-progress").status == 0
    readers = {"pyarrow": pq.read_table,
               "pandas": lambda p: pd.read_parquet(p, dtype_backend="numpy_nullable")}
    for name, reader in readers.items():
        copy = str(tmp_path / name)
        pmi.write_frame(reader(path), copy)
        _same_archive(source, copy, OMNIBUS_EVENTS)


def test_fields_say_what_they_are() -> None:
    """A wide Arrow column's field metadata names its metric's pmID, type, semantics,
    units, instance domain and instance, for any Arrow reader."""
    table = bulk.read_archive(need_qa_archive("20180102"), ["disk.dev.read"]).to_arrow()
    field = table.schema.field("disk.dev.read[sda]")
    assert field.metadata[b"pcp.pmid"] == b"60.0.4"
    assert field.metadata[b"pcp.semantics"] == b"counter"
    assert field.metadata[b"pcp.type"] == b"U64"
    assert field.metadata[b"pcp.units"] == b"count"
    assert field.metadata[b"pcp.indom"] == b"60.1"
    assert field.metadata[b"pcp.instance"] == b"sda"
    facts = json.loads(table.schema.metadata[b"pcp"])
    assert facts["label"]["hostname"] == "bozo"


def test_user_built_frame_as_before(tmp_path) -> None:
    """The frame read_archive made keeps mem.util.used's descriptor and host; the same
    frame without the archive's facts (as a user builds one, or attrs dropped) is
    written as it always was: instant, unitless, in domain 245, on this machine's host."""
    frame = bulk.read_archive(need_qa_archive("20180102"), ["mem.util.used"]).to_pandas()
    kept, plain = str(tmp_path / "kept"), str(tmp_path / "plain")
    pmi.write_frame(frame, kept)
    text = dumplog(kept, "-dl")
    assert "PMID: 60.1.1 (mem.util.used)" in text
    assert "Semantics: instant  Units: Kbyte" in text
    assert "from host bozo" in text
    frame.attrs.clear()
    pmi.write_frame(frame, plain)
    text = dumplog(plain, "-dl")
    assert "PMID: 245.0.1 (mem.util.used)" in text
    assert "Semantics: instant  Units: none" in text
    assert "from host bozo" not in text


@pytest.mark.parametrize("damage", [
    {"metrics": {"mem.util.used": {"pmid": "60.1.1"}}},
    {"metrics": {"mem.util.used": {"pmid": 1, "type": 3, "sem": 3, "units": 0, "indom": -1,
                                   "instances": [1, 2], "instance_names": ["a"]}}},
    {"indoms": {"60.1": [[0, [1], ["a"]]], "1": [["x", [1], ["a"]]]}, "marks": "no"},
    {"label": {"hostname": 7, "version": "3"}, "metrics": []},
])
def test_edited_facts_are_left_out(damage, tmp_path) -> None:
    """Facts edited out of their form (a frame's attrs are the user's) are left out, and
    what they described is written as a user-built frame's: no exception."""
    frame = bulk.read_archive(need_qa_archive("20180102"), ["mem.util.used"]).to_pandas()
    facts = json.loads(frame.attrs["pcp"])
    facts.update(damage)
    frame.attrs["pcp"] = json.dumps(facts)
    assert pmi.write_frame(frame, str(tmp_path / "copy")) > 0
