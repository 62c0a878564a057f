"""Streamers whose buffer is wrong. One decodes all it holds at each step and sends what lies
beyond the length it sent (transformers' TextStreamer), with the text cleaned up: what the clean-up
shortens is skipped. Its emulation decodes every prefix of the ids, so ``prefix_decoder`` makes that
cheap, and gives up past a bound of work. Others flush their buffer every few ids, or once it
holds a few bytes, an unfinished character too. One holds back a last byte that begins a character,
and no more. Listed in ``tokparity.diagnose.decoding``'s ``VARIANTS``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import groupby
from typing import NamedTuple

from tokparity.diagnose.wrong_decoders import bytes_of, decoded, right_answers
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings, hf_clean_up, incomplete_tail, shown_per_byte
from tokparity.vocab.model import TokenType

FLUSH_EVERY = range(2, 17)  # the ids between two flushes of a streamer's buffer, each a form (1 is each id alone)


def flushed_every(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A buffer flushed at every Nth id after the prompt, or at every Nth id of all: an unfinished
    character it holds there is sent as U+FFFD, and its last bytes then decode apart as U+FFFD too.
    A flush of whole characters changes nothing. The prompt's unfinished character opens the buffer.
    Each ``STREAMERS`` entry holds back and shows bad bytes in its own way. Counted from the first
    id, a stream with no prompt is the same: that form is None. So is a streamer that reads runs of
    byte tokens, where one run is longer than ``LONGEST_RUN`` ids (its work grows with the square)."""
    return _buffered(ref, ids, prompt, asked, [_every(n, before) if before is not None else None
                                               for n in FLUSH_EVERY for before in (0, prompt or None)])


def flushed_at_bytes(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A buffer flushed once it holds N bytes or more, an unfinished character too, for each N of
    ``FLUSH_AT_BYTES``. Below N it holds an unfinished character back, as it should. A writer who
    takes 4 bytes, the longest UTF-8 character, for a size that always holds a whole one has it.
    Each ``STREAMERS`` entry is a form of each size, as ``flushed_every``'s are."""
    return _buffered(ref, ids, prompt, asked, [_at_bytes(n) for n in FLUSH_AT_BYTES])


FLUSH_AT_BYTES = (2, 3, 4, 5, 6, 8, 16, 32)  # the sizes at which a buffer is flushed, each a form


def _every(n: int, before: int) -> Callable[[int, int], bool]:
    """Flushed at every ``n``th id, counted from ``before`` ids before the first generated one."""
    return lambda k, waiting: (k + 1 + before) % n == 0


def _at_bytes(n: int) -> Callable[[int, int], bool]:
    """Flushed once the buffer holds ``n`` bytes or more: what it kept, and the new id's."""
    return lambda k, waiting: waiting >= n


def _buffered(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings,
              flushes: list[Callable[[int, int], bool] | None]) -> list:
    """What each streamer of ``STREAMERS`` sends with each way of flushing (None: that form is
    None). A way of flushing says, from the generated id's index and the bytes held back, whether the
    buffer is flushed there. [] where no id ends inside a character: no flush can cut one."""
    pieces = bytes_of(ref, ids, asked)
    head = b"".join(pieces[:prompt])
    begun = head[len(head) - incomplete_tail(head):]
    if not begun and not any(incomplete_tail(piece) for piece in pieces[prompt:]):
        return []
    types = ref.vocab.token_types or []
    is_byte = [0 <= i < len(types) and types[i] == TokenType.BYTE for i in ids]
    opened = [(begun, prompt > 0 and is_byte[prompt - 1])] if begun else []
    held = list(zip(pieces, is_byte))
    longest = max((sum(1 for _ in run) for byte, run in groupby(is_byte) if byte), default=0)
    return [None if flush is None or (streamer.reads_runs and longest > LONGEST_RUN)
            else _flushed(opened, held[prompt:], flush, streamer) for streamer in STREAMERS for flush in flushes]


LONGEST_RUN = 256  # (a longer run of byte tokens is not followed by a streamer that reads runs)

Held = list[tuple[bytes, bool]]  # a streamer's buffer: each id's bytes, and whether the id is a byte token


def _flushed(opened: Held, generated: Held, flush: Callable[[int, int], bool], streamer: Streamer) -> str:
    """What a streamer sends in all. It decodes its window at each id and sends what the text grew
    by, unless it holds back. Where it holds back, ``flush`` says whether it sends what it holds
    all the same and opens a new window. It reads the generated id's index and the bytes held back.
    Where a window's text changes what it sent before, it sends nothing for that id."""
    done: list[str] = []  # the text sent that nothing can change: flushed windows, whole characters
    tail, sent = list(opened), ""  # the ids after that, and what of their text was sent
    held = b"".join(data for data, _ in tail)  # (the tail's bytes)
    # (the bytes in the buffer as it decides: the unfinished tail it kept, and this id's; it has
    # sent the whole characters before them)
    waiting = len(held)
    for k, piece in enumerate(generated):
        tail.append(piece)
        held += piece[0]
        waiting += len(piece[0])
        text, last = streamer.show(tail), k == len(generated) - 1
        # (a streamer that reads runs of byte tokens may yet change a run that is not over)
        whole = not unfinished_at_end(held[-3:]) and not (streamer.reads_runs and piece[1])
        if not text.startswith(sent):
            if whole:
                break  # (the text sent can no longer grow: the window ends where nothing can change it)
            continue
        if streamer.holds(tail, text) and not last:
            if flush(k, waiting):
                done.append(text)
                tail, sent, held, waiting = [], "", b"", 0
            else:
                waiting = unfinished_at_end(held[-3:])
            continue
        sent, waiting = text, 0
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


class Streamer(NamedTuple):
    """How a streamer shows bad bytes, and when it holds its buffer back."""

    show: Callable[[Held], str]
    holds: Callable[[Held, str], bool]
    reads_runs: bool = False  # (its text of a run of byte tokens changes until the run is over)


STREAMERS = (Streamer(python_shown, unfinished), Streamer(bytes_shown, unfinished),
             Streamer(python_shown, shows_replacement), Streamer(runs_shown, shows_replacement, reads_runs=True))


def lead_byte_held(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A byte buffer that holds back only a last byte that begins a character (0xC0 and up). A
    character with some of its other bytes is sent at once, as U+FFFD. The prompt opens the buffer
    with such a last byte only. Forms: the byte it holds at the end is lost, or sent as U+FFFD.
    [] where no id ends inside a character: it then holds nothing back."""
    pieces = bytes_of(ref, ids, asked)
    head = b"".join(pieces[:prompt])
    if not incomplete_tail(head[-3:]) and not any(incomplete_tail(piece[-3:]) for piece in pieces[prompt:]):
        return []
    held, out = head[-1:] if head[-1:] >= b"\xc0" else b"", []
    for piece in pieces[prompt:]:
        held += piece
        cut = len(held) - (held[-1:] >= b"\xc0")
        out.append(held[:cut].decode("utf-8", "replace"))
        held = held[cut:]
    return ["".join(out), "".join(out) + held.decode("utf-8", "replace")]


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


# The texts that end a model's reasoning, as reasoning parsers look for them (DeepSeek-R1 and
# Qwen 3's, a longer spelling, Kimi's, Magistral's)
REASONING_ENDS = ("</think>", "</thinking>", "<|end_of_thought|>", "◁/think▷", "[/THINK]")


def _reasoning_ends(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings, none: str | None) -> list:
    """For each end of reasoning, the generated text after it, then that text less its leading
    whitespace; ``none`` for both where the text has no such end."""
    right = right_answers(ref, "stream", ids, prompt, asked)[0] if prompt else decoded(ref, ids, asked)
    out: list = []
    for end in REASONING_ENDS:
        _, found, after = right.partition(end)
        out += [after, after.lstrip()] if found else [none, none]
    return out


def reasoning_until_end(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The generated text after its first end of reasoning (``</think>``): a reasoning parser that
    takes a reply to start inside its reasoning (DeepSeek-R1's template opens ``<think>`` in the
    prompt) gives only what follows as content. For each end, the text after it, then that text less
    its leading whitespace. None where the text has no end: the parser gives nothing there, and so
    does an engine that sends nothing (``reasoning_unended`` gives it to the run's verdict)."""
    return _reasoning_ends(ref, ids, prompt, asked, None)


def reasoning_unended(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """``reasoning_until_end``'s forms, with nothing where the text has no end of reasoning."""
    return _reasoning_ends(ref, ids, prompt, asked, "")


def held_while_replaced(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step decodes the ids since the last text it sent, alone, and sends that text unless it
    holds a U+FFFD; then those ids wait for the next step. Nothing is flushed when the ids run out.
    So a U+FFFD in the text itself, or a character the prompt began, stops the stream for good
    (text-generation-webui's loop, oobabooga/textgen #4828)."""
    sent, start = [], prompt
    for end in _step_ends(ids, prompt, asked.step):
        text = b"".join(bytes_of(ref, ids[start:end], asked)).decode("utf-8", "replace")
        if "\ufffd" not in text:
            sent.append(text)
            start = end
    return ["".join(sent)]


def cleared_on_text(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A byte buffer of the ids after the prompt, decoded with bad bytes left out and cleared each
    time that gives any text. An id that ends some text and begins a character sends the text and
    loses the character's first bytes; its other bytes are then left out too (KoboldCpp's streamer
    before it held an unfinished character, LostRuins/koboldcpp #353). Where that is no more than
    the bad bytes of the whole stream dropped, the simpler cause names it: none is given."""
    sent, held, start = [], b"", prompt
    for end in _step_ends(ids, prompt, asked.step):
        held, start = held + b"".join(bytes_of(ref, ids[start:end], asked)), end
        text = held.decode("utf-8", "ignore")
        if text:
            sent.append(text)
            held = b""
    whole = b"".join(bytes_of(ref, ids[prompt:], asked)).decode("utf-8", "ignore")
    return ["".join(sent)] if "".join(sent) != whole else []


def _step_ends(ids: list[int], prompt: int, step: int) -> list[int]:
    """Where each step of a stream ends: every ``step`` ids after the prompt, and at the last id."""
    return [*range(prompt + step, len(ids), step), len(ids)]
