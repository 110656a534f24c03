"""Bulk reads beyond the official binding: the archive columns engine, its exports, typed numpy values."""
