"""A dask.distributed LocalCluster of one worker and its client, for the pcp.dask tests."""
from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def local_client(processes: bool, threads: int) -> Iterator[object]:
    """A client of a one-worker LocalCluster (worker processes or threads of this one),
    closed with its cluster when the block ends."""
    import distributed

    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=threads,
                                       processes=processes, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
