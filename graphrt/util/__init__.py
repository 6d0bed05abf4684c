"""Small utilities with no graphrt dependencies, below every layer (crc32c)."""
