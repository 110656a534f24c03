"""pcp-native: a libpcp-free, C-accelerated drop-in for the Performance Co-Pilot Python binding.

``pcp.__implementation__`` (also ``pcp.pmapi.__implementation__``) says which binding was
imported: it is "pcp-native" here; the official python3-pcp package does not define it.
"""
__implementation__ = "pcp-native"


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:     # Python < 3.8
        return "unknown"
    try:
        return version("pcp-native")
    except PackageNotFoundError:
        return "unknown"


__version__ = _version()
