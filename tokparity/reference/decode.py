"""Decoding: ids back to text, as each original does it.

A token stands for bytes, not for characters, so decoding first builds bytes and only then
reads them as UTF-8. Byte pieces (``<0xE2>``) and byte-level BPE pieces (``Ġ``) can split a
character, and a sequence of ids can end in the middle of one: ``decode`` then either
reports it (``errors="strict"`` raises ``InvalidUtf8``) or shows U+FFFD (``errors="replace"``).

* llama.cpp (``llama_detokenize`` with remove_special and unparse_special off): control and
  unknown tokens vanish; ``▁`` becomes a space (SPM, UGM, WPM, Gemma 4); GPT-2 characters
  become their bytes (byte-level BPE); the first token loses one leading space when the
  model adds a space prefix; ``clean_spaces`` models then drop the space before ``?!.,``
  and in contractions (`` 's``), as Hugging Face's ``clean_up_tokenization_spaces`` does.
* SentencePiece (``DecodeIds``): control pieces vanish, ``<unk>`` becomes `` ⁇ ``, ``▁`` a
  space, and the dummy-prefix space of the first piece is dropped.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import lru_cache

from tokparity.errors import InvalidUtf8, TokparityError
from tokparity.memo import PerObject
from tokparity.vocab.model import TokenType
from tokparity.vocab.rwkv_vocab import unescape_llama_rwkv
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte

SPACE_MARK = "\u2581"
UNK_SURFACE = " \u2047 "  # SentencePiece's default unk_surface


@dataclass(frozen=True)
class DecodeSettings:
    """How a run asks ids to become text: the switches decoders have, each left as the model's
    files say unless asked (``compare --skip-special --clean-up-spaces on|off
    --spaces-between-specials``). A stream takes ``skip_special`` only: a streamed text cannot be
    cleaned up (it would take back a space it sent), and servers do not."""

    skip_special: bool = False  # special tokens left out (skip_special_tokens=True, unparse_special off)
    clean_up: bool | None = None  # clean_up_tokenization_spaces forced on or off; None: as the files say
    spaces_between_specials: bool = False  # spaces_between_special_tokens=True (vLLM's detokenizer)
    remove_special: bool = False  # llama.cpp's remove_special: the BOS and EOS it adds taken off the ends
    step: int = 1  # a stream's ids given at once (compare --stream-step): what the diagnosis's step variants read

    def asked(self) -> frozenset[str]:
        """The switches set away from the files' own decoding, as ``Backend.decode_switches`` names
        what a backend can give: ``skip_special``, ``clean_up=on``, ``clean_up=off``,
        ``spaces_between_specials``, ``remove_special``."""
        return _asked(self)

    def for_stream(self) -> DecodeSettings:
        return _FOR_STREAM[self.skip_special]

    def for_op(self, op: str) -> DecodeSettings:
        """What ``op`` decodes with: decode all of these, a stream ``skip_special`` only."""
        return self if op == "decode" else self.for_stream()

    def described(self) -> str:
        """As the command line asks it: ``--skip-special --clean-up-spaces on``; "" for the files' own."""
        words = {"skip_special": "--skip-special", "clean_up=on": "--clean-up-spaces on",
                 "clean_up=off": "--clean-up-spaces off", "spaces_between_specials": "--spaces-between-specials",
                 "remove_special": "--remove-special"}
        return " ".join(words[name] for name in words if name in self.asked())


AS_FILES_SAY = DecodeSettings()
_FOR_STREAM = {False: AS_FILES_SAY, True: DecodeSettings(skip_special=True)}  # (a judge asks it per id and backend)


@lru_cache(maxsize=64)
def _asked(settings: DecodeSettings) -> frozenset[str]:
    return frozenset(name for name, on in (("skip_special", settings.skip_special),
                                           ("clean_up=on", settings.clean_up is True),
                                           ("clean_up=off", settings.clean_up is False),
                                           ("spaces_between_specials", settings.spaces_between_specials),
                                           ("remove_special", settings.remove_special)) if on)


# Every setting away from the files' own (a backend that has them all: tokparity's reference, or an
# engine that is asked and answers an error for what it lacks)
EVERY_SWITCH = frozenset({"skip_special", "clean_up=on", "clean_up=off", "spaces_between_specials",
                          "remove_special"})

# transformers' clean_up_tokenization, in its order (str.replace, one after the other): the space
# before . ? ! , and before the contractions n't 'm 's 've 're goes, and " ' " loses both its
# spaces ("don ' t" -> "don't").
HF_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
              (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def hf_clean_up(text: str) -> str:
    """transformers' ``clean_up_tokenization``: ``"x != y , don ' t"`` -> ``"x!= y, don't"``."""
    for old, new in HF_CLEANUP:
        text = text.replace(old, new)
    return text


def bytes_to_text(data: bytes, errors: str = "strict") -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        if errors == "strict":
            raise InvalidUtf8(data, e) from None
        return data.decode("utf-8", errors)


def _byte_of(piece: str) -> int | None:
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        try:
            return int(piece[3:5], 16)
        except ValueError:
            return None
    return None


# --- llama.cpp ----------------------------------------------------------------------------------


def llama_piece(pipeline, token_id: int, special: bool = False) -> bytes:
    """``llama_token_to_piece``: the bytes one token decodes to."""
    vocab = pipeline.vocab
    if not 0 <= token_id < vocab.size:
        raise TokparityError(f"token id {token_id} is outside the vocabulary (0..{vocab.size - 1})")
    text = vocab.tokens[token_id]
    if pipeline.algorithm == "rwkv":  # every token, whatever its type, is its unescaped bytes
        return unescape_llama_rwkv(text.encode("utf-8", "surrogateescape"))
    ttype = pipeline.types[token_id]
    if ttype in (TokenType.CONTROL, TokenType.UNKNOWN):
        return text.encode("utf-8", "surrogateescape") if special else b""
    if ttype == TokenType.USER_DEFINED:
        return text.encode("utf-8", "surrogateescape")
    if ttype == TokenType.BYTE:
        b = _byte_of(text)
        return bytes([b]) if b is not None else b""
    if ttype != TokenType.NORMAL:
        return b""  # UNUSED / UNDEFINED: llama.cpp writes nothing
    if pipeline.algorithm == "bpe" and not pipeline.flags.escape_whitespaces:
        table = gpt2_unicode_to_byte()
        out = bytearray()
        for ch in text:
            b = table.get(ch)
            if b is None:  # not a GPT-2 byte character: llama.cpp's marker
                out += f"[UNK_BYTE_0x{ch.encode('utf-8').hex()}{text}]".encode("utf-8", "surrogateescape")
            else:
                out.append(b)
        return bytes(out)
    return text.replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")


# Each token's bytes, per pipeline and ``special``: a stream's diagnosis decodes every prefix of a case.
_PIECES: PerObject[dict[int, bytes]] = PerObject(size=8)


def llama_pieces(pipeline, ids: list[int], special: bool = False) -> list[bytes]:
    """``llama_piece`` of each id, each token's bytes made once per pipeline."""
    known = _PIECES.get(pipeline, special, dict)
    out = []
    for token_id in ids:
        piece = known.get(token_id)
        if piece is None:
            piece = known[token_id] = llama_piece(pipeline, token_id, special)
        out.append(piece)
    return out


def llama_decode_bytes(pipeline, ids: list[int], special: bool = False, clean_up: bool | None = None,
                       remove_special: bool = False) -> bytes:
    """``llama_detokenize(remove_special, unparse_special=special)``; ``clean_up`` forces the
    vocabulary's ``clean_spaces`` on or off. ``remove_special``: a first BOS and a last EOS the
    vocabulary adds are taken off, and then the first token keeps its leading space (llama-vocab.cpp
    ``detokenize``: ``remove_space = false`` once the BOS goes)."""
    remove_space = pipeline.flags.add_space_prefix
    flags = pipeline.flags
    if remove_special and flags.add_bos and ids and ids[0] == flags.specials.get("bos"):
        remove_space, ids = False, ids[1:]
    if remove_special and flags.add_eos and ids and ids[-1] == flags.specials.get("eos"):
        ids = ids[:-1]
    out = bytearray()
    for piece in llama_pieces(pipeline, ids, special):
        if remove_space and piece.startswith(b" "):
            piece = piece[1:]
        remove_space = False
        out += piece
    if pipeline.flags.clean_spaces if clean_up is None else clean_up:
        out = bytearray(clean_up_spaces(bytes(out)))
    return bytes(out)


def clean_up_spaces(text: bytes) -> bytes:
    """llama.cpp's three passes of ``clean_up_tokenization_spaces``:
    ``b"a , b 's c ' d"`` -> ``b"a, b's c' d"``."""
    # 1. " ?", " !", " .", " ,": drop the space
    t = bytearray(re.sub(rb" (?=[?!.,])", b"", text))
    # (each pass below changes only a text that holds its pattern: most texts are copied by none)
    if b" ' " in t:
        t = _lone_apostrophes(t)
    if b" '" in t:
        t = _contractions(t)
    return bytes(t)


def _lone_apostrophes(t: bytearray) -> bytearray:
    """2. " ' ": a lone apostrophe between spaces loses both spaces. llama.cpp overwrites the
    space after with NUL in place, so the next character's "previous" is NUL."""
    out = bytearray(t[:1])
    i = 1
    while i < len(t):
        x = t[i]
        if x == 0x27 and i + 1 < len(t) and t[i - 1] == 0x20 and t[i + 1] == 0x20:
            out.pop()
            t[i + 1] = 0
            out.append(x)
            i += 2
            continue
        out.append(x)
        i += 1
    return out


def _contractions(t: bytearray) -> bytearray:
    """3. contractions: " 's", " 'm", " 're", " 've" lose their space (" 't", " 'd", " 'll" keep it)."""
    out = bytearray(t[:1])
    for i in range(1, len(t)):
        x = t[i]
        if t[i - 1] == 0x20 and x == 0x27 and i + 1 < len(t):
            x1 = t[i + 1]
            if x1 in b"sm" or (i + 2 < len(t) and (t[i + 1:i + 3] in (b"re", b"ve"))):
                out.pop()
        out.append(x)
    return out


# --- SentencePiece --------------------------------------------------------------------------------


def sentencepiece_decode(pipeline, ids: list[int], errors: str = "replace", text_start: bool = True) -> str:
    """``SentencePieceProcessor.decode`` (invalid byte sequences become U+FFFD, as there; with
    ``errors="surrogateescape"`` they are kept, for a streaming decoder to hold back).
    ``text_start``: the ids begin the text, so its leading spaces go (False: they continue one
    whose text has begun, as a streaming decoder's window does)."""
    vocab, types = pipeline.vocab, pipeline.types
    strip_first = vocab.flags.add_space_prefix is not False or vocab.flags.remove_extra_whitespaces is not False
    remove_extra = vocab.flags.remove_extra_whitespaces is not False
    text: list[str] = []
    pending = bytearray()
    bos_ws = text_start
    bos_ws_seen = False

    def flush() -> None:
        if pending:
            text.append(pending.decode("utf-8", errors))
            pending.clear()

    for token_id in ids:
        if not 0 <= token_id < vocab.size:
            raise TokparityError(f"token id {token_id} is outside the vocabulary (0..{vocab.size - 1})")
        piece, ttype = vocab.tokens[token_id], types[token_id]
        if ttype == TokenType.BYTE:
            pending.append(_byte_of(piece) or 0)
            continue
        flush()
        if bos_ws_seen or "".join(text):
            bos_ws = False
        bos_ws_seen = False
        if ttype == TokenType.CONTROL:
            continue
        if ttype == TokenType.UNKNOWN:
            text.append(UNK_SURFACE)
            continue
        if bos_ws and strip_first and piece.startswith(SPACE_MARK):
            piece = piece[1:]
            bos_ws_seen = not remove_extra
        text.append(piece.replace(SPACE_MARK, " "))
    flush()
    return "".join(text)


# --- streaming --------------------------------------------------------------------------------


def is_held(text: str) -> bool:
    """Whether ``text`` (decoded with ``errors="surrogateescape"``) ends inside a character: its
    last bytes begin one that the next id may complete."""
    return held_tail(text) > 0


def held_tail(text: str) -> int:
    """How many of ``text``'s last characters (surrogate-escaped bytes) begin a character not yet complete."""
    escaped = len(text) - len(text.rstrip(_ESCAPED_BYTES))
    return incomplete_tail(text[len(text) - min(escaped, 3):].encode("utf-8", "surrogateescape"))


def incomplete_tail(data: bytes) -> int:
    """How many of ``data``'s last bytes begin a character not yet complete (0 to 3)."""
    for k in range(1, min(3, len(data)) + 1):
        try:
            _UTF8().decode(data[-k:], final=True)
        except UnicodeDecodeError as e:
            if e.reason == "unexpected end of data" and e.start == 0:
                return k
    return 0


_UTF8 = codecs.getincrementaldecoder("utf-8")
_ESCAPED_BYTES = "".join(map(chr, range(0xDC80, 0xDD00)))  # the bytes surrogateescape could not decode


def shown(text: str) -> str:
    """A surrogate-escaped text as a whole decode shows it: each invalid sequence one U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def shown_per_byte(text: str) -> str:
    """A surrogate-escaped text as SentencePiece and tokenizers' ByteFallback show it: one U+FFFD per bad byte."""
    return "".join("\ufffd" if "\udc80" <= ch <= "\udcff" else ch for ch in text)


def stream_deltas(decode, ids: list[int], prompt: int, spell=shown) -> list[str]:
    """``ids`` decoded one at a time after the first ``prompt``, as tokenizers' ``DecodeStream`` and
    vLLM's incremental detokenizer do: each step decodes from a window start (``prefix``) and
    sends what goes beyond the window's former text, unless it ends inside a character (then it
    sends "" and holds the bytes back). ``decode(ids, text_start)`` gives surrogate-escaped text;
    ``text_start`` is whether nothing before the window has text yet (SentencePiece drops every
    leading space of a text: a window after a text has begun must not). One delta per id after
    the prompt; what is still held back at the end is not sent. ``spell``: bytes that are not
    UTF-8 as the decoder writes them (``shown``, ``shown_per_byte``)."""
    deltas: list[str] = []
    prefix, read = 0, prompt
    prefix_text = decode(ids[prefix:read], True)
    prefix_text = prefix_text[:len(prefix_text) - held_tail(prefix_text)]  # a character the prompt began: not sent
    started = bool(prefix_text)  # some text before the window's start, once it moves on
    sent = 0  # characters sent beyond the window's former text (what came before an unfinished character)
    for i in range(prompt, len(ids)):
        text = decode(ids[prefix:i + 1], prefix == 0 or not started)
        held = held_tail(text)
        ready = text[:len(text) - held]
        if not ready.startswith(prefix_text) or len(ready) <= len(prefix_text) + sent:
            deltas.append("")
            continue
        deltas.append(spell(ready[len(prefix_text) + sent:]))
        if held:  # the text before the unfinished character is sent; the window stays
            sent = len(ready) - len(prefix_text)
            continue
        started = started or bool(prefix_text)
        prefix, read, sent = read, i + 1, 0
        prefix_text = decode(ids[prefix:read], not started)
    return deltas


def spm_piece_bytes(piece: str) -> bytes:
    """A SentencePiece piece's bytes, as a grammar engine reads a vocabulary: ``<0xNN>`` its byte,
    ``▁`` a space, any other piece (a control one too) its text."""
    b = _byte_of(piece)
    return bytes([b]) if b is not None else piece.replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")


def piece_stream(piece_bytes, ids: list[int], prompt: int) -> list[str]:
    """``ids`` streamed from llama.cpp's pieces: each id after the prompt adds its piece's
    bytes (``piece_bytes(ids)``, ``token_to_piece``) to what is held, and what is held is sent up to
    the start of a character not yet complete (invalid bytes as U+FFFD). The bytes of a character
    the prompt began are held from the start, so the first delta completes it."""
    pieces = piece_bytes(list(ids))
    held = b"".join(pieces[:prompt])
    held = held[len(held) - incomplete_tail(held):]
    deltas = []
    for piece in pieces[prompt:]:
        held += piece
        keep = incomplete_tail(held)
        ready, held = held[:len(held) - keep], held[len(held) - keep:]
        deltas.append(ready.decode("utf-8", "replace"))
    return deltas

