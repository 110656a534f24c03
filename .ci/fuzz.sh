#!/usr/bin/env bash
# Build the libFuzzer harnesses in csrc/fuzz/ (clang -fsanitize=fuzzer,address,undefined)
# and run each for a bounded time, starting from the committed seeds.
#
#   FUZZ_SECONDS   seconds per harness (default 60)
#   FUZZ_JOBS      parallel fuzzing processes per harness (default 1)
#   FUZZ_CC        compiler (default clang)
#   FUZZ_HARNESSES space-separated subset (default: all)
#   FUZZ_WORKDIR   where corpora, logs and crash files go (default csrc/fuzz/corpus/)
#
# Exits non-zero if any harness crashes, leaks, times out or fails to build; a
# reproducer (crash-*/timeout-*/leak-*) is left in $FUZZ_WORKDIR/<harness>/ and its
# path printed. Replay one with: csrc/fuzz/build/<harness> <file>
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZ_DIR="$ROOT/csrc/fuzz"
SECONDS_PER=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
CC_BIN=${FUZZ_CC:-clang}
HARNESSES=${FUZZ_HARNESSES:-"fuzz_result fuzz_pdu fuzz_encode fuzz_archive fuzz_events fuzz_columns fuzz_convert fuzz_write"}
WORK=${FUZZ_WORKDIR:-"$FUZZ_DIR/corpus"}

if ! command -v "$CC_BIN" >/dev/null 2>&1; then
    echo "fuzz.sh: $CC_BIN not found (Debian: apt-get install clang)" >&2
    exit 2
fi

echo "fuzz.sh: building harnesses with $CC_BIN"
if ! make -s -C "$FUZZ_DIR" FUZZ_CC="$CC_BIN" -j2 all; then
    echo "fuzz.sh: build failed" >&2
    exit 2
fi

status=0
summary=()
for h in $HARNESSES; do
    bin="$FUZZ_DIR/build/$h"
    seeds="$FUZZ_DIR/seeds/$h"
    out="$WORK/$h"
    mkdir -p "$out/corpus"
    log="$out/fuzz.log"
    touch "$out/.start"
    echo "fuzz.sh: $h for ${SECONDS_PER}s (jobs=$JOBS)"
    # New inputs go to the work corpus; the committed seeds are only read.
    # -timeout: one input may take at most 10 s; -rss_limit_mb bounds memory;
    # -max_len 65536 covers every PDU a client can be sent that we fuzz.
    args=(-max_total_time="$SECONDS_PER" -max_len=65536 -timeout=10 -rss_limit_mb=2048
          -use_value_profile=1
          -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "$seeds")
    if [ "$JOBS" -gt 1 ]; then
        args=(-fork="$JOBS" -ignore_crashes=0 "${args[@]}")
    fi
    (cd "$out" && "$bin" "${args[@]}") >"$log" 2>&1
    rc=$?
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+$')
    if [ -z "$execs" ]; then
        execs=$(grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    fi
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')
    ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')
    corp=$(find "$out/corpus" -type f | wc -l)
    artifacts=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' \
                -o -name 'leak-*' -o -name 'oom-*' \) -newer "$out/.start" 2>/dev/null)
    if [ $rc -ne 0 ] || [ -n "$artifacts" ]; then
        result="FAIL (rc=$rc)"
        status=1
        echo "---- $h log tail ----"
        tail -60 "$log"
        for a in $artifacts; do echo "reproducer: $a"; done
    else
        result="ok"
    fi
    summary+=("$(printf '%-12s %-14s execs=%-10s cov=%-5s ft=%-6s corpus=%s' \
        "$h" "$result" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$corp")")
done

echo "==== fuzz summary (${SECONDS_PER}s per harness) ===="
for line in "${summary[@]}"; do echo "$line"; done
exit $status
