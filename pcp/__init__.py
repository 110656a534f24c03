"""pcp-native: a libpcp-free, C-accelerated drop-in for the Performance Co-Pilot Python binding.

``pcp.__implementation__`` (also ``pcp.pmapi.__implementation__``) says which binding was
imported: it is "pcp-native" here; the official python3-pcp package does not define it.
"""
__implementation__ = "pcp-native"
__version__ = "0.1.0"   # the one place of the version: pyproject.toml reads it from here
