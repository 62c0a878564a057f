"""Hostile variants of real tokenizer files, made deterministically from a seed.

Each mutator takes the bytes of a valid file (a GGUF, a SentencePiece ``.model``, a
``tokenizer.json``) and returns ``Recipe``s (built one at a time: hundreds of copies of a 7 MB
file do not fit in memory at once) or a ``Mutant``: the hostile bytes and a name that says what
was done. The same seed gives the same mutants, so a name and a seed reproduce any case: on
llama.cpp's ``ggml-vocab-llama-spm.gguf``, ``gguf_structural(GGUFLayout(data), random.Random(9),
"m.gguf")`` gives 933 recipes, the first named ``gguf/version=0``, and the recipe named
``gguf/length general.name key-length=2**63`` builds the ``Mutant`` whose key length says 2**63.

What they know of each format is only its framing, enough to hit the places where a loader
trusts a number it read:

* GGUF: ``GGUFLayout`` walks the header and every key/value record and records each field's
  span (key length, key, type, value, array type, array count, each string's length). From it:
  truncation at every boundary, length fields set to absurd values, value types swapped (in
  place, so the rest misparses, or well-formed, so the loader sees a wrong type), duplicated
  keys, deep nesting, count mismatches, bit flips and a hostile ``precompiled_charsmap``.
* ``.model``: a protobuf tree (``pb_parse`` / ``pb_serialize``, lengths recomputed) so that one
  field deep inside a piece or the NormalizerSpec can lie while its parents stay consistent:
  absurd lengths, runaway varints, wrong wire types, invalid UTF-8, a hostile charsmap.
* ``tokenizer.json``: wrong JSON types at every place the loader reads, huge and negative
  ids, integers too long to parse, deep nesting, invalid UTF-8, duplicated keys, a hostile
  ``tokenizer_config.json`` beside it.
* ``hostile_charsmaps``: blob size, trie size and trie units that point out of bounds (llama.cpp
  throws "Index out of array bounds in precompiled charsmap!" on these).
"""

from __future__ import annotations

import base64
import json
import random
import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ABSURD = (2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1)
_POW = {2**31: "2**31", 2**32 - 1: "2**32-1", 2**32: "2**32", 2**63: "2**63", 2**64 - 1: "2**64-1"}


def _show(n: int) -> str:
    return _POW.get(n, str(n))


@dataclass(frozen=True)
class Mutant:
    """One hostile file: ``data`` written as ``filename``, with ``extra_files`` beside it."""

    name: str
    data: bytes
    filename: str
    extra_files: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class Recipe:
    """A mutant not made yet: ``make(*args)`` gives its bytes. Hundreds of variants of a
    7 MB file would not fit in memory at once; recipes are cheap, built one at a time."""

    name: str
    make: Callable[..., bytes]
    args: tuple
    filename: str
    extra_files: tuple[tuple[str, bytes], ...] = ()

    def build(self) -> Mutant:
        return Mutant(self.name, self.make(*self.args), self.filename, self.extra_files)


def _cut(data: bytes, at: int) -> bytes:
    return data[:at]


def _concat(*parts: bytes) -> bytes:
    return b"".join(parts)


def flip_bits(data: bytes, rng: random.Random, count: int, positions: list[int] | None = None) -> tuple[bytes, str]:
    """Flip ``count`` random bits, at byte offsets drawn from ``positions`` (default: anywhere)."""
    out = bytearray(data)
    flips = []
    for _ in range(count):
        off = rng.choice(positions) if positions else rng.randrange(len(out))
        bit = rng.randrange(8)
        out[off] ^= 1 << bit
        flips.append(f"{off}.{bit}")
    return bytes(out), ",".join(flips)


# ---------------------------------------------------------------------------------------------
# precompiled_charsmap

def hostile_charsmaps(blob: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    """``[(label, blob)]``: truncated blobs, trie sizes past the end or unaligned, trie units
    whose BASE or value offsets point outside the array or the string table."""
    n = len(blob)
    trie = struct.unpack_from("<I", blob)[0] if n >= 4 else 0
    out = [("empty", b""), ("3-bytes", blob[:3]), ("size-only", blob[:4]), ("5-bytes", blob[:5]),
           ("half", blob[: n // 2]), ("no-final-nul", blob[:-1]), ("strings-unterminated", blob[:-1] + b"x"),
           ("string-table-1-byte", blob[: 4 + trie] + b"\0")]
    for label, size in (("blob", n), ("blob-4", n - 4), ("2**32-1", 2**32 - 1), ("2**31", 2**31),
                        ("unaligned", trie + 1), ("0", 0), ("4", 4)):
        out.append((f"trie-size={label}", struct.pack("<I", size & 0xFFFFFFFF) + blob[4:]))
    if trie >= 8:
        out.append(("root-base-out-of-bounds", blob[:4] + struct.pack("<I", 0x7FFFFC00) + blob[8:]))
        for k in range(3):
            units = bytearray(blob)
            for _ in range(64):
                i = 4 + 4 * rng.randrange(trie // 4)
                units[i:i + 4] = struct.pack("<I", rng.getrandbits(32))
            out.append((f"random-units-{k}", bytes(units)))
        # Keep the trie, shrink the strings: every value offset now points past the table.
        out.append(("offsets-past-strings", blob[: 4 + trie] + b"\0" * min(2, n - 4 - trie)))
    return out


# ---------------------------------------------------------------------------------------------
# GGUF

GGUF_STRING, GGUF_ARRAY = 8, 9
GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
U8, I32, U32, F32, BOOL, F64, I64, U64 = 0, 5, 4, 6, 7, 12, 11, 10


@dataclass(frozen=True)
class Span:
    kind: str  # magic, version, n_tensors, n_kv, key-length, key, type, value, string-length,
    #            string, array-type, array-count, elements
    start: int
    end: int
    key: str = ""


@dataclass(frozen=True)
class Record:
    """One key/value pair: ``data[start:end]``; its type field is at ``type_at``."""

    key: str
    start: int
    type_at: int
    end: int
    vtype: int


class GGUFLayout:
    """Where every header field, key and value of a (valid, little-endian) GGUF lies.

    String arrays are not split into per-string spans (262,144 of them in Gemma's file);
    ``string_starts[key]`` holds the offset of each string's u64 length instead."""

    def __init__(self, data: bytes):
        if data[:4] != b"GGUF":
            raise ValueError("not a GGUF file")
        self.data = data
        self.spans: list[Span] = [Span("magic", 0, 4), Span("version", 4, 8),
                                  Span("n_tensors", 8, 16), Span("n_kv", 16, 24)]
        self.records: list[Record] = []
        self.string_starts: dict[str, array] = {}
        off = 24
        for _ in range(self._u64(16)):
            start = off
            n = self._u64(off)
            key = data[off + 8:off + 8 + n].decode("utf-8", "replace")
            self.spans += [Span("key-length", off, off + 8, key), Span("key", off + 8, off + 8 + n, key)]
            off += 8 + n
            vtype = struct.unpack_from("<I", data, off)[0]
            self.spans.append(Span("type", off, off + 4, key))
            end = self._value(vtype, off + 4, key)
            self.records.append(Record(key, start, off, end, vtype))
            off = end
        self.end_of_metadata = off

    def _u64(self, off: int) -> int:
        return struct.unpack_from("<Q", self.data, off)[0]

    def _value(self, vtype: int, off: int, key: str) -> int:
        if vtype in GGUF_SIZES:
            self.spans.append(Span("value", off, off + GGUF_SIZES[vtype], key))
            return off + GGUF_SIZES[vtype]
        if vtype == GGUF_STRING:
            n = self._u64(off)
            self.spans += [Span("string-length", off, off + 8, key), Span("string", off + 8, off + 8 + n, key)]
            return off + 8 + n
        etype, count = struct.unpack_from("<IQ", self.data, off)
        self.spans += [Span("array-type", off, off + 4, key), Span("array-count", off + 4, off + 12, key)]
        off += 12
        if etype in GGUF_SIZES:
            self.spans.append(Span("elements", off, off + count * GGUF_SIZES[etype], key))
            return off + count * GGUF_SIZES[etype]
        if etype == GGUF_STRING:
            starts = self.string_starts[key] = array("Q")
            for _ in range(count):
                starts.append(off)
                off += 8 + self._u64(off)
            return off
        for _ in range(count):
            off = self._value(GGUF_ARRAY, off, key)
        return off

    def record(self, key: str) -> Record | None:
        return next((r for r in self.records if r.key == key), None)

    def sampled_strings(self, rng: random.Random, per_array: int) -> list[tuple[str, int, int]]:
        """``[(key, index, offset)]``: the first three and last two strings of each string
        array and ``per_array`` more at random."""
        out = []
        for key, starts in self.string_starts.items():
            n = len(starts)
            picks = {i for i in (0, 1, 2, n - 2, n - 1) if 0 <= i < n}
            picks |= set(rng.sample(range(n), min(per_array, n)))
            out += [(key, i, starts[i]) for i in sorted(picks)]
        return out


def gguf_string(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf_array(etype: int, values: list) -> bytes:
    if etype == GGUF_STRING:
        return struct.pack("<IQ", GGUF_STRING, len(values)) + b"".join(gguf_string(v) for v in values)
    code = {U8: "B", I32: "i", U32: "I", F32: "f", BOOL: "?", F64: "d", I64: "q", U64: "Q"}[etype]
    return struct.pack(f"<IQ{len(values)}{code}", etype, len(values), *values)


# Well-formed values of the wrong type, for "wrong value type" cases: (label, type, payload).
WRONG_VALUES = (
    ("string", GGUF_STRING, gguf_string("x")),
    ("uint32", U32, struct.pack("<I", 7)),
    ("int64=-1", I64, struct.pack("<q", -1)),
    ("uint64=2**64-1", U64, struct.pack("<Q", 2**64 - 1)),
    ("float32", F32, struct.pack("<f", 1.5)),
    ("bool", BOOL, b"\x01"),
    ("array[int32]", GGUF_ARRAY, gguf_array(I32, [1, 2, 3])),
    ("array[uint32]-huge", GGUF_ARRAY, gguf_array(U32, [2**32 - 1, 2**31])),
    ("array[string]", GGUF_ARRAY, gguf_array(GGUF_STRING, ["a", "b"])),
    ("array[string]-empty", GGUF_ARRAY, gguf_array(GGUF_STRING, [])),
    ("array[bool]", GGUF_ARRAY, gguf_array(BOOL, [True])),
    ("array[float64]", GGUF_ARRAY, gguf_array(F64, [1e300, float("nan")])),
    ("array[array]", GGUF_ARRAY, struct.pack("<IQ", GGUF_ARRAY, 1) + gguf_array(U8, [])),
    ("array-nested-5000-deep", GGUF_ARRAY, struct.pack("<IQ", GGUF_ARRAY, 1) * 5000 + gguf_array(U8, [])),
)


def _insert_record(data: bytes, at: int, record: bytes) -> bytes:
    """Insert one more key/value record at ``at`` and count it in the header."""
    n = struct.unpack_from("<Q", data, 16)[0]
    return data[:16] + struct.pack("<Q", n + 1) + data[24:at] + record + data[at:]


def _set_u(data: bytes, span: Span, value: int) -> bytes:
    width = span.end - span.start
    return data[:span.start] + (value & ((1 << 8 * width) - 1)).to_bytes(width, "little") + data[span.end:]


def _replace_value(data: bytes, rec: Record, vtype: int, payload: bytes) -> bytes:
    return data[:rec.type_at] + struct.pack("<I", vtype) + payload + data[rec.end:]


def gguf_truncations(layout: GGUFLayout, rng: random.Random, per_array: int = 16) -> list[int]:
    """Offsets to cut at: every span boundary, and the edges of sampled strings in arrays."""
    points = {s.start for s in layout.spans} | {s.end for s in layout.spans}
    for _, _, off in layout.sampled_strings(rng, per_array):
        points |= {off, off + 4, off + 8}
    points.discard(len(layout.data))
    return sorted(points)


def gguf_structural(layout: GGUFLayout, rng: random.Random, name: str, per_array: int = 8) -> list[Recipe]:
    """Every structural mutant of a GGUF, except truncations and bit flips (see the module docstring)."""
    data = layout.data
    out: list[Recipe] = []

    def add(label: str, make: Callable[..., bytes], *args) -> None:
        out.append(Recipe(f"gguf/{label}", make, args, name))

    # Header fields.
    for label, value in (("0", 0), ("1", 1), ("4", 4), ("2**32-1", 2**32 - 1), ("big-endian-3", 0x03000000)):
        add(f"version={label}", _set_u, data, layout.spans[1], value)
    add("magic=GGML", _concat, b"GGML", data[4:])
    n_kv = struct.unpack_from("<Q", data, 16)[0]
    for value in (0, n_kv - 1, n_kv + 1, *ABSURD):
        add(f"n_kv={_show(value)}", _set_u, data, layout.spans[3], value)
    for value in ABSURD:
        add(f"n_tensors={_show(value)}", _set_u, data, layout.spans[2], value)

    # Length fields: key lengths, string lengths, array counts, sampled string-array lengths.
    lengths = [s for s in layout.spans if s.kind in ("key-length", "string-length", "array-count")]
    lengths += [Span("string-length", off, off + 8, f"{key}[{i}]")
                for key, i, off in layout.sampled_strings(rng, per_array)]
    for span in lengths:
        orig = struct.unpack_from("<Q", data, span.start)[0]
        remaining = len(data) - span.end
        for value in sorted({orig + 1, max(orig - 1, 0), remaining, remaining + 1, *ABSURD} - {orig}):
            add(f"length {span.key} {span.kind}={_show(value)}", _set_u, data, span, value)

    # Types swapped in place (the bytes after them misparse).
    for span in layout.spans:
        if span.kind in ("type", "array-type"):
            orig = struct.unpack_from("<I", data, span.start)[0]
            for value in sorted({*range(14), 2**32 - 1} - {orig}):
                add(f"retype-in-place {span.key} {span.kind}={value}", _set_u, data, span, value)

    # Well-formed values of the wrong type, duplicated keys, on the tokenizer's own records.
    for rec in layout.records:
        if not (rec.key.startswith("tokenizer.") or rec.key == "general.architecture"):
            continue
        for label, vtype, payload in WRONG_VALUES:
            add(f"wrong-type {rec.key}={label}", _replace_value, data, rec, vtype, payload)
        add(f"duplicate {rec.key}", _insert_record, data, rec.end, data[rec.start:rec.end])
        add(f"duplicate {rec.key} as string", _insert_record, data, rec.end,
            gguf_string(rec.key) + struct.pack("<I", GGUF_STRING) + gguf_string("x"))

    # Arrays one element short of or longer than the vocabulary.
    for key in ("tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        arr = layout.record(key)
        if arr is not None:
            etype, count = struct.unpack_from("<IQ", data, arr.type_at + 4)
            width = GGUF_SIZES.get(etype, 0)
            elems = data[arr.type_at + 16:arr.end]
            for label, new in (("short", elems[:-width]), ("long", elems + elems[-width:])):
                payload = struct.pack("<IQ", etype, len(new) // max(width, 1)) + new
                add(f"count-mismatch {key} {label}", _replace_value, data, arr, GGUF_ARRAY, payload)
            # The right count, values no int32 holds (llama.cpp reads the array as int32).
            hostile: tuple[tuple[str, int, float], ...] = (("uint32=2**32-1", U32, 2**32 - 1), ("uint8=255", U8, 255),
                                                           ("float64=1e300", F64, 1e300))
            for label, etype2, bad_value in hostile:
                add(f"retype-array {key} {label}", _replace_value, data, arr, GGUF_ARRAY,
                    gguf_array(etype2, [bad_value] * count))

    # A hostile precompiled_charsmap.
    charsmap = layout.record("tokenizer.ggml.precompiled_charsmap")
    if charsmap is not None:
        blob = data[charsmap.type_at + 16:charsmap.end]
        for label, bad in hostile_charsmaps(blob, rng):
            payload = struct.pack("<IQ", U8, len(bad)) + bad
            add(f"charsmap {label}", _replace_value, data, charsmap, GGUF_ARRAY, payload)
    return out


def gguf_random(layout: GGUFLayout, rng: random.Random, name: str, structural: list[Recipe] | None = None) -> Mutant:
    """One random mutant: a truncation, bit flips (half of them on structural bytes) or a
    structural mutation drawn at random."""
    data = layout.data
    roll = rng.random()
    if roll < 0.25:
        cut = rng.choice(gguf_truncations(layout, rng, per_array=4)) if rng.random() < 0.7 else rng.randrange(len(data))
        return Mutant(f"gguf/truncate@{cut}", data[:cut], name)
    if roll < 0.6:
        positions = [i for s in layout.spans if s.kind not in ("string", "elements", "key")
                     for i in range(s.start, s.end)] if rng.random() < 0.5 else None
        mutated, where = flip_bits(data, rng, rng.randint(1, 4), positions)
        return Mutant(f"gguf/flip {where}", mutated, name)
    return rng.choice(structural if structural is not None else gguf_structural(layout, rng, name, per_array=2)).build()


# ---------------------------------------------------------------------------------------------
# SentencePiece .model (protobuf)

@dataclass
class PBField:
    """One protobuf field. ``value``: an int (varint), bytes (fixed or length-delimited) or a
    list of PBField (a parsed sub-message). ``raw``, when set, is written instead, key and all."""

    field: int
    wire: int
    value: Any  # by wire type: int (0), bytes (1, 5, and 2 unparsed) or list[PBField] (2 parsed)
    raw: bytes | None = None


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(data: bytes, off: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = data[off]
        off += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, off
        shift += 7


def pb_walk(data: bytes, base: int = 0, end: int | None = None):
    """``(start, field, wire, value_start, value_end)`` for each field of a valid message."""
    off, end = base, len(data) if end is None else end
    while off < end:
        start = off
        key, off = _read_varint(data, off)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, vend = _read_varint(data, off)
        elif wire == 2:
            n, off = _read_varint(data, off)
            vend = off + n
        else:
            vend = off + (8 if wire == 1 else 4)
        yield start, field, wire, off, vend
        off = vend


MODEL_SUBMESSAGES = (1, 2, 3)  # pieces, TrainerSpec, NormalizerSpec


def pb_parse(data: bytes, submessages: tuple[int, ...] = MODEL_SUBMESSAGES) -> list[PBField]:
    out = []
    for _, field, wire, vstart, vend in pb_walk(data):
        if wire == 0:
            value: object = _read_varint(data, vstart)[0]
        elif wire == 2 and field in submessages:
            value = pb_parse(data[vstart:vend], ())
        else:
            value = data[vstart:vend]
        out.append(PBField(field, wire, value))
    return out


def pb_serialize(fields: list[PBField]) -> bytes:
    parts = []
    for f in fields:
        if f.raw is not None:
            parts.append(f.raw)
            continue
        parts.append(varint(f.field << 3 | f.wire))
        if f.wire == 0:
            parts.append(varint(f.value))  # type: ignore[arg-type]
        elif f.wire == 2:
            body = pb_serialize(f.value) if isinstance(f.value, list) else f.value
            parts += [varint(len(body)), body]  # type: ignore[arg-type]
        else:
            parts.append(f.value)  # type: ignore[arg-type]
    return b"".join(parts)


def _replaced(tree: list[PBField], path: tuple[int, ...], new: list[PBField]) -> list[PBField]:
    """A copy of ``tree`` with the field at ``path`` (indices) replaced by ``new`` (0-n fields)."""
    i = path[0]
    if len(path) == 1:
        return tree[:i] + new + tree[i + 1:]
    parent = tree[i]
    inner = _replaced(parent.value, path[1:], new)  # type: ignore[arg-type]
    return tree[:i] + [PBField(parent.field, parent.wire, inner)] + tree[i + 1:]


def _wrong_wires(f: PBField) -> list[tuple[str, PBField]]:
    out = []
    for wire, values in ((0, (0, 2**31, 2**63, 2**64 - 1, 10**9)), (1, (b"\xff" * 8,)), (2, (b"", b"\xff\xfe")),
                         (5, (b"\0\0\xc0\x7f",))):
        if wire != f.wire:
            out += [(f"wire{wire}={_show(v) if isinstance(v, int) else v.hex()}", PBField(f.field, wire, v))
                    for v in values]
    return out


def spm_structural(data: bytes, rng: random.Random, name: str, pieces: int = 4) -> list[Recipe]:
    """Structural mutants of a ``.model`` (see the module docstring)."""
    tree = pb_parse(data)
    out: list[Recipe] = []

    def add(label: str, t: list[PBField]) -> None:
        out.append(Recipe(f"spm/{label}", pb_serialize, (t,), name))

    piece_at = [i for i, f in enumerate(tree) if f.field == 1 and f.wire == 2]
    sampled = sorted({piece_at[0], piece_at[-1], *rng.sample(piece_at, min(pieces, len(piece_at)))})
    targets: list[tuple[str, tuple[int, ...], PBField]] = []
    for i, f in enumerate(tree):
        if f.field == 1 and i not in sampled:
            continue
        names = {1: f"piece#{piece_at.index(i)}" if f.field == 1 else "", 2: "trainer", 3: "normalizer"}
        label = names.get(f.field) or f"field{f.field}"
        targets.append((label, (i,), f))
        if isinstance(f.value, list):
            targets += [(f"{label}.{g.field}", (i, j), g) for j, g in enumerate(f.value)]

    for label, path, f in targets:
        key = varint(f.field << 3 | f.wire)
        if f.wire == 2:
            body = pb_serialize(f.value) if isinstance(f.value, list) else f.value
            for n in sorted({len(body) + 1, *ABSURD}):  # type: ignore[arg-type]
                lying = PBField(f.field, 2, None, key + varint(n) + body)  # type: ignore[operator]
                add(f"length {label}={_show(n)}", _replaced(tree, path, [lying]))
        add(f"runaway-varint {label}", _replaced(tree, path, [PBField(f.field, f.wire, None, key + b"\xff" * 11)]))
        for wl, g in _wrong_wires(f):
            add(f"wrong-wire {label} {wl}", _replaced(tree, path, [g]))
        for w in (3, 4, 6, 7):
            bad = PBField(0, 0, None, varint(f.field << 3 | w) + b"\0" * 8)
            add(f"bad-wire-type {label} wire{w}", _replaced(tree, path, [bad]))
        add(f"duplicate {label}", _replaced(tree, path, [f, f]))
        add(f"drop {label}", _replaced(tree, path, []))
    add("field-0", [PBField(0, 0, None, b"\x00\x00")] + tree)
    add("truncated-varint-at-end", tree + [PBField(0, 0, None, b"\x08\x80")])
    add("no-pieces", [f for f in tree if f.field != 1])

    def set_sub(label: str, field: int, sub: int, new: PBField) -> None:
        i = next((k for k, f in enumerate(tree) if f.field == field and f.wire == 2), None)
        if i is None:
            return
        sub_at = [j for j, g in enumerate(tree[i].value) if g.field == sub]  # type: ignore[union-attr]
        path = (i, sub_at[0]) if sub_at else None
        t = _replaced(tree, path, [new]) if path else _replaced(tree, (i,), [
            PBField(field, 2, tree[i].value + [new])])  # type: ignore[operator]
        add(label, t)

    for v in (0, 3, 4, 99, 2**64 - 1):
        set_sub(f"model_type={_show(v)}", 2, 3, PBField(3, 0, v))
    for sub, role in ((40, "unk_id"), (41, "bos_id"), (42, "eos_id"), (43, "pad_id")):
        for v in (2**31, 2**32 + 5, 2**63, 2**64 - 1):
            set_sub(f"{role}={_show(v)}", 2, sub, PBField(sub, 0, v))
    set_sub("normalizer-name-not-utf8", 3, 1, PBField(1, 2, b"nmt_\xff\xfe"))
    for v in (0, 7, 99, 2**31, 2**63, 2**64 - 1):
        set_sub(f"piece#0-type={_show(v)}", 1, 3, PBField(3, 0, v))
    set_sub("piece#0-not-utf8", 1, 1, PBField(1, 2, b"\xc3\x28\xff"))
    set_sub("piece#0-score-nan", 1, 2, PBField(2, 5, b"\0\0\xc0\x7f"))
    normalizer = next((k for k, f in enumerate(tree) if f.field == 3), None)
    if normalizer is not None:
        blob = next((g.value for g in tree[normalizer].value if g.field == 2), b"")
        if blob:
            for label, bad_blob in hostile_charsmaps(blob, rng):
                set_sub(f"charsmap {label}", 3, 2, PBField(2, 2, bad_blob))
    return out


def spm_truncations(data: bytes, rng: random.Random, pieces: int = 8) -> list[int]:
    """Every top-level field boundary outside the pieces, and in and around sampled pieces."""
    fields = list(pb_walk(data))
    piece_idx = [k for k, f in enumerate(fields) if f[1] == 1]
    sampled = {piece_idx[0], piece_idx[-1], *rng.sample(piece_idx, min(pieces, len(piece_idx)))}
    points = set()
    for k, (start, field, wire, vstart, vend) in enumerate(fields):
        if field == 1 and k not in sampled:
            continue
        points |= {start, start + 1, vstart, vend}
        if wire == 2 and field in MODEL_SUBMESSAGES:
            for s, _, _, vs, ve in pb_walk(data, vstart, vend):
                points |= {s, vs, ve}
    points.discard(len(data))
    return sorted(points)


def spm_random(data: bytes, rng: random.Random, name: str, structural: list[Recipe] | None = None) -> Mutant:
    roll = rng.random()
    if roll < 0.25:
        cut = rng.choice(spm_truncations(data, rng, pieces=2)) if rng.random() < 0.7 else rng.randrange(len(data))
        return Mutant(f"spm/truncate@{cut}", data[:cut], name)
    if roll < 0.6:
        mutated, where = flip_bits(data, rng, rng.randint(1, 4))
        return Mutant(f"spm/flip {where}", mutated, name)
    return rng.choice(structural if structural is not None else spm_structural(data, rng, name, pieces=1)).build()


# ---------------------------------------------------------------------------------------------
# tokenizer.json

_DELETE = object()
_RAW = "\x00tokparity-raw\x00"  # a JSON string replaced by raw text after serializing


def _set(doc, path: tuple, value):
    """A copy of ``doc`` (shallow along ``path``) with ``doc[path] = value``."""
    if not isinstance(doc, dict):
        return doc
    head, rest = path[0], path[1:]
    new = dict(doc)
    if rest:
        new[head] = _set(doc.get(head, {}), rest, value)
    elif value is _DELETE:
        new.pop(head, None)
    else:
        new[head] = value
    return new


def _dump(doc, raw: bytes = b"") -> bytes:
    text = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogateescape")
    return text.replace(json.dumps(_RAW).encode(), raw) if raw else text


def _deep(open_: str, close: str, depth: int) -> str:
    return open_ * depth + close * depth


def json_cases(doc: dict, rng: random.Random) -> list[tuple[str, tuple, object, bytes]]:
    """``[(label, path, value, raw)]``: set ``doc[path] = value``, then splice ``raw`` in place
    of the placeholder string when the value must not be valid Python-JSON (huge ints)."""
    pt = ("model", "type")
    cases: list[tuple[str, tuple, object, bytes]] = []

    def case(label, path, value, raw=b""):
        cases.append((label, path, value, raw))

    for v in ([], "BPE", 5, None, _DELETE):
        case(f"model={v!r:.20}", ("model",), v)
    for v in (["BPE"], {"a": 1}, 5, None, "WordLevel", _DELETE):
        case(f"model.type={v!r:.20}", pt, v)
    for v in ([], "x", 5, None, {"a": "0"}, {"a": -1}, {"a": 2**63}, {"a": 10**30}, {"a": 1.5}, {}, _DELETE,
              {"a": 0, "b": 10**6}):
        case(f"model.vocab={v!r:.30}", ("model", "vocab"), v)
    case("model.vocab id with 5000 digits", ("model", "vocab"), {"a": _RAW}, b"9" * 5000)
    case("model.vocab id 1e400", ("model", "vocab"), {"a": _RAW}, b"1e400")
    for v, raw in (([["a", _RAW]], b"1" + b"0" * 400), ([["a"]], b""), ([[1, 2]], b""), ([["a", "x"]], b""),
                   ([], b""), ({"a": 1}, b""), ([["a", 1.0, 2]], b"")):
        case(f"unigram vocab={v!r:.30}", ("model",), {"type": "Unigram", "vocab": v, "unk_id": 0}, raw)
    case("unigram unk_id huge", ("model",), {"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 2**63})
    for v in (5, "ab", {"a": "b"}, [5], [["a"]], ["ab"], [["a", 5]], [None], None):
        case(f"model.merges={v!r:.20}", ("model", "merges"), v)
    for v in ({}, 5, "x", [5], [{"id": "1", "content": "a"}], [{"id": -1, "content": "a"}],
              [{"id": 2**63, "content": "a"}], [{"id": 10**30, "content": "a"}], [{"id": 1, "content": 5}],
              [{"id": 1, "content": "a", "special": "yes"}], [{"id": 1.5, "content": "a"}],
              [{"id": True, "content": "a"}]):
        case(f"added_tokens={v!r:.40}", ("added_tokens",), v)
    stages = {
        "normalizer": ("normalizers", [{"type": "Replace", "pattern": "x", "content": "\u2581"},
                                       {"type": "Replace", "pattern": {"Regex": []}, "content": "\u2581"},
                                       {"type": "Prepend", "prepend": []},
                                       {"type": "Precompiled", "precompiled_charsmap": 5},
                                       {"type": "Precompiled", "precompiled_charsmap": "!!!"},
                                       {"type": "Precompiled", "precompiled_charsmap": ["a"]},
                                       {"type": "Precompiled", "precompiled_charsmap": "\u00e9"}]),
        "pre_tokenizer": ("pretokenizers", [{"type": "Metaspace", "prepend_scheme": []},
                                            {"type": "Metaspace", "add_prefix_space": "no"},
                                            {"type": "ByteLevel", "add_prefix_space": []}]),
        "decoder": ("decoders", []),
    }
    for stage, (inner, specific) in stages.items():
        generic = [5, [], "x", {"type": []}, {"type": {"a": 1}}, {"type": "Sequence", inner: 5},
                   {"type": "Sequence", inner: [5, None, []]}, {"type": "Sequence", inner: {"a": 1}}]
        for v in generic + specific:
            case(f"{stage}={v!r:.60}", (stage,), v)
        deep: dict = {"type": "Strip"}
        for _ in range(450):
            deep = {"type": "Sequence", inner: [deep]}
        case(f"{stage} Sequence nested 450 deep", (stage,), deep)
    for v in (5, [], {"type": "TemplateProcessing", "single": 5}, {"type": "TemplateProcessing", "single": {"a": 1}},
              {"type": "TemplateProcessing", "single": [{"SpecialToken": "x"}]},
              {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": []}}], "special_tokens": {}},
              {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}], "special_tokens": []},
              {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}], "special_tokens": {"<s>": 5}},
              {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}],
               "special_tokens": {"<s>": {"ids": 5}}},
              {"type": "TemplateProcessing", "single": [5, []]},
              {"type": "Sequence", "processors": 5}, {"type": "Sequence", "processors": [5]},
              {"type": "BertProcessing", "cls": 5, "sep": ["x", "y"]}, {"type": []}):
        case(f"post_processor={v!r:.60}", ("post_processor",), v)
    # A hostile Precompiled charsmap, when the file has one.
    for c in _walk_json(doc.get("normalizer")):
        if c.get("type") == "Precompiled" and isinstance(c.get("precompiled_charsmap"), str):
            blob = base64.b64decode(c["precompiled_charsmap"])
            for label, bad in hostile_charsmaps(blob, rng):
                v = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(bad).decode()}
                case(f"normalizer charsmap {label}", ("normalizer",), v)
    return cases


def _walk_json(config) -> list[dict]:
    if not isinstance(config, dict):
        return []
    inner = config.get("normalizers")
    return [c for item in inner for c in _walk_json(item)] if isinstance(inner, list) else [config]


def unigram_json(tokens: list[str], scores: list[float], charsmap: bytes | None) -> bytes:
    """A Unigram tokenizer.json with a Precompiled normalizer: a seed for the JSON mutators
    that reaches the Unigram and charsmap paths (no small one ships in the zoo)."""
    normalizers: list[dict] = [{"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    if charsmap:
        normalizers.insert(0, {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"}
    return json.dumps({
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": metaspace, "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 0, "vocab": [[t, s] for t, s in zip(tokens, scores)]},
    }, ensure_ascii=False).encode("utf-8", "surrogateescape")


CONFIG_CASES = (
    ("config invalid JSON", b"{"), ("config top-level list", b"[]"), ("config not UTF-8", b'{"bos_token": "\xff"}'),
    ("config bos_token=5", b'{"bos_token": 5}'), ("config bos_token.content=[]", b'{"bos_token": {"content": []}}'),
    ("config add_bos_token=yes", b'{"add_bos_token": "yes"}'), ("config chat_template=5", b'{"chat_template": 5}'),
    ("config deep", b'{"a": ' + _deep("[", "]", 100000).encode() + b"}"),
)


def _dump_case(doc, path: tuple, value, raw: bytes) -> bytes:
    return _dump(_set(doc, path, value), raw)


def _same(data: bytes) -> bytes:
    return data


def hf_json_structural(data: bytes, rng: random.Random, name: str) -> list[Recipe]:
    doc = json.loads(data)
    out = [Recipe(f"json/{label}", _dump_case, (doc, path, value, raw), name)
           for label, path, value, raw in json_cases(doc, rng)]
    raws = [
        ("top-level list", b"[]"), ("top-level string", b'"x"'), ("empty", b""),
        ("deep nesting 100000", b'{"model": ' + _deep("[", "]", 100000).encode() + b"}"),
        ("deep objects 100000", b'{"model": ' + b'{"a": ' * 100000 + b"1" + b"}" * 100000 + b"}"),
        ("duplicate model key", data.rstrip()[:-1] + b', "model": 5}'),
        ("bom", b"\xef\xbb\xbf" + data),
        ("utf-16", data.decode("utf-8").encode("utf-16")),
        ("latin-1", data.decode("utf-8").encode("latin-1", "replace")),
        ("nul bytes", data[:100] + b"\0" * 8 + data[100:]),
    ]
    for k in range(4):  # invalid UTF-8 inside a string, somewhere in the file
        quotes = [i for i in range(0, len(data), max(1, len(data) // 4096)) if data[i:i + 1] == b'"']
        at = rng.choice(quotes) + 1 if quotes else 1
        raws.append((f"invalid UTF-8 @{at}", data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"])
                     + data[at:]))
    out += [Recipe(f"json/{label}", _same, (raw,), name) for label, raw in raws]
    out += [Recipe(f"json/{label}", _same, (data,), name, (("tokenizer_config.json", cfg),))
            for label, cfg in CONFIG_CASES]
    return out


def hf_json_random(data: bytes, rng: random.Random, name: str, structural: list[Recipe] | None = None) -> Mutant:
    roll = rng.random()
    if roll < 0.2:
        cut = rng.randrange(len(data))
        return Mutant(f"json/truncate@{cut}", data[:cut], name)
    if roll < 0.5:
        mutated, where = flip_bits(data, rng, rng.randint(1, 4))
        return Mutant(f"json/flip {where}", mutated, name)
    return rng.choice(structural if structural is not None else hf_json_structural(data, rng, name)).build()
