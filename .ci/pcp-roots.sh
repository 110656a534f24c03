#!/usr/bin/env bash
# The reference roots of API levels 6.3 and 7.2 (tests/versions, tests/support/roots.py):
# Debian trixie with pcp + python3-pcp 6.3.8 and Debian sid with 7.2.2, each a debootstrap
# minbase root under $PCP_NATIVE_ROOTS (default /var/cache/pcp-native/roots), kept between
# CI runs where the machine keeps that folder. Idempotent:
#   - a root whose etc/pcp.conf says the expected PCP_VERSION and whose dpkg has python3-pcp
#     fully installed is reused; anything else there (a half-built root) is built again;
#   - the tools for building this package inside a root (gcc, python3-dev, cffi, numpy,
#     setuptools: the system packages, lighter than a venv and pip) and the SASL mechanisms
#     (libsasl2-modules: the root's pmcd and client authenticate, tests/versions) are added
#     when missing;
#   - /proc and the QA archives (/var/lib/pcp/testsuite) are bind-mounted when not yet;
#   - the default PMNS is built when missing (a private pmcd of the root's PCP, tests/versions);
#   - a pmcd or pmlogger that pcp's postinst started inside a new root is stopped (by process
#     id: those whose root is that folder); a reused root's daemons are left to the tests.
# Never unmounts or removes a root it did not find half-built. Needs root's uid.
set -euo pipefail

ROOTS=${PCP_NATIVE_ROOTS:-/var/cache/pcp-native/roots}
MIRROR=${PCP_NATIVE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
QA=/var/lib/pcp/testsuite
BUILD_TOOLS="gcc libc6-dev python3-dev python3-cffi python3-numpy python3-setuptools bzip2 xz-utils
             libsasl2-modules"
start=$SECONDS

if [ "$(id -u)" != 0 ]; then
    echo "pcp-roots.sh: needs root (debootstrap, chroot, mount)" >&2
    exit 1
fi

in_root() {  # in_root DIR COMMAND...: run a shell command in the root, apt non-interactive
    local dir=$1; shift
    chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 HOME=/root sh -c "$*"
}

installed() {  # installed DIR PACKAGE: dpkg inside the root has PACKAGE fully installed
    [ "$(chroot "$1" dpkg-query -W -f='${Status}' "$2" 2>/dev/null)" = "install ok installed" ]
}

mount_into() {  # mount_into DIR PATH: bind-mount the host's PATH at DIR/PATH unless it is
    local dir=$1 path=$2
    mkdir -p "$dir$path"
    mountpoint -q "$dir$path" || mount --bind "$path" "$dir$path"
}

stop_daemons() {  # the pmcd/pmlogger whose executable lies inside DIR (their postinst's)
    local dir=$1 pid exe
    for pid in $(pgrep -x 'pmcd|pmlogger|pmie|pmproxy' || true); do
        exe=$(readlink "/proc/$pid/root" 2>/dev/null || true)
        if [ "$exe" = "$dir" ]; then
            kill "$pid" 2>/dev/null || true
        fi
    done
}

build_root() {  # build_root SUITE VERSION
    local suite=$1 version=$2 dir=$ROOTS/$1
    if grep -qx "PCP_VERSION=$version" "$dir/etc/pcp.conf" 2>/dev/null && installed "$dir" python3-pcp; then
        echo "== $suite: reused (PCP $version)"
    else
        echo "== $suite: building (PCP $version)"
        if [ -d "$dir" ]; then   # half-built: unmount what an earlier run mounted, start over
            for path in "$dir$QA" "$dir/proc"; do
                mountpoint -q "$path" && umount "$path"
            done
            rm -rf --one-file-system "$dir"
        fi
        mkdir -p "$ROOTS"
        debootstrap --variant=minbase "$suite" "$dir" "$MIRROR" > "$ROOTS/$suite.debootstrap.log" 2>&1 \
            || { tail -n 30 "$ROOTS/$suite.debootstrap.log" >&2; exit 1; }
        # the registry's release files are a fixed snapshot; the postinsts call systemctl
        echo 'Acquire::Check-Valid-Until "false";' > "$dir/etc/apt/apt.conf.d/99novalid"
        mkdir -p "$dir/usr/local/sbin"
        printf '#!/bin/sh\nexit 0\n' > "$dir/usr/local/sbin/systemctl"
        chmod +x "$dir/usr/local/sbin/systemctl"
        mount_into "$dir" /proc
        in_root "$dir" "apt-get update -q && apt-get install -y -q --no-install-recommends pcp python3-pcp" \
            > "$ROOTS/$suite.apt.log" 2>&1 || { tail -n 30 "$ROOTS/$suite.apt.log" >&2; exit 1; }
        stop_daemons "$dir"     # what pcp's postinst started (a reused root's are a test's)
        grep -qx "PCP_VERSION=$version" "$dir/etc/pcp.conf" || {
            echo "pcp-roots.sh: $suite installed $(grep PCP_VERSION= "$dir/etc/pcp.conf"), not $version" >&2
            exit 1
        }
    fi
    mount_into "$dir" /proc
    mount_into "$dir" "$QA"
    local missing="" package
    for package in $BUILD_TOOLS; do
        installed "$dir" "$package" || missing="$missing $package"
    done
    if [ -n "$missing" ]; then
        echo "== $suite: installing$missing"
        in_root "$dir" "apt-get install -y -q --no-install-recommends $missing || \
                        (apt-get update -q && apt-get install -y -q --no-install-recommends $missing)" \
            > "$ROOTS/$suite.tools.log" 2>&1 || { tail -n 30 "$ROOTS/$suite.tools.log" >&2; exit 1; }
    fi
    # the default PMNS (and stdpmid, which PMDAs' root files include), which the postinst
    # builds only where pmcd starts: a private pmcd of the root's PCP needs them
    if [ ! -f "$dir/var/lib/pcp/pmns/root" ] || [ ! -f "$dir/var/lib/pcp/pmns/stdpmid" ]; then
        in_root "$dir" "cd /var/lib/pcp/pmns && ./Make.stdpmid && ./Rebuild -du" \
            > "$ROOTS/$suite.pmns.log" 2>&1 || { tail -n 30 "$ROOTS/$suite.pmns.log" >&2; exit 1; }
    fi
}

command -v debootstrap > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap > /dev/null
build_root trixie 6.3.8
build_root sid 7.2.2
echo "==== pcp-roots.sh: $((SECONDS - start)) s"
