"""The reference's texts that the decoding variants ask of one case in turn, kept: its text of some
ids, and its stream of them. A case's variants and its right answers read the same texts, and a
long stream costs a decode per id."""

from __future__ import annotations

from tokparity.memo import PerObject
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings

_DELTAS: PerObject[list[str]] = PerObject(size=16)  # (reference; ids, prompt, skip) -> the right deltas


def right_deltas(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list[str]:
    """The reference's stream of ``ids`` after ``prompt``, one delta an id. Several variants and the
    right answers ask it of one case in turn, and a long stream costs many decodes: the last few are kept."""
    return list(_DELTAS.get(ref, (tuple(ids), prompt, asked.skip_special),
                            lambda: ref.stream(ids, prompt, special=not asked.skip_special)))


_DECODED: PerObject[dict] = PerObject(size=4)  # reference -> {(ids, asked): its text}
DECODED_KEPT = 65_536


def decoded(ref: RefTokenizer, ids: list[int], asked: DecodeSettings) -> str:
    """The reference's text of ``ids``. The variants ask it of the same ids in turn (the whole
    case, each id alone), on every case: the texts are kept, as many as ``DECODED_KEPT``."""
    kept = _DECODED.get(ref, "decoded", dict)
    key = (tuple(ids), asked)
    text = kept.get(key)
    if text is None:
        if len(kept) >= DECODED_KEPT:
            kept.clear()
        text = kept[key] = ref.decode_as(ids, asked)
    return text
