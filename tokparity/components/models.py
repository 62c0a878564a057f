"""tokenizers' models: BPE, Unigram, WordPiece, WordLevel, with their vocabularies.

The vocabularies are read once here (with the loader's one-line errors); what each model does
with them is in tokparity.reference.hf_models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from tokparity.components._fields import Fields
from tokparity.errors import BadModelFile
from tokparity.textview import clipped


@dataclass(frozen=True)
class BPE:
    kind: ClassVar[str] = "BPE"
    vocab: dict[str, int] = field(repr=False, compare=False)
    merges: tuple[tuple[str, str], ...] = field(repr=False, compare=False)
    unk_token: str | None = None
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    fuse_unk: bool = False
    byte_fallback: bool = False
    ignore_merges: bool = False
    dropout: float | None = None  # random merges skipped: tokparity ignores it (tokenizers would not be repeatable)


@dataclass(frozen=True)
class Unigram:
    kind: ClassVar[str] = "Unigram"
    vocab: tuple[tuple[str, float], ...] = field(repr=False, compare=False)
    unk_id: int | None = None
    byte_fallback: bool = False


@dataclass(frozen=True)
class WordPiece:
    kind: ClassVar[str] = "WordPiece"
    vocab: dict[str, int] = field(repr=False, compare=False)
    unk_token: str = "[UNK]"
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = 100


@dataclass(frozen=True)
class WordLevel:
    kind: ClassVar[str] = "WordLevel"
    vocab: dict[str, int] = field(repr=False, compare=False)
    unk_token: str = "<unk>"


Model = BPE | Unigram | WordPiece | WordLevel
KNOWN = {c.kind: c for c in (BPE, Unigram, WordPiece, WordLevel)}


def _token_ids(path: Path, mtype: str, entries) -> dict[str, int]:
    if not isinstance(entries, dict):
        raise BadModelFile(path, f"model.vocab of a {mtype} model must be an object mapping token to id")
    for token, i in entries.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise BadModelFile(path, f"model.vocab[{clipped(token)}] is {clipped(i)}, expected a non-negative id")
    return entries


def _scored(path: Path, entries) -> tuple[tuple[str, float], ...]:
    if not isinstance(entries, list):
        raise BadModelFile(path, "model.vocab of a Unigram model must be a list of [piece, score]")
    out = []
    for i, entry in enumerate(entries):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], (int, float)) and not isinstance(entry[1], bool)):
            raise BadModelFile(path, f"model.vocab[{i}] is not a [piece, score] pair")
        try:
            out.append((entry[0], float(entry[1])))
        except OverflowError:
            raise BadModelFile(path, f"model.vocab[{i}] has a score too large for a float") from None
    return tuple(out)


def _merges(path: Path, raw) -> tuple[tuple[str, str], ...]:
    raw = raw or []
    if not isinstance(raw, list):
        raise BadModelFile(path, f"model.merges is a JSON {type(raw).__name__}, expected a list")
    merges = []
    for i, m in enumerate(raw):
        if isinstance(m, str):
            pos = m.find(" ", 1)
            if pos < 0:
                raise BadModelFile(path, f"model.merges[{i}] {clipped(m)} has no space between its two parts")
            merges.append((m[:pos], m[pos + 1:]))
        elif isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m):
            merges.append((m[0], m[1]))
        else:
            raise BadModelFile(path, f"model.merges[{i}] is neither 'a b' nor ['a', 'b']")
    return tuple(merges)


def parse(path: Path, obj) -> Model:
    if not isinstance(obj, dict) or "type" not in obj:
        raise BadModelFile(path, "has no 'model' object with a 'type'; not a Hugging Face tokenizer.json")
    mtype = obj["type"]
    if not isinstance(mtype, str) or mtype not in KNOWN:
        raise BadModelFile(path, f"unknown model type {clipped(mtype)}; tokparity reads {', '.join(KNOWN)}")
    f = Fields(path, f"model ({mtype})", obj)
    if mtype == "BPE":
        dropout = obj.get("dropout")
        if dropout is not None and not (isinstance(dropout, (int, float)) and 0 <= dropout <= 1):
            raise f.bad(f"dropout is {clipped(dropout)}, expected a number from 0 to 1 or null")
        return BPE(_token_ids(path, mtype, obj.get("vocab")), _merges(path, obj.get("merges")),
                   f.optional_str("unk_token"), f.optional_str("continuing_subword_prefix"),
                   f.optional_str("end_of_word_suffix"), f.bool("fuse_unk", False), f.bool("byte_fallback", False),
                   f.bool("ignore_merges", False), dropout)
    if mtype == "Unigram":
        vocab = _scored(path, obj.get("vocab"))
        unk_id = obj.get("unk_id")
        if unk_id is not None and not (isinstance(unk_id, int) and not isinstance(unk_id, bool)
                                       and 0 <= unk_id < len(vocab)):
            raise f.bad(f"unk_id is {clipped(unk_id)}, expected an index into its {len(vocab)} pieces or null")
        return Unigram(vocab, unk_id, f.bool("byte_fallback", False))
    if mtype == "WordPiece":
        return WordPiece(_token_ids(path, mtype, obj.get("vocab")), f.str("unk_token", "[UNK]"),
                         f.str("continuing_subword_prefix", "##"), f.int("max_input_chars_per_word", 100))
    return WordLevel(_token_ids(path, mtype, obj.get("vocab")), f.str("unk_token", "<unk>"))
