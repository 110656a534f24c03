#!/usr/bin/env bash
# One command on a fresh Debian machine: install PCP (pmcd, the sample PMDA, and the
# official binding used as the test reference) when run as root, build pcp-native into
# .venv, then run the main job: a script written for the official pcp.pmapi, unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then
    bash .ci/install-pcp.sh
else
    echo "setup.sh: not root, skipping the PCP server packages (pmcd must already run)"
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/pip install -q -e '.[test,parquet]'

if [ "${1:-}" != "--no-example" ]; then
    .venv/bin/python examples/pmfetch.py --samples 2 --interval 0.5
fi
