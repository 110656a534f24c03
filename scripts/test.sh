#!/usr/bin/env bash
# The tests, by pass. Sets up first when .venv lacks the test tools (scripts/setup.sh: as root it
# installs PCP 6.0.3, the reference binding, the sample PMDA and the test tools).
#
#   bash scripts/test.sh [PASS] [pytest args...]
#
#   quick     (default) the whole pytest suite on every core (pytest-xdist), with the QA
#             archive sweep's fixed sample; then the wheel install beside PCP's tools
#   sweep     the QA archive sweep over all of pcp-testsuite's archives
#   sanitize  the C-facing tests against the C core built with ASan/UBSan (.ci/sanitize.sh),
#             which also checks that they drive every C entry point
#   fuzz      every libFuzzer target for a bounded time (.ci/fuzz.sh)
#   all       what CI runs: quick with the full sweep in place of the sample, sanitize, fuzz
#
# Each pass prints its time. pytest args go to the pytest passes (quick, sweep, sanitize),
# e.g. `bash scripts/test.sh quick tests/archive -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

pass=quick
case "${1:-}" in
    quick|sweep|sanitize|fuzz|all) pass=$1; shift ;;
esac

if ! .venv/bin/python -c 'import pytest, xdist, hypothesis, pcp._native' 2>/dev/null; then
    bash scripts/setup.sh      # no .venv yet, or scripts/demo.sh's (without the [test] extra)
elif [ "$(id -u)" -eq 0 ] && [ "$pass" != fuzz ]; then
    bash .ci/install-pcp.sh    # pmcd and the sample PMDA up (quick when they are)
fi
# An editable install does not rebuild the C core: do it when csrc/ is newer than the build
built=$(ls pcp/_native*.so 2>/dev/null | head -n 1)
if [ -n "$built" ] && [ "$pass" != fuzz ] &&
   [ -n "$(find csrc -maxdepth 1 \( -name '*.[ch]' -o -name build_ffi.py \) -newer "$built")" ]; then
    echo "test.sh: csrc/ changed since the C core was built: rebuilding it in place"
    .venv/bin/python setup.py -q build_ext --inplace
fi
# pytest-xdist's workers; tests that share a pmcd's state run in one of them
jobs=${PCP_TEST_JOBS:-$(nproc)}

status=0
timed() {
    local name=$1 start=$SECONDS rc=0
    shift
    echo "==== $name"
    "$@" || rc=$?
    echo "==== $name: $((SECONDS - start)) s, exit status $rc"
    [ $rc -eq 0 ] || status=1
}

pytest_pass() {
    .venv/bin/python -m pytest -q -p no:cacheprovider -n "$jobs" --dist loadgroup "$@"
}

# Installed as a normal (non-editable) wheel in a fresh venv beside PCP, the package must
# work from anywhere and leave PCP's own Python tools on the official binding (pmpython
# runs the first python3 on PATH: the system's, until the venv is activated).
wheel_install() {
    local tmp rc=0
    tmp=$(mktemp -d)
    python3 -m venv "$tmp/venv"
    if ! "$tmp/venv/bin/pip" install -q . >"$tmp/pip.log" 2>&1; then
        cat "$tmp/pip.log"; echo "wheel install: pip failed"; rm -rf "$tmp"; return 1
    fi
    (cd "$tmp" && "$tmp/venv/bin/python" -c \
        'from pcp import pmapi; import cpmapi; c = pmapi.pmContext(); print("wheel install: ok,", c.pmGetContextHostName())') &&
    (cd "$tmp" && "$tmp/venv/bin/pcp-native" dump --demo -l >/dev/null &&
        "$tmp/venv/bin/python" -m pcp info -f hinv.ncpu >/dev/null &&
        echo "wheel install: the bundled archive and the CLI work") &&
    beside_pcp "$tmp/venv" || rc=1
    rm -rf "$tmp"
    return $rc
}

beside_pcp() {
    local venv=$1 official ours probe
    probe='from pcp import pmapi; print(getattr(pmapi, "__implementation__", "official"), pmapi.__file__)'
    command -v pmpython >/dev/null || { echo "beside PCP: pmpython missing"; return 1; }
    official=$(cd / && env -u VIRTUAL_ENV PATH="/usr/local/bin:/usr/bin:/bin" pmpython -c "$probe")
    ours=$(cd / && PATH="$venv/bin:/usr/bin:/bin" pmpython -c "$probe")
    case "$official" in
        "official /usr/lib/python3/dist-packages/pcp/pmapi.py") ;;
        *) echo "beside PCP: PCP's tools no longer get the official binding: $official"; return 1 ;;
    esac
    case "$ours" in
        "pcp-native "*) ;;
        *) echo "beside PCP: the activated venv does not give pcp-native: $ours"; return 1 ;;
    esac
    (cd / && env -u VIRTUAL_ENV PATH="/usr/local/bin:/usr/bin:/bin" \
        pmrep -s 2 -t 0.2 -p sample.long.one >/dev/null) ||
        { echo "beside PCP: the official pmrep fails"; return 1; }
    echo "wheel install: beside PCP, its tools keep the official binding; the venv's python3 gets pcp-native"
}

sanitize() {
    PYTHON="$PWD/.venv/bin/python" bash .ci/sanitize.sh "$@"
}

case "$pass" in
    quick)
        export PCP_SWEEP=quick
        timed "pytest (QA sweep: sample)" pytest_pass tests "$@"
        timed "wheel install" wheel_install ;;
    sweep)
        export PCP_SWEEP=full
        timed "QA archive sweep (full)" pytest_pass tests/corpus/test_archive_sweep.py "$@" ;;
    sanitize)
        timed "sanitizer pass" sanitize "$@" ;;
    fuzz)
        timed "fuzzers" bash .ci/fuzz.sh ;;
    all)
        export PCP_SWEEP=full
        timed "pytest (QA sweep: full)" pytest_pass tests "$@"
        timed "wheel install" wheel_install
        timed "sanitizer pass" sanitize
        timed "fuzzers" bash .ci/fuzz.sh ;;
esac
exit $status
