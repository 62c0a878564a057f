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
from collections.abc import Callable
from dataclasses import dataclass, replace

from tokparity.records import Diagnosis, Judgement
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings, hf_clean_up
from tokparity.vocab.model import TokenType


@dataclass(frozen=True)
class DecodeVariant:
    name: str
    op: str
    does: str
    # the answers a decoder with this bug gives: (reference, ids, prompt, the settings asked)
    run: Callable[[RefTokenizer, list[int], int, DecodeSettings], list]
    fix: str = ""
    # The same way of decoding without the bug: a variant that answers what its twin does on these
    # ids shows no bug here (Latin-1 and UTF-8 read ASCII alike), so it reproduces nothing.
    twin: Callable[[RefTokenizer, list[int], int, DecodeSettings], list] | None = None

    def info(self) -> dict:
        """As tokparity.diagnose.info.cause_info gives an encoding cause's (its class stays the judge's)."""
        return info(self.op, self.fix)


def info(op: str, fix: str) -> dict:
    return {"classes": [], "stage": op, "fix": fix, "spec": SPEC}


SPEC = "tokparity/reference/decode.py (decode, stream_deltas, piece_stream, piece_bytes)"


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


def _lstrip(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The pieces joined with one leading space of each taken off (llama.cpp's ``lstrip`` of 1: "skip
    up to 1 leading space"), or every leading space."""
    pieces = _pieces(ref, ids, asked)
    return [b"".join(b[1:] if b.startswith(b" ") else b for b in pieces).decode("utf-8", "replace"),
            b"".join(b.lstrip(b" ") for b in pieces).decode("utf-8", "replace")]


# --- pieces ------------------------------------------------------------------------------------


def _raw_tokens(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [[ref.vocab.tokens[i].encode("utf-8", "surrogateescape") for i in ids]]


def _byte_ff_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    right = ref.piece_bytes(ids)
    return [[b"" if b == b"\xff" else b for b in right]] if b"\xff" in right else []


def _decoded_alone(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [[ref.decode([i], "surrogateescape", special=True).encode("utf-8", "surrogateescape") for i in ids]]


VARIANTS = (
    DecodeVariant("stream.bytes-as-latin1", "stream", "turns each id's bytes into text as Latin-1, one character a "
                  "byte, and sends them at once", _latin1,
                  fix='decode the bytes as UTF-8, holding back a character until its last byte',
                  twin=_joined),
    DecodeVariant("stream.split-character-sent", "stream", "decodes each id's bytes alone and sends them at once: a "
                  "character split between ids is sent as U+FFFD", _eager,
                  fix='hold back the bytes of an unfinished character until it is complete',
                  twin=_joined),
    DecodeVariant("stream.prompt-dropped", "stream", "decodes the generated ids without the prompt, as if they "
                  "began the text: a character the prompt began loses its first bytes, and the first word its space "
                  "where the decoder drops a text's leading space or the streamer trims it", _prompt_dropped,
                  fix="decode the generated ids after the prompt's: start the window in the prompt and take its text "
                      "off"),
    DecodeVariant("stream.restart-after-newline", "stream", "starts decoding afresh after each newline (and after "
                  "the prompt): the decoder's start-of-text rule drops the next word's space, a split character "
                  "loses its first bytes", _restart_after_newline,
                  fix='keep decoding from a window that starts before the newline instead of afresh'),
    DecodeVariant("stream.prompt-resent", "stream", "sends text of the prompt again with the generated text",
                  _prompt_resent,
                  fix="take the prompt's text off, a character it leaves unfinished counted as not sent"),
    DecodeVariant("stream.offset-into-cleaned-text", "stream", "re-decodes what it holds with spaces cleaned up and "
                  "sends what lies beyond the length it sent: text shortened by the clean-up is skipped",
                  _offset_into_cleaned_text,
                  fix='count what was sent in the text as decoded without clean-up (or do not clean up a stream)'),
    DecodeVariant("stream.byte-zero-unmapped", "stream", "maps byte-level characters to bytes with a lookup whose "
                  "answer 0 reads as 'not found': 'Ā', the character of byte 0x00, is sent as it is", _byte_zero_unmapped,
                  fix='test the byte lookup for None, not for truth'),
    DecodeVariant("stream.metaspace-on-byte-level", "stream", "streams a byte-level vocabulary with a SentencePiece "
                  "detokenizer: 'Ġ' and 'Ċ' are sent as they are", _metaspace_on_byte_level,
                  fix="choose the detokenizer from the tokenizer.json decoder: ByteLevel reads GPT-2's byte table"),
    DecodeVariant("stream.held-to-end", "stream", "sends nothing until the last step, then the whole text: it "
                  "decodes once, at the end", _held_to_the_end,
                  fix="send what each step finishes, holding back only an unfinished character (or a word until "
                      "its space)"),
    DecodeVariant("decode.specials-skipped", "decode", "leaves special tokens out of the text", _specials_skipped,
                  fix='write special tokens as their text where the decoder does (skip_special_tokens=False)'),
    DecodeVariant("decode.specials-written", "decode", "writes special tokens as their text where they were to be left "
                  "out (--skip-special)", _specials_written,
                  fix='leave special tokens out of the text when asked (skip_special_tokens=True)'),
    DecodeVariant("decode.specials-spaced", "decode", "writes a space before and after each special token "
                  "where the decoder does not (spaces_between_special_tokens), or leaves them out where it does",
                  _specials_spaced,
                  fix='space special and added tokens apart from their neighbours exactly when asked '
                      '(spaces_between_special_tokens)'),
    DecodeVariant("decode.remove-special", "decode", "keeps the BOS and EOS the vocabulary adds where llama.cpp's "
                  "remove_special takes them off (or the reverse), or takes them off and drops the first word's "
                  "space as if the text began there", _remove_special,
                  fix="with remove_special, take off a first BOS and a last EOS the vocabulary adds, and keep the "
                      "next token's leading space (llama-vocab.cpp detokenize)"),
    DecodeVariant("decode.cleanup", "decode", "cleans up tokenization spaces where the decoder does not, or the "
                  "reverse", _cleanup,
                  fix='clean up tokenization spaces exactly where the decoder does'),
    DecodeVariant("decode.unfinished-end-dropped", "decode", "leaves out the bytes of a character the ids leave "
                  "unfinished, where the decoder writes U+FFFD (a streaming UTF-8 decoder never flushed)",
                  _unfinished_end_dropped,
                  fix='flush the streaming UTF-8 decoder at the end of each decode (one decoder per call)'),
    DecodeVariant("decode.lstrip", "decode", "strips the leading space (or spaces) of every piece", _lstrip,
                  fix="keep each piece's leading space (lstrip 0)",
                  twin=_joined_all),
    DecodeVariant("pieces.raw-tokens", "pieces", "takes each token's string as its bytes ('Ġworld', '▁world', "
                  "'<0x0A>' as written)", _raw_tokens,
                  fix='map each token to bytes as its decoder does: ▁ a space, <0xNN> its byte, GPT-2 characters '
                      'their bytes'),
    DecodeVariant("pieces.byte-ff-dropped", "pieces", "gives the token of byte 0xFF no bytes (a table that keeps 0xFF "
                  "for its own use, as llguidance's marks special tokens with it)", _byte_ff_dropped,
                  fix="keep byte 0xFF's token as that byte"),
    DecodeVariant("pieces.decoded-alone", "pieces", "decodes each id alone: a decoder that drops the first token's "
                  "space leaves no token with one", _decoded_alone,
                  fix='take what an id adds after another token, not the id decoded alone'),
)
BY_NAME = {v.name: v for v in VARIANTS}
# Decoding causes that a reviewed known divergence names and no variant reproduces (a library's
# spelling of a text): name -> (op, fix).
REVIEWED = {
    "decode.bytes": ("decode", "spell each token as the decoder does (the unknown token, bytes that are not UTF-8)"),
    "decode.prefix-strip": ("decode", "strip the leading spaces the decoder strips, and only those"),
}


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
        try:
            answers = variant.run(ref, ids, prompt, asked)
        except Exception:  # a variant that cannot run on these ids reproduces nothing
            continue
        if variant.twin is not None:  # (compared exactly: one U+FFFD per byte is the bug of some)
            twins = variant.twin(ref, ids, prompt, asked)
            answers = [a for a in answers if a not in twins]
        if got in answers and _spelt(got) not in right:
            found.append(variant.name)
    if not found:
        return Diagnosis("", f"no variant of the reference's {j.op} gives the backend's answer", stage=j.op)
    return _named(found, j.op)


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
        if len(names) < 2:
            out.append(d)
            continue
        order = {n: k for k, n in enumerate(names)}
        out.append(_named(sorted(names, key=lambda n: (-counts[n], order[n])), d.stage))
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
        return ["".join(ref.stream(ids, prompt, special=not asked.skip_special)), _text(ref, ids, asked)[len(_text(ref, ids[:prompt], asked)):]]
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
