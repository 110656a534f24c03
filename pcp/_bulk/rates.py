"""Counters to rates per second over whole matrices, carried across chunks."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np


class RateCarry:
    """Per column: the last value seen, its time and segment (marks split segments)."""

    __slots__ = ("value", "time", "seg", "have")

    def __init__(self, ncols: int, dtype: np.dtype) -> None:
        self.value = np.zeros(ncols, dtype)
        self.time = np.zeros(ncols, np.int64)
        self.seg = np.zeros(ncols, np.int64)
        self.have = np.zeros(ncols, bool)

    def grow(self, ncols: int) -> None:
        extra = ncols - len(self.value)
        if extra > 0:
            self.value = np.concatenate([self.value, np.zeros(extra, self.value.dtype)])
            self.time = np.concatenate([self.time, np.zeros(extra, np.int64)])
            self.seg = np.concatenate([self.seg, np.zeros(extra, np.int64)])
            self.have = np.concatenate([self.have, np.zeros(extra, bool)])


def counter_rate(values: np.ndarray, present: np.ndarray, time_ns: np.ndarray,
                 seg: np.ndarray, carry: Optional[RateCarry] = None
                 ) -> Tuple[np.ndarray, np.ndarray]:
    """Rates of change per second of a counter matrix: for each value, (v - v_prev) /
    (t - t_prev) with the instance's previous value in the same segment (no mark in
    between); NaN (and not present) for the first value, after a mark, and where the
    counter went backwards (a wrap or a reset) or time did not advance. `carry` holds
    the previous values across calls and is updated."""
    n, ncols = values.shape
    rows = np.arange(n, dtype=np.int64)[:, None]
    last = np.where(present, rows, -1)
    np.maximum.accumulate(last, axis=0, out=last)
    prev = np.empty_like(last)
    prev[0] = -1
    prev[1:] = last[:-1]
    has_prev = prev >= 0
    pidx = np.where(has_prev, prev, 0)
    if n:
        pv = np.take_along_axis(values, pidx, axis=0)
        pt = time_ns[pidx]
        ps = seg[pidx]
    else:
        pv = values.copy()
        pt = np.zeros((0, ncols), np.int64)
        ps = np.zeros((0, ncols), np.int64)
    if carry is not None:
        carry.grow(ncols)
        use = ~has_prev & carry.have[None, :]
        pv = np.where(use, carry.value[None, :], pv)
        pt = np.where(use, carry.time[None, :], pt)
        ps = np.where(use, carry.seg[None, :], ps)
        has_prev = has_prev | use
    # each row's time and segment, broadcast against its columns by the operators
    t = time_ns[:, None]
    s = seg[:, None]
    ok = present & has_prev & (s == ps) & (t > pt) & (values >= pv)
    if values.dtype.kind in "iu" and values.dtype.itemsize < 8:
        diff = values.astype(np.int64) - pv.astype(np.int64)
    elif values.dtype.kind == "f":
        diff = values.astype(np.float64) - pv.astype(np.float64)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            diff = values - pv          # unsigned: exact where values >= pv
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = diff.astype(np.float64) / ((t - pt).astype(np.float64) / 1e9)
    rate[~ok] = np.nan
    if carry is not None and n:
        seen = present.any(axis=0)
        lastrow = last[-1]
        cols = np.nonzero(seen)[0]
        carry.value[cols] = values[lastrow[cols], cols]
        carry.time[cols] = time_ns[lastrow[cols]]
        carry.seg[cols] = seg[lastrow[cols]]
        carry.have[cols] = True
    return rate, ok
