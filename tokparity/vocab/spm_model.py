"""SentencePiece ``.model`` -> ``Vocab``.

A ``.model`` is a serialized ``ModelProto`` (sentencepiece_model.proto, proto2). Only a few
fields matter for tokenization, so they are read straight from the protobuf wire format here
rather than through the ``protobuf`` package: no dependency, no version skew between the
generated ``sentencepiece_model_pb2`` and the installed runtime, and every length checked
against the bytes that are really there (a hostile file gets a clear error).

    ModelProto      1: repeated SentencePiece {1: piece, 2: score (float), 3: type}
                    2: TrainerSpec    3: model_type (1 unigram, 2 bpe, 3 word, 4 char)
                                      24: treat_whitespace_as_suffix, 35: byte_fallback,
                                      40-43: unk/bos/eos/pad ids
                    3: NormalizerSpec 1: name, 2: precompiled_charsmap, 3: add_dummy_prefix,
                                      4: remove_extra_whitespaces, 5: escape_whitespaces
Defaults are proto2's, as declared in that file (add_dummy_prefix=true, bos_id=1, pad_id=-1, …).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from tokparity.errors import BadModelFile
from tokparity.vocab.model import Flags, TokenType, Vocab

MODEL_TYPES = {1: "ugm", 2: "spm", 3: "word", 4: "char"}  # unigram / SentencePiece BPE


class _Wire:
    """Iterate (field number, wire type, value) over one protobuf message, bounds-checked."""

    def __init__(self, path: Path, data: bytes | memoryview, what: str):
        self.path, self.data, self.what = path, data, what

    def _varint(self, off: int) -> tuple[int, int]:
        result = shift = 0
        data = self.data
        while True:
            if off >= len(data):
                raise BadModelFile(self.path, f"truncated protobuf in {self.what} (varint runs past the end); "
                                              "the file is incomplete or not a SentencePiece model")
            b = data[off]
            off += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result, off
            shift += 7
            if shift > 63:
                raise BadModelFile(self.path, f"malformed varint in {self.what}; not a SentencePiece model")

    def __iter__(self):
        data, off, end = self.data, 0, len(self.data)
        while off < end:
            key, off = self._varint(off)
            field, wire = key >> 3, key & 7
            if field == 0:
                raise BadModelFile(self.path, f"invalid protobuf field 0 in {self.what}; not a SentencePiece model")
            if wire == 0:
                value, off = self._varint(off)
            elif wire == 1:
                if off + 8 > end:
                    raise BadModelFile(self.path, f"truncated protobuf in {self.what}")
                value, off = data[off:off + 8], off + 8
            elif wire == 2:
                n, off = self._varint(off)
                if off + n > end:
                    raise BadModelFile(self.path, f"truncated protobuf in {self.what}: a field claims {n} bytes, "
                                                  f"{end - off} remain; the file is incomplete or corrupt")
                value, off = data[off:off + n], off + n
            elif wire == 5:
                if off + 4 > end:
                    raise BadModelFile(self.path, f"truncated protobuf in {self.what}")
                value, off = data[off:off + 4], off + 4
            else:
                raise BadModelFile(self.path, f"unsupported protobuf wire type {wire} in {self.what}; "
                                              "not a SentencePiece model")
            yield field, wire, value


def _int32(v: int) -> int:
    """proto int32 values are sign-extended to 64-bit varints."""
    return v - (1 << 64) if v >= 1 << 63 else v


_WIRE_NAMES = {0: "an integer", 1: "8 bytes", 2: "bytes", 5: "4 bytes"}


class _Message:
    """The last value of each field of one message (proto2 semantics for a repeated scalar
    field: the last one wins), read with the wire type the schema declares."""

    def __init__(self, path: Path, data, what: str):
        self.path, self.what = path, what
        self.fields = {f: (w, v) for f, w, v in _Wire(path, data, what)}

    def _get(self, field: int, wire: int, default):
        if field not in self.fields:
            return default
        w, v = self.fields[field]
        if w != wire:
            raise BadModelFile(self.path, f"{self.what} field {field} is {_WIRE_NAMES[w]} where the schema "
                                          f"says {_WIRE_NAMES[wire]}; the file is corrupt or not a SentencePiece model")
        return v

    def uint(self, field: int, default: int) -> int:
        return self._get(field, 0, default)

    def int32(self, field: int, default: int) -> int:
        value = _int32(self._get(field, 0, default))
        if not -(1 << 31) <= value < 1 << 31:
            raise BadModelFile(self.path, f"{self.what} field {field} is {value}, outside int32; the file is corrupt")
        return value

    def flag(self, field: int, default: bool) -> bool:
        return bool(self._get(field, 0, default))

    def blob(self, field: int) -> bytes | None:
        value = self._get(field, 2, None)
        return bytes(value) if value is not None else None


def load_spm_model(path: str | os.PathLike) -> Vocab:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadModelFile(path, "no such file") from None
    except IsADirectoryError:
        raise BadModelFile(path, "is a directory, not a SentencePiece .model") from None
    except OSError as e:
        raise BadModelFile(path, f"cannot read it ({e.strerror or e})") from None
    if not data:
        raise BadModelFile(path, "empty file (0 bytes)")

    tokens: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    trainer = _Message(path, b"", "TrainerSpec")
    normalizer = _Message(path, b"", "NormalizerSpec")
    mv = memoryview(data)
    for field, wire, value in _Wire(path, mv, "ModelProto"):
        if field == 1 and wire == 2:
            piece, score, ptype = "", 0.0, int(TokenType.NORMAL)
            for f, w, v in _Wire(path, value, f"piece #{len(tokens)}"):
                if f == 1 and w == 2:
                    piece = str(v, "utf-8", "surrogateescape")
                elif f == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
                elif f == 3 and w == 0:
                    ptype = _int32(v)
                    if not -(1 << 31) <= ptype < 1 << 31:
                        raise BadModelFile(path, f"piece #{len(tokens)} has type {ptype}, outside int32; "
                                                 "the file is corrupt")
            tokens.append(piece)
            scores.append(score)
            types.append(ptype)
        elif field == 2 and wire == 2:
            trainer = _Message(path, value, "TrainerSpec")
        elif field == 3 and wire == 2:
            normalizer = _Message(path, value, "NormalizerSpec")
        elif wire != 2 or field not in (4, 5):
            raise BadModelFile(path, f"unexpected protobuf field {field} in ModelProto; "
                                     "not a SentencePiece model")
    if not tokens:
        raise BadModelFile(path, "holds no pieces; not a SentencePiece model")

    model_type = trainer.uint(3, 1)
    algorithm = MODEL_TYPES.get(model_type)
    if algorithm not in ("ugm", "spm"):
        raise BadModelFile(path, f"SentencePiece model_type {model_type} ({algorithm or 'unknown'}) is not "
                                 "supported; tokparity handles unigram and bpe models")

    special_ids = {}
    for role, field, default in (("unk", 40, 0), ("bos", 41, 1), ("eos", 42, 2), ("pad", 43, -1)):
        value = trainer.int32(field, default)
        if value >= 0:
            special_ids[role] = value

    flags = Flags(
        # SentencePiece itself adds no BOS/EOS unless asked (add_bos/add_eos are encode options);
        # these are the conventions of the models' own users, left unset here.
        add_space_prefix=normalizer.flag(3, True),
        remove_extra_whitespaces=normalizer.flag(4, True),
        escape_whitespaces=normalizer.flag(5, True),
        treat_whitespace_as_suffix=trainer.flag(24, False),
        byte_fallback=trainer.flag(35, False),
    )
    charsmap = normalizer.blob(2)
    name = normalizer.blob(1)
    return Vocab(
        algorithm=algorithm,
        tokens=tokens,
        token_types=types,
        scores=scores,
        special_ids=special_ids,
        flags=flags,
        pre_tokenizer=None,
        precompiled_charsmap=charsmap or None,
        source=str(path),
        source_format="spm-model",
        extra={"normalizer_name": str(name, "utf-8", "replace") if name is not None else None,
               "model_type": model_type},
    )
