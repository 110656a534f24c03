#!/usr/bin/env bash
# A contributor's set-up (scripts/test.sh runs it when .venv is missing): as root, PCP
# 6.0.3 from Debian (pmcd with the sample PMDA, the official binding that the tests
# compare with, pcp-testsuite's QA archives, clang for the fuzzers, the SASL and TLS
# tools of the private pmcds: .ci/install-pcp.sh); then .venv with pcp-native built in
# place and its [test] extra. Not root: the PCP side must be there already, and it says
# what is missing. Every failure stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then
    bash .ci/install-pcp.sh
else
    lacking=""
    command -v pmcd >/dev/null 2>&1 || [ -x /usr/lib/pcp/bin/pmcd ] || lacking="$lacking pcp"
    /usr/bin/python3 -c 'from pcp import pmapi' 2>/dev/null || lacking="$lacking python3-pcp"
    [ -d /var/lib/pcp/testsuite ] || lacking="$lacking pcp-testsuite"
    if [ -n "$lacking" ]; then
        echo "setup.sh: not root, and PCP's packages are missing:$lacking" >&2
        echo "setup.sh: run it as root once (it installs them with .ci/install-pcp.sh)" >&2
        exit 1
    fi
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
echo "setup.sh: .venv ready ($(.venv/bin/python -c 'import pcp; print(pcp.__version__)'))"
