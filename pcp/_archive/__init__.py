"""Archives: file sets and volumes, metadata, the record reader, the archive context."""
