"""What PCP's tools pay at start-up for importing this package: pcp.pmapi, pcp.pmconfig,
pcp.pmcc and pcp.pmi (what pmrep, pmiostat and the pcp2xxx tools import) must not pull
in modules that cost milliseconds and that a tool reading an archive does not use. The
test imports them in a fresh interpreter and lists the heavy modules it finds."""
import pytest

from support.difftest import run_script

# module: why it is left out of a start
HEAVY = {
    "typing": "~3 ms; annotations are strings, typing's names are imported for type "
              "checkers only (TYPE_CHECKING)",
    "dataclasses": "imports inspect and ast",
    "inspect": "large",
    "ast": "large",
    "socket": "host contexts (pcp._live) are imported with the first host context",
    "json": "label sets are parsed by pcp._libpcp.label_json when first asked for",
    "fractions": "imports decimal",
    "decimal": "large",
    "pcp._live": "host contexts: imported with the first one",
    "pcp._decode.events": "event records: imported with the first event metric",
    "pcp._archive.writer": "pcp.pmi's writer: imported with the first pmiLogImport",
    "pcp._libpcp.getdate": "the free-form date grammar: imported with the first such date",
    "numpy": "the bulk readers' only",
}


def test_tool_imports_stay_light():
    code = ("import sys\n"
            "import pcp.pmapi, pcp.pmconfig, pcp.pmcc, pcp.pmi\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    # run_script, not "python -c": under .ci/sanitize.sh it keeps the sanitized build's
    # preload and path
    run = run_script(code, [], ours=True)
    assert run["status"] == 0, run["stderr"]
    loaded = set(run["stdout"].split())
    assert "pcp.pmconfig" in loaded and "pcp._core.native" in loaded, sorted(loaded)
    found = {name: why for name, why in HEAVY.items() if name in loaded}
    assert not found, found


# What a short program (import, one host context, pmLookupName, pmFetch) does not use:
# imported where first needed, so that pcp-uptime or a one-fetch script does not pay for
# them (issue 34). module: where it comes from instead
LAZY = {
    "re": "the interval grammar, PMCD_*_TIMEOUT values, a password in a host spec, "
          "the derived-metric lexer: each compiles its patterns when first used",
    "enum": "re's and socket.py's",
    "socket": "host contexts connect over _socket",
    "selectors": "a receive that must wait, a TCP connect",
    "pathlib": "-", "urllib": "-", "dataclasses": "-", "inspect": "-", "logging": "-",
    "typing": "-", "json": "-",
    "pcp._libpcp.options": "command lines: the first pmOptions or cpmapi options call",
    "pcp._libpcp.getopt": "the same",
    "pcp._libpcp.fetchgroup": "the first pmapi.fetchgroup",
    "pcp._libpcp.pmns": "pmLoadNameSpace, LOCAL contexts",
    "pcp._libpcp.zones": "the first time zone asked for",
    "pcp._libpcp.metricspec": "pmParseMetricSpec",
    "pcp._libpcp.printvalue": "pmPrintValue",
    "pcp._libpcp.derived.parser": "the first derived expression parsed (a remembered "
                                  "clean configuration is not parsed at start)",
    "pcp._libpcp.derived.lexer": "the same",
    "pcp._libpcp.derived.bind": "the first derived metric used",
    "pcp._archive": "archive contexts", "pcp._local": "LOCAL contexts",
    "pcp._bulk": "the bulk readers",
}


_AT_START = []


def _at_start():
    """What the interpreter has imported before the program's first line (an editable
    install's finder imports pathlib, re and more): not the package's doing."""
    if not _AT_START:
        run = run_script("import sys\nprint('\\n'.join(sorted(sys.modules)))\n", [],
                         ours=True)
        assert run["status"] == 0, run["stderr"]
        _AT_START.append(set(run["stdout"].split()))
    return _AT_START[0]


def _lazy_found(loaded):
    loaded = set(loaded) - _at_start()
    return sorted(name for name in LAZY
                  if name in loaded or any(m.startswith(name + ".") for m in loaded))


def test_pmapi_import_leaves_the_rest_for_later():
    code = ("import sys\n"
            "from pcp import pmapi\n"
            "import cpmapi\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    run = run_script(code, [], ours=True, env={"PCP_DERIVED_CONFIG": ""})
    assert run["status"] == 0, run["stderr"]
    loaded = set(run["stdout"].split())
    assert "pcp.pmapi" in loaded and "pcp._libpcp.derived.registry" in loaded
    assert _lazy_found(loaded) == []


@pytest.mark.pmcd
def test_one_fetch_program_imports_what_it_uses(tmp_path):
    """A host context, pmLookupName, pmFetch, pmExtractValue (no derived metric used),
    with a derived-metric configuration (clean, so remembered by the first run and not
    parsed by the second): none of LAZY is imported."""
    config = tmp_path / "derived.conf"
    config.write_text("startup.test.sum = sample.long.one + sample.long.ten\n"
                      "startup.test.sum(oneline) = a sum\n")
    code = ("import sys\n"
            "import cpmapi as c_api\n"
            "from pcp import pmapi\n"
            "ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, 'local:')\n"
            "pmids = ctx.pmLookupName(['sample.long.one'])\n"
            "descs = ctx.pmLookupDescs(pmids)\n"
            "result = ctx.pmFetch(pmids[:1])\n"
            "vset = result.contents.get_vset(0)\n"
            "print(ctx.pmExtractValue(vset.valfmt, vset.vlist[0], descs[0].type,\n"
            "                         c_api.PM_TYPE_64).ll)\n"
            "ctx.pmFreeResult(result)\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    env = {"PCP_DERIVED_CONFIG": str(config), "PCP_NATIVE_CACHE_DIR": str(tmp_path / "cache")}
    first = run_script(code, [], ours=True, env=env)
    assert first["status"] == 0, first["stderr"]
    assert "pcp._libpcp.derived.parser" in first["stdout"].split()     # parsed, remembered
    run = run_script(code, [], ours=True, env=env)
    assert run["status"] == 0 and run["stderr"] == "", run["stderr"]
    lines = run["stdout"].split()
    assert lines[0] == "1"
    assert _lazy_found(set(lines[1:])) == []
