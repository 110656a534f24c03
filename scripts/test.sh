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

# The package must also install as a normal (non-editable) wheel into a fresh venv.
if [ "${SKIP_WHEEL:-}" != 1 ]; then
    tmp=$(mktemp -d)
    python3 -m venv "$tmp/venv"
    if "$tmp/venv/bin/pip" install -q . >"$tmp/pip.log" 2>&1 &&
       (cd "$tmp" && "$tmp/venv/bin/python" -c \
        'from pcp import pmapi; import cpmapi; c = pmapi.pmContext(); print("wheel install: ok,", c.pmGetContextHostName())') &&
       (cd "$tmp" && "$tmp/venv/bin/pcp-native" dump -l >/dev/null &&
        "$tmp/venv/bin/python" -m pcp info -f hinv.ncpu >/dev/null &&
        echo "wheel install: the bundled archive and the CLI work"); then
        :
    else
        cat "$tmp/pip.log"; echo "wheel install: FAILED"; status=1
    fi
    rm -rf "$tmp"
fi

if [ "${SKIP_SANITIZE:-}" != 1 ] && [ -x .ci/sanitize.sh ]; then
    bash .ci/sanitize.sh -q -p no:cacheprovider tests || status=$?
fi
if [ "${SKIP_FUZZ:-}" != 1 ] && [ -x .ci/fuzz.sh ]; then
    bash .ci/fuzz.sh || status=$?
fi
exit $status
