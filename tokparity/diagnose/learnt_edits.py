"""The decoded text edited in a way no named cause gives, learnt from the case: some characters
written as others or dropped, and runs of a character written as one.

A decoding mismatch that no variant of ``tokparity.diagnose.decoding`` reproduces is read as an
edit of the right answer. The right text and the engine's are compared (``text_edit.between``). The
edit is kept only where it turns the right answer into the engine's exactly: the whole text for
decode and stream, each piece for pieces. Its key (``decode.edit:…``) holds the edit, so the run's
verdict can try it on every case, the agreements included, and join the edits two cases showed.

The kinds of edit are those of the engine's input (``input.edit``): no letter, digit or mark, no
added character, no text cut short (the engine's a start of the right one), no NFKC mapping alone.
The verdict may grow an edit with the characters of rows other ways give (``grown``). There a
text cut short is read as an edit too, and the edit may hold more characters than one case's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from tokparity.diagnose.variants.text_edit import TextEdit, all_joined, between, is_edit, parse
from tokparity.diagnose.verdict import weights
from tokparity.diagnose.wrong_decoders import right_answers
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings

CAUSES = {"decode": "decode.edit", "stream": "stream.edit", "pieces": "pieces.edit"}
GROWN_FROM = 64  # the rows an edit is grown from, at most (each is read with difflib)


def _text(piece: bytes) -> str | None:
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _pieces_edited(edit: TextEdit, pieces: list[bytes]) -> list[bytes]:
    """Each piece edited, where it is text; a piece of bytes that are not UTF-8 stays as it is."""
    out = []
    for piece in pieces:
        text = _text(piece)
        out.append(piece if text is None else edit(text).encode("utf-8"))
    return out


def edited(edit: TextEdit, op: str, answer: object) -> object:
    """The right ``answer`` of ``op`` with the edit made."""
    if op == "pieces":
        return _pieces_edited(edit, list(answer))  # type: ignore[call-overload]
    return edit(str(answer))


def run_of(key: str) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """The answers of a decoder whose right answers are edited as ``key`` says, one per right answer."""
    edit, op = parse(key), key.partition(".")[0]

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        return [edited(edit, op, a) for a in right_answers(ref, op, ids, prompt, asked)]

    return run


def learnt(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings, got: object) -> str | None:
    """The key of the edit that turns the reference's answer into the engine's ``got``, or None."""
    if op not in CAUSES:
        return None
    right = right_answers(ref, op, ids, prompt, asked)[0]
    if op == "pieces":
        if not isinstance(got, list) or len(got) != len(right):
            return None
        texts = [(_text(r), _text(g)) for r, g in zip(right, got)]
        if any((a is None or b is None) and r != g for (a, b), r, g in zip(texts, right, got)):
            return None  # (bytes that are not text, changed: not an edit of characters)
        # (learnt on the pieces' texts joined; checked piece by piece below)
        edit = between("".join(a or "" for a, _ in texts), "".join(b or "" for _, b in texts))
    elif isinstance(got, str):
        edit = between(str(right), got)
    else:
        return None
    if edit is None or edited(edit, op, right) != got:
        return None
    return edit.key(CAUSES[op] + ":")


def joined(keys: Iterable[str]) -> str | None:
    """The edits of one op's ``keys`` as one, those two cases showed first (an edit seen once may be
    a case's accident); None where they write a character two ways."""
    counts = Counter(k for k in keys if is_edit(k))
    chosen = [k for k, n in counts.items() if n > 1] or list(counts)
    edit = all_joined(map(parse, chosen))
    return edit.key(chosen[0].partition(":")[0] + ":") if edit is not None else None


def grown(key: str, rows: list[tuple[str, str]], agreements: list[str]) -> str | None:
    """The learnt edit ``key`` with more characters written otherwise, as the ``rows`` and
    ``agreements`` read; None where none gains. A row is the right text and the engine's; an
    agreement is a right text the engine gave. Each row the edit does not give is read as an edit
    of its own (up to GROWN_FROM of them). A text cut short is read so too: its lost characters
    may be dropped ones. Each character of those edits is weighed alone, each row and agreement as
    ``verdict.weights`` says. The one that gains the most is joined first, then the next, while
    one gains. An engine that drops "#" in one text drops it in every text."""
    edit = parse(key)
    if edit.before:
        return None
    texts = [right for right, _ in rows] + agreements
    wanted = [got for _, got in rows] + agreements
    worth = weights(len(rows), len(agreements))
    gives = [edit(text) == want for text, want in zip(texts, wanted)]
    parts: set[TextEdit] = set()
    for right, got in [row for row, given in zip(rows, gives) if not given][:GROWN_FROM]:
        if (own := between(right, got, cuts=True)) is not None:
            parts |= {TextEdit((pair,)) for pair in own.as_} | {TextEdit(runs=ch) for ch in own.runs}
    # (each part, the texts that hold its character: a part changes only those)
    holding = {part: [k for k, text in enumerate(texts) if (part.as_[0][0] if part.as_ else part.runs) in text]
               for part in parts}

    def gain(part: TextEdit) -> float:
        more = edit.joined(part)
        return -1.0 if more is None else sum(worth[k] * ((more(texts[k]) == wanted[k]) - gives[k]) for k in holding[part])

    first = edit
    while parts:
        part = max(sorted(parts, key=lambda p: p.key()), key=gain)  # (of those that gain as much, the first by key)
        if gain(part) <= 0:
            break
        edit = edit.joined(part) or edit
        for k in holding[part]:
            gives[k] = edit(texts[k]) == wanted[k]
        parts.discard(part)
    return edit.key(key.partition(":")[0] + ":") if edit != first else None


def does(key: str) -> str:
    """What a decoder with the learnt edit ``key`` does, as the evidence says it."""
    return parse(key).said("writes each piece with" if key.startswith("pieces.") else "writes the text with")


def narrowed(key: str, ref: RefTokenizer, op: str, asked: DecodeSettings,
             rows: Iterable[tuple[list[int], int, object]]) -> str | None:
    """The learnt edit ``key`` written only before the classes of character the rows show it
    before. Each row is (ids, prompt, the engine's answer). An escaper writes "$" as "\\$" before a
    digit only. The run's verdict weighs this edit beside the edit everywhere, on the agreements
    too. None where no such edit gives every row."""
    pairs: list[tuple[str, str]] = []
    for ids, prompt, got in rows:
        right = right_answers(ref, op, ids, prompt, asked)[0]
        if op != "pieces":
            pairs.append((str(right), str(got)))
            continue
        if not isinstance(got, list) or len(got) != len(right):
            return None
        pairs += [(a, b) for r, g in zip(right, got) if (a := _text(r)) is not None and (b := _text(g)) is not None]
    edit = parse(key).narrowed(pairs)
    return None if edit is None else edit.key(key.partition(":")[0] + ":")
