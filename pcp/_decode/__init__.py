"""The Python half of each C decoder family: PDUs, results, event records."""
