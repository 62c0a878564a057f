"""Streamers whose buffer is wrong. One decodes all it holds at each step and sends what lies
beyond the length it sent (transformers' TextStreamer), with the text cleaned up: what the clean-up
shortens is skipped. Its emulation decodes every prefix of the ids, so ``prefix_decoder`` makes that
cheap, and gives up past a bound of work. Another flushes its buffer every few ids, an unfinished
character too. Listed in ``tokparity.diagnose.decoding``'s ``VARIANTS``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import groupby

from tokparity.diagnose.wrong_decoders import bytes_of, decoded
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings, hf_clean_up, incomplete_tail, shown_per_byte
from tokparity.vocab.model import TokenType

FLUSH_EVERY = range(2, 17)  # the ids between two flushes of a streamer's buffer, each a form (1 is each id alone)


def flushed_every(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A buffer flushed at every Nth id after the prompt, or at every Nth id of all: an unfinished
    character it holds there is sent as U+FFFD, and its last bytes then decode apart as U+FFFD too.
    A flush of whole characters changes nothing. The prompt's unfinished character opens the buffer.
    Each ``STREAMERS`` entry holds back and shows bad bytes in its own way."""
    pieces = bytes_of(ref, ids, asked)
    head = b"".join(pieces[:prompt])
    begun = head[len(head) - incomplete_tail(head):]
    if not begun and not any(incomplete_tail(piece) for piece in pieces[prompt:]):
        return []  # (no id ends inside a character: no flush can cut one)
    types = ref.vocab.token_types or []
    is_byte = [0 <= i < len(types) and types[i] == TokenType.BYTE for i in ids]
    opened = [(begun, prompt > 0 and is_byte[prompt - 1])] if begun else []
    held = list(zip(pieces, is_byte))
    return [_flushed(opened, held[prompt:], n, prompt - origin, show, holds)
            for show, holds in STREAMERS for n in FLUSH_EVERY for origin in (prompt, 0)]


Held = list[tuple[bytes, bool]]  # a streamer's buffer: each id's bytes, and whether the id is a byte token


def _flushed(opened: Held, generated: Held, every: int, before: int, show: Callable[[Held], str],
             holds: Callable[[Held, str], bool]) -> str:
    """What a streamer sends in all. It decodes its window at each id and sends what the text grew
    by, unless it holds back. It flushes at every ``every``th id, counted from ``before`` ids
    before the first generated one. At a flush it sends what it holds and opens a new window. Where
    a window's text changes what it sent before, it sends nothing for that id."""
    done: list[str] = []  # the text sent that nothing can change: flushed windows, whole characters
    tail, sent = list(opened), ""  # the ids after that, and what of their text was sent
    held = b"".join(data for data, _ in tail)  # (the tail's bytes)
    for k, piece in enumerate(generated):
        tail.append(piece)
        held += piece[0]
        text, last = show(tail), k == len(generated) - 1
        whole = not piece[1] and not unfinished_at_end(held[-3:])
        if not text.startswith(sent):
            if whole:
                break  # (the text sent can no longer grow: a whole character and no byte token last)
            continue
        if holds(tail, text) and not last:
            if (k + 1 + before) % every == 0:
                done.append(text)
                tail, sent, held = [], "", b""
            continue
        sent = text
        if whole:  # (what follows cannot change it)
            done.append(sent)
            tail, sent, held = [], "", b""
    return "".join(done) + sent


def python_shown(held: Held) -> str:
    """Bad bytes as Python and byte-level BPE's decoders show them: one U+FFFD per invalid sequence."""
    return b"".join(data for data, _ in held).decode("utf-8", "replace")


def bytes_shown(held: Held) -> str:
    """Bad bytes as SentencePiece shows them: one U+FFFD per byte."""
    return shown_per_byte(b"".join(data for data, _ in held).decode("utf-8", "surrogateescape"))


def runs_shown(held: Held) -> str:
    """Bad bytes as tokenizers' ByteFallback decoder shows them: a run of byte tokens that is not
    UTF-8 as a whole is one U+FFFD per token."""
    out = []
    for is_byte, run in groupby(held, key=lambda piece: piece[1]):
        data = [piece for piece, _ in run]
        try:
            out.append(b"".join(data).decode("utf-8"))
        except UnicodeDecodeError:
            out.append("\ufffd" * len(data) if is_byte else b"".join(data).decode("utf-8", "replace"))
    return "".join(out)


def unfinished(held: Held, text: str) -> bool:
    """A byte buffer holds back bytes that begin a character."""
    return unfinished_at_end(b"".join(data for data, _ in held)[-3:]) > 0


@lru_cache(maxsize=4096)  # (a stream of random ids meets many of the 16.8 million 3-byte ends)
def unfinished_at_end(last: bytes) -> int:
    """``incomplete_tail`` of a text's last three bytes (all it reads), each answer found once."""
    return incomplete_tail(last)


def shows_replacement(held: Held, text: str) -> bool:
    """A streamer that decodes what it holds holds back a text ending in U+FFFD."""
    return text.endswith("\ufffd")


# How a streamer shows bad bytes, and when it holds its buffer back.
STREAMERS = ((python_shown, unfinished), (bytes_shown, unfinished), (python_shown, shows_replacement),
             (runs_shown, shows_replacement))


def offset_into_cleaned_text(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    raw = b"".join(bytes_of(ref, ids, asked)).decode("utf-8", "replace")
    if hf_clean_up(raw) == raw:  # (nothing to clean up: no offset can go wrong; and each step decodes again)
        return []
    upto = prefix_decoder(ref, ids, asked)
    if upto is None:
        return []
    answers = []
    for by_words in (False, True):  # (sending all that is new, or up to its last space as TextStreamer does)
        # The text since the last line's end, decoded with all before it and that text taken off:
        # only the offsets are wrong. ids[:start] is what came before (the prompt, then whole lines).
        start, sent, out = prompt, 0, []
        head = hf_clean_up(upto(start))
        for k in range(prompt + 1, len(ids) + 1):
            text = after_head(hf_clean_up(upto(k)), head)
            if text.endswith("\n"):
                out.append(text[sent:])
                start, sent, head = k, 0, hf_clean_up(upto(k))
                continue
            cut = len(text) if not by_words or (text and is_cjk(text[-1])) else text.rfind(" ") + 1
            out.append(text[sent:cut])
            sent += len(out[-1])
        if start < len(ids):
            out.append(after_head(hf_clean_up(upto(len(ids))), head)[sent:])
        answers.append("".join(out))
    return answers


PREFIXES_CHECKED = 32  # prefixes on which a joined-bytes decode must agree with the reference's
# A streamer that decodes all it holds at each step decodes about n²/2 ids for n ids: the most a
# diagnosis decodes so, by the reference (about 2 µs an id) or by joining bytes (about 100 times faster)
SLOW_WORK, FAST_WORK = 2_000_000, 100_000_000


def prefix_decoder(ref: RefTokenizer, ids: list[int], asked: DecodeSettings) -> Callable[[int], str] | None:
    """``k -> decoded(ref, ids[:k], asked)``, for a streamer that decodes every prefix. Where the
    reference's decode is the ids' bytes joined and read as UTF-8 (byte-level BPE), or that less a
    first space (SentencePiece), a prefix is one join and one decode in C. That is checked on about
    ``PREFIXES_CHECKED`` prefixes and the whole; where one differs, the reference decodes each
    prefix. None where that would decode more than the work allowed: the emulation is not tried
    (a hostile text of 12,000 ids took minutes)."""
    work = len(ids) * (len(ids) + 1) // 2
    if work > FAST_WORK:
        return None
    pieces = bytes_of(ref, ids, asked)

    def joined(k: int) -> str:
        return b"".join(pieces[:k]).decode("utf-8", "replace")

    def spaced(k: int) -> str:
        text = joined(k)
        return text[1:] if text.startswith(" ") else text

    marks = sorted(set(range(0, len(ids), max(1, len(ids) // PREFIXES_CHECKED))) | {len(ids)})
    right = {k: decoded(ref, ids[:k], asked) for k in marks}
    for fast in (joined, spaced):
        if all(fast(k) == text for k, text in right.items()):
            return fast
    return (lambda k: decoded(ref, ids[:k], asked)) if work <= SLOW_WORK else None


def after_head(text: str, head: str) -> str:
    """``text`` less ``head`` at its start (a character ``head`` leaves unfinished not taken off)."""
    head = head.rstrip("\ufffd")
    return text[len(head):] if text.startswith(head) else text


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2FA1F or 0xF900 <= cp <= 0xFAFF
