"""The text cut at a length, learnt from the case: a decoder that keeps only the first N
characters, UTF-16 units, bytes or ids (a chat service's message limit, a fixed buffer).

A decoding mismatch that no named variant reproduces, where the engine's text is the start of the
right one, is read as a cut at a length. Each unit whose cut gives the engine's answer exactly is
kept as a key (``decode.cut-at-length:[2000, "characters"]``). The run's verdict tries it on every
case, the agreements included: a text no longer than the length must come out whole. So one
row's accident (its last id lost) is not proven: the other rows are cut elsewhere.

A cut in bytes may split a character. Its bytes are then written as U+FFFD or left out; both
forms are tried.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tokparity.diagnose.kept_texts import right_deltas
from tokparity.diagnose.wrong_decoders import FAILED, bytes_of, right_answers
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings, incomplete_tail

CAUSES = {"decode": "decode.cut-at-length", "stream": "stream.cut-at-length"}
UNITS = ("characters", "UTF-16 units", "bytes", "ids")  # (a stream's ids: those after its prompt)


def is_cut(key: str) -> bool:
    return key.partition(":")[0] in CAUSES.values()


def parse(key: str) -> tuple[int, str]:
    at, unit = json.loads(key.partition(":")[2])
    return int(at), str(unit)


def key_of(op: str, at: int, unit: str) -> str:
    return f"{CAUSES[op]}:{json.dumps([at, unit])}"


def said_of(key: str) -> str:
    """The key in words: ``the text cut to its first 2,000 characters``."""
    at, unit = parse(key)
    return f"the text cut to its first {at:,} {unit}"


def does(key: str) -> str:
    """What a decoder with the learnt cut does, as the evidence says it."""
    at, unit = parse(key)
    if key.startswith("stream."):
        return f"stops the stream after its first {at:,} {'generated ids' if unit == 'ids' else unit}"
    return f"keeps only the first {at:,} {unit} of the text"


def cut(text: str, at: int, unit: str) -> list[str]:
    """``text`` cut to its first ``at`` characters, UTF-16 units or bytes (a split character's bytes
    as U+FFFD, then left out); none where it is no longer than that."""
    if unit == "characters":
        return [text[:at]] if len(text) > at else []
    if unit == "UTF-16 units":
        data = text.encode("utf-16-le", "surrogatepass")
        return [data[:2 * at].decode("utf-16-le", "surrogatepass")] if len(data) > 2 * at else []
    data = text.encode("utf-8", "surrogateescape")
    return [data[:at].decode("utf-8", errors) for errors in ("replace", "ignore")] if len(data) > at else []


def run_of(key: str) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """The answers of a decoder that cuts as ``key`` says: None where the text is no longer than that
    (the bug cannot show)."""
    at, unit = parse(key)
    op = key.partition(".")[0]

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        if unit == "ids":
            return _first_ids(ref, op, ids, prompt, asked, at) if len(ids) - prompt > at else [None]
        cuts: list[list[str | None]] = [list(cut(right, at, unit)) or [None]
                                        for right in right_answers(ref, op, ids, prompt, asked)]
        return [form for forms in cuts for form in forms]

    return run


def learnt(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, got: object) -> list[str]:
    """The keys of the cuts at a length that turn the reference's answer into the engine's ``got``,
    in the order of ``UNITS``; none where the engine's text is not the start of the right one."""
    if op not in CAUSES or not isinstance(got, str) or got == FAILED:
        return []
    right = right_answers(ref, op, ids, prompt, asked)[0]
    stem = got.rstrip("\ufffd")
    if not stem or got == right or len(stem) >= len(right) or not right.startswith(stem):
        return []
    keys = []
    for unit in UNITS:
        at = _length(ref, op, ids, prompt, asked, right, got, unit)
        if at is not None and at > 0:
            keys.append(key_of(op, at, unit))
    return keys


def _first_ids(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, at: int) -> list:
    """The answers of the prompt and the first ``at`` ids after it: for a stream, the deltas sent;
    then, where the last id leaves a character unfinished, with one U+FFFD for it; then with one
    U+FFFD for each byte held (a streamer that flushes what it holds when it stops). Each form in
    its place on every case. A stream's deltas come one an id, in order: the first ``at`` are those
    the whole stream sends first."""
    if op == "decode":
        return right_answers(ref, op, ids[:at], prompt, asked)
    kept = ids[:prompt + at]
    sent = "".join(right_deltas(ref, ids, prompt, asked)[:at])
    held = incomplete_tail(b"".join(bytes_of(ref, kept, asked))[-4:])
    return [sent, sent + "\ufffd" * min(held, 1), sent + "\ufffd" * held]


def _length(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, right: str, got: str,
            unit: str) -> int | None:
    """The length in ``unit`` at which the right text is cut to ``got``; None where none is."""
    if unit == "ids":
        return _ids_length(ref, op, ids, prompt, asked, got)
    if unit == "characters":
        return len(got) if got in cut(right, len(got), unit) else None
    if unit == "UTF-16 units":
        at = len(got.encode("utf-16-le", "surrogatepass")) // 2
        return at if got in cut(right, at, unit) else None
    start = len(got.rstrip("\ufffd").encode("utf-8", "surrogateescape"))
    return next((at for at in range(start, start + 4) if got in cut(right, at, unit)), None)


def _ids_length(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, got: str) -> int | None:
    """The count of first ids (after the prompt) whose text is ``got``, found by halving (a longer
    start of the ids decodes to a text no shorter); None where no count gives it."""
    def text(n: int) -> str:
        return str(_first_ids(ref, op, ids, prompt, asked, n)[0])

    low, high = 1, len(ids) - prompt - 1
    while low < high:
        middle = (low + high) // 2
        if len(text(middle)) < len(got.rstrip("\ufffd")):  # (the flushed U+FFFD are not the deltas')
            low = middle + 1
        else:
            high = middle
    return next((n for n in (low - 1, low, low + 1) if 0 < n < len(ids) - prompt and got in _first_ids(
        ref, op, ids, prompt, asked, n)), None)
