"""How a process chooses its API level (pcp/_core/level.py): the PCP_NATIVE_API_LEVEL
override, else the installed PCP's version from pcp.conf, else the newest level. Each case
is a fresh interpreter (the level is fixed at import), all started at once."""
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import difftest

from pcp._core.level import FIRST_VERSION, LEVELS, level_for_version, parse_level

PROBE = ("import json, cpmapi\n"
         "from pcp._core.level import API_LEVEL\n"
         "print(json.dumps([list(API_LEVEL), hasattr(cpmapi, 'PM_ERR_ARG')]))\n")


def _level_of(env):
    full = difftest._env(True)
    for key in ("PCP_NATIVE_API_LEVEL", "PCP_CONF", "PCP_DIR"):
        full.pop(key, None)
    full.update(env)
    done = subprocess.run([difftest.OUR_PYTHON, "-c", PROBE], env=full, cwd=difftest._cwd(),
                          capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout)


def test_the_level_chosen(tmp_path):
    cases = []
    for version in ("5.3.7", "6.0.3", "6.2.1", "6.2.2", "6.3.8", "7.0.1", "7.2.2"):
        conf = tmp_path / ("pcp-%s.conf" % version)
        conf.write_text("PCP_VERSION=%s\nPCP_VAR_DIR=/var/lib/pcp\n" % version)
        cases.append(({"PCP_CONF": str(conf)}, level_for_version(version)))
    cases += [
        ({"PCP_NATIVE_API_LEVEL": "6.3"}, (6, 3)),
        ({"PCP_NATIVE_API_LEVEL": "7"}, (7, 2)),
        # the override wins over pcp.conf
        ({"PCP_NATIVE_API_LEVEL": "6.0", "PCP_CONF": cases[-1][0]["PCP_CONF"]}, (6, 0)),
        # no pcp.conf: the newest level
        ({"PCP_CONF": str(tmp_path / "missing.conf")}, LEVELS[-1]),
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda case: _level_of(case[0]), cases))
    for (env, level), answer in zip(cases, answers):
        assert answer == [list(level), level >= (6, 3)], (env, answer)
    assert [level for _, level in cases[:7]] == [
        (6, 0), (6, 0), (6, 0), (6, 3), (6, 3), (7, 2), (7, 2)]


def test_a_bad_override_is_refused():
    answer = _level_of({"PCP_NATIVE_API_LEVEL": "6.2"})
    assert answer == {"error": "ValueError: PCP_NATIVE_API_LEVEL='6.2': expected one of "
                               "6.0, 6.3, 7.2"}


@pytest.mark.parametrize("text, level", [("6.0", (6, 0)), ("6.3", (6, 3)), ("7.2", (7, 2)),
                                         ("7", (7, 2))])
def test_parse_level(text, level):
    assert parse_level(text) == level


def test_versions_map_to_the_first_version_table():
    for level in LEVELS:
        first = ".".join(map(str, FIRST_VERSION[level]))
        if level != LEVELS[0]:
            assert level_for_version(first) == level
    assert level_for_version("6") is None
    assert level_for_version("garbage") is None
