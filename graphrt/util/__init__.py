"""Small utilities with no graphrt dependencies, below every layer (crc32c; hashing: TF's string hashes, shared by strings/ and sparse/)."""
