#!/usr/bin/env bash
# The whole test suite: unit, differential (against the official binding on the live
# pmcd), hostile-server and decoder tests; then the same suite with the C core built
# with AddressSanitizer/UBSan; then every fuzz target for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    bash scripts/setup.sh --no-example
fi

status=0
.venv/bin/python -m pytest -q -p no:cacheprovider tests "$@" || status=$?

# Installed in a virtualenv beside PCP, the package must leave PCP's own Python tools on
# the official binding (pmpython runs the first python3 on PATH: the system's, until the
# venv is activated), and take over only where the venv's interpreter runs.
beside_pcp() {
    local venv=$1 official ours
    command -v pmpython >/dev/null || { echo "beside PCP: pmpython missing"; return 1; }
    official=$(cd / && env -u VIRTUAL_ENV PATH="/usr/local/bin:/usr/bin:/bin" pmpython -c \
        'from pcp import pmapi; print(getattr(pmapi, "__implementation__", "official"), pmapi.__file__)')
    ours=$(cd / && PATH="$venv/bin:/usr/bin:/bin" pmpython -c \
        'from pcp import pmapi; print(getattr(pmapi, "__implementation__", "official"), pmapi.__file__)')
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

# The package must also install as a normal (non-editable) wheel into a fresh venv.
if [ "${SKIP_WHEEL:-}" != 1 ]; then
    tmp=$(mktemp -d)
    python3 -m venv "$tmp/venv"
    if "$tmp/venv/bin/pip" install -q . >"$tmp/pip.log" 2>&1 &&
       (cd "$tmp" && "$tmp/venv/bin/python" -c \
        'from pcp import pmapi; import cpmapi; c = pmapi.pmContext(); print("wheel install: ok,", c.pmGetContextHostName())') &&
       (cd "$tmp" && "$tmp/venv/bin/pcp-native" dump -l >/dev/null &&
        "$tmp/venv/bin/python" -m pcp info -f hinv.ncpu >/dev/null &&
        echo "wheel install: the bundled archive and the CLI work") &&
       beside_pcp "$tmp/venv"; then
        :
    else
        cat "$tmp/pip.log"; echo "wheel install: FAILED"; status=1
    fi
    rm -rf "$tmp"
fi

if [ "${SKIP_SANITIZE:-}" != 1 ] && [ -x .ci/sanitize.sh ]; then
    PYTHON="$PWD/.venv/bin/python" bash .ci/sanitize.sh -q -p no:cacheprovider tests || status=$?
fi
if [ "${SKIP_FUZZ:-}" != 1 ] && [ -x .ci/fuzz.sh ]; then
    bash .ci/fuzz.sh || status=$?
fi
exit $status
