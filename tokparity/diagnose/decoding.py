"""The causes of the decoding ops' mismatches (decode, stream, pieces), named by reproduction: the
reference's decoding changed in one named way gives the backend's answer exactly.

Each ``DecodeVariant`` is a known way to turn ids into text wrongly, from the real bugs the
catalogue cites; ``run(reference, ids, prompt, asked)`` gives what a decoder with that bug answers
(``asked``: the DecodeSettings the run decodes with; a stream's: ``skip_special`` only):

    decode  the text
    stream  the text its deltas add up to (a streamer that buffers words sends other deltas
            than one that sends every id at once; what they add up to is what a user reads)
    pieces  each id's bytes

A variant may answer several texts (the same bug as different engines write it). A variant whose
answer is the backend's (and not the right one) reproduces the mismatch; where several do, the one
that reproduces most of the engine's mismatches of that op names the cause (``prefer``: one
engine, one cause), the others are its alternatives. None is named when none reproduces it.
The catalogue (docs/catalogue/causes.md) describes each name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from os.path import commonprefix

from tokparity.diagnose.info import cause_info
from tokparity.diagnose.verdict import proven
from tokparity.records import Diagnosis, Judgement, RootCause
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings, hf_clean_up
from tokparity.vocab.model import TokenType


@dataclass(frozen=True)
class DecodeVariant:
    """How one decoding cause is built; causes.toml declares it (its op, fix, words)."""

    name: str
    # the answers a decoder with this bug gives: (reference, ids, prompt, the settings asked)
    run: Callable[[RefTokenizer, list[int], int, DecodeSettings], list]
    # The same way of decoding without the bug: a variant that answers what its twin does on these
    # ids shows no bug here (Latin-1 and UTF-8 read ASCII alike), so it reproduces nothing.
    twin: Callable[[RefTokenizer, list[int], int, DecodeSettings], list] | None = None

    @property
    def op(self) -> str:
        return str(cause_info(self.name)["stage"])

    @property
    def does(self) -> str:
        """What the variant does, as the evidence says it."""
        return str(cause_info(self.name)["evidence"])


def _pieces(ref: RefTokenizer, ids: list[int], asked: DecodeSettings = AS_FILES_SAY) -> list[bytes]:
    """Each id's bytes; a special token's are its text, or nothing where specials are left out."""
    return [b"" if asked.skip_special and _is_special(ref, i) else b for i, b in zip(ids, ref.piece_bytes(ids))]


def _text(ref: RefTokenizer, ids: list[int], asked: DecodeSettings) -> str:
    return ref.decode_as(ids, asked)


def _is_special(ref: RefTokenizer, i: int) -> bool:
    types = ref.vocab.token_types
    return i in set(ref.vocab.special_ids.values()) or bool(types and 0 <= i < len(types) and
                                                           types[i] == TokenType.CONTROL)


# --- stream ------------------------------------------------------------------------------------


def _latin1(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return ["".join(b.decode("latin-1") for b in _pieces(ref, ids[prompt:], asked))]


def _joined(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The pieces' bytes joined and read as UTF-8, the bytes of a character the prompt began in
    front: the twin of the variants that send each id's bytes at once."""
    from tokparity.reference.decode import incomplete_tail

    head = b"".join(_pieces(ref, ids[:prompt], asked))
    held = head[len(head) - incomplete_tail(head):]
    return [(held + b"".join(_pieces(ref, ids[prompt:], asked))).decode("utf-8", "replace")]


def _joined_all(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [b"".join(_pieces(ref, ids, asked)).decode("utf-8", "replace")]


def _eager(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return ["".join(b.decode("utf-8", "replace") for b in _pieces(ref, ids[prompt:], asked))]


def _prompt_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    fresh = _text(ref, ids[prompt:], asked)
    return [fresh, fresh[1:] if fresh.startswith(" ") else fresh]


def _prompt_resent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    whole = _text(ref, ids, asked)
    head = _text(ref, ids[:prompt], asked)
    rest = whole[len(head.rstrip("\ufffd")):] if whole.startswith(head.rstrip("\ufffd")) else whole
    return [whole, head + rest]


def _begun_character_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text after the prompt taken at the length of the prompt's own text: where the prompt ends
    inside a character, its text ends in U+FFFD, and the character that U+FFFD stood for is skipped."""
    whole, head = _text(ref, ids, asked), _text(ref, ids[:prompt], asked)
    return [whole[len(head):]] if head.endswith("\ufffd") else []


def _restart_after_newline(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    answers = []
    for start in (prompt, 0):  # (the prompt dropped, as transformers' TextStreamer(skip_prompt) does, or kept)
        parts, run = [], []
        for i in ids[start:]:
            run.append(i)
            if _text(ref, [i], asked).endswith("\n"):
                parts.append(_text(ref, run, asked))
                run = []
        parts.append(_text(ref, run, asked))
        text = "".join(parts)
        answers.append(text if start == prompt else text[len(_text(ref, ids[:prompt], asked)):])
    return answers


def _offset_into_cleaned_text(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    raw = b"".join(_pieces(ref, ids, asked)).decode("utf-8", "replace")
    if hf_clean_up(raw) == raw:  # (nothing to clean up: no offset can go wrong; and each step decodes again)
        return []
    answers = []
    for by_words in (False, True):  # (sending all that is new, or up to its last space as TextStreamer does)
        cache: list[int] = []
        sent, out = 0, []
        head = ids[:prompt]  # (the prompt decoded with it, its text taken off: only the offsets are wrong)
        for i in ids[prompt:]:
            cache.append(i)
            text = _after(hf_clean_up(_text(ref, head + cache, asked)), hf_clean_up(_text(ref, head, asked)))
            if text.endswith("\n"):
                out.append(text[sent:])
                head, cache, sent = head + cache, [], 0
                continue
            upto = len(text) if not by_words or (text and _is_cjk(text[-1])) else text.rfind(" ") + 1
            out.append(text[sent:upto])
            sent += len(out[-1])
        if cache:
            out.append(_after(hf_clean_up(_text(ref, head + cache, asked)), hf_clean_up(_text(ref, head, asked)))[sent:])
        answers.append("".join(out))
    return answers


def _after(text: str, head: str) -> str:
    """``text`` less ``head`` at its start (a character ``head`` leaves unfinished not taken off)."""
    head = head.rstrip("\ufffd")
    return text[len(head):] if text.startswith(head) else text


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2FA1F or 0xF900 <= cp <= 0xFAFF


def _byte_zero_unmapped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    if "\x00" not in _text(ref, ids, asked):
        return []
    return [a.replace("\x00", "\u0100") for a in _right(ref, "stream", ids, prompt, asked)] + \
        [a.replace("\x00", "\u0100") for a in _prompt_dropped(ref, ids, prompt, asked)]


def _metaspace_on_byte_level(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    if "\u0120" not in "".join(ref.vocab.tokens[:1000]):  # (a byte-level vocabulary spells a space Ġ)
        return []
    text = "".join(ref.vocab.tokens[i] for i in ids[prompt:]).replace("\u2581", " ")
    return [text, text.lstrip(" ")]


def _deltas_lstripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas, each with its leading spaces taken off."""
    return ["".join(d.lstrip(" ") for d in ref.stream(ids, prompt, special=not asked.skip_special))]


def _tail_never_sent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream's text up to its last space (or its last whitespace of any kind): the word
    being written is held back and never sent."""
    text = "".join(ref.stream(ids, prompt, special=not asked.skip_special))
    last_ws = max((k for k, ch in enumerate(text) if ch.isspace()), default=-1)
    return [text[:text.rfind(" ") + 1], text[:last_ws + 1]]


def _right_stream(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return _right(ref, "stream", ids, prompt, asked)


def _held_to_the_end(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """No text of its own (its text is the right one): diagnose_decoding proves it on the deltas."""
    return []


# --- decode ------------------------------------------------------------------------------------


def _specials_skipped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [_text(ref, ids, replace(asked, skip_special=True))] if not asked.skip_special else []


def _specials_written(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [_text(ref, ids, replace(asked, skip_special=False))] if asked.skip_special else []


def _specials_spaced(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text with special and added tokens spaced apart where it was not to be (vLLM's
    spaces_between_special_tokens), or not spaced where it was; or with only the special ones
    spaced apart, user-defined added tokens left inside the runs (as an engine may do either way)."""
    answers = [_text(ref, ids, replace(asked, spaces_between_specials=not asked.spaces_between_specials))]
    plain = replace(asked, spaces_between_specials=False)
    parts: list[str] = []
    run: list[int] = []
    for i in ids:
        if not _is_special(ref, i):
            run.append(i)
        elif not asked.skip_special:
            if run:
                parts.append(_text(ref, run, plain))
                run = []
            parts.append(_text(ref, [i], plain))
    if run:
        parts.append(_text(ref, run, plain))
    return answers + [" ".join(parts)]


def _cleanup(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text cleaned up (transformers' way), or decoded as the files say with clean-up forced
    off and on (llama.cpp's own three passes where the files are llama.cpp's)."""
    return [hf_clean_up(_text(ref, ids, asked)), _text(ref, ids, replace(asked, clean_up=False)),
            _text(ref, ids, replace(asked, clean_up=True))]


def _remove_special(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """llama.cpp's remove_special flipped; or, asked, the BOS and EOS taken off and the ids decoded
    as if they began the text (its first space dropped: the dummy prefix's, which llama.cpp keeps
    once the BOS is gone)."""
    answers = [_text(ref, ids, replace(asked, remove_special=not asked.remove_special))]
    specials = ref.vocab.special_ids
    trimmed = ids[1:] if ids and ids[0] == specials.get("bos") else ids
    trimmed = trimmed[:-1] if trimmed and trimmed[-1] == specials.get("eos") else trimmed
    if asked.remove_special and trimmed != ids:
        answers.append(_text(ref, trimmed, replace(asked, remove_special=False)))
    return answers


def _unfinished_end_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    from tokparity.reference.decode import held_tail, shown
    text = ref.decode_as(ids, asked, "surrogateescape")
    held = held_tail(text)
    return [shown(text[:len(text) - held])] if held else []


def _each_alone(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id decoded alone, the texts joined."""
    return ["".join(_text(ref, [i], asked) for i in ids)]


def _rest_dropped_after_invalid(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text up to the first byte that is not UTF-8 (an unfinished last character too), the rest dropped."""
    text = ref.decode_as(ids, asked, "surrogateescape")
    cut = next((k for k, ch in enumerate(text) if "\udc80" <= ch <= "\udcff"), None)
    return [text[:cut]] if cut is not None else []


def _lstrip(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The pieces joined with one leading space of each taken off (llama.cpp's ``lstrip`` of 1: "skip
    up to 1 leading space"), or every leading space."""
    pieces = _pieces(ref, ids, asked)
    return [b"".join(b[1:] if b.startswith(b" ") else b for b in pieces).decode("utf-8", "replace"),
            b"".join(b.lstrip(b" ") for b in pieces).decode("utf-8", "replace")]


BUFFERS = (8, 16, 32, 64, 128, 256)  # fixed sizes a token's buffer or field may have, in bytes


def _long_token_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """For each buffer size: the ids decoded without the tokens longer than it, by the decoder and
    by joining the bytes (an engine that joins them keeps a Metaspace text's first space)."""
    pieces = _pieces(ref, ids, asked)
    answers = []
    for size in BUFFERS:
        kept = [i for i, b in zip(ids, pieces) if len(b) <= size]
        answers += [_text(ref, kept, asked), b"".join(b for b in pieces if len(b) <= size).decode("utf-8", "replace")]
    return answers


def _decoded_right(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text, by the decoder and by joining the bytes: the twin of the variants that do either."""
    return [_text(ref, ids, asked), b"".join(_pieces(ref, ids, asked)).decode("utf-8", "replace")]


def _decode_latin1(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids' bytes read as Latin-1: each id's bytes joined, or the right text's bytes."""
    return [b"".join(_pieces(ref, ids, asked)).decode("latin-1"), _text(ref, ids, asked).encode().decode("latin-1")]


# --- pieces ------------------------------------------------------------------------------------


def _raw_tokens(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [[ref.vocab.tokens[i].encode("utf-8", "surrogateescape") for i in ids]]


def _byte_ff_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    right = ref.piece_bytes(ids)
    return [[b"" if b == b"\xff" else b for b in right]] if b"\xff" in right else []


def _decoded_alone(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [[ref.decode([i], "surrogateescape", special=True).encode("utf-8", "surrogateescape") for i in ids]]


def _added_raw(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each added token that is not special written with ``▁`` for its spaces, as a SentencePiece or
    Metaspace file spells it (the loader reads them as spaces, as llama.cpp does)."""
    if "\u2581" not in "".join(ref.vocab.tokens[:1000]):  # (a vocabulary that spells no space ▁)
        return []
    types = ref.vocab.token_types or []
    right = ref.piece_bytes(ids)
    raw = [b.replace(b" ", "\u2581".encode()) if 0 <= i < len(types) and types[i] == TokenType.USER_DEFINED else b
           for i, b in zip(ids, right)]
    return [raw] if raw != right else []


def _text_not_bytes(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id's bytes read as UTF-8 text, one U+FFFD where they are not (a table of strings)."""
    right = ref.piece_bytes(ids)
    text = [b.decode("utf-8", "replace").encode("utf-8") for b in right]
    return [text] if text != right else []


def _specials_left_out(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    right = ref.piece_bytes(ids)
    out = [b"" if _is_special(ref, i) else b for i, b in zip(ids, right)]
    return [out] if out != right else []


def _space_before_space(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A space put before each token that begins with ``▁`` (or is byte 0x20), over the space the
    ``▁`` already stands for: a fix for decoders that drop a first token's space, applied to one
    that does not."""
    right = ref.piece_bytes(ids)
    tokens = ref.vocab.tokens
    out = [b" " + b if 0 <= i < len(tokens) and (tokens[i].startswith("\u2581") or tokens[i] == "<0x20>") else b
           for i, b in zip(ids, right)]
    return [out] if out != right else []


def _long_token_cut(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    right = ref.piece_bytes(ids)
    return [[b[:size] for b in right] for size in BUFFERS]


def _right_pieces(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [ref.piece_bytes(ids)]


# In the order they are tried; each is declared in causes.toml.
VARIANTS = (
    DecodeVariant("stream.bytes-as-latin1", _latin1, twin=_joined),
    DecodeVariant("stream.split-character-sent", _eager, twin=_joined),
    DecodeVariant("stream.prompt-dropped", _prompt_dropped),
    DecodeVariant("stream.begun-character-dropped", _begun_character_dropped),
    DecodeVariant("stream.restart-after-newline", _restart_after_newline),
    DecodeVariant("stream.prompt-resent", _prompt_resent),
    DecodeVariant("stream.offset-into-cleaned-text", _offset_into_cleaned_text),
    DecodeVariant("stream.byte-zero-unmapped", _byte_zero_unmapped),
    DecodeVariant("stream.metaspace-on-byte-level", _metaspace_on_byte_level),
    DecodeVariant("stream.held-to-end", _held_to_the_end),
    DecodeVariant("stream.deltas-lstripped", _deltas_lstripped),
    DecodeVariant("stream.tail-never-sent", _tail_never_sent, twin=_right_stream),
    DecodeVariant("decode.specials-skipped", _specials_skipped),
    DecodeVariant("decode.specials-written", _specials_written),
    DecodeVariant("decode.specials-spaced", _specials_spaced),
    DecodeVariant("decode.remove-special", _remove_special),
    DecodeVariant("decode.cleanup", _cleanup),
    DecodeVariant("decode.unfinished-end-dropped", _unfinished_end_dropped),
    DecodeVariant("decode.lstrip", _lstrip, twin=_joined_all),
    DecodeVariant("decode.ids-alone", _each_alone),
    DecodeVariant("decode.rest-dropped-after-invalid-byte", _rest_dropped_after_invalid),
    DecodeVariant("decode.long-token-dropped", _long_token_dropped, twin=_decoded_right),
    DecodeVariant("decode.bytes-as-latin1", _decode_latin1, twin=_decoded_right),
    DecodeVariant("pieces.raw-tokens", _raw_tokens),
    DecodeVariant("pieces.byte-ff-dropped", _byte_ff_dropped),
    DecodeVariant("pieces.decoded-alone", _decoded_alone),
    DecodeVariant("pieces.added-raw", _added_raw),
    DecodeVariant("pieces.long-token-cut", _long_token_cut, twin=_right_pieces),
    DecodeVariant("pieces.text-not-bytes", _text_not_bytes),
    DecodeVariant("pieces.specials-left-out", _specials_left_out),
    DecodeVariant("pieces.space-before-space", _space_before_space),
)
BY_NAME = {v.name: v for v in VARIANTS}


def diagnose_decoding(ref: RefTokenizer, j: Judgement, asked: DecodeSettings = AS_FILES_SAY) -> Diagnosis:
    """The causes of a decoding op's mismatch: every variant whose answer is the backend's (and
    not what the reference's own decoding answers, spelt alike: a variant that coincides with the
    right answer on these ids proves nothing), the first as the cause, the others as alternatives
    (``prefer`` chooses among them once the run's other mismatches are in)."""
    ids, prompt = list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)
    got = _answer_of(j)
    right = {_spelt(a) for a in _right(ref, j.op, ids, prompt, asked)}
    deltas = list(j.backend_output)
    if j.op == "stream" and len(deltas) > 1 and not any(deltas[:-1]) and _spelt(deltas[-1]) in right:
        return _named(["stream.held-to-end"], j.op)  # (the right text, all of it in the last delta)
    found = []
    for variant in VARIANTS:
        if variant.op != j.op:
            continue
        # (compared exactly, less its twin's answers: one U+FFFD per byte is the bug of some)
        if got in _forms(variant, ref, ids, prompt, asked) and _spelt(got) not in right:
            found.append(variant.name)
    if not found and j.op == "pieces":  # (a table with two bugs: each id shows one, or neither)
        pair = _pieces_pair(ref, ids, got, asked)
        if pair:
            return Diagnosis("+".join(pair), f"reproduced: the reference's pieces changed so that it "
                                             f"{BY_NAME[pair[0]].does}, and {BY_NAME[pair[1]].does}, gives the "
                                             "backend's answer exactly", pair, stage=j.op)
    if not found:
        return Diagnosis("", f"no variant of the reference's {j.op} gives the backend's answer", stage=j.op)
    return _named(found, j.op)


def _pieces_pair(ref: RefTokenizer, ids: list[int], got: object, asked: DecodeSettings) -> tuple[str, str] | None:
    """Two pieces variants that give the backend's bytes together: each id as one of them gives it,
    where the other leaves it right (no id changed two ways)."""
    right = ref.piece_bytes(ids)
    answers = {v.name: [f for f in _forms(v, ref, ids, 0, asked) if f is not None] for v in VARIANTS if v.op == "pieces"}
    for a, b in combinations(answers, 2):
        for one in answers[a]:
            for other in answers[b]:
                merged = []
                for r, x, y in zip(right, one, other):
                    if x != r and y != r and x != y:
                        break
                    merged.append(x if x != r else y)
                else:
                    if merged == got and merged != one and merged != other:
                        return a, b
    return None


def prefer(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """One engine, one cause: among the variants that reproduce a mismatch, the one that reproduces
    the most of the engine's mismatches of that op (``diagnoses``: one engine's, one op's)."""
    counts: dict[str, int] = {}
    for d in diagnoses:
        for name in (d.variants + tuple(n for alt in d.alternatives for n in alt)):
            counts[name] = counts.get(name, 0) + 1
    out = []
    for d in diagnoses:
        names = list(d.variants) + [n for alt in d.alternatives for n in alt]
        if len(names) < 2 or len(d.variants) > 1:  # (one cause, or two bugs at once: as found)
            out.append(d)
            continue
        order = {n: k for k, n in enumerate(names)}
        out.append(_named(sorted(names, key=lambda n: (-counts[n], order[n])), d.stage))
    return out


def decoding_verdict(ref: RefTokenizer, op: str, asked: DecodeSettings,
                     mismatches: Sequence[tuple[Judgement, Diagnosis]], agreeing: Iterable[tuple[list[int], int]]
                     ) -> RootCause | None:
    """One engine's run-level verdict on one decoding op, checked as encode's is: the variant that
    reproduces the most of its ``mismatches`` (each with its diagnosis), what it reproduces, and how
    many of the ``agreeing`` cases ((ids, prompt) each) it keeps. None when no mismatch was reproduced.

    A variant may answer several forms of its bug (one leading space or all of them). An engine
    writes one. The form that gives the most mismatches is the engine's; of forms that give as
    many, the one that keeps the most agreements. It is what the verdict counts. An agreement is
    kept where that form gives the right answer too, or where the bug cannot show there."""
    counts = Counter(d.variants[0] for _, d in mismatches if d.variants)
    if not counts:
        return None
    order = {v.name: k for k, v in enumerate(VARIANTS)}
    name = min(counts, key=lambda n: (-counts[n], order[n]))
    variant = BY_NAME[name]
    own: list[tuple[Judgement, Diagnosis]] = []
    departs = 0  # where the reference gives the backend's answer: the decoder is the one that departs
    for j, d in mismatches:
        ids, prompt = list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)
        if _spelt(_answer_of(j)) in {_spelt(a) for a in _right(ref, op, ids, prompt, asked)}:
            departs += 1
        else:
            own.append((j, d))
    # (a row of two bugs at once is not one variant's: the verdict names one)
    named = [(j, d) for j, d in own if len(d.variants) == 1 and
             name in d.variants + tuple(n for alt in d.alternatives for n in alt)]
    hits: Counter[int] = Counter()  # form -> the mismatches it gives exactly
    for j, _ in named:
        got = _answer_of(j)
        hits.update(k for k, a in enumerate(_forms(variant, ref, list(j.oracle_ids),
                                                    int(j.tags.get("prompt", 0) or 0), asked)) if a == got)
    top = max(hits.values(), default=0)
    tied: list[int | None] = [k for k, n in hits.items() if n == top] or [None]
    cases = 0
    kept: Counter[int | None] = Counter()
    for ids, prompt in agreeing:
        cases += 1
        kept.update(_keeping(variant, tied, ref, op, ids, prompt, asked))
    # (forms that give as many mismatches: the one that keeps the most agreements, e.g. the buffer size)
    form = max(tied, key=lambda k: (kept[k], -(k or 0)))
    explained = hits[form] if form is not None else len(named)
    # (a verdict on no mismatch of the engine's own proves nothing: every one was the decoder's departure)
    return RootCause(name, (name,), explained, len(own), kept[form], cases,
                     bool(own) and proven(explained, len(own), kept[form], cases), departs)


def _forms(variant: DecodeVariant, ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The variant's answers on ``ids``, each form in its place; None where it is its twin's answer
    (the bug does not show there); none where the variant cannot run (it reproduces nothing)."""
    try:
        answers = variant.run(ref, ids, prompt, asked)
        twins = variant.twin(ref, ids, prompt, asked) if variant.twin is not None else []
    except Exception:  # (a variant that cannot run on these ids shows no bug there)
        return []
    return [None if a in twins else a for a in answers]


def _keeping(variant: DecodeVariant, forms: list[int | None], ref: RefTokenizer, op: str, ids: list[int],
             prompt: int, asked: DecodeSettings) -> list[int | None]:
    """The ``forms`` of the variant's bug with which an engine still answers right on ``ids``."""
    answers = _forms(variant, ref, ids, prompt, asked) if any(f is not None for f in forms) else []
    right: set | None = None
    out = []
    for form in forms:
        # (None: a bug read off the deltas alone, a stream held to the end: its text is right)
        answer = answers[form] if form is not None and form < len(answers) else None
        if answer is not None and right is None:
            texts = _right(ref, op, ids, prompt, asked)
            if op == "stream":  # (as the judge allows: a character left unfinished at the end may stay unsent)
                texts += [a.rstrip("\ufffd") for a in texts]
            right = {_spelt(a) for a in texts}
        if answer is None or _spelt(answer) in (right or set()):
            out.append(form)
    return out


def _named(names: list[str], op: str) -> Diagnosis:
    first = BY_NAME[names[0]]
    others = f"; so do {', '.join(names[1:])}" if names[1:] else ""
    return Diagnosis(first.name, f"reproduced: the reference's {op} changed so that it {first.does} gives the "
                                 f"backend's answer exactly{others}", (first.name,), tuple((n,) for n in names[1:]),
                     stage=op)


def _right(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """What the reference's own decoding answers (as _answer_of reads a backend's)."""
    if op == "pieces":
        return [ref.piece_bytes(ids)]
    if op == "stream":
        whole, head = _text(ref, ids, asked), _text(ref, ids[:prompt], asked)
        # (the text after the prompt's: a character the prompt began, a U+FFFD in its own text, is sent)
        return ["".join(ref.stream(ids, prompt, special=not asked.skip_special)), whole[len(commonprefix([whole, head])):]]
    return [_text(ref, ids, asked)]


def _spelt(answer: object) -> object:
    """An answer with each run of U+FFFD as one: libraries spell bytes that are not UTF-8 either way."""
    if isinstance(answer, str):
        return re.sub("\ufffd+", "\ufffd", answer)
    return tuple(answer) if isinstance(answer, list) else answer


def _answer_of(j: Judgement) -> object:
    """The backend's answer as the variants give it: the text, the deltas joined, the bytes."""
    if j.op == "pieces":
        return [bytes.fromhex(h) for h in j.backend_output]
    return "".join(j.backend_output)
