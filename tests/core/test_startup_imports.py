"""What PCP's tools pay at start-up for importing this package: pcp.pmapi, pcp.pmconfig,
pcp.pmcc and pcp.pmi (what pmrep, pmiostat and the pcp2xxx tools import) must not pull
in modules that cost milliseconds and that a tool reading an archive does not use. The
test imports them in a fresh interpreter and lists the heavy modules it finds."""
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
