"""Decoding: the same ids turned back into text by two implementations, and why they differ.

``compare --ops decode,stream,pieces`` (tokparity.run.ops) asks each backend to turn the
oracle's ids into text and judges the answer against the decoder's with these:

``judge_decode`` (the whole text):
``decode-cleanup``      the texts differ only in spaces before punctuation or inside contractions:
                        one side "cleans up tokenization spaces" (``"hello !"`` -> ``"hello!"``),
                        as transformers' ``clean_up_tokenization_spaces`` and llama.cpp's
                        ``clean_spaces`` do and tokenizers' raw decoders do not (tokenizers #1543).
``decode-roundtrip``    any other difference; the evidence says which side gives the input back.

``judge_stream`` (deltas, one per id after the prompt, against the whole text less the prompt's):
``stream-prompt``       the deltas send text of the prompt again (vLLM #48853)
``stream-replacement``  a delta holds more U+FFFD than the whole text: a character split between
                        ids sent before it was complete (llama.cpp #4036)
``stream-cleanup``      they differ only as clean-up does: the whole decode cleans up, a stream cannot
``stream-repeat``       text sent twice (sglang #31598)
``stream-text``         any other difference (byte tokens as Latin-1, mlx-examples #808)
``stream-held``         the right text, but nothing sent until the last step though the ids before
                        it had finished a word (a server that decodes once, at the end)
(an answer without one delta per id after the prompt breaks the protocol: a ``crash`` of the case)

``judge_pieces`` (each id's bytes):
``piece-bytes``         ids that stand for other bytes than the decoder's

A backend that fails instead of answering (a ``cmd:`` engine that hangs or dies on the request)
is no decoding finding: its case is a ``timeout`` or a ``crash``, as when encoding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tokparity.reference.decode import hf_clean_up
from tokparity.vocab.special_texts import SpecialTextFinder

NO_SPECIALS = SpecialTextFinder(())

# SentencePiece's DecodeIds renders <unk> as this (TrainerSpec.unk_surface, kDefaultUnknownSymbol),
# llama.cpp and tokenizers as the token's own text.
UNK_SURFACE = " \u2047 "


def same_but_cleanup(a: str, b: str) -> bool:
    """Whether the texts differ only as clean-up makes them differ (one side cleaned, or both;
    cleaning a cleaned text can take one more space: '  .' -> ' .' -> '.')."""
    return hf_clean_up(a) == b or hf_clean_up(b) == a or hf_clean_up(a) == hf_clean_up(b)


# What a decoding op's judge found: (class, evidence, the decoder's output, the backend's, the
# index where they part), the outputs as mismatches.csv's oracle_output / backend_output hold them.
Found = tuple[str, str, list[str], list[str], int]
PIECES_SHOWN = 8  # differing ids a pieces mismatch lists
# A stream whose prompt holds bytes that are not UTF-8 and whose whole text does not begin with the
# prompt's text: what the deltas must add up to is not known, so the case is not judged (skipped).
NOT_JUDGED: Found = ("skipped", "", [], [], 0)
REPLACED_RUN_WHY = ("the stream sent whole characters where the decoder's whole text has U+FFFD: the decoder "
                    "replaced a run of byte tokens whole for one byte of it that is not UTF-8 (tokenizers' "
                    "ByteFallback), which a stream that sent those characters cannot take back")
CLEANUP_WHY = ("they differ only in spaces before punctuation: the whole decode cleans them up "
               "(clean_up_tokenization_spaces), a stream cannot take back a space it sent")


@dataclass
class DecodeVerdict:
    cls: str
    evidence: str


def classify_decode(text: str, oracle_text: str, backend_text: str, unk: str | None = None,
                    specials: SpecialTextFinder = NO_SPECIALS) -> DecodeVerdict:
    """Why ``backend_text`` differs from ``oracle_text`` (the same ids decoded on both sides);
    ``text`` is the case's input, ``unk`` the text of the vocabulary's unknown token, ``specials``
    finds the texts of its special (control) tokens."""
    if same_but_cleanup(oracle_text, backend_text):
        side = "backend" if len(backend_text) < len(oracle_text) else "oracle"
        return DecodeVerdict("decode-cleanup", f"the decoded texts differ only in spaces before punctuation: the {side} "
                                               f"cleans them up ({_both(oracle_text, backend_text)})")
    if unk and UNK_SURFACE in oracle_text + backend_text and unk in oracle_text + backend_text:
        marked = [t.replace(UNK_SURFACE, "\0").replace(unk, "\0") for t in (oracle_text, backend_text)]
        if marked[0].lstrip(" ") == marked[1].lstrip(" "):
            side = "oracle" if UNK_SURFACE in oracle_text else "backend"
            leading = "" if marked[0] == marked[1] else " (and the leading spaces differ)"
            return DecodeVerdict("decode-roundtrip", f"the ids agree, but the unknown token decodes as {UNK_SURFACE!r} "
                                                     f"(SentencePiece's unk_surface) on the {side}'s side and as {unk!r} "
                                                     f"on the other's{leading}: {_both(oracle_text, backend_text)}")
    fewer = [_fewer_replacements(t) for t in (oracle_text, backend_text)]
    if fewer[0] == fewer[1]:
        return DecodeVerdict("decode-roundtrip", f"the decoded texts differ only in how many U+FFFD stand for bytes that "
                                                 f"are not UTF-8 ({oracle_text.count(chr(0xFFFD))} on the oracle's side, "
                                                 f"{backend_text.count(chr(0xFFFD))} on the backend's: one per byte, or "
                                                 f"one per broken sequence as Unicode advises): "
                                                 f"{_both(oracle_text, backend_text)}")
    if fewer[0].lstrip(" ") == fewer[1].lstrip(" ") and oracle_text.lstrip(" ") != backend_text.lstrip(" "):
        lead_a, lead_b = (len(t) - len(t.lstrip(" ")) for t in (oracle_text, backend_text))
        return DecodeVerdict("decode-roundtrip", f"the decoded texts differ only in leading spaces, {lead_a} on the "
                                                 f"oracle's side and {lead_b} on the backend's, and in how many U+FFFD "
                                                 f"stand for bytes that are not UTF-8: {_both(oracle_text, backend_text)}")
    bare = [t.lstrip(" ") for t in (oracle_text, backend_text)]
    more = _replaced_characters(bare[0], bare[1]) or _replaced_characters(bare[1], bare[0])
    if more:
        side, other = ("backend", "oracle") if more == bare[1] else ("oracle", "backend")
        leading = "" if len(oracle_text) - len(bare[0]) == len(backend_text) - len(bare[1]) else \
            " (and the leading spaces differ)"
        return DecodeVerdict("decode-roundtrip", f"the decoded texts differ only where the {side} has U+FFFD for "
                                                 f"characters the {other} has: a run of byte tokens with one byte "
                                                 f"that is not UTF-8 replaced whole, its good characters too "
                                                 f"(tokenizers' ByteFallback){leading}: {_both(oracle_text, backend_text)}")
    present = sorted(set(specials.present(oracle_text)) | set(specials.present(backend_text)), key=lambda t: (-len(t), t))
    bare = [_without(t, present).lstrip(" ") for t in (oracle_text, backend_text)] if present else []
    written = [sum(map(t.count, present)) for t in (oracle_text, backend_text)] if present else []
    if bare and bare[0] == bare[1] and written[0] != written[1]:
        side = "oracle" if sum(map(oracle_text.count, present)) > sum(map(backend_text.count, present)) else "backend"
        leading = "" if _without(oracle_text, present) == _without(backend_text, present) else \
            " (and the leading spaces differ)"
        return DecodeVerdict("decode-roundtrip", f"the decoded texts differ only in special tokens ({present[0]!r}), "
                                                 f"written as their text on the {side}'s side and left out on the "
                                                 f"other's (SentencePiece's decode drops control tokens){leading}: "
                                                 f"{_both(oracle_text, backend_text)}")
    back = [name for name, t in (("oracle", oracle_text), ("backend", backend_text)) if t == text]
    says = f"only the {back[0]} gives the input back" if back else "neither gives the input back"
    if oracle_text.lstrip(" ") == backend_text.lstrip(" "):
        lead_a, lead_b = (len(t) - len(t.lstrip(" ")) for t in (oracle_text, backend_text))
        return DecodeVerdict("decode-roundtrip", f"the decoded texts differ only in leading spaces, {lead_a} on the "
                                                 f"oracle's side and {lead_b} on the backend's ({says}; the input "
                                                 f"starts with {_leading_whitespace(text)!r})")
    return DecodeVerdict("decode-roundtrip", f"the same ids decode differently, {says}: {_both(oracle_text, backend_text)}")


def _both(oracle_text: str, backend_text: str) -> str:
    """The two texts for one line of evidence (``_quoted``)."""
    oracle, backend = _quoted(oracle_text, backend_text)
    return f"oracle {oracle} vs backend {backend}"


def _quoted(first: str, second: str, width: int = 80) -> tuple[str, str]:
    """Each text quoted in ``width`` characters, from a little before where they first differ (a
    long text's first characters may be the same on both sides).

        >>> _quoted("x" * 70 + "ab", "x" * 70 + "ac", width=12)
        ("'…xxxab'", "'…xxxac'")
    """
    p = next((k for k, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))
    start = 0 if p < width - width // 3 else p - width // 3

    def shown(text: str) -> str:
        return repr(("…" if start else "") + text[start:start + width] + ("…" if len(text) > start + width else ""))

    return shown(first), shown(second)


def _replaced_characters(kept: str, replaced: str) -> str:
    """``replaced`` if it is ``kept`` with some spans written one U+FFFD per byte, each span holding a
    U+FFFD of ``kept`` (a bad byte, which counts one): a run of byte tokens replaced whole, its good
    characters too. Else "": text cut short, added or spaced otherwise is another difference."""
    if "\ufffd" not in replaced or kept == replaced:
        return ""
    parts = re.split("(\ufffd+)", replaced)  # literal, run, literal, run, …, literal
    if not kept.startswith(parts[0]):
        return ""
    pos = len(parts[0])
    for k in range(1, len(parts), 2):
        want, size, bad = len(parts[k]), 0, False  # the run stands for ``want`` bytes of ``kept``
        while size < want and pos < len(kept):
            ch = kept[pos]
            bad |= ch == "\ufffd"
            size += 1 if ch == "\ufffd" else len(ch.encode("utf-8", "surrogatepass"))
            pos += 1
        if size != want or not bad or not kept.startswith(parts[k + 1], pos):
            return ""
        pos += len(parts[k + 1])
    return replaced if pos == len(kept) else ""


def _fewer_replacements(text: str) -> str:
    """``text`` with each run of U+FFFD as one."""
    return re.sub("\ufffd+", "\ufffd", text)


def _without(text: str, specials: list[str]) -> str:
    for t in specials:  # (longest first)
        text = text.replace(t, "")
    return text


def _leading_whitespace(text: str) -> str:
    return text[:len(text) - len(text.lstrip(" \u2581"))]


def judge_decode(text: str, want: str, got: str, unk: str | None, specials: SpecialTextFinder = NO_SPECIALS) -> Found | None:
    """The decode op: ``got`` (a backend's text of some ids) against ``want`` (the decoder's);
    ``text``: the input they were encoded from ("" for an id sequence)."""
    if want == got:
        return None
    verdict = classify_decode(text, want, got, unk, specials)
    first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    return verdict.cls, verdict.evidence, [want], [got], first


def expected_stream(decode: Callable[[list[int]], str], ids: list[int], prompt: int, whole: str,
                    held: int = 0) -> list[str]:
    """What the deltas after ``prompt`` ids may add up to: the decoder's whole text less its text of
    the prompt ([] when the whole text does not begin with the prompt's: a decoder that cleans up
    spaces). ``held``: how many of the prompt's last bytes begin a character it leaves unfinished
    (the vocabulary says); the prompt's text spells them as U+FFFD, one for the broken sequence or
    one per byte (both are tried), which is not taken off: the character is the generation's."""
    prompt_text = decode(ids[:prompt]) if prompt else ""
    cuts = dict.fromkeys((1, held)) if held else (0,)
    heads = [prompt_text[:len(prompt_text) - k] for k in cuts if prompt_text.endswith("\ufffd" * k)]
    return list(dict.fromkeys(whole[len(h):] for h in heads if whole.startswith(h)))


def _breaks(text: str) -> int:
    """How many broken sequences ``text`` shows: runs of U+FFFD (one per byte or one per sequence alike)."""
    return len(re.findall("\ufffd+", text))


def _unsent(want: str) -> list[str]:
    """``want``, and ``want`` without one, two or three U+FFFD at its end (bytes the ids leave unfinished, held back)."""
    trailing = len(want) - len(want.rstrip("\ufffd"))
    return [want[:len(want) - k] for k in range(min(trailing, 3) + 1)]


def _sent_all(sent: str, want: str) -> bool:
    """``sent`` is ``want``, but for up to three U+FFFD at its end: bytes the ids leave unfinished, held back."""
    rest = want[len(sent):]
    return want.startswith(sent) and len(rest) <= 3 and set(rest) <= {"\ufffd"}


def judge_stream(decode: Callable[[list[int]], str], ids: list[int], prompt: int, whole: str,
                 deltas: list[str], unk: str | None = None, specials: SpecialTextFinder = NO_SPECIALS, held: int = 0,
                 exact: str | None = None, step: int = 1) -> Found | None:
    """The stream op: a backend's ``deltas`` for ``ids`` after ``prompt`` of them, against the
    decoder's whole text ``whole`` of them (``decode``: the decoder's, for the prompt's text;
    ``unk``: the unknown token's text, which SentencePiece writes as `` ⁇ ``). ``exact``, given
    where the decoder replaces a run of byte tokens whole when one byte is bad (tokenizers'
    ByteFallback): the generated ids' bytes as they read, which a stream that sent them is excused
    for (the decoder took back characters no stream can). ``step``: the stream was fed that many
    ids at a time, one delta a step."""
    steps = -(-(len(ids) - prompt) // step)  # (one delta per ``step`` ids, the last step shorter)
    if len(deltas) != steps:
        per = "one per id" if step == 1 else f"one per {step} ids"
        return ("crash", f"the stream broke the protocol: {len(deltas)} deltas for {len(ids) - prompt} ids after the "
                f"prompt ({per}, \"\" while holding back)", [], deltas, 0)
    try:
        wants = expected_stream(decode, ids, prompt, whole, held)
    except Exception:
        wants = []
    sent = "".join(deltas)
    if any(_sent_all(sent, w) for w in wants):
        return _held_to_the_end(decode, ids, prompt, deltas, step)
    want = wants[0] if wants else None
    if want is not None and any(same_but_cleanup(sent, w) for w in _unsent(want)):
        shown = _quoted(sent, want)
        return ("stream-cleanup", f"the deltas add up to {shown[0]}, the decoder's whole text after the prompt is "
                                  f"{shown[1]}: {CLEANUP_WHY}", [want], deltas, 0)
    try:
        prompt_text = decode(ids[:prompt]) if prompt else ""
    except Exception as e:  # the decoder fails on the prompt's ids alone: what the stream owes is not known
        return ("crash", f"stream failed on the decoder's side: its text of the prompt's ids: {type(e).__name__}: {e}",
                [], deltas, 0)
    cut = 1 if held and prompt_text.endswith("\ufffd") else 0  # (the unfinished character's U+FFFD: the generation's)
    head = prompt_text[:len(prompt_text) - cut]
    extra = next((sent[:len(sent) - len(w)] for w in ((want, want.rstrip("\ufffd")) if want is not None else ())
                  if len(sent) > len(w) and sent.endswith(w)), "")
    # (the prompt's text sent again, or all of it spaced otherwise: decoders differ in the spaces at a text's ends)
    if extra and (prompt_text.endswith(extra) or head.endswith(extra) or
                  (extra.strip(" ") and extra.strip(" ") == head.strip(" "))):
        inside = " (the prompt ends inside a character)" if held else ""
        return ("stream-prompt", f"the deltas send {extra!r} of the prompt's text {prompt_text[-40:]!r} again{inside}",
                [want or ""], deltas, 0)
    if exact is not None and "\ufffd" in (want if want is not None else whole) and \
            any(_spelt_same(sent, e) for e in _unsent(exact)):
        shown = _quoted(sent, want if want is not None else whole)
        return ("stream-text", f"the deltas add up to {shown[0]}, the decoder's whole text after the prompt is "
                               f"{shown[1]}: {REPLACED_RUN_WHY}",
                [want if want is not None else whole], deltas, 0)
    bad = next((k for k, d in enumerate(deltas) if "\ufffd" in d), None)
    if bad is not None and _breaks(sent) > _breaks(want if want is not None else whole):
        return ("stream-replacement", f"delta {bad} holds U+FFFD ({deltas[bad]!r}), more than the whole text has: a "
                "character split between ids was sent before it was complete", [want or whole], deltas, bad)
    if want is None:  # the whole text does not begin with the prompt's (clean-up joined them): judge all of it
        total = head + sent
        if _sent_all(total, whole):
            return None
        cls = "stream-cleanup" if same_but_cleanup(total, whole) else "stream-text"
        why = CLEANUP_WHY if cls == "stream-cleanup" else _as_decode(whole, total, unk, specials)
        if cls == "stream-text" and why == "" and "\ufffd" in prompt_text:
            return NOT_JUDGED
        shown = _quoted(total, whole)
        return (cls, f"the prompt's text and the deltas add up to {shown[0]}, the decoder's whole text is "
                     f"{shown[1]}" + (f": {why}" if why else ""), [whole], deltas, 0)
    at = 0
    for k, d in enumerate(deltas):  # the first delta after which the text sent is no prefix of the whole
        at = k
        if not want.startswith("".join(deltas[:k + 1])):
            break
    if any(_spelt_same(sent, w) for w in _unsent(want)):
        cls, why = "stream-text", _as_decode(want, sent, unk, specials) or "the same text, U+FFFD spelt otherwise"
    elif len(sent) > len(want) and _repeats(sent, want):
        cls, why = "stream-repeat", f"delta {at} ({deltas[at]!r}) sends text again that was sent before"
    else:
        cls, why = "stream-text", _as_decode(want, sent, unk, specials) or \
            f"delta {at} ({deltas[at]!r}) departs from the whole text"
    shown = _quoted(sent, want)
    return (cls, f"the deltas add up to {shown[0]}, the decoder's whole text after the prompt is {shown[1]}: "
            f"{why}", [want], deltas, at)


# A word and a space after it: text any streamer sends (transformers' TextStreamer sends up to its
# text's last " ", or all of it once it ends in a newline: a tab, a no-break space or a newline
# inside the text does not make it send).
_WORD_DONE = re.compile(r"\S ")


def _held_to_the_end(decode: Callable[[list[int]], str], ids: list[int], prompt: int, deltas: list[str],
                     step: int) -> Found | None:
    """The right text, but none of it sent until the last step, though a step before it ended
    with a word finished and no character unfinished: a stream that holds everything (a server
    that decodes once, at the end) gives its user nothing to read until the generation stops. A
    streamer may hold back an unfinished character (tokenizers' DecodeStream holds a whole step
    that ends inside one), or a word until its space (transformers' TextStreamer), never a
    finished word once nothing is unfinished."""
    if len(deltas) < 2 or any(deltas[:-1]):
        return None
    try:
        prompt_text = decode(ids[:prompt]) if prompt else ""
        for k in range(len(deltas) - 1):
            earlier = decode(ids[:prompt + step * (k + 1)])
            done = earlier[len(prompt_text):] if earlier.startswith(prompt_text) else ""
            finished = _WORD_DONE.search(done) or (done.endswith("\n") and done.strip())
            if finished and not done.endswith("\ufffd"):
                return ("stream-held", f"the deltas send nothing until the last step, then all of {deltas[-1][:60]!r}, "
                                       f"though step {k} had finished {done[:60]!r}: the stream holds finished words "
                                       "back, not only an unfinished character", ["".join(deltas)], deltas, k)
    except Exception:  # (what the ids before the last step read as is not known: not judged so)
        return None
    return None


def held_would_differ(decode: Callable[[list[int]], str], ids: list[int], prompt: int, step: int = 1) -> bool:
    """Whether a stream that sends all its text at its last step is judged ``stream-held`` on these
    ids (fed ``step`` ids at a time): a step before the last finished a word."""
    steps = -(-(len(ids) - prompt) // step)
    return steps > 1 and _held_to_the_end(decode, ids, prompt, [""] * (steps - 1) + ["…"], step) is not None


def _spelt_same(a: str, b: str) -> bool:
    """The same text, but for how many U+FFFD stand for a broken sequence (one, or one per byte)."""
    return _fewer_replacements(a) == _fewer_replacements(b)


def _as_decode(want: str, sent: str, unk: str | None, specials: SpecialTextFinder) -> str:
    """Why a streamed text differs from the whole one where a whole decode would differ so too
    (the unknown token's text, special tokens, leading spaces); "" when classify_decode says no more."""
    evidence = classify_decode("", want, sent, unk, specials).evidence
    return "" if evidence.startswith("the same ids decode differently") else f"as a decode differs: {evidence}"


def _repeats(sent: str, want: str) -> bool:
    """Whether ``sent`` is ``want`` with some of it sent twice (taking out one repeated stretch gives it)."""
    extra = len(sent) - len(want)
    return any(sent[:i] + sent[i + extra:] == want and sent[i:i + extra] in sent[:i] + sent[i + extra:]
               for i in range(len(want) + 1))


def judge_pieces(ids: list[int], want: list[bytes | None], got: list[bytes | None], decoder_lossy: bool,
                 backend_lossy: bool) -> Found | None:
    """The pieces op: each id's bytes as a backend gives them against the decoder's. A side that
    gives text, not bytes (``*_lossy``), shows a token that is part of a character as U+FFFD:
    such an id is compared as the text both read as, every other id byte for byte."""
    def as_shown(b: bytes | None) -> bytes | None:
        return b.decode("utf-8", "replace").encode("utf-8") if b is not None else b

    def differ(a: bytes | None, b: bytes | None) -> bool:
        lossy = backend_lossy or (decoder_lossy and a is not None and b"\xef\xbf\xbd" in a)
        return as_shown(a) != as_shown(b) if lossy else a != b

    differing = [k for k, (a, b) in enumerate(zip(want, got)) if differ(a, b)]
    if differing:
        k = differing[0]
        shown = ", ".join(f"id {ids[j]} {want[j]!r} vs {got[j]!r}" for j in differing[:PIECES_SHOWN])
        return ("piece-bytes", f"{len(differing)} of {len(ids)} ids stand for other bytes (decoder vs backend): {shown}",
                [_hex(b) for b in want], [_hex(b) for b in got], k)
    return None


def _hex(b: bytes | None) -> str:
    return "" if b is None else b.hex()
