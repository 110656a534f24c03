#!/usr/bin/env bash
# One command on a fresh Debian machine: when run as root, install PCP (pmcd, the sample
# PMDA, and the official binding used as the test reference); build pcp-native with its
# extras into .venv; then run the main job: the pcp-native command line on the archive
# bundled with the package (no pmcd needed for that).
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
.venv/bin/pip install -q --upgrade pip 'setuptools>=77' >/dev/null 2>&1 || true
.venv/bin/pip install -q -e '.[test,parquet]'

if [ "${1:-}" != "--no-example" ]; then
    # The main job: the bundled pmlogger archive (pcp/data/demo.*) through the CLI.
    pcp() { echo "\$ python -m pcp $*"; .venv/bin/python -m pcp "$@"; echo; }
    pcp dump -l
    pcp info -dt kernel.all.load network.interface.in.bytes
    pcp info -f sample.colour kernel.uname.release
    pcp fetch -a "$(.venv/bin/python -c 'from pcp.cli._common import DEMO_ARCHIVE as a; print(a)')" \
        -s 5 kernel.all.cpu.user
    pcp export kernel.all.cpu.user kernel.all.load network.interface.in.bytes
fi
