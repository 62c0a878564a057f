"""The text cut at a length, learnt from the case: a decoder that keeps only the first N
characters, UTF-16 units, bytes or ids (a chat service's message limit, a fixed buffer).

A decoding mismatch that no named variant reproduces, where the engine's text is the start of the
right one, is read as a cut at a length. Each unit whose cut gives the engine's answer exactly is
kept as a key (``decode.cut-at-length:[2000, "characters"]``). The run's verdict tries it on every
case, the agreements included: a text no longer than the length must come out whole. So one
row's accident (its last id lost) is not proven: the other rows are cut elsewhere.

A cut in bytes may split a character. Its bytes are then written as U+FFFD or left out; both
forms are tried.

A decoded text may also be cut after the last of some characters, as a chat front end trims a
reply to its last whole sentence (``decode.cut-after-last:".!?"``). Each case gives the character
its text ends on, where the cut after that character's last gives the engine's text. The verdict
takes those characters one at a time, while one gains: a case given is a gain, an agreement
broken a loss. A text that holds none of them comes out whole, or less its trailing whitespace.

A decoded text may be cut before the first of some characters too, as a client cuts a reply at a
stop sequence (``decode.cut-before-first:"<>"``). Each case gives the character after its cut,
where the cut before that character's first gives the engine's text. The verdict takes those
characters as it takes the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tokparity.diagnose.kept_texts import right_deltas
from tokparity.diagnose.verdict import weights
from tokparity.diagnose.wrong_decoders import FAILED, bytes_of, right_answers
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings, incomplete_tail

CAUSES = {"decode": "decode.cut-at-length", "stream": "stream.cut-at-length"}
AFTER = "decode.cut-after-last"  # (its characters learnt from the cases, chosen by the verdict)
BEFORE = "decode.cut-before-first"  # (likewise)
UNITS = ("characters", "UTF-16 units", "bytes", "ids")  # (a stream's ids: those after its prompt)


def is_cut(key: str) -> bool:
    return key.partition(":")[0] in CAUSES.values() or is_cut_at_marks(key)


def is_cut_at_marks(key: str) -> bool:
    """Whether ``key`` is a cut at some characters: after the last of them, or before the first."""
    return key.partition(":")[0] in (AFTER, BEFORE)


def marks_key(marks: str, name: str = AFTER) -> str:
    """The key of a cut after the last of ``marks`` (``name``: or before the first), each once, in
    code point order."""
    return f"{name}:{json.dumps(''.join(sorted(set(marks))), ensure_ascii=False)}"


def marks_of(key: str) -> str:
    return str(json.loads(key.partition(":")[2]))


def learnt_after(rows: list[tuple[str, str]], agreements: list[str]) -> str | None:
    """The characters a text is cut after, as the ``rows`` and ``agreements`` read; None where no
    row is cut so. A row is the right text and the engine's. An agreement is a right text the
    engine gave. A row gives the character its text ends on, else the one it lost after a
    whitespace, where the cut after that character's last gives the row (``_taken``)."""
    found = set()
    for right, got in rows:
        if not got or got == right or not right.startswith(got):
            continue
        rest = right[len(got):]  # (the character it ends on, else the one it lost after a whitespace)
        found |= set([c for c in (got[-1], rest.lstrip()[:1] if rest[:1].isspace() else "")
                      if c and got in after_forms(right, c)][:1])
    marks = _taken(rows, agreements, found, _forms, first=False)
    return marks_key(marks) if marks else None


def learnt_before(rows: list[tuple[str, str]], agreements: list[str]) -> str | None:
    """The characters a text is cut before, as the ``rows`` and ``agreements`` read; None where no
    row is cut so. A row gives the character after its cut (after its trailing whitespace, for an
    engine that strips it), where the cut before that character's first gives the row."""
    found = {c for right, got in rows if (c := _before_mark(right, got))}
    marks = _taken(rows, agreements, found, _before_forms, first=True)
    return marks_key(marks, BEFORE) if marks else None


def _taken(rows: list[tuple[str, str]], agreements: list[str], found: set[str],
           forms: Callable[[str, int], list[str]], first: bool) -> str:
    """Of the characters ``found``, those a cut is made at. The character that gains the most is
    taken first, then the next, while one gains, each row and agreement weighed as
    ``verdict.weights`` says. ``forms`` gives a text's answers cut at a place (-1 or its length: none);
    ``first``: the cut is at the first of the characters taken, else at the last."""
    texts = [right for right, _ in rows] + agreements
    wanted = [got for _, got in rows] + agreements
    worth = weights(len(rows), len(agreements))
    at = [len(text) if first else -1 for text in texts]  # (where the cut of the characters taken so far falls)
    gives = [want in forms(text, place) for text, want, place in zip(texts, wanted, at)]
    # (each character, the texts that hold it and its place there: a character changes only those)
    places: dict[str, list[tuple[int, int]]] = {c: [] for c in found}
    for k, text in enumerate(texts):
        seen = enumerate(text) if not first else reversed(list(enumerate(text)))
        for c, place in {c: place for place, c in seen if c in found}.items():
            places[c].append((k, place))
    nearer = (lambda place, k: place < at[k]) if first else (lambda place, k: place > at[k])  # noqa: E731

    def gain(c: str) -> float:
        return sum(worth[k] * ((wanted[k] in forms(texts[k], place)) - gives[k]) for k, place in places[c]
                   if nearer(place, k))

    marks = ""
    while found:
        c = max(sorted(found), key=gain)  # (of those that gain as much, the first in code point order)
        if gain(c) <= 0:
            break
        for k, place in places[c]:
            if nearer(place, k):
                at[k], gives[k] = place, wanted[k] in forms(texts[k], place)
        marks, found = marks + c, found - {c}
    return marks


def after_forms(right: str, marks: str) -> list[str]:
    """The answers of a decoder that cuts the right text after the last of ``marks``, each form in
    its place. A text that holds none comes out whole, then less its trailing whitespace. The last
    two forms also cut a mark that follows a whitespace, with that whitespace (a lone ``*`` is no
    sentence's end: SillyTavern's trim does so)."""
    return _forms(right, max(map(right.rfind, marks), default=-1))


def _forms(right: str, at: int) -> list[str]:
    """``after_forms`` of a cut after position ``at`` (-1: none)."""
    if at < 0:
        return [right, right.rstrip()] * 2
    kept = right[:at + 1]
    lone = kept[:-1].rstrip() if len(kept) > 1 and kept[-2].isspace() else kept
    return [kept, kept, lone, lone]


def before_forms(right: str, marks: str) -> list[str]:
    """The answers of a decoder that cuts the right text before the first of ``marks``: as it is,
    then less its trailing whitespace. A text that holds none comes out whole (less it)."""
    return _before_forms(right, min((at for at in map(right.find, marks) if at >= 0), default=len(right)))


def _before_forms(right: str, at: int) -> list[str]:
    """``before_forms`` of a cut before position ``at``."""
    return [right[:at], right[:at].rstrip()]


def _before_mark(right: str, got: str) -> str:
    """The character a cut before whose first gives ``got``, "" where none does."""
    if got == right or not right.startswith(got):
        return ""
    rest = right[len(got):]
    return next((c for c in dict.fromkeys((rest[:1], rest.lstrip()[:1])) if c and got in before_forms(right, c)), "")


def parse(key: str) -> tuple[int, str]:
    at, unit = json.loads(key.partition(":")[2])
    return int(at), str(unit)


def key_of(op: str, at: int, unit: str) -> str:
    return f"{CAUSES[op]}:{json.dumps([at, unit])}"


def said_of(key: str) -> str:
    """The key in words: ``the text cut to its first 2,000 characters``."""
    if is_cut_at_marks(key):
        return f"the text cut {_where(key)} of {_listed(marks_of(key))}"
    at, unit = parse(key)
    return f"the text cut to its first {at:,} {unit}"


def does(key: str) -> str:
    """What a decoder with the learnt cut does, as the evidence says it."""
    if key.startswith(BEFORE):
        return f"keeps the text up to the first of {_listed(marks_of(key))}, where it holds one, and none of it"
    if is_cut_at_marks(key):
        return f"keeps the text up to the last of {_listed(marks_of(key))}, where it holds one"
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
    """The answers of a decoder that cuts as ``key`` says. A cut at a length gives None where the
    text is no longer than that (the bug cannot show)."""
    if is_cut_at_marks(key):
        return _marks_run(marks_of(key), key.startswith(BEFORE))
    at, unit = parse(key)
    op = key.partition(".")[0]

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        if unit == "ids":
            return _first_ids(ref, op, ids, prompt, asked, at) if len(ids) - prompt > at else [None]
        cuts: list[list[str | None]] = [list(cut(right, at, unit)) or [None]
                                        for right in right_answers(ref, op, ids, prompt, asked)]
        return [form for forms in cuts for form in forms]

    return run


def _marks_run(marks: str, before: bool) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """A decoder's answers that cut after the last of ``marks`` (``after_forms``), or before the first."""
    forms = before_forms if before else after_forms

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        return [form for right in right_answers(ref, "decode", ids, prompt, asked) for form in forms(right, marks)]

    return run


def _where(key: str) -> str:
    return "before the first" if key.startswith(BEFORE) else "after the last"


def _listed(marks: str) -> str:
    return ", ".join(repr(c) for c in marks)


def learnt(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, got: object) -> list[str]:
    """The keys of the cuts at a length that turn the reference's answer into the engine's ``got``,
    in the order of ``UNITS``, then the cut after the last of the character it ends on, then the
    cut before the first of the one after it; none where the engine's text is not the start of the
    right one."""
    if op not in CAUSES or not isinstance(got, str) or got == FAILED:
        return []
    right = right_answers(ref, op, ids, prompt, asked)[0]
    # (a text cut to nothing says too little: any first character would give it)
    before = [marks_key(c, BEFORE) for c in [_before_mark(right, got) if got else ""] if c and op == "decode"]
    stem = got.rstrip("\ufffd")
    if not stem or got == right or len(stem) >= len(right) or not right.startswith(stem):
        return before
    keys = []
    for unit in UNITS:
        at = _length(ref, op, ids, prompt, asked, right, got, unit)
        if at is not None and at > 0:
            keys.append(key_of(op, at, unit))
    if op == "decode" and after_forms(right, got[-1])[0] == got:
        keys.append(marks_key(got[-1]))
    return keys + before


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
