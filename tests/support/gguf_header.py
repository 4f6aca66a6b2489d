"""GGUF v3 headers for tests: metadata and a tensor table, no tensor data (what gsg's GGUF reader reads)."""

from __future__ import annotations

import struct

STRING, UINT32, ARRAY = 8, 4, 9  # GGUF metadata value types


def gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_u32(value: int) -> bytes:
    return struct.pack("<I", value)


def gguf_header(kv: list[tuple[str, int, bytes]], tensors: list[tuple[str, tuple[int, ...], int]]) -> bytes:
    """The header of a GGUF v3 file: `kv` as (key, value type, encoded value), `tensors` as (name, shape, ggml
    type), every tensor at offset 0."""
    body = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    for key, kind, value in kv:
        body += gguf_string(key) + struct.pack("<I", kind) + value
    for name, shape, kind in tensors:
        body += gguf_string(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
        body += struct.pack("<IQ", kind, 0)
    return body
