#!/usr/bin/env bash
# A user's first command: install pcp-native into .venv and run its command line on the
# pmlogger archive bundled with the package. It needs Python 3.9+ with venv, a C compiler
# and Python's headers (to build the C core), and nothing of PCP: no libpcp, no pmcd, no
# root. Run as root on Debian or Ubuntu, it apt-installs those three if they are missing;
# otherwise it says what to install. Any failure stops it with the failing step's output.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=${VENV:-.venv}

missing=()
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null ||
    { echo "demo.sh: $python is not Python 3.9 or newer" >&2; exit 1; }
"$python" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
command -v "${CC:-cc}" >/dev/null 2>&1 || missing+=(gcc)
[ -e "$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ] ||
    missing+=(python3-dev)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "demo.sh: installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "demo.sh: missing ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
echo "demo.sh: installing pcp-native into $venv (builds the C core)"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -e .

# The main job: the bundled archive (pcp/data/demo.*, ten seconds of a small Linux host
# with the sample PMDA) through the command line, as PCP's pmdumplog, pminfo and pmval
# would show it, then exported to CSV.
run() { echo "\$ pcp-native $*"; "$venv/bin/pcp-native" "$@"; echo; }
run dump --demo -l
run info --demo -dt kernel.all.load network.interface.in.bytes
run info --demo -f sample.colour kernel.uname.release
run fetch --demo -s 5 kernel.all.cpu.user
run export --demo kernel.all.cpu.user kernel.all.load network.interface.in.bytes
echo "demo.sh: done; try $venv/bin/pcp-native --help, or see README.md"
