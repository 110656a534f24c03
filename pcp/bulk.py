"""Bulk access beyond the official binding: archives decoded straight into numpy columns.

    from pcp import bulk
    for chunk in bulk.scan_archive("/var/log/pcp/pmlogger/host/20261121"):
        chunk.ival[chunk.vtype == 3]          # every U64 value of these records

    # per metric, a time x instance matrix (pcp/_bulk/columns.py)
    cols = bulk.read_archive("/var/log/pcp/pmlogger/host/20261121",
                             ["kernel.all.load", "disk.dev"], rate=True)
    cols.time, cols["disk.dev.read"].values, cols["disk.dev.read"].instance_names
    bulk.ArchiveReader(name, metrics).to_parquet("out.parquet")    # chunk by chunk
    bulk.read_archive(name, ["disk.dev.await", "disk.dev.util"])   # derived metrics too

Each chunk covers many whole records, decoded by one C call per chunk (csrc/archive_record.c,
pcp_archive_records_scan) with the GIL released; no Python object is made per value. Memory stays
flat whatever the archive's size: chunks are fresh arrays of a bounded size and the pages
of the volume already decoded are handed back to the kernel.
"""
from __future__ import annotations

from pcp._bulk.arrays import ArchiveColumns, MetricArray, MissingMetricsWarning
from pcp._bulk.columns import ArchiveReader, read_archive
from pcp._bulk.records import Chunk, scan_archive

__all__ = ["ArchiveColumns", "ArchiveReader", "Chunk", "MetricArray", "MissingMetricsWarning",
           "read_archive", "scan_archive"]
