"""Streamers whose buffer is wrong. One decodes all it holds at each step and sends what lies
beyond the length it sent (transformers' TextStreamer), with the text cleaned up: what the clean-up
shortens is skipped. Its emulation decodes every prefix of the ids, so ``prefix_decoder`` makes that
cheap, and gives up past a bound of work. Another flushes its buffer every few ids, an unfinished
character too. Listed in ``tokparity.diagnose.decoding``'s ``VARIANTS``.
"""

from __future__ import annotations

from collections.abc import Callable

from tokparity.diagnose.wrong_decoders import bytes_of, decoded
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings, hf_clean_up, incomplete_tail

FLUSH_EVERY = range(2, 17)  # the ids between two flushes of a streamer's buffer, each a form (1 is each id alone)


def flushed_every(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A buffer flushed at every Nth id after the prompt, or at every Nth id of all: an unfinished
    character it holds there is sent as U+FFFD, and its last bytes then decode apart as U+FFFD too.
    A flush of whole characters changes nothing. The prompt's unfinished character opens the buffer."""
    pieces = bytes_of(ref, ids, asked)
    head = b"".join(pieces[:prompt])
    answers = []
    for n in FLUSH_EVERY:
        for origin in (prompt, 0):
            text, held = "", head[len(head) - incomplete_tail(head):]
            for k in range(prompt, len(ids)):
                held += pieces[k]
                if (k + 1 - origin) % n == 0 and incomplete_tail(held):
                    text, held = text + held.decode("utf-8", "replace"), b""
            answers.append(text + held.decode("utf-8", "replace"))
    return answers


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
