"""pcp-native: a libpcp-free, C-accelerated drop-in for the Performance Co-Pilot Python binding."""
