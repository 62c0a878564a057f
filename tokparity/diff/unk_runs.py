"""What each run of <unk> stands for in the input, read off the pieces around it; and the
reference pipeline of a unigram vocabulary, made once per vocabulary."""

from __future__ import annotations

from collections.abc import Sequence

from tokparity.diff.evidence import types_of
from tokparity.errors import TokparityError
from tokparity.memo import PerObject
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes

_MARK = "\u2581".encode()  # ▁, SentencePiece's escaped space, as a character of the input



def unk_runs_of(text: str, vocab: Vocab, ids: Sequence[int]) -> dict[int, bytes] | None:
    """Each run of <unk> in ``ids``: the index of its first token -> the input bytes it stands for,
    read off the pieces around it: the pieces must spell the input in order, and a run covers
    what lies between them. SentencePiece's own liberties are allowed: the dummy-prefix space,
    a '▁' for a run of spaces (remove_extra_whitespaces) and whitespace stripped at the end.
    ``None`` when no such reading exists (a normalizer rewrote the text)."""
    data = text.encode("utf-8", "surrogatepass")
    types = types_of(vocab, ids)
    kept = [k for k, t in enumerate(types) if t != TokenType.CONTROL]
    pieces = {k: token_bytes(vocab, ids[k]) for k in kept if types[k] != TokenType.UNKNOWN}
    if any(not piece for piece in pieces.values()):
        return None  # a token that stands for nothing and is no <unk>: no reading

    marks = vocab.algorithm in ("spm", "ugm")  # a '▁' piece may stand for a literal '▁' of the input

    def fit(piece: bytes, p: int) -> int | None:
        """Where ``piece`` ends if it is spelled verbatim at ``p``."""
        for k, part in enumerate(piece.split(b" ") if marks else [piece]):
            if k:
                if data.startswith(b" ", p):
                    p += 1
                elif data.startswith(_MARK, p):
                    p += len(_MARK)
                else:
                    return None
            if not data.startswith(part, p):
                return None
            p += len(part)
        return p

    def ends(piece: bytes, p: int) -> list[int]:
        """Where ``piece`` can end if it starts at ``p``."""
        out = [end] if (end := fit(piece, p)) is not None else []
        if piece[:1] == b" ":
            rest = piece[1:]
            if p == 0 and (end := fit(rest, 0)) is not None:
                out.append(end)  # the dummy prefix
            r = p
            while data[r:r + 1] == b" ":
                r += 1
            if r - p > 1 and (end := fit(rest, r)) is not None:
                out.append(end)  # one '▁' for a run of spaces
        return out

    # Breadth-first over the tokens: the text positions each token can start at, with how it got
    # there (the previous state and, after a run of <unk>, the run's first token and start).
    states: dict[int, tuple | None] = {0: None}
    k = 0
    while k < len(kept):
        if types[kept[k]] == TokenType.UNKNOWN:
            run_end = k
            while run_end < len(kept) and types[kept[run_end]] == TokenType.UNKNOWN:
                run_end += 1
            after: dict[int, tuple | None] = {}
            if run_end == len(kept):  # the run ends the text: it stands for the rest
                for p in states:
                    if p < len(data):
                        after.setdefault(len(data), (p, states[p], kept[k], p, len(data)))
            else:
                # The run ends where the next piece first fits: an unknown character is never
                # the start of a piece (else it would not be unknown).
                piece = pieces[kept[run_end]]
                for p in states:
                    q = next((q for q in range(p + 1, len(data)) if ends(piece, q)), None)
                    for end in ends(piece, q) if q is not None else ():
                        after.setdefault(end, (p, states[p], kept[k], p, q))
                run_end += 1
            states, k = after, run_end
        else:
            piece = pieces[kept[k]]
            states = {end: (p, states[p], None) for p in states for end in ends(piece, p)}
            k += 1
        if not states:
            return None
        if len(states) > 64:
            return None  # too many readings to trust any
    finals = [p for p in states if not data[p:].strip()]
    if len(finals) != 1:
        return None
    runs: dict[int, bytes] = {}
    link = states[finals[0]]
    while link is not None:
        if len(link) == 5:
            _, previous, first, start, stop = link
            runs[first] = data[start:stop]
        else:
            _, previous, _ = link
        link = previous
    return dict(sorted(runs.items()))


_PIPELINES: PerObject[object] = PerObject(size=8)


def unigram_pipeline(vocab: Vocab):
    """The reference pipeline of a unigram vocabulary (its model's piece scores), made once per
    vocabulary; ``None`` when the reference has none for it."""
    def made():
        from tokparity.reference import RefTokenizer
        try:
            return RefTokenizer(vocab).pipeline
        except TokparityError:
            return None
    return _PIPELINES.get(vocab, "pipeline", made)
