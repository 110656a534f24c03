"""Typed numpy values from decoded value columns (ResultArrays, bulk chunks): the
columns hold every integer in `ival` (32-bit INSITU words sign-extended) and every FLOAT
or DOUBLE block in `dval`; the metric's type says how to read them."""
from __future__ import annotations

from typing import Any

import numpy as np

from pcp._core.constants import (PM_TYPE_32, PM_TYPE_64, PM_TYPE_AGGREGATE, PM_TYPE_DOUBLE,
                                 PM_TYPE_FLOAT, PM_TYPE_STRING, PM_TYPE_U32, PM_TYPE_U64)

NUMERIC = (PM_TYPE_32, PM_TYPE_U32, PM_TYPE_64, PM_TYPE_U64, PM_TYPE_FLOAT, PM_TYPE_DOUBLE)
BLOBS = (PM_TYPE_STRING, PM_TYPE_AGGREGATE)   # values kept as bytes, not numbers

# numpy dtype of each numeric PM_TYPE_*
DTYPES = {PM_TYPE_32: np.dtype(np.int32), PM_TYPE_U32: np.dtype(np.uint32),
          PM_TYPE_64: np.dtype(np.int64), PM_TYPE_U64: np.dtype(np.uint64),
          PM_TYPE_FLOAT: np.dtype(np.float32), PM_TYPE_DOUBLE: np.dtype(np.float64)}
# ... and of every type a bulk column can hold (strings and aggregates as objects)
CELL_DTYPES = {**DTYPES, PM_TYPE_STRING: np.dtype(object), PM_TYPE_AGGREGATE: np.dtype(object)}


def typed(mtype: int, vtype: Any, ival: Any, dval: Any) -> Any:
    """The values as the metric type's numpy dtype (a new array)."""
    if mtype == PM_TYPE_32:
        return ival.astype(np.int32)
    if mtype == PM_TYPE_U32:
        return ival.astype(np.uint32)
    if mtype == PM_TYPE_64:
        return np.array(ival, dtype=np.int64)
    if mtype == PM_TYPE_U64:
        return np.array(ival, dtype=np.int64).view(np.uint64)
    if mtype == PM_TYPE_FLOAT:
        out = dval.astype(np.float32)
        insitu = vtype == -1
        if insitu.any():       # a FLOAT in the value word (old archives)
            out[insitu] = ival[insitu].astype(np.uint32).view(np.float32)
        return out
    if mtype == PM_TYPE_DOUBLE:
        return np.array(dval, dtype=np.float64)
    raise TypeError("metric type %d is not numeric" % mtype)


def as_float(mtype: int, vtype: Any, ival: Any, dval: Any) -> Any:
    """The values as float64 (what rates and ring buffers hold)."""
    if mtype == PM_TYPE_DOUBLE:
        return np.array(dval, dtype=np.float64)
    return typed(mtype, vtype, ival, dval).astype(np.float64)


def counter_delta(mtype: int, cur: Any, prev: Any) -> Any:
    """cur - prev of raw counter values as float64, computed exactly in the metric's
    integer type (64-bit counters lose nothing before the division)."""
    if mtype in (PM_TYPE_U32, PM_TYPE_U64, PM_TYPE_32, PM_TYPE_64):
        a = np.asarray(cur)
        b = np.asarray(prev)
        if mtype in (PM_TYPE_U32, PM_TYPE_U64):
            a = a.astype(np.uint64)
            b = b.astype(np.uint64)
            d = (a - b).view(np.int64).astype(np.float64)      # wraps: negative = reset
        else:
            d = (a.astype(np.int64) - b.astype(np.int64)).astype(np.float64)
        return d
    return np.asarray(cur, dtype=np.float64) - np.asarray(prev, dtype=np.float64)
