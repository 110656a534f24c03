#!/usr/bin/env python3
"""Archive-scan workloads: a full forward scan extracting every value.

Run as a script, it scans one archive with one method and prints one JSON object;
the benchmark runner starts it in its own subprocess per side, so that side's
peak RSS is its own:

    archive_scan.py dropin ARCHIVE [--max-records N]   pmFetchArchive + pmExtractValue
    archive_scan.py arrays ARCHIVE [--max-records N]   pmFetchArchive + as_arrays() (ours)
    archive_scan.py bulk   ARCHIVE [--max-records N]   pcp.bulk.scan_archive (ours)
    archive_scan.py columns ARCHIVE                     pcp.bulk.ArchiveReader (ours):
                                                        per-metric time x instance arrays

``dropin`` is the loop a pmrep-style script writes with the official binding: for
every record, for every value set, for every value
``ctx.pmExtractValue(valfmt, vlist, type, type)`` and a read of the atom's field.
Under ``/usr/bin/python3 -I`` it measures the official binding (the reference, (a));
under the project's venv it measures our drop-in ``pcp.pmapi`` running the same code.

Every method folds every value into the same checksum as benchmarks/c/archive_scan.c
(libpcp, (b)), so the sides can be checked against each other:

    int_sum    sum of every 32/U32/64/U64 value (natural type) modulo 2**64
    float_sum  sum of every FLOAT/DOUBLE value (equal up to rounding order)
    strings    number of STRING values; str_bytes their total length

Reported: values, records, sets, open_s (context creation), scan_s (the loop,
elapsed), cpu_s (its CPU time, user + system), values_per_s = values / scan_s, and
memory from /proc/self/status: rss_base_kb (VmRSS after imports and context
creation), hwm_open_kb (VmHWM at that point: the peak of start-up), scan_hwm_kb
(VmHWM of the scan alone: the peak is reset through /proc/self/clear_refs first),
max_rss_anon_kb and max_rss_file_kb (largest RssAnon / RssFile sampled every 64
records and at the end; mapped archive pages count as RssFile).  The process's peak
RSS is the larger of hwm_open_kb and scan_hwm_kb (VmHWM belongs to the process
image, so unlike the ru_maxrss a parent gets from wait4 it does not include the RSS
of the forked parent before exec).

Nothing imports pcp at module level, so importing this file does not decide which
pcp package is used (see ref_live.py).
"""

import argparse
import json
import os
import sys
import time

# numpy's BLAS thread pool is never used here; its idle threads would only add CPU time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64 = 0, 1, 2, 3
PM_TYPE_FLOAT, PM_TYPE_DOUBLE, PM_TYPE_STRING = 4, 5, 6

# How each type is folded into the checksum, and which pmAtomValue field holds it.
KIND_INT, KIND_FLOAT, KIND_STRING, KIND_SKIP = 0, 1, 2, 3
TYPE_KIND = {PM_TYPE_32: KIND_INT, PM_TYPE_U32: KIND_INT, PM_TYPE_64: KIND_INT,
             PM_TYPE_U64: KIND_INT, PM_TYPE_FLOAT: KIND_FLOAT, PM_TYPE_DOUBLE: KIND_FLOAT,
             PM_TYPE_STRING: KIND_STRING}
ATOM_FIELD = {PM_TYPE_32: "l", PM_TYPE_U32: "ul", PM_TYPE_64: "ll", PM_TYPE_U64: "ull",
              PM_TYPE_FLOAT: "f", PM_TYPE_DOUBLE: "d", PM_TYPE_STRING: "cp"}

MODES = ("dropin", "arrays", "bulk", "columns")
MEM_EVERY = 64          # records between /proc/self/status samples
U64 = 1 << 64


# --------------------------------------------------------------------------
# Memory


def read_mem():
    """VmRSS, VmHWM, RssAnon, RssFile of this process in kB (-1 if unknown)."""
    out = {"VmRSS": -1, "VmHWM": -1, "RssAnon": -1, "RssFile": -1}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in out:
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    return out


def reset_hwm():
    """Reset VmHWM to the current RSS (Linux >= 4.0); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class MemWatch:
    """Baseline at start(), then the largest RssAnon / RssFile seen by sample()."""

    def start(self):
        self.base = read_mem()
        self.hwm_reset = reset_hwm()
        self.max_anon = self.base["RssAnon"]
        self.max_file = self.base["RssFile"]

    def sample(self):
        m = read_mem()
        self.max_anon = max(self.max_anon, m["RssAnon"])
        self.max_file = max(self.max_file, m["RssFile"])
        return m

    def report(self):
        m = self.sample()
        return {"rss_base_kb": self.base["VmRSS"], "hwm_open_kb": self.base["VmHWM"],
                "scan_hwm_kb": m["VmHWM"],
                "hwm_reset": self.hwm_reset, "rss_end_kb": m["VmRSS"],
                "max_rss_anon_kb": self.max_anon, "max_rss_file_kb": self.max_file}


# --------------------------------------------------------------------------
# Shared


def import_pmapi():
    from pcp import pmapi
    import cpmapi as c_api
    return pmapi, c_api


def impl_label(pmapi):
    """The official binding is ctypes over libpcp (module attribute LIBPCP)."""
    return "official" if hasattr(pmapi, "LIBPCP") else "pcp-native"


def new_context(pmapi, c_api, archive):
    return pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, archive)


def desc_type(ctx, pmapi, pmid):
    """The pmid's type, or None when the archive has no descriptor for it."""
    try:
        return ctx.pmLookupDesc(pmid).contents.type
    except pmapi.pmErr:
        return None


def finish(out, values, records, marks, sets, skipped, isum, fsum, strings, str_bytes,
           open_s, scan_s, cpu_s, limited, mem):
    out.update(values=values, records=records, marks=marks, sets=sets, skipped=skipped,
               open_s=round(open_s, 6), scan_s=round(scan_s, 6), cpu_s=round(cpu_s, 6),
               values_per_s=values / scan_s if scan_s > 0 else 0.0,
               int_sum=isum % U64 if isum is not None else None,
               float_sum=fsum, strings=strings, str_bytes=str_bytes, limited=limited)
    out.update(mem.report())
    return out


# --------------------------------------------------------------------------
# (a) / (i): the drop-in loop, identical for the official binding and ours


def scan_dropin(archive, max_records=0):
    pmapi, c_api = import_pmapi()
    EOL = c_api.PM_ERR_EOL
    mem = MemWatch()
    t0 = time.perf_counter()
    ctx = new_context(pmapi, c_api, archive)
    open_s = time.perf_counter() - t0
    mem.start()

    meta = {}                       # pmid -> (type, atom field, kind), looked up once
    values = records = marks = sets = skipped = 0
    isum = strings = str_bytes = 0
    fsum = 0.0
    limited = False
    c0 = time.process_time()
    t0 = time.perf_counter()
    while True:
        if max_records and records >= max_records:
            limited = True
            break
        try:
            result = ctx.pmFetchArchive()
        except pmapi.pmErr as exc:
            if exc.args[0] == EOL:
                break
            raise
        records += 1
        res = result.contents
        numpmid = res.numpmid
        if numpmid == 0:
            marks += 1
        sets += numpmid
        for i in range(numpmid):
            numval = res.get_numval(i)
            if numval <= 0:
                continue
            pmid = res.get_pmid(i)
            m = meta.get(pmid)
            if m is None:
                mtype = desc_type(ctx, pmapi, pmid)
                m = meta[pmid] = (mtype, ATOM_FIELD.get(mtype), TYPE_KIND.get(mtype, KIND_SKIP))
            mtype, field, kind = m
            if kind == KIND_SKIP:
                skipped += numval
                continue
            valfmt = res.get_valfmt(i)
            for j in range(numval):
                atom = ctx.pmExtractValue(valfmt, res.get_vlist(i, j), mtype, mtype)
                v = getattr(atom, field)
                if kind == KIND_INT:
                    isum += v
                elif kind == KIND_FLOAT:
                    fsum += v
                else:
                    strings += 1
                    str_bytes += len(v)
            values += numval
        ctx.pmFreeResult(result)
        if records % MEM_EVERY == 0:
            mem.sample()
    scan_s = time.perf_counter() - t0
    cpu_s = time.process_time() - c0
    out = {"impl": impl_label(pmapi), "path": "dropin: pmFetchArchive + pmExtractValue",
           "pmapi_file": pmapi.__file__, "descs": len(meta)}
    return finish(out, values, records, marks, sets, skipped, isum, fsum, strings,
                  str_bytes, open_s, scan_s, cpu_s, limited, mem)


# --------------------------------------------------------------------------
# Vectorised consumption shared by (ii) and (iii)


class TypeTable:
    """pmid -> type, looked up once per pmid, applied to whole pmid arrays at once."""

    def __init__(self, np, lookup):
        self.np = np
        self.lookup = lookup
        self.types = {}
        self.pmids = np.zeros(0, dtype=np.uint32)
        self.is_u32 = np.zeros(0, dtype=bool)

    def u32_mask(self, pmid):
        """Boolean array: is each value set's metric PM_TYPE_U32?"""
        np = self.np
        if len(self.pmids) == 0:
            self._add(pmid)
        idx = np.searchsorted(self.pmids, pmid)
        np.minimum(idx, len(self.pmids) - 1, out=idx)
        if not np.array_equal(self.pmids[idx], pmid):
            self._add(pmid)
            idx = np.searchsorted(self.pmids, pmid)
        return self.is_u32[idx]

    def _add(self, pmid):
        np = self.np
        for p in np.unique(pmid).tolist():
            if p not in self.types:
                self.types[p] = self.lookup(p)
        keys = sorted(self.types)
        self.pmids = np.array(keys, dtype=np.uint32)
        self.is_u32 = np.array([self.types[k] == PM_TYPE_U32 for k in keys], dtype=bool)


class Folder:
    """Folds value columns into the checksum without a Python object per value.

    ival is 0 for every value that is not an integer and dval is 0 for every value
    that is not a FLOAT/DOUBLE, so plain sums cover every value; strings are the
    values whose block type is PM_TYPE_STRING (blen includes the NUL).  The one
    type-dependent step: an INSITU value is stored sign-extended, so a PM_TYPE_U32
    value >= 2**31 needs 2**32 added (found through the per-set type table)."""

    def __init__(self, np, table):
        self.np = np
        self.table = table
        self.isum = 0
        self.fsum = 0.0
        self.strings = 0
        self.str_bytes = 0
        self.values = 0
        self.sets = 0
        self.checked = 0

    def fold(self, pmid, numval, first, vtype, ival, dval, blen):
        np = self.np
        n = len(ival)
        self.sets += len(numval)
        self.values += n
        if n == 0:
            return
        counts = np.maximum(numval, 0)
        if self.checked < 4:            # the layout this relies on: values in set order
            starts = np.cumsum(counts) - counts
            has = counts > 0
            if int(counts.sum()) != n or not np.array_equal(first[has], starts[has]):
                raise AssertionError(
                    "first[] does not index the value arrays in value-set order (expected: "
                    "first[i] = position of set i's first value in this result/chunk)")
            self.checked += 1
        self.isum += int(ival.sum())
        self.fsum += float(dval.sum())
        is_str = vtype == PM_TYPE_STRING
        nstr = int(np.count_nonzero(is_str))
        if nstr:
            self.strings += nstr
            if blen is not None:
                self.str_bytes += int(blen[is_str].sum()) - nstr
        u32 = self.table.u32_mask(pmid)
        if u32.any():
            neg = np.repeat(u32, counts) & (ival < 0) & (vtype < 0)
            self.isum += int(np.count_nonzero(neg)) << 32


# --------------------------------------------------------------------------
# (ii) ours: pmFetchArchive + as_arrays()


def scan_arrays(archive, max_records=0):
    import numpy as np
    pmapi, c_api = import_pmapi()
    EOL = c_api.PM_ERR_EOL
    mem = MemWatch()
    t0 = time.perf_counter()
    ctx = new_context(pmapi, c_api, archive)
    open_s = time.perf_counter() - t0
    mem.start()

    folder = Folder(np, TypeTable(np, lambda p: desc_type(ctx, pmapi, p)))
    fold = folder.fold
    records = marks = 0
    limited = False
    c0 = time.process_time()
    t0 = time.perf_counter()
    while True:
        if max_records and records >= max_records:
            limited = True
            break
        try:
            result = ctx.pmFetchArchive()
        except pmapi.pmErr as exc:
            if exc.args[0] == EOL:
                break
            raise
        records += 1
        a = result.contents.as_arrays()
        if len(a.pmid) == 0:
            marks += 1
        fold(a.pmid, a.numval, a.first, a.vtype, a.ival, a.dval, a.blen)
        if records % MEM_EVERY == 0:
            mem.sample()
    scan_s = time.perf_counter() - t0
    cpu_s = time.process_time() - c0
    out = {"impl": "pcp-native", "path": "arrays: pmFetchArchive + as_arrays()",
           "pmapi_file": pmapi.__file__, "descs": len(folder.table.types)}
    return finish(out, folder.values, records, marks, folder.sets, 0, folder.isum,
                  folder.fsum, folder.strings, folder.str_bytes if folder.strings else 0,
                  open_s, scan_s, cpu_s, limited, mem)


# --------------------------------------------------------------------------
# (iii) ours: pcp.bulk.scan_archive


def bulk_missing():
    """None if pcp.bulk.scan_archive is importable, else why not."""
    try:
        from pcp import bulk
    except ImportError as exc:
        return "pcp.bulk is not available yet (%s)" % exc
    if not hasattr(bulk, "scan_archive"):
        return "pcp.bulk has no scan_archive()"
    return None


def _field(chunk, name, required=True):
    if hasattr(chunk, name):
        return getattr(chunk, name)
    try:
        return chunk[name]
    except (KeyError, TypeError, IndexError):
        if required:
            raise AttributeError("bulk chunk has no field %r" % name)
        return None


def scan_bulk(archive, max_records=0):
    import numpy as np
    why = bulk_missing()
    if why:
        return {"impl": "pcp-native", "path": "bulk: pcp.bulk.scan_archive",
                "skipped_reason": why}
    from pcp import bulk
    pmapi, c_api = import_pmapi()
    mem = MemWatch()
    t0 = time.perf_counter()
    ctx = new_context(pmapi, c_api, archive)    # for descriptors only
    scanner = bulk.scan_archive(archive)
    open_s = time.perf_counter() - t0
    mem.start()

    folder = Folder(np, TypeTable(np, lambda p: desc_type(ctx, pmapi, p)))
    records = chunks = 0
    marks = 0
    limited = False
    c0 = time.process_time()
    t0 = time.perf_counter()
    first_chunk_s = None
    for chunk in scanner:
        if first_chunk_s is None:
            # scan_archive is a generator: it opens the archive (label, .meta) on the
            # first next(), so unlike the other methods scan_s includes that
            first_chunk_s = time.perf_counter() - t0
        chunks += 1
        nrec = len(_field(chunk, "sec"))
        _field(chunk, "nsec")
        numpmid = _field(chunk, "numpmid", required=False)    # per record, if offered
        if numpmid is None:
            marks = None
        pmid = _field(chunk, "pmid")
        numval = _field(chunk, "numval")
        if max_records and records + nrec > max_records:
            # keep only the value sets (and their values) of the first records
            keep_rec = max_records - records
            rec = _field(chunk, "rec")
            # rec may count from the start of the archive or of the chunk
            rec0 = records if len(rec) and int(rec[0]) >= records else 0
            nsets = int(np.searchsorted(rec - rec0, keep_rec))
            counts = np.maximum(numval[:nsets], 0)
            nval = int(counts.sum())
            first = _field(chunk, "first")[:nsets]
            blen = _field(chunk, "blen", required=False)
            folder.fold(pmid[:nsets], numval[:nsets], first,
                        _field(chunk, "vtype")[:nval], _field(chunk, "ival")[:nval],
                        _field(chunk, "dval")[:nval], None if blen is None else blen[:nval])
            records += keep_rec
            if marks is not None:
                marks += int(np.count_nonzero(numpmid[:keep_rec] == 0))
            limited = True
            break
        _field(chunk, "rec")
        _field(chunk, "inst")
        folder.fold(pmid, numval, _field(chunk, "first"), _field(chunk, "vtype"),
                    _field(chunk, "ival"), _field(chunk, "dval"),
                    _field(chunk, "blen", required=False))
        records += nrec
        if marks is not None:
            marks += int(np.count_nonzero(numpmid == 0))
        mem.sample()
    scan_s = time.perf_counter() - t0
    cpu_s = time.process_time() - c0
    out = {"impl": "pcp-native", "path": "bulk: pcp.bulk.scan_archive",
           "pmapi_file": pmapi.__file__, "bulk_file": bulk.__file__, "chunks": chunks,
           "first_chunk_s": first_chunk_s,
           "descs": len(folder.table.types)}
    return finish(out, folder.values, records, marks, folder.sets, 0, folder.isum,
                  folder.fsum, folder.strings, folder.str_bytes if folder.strings else 0,
                  open_s, scan_s, cpu_s, limited, mem)


# --------------------------------------------------------------------------
# (iv) ours: pcp.bulk.ArchiveReader, every metric as a time x instance matrix


def scan_columns(archive, max_records=0):
    """Every metric of the archive into per-metric numpy matrices, chunk by chunk, and
    the same checksum folded from them: absent cells hold 0, so plain sums of the
    value matrices are the sums of the values; counts are each chunk's MetricArray.count;
    strings are measured by their byte lengths (Blobs.nbytes) without making str objects
    (pmExtractValue's copy, not a str, is what the other sides measure too); aggregates
    are not counted, as in the C client."""
    import numpy as np
    try:
        from pcp import bulk
        reader_cls = bulk.ArchiveReader
    except (ImportError, AttributeError) as exc:
        return {"impl": "pcp-native", "path": "columns: pcp.bulk.ArchiveReader",
                "skipped_reason": "pcp.bulk.ArchiveReader is not available (%s)" % exc}
    if max_records:
        return {"impl": "pcp-native", "path": "columns: pcp.bulk.ArchiveReader",
                "skipped_reason": "columns scans whole archives only"}
    mem = MemWatch()
    t0 = time.perf_counter()
    reader = reader_cls(archive)
    open_s = time.perf_counter() - t0
    mem.start()
    ints = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64)
    floats = (PM_TYPE_FLOAT, PM_TYPE_DOUBLE)
    values = strings = str_bytes = chunks = rows = 0
    isum = 0
    fsum = 0.0
    c0 = time.process_time()
    t0 = time.perf_counter()
    for chunk in reader:
        chunks += 1
        rows += len(chunk)
        for m in chunk.values():
            t = m.type
            if t in ints:
                values += m.count
                isum += int(m.values.sum(dtype=np.uint64))
            elif t in floats:
                values += m.count
                fsum += float(m.values.sum(dtype=np.float64))
            elif t == PM_TYPE_STRING:
                values += m.count
                strings += m.count
                str_bytes += m.blobs.nbytes
        del chunk
        mem.sample()
    scan_s = time.perf_counter() - t0
    cpu_s = time.process_time() - c0
    stats = reader.stats
    out = {"impl": "pcp-native", "path": "columns: pcp.bulk.ArchiveReader",
           "bulk_file": bulk.__file__, "chunks": chunks, "rows": rows,
           "metrics": len(reader.metric_names),
           "conversion_errors": stats.get("conversion_errors")}
    return finish(out, values, stats["records"], stats["marks"], None, 0, isum, fsum,
                  strings, str_bytes, open_s, scan_s, cpu_s, False, mem)


SCANNERS = {"dropin": scan_dropin, "arrays": scan_arrays, "bulk": scan_bulk,
            "columns": scan_columns}


def scan(mode, archive, max_records=0):
    return SCANNERS[mode](archive, max_records)


def main(argv=None):
    ap = argparse.ArgumentParser(description="scan one archive, print one JSON object")
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("archive")
    ap.add_argument("--max-records", type=int, default=0,
                    help="stop after this many records (0: the whole archive)")
    args = ap.parse_args(argv)
    try:
        out = scan(args.mode, args.archive, args.max_records)
    except Exception as exc:   # one JSON line either way, for the runner
        out = {"error": "%s: %s" % (type(exc).__name__, exc)}
        print(json.dumps(out))
        return 1
    out["python"] = sys.executable
    out["pid"] = os.getpid()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
