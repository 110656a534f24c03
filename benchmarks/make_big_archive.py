#!/usr/bin/env python3
"""Generate a large, valid PCP archive for the archive-scan benchmarks.

How it works:

1. A small, value-rich *source* archive is recorded once with pmlogger from the
   local pmcd (about 30 records at 200 ms, ~10,600 values and ~235 kB per record:
   sample.* numbers and strings with instance domains such as sample.hordes and
   sample.bin, plus linux kernel.percpu, kernel.all, disk, network.interface, mem,
   filesys, swap, vfs and proc.psinfo/io/schedstat).  Derived metrics (domain 511)
   and aggregate/event metrics are left out.  A v3 source is made from the v2 one
   with ``pmlogextract -V 3``.
2. Its data records are replicated with their timestamps shifted forward by one
   source period per copy until the requested size is reached.  A data record is
   self-contained (DPTR offsets are relative to the record), so only the timestamp
   words change.  The pmlogger prologue record (pmcd.pmlogger.*) is written once at
   the start and the epilogue once at the end, as pmlogger would.
3. Records go into volume files of at most ``--volume-size`` bytes (each starts with
   the source label carrying its own volume number, like ``pmlogger -v``), the
   ``.meta`` is copied unchanged, and a ``.index`` is written with an entry at the
   first record of every volume, about every ``--index-every`` bytes, and at the end.

Archives are cached under ``--cache-dir`` (default /tmp/pcp-bench-archives, or
$PCP_BENCH_ARCHIVE_DIR) in a directory keyed by version, size and volume size,
so reruns are instant.  A ``manifest.json`` next to the files records what was
written.  Nothing here is ever committed.

Usage:
    make_big_archive.py [--size 1G] [--version 2|3] [--volume-size 256M]
                        [--cache-dir DIR] [--force] [--validate]
It prints the archive's base name (pass it to pmNewContext / pmdumplog) on stdout.

``--validate`` checks the result with libpcp: ``pmdumplog -z -l -t`` (label and
index) and ``pmdumplog -z -a`` over the whole archive (output discarded; it must
exit 0 with nothing on stderr).  The archive-scan C client does the same through
pmFetchArchive to PM_ERR_EOL whenever the benchmarks run.

Importable: ``ensure_archive(size, version=2, ...)`` returns the base name.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

GENERATOR_VERSION = 1   # bump when the output layout changes (invalidates caches)

DEFAULT_CACHE_DIR = os.environ.get("PCP_BENCH_ARCHIVE_DIR", "/tmp/pcp-bench-archives")
DEFAULT_SIZE = 1 << 30
DEFAULT_VOLUME_SIZE = 256 << 20
DEFAULT_INDEX_EVERY = 1 << 20

# What the source archive logs.  Leaf metrics under these prefixes are listed with
# pminfo; derived metrics (PMID domain 511: their values are computed by the
# client, and pmlogger 6.0.3 floods its log with check_inst dumps for them) and
# types that pmExtractValue cannot turn into a number or string are dropped.
SOURCE_PREFIXES = [
    "sample.hordes", "sample.bin", "sample.colour",
    "sample.long", "sample.ulong", "sample.longlong", "sample.ulonglong",
    "sample.float", "sample.double", "sample.string",
    "kernel.percpu", "kernel.all", "disk", "network.interface", "mem",
    "filesys", "swap", "vfs",
    "proc.psinfo", "proc.io", "proc.schedstat",
]
SOURCE_INTERVAL = "200msec"
SOURCE_DURATION = "6sec"
KEEP_TYPES = ("32-bit int", "32-bit unsigned int", "64-bit int", "64-bit unsigned int",
              "float", "double", "string")

LABEL_LEN = {2: 132, 3: 808}
LABEL_VOL_OFF = {2: 20, 3: 24}
PMCD_DOMAIN = 2


def parse_size(text):
    """'100M', '1G', '1.5G', '65536' -> bytes."""
    text = str(text).strip().upper().rstrip("B")
    mult = 1
    for suffix, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if text.endswith(suffix):
            text, mult = text[:-1], m
            break
    return int(float(text) * mult)


def size_label(nbytes):
    for suffix, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= m and nbytes % m == 0:
            return "%d%s" % (nbytes // m, suffix)
    if nbytes >= (1 << 20):
        return "%.4gM" % (nbytes / (1 << 20))
    return str(nbytes)


def log(msg):
    sys.stderr.write("make_big_archive: %s\n" % msg)
    sys.stderr.flush()


# --------------------------------------------------------------------------
# Source archive


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (
            " ".join(cmd), proc.returncode, (proc.stderr or proc.stdout).strip()[-500:]))
    return proc.stdout


def source_metric_names():
    """Leaf names to log: pminfo -md over SOURCE_PREFIXES, filtered (see above)."""
    out = _run(["pminfo", "-md", *SOURCE_PREFIXES], timeout=120)
    names, name, pmid = [], None, None
    for line in out.splitlines():
        if " PMID: " in line:
            name, _, pmid = line.partition(" PMID: ")
            name, pmid = name.strip(), pmid.strip()
        elif "Data Type:" in line and name:
            dtype = line.split("Data Type:")[1].split("InDom:")[0].strip()
            if not pmid.startswith("511.") and dtype in KEEP_TYPES:
                names.append(name)
            name = None
    if not names:
        raise RuntimeError("pminfo listed no metrics under %s: is pmcd running?" % SOURCE_PREFIXES)
    return names


def ensure_source(cache_dir, version):
    """Base name of the cached source archive of this version (recorded if missing)."""
    src_dir = os.path.join(cache_dir, "source-v%d" % version)
    base = os.path.join(src_dir, "src")
    if os.path.exists(base + ".meta") and os.path.exists(base + ".0"):
        return base
    if version == 3:
        v2 = ensure_source(cache_dir, 2)
        tmp = tempfile.mkdtemp(prefix="source-v3.", dir=cache_dir)
        log("converting the v2 source to v3 with pmlogextract -V 3")
        _run(["pmlogextract", "-V", "3", v2, os.path.join(tmp, "src")], timeout=300)
    else:
        tmp = tempfile.mkdtemp(prefix="source-v2.", dir=cache_dir)
        names = source_metric_names()
        cfg = os.path.join(tmp, "pmlogger.config")
        with open(cfg, "w") as f:
            f.write("log mandatory on default {\n")
            for n in names:
                f.write("    %s\n" % n)
            f.write("}\n")
        log("recording a source archive with pmlogger (%d metrics, -t %s -T %s)"
            % (len(names), SOURCE_INTERVAL, SOURCE_DURATION))
        _run(["pmlogger", "-c", cfg, "-t", SOURCE_INTERVAL, "-T", SOURCE_DURATION,
              "-l", os.path.join(tmp, "pmlogger.log"), os.path.join(tmp, "src")],
             cwd=tmp, timeout=300)
    shutil.rmtree(src_dir, ignore_errors=True)
    os.rename(tmp, src_dir)
    return base


# --------------------------------------------------------------------------
# Reading the source


class Record:
    __slots__ = ("data", "sec", "nsec", "numpmid", "pmcd_only")

    def __init__(self, data, version):
        self.data = data
        if version == 2:
            self.sec, usec, self.numpmid = struct.unpack_from(">iii", data, 4)
            self.nsec = usec * 1000
            sets = 16
        else:
            lo, hi, self.nsec, self.numpmid = struct.unpack_from(">Iiii", data, 4)
            self.sec = (hi << 32) | lo
            sets = 20
        # Does every value set belong to pmcd (pmlogger's prologue / epilogue)?
        self.pmcd_only = self.numpmid > 0
        off = sets
        for _ in range(self.numpmid):
            pmid, numval = struct.unpack_from(">Ii", data, off)
            if (pmid >> 22) & 0x1FF != PMCD_DOMAIN:
                self.pmcd_only = False
                break
            off += 12 + 8 * numval if numval > 0 else 8

    @property
    def ns(self):
        return self.sec * 1_000_000_000 + self.nsec


def read_volume(path, version):
    """(label bytes, [Record]) of one data volume."""
    with open(path, "rb") as f:
        blob = f.read()
    lab = LABEL_LEN[version]
    if len(blob) < lab or struct.unpack_from(">I", blob, 4)[0] != 0x50052600 | version:
        raise RuntimeError("%s: not a v%d archive volume" % (path, version))
    records, off = [], lab
    while off + 4 <= len(blob):
        (length,) = struct.unpack_from(">i", blob, off)
        if length < 20 or off + length > len(blob):
            raise RuntimeError("%s: bad record length %d at offset %d" % (path, length, off))
        if struct.unpack_from(">i", blob, off + length - 4)[0] != length:
            raise RuntimeError("%s: trailer mismatch at offset %d" % (path, off))
        records.append(Record(blob[off:off + length], version))
        off += length
    return blob[:lab], records


def source_volumes(base):
    d, b = os.path.split(base)
    vols = []
    for name in os.listdir(d or "."):
        if name.startswith(b + "."):
            tail = name[len(b) + 1:]
            if tail.isdigit():
                vols.append(int(tail))
    return ["%s.%d" % (base, v) for v in sorted(vols)]


# --------------------------------------------------------------------------
# Writing


def label_for(label, version, vol):
    out = bytearray(label)
    struct.pack_into(">i", out, LABEL_VOL_OFF[version], vol)
    return bytes(out)


def pack_stamp(version, ns):
    sec, nsec = divmod(ns, 1_000_000_000)
    if version == 2:
        return struct.pack(">ii", sec, nsec // 1000)
    return struct.pack(">Iii", sec & 0xFFFFFFFF, sec >> 32, nsec)


def index_entry(version, ns, vol, meta_off, data_off):
    if version == 2:
        return pack_stamp(2, ns) + struct.pack(">iii", vol, meta_off, data_off)
    return pack_stamp(3, ns) + struct.pack(">iqq", vol, meta_off, data_off)


def generate(base, source, version, size, volume_size, index_every):
    """Write archive `base` (.0 .. .N, .meta, .index) from `source`; returns a manifest."""
    vols = source_volumes(source)
    if not vols:
        raise RuntimeError("source archive %s has no data volume" % source)
    label, records = None, []
    for v in vols:
        lab, recs = read_volume(v, version)
        label = label or lab
        records.extend(recs)
    body_idx = [i for i, r in enumerate(records) if r.numpmid > 0 and not r.pmcd_only]
    if len(body_idx) < 2:
        raise RuntimeError("source archive %s has fewer than 2 data records" % source)
    prologue = records[:body_idx[0]]
    body = records[body_idx[0]:body_idx[-1] + 1]
    epilogue = records[body_idx[-1] + 1:]
    span = body[-1].ns - body[0].ns
    step = span // (len(body) - 1)          # mean interval between records
    period = span + step                     # shift of one copy
    if version == 2:
        period = (period // 1000) * 1000     # v2 stamps are in microseconds

    # One mutable copy of the body: patch the stamps in place for every copy.
    body_bytes = [bytearray(r.data) for r in body]
    body_ns = [r.ns for r in body]
    stamp_len = 8 if version == 2 else 12

    meta_src = source + ".meta"
    meta_size = os.path.getsize(meta_src)
    shutil.copyfile(meta_src, base + ".meta")

    lab_len = len(label)
    index = bytearray(label_for(label, version, -2))
    last_index_ns = None
    vol = -1
    vol_f = None
    vol_size = 0
    since_index = 0
    total = 0          # bytes of data records written (all volumes)
    nrec = 0
    nvol = 0
    last_ns = None

    def add_index(ns, data_off):
        nonlocal last_index_ns
        if ns == last_index_ns:
            return
        index.extend(index_entry(version, ns, vol, meta_size, data_off))
        last_index_ns = ns

    def write(rec_bytes, ns):
        nonlocal vol, vol_f, vol_size, since_index, total, nrec, nvol, last_ns
        n = len(rec_bytes)
        if vol_f is None or (vol_size + n > volume_size and vol_size > lab_len):
            if vol_f is not None:
                vol_f.close()
            vol += 1
            nvol += 1
            vol_f = open("%s.%d" % (base, vol), "wb", buffering=1 << 20)
            vol_f.write(label_for(label, version, vol))
            vol_size = lab_len
            add_index(ns, vol_size)
            since_index = 0
        elif since_index >= index_every:
            add_index(ns, vol_size)
            since_index = 0
        vol_f.write(rec_bytes)
        vol_size += n
        since_index += n
        total += n
        nrec += 1
        last_ns = ns

    for r in prologue:
        write(r.data, r.ns)
    copies = 0
    last_shift = 0
    avg = sum(len(b) for b in body_bytes) / len(body_bytes)
    epi_bytes = sum(len(r.data) for r in epilogue)
    while True:
        shift = copies * period
        for b, ns in zip(body_bytes, body_ns):
            if total + len(b) + epi_bytes > size and nrec > len(prologue):
                break
            if shift:
                b[4:4 + stamp_len] = pack_stamp(version, ns + shift)
            write(b, ns + shift)
            last_shift = shift
        else:
            copies += 1
            if total + avg + epi_bytes <= size:
                continue
        break
    for r in epilogue:
        b = bytearray(r.data)
        b[4:4 + stamp_len] = pack_stamp(version, r.ns + last_shift)
        write(b, r.ns + last_shift)
    vol_f.close()
    add_index(last_ns, vol_size)        # pmlogger's final entry: end of the last volume
    with open(base + ".index", "wb") as f:
        f.write(index)
    return {
        "generator_version": GENERATOR_VERSION,
        "base": base,
        "version": version,
        "requested_size": size,
        "data_bytes": total,
        "volumes": nvol,
        "volume_size": volume_size,
        "records": nrec,
        "body_copies": copies,
        "source": source,
        "source_records": len(records),
        "source_body_records": len(body),
        "index_entries": (len(index) - lab_len) // (20 if version == 2 else 32),
        "period_ns": period,
        "first_ns": records[0].ns,
        "last_ns": last_ns,
    }


def archive_dir(cache_dir, size, version, volume_size):
    return os.path.join(cache_dir, "big-v%d-%s-vol%s-g%d" % (
        version, size_label(size), size_label(volume_size), GENERATOR_VERSION))


def ensure_archive(size=DEFAULT_SIZE, version=2, volume_size=DEFAULT_VOLUME_SIZE,
                   cache_dir=DEFAULT_CACHE_DIR, force=False, validate=False,
                   index_every=DEFAULT_INDEX_EVERY):
    """Base name of a cached archive of about `size` bytes of data (made if missing)."""
    if isinstance(size, str):
        size = parse_size(size)
    if isinstance(volume_size, str):
        volume_size = parse_size(volume_size)
    if version not in (2, 3):
        raise ValueError("version must be 2 or 3")
    os.makedirs(cache_dir, exist_ok=True)
    final = archive_dir(cache_dir, size, version, volume_size)
    base = os.path.join(final, "big")
    manifest_path = os.path.join(final, "manifest.json")
    if force:
        shutil.rmtree(final, ignore_errors=True)
    if not os.path.exists(manifest_path):
        need = int(size * 1.05) + (64 << 20)
        free = shutil.disk_usage(cache_dir).free
        if free < need:
            raise RuntimeError("not enough free space in %s: need ~%d MB, %d MB free"
                               % (cache_dir, need >> 20, free >> 20))
        source = ensure_source(cache_dir, version)
        tmp = tempfile.mkdtemp(prefix=os.path.basename(final) + ".", dir=cache_dir)
        try:
            t0 = time.monotonic()
            manifest = generate(os.path.join(tmp, "big"), source, version, size,
                                volume_size, index_every)
            manifest["seconds"] = round(time.monotonic() - t0, 3)
            manifest["base"] = base
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump(manifest, f, indent=2)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        log("wrote %s: %d records, %d volume(s), %.1f MB in %.1f s" % (
            base, manifest["records"], manifest["volumes"], manifest["data_bytes"] / 1e6,
            manifest["seconds"]))
    if validate:
        validate_archive(base)
    return base


def manifest(base):
    with open(os.path.join(os.path.dirname(base), "manifest.json")) as f:
        return json.load(f)


def validate_archive(base):
    """Let libpcp read every record: pmdumplog label+index, then -a to /dev/null."""
    t0 = time.monotonic()
    _run(["pmdumplog", "-z", "-l", "-t", base], timeout=120)
    with open(os.devnull, "w") as devnull:
        proc = subprocess.run(["pmdumplog", "-z", "-a", base], stdout=devnull,
                              stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0 or proc.stderr.strip():
        raise RuntimeError("pmdumplog -z -a %s: exit %d: %s" % (
            base, proc.returncode, proc.stderr.strip()[-500:]))
    log("validated %s with pmdumplog -z -a in %.1f s" % (base, time.monotonic() - t0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1G", help="data bytes to write (e.g. 100M, 1G)")
    ap.add_argument("--version", type=int, default=2, choices=(2, 3))
    ap.add_argument("--volume-size", default="256M", help="max bytes per data volume")
    ap.add_argument("--index-every", default="1M", help="bytes between .index entries")
    ap.add_argument("--cache-dir", default=DEFAULT_CACHE_DIR)
    ap.add_argument("--force", action="store_true", help="regenerate even if cached")
    ap.add_argument("--validate", action="store_true", help="check it with pmdumplog -z -a")
    ap.add_argument("--manifest", action="store_true", help="print the manifest too")
    args = ap.parse_args(argv)
    base = ensure_archive(parse_size(args.size), args.version, parse_size(args.volume_size),
                          args.cache_dir, args.force, args.validate,
                          parse_size(args.index_every))
    if args.manifest:
        sys.stderr.write(json.dumps(manifest(base), indent=2) + "\n")
    print(base)


if __name__ == "__main__":
    main()
