#!/usr/bin/env bash
# Regenerate the small archive bundled as pcp/data/demo.* (the CLI's default source):
# about 10 s of 1-second samples from the local pmcd (sample PMDA and a few linux
# metrics: counters, instance domains, strings, discrete values), recorded by pmlogger,
# the data volume and metadata xz-compressed. Needs pmcd with the sample PMDA.
set -euo pipefail
cd "$(dirname "$0")/.."
out=pcp/data
seconds=${DEMO_SECONDS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/config" <<'CONF'
log mandatory on once {
    hinv.ncpu
    hinv.physmem
    kernel.uname.release
    kernel.uname.sysname
    pmcd.hostname
    sample.string.hullo
}
log mandatory on 1 sec {
    sample.long.one
    sample.ulonglong.hundred
    sample.double.bin
    sample.colour
    sample.mirage
    sample.seconds
    sample.milliseconds
    sample.step_counter
    sample.byte_ctr
    sample.kbyte_rate
    sample.lights
    kernel.all.load
    kernel.all.cpu.user
    kernel.all.cpu.sys
    kernel.all.cpu.idle
    kernel.all.pswitch
    kernel.percpu.cpu.user
    mem.util.free
    mem.util.used
    proc.nprocs
    disk.dev.read_bytes
    disk.dev.write_bytes
    network.interface.in.bytes
    network.interface.out.bytes
}
CONF

pmlogger -V 3 -h local: -c "$tmp/config" -t 1sec -T "${seconds}sec" -l "$tmp/pmlogger.log" "$tmp/demo" \
    || { cat "$tmp/pmlogger.log" >&2; exit 1; }
rm -f "$out"/demo.*
mkdir -p "$out"
cp "$tmp/demo.index" "$out/demo.index"
xz -9e -c "$tmp/demo.0" > "$out/demo.0.xz"
xz -9e -c "$tmp/demo.meta" > "$out/demo.meta.xz"
pmdumplog -z -L "$out/demo" | head -6
ls -l "$out"/demo.*
