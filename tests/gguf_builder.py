"""Build small GGUF files byte by byte, for tests that need a file with one thing wrong.

Written with ``struct`` rather than the ``gguf`` package so a test can produce what no writer
would: a missing key, a wrong type, an array longer than the file.
"""

from __future__ import annotations

import struct

STRING, ARRAY, UINT32, INT32, FLOAT32, BOOL, UINT8 = 8, 9, 4, 5, 6, 7, 0


def gstr(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def kv_string(key: str, value: str) -> bytes:
    return gstr(key) + struct.pack("<I", STRING) + gstr(value)


def kv_u32(key: str, value: int) -> bytes:
    return gstr(key) + struct.pack("<II", UINT32, value)


def kv_bool(key: str, value: bool) -> bytes:
    return gstr(key) + struct.pack("<I?", BOOL, value)


def kv_strings(key: str, values: list[str], claimed: int | None = None) -> bytes:
    n = len(values) if claimed is None else claimed
    return gstr(key) + struct.pack("<IIQ", ARRAY, STRING, n) + b"".join(gstr(v) for v in values)


def kv_int32s(key: str, values: list[int]) -> bytes:
    return gstr(key) + struct.pack("<IIQ", ARRAY, INT32, len(values)) + struct.pack(f"<{len(values)}i", *values)


def kv_float32s(key: str, values: list[float]) -> bytes:
    return gstr(key) + struct.pack("<IIQ", ARRAY, FLOAT32, len(values)) + struct.pack(f"<{len(values)}f", *values)


def gguf(*kvs: bytes, version: int = 3, magic: bytes = b"GGUF") -> bytes:
    return magic + struct.pack("<IQQ", version, 0, len(kvs)) + b"".join(kvs)


def tiny_spm_gguf() -> bytes:
    """A valid 6-token SentencePiece-style vocabulary."""
    tokens = ["<unk>", "<s>", "</s>", "▁", "a", "▁a"]
    return gguf(
        kv_string("general.architecture", "llama"),
        kv_string("tokenizer.ggml.model", "llama"),
        kv_strings("tokenizer.ggml.tokens", tokens),
        kv_float32s("tokenizer.ggml.scores", [0.0, 0.0, 0.0, -1.0, -2.0, -0.5]),
        kv_int32s("tokenizer.ggml.token_type", [2, 3, 3, 1, 1, 1]),
        kv_u32("tokenizer.ggml.bos_token_id", 1),
        kv_u32("tokenizer.ggml.eos_token_id", 2),
        kv_bool("tokenizer.ggml.add_bos_token", True),
    )
