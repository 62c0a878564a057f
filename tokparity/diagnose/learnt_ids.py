"""One id decoded as another, or left out, learnt from the case: an engine that replaces an id
before it decodes (torchtune wrote its pad id for every id 0) or drops one.

A decode mismatch that no named variant reproduces, and no edit of the text, is read as
one id of the case decoded as a special or added token, or not decoded at all. The pair is kept
only where the reference's decoding of the ids so changed gives the engine's answer exactly. Its
key (``decode.id-as:[0, 128004]``, ``[0, null]`` for left out) holds the pair, so the run's
verdict can try it on every case, the agreements included.

The ids tried are the case's own whose text the engine's answer holds fewer times than the right
one (at most ``IDS_TRIED``). The ids they may become are the special and added tokens whose text
the answer holds, one for each text they decode to; a token that decodes to nothing is the id
left out. At most ``PAIRS_TRIED`` pairs are decoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tokparity.diagnose.wrong_decoders import FAILED, decoded, right_answers
from tokparity.memo import PerObject
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings
from tokparity.vocab.model import TokenType

CAUSES = {"decode": "decode.id-as"}  # (not a stream: there each pair tried would cost a whole stream)
IDS_TRIED = 64
PAIRS_TRIED = 256  # whole decodes of the case at most, one a pair: past it nothing is learnt
# (reference; settings) -> the ids an id may become, each with its text
_TARGETS: PerObject[list[tuple[int | None, str]]] = PerObject(size=4)


def is_swap(key: str) -> bool:
    return key.startswith(CAUSES["decode"] + ":")


def parse(key: str) -> tuple[int, int | None]:
    was, now = json.loads(key.partition(":")[2])
    return int(was), None if now is None else int(now)


def key_of(was: int, now: int | None) -> str:
    return f"{CAUSES['decode']}:{json.dumps([was, now])}"


def said_of(key: str) -> str:
    """The key in words: ``the ids decoded with id 0 as id 128004``."""
    return f"the ids decoded with {_pair(key)}"


def does(key: str) -> str:
    """What a decoder with the learnt pair does, as the evidence says it."""
    return f"decodes the ids with {_pair(key)}"


def _pair(key: str) -> str:
    was, now = parse(key)
    return f"id {was} {'left out' if now is None else f'as id {now}'}"


def changed(ids: list[int], was: int, now: int | None) -> list[int]:
    return [i for i in ids if i != was] if now is None else [now if i == was else i for i in ids]


def run_of(key: str) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """The answers of a decoder that decodes the ids so changed: None where the case lacks the id."""
    was, now = parse(key)

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        return [decoded(ref, changed(ids, was, now), asked) if was in ids else None]

    return run


def learnt(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, got: object) -> str | None:
    """The key of the one id, decoded as another or left out, that turns the reference's answer into
    the engine's ``got``; None where no such pair does (or where the engine failed: no text to read)."""
    if op not in CAUSES or not isinstance(got, str) or got == FAILED:
        return None
    right = right_answers(ref, op, ids, prompt, asked)[0]
    # (a target's text must be in the engine's answer: filtered once per case, not per suspect)
    targets = [now for now, text in _TARGETS.get(ref, asked, lambda: _targets(ref, asked)) if text in got]
    tried = 0
    for was in _suspects(ref, ids, asked, right, got):
        for now in targets:
            if now == was:
                continue
            if tried == PAIRS_TRIED:
                return None
            tried += 1
            if right_answers(ref, op, changed(ids, was, now), prompt, asked)[0] == got:
                return key_of(was, now)
    return None


def _suspects(ref: RefTokenizer, ids: list[int], asked: DecodeSettings, right: str, got: str) -> list[int]:
    """The case's ids, at most ``IDS_TRIED``, whose own text (less surrounding whitespace, which
    a decoder may write otherwise in context) the engine's answer holds fewer times than the right
    answer does."""
    found = []
    for i in dict.fromkeys(ids):
        text = decoded(ref, [i], asked).strip() if 0 <= i < ref.vocab.size else ""
        if text and got.count(text) < right.count(text):
            found.append(i)
            if len(found) == IDS_TRIED:
                break
    return found


def _targets(ref: RefTokenizer, asked: DecodeSettings) -> list[tuple[int | None, str]]:
    """(None, "") for an id left out, then one special or added token for each text they decode
    to, with that text."""
    vocab = ref.vocab
    kinds = (TokenType.CONTROL, TokenType.USER_DEFINED)
    added = sorted({i for i in vocab.special_ids.values() if 0 <= i < vocab.size} |
                   {i for i in range(vocab.size) if vocab.type_of(i) in kinds})
    by_text: dict[str, int | None] = {"": None}
    for i in added:
        by_text.setdefault(decoded(ref, [i], asked), i)
    return [(now, text) for text, now in by_text.items()]
