"""Level 7.2 against Debian sid's python3-pcp 7.2.2, on what PCP 7 changed in the binding
(level72_program.py): results with timespec timestamps from pmFetch and pmFetchArchive,
pmGetArchiveLabel / pmGetArchiveEnd / pmParseInterval / pmSetMode / pmOptions in timespecs,
the HighRes names gone, pmGetProgname, pmSetDebug and pmDebug(names), the extra units in
pmUnits, pmUnits_int, pmUnitsStr, pmParseUnitsStr and pmConvScale, and pcp.pmi's 7.x calls
(pmiWrite of a float or datetime, pmiPutResult, pmiSetZoneinfo, pmiSetImportProgram, label
values, error texts).

One program, two runs in parallel (the sid root's python3, this package on the host at
PCP_NATIVE_API_LEVEL=7.2), compared section by section; the archive each side's pcp.pmi
wrote is then dumped by sid's own pmdumplog, and the two dumps must be the same but for
the writer's process id.
"""
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import roots
from support.difftest import assert_equal

from level72_program import program

pytestmark = [pytest.mark.reference, pytest.mark.pmcd]

LEVEL = (7, 2)
ARCHIVE = roots.QA_ARCHIVES + "/archives/20180102"
SECTIONS = ("label", "end", "records", "setmode", "archive_errors", "live", "live_names",
            "intervals", "interval_classes", "debug", "units_str", "units_int",
            "units_parse", "units_convert", "units_convert_mixed", "options",
            "prepare_execute", "names", "pmi_errors", "pmi_calls", "pmi_names",
            "pmi_import_program")
#: each side's environment: sid's pcp.conf asks for version 3 archives (the host's, which
#: this package reads, for version 2)
ENV = {"TZ": "UTC", "PCP_ARCHIVE_VERSION": "3"}


@pytest.fixture(scope="module")
def answers(sid_scratch):
    """{"ref": 7.2.2's answer, "ours": this package's at level 7.2}; each side's pcp.pmi
    archive is written to <scratch>/<side>/written."""
    on_host, in_root = sid_scratch
    for side in ("ref", "ours", "ref-run", "ours-run"):
        os.mkdir(os.path.join(on_host, side))
    ref_env = dict(ENV, PCP_IMPORTRUN_DIR=in_root + "/ref-run")
    our_env = dict(ENV, PCP_IMPORTRUN_DIR=on_host + "/ours-run")
    with ThreadPoolExecutor(max_workers=2) as pool:
        ref = pool.submit(roots.run_reference, LEVEL,
                          program(ARCHIVE, in_root + "/ref"), ref_env)
        ours = pool.submit(roots.run_ours, LEVEL, program(ARCHIVE, on_host + "/ours"), our_env)
        out = {"ref": ref.result(), "ours": ours.result()}
    assert "__crash__" not in out["ref"], out["ref"]
    return out


def _section(answer, section):
    if "__crash__" in answer:
        raise AssertionError("our side crashed: %s\n%s" % (answer["__crash__"],
                                                           answer.get("stderr", "")))
    return answer[section]


@pytest.mark.parametrize("section", SECTIONS)
def test_section_matches_7_2_2(answers, section):
    assert_equal(_section(answers["ours"], section), _section(answers["ref"], section),
                 "%s at 7.2" % section)


def test_pmi_archives_dump_alike(answers, sid_scratch):
    """sid's pmdumplog prints both archives the same (every record, the label, metadata,
    labels, help text and the temporal index), but for the writer's process id."""
    _, in_root = sid_scratch
    dumps = []
    for side in ("ref", "ours"):
        command = ["chroot", roots.root_dir(LEVEL), "env", "TZ=UTC", "pmdumplog", "-a",
                   "-e", "-h", "-I", "-L", "-x", in_root + "/%s/written" % side]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        dumps.append(re.sub(r"PID for pmlogger: \d+", "PID for pmlogger: N", proc.stdout))
    assert "Log Format Version 3" in dumps[0] and "temperature (C)" in dumps[0]
    assert dumps[1] == dumps[0]
