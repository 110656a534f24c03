#!/usr/bin/env bash
# Run the C-facing tests against a copy of pcp._native built with AddressSanitizer and
# UndefinedBehaviorSanitizer (PCP_NATIVE_SANITIZE=1, see csrc/build_ffi.py), on every core
# (pytest-xdist), then check with gcov's counts that they called every entry point of the
# C core (.ci/entry_census.py): the pass runs the tests that drive C, not the whole suite,
# and the census is what says that choice still reaches everything.
#
#   .ci/sanitize.sh [pytest args...]      e.g. .ci/sanitize.sh tests/native/test_native_decoders.py -q
#
# With no test paths among the args, SANITIZE_TESTS below is run and the census checked;
# with paths, just those (no census: a part need not reach everything).
#
# The sanitized extension is built in a temporary copy of the source tree, so the
# normal build in the checkout (and any editable install pointing at it) is never
# touched: there is nothing to restore afterwards, and an interrupted run cannot leave
# a sanitized module behind. The copy is removed on exit (SANITIZE_KEEP=1 keeps it).
#
#   PYTHON   interpreter to use (default: $VIRTUAL_ENV/bin/python, else python3); it
#            needs cffi, setuptools, pytest, pytest-xdist, hypothesis - if they are
#            missing the script runs `pip install -e .[test]` once (works from a fresh clone).
#   SANITIZE_JOBS  pytest-xdist workers (default: the number of cores)
#
# The interpreter is not sanitized, so the ASan runtime the extension was linked with
# is LD_PRELOADed. Python's own allocations at exit are not freed, hence detect_leaks=0;
# PYTHONMALLOC=malloc makes every bytes/cffi buffer its own malloc block so ASan sees
# reads past the end of a PDU. Any ASan report or UBSan finding fails the run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${PYTHON:-}" ]; then
    PY=$PYTHON
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    PY=$VIRTUAL_ENV/bin/python
else
    PY=python3
fi

if ! "$PY" -c "import cffi, setuptools, pytest, xdist, hypothesis" 2>/dev/null; then
    echo "sanitize.sh: installing build/test dependencies (pip install -e .[test])"
    "$PY" -m pip install -q -e "$ROOT[test]"
fi
# setup.py reads pyproject.toml, whose SPDX licence string needs setuptools 77
if ! "$PY" -c "import setuptools, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 77)"; then
    "$PY" -m pip install -q 'setuptools>=77'
fi

COPY=$(mktemp -d "${TMPDIR:-/tmp}/pcp-native-asan.XXXXXX")
cleanup() {
    if [ "${SANITIZE_KEEP:-0}" = 1 ]; then
        echo "sanitize.sh: kept $COPY"
    else
        rm -rf "$COPY"
    fi
}
trap cleanup EXIT

# Copy the sources: tracked and untracked-but-not-ignored files (so no built .so,
# egg-info or caches come along); without git, everything except build products.
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
        tar --null -T - -cf -) | (cd "$COPY" && tar -xf -)
else
    (cd "$ROOT" && tar --exclude='*.so' --exclude='*.o' --exclude=build --exclude='*.egg-info' \
        --exclude=.git --exclude=__pycache__ -cf - .) | (cd "$COPY" && tar -xf -)
fi

echo "sanitize.sh: building the sanitized extension in $COPY"
(cd "$COPY" && PCP_NATIVE_SANITIZE=1 PCP_NATIVE_COVERAGE=1 "$PY" setup.py -q build_ext --inplace) \
    >"$COPY/build.log" 2>&1 || { cat "$COPY/build.log"; echo "sanitize.sh: build failed" >&2; exit 2; }

SO=$(find "$COPY/pcp" -maxdepth 1 -name '_native*.so' -print -quit)
if [ -z "$SO" ] || ! nm -D "$SO" | grep '__asan_' >/dev/null; then
    echo "sanitize.sh: $COPY/pcp/_native*.so missing or not instrumented" >&2
    exit 2
fi

# The runtime the extension actually links against; fall back to the compiler's.
# awk reads all of ldd's output: an early exit would make ldd die of SIGPIPE, which
# pipefail and set -e turn into a silent exit of this script
ASAN_LIB=$(ldd "$SO" | awk '/libasan/ && !found { print $3; found = 1 }')
if [ -z "$ASAN_LIB" ] || [ ! -e "$ASAN_LIB" ]; then
    ASAN_LIB=$("${CC:-gcc}" -print-file-name=libasan.so)
fi
if [ ! -e "$ASAN_LIB" ]; then
    echo "sanitize.sh: cannot find libasan (tried ldd and ${CC:-gcc} -print-file-name)" >&2
    exit 2
fi

# The tests that drive the C core: the decoders (PDUs, results, events, the agent side),
# the archive reader, interpolation, derived metrics, fetchgroup's conversions, the
# writer, the bulk columns and grids, LOCAL's result gathering, pmStore's packing; each
# against the live pmcd, hostile servers and the QA sweep's sample (every bad archive).
# What only Python runs (the CLI's printing, pcp.mmv, TLS and SASL, PCP's tools on top
# of pmapi) is left to the plain pass. The entry census checks the choice.
# Of tests/archive, the random interpolation sweep and the reading-call walk are left to
# the plain pass: fuzz_interp and the fixed interpolation tests drive the same C, and the
# QA sweep's sample makes the walk's calls on every bad archive.
SANITIZE_TESTS=(
    tests/native tests/decode
    tests/archive/test_archive_damaged.py tests/archive/test_archive_quirks.py
    tests/archive/test_diff_archive_context.py tests/archive/test_diff_archive_fetch.py
    tests/archive/test_diff_archive_interp.py tests/archive/test_diff_archive_meta.py
    tests/archive/test_events_archive.py tests/archive/test_interp_duplicates.py
    tests/archive/test_interp_wrap.py tests/archive/test_names_not_utf8.py
    tests/archive/test_pmi.py tests/archive/test_untyped_blocks.py tests/archive/test_first_fetches.py
    tests/libpcp/test_values.py tests/libpcp/test_fetchgroup.py tests/libpcp/test_derived.py
    tests/bulk/test_columns_api.py tests/bulk/test_columns_hostile.py
    tests/bulk/test_derived_columns.py tests/bulk/test_grid_diff.py tests/bulk/test_grid_sweep.py
    tests/bulk/test_write_frame.py
    tests/live/test_diff_fetch.py tests/live/test_diff_desc.py tests/live/test_diff_pmns.py
    tests/live/test_diff_store.py tests/live/test_events_live.py tests/live/test_hostile_server.py
    tests/live/test_lazy_fetch.py tests/live/test_metadata_one_call.py
    tests/local/test_local_context.py
    tests/pmda/test_pmda_pipe.py tests/pmda/test_pmda_edges.py
    tests/corpus/test_archive_sweep.py
)

# Paths into the checkout are redirected to the copy; no path given: SANITIZE_TESTS.
args=()
census=1
for a in "$@"; do
    case "$a" in
        "$ROOT"/*) args+=("$COPY/${a#"$ROOT"/}"); census=0 ;;
        tests/*|tests) args+=("$a"); census=0 ;;
        *) args+=("$a") ;;
    esac
done
[ $census -eq 0 ] || args+=("${SANITIZE_TESTS[@]}")

export LD_PRELOAD="$ASAN_LIB${LD_PRELOAD:+:$LD_PRELOAD}"
# pytest captures fd 2, and a sanitizer report ends the process before pytest can show
# it, so reports go to files under $LOGDIR and are printed below.
LOGDIR="$COPY/sanitizer-logs"
mkdir -p "$LOGDIR"
export ASAN_OPTIONS="log_path=$LOGDIR/asan:detect_leaks=0:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="log_path=$LOGDIR/ubsan:halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export PYTHONMALLOC=malloc
export PYTHONPATH="$COPY${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# The QA-archive sweep reads its sample here (every bad archive among it); the plain
# pass reads the whole corpus.
export PCP_SWEEP=${SANITIZE_SWEEP:-quick}
cd "$COPY"

loaded=$("$PY" -c 'import pcp._native as m; print(m.__file__)')
case "$loaded" in
    "$COPY"/*) ;;
    *) echo "sanitize.sh: pcp._native resolved to $loaded, not the sanitized copy" >&2; exit 2 ;;
esac
echo "sanitize.sh: LD_PRELOAD=$ASAN_LIB, module $loaded"

set +e
"$PY" -m pytest -q -p no:cacheprovider -n "${SANITIZE_JOBS:-$(nproc)}" --dist loadgroup "${args[@]}"
rc=$?
set -e
if [ $census -eq 1 ]; then
    env -u LD_PRELOAD "$PY" "$ROOT/.ci/entry_census.py" "$COPY" || { [ $rc -ne 0 ] || rc=1; }
fi
reports=$(find "$LOGDIR" -type f | sort)
if [ -n "$reports" ]; then
    for r in $reports; do
        echo "==== sanitizer report: $(basename "$r") ===="
        cat "$r"
    done
    [ $rc -eq 0 ] && rc=1
fi
echo "sanitize.sh: exit status $rc (pytest, sanitizer reports, entry census)"
exit $rc
