"""libpcp_mmv's numbers, for ``import cmmv``: the stand-in for the official binding's
``cmmv`` extension module (MMV_TYPE_*, MMV_SEM_*, MMV_FLAG_*, the label value types and
the name, string and label limits, with the values of PCP 6.0.3's mmv_stats.h). Defined
once, in pcp._core.constants."""

from pcp._core.constants import (  # noqa: F401  (re-exported)
    MMV_ARRAY_TYPE, MMV_BOOLEAN_TYPE, MMV_FLAG_NOPREFIX, MMV_FLAG_PROCESS, MMV_FLAG_SENTINEL,
    MMV_LABELMAX, MMV_MAP_TYPE, MMV_NAMEMAX, MMV_NULL_TYPE, MMV_NUMBER_TYPE, MMV_SEM_COUNTER,
    MMV_SEM_DISCRETE, MMV_SEM_INSTANT, MMV_STRING_TYPE, MMV_STRINGMAX, MMV_TYPE_DOUBLE,
    MMV_TYPE_ELAPSED, MMV_TYPE_FLOAT, MMV_TYPE_I32, MMV_TYPE_I64, MMV_TYPE_NOSUPPORT,
    MMV_TYPE_STRING, MMV_TYPE_U32, MMV_TYPE_U64,
)
from pcp._core.constants import MMV_INDOM_NULL as _MMV_INDOM_NULL
from pcp._core.level import served as _served

if _served("MMV_INDOM_NULL"):      # PCP 6.3's
    MMV_INDOM_NULL = _MMV_INDOM_NULL

