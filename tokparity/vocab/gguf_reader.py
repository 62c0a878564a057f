"""A fast, bounds-checked reader for the metadata of a GGUF file.

gguf-py's ``GGUFReader`` builds a numpy view per array element: reading the 262,144 token
strings and 514,906 merges of ``ggml-vocab-gemma-4.gguf`` takes about 23 s that way. A GGUF's
key/value section is simple enough to walk with ``struct`` over an ``mmap``:

    magic "GGUF" | version u32 | n_tensors u64 | n_kv u64 | n_kv × (key, type u32, value)

where a string is ``u64 length + bytes`` and an array is ``type u32, count u64, elements``.
Scalar and numeric arrays are decoded at once (numeric arrays in bulk with ``array``);
string arrays are only *located* here (offset and byte length), so that a caller decodes the
tokens when it needs them and the merges only if it ever does.

Every length is checked against the bytes left in the file before anything is allocated, so a
hostile file gets a ``BadModelFile`` naming the key and offset, never a MemoryError or hang.
Tensor infos and tensor data, which follow the metadata, are not read.
"""

from __future__ import annotations

import mmap
import os
import struct
from array import array
from dataclasses import dataclass
from pathlib import Path

from tokparity.errors import BadModelFile

GGUF_MAGIC = b"GGUF"

# GGUF value types: (name, struct code, size) for scalars.
_SCALARS = {
    0: ("uint8", "B", 1),
    1: ("int8", "b", 1),
    2: ("uint16", "H", 2),
    3: ("int16", "h", 2),
    4: ("uint32", "I", 4),
    5: ("int32", "i", 4),
    6: ("float32", "f", 4),
    7: ("bool", "?", 1),
    10: ("uint64", "Q", 8),
    11: ("int64", "q", 8),
    12: ("float64", "d", 8),
}
T_STRING = 8
T_ARRAY = 9
# Arrays of arrays are legal GGUF (llama.cpp itself refuses them); no tokenizer key uses one.
# Nesting is bounded so a hostile file cannot recurse the reader off the stack.
MAX_ARRAY_DEPTH = 8
_TYPE_NAMES = {k: v[0] for k, v in _SCALARS.items()} | {T_STRING: "string", T_ARRAY: "array"}


@dataclass(slots=True)  # slots: a hostile file can hold millions of tiny nested arrays
class StringArray:
    """A GGUF array of strings, located but not decoded: ``count`` strings in
    ``raw = data[start:end]``, each a little-endian u64 length then its bytes."""

    count: int
    raw: bytes | memoryview
    byteorder: str = "<"

    def decode(self) -> list[str]:
        """Decode every string; invalid UTF-8 survives as surrogate escapes."""
        raw = self.raw
        out: list[str] = []
        append = out.append
        unpack = struct.Struct(self.byteorder + "Q").unpack_from
        off = 0
        for _ in range(self.count):
            (n,) = unpack(raw, off)
            off += 8
            append(str(raw[off:off + n], "utf-8", "surrogateescape"))
            off += n
        return out

    def canonical_bytes(self) -> bytes:
        """The array's bytes in tokparity's canonical (little-endian GGUF) layout."""
        if self.byteorder == "<":
            return bytes(self.raw)
        from tokparity.vocab.model import encode_strings
        return encode_strings(self.decode())


@dataclass(slots=True)
class NumericArray:
    type_name: str
    values: array  # already in host byte order

    def tolist(self) -> list:
        return self.values.tolist()


def _show_key(key: str, limit: int = 80) -> str:
    """A key as a message shows it: quoted and escaped (a corrupt key may hold newlines or
    megabytes of binary), cut after ``limit`` characters."""
    if len(key) <= limit:
        return repr(key)
    return f"{key[:limit]!r}… ({len(key)} characters)"


class GGUFMetadata:
    """The key/value metadata of one GGUF file. ``fields[key]`` is a Python scalar, a
    ``StringArray``, a ``NumericArray`` or a list (arrays of arrays)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    raise BadModelFile(self.path, "empty file (0 bytes); re-download it")
                # The mmap stays alive as long as memoryviews of it do (string arrays).
                self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise BadModelFile(self.path, "no such file") from None
        except IsADirectoryError:
            raise BadModelFile(self.path, "is a directory, not a GGUF file") from None
        except PermissionError:
            raise BadModelFile(self.path, "permission denied") from None
        except (OSError, ValueError) as e:  # a device or pipe cannot be mapped
            raise BadModelFile(self.path, f"cannot map it into memory ({getattr(e, 'strerror', None) or e})") from None
        self.size = size
        self.fields: dict[str, object] = {}
        self.field_types: dict[str, str] = {}
        self._parse()

    # -- low-level cursor -------------------------------------------------------------------------

    def _fail(self, what: str) -> BadModelFile:
        return BadModelFile(self.path, what)

    def _need(self, off: int, n: int, what: str) -> None:
        if n < 0 or off + n > self.size:
            raise self._fail(f"truncated at byte {self.size} while reading {what} "
                             f"(needs {n} bytes at offset {off}); the file is incomplete or corrupt, re-download it")

    def _unpack(self, code: str, off: int, what: str):
        n = struct.calcsize(code)
        self._need(off, n, what)
        return struct.unpack_from(self._bo + code, self._data, off)[0], off + n

    def _string(self, off: int, what: str) -> tuple[str, int]:
        n, off = self._unpack("Q", off, what)
        self._need(off, n, what)
        return str(self._data[off:off + n], "utf-8", "surrogateescape"), off + n

    # -- parsing ---------------------------------------------------------------------------------

    def _parse(self) -> None:
        d = self._data
        if self.size < 4 or d[:4] != GGUF_MAGIC:
            got = bytes(d[:4])
            raise self._fail(f"not a GGUF file (magic {got!r}, expected b'GGUF')")
        self._need(4, 4, "the header")
        (version,) = struct.unpack_from("<I", d, 4)
        self._bo = "<"
        if version & 0xFFFF == 0 and version != 0:  # a big-endian file read on a little-endian host
            self._bo = ">"
            (version,) = struct.unpack_from(">I", d, 4)
        if version not in (2, 3):
            hint = " (GGUF v1 is obsolete; reconvert the model)" if version == 1 else ""
            raise self._fail(f"unsupported GGUF version {version}{hint}")
        self.version = version
        self.n_tensors, off = self._unpack("Q", 8, "the header")
        n_kv, off = self._unpack("Q", off, "the header")
        # A key/value pair takes at least 8 (key length) + 4 (type) + 1 bytes.
        if n_kv * 13 > self.size - off:
            raise self._fail(f"header claims {n_kv} metadata keys, more than the {self.size} byte file can hold; "
                             "the file is corrupt")
        for index in range(n_kv):
            key, off = self._string(off, f"metadata key #{index}")
            name = _show_key(key)
            vtype, off = self._unpack("I", off, f"the type of {name}")
            value, off = self._value(vtype, off, name)
            if key in self.fields:
                raise self._fail(f"duplicate metadata key {name}; the file is corrupt")
            self.fields[key] = value
            self.field_types[key] = self._type_name(vtype, value)
        self.end_of_metadata = off

    def _type_name(self, vtype: int, value: object) -> str:
        if isinstance(value, StringArray):
            return "array[string]"
        if isinstance(value, NumericArray):
            return f"array[{value.type_name}]"
        if isinstance(value, list):
            return "array[array]"
        return _TYPE_NAMES.get(vtype, "?")

    # ``name`` below is a key as messages show it (``_show_key``): quoted, one line, not too long.

    def _value(self, vtype: int, off: int, name: str):
        if vtype in _SCALARS:
            return self._unpack(_SCALARS[vtype][1], off, name)
        if vtype == T_STRING:
            return self._string(off, name)
        if vtype == T_ARRAY:
            return self._array(off, name)
        raise self._fail(f"key {name} has unknown value type {vtype}; the file is corrupt or newer than tokparity")

    def _array(self, off: int, key: str, depth: int = 1):
        if depth > MAX_ARRAY_DEPTH:
            raise self._fail(f"array {key} nests arrays more than {MAX_ARRAY_DEPTH} deep; the file is corrupt")
        etype, off = self._unpack("I", off, f"the element type of {key}")
        count, off = self._unpack("Q", off, f"the length of {key}")
        remaining = self.size - off
        if etype in _SCALARS:
            name, code, width = _SCALARS[etype]
            nbytes = count * width
            if nbytes > remaining:
                raise self._fail(f"array {key} claims {count} {name} values ({nbytes} bytes) but only "
                                 f"{remaining} bytes remain; the file is truncated or corrupt; re-download it")
            if code in "?":
                values = array("B", self._data[off:off + nbytes])
            else:
                values = array(code)
                values.frombytes(self._data[off:off + nbytes])
                if (self._bo == ">") == (struct.pack("=H", 1) == struct.pack("<H", 1)):
                    values.byteswap()
            return NumericArray(name, values), off + nbytes
        if etype == T_STRING:
            if count * 8 > remaining:
                raise self._fail(f"array {key} claims {count} strings but only {remaining} bytes remain; "
                                 "the file is truncated or corrupt; re-download it")
            start = off
            unpack = struct.Struct(self._bo + "Q").unpack_from
            d, size = self._data, self.size
            # Walk the lengths only (cheap); the strings are decoded later, on demand.
            for i in range(count):
                if off + 8 > size:
                    raise self._fail(f"truncated at byte {size} inside array {key} (string {i} of {count}); "
                                     "the file is incomplete, re-download it")
                (n,) = unpack(d, off)
                off += 8 + n
                if off > size:
                    raise self._fail(f"truncated at byte {size} inside array {key} (string {i} of {count} "
                                     f"claims {n} bytes); the file is incomplete, re-download it")
            return StringArray(count, memoryview(d)[start:off], self._bo), off
        if etype == T_ARRAY:
            if count * 12 > remaining:
                raise self._fail(f"array {key} claims {count} nested arrays but only {remaining} bytes remain; "
                                 "the file is truncated or corrupt")
            items = []
            for i in range(count):
                item, off = self._array(off, f"{key}[{i}]", depth + 1)
                items.append(item)
            return items, off
        raise self._fail(f"array {key} has unknown element type {etype}; the file is corrupt")

    # -- typed access ----------------------------------------------------------------------------

    def get(self, key: str, default=None):
        return self.fields.get(key, default)

    def require(self, key: str, kind: type | tuple[type, ...], what: str = ""):
        if key not in self.fields:
            raise self._fail(f"missing required key {key!r}{what}; is this a tokenizer GGUF?")
        value = self.fields[key]
        if not isinstance(value, kind):
            raise self._fail(f"key {key!r} has type {self.field_types[key]}, expected "
                             f"{getattr(kind, '__name__', kind)}")
        return value
