#!/usr/bin/env bash
# Install what the tests need from Debian: PCP 6.0.3 (pmcd, the reference python3-pcp
# binding, libpcp headers for the benchmark's C clients), gcc, clang with its
# libFuzzer runtime for the fuzz targets, and Python's venv and headers; start pmcd without systemd and install the
# sample PMDA, then the 6.3.8 and 7.2.2 reference roots (.ci/pcp-roots.sh). python3-requests: pmdaopenmetrics on the reference binding (tests/pmda). Idempotent; needs root.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
    echo "install-pcp.sh: must run as root" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
packages="pcp python3-pcp libpcp3-dev libpcp-pmda3-dev make gcc clang libclang-rt-14-dev binutils python3-venv python3-dev xz-utils pcp-testsuite openssl sasl2-bin libsasl2-modules python3-requests"
missing=""
for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done

# The pcp package's maintainer scripts call systemctl; there is no systemd here.
shim=$(mktemp -d)
printf '#!/bin/sh\nexit 0\n' > "$shim/systemctl"
chmod +x "$shim/systemctl"
export PATH="$shim:$PATH"

if [ -n "$missing" ]; then
    apt-get update -qq
    # apt hands dpkg its own PATH (DPkg::Path), so the shim must be named there too.
    log=$(mktemp)
    if ! apt-get install -y -qq --no-install-recommends \
            -o DPkg::Path="$shim:/usr/sbin:/usr/bin:/sbin:/bin" $missing >"$log" 2>&1; then
        # a maintainer script that wants systemd can still fail after unpacking: finish
        # the configuration, and report the install only if that fails too
        if ! PATH="$shim:$PATH" dpkg --configure -a >>"$log" 2>&1; then
            cat "$log" >&2
            echo "install-pcp.sh: apt-get install$missing failed" >&2
            exit 1
        fi
    fi
    rm -f "$log"
    for p in $packages; do
        dpkg -s "$p" >/dev/null 2>&1 || { echo "install-pcp.sh: $p did not install" >&2; exit 1; }
    done
fi

pmcd_running() {
    pmprobe -h local: pmcd.version >/dev/null 2>&1
}

if ! pmcd_running; then
    /etc/init.d/pmcd start >/dev/null 2>&1 || /etc/init.d/pmcd restart >/dev/null 2>&1 || true
fi
for _ in $(seq 1 30); do pmcd_running && break; sleep 1; done
pmcd_running || { echo "install-pcp.sh: pmcd did not start" >&2; exit 1; }

sample_ready() {
    [ "$(pmprobe -h local: sample.long.one 2>/dev/null | awk '{print $2}')" = 1 ]
}

if ! sample_ready; then
    (cd /var/lib/pcp/pmdas/sample && ./Install </dev/null >/dev/null 2>&1)
fi
for _ in $(seq 1 30); do
    sample_ready && break
    sleep 1
done
sample_ready || { echo "install-pcp.sh: sample PMDA not answering" >&2; exit 1; }
rm -rf "$shim"
echo "install-pcp.sh: pmcd $(pmprobe -v -h local: pmcd.version | awk '{print $3}') with sample PMDA ready"

# The references of API levels 6.3 and 7.2 (tests/versions): Debian roots with python3-pcp
# 6.3.8 and 7.2.2, kept under /var/cache/pcp-native/roots between runs.
bash "$(dirname "$0")/pcp-roots.sh"
