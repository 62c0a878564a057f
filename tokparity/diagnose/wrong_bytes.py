"""Wrong decoders of a token's bytes: byte tokens ``<0xHH>`` written as their names, the byte-level
alphabet mapped back wrongly (one character, those from 0x7F up, or all of them written as
themselves), and bytes that are not UTF-8 dropped or failed on. Each takes ``(reference, ids,
prompt, asked)`` as those of ``tokparity.diagnose.wrong_decoders`` do, and is listed in
``tokparity.diagnose.decoding``'s ``VARIANTS``. So are the wrong tables of every id's bytes: a
table keyed by each token's text loses the ids that share one.
"""

from __future__ import annotations

from collections.abc import Callable

from tokparity.diagnose.wrong_decoders import (
    BYTE_TOKEN,
    FAILED,
    added_texts,
    bytes_of,
    decoded,
    is_special,
    one_fffd_a_run,
    prompt_dropped,
    right_answers,
)
from tokparity.diagnose.wrong_edits import control_characters_removed
from tokparity.memo import PerObject
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import UNK_SURFACE, DecodeSettings, hf_clean_up, incomplete_tail
from tokparity.vocab.model import TokenType
from tokparity.vocab.token_bytes import PRINTABLE_TO_BYTE, byte_to_unicode, gpt2_unicode_to_byte, spelt_in_byte_table


def _as_decoder(text: str, joined: str, right: str) -> str:
    """``text``, made by joining the ids' bytes, changed as the decoder changes the joined bytes
    (``right``): its first space taken off (SentencePiece's first ``▁``), or its spaces cleaned up."""
    joined, right = one_fffd_a_run(joined), one_fffd_a_run(right)
    if joined == right:
        return text
    if joined[1:] == right and text.startswith(" "):
        return text[1:]
    if hf_clean_up(joined) == right:
        return hf_clean_up(text)
    # (a decoder that writes invalid bytes otherwise, a U+FFFD for each byte of a run: its first space still tells)
    return text[1:] if joined.startswith(" ") and not right.startswith(" ") and text.startswith(" ") else text


def _byte_token(ref: RefTokenizer, i: int) -> bool:
    tokens = ref.vocab.tokens
    return 0 <= i < len(tokens) and ref.vocab.type_of(i) == TokenType.BYTE and bool(BYTE_TOKEN.fullmatch(tokens[i]))


def byte_tokens_raw(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each byte token ``<0xHH>`` written as its six characters; every other token decoded."""
    if not any(_byte_token(ref, i) for i in ids):
        return []
    pieces = bytes_of(ref, ids, asked)
    raw = [ref.vocab.tokens[i].encode() if _byte_token(ref, i) else b for i, b in zip(ids, pieces)]
    joined = b"".join(pieces).decode("utf-8", "replace")
    return [_as_decoder(b"".join(raw).decode("utf-8", "replace"), joined, decoded(ref, ids, asked))]


def token_text_when_invalid(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id decoded alone; an id whose bytes are not UTF-8 alone (part of a character) written as
    its token's own text (`æĿ¥` for the three byte-level tokens of `來`, `<0xE4>`)."""
    pieces = bytes_of(ref, ids, asked)
    invalid = [k for k, b in enumerate(pieces) if b and not _utf8(b)]
    if not invalid:
        return []
    return ["".join(ref.vocab.tokens[i] if k in invalid else decoded(ref, [i], asked) for k, i in enumerate(ids))]


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def glyphs_not_mapped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A byte-level vocabulary's characters written as they are, not as the bytes they stand for:
    those of the bytes from 0x7F up (a decoder that maps back only ASCII), all of them, or one
    (a table that lacks one character: a form per byte)."""
    table, tokens = gpt2_unicode_to_byte(), ref.vocab.tokens
    pieces = bytes_of(ref, ids, asked)
    level = _byte_level(ref, ids, pieces)
    by_byte = _ids_showing(table, tokens, ids, level)
    if not by_byte:
        return []
    joined, right = b"".join(pieces).decode("utf-8", "replace"), decoded(ref, ids, asked)

    def as_decoder(out: list[bytes]) -> str:
        return _as_decoder(b"".join(out).decode("utf-8", "replace"), joined, right)

    def unmapped(raw: Callable[[int], bool]) -> str:
        return as_decoder([_written(table, tokens[i], raw) if lv else pieces[k]
                           for k, (lv, i) in enumerate(zip(level, ids))])
    return [unmapped(lambda b: b >= 0x7F), unmapped(lambda b: True),
            *(as_decoder(_one_unmapped(pieces, one, by_byte[one])) if one in by_byte else None
              for one in range(256))]


def glyph_not_mapped_pieces(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id's bytes with one character of the byte-level alphabet written as it is (a table that
    lacks it): a form per byte."""
    table, tokens = gpt2_unicode_to_byte(), ref.vocab.tokens
    right = ref.piece_bytes(ids)
    by_byte = _ids_showing(table, tokens, ids, _byte_level(ref, ids, right))
    if not by_byte:
        return []
    return [_one_unmapped(right, one, by_byte[one]) if one in by_byte else None
            for one in range(256)]


def _written(table: dict[str, int], token: str, raw: Callable[[int], bool]) -> bytes:
    """A byte-level token's bytes, with the characters of the bytes ``raw`` picks written as they are."""
    return b"".join(c.encode() if raw(table[c]) else bytes([table[c]]) for c in token)


def _one_unmapped(pieces: list[bytes], one: int, where: list[int]) -> list[bytes]:
    """The ids' bytes with byte ``one``'s character written as it is. Only the byte-level ids at
    ``where`` hold it, and each of their bytes stands for one character: a replace is exact."""
    form, glyph = list(pieces), byte_to_unicode()[one].encode()
    for k in where:
        form[k] = pieces[k].replace(bytes([one]), glyph)
    return form


def invalid_bytes_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids' bytes read as UTF-8 with the bytes that are not UTF-8 left out (``errors="ignore"``),
    not written as U+FFFD."""
    pieces = bytes_of(ref, ids, asked)
    joined = b"".join(pieces)
    if _utf8(joined):
        return []
    return [_as_decoder(joined.decode("utf-8", "ignore"), joined.decode("utf-8", "replace"), decoded(ref, ids, asked))]


def _byte_level(ref: RefTokenizer, ids: list[int], pieces: list[bytes]) -> list[bool]:
    """Which ids are tokens of a byte-level vocabulary: their characters map through GPT-2's
    table to the very bytes they stand for (not a WordPiece ``##ing``, not SentencePiece's ``é``)."""
    table, tokens = gpt2_unicode_to_byte(), ref.vocab.tokens
    if ref.vocab.algorithm != "bpe":
        return [False] * len(ids)
    return [0 <= i < len(tokens) and bool(pieces[k]) and not is_special(ref, i) and all(c in table for c in tokens[i])
            and bytes(table[c] for c in tokens[i]) == pieces[k] for k, i in enumerate(ids)]


def _ids_showing(table: dict[str, int], tokens: list[str], ids: list[int], level: list[bool]) -> dict[int, list[int]]:
    """For each byte whose character is not the byte itself (printable ASCII is), the positions of the
    byte-level ids that hold that character."""
    where: dict[int, list[int]] = {}
    for k, (lv, i) in enumerate(zip(level, ids)):
        if lv:
            for one in {table[c] for c in tokens[i]}:
                if not 0x21 <= one <= 0x7E:
                    where.setdefault(one, []).append(k)
    return where


def fails_on_invalid_bytes(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A failure where the ids' bytes together are not UTF-8 (a strict decode); nothing else changed.
    A stream (after a prompt) waits for a character still unfinished at the end. Its second form
    decodes the generated ids' bytes on their own, as a streamer that keeps only what it generated
    does: it also fails on the rest of a character the prompt began."""
    pieces = bytes_of(ref, ids, asked)
    if not prompt:
        return [] if _utf8(b"".join(pieces)) else [FAILED]
    whole = None if _utf8_but_its_end(b"".join(pieces)) else FAILED
    apart = None if _utf8_but_its_end(b"".join(pieces[prompt:])) else FAILED
    return [] if whole is None and apart is None else [whole, apart]


# An output buffer sized from the number of ids: ``a`` bytes an id plus ``b`` (a = 0: a fixed size).
# (no buffer under 64 bytes: else a crash on any short text would read as one that overflowed)
PER_ID = (0, 4, 8, 16)
FIXED = (64, 128, 256, 512, 1024, 2048, 4096)
BUFFER_SIZES = tuple((a, b) for a in PER_ID for b in FIXED)


# The causes a failure is named by only in a run's verdict: any crash on a long text fits some buffer.
CLAIMED_BY_A_VERDICT = ("decode.fails-past-buffer",)


def fails_past_buffer(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """For each buffer size ``a`` bytes an id plus ``b``: a failure where the reference's text does
    not fit in UTF-8. A decoder that never grows its output buffer fails so. Nothing where every size holds it."""
    size = len(decoded(ref, ids, asked).encode("utf-8", "surrogatepass"))
    forms = [FAILED if size > a * len(ids) + b else None for a, b in BUFFER_SIZES]
    return forms if FAILED in forms else []


def lead_takes_its_length(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids' bytes read as a hand-written UTF-8 decoder reads them: a lead byte takes as many
    bytes as it announces, whatever they are. A sequence that is not a character becomes one U+FFFD,
    so the valid bytes that follow a broken lead byte are lost with it; or, the second form, it is
    decoded with replacement (Python's ``bytes.decode``), so only its sending waits for them.
    A stream (after a prompt) is a byte buffer's: what it sends is each sequence that ends after
    the prompt's bytes."""
    text = ref.decode_as(ids, asked, "surrogateescape")
    if not any("\udc80" <= ch <= "\udcff" for ch in text):
        return []
    data = text.encode("utf-8", "surrogateescape")
    head = ref.decode_as(ids[:prompt], asked, "surrogateescape").encode("utf-8", "surrogateescape") if prompt else b""
    if not data.startswith(head):
        return []
    return [_lengths_trusted(data, sent_after=len(head)), _lengths_trusted(data, sent_after=len(head), keep_valid=True)]


def token_after_bytes_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids decoded less the id after each run of byte tokens, as a loop that reads the run
    with a look-ahead does: it steps past the id that ends the run and never writes it."""
    kept = kept_after_bytes(ref, ids)
    return [decoded(ref, kept, asked)] if len(kept) < len(ids) else []


def kept_after_bytes(ref: RefTokenizer, ids: list[int]) -> list[int]:
    """``ids`` less the id after each run of byte tokens."""
    return [i for k, i in enumerate(ids) if not (k and _byte_token(ref, ids[k - 1]) and not _byte_token(ref, i))]


def four_bytes_read_as_three(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids' bytes read with a UTF-8 length table that has no 4-byte sequences: a lead byte
    F0–F7 takes 3 bytes, as code written for the BMP alone does. A character past U+FFFF (an emoji)
    becomes two U+FFFD: its first three bytes, then its last byte alone.
    A stream (after a prompt) is a byte buffer's: what it sends is each sequence that ends after
    the prompt's bytes. Two forms: a sequence that is not a character is one U+FFFD, or it is
    decoded with replacement, so the valid bytes in it are kept (Python's ``bytes.decode``)."""
    data = ref.decode_as(ids, asked, "surrogateescape").encode("utf-8", "surrogateescape")
    head = ref.decode_as(ids[:prompt], asked, "surrogateescape").encode("utf-8", "surrogateescape") if prompt else b""
    if not any(b >= 0xF0 for b in data) or not data.startswith(head):
        return []
    return [_lengths_trusted(data, four=3, sent_after=len(head)),
            _lengths_trusted(data, four=3, sent_after=len(head), keep_valid=True)]


def _lengths_trusted(data: bytes, four: int = 4, sent_after: int = 0, keep_valid: bool = False) -> str:
    """``data`` decoded a sequence at a time, each as long as its first byte says (a byte that
    leads nothing is one U+FFFD); a sequence cut at the end is decoded as it is. ``four``: the
    length a lead byte F0–F7 is read as. ``sent_after``: only the sequences that end after this
    many bytes are written (a streamer's, after its prompt). ``keep_valid``: a sequence that is
    not a character is decoded with replacement, not made one U+FFFD."""
    out, k = [], 0
    while k < len(data):
        lead = data[k]
        size = 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else \
            four if lead >> 3 == 0b11110 else 0
        if not size:
            out.append("\ufffd" if k + 1 > sent_after else "")
            k += 1
            continue
        if k + size > sent_after:
            out.append(data[k:k + size].decode("utf-8", "replace") if keep_valid or k + size > len(data)
                       or _utf8(data[k:k + size]) else "\ufffd")
        k += size
    return "".join(out)


def _utf8_but_its_end(data: bytes) -> bool:
    """Whether ``data`` is UTF-8 up to a character it leaves unfinished at its end."""
    return _utf8(data[:len(data) - incomplete_tail(data)])


# --- streams -----------------------------------------------------------------------------------


def byte_zero_unmapped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    if "\x00" not in decoded(ref, ids, asked):
        return []
    return [a.replace("\x00", "\u0100") for a in right_answers(ref, "stream", ids, prompt, asked)[:2]] + \
        [a.replace("\x00", "\u0100") for a in prompt_dropped(ref, ids, prompt, asked)]


def metaspace_on_byte_level(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    if "\u0120" not in "".join(ref.vocab.tokens[:1000]):  # (a byte-level vocabulary spells a space Ġ)
        return []
    text = "".join(ref.vocab.tokens[i] for i in ids[prompt:]).replace("\u2581", " ")
    return [text, text.lstrip(" ")]


# --- pieces ------------------------------------------------------------------------------------


def byte_tokens_raw_pieces(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each byte token ``<0xHH>`` taken as its six characters, as a normal token is."""
    if not any(_byte_token(ref, i) for i in ids):
        return []
    return [[ref.vocab.tokens[i].encode() if _byte_token(ref, i) else b for i, b in zip(ids, ref.piece_bytes(ids))]]


def byte_tokens_as_characters(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each byte token ``<0xHH>`` taken as the character U+00HH, written in UTF-8: bytes from 0x80
    become two. The second form also writes the BOS and EOS between newlines (``\\n<s>\\n``), as
    llama2.c's first tokenizer export did."""
    if not any(_byte_token(ref, i) and int(ref.vocab.tokens[i][3:5], 16) >= 0x80 for i in ids):
        return []
    tokens, ends = ref.vocab.tokens, {ref.vocab.special_ids.get("bos"), ref.vocab.special_ids.get("eos")} - {None}
    chars = [chr(int(tokens[i][3:5], 16)).encode() if _byte_token(ref, i) else b
             for i, b in zip(ids, ref.piece_bytes(ids))]
    return [chars, [b"\n" + tokens[i].encode() + b"\n" if i in ends else b for i, b in zip(ids, chars)]]


def specials_through_byte_map(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Every token of a byte-level vocabulary mapped through its alphabet, the added and special
    ones too: one with a character outside the alphabet fails the whole table; in the others, the
    alphabet's characters become their bytes."""
    table, vocab = gpt2_unicode_to_byte(), ref.vocab
    if vocab.algorithm != "bpe" or not any(all(c in table for c in t) for t in vocab.tokens[:1000]):
        return []  # (not a byte-level vocabulary)
    if any(c not in table for text in added_texts(vocab) for c in text):
        return [FAILED]
    added = (TokenType.CONTROL, TokenType.USER_DEFINED)
    right = ref.piece_bytes(ids)
    mapped = [bytes(table[c] for c in vocab.tokens[i]) if 0 <= i < vocab.size and vocab.type_of(i) in added
              and all(c in table for c in vocab.tokens[i]) else b for i, b in zip(ids, right)]
    return [mapped] if mapped != right else []


def byte_level_decoder(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A byte-level (GPT-2) decoder on a vocabulary that is not byte-level: a token whose characters
    are all in the byte-level alphabet is read as those bytes, any other written as it is, its
    ``▁`` kept (tokenizers' ``decoders.ByteLevel`` put in place of the model's own decoder)."""
    tokens = ref.vocab.tokens
    # (a vocabulary that spells a space ▁, as SentencePiece does: a byte-level one decodes so itself,
    # and a WordPiece one has no ▁ to keep)
    if ref.vocab.algorithm not in ("spm", "ugm", "bpe") or "\u2581" not in "".join(tokens[:2000]):
        return []
    table = gpt2_unicode_to_byte()
    out = []
    for i, b in zip(ids, bytes_of(ref, ids, asked)):
        if not b or not 0 <= i < len(tokens):
            continue
        text = tokens[i] if ref.vocab.type_of(i) != TokenType.CONTROL else b.decode("utf-8", "replace")
        if ref.vocab.type_of(i) == TokenType.USER_DEFINED:  # (spelt with ▁ in the file, as the decoder reads it)
            text = text.replace(" ", "\u2581")
        out.append(bytes(table[ch] for ch in text) if all(ch in table for ch in text) else text.encode())
    return [b"".join(out).decode("utf-8", "replace")]


def first_mark_only(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each piece's text with one ``▁`` turned into a space, the others left as the character: its
    leading one only (simple-sentencepiece's decoder), or its first wherever it is. ``▁▁▁`` reads ``␣▁▁``."""
    tokens, pieces = ref.vocab.tokens, bytes_of(ref, ids, asked)
    # (a piece with a ▁ after its first character, each ▁ a space in the right bytes)
    marked = [0 <= i < len(tokens) and "\u2581" in tokens[i][1:] and b.count(b" ") == tokens[i].count("\u2581")
              for i, b in zip(ids, pieces)]
    if not any(marked):
        return []
    joined, right = b"".join(pieces).decode("utf-8", "replace"), decoded(ref, ids, asked)
    forms = []
    for leading_only in (True, False):
        out = []
        for i, b, m in zip(ids, pieces, marked):
            text = tokens[i] if m else ""
            if text.startswith("\u2581"):
                text = " " + text[1:]
            elif text and not leading_only:
                text = text.replace("\u2581", " ", 1)
            out.append(text.encode() if m else b)
        forms.append(_as_decoder(b"".join(out).decode("utf-8", "replace"), joined, right))
    return forms


def _printable_chunk(text: str) -> str:
    """``text``'s characters read through the byte-level BPE's table and decoded; '' where one is
    not in the table or the bytes are not UTF-8."""
    try:
        return bytes(PRINTABLE_TO_BYTE[ch] for ch in text).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return ""


def through_printable_bytes(text: str) -> str:
    """``text`` read back through fairseq's byte-level BPE table, as its ``smart_byte_decode`` does:
    the whole text where it reads, else the chunks of one to four characters that keep the most
    characters, the others dropped."""
    whole = _printable_chunk(text)
    if whole or not text:
        return whole
    best, back = [0] * (len(text) + 1), [0] * (len(text) + 1)
    for i in range(1, len(text) + 1):
        best[i], back[i] = best[i - 1], i - 1
        for j in range(1, min(4, i) + 1):
            if best[i - j] + 1 > best[i] and _printable_chunk(text[i - j:i]):
                best[i], back[i] = best[i - j] + 1, i - j
    kept, at = [], len(text)
    while at > 0:
        if best[at] == best[back[at]] + 1:
            kept.append(_printable_chunk(text[back[at]:at]))
        at = back[at]
    return "".join(reversed(kept))


def byte_bpe_table(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text read back through fairseq's byte-level BPE table (``through_printable_bytes``),
    on a vocabulary that is not byte-level: a character outside the table is dropped. Only a
    vocabulary spelt in that table is taken for a byte-level one."""
    if not spelt_in_byte_table(ref.vocab):
        return []
    return [through_printable_bytes(decoded(ref, ids, asked))]


def first_mark_only_pieces(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each piece with only its first ``▁`` turned into a space, the others left as they are."""
    right, tokens = ref.piece_bytes(ids), ref.vocab.tokens
    out = [tokens[i].replace("\u2581", " ", 1).encode() if 0 <= i < len(tokens) and tokens[i].count("\u2581") > 1
           and b.count(b" ") == tokens[i].count("\u2581") else b for i, b in zip(ids, right)]
    return [out] if out != right else []


def marks_only_when_leading(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A piece's ``▁`` turned into spaces only when the piece begins with one: a piece with a ``▁``
    elsewhere only (``>▁</``, ``ed▁to``) keeps them all as the character."""
    right, tokens = ref.piece_bytes(ids), ref.vocab.tokens
    out = [tokens[i].encode() if 0 <= i < len(tokens) and "\u2581" in tokens[i][1:] and tokens[i][0] != "\u2581"
           and b is not None and b.count(b" ") == tokens[i].count("\u2581") else b for i, b in zip(ids, right)]
    return [out] if out != right else []


def unknown_as_decoded(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The unknown token's piece as SentencePiece decodes it (its ``unk_surface``, `` ⁇ ``), not as
    its text (``<unk>``)."""
    unk = ref.vocab.special_ids.get("unk")
    if unk is None or unk not in ids:
        return []
    right = ref.piece_bytes(ids)
    return [[" \u2047 ".encode() if i == unk else b for i, b in zip(ids, right)],
            ["\u2047".encode() if i == unk else b for i, b in zip(ids, right)]]


def unknown_as_its_text(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each unknown id written as its own text (``<unk>``), as llama.cpp and tokenizers write it,
    where SentencePiece writes its ``unk_surface`` `` ⁇ `` (the right text holds one for each)."""
    tokens, types = ref.vocab.tokens, ref.vocab.token_types
    unknown = [tokens[i] for i in ids if types and 0 <= i < len(types) and types[i] == TokenType.UNKNOWN]
    parts = decoded(ref, ids, asked).split(UNK_SURFACE)
    if not unknown or len(parts) != len(unknown) + 1:
        return []
    return ["".join(part + text for part, text in zip(parts, unknown + [""]))]


def byte_tokens_empty(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each byte token ``<0xHH>`` with no bytes: a table that takes a byte token for a special one
    and writes special tokens as nothing."""
    if not any(_byte_token(ref, i) for i in ids):
        return []
    return [[b"" if _byte_token(ref, i) else b for i, b in zip(ids, ref.piece_bytes(ids))]]


def metaspace_replaced_once(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each piece with only its first ``▁`` read as a space: a table written in JavaScript, whose
    ``piece.replace("▁", " ")`` with a string pattern replaces the first match alone. (An added
    token's ``▁`` is read as a space when the vocabulary is loaded: its file spelt it ``▁``.)"""
    vocab, right = ref.vocab, ref.piece_bytes(ids)
    out = []
    for i, b in zip(ids, right):
        token = vocab.tokens[i] if 0 <= i < vocab.size else ""
        if token and vocab.type_of(i) == TokenType.USER_DEFINED:
            token = token.replace(" ", "\u2581")
        once = token.replace("\u2581", " ", 1)
        out.append(once.encode("utf-8") if token.count("\u2581") > 1 and b == token.replace("\u2581", " ").encode("utf-8")
                   else b)
    return [out] if out != right else []


def pieces_cleaned_up(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each piece's text through transformers' clean-up of tokenization spaces (`` .`` as ``.``,
    `` 's`` as ``'s``): a table made with ``decode([id])``, whose clean-up is on by default."""
    right = ref.piece_bytes(ids)
    out = [hf_clean_up(b.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape") for b in right]
    return [out] if out != right else []


def invalid_alone_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id whose bytes are not UTF-8 alone (part of a character, a lone byte) with no bytes. A
    table that decodes each token strictly, and takes a failure for no text, has this."""
    right = ref.piece_bytes(ids)
    out = [b"" if b and not _utf8(b) else b for b in right]
    return [out] if out != right else []


def invalid_bytes_dropped_each(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id's bytes decoded alone with the bytes that are not UTF-8 left out (``errors="ignore"``):
    a token that is part of a character keeps only its whole characters (``Ġð`` as a space)."""
    right = ref.piece_bytes(ids)
    out = [b if _utf8(b) else b.decode("utf-8", "ignore").encode() for b in right]
    return [out] if out != right else []


_TABLES: PerObject[tuple] = PerObject(size=2)  # (reference) -> the forms of its table by text


def _tables_by_text(ref: RefTokenizer) -> tuple[tuple[tuple[str, ...], frozenset[int]], ...]:
    """Each form of ``table_by_text``'s table, made once a vocabulary: every id's key, and the ids
    that keep their entry. A key is the id decoded alone (special tokens as their text, a part of a
    character as U+FFFD), with a space before a ``▁`` token's where the form says so."""
    return _TABLES.get(ref, "by text", lambda: _made_tables(ref))


def _made_tables(ref: RefTokenizer) -> tuple[tuple[tuple[str, ...], frozenset[int]], ...]:
    tokens = ref.vocab.tokens
    texts = [ref.decode([i], special=True) for i in range(ref.vocab.size)]
    eos = ref.vocab.special_ids.get("eos")
    forms = []
    for spaced in (True, False):
        keys = tuple(" " + t if spaced and (tokens[i].startswith("\u2581") or tokens[i] == "<0x20>") else t
                     for i, t in enumerate(texts))
        for last in (True, False):
            owner: dict[str, int] = {}
            for i, key in enumerate(keys):
                if last or key not in owner:
                    owner[key] = i
            kept = frozenset(owner.values())
            forms += [(keys, kept), (keys, kept - {eos})]  # (the EOS's entry taken out, as outlines does)
    return tuple(forms)


def table_by_text(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id's bytes from a table keyed by its text decoded alone: the ids that share a text keep
    one entry, so all but one of them have no bytes. The entry's bytes are its text's UTF-8. The
    forms: the last id kept or the first; a space put before a ``▁`` token's text or not (outlines
    adds one); the EOS's entry taken out of the table or not."""
    return [[keys[i].encode() if i in kept else b"" for i in ids] for keys, kept in _tables_by_text(ref)]


_PRINTED = frozenset(range(0x20, 0x7F)) | frozenset(b"\t\n\v\f\r")  # (C's isprint or isspace)


def unprintable_bytes_dropped_all(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text less each id whose bytes are one byte that is neither printable ASCII nor
    whitespace: llama2.c's ``safe_printf`` skips such a piece as a bad byte, so a character spelt
    with byte tokens loses them. The kept ids' bytes joined, or decoded; None where none is skipped."""
    pieces = bytes_of(ref, ids, asked)
    kept = [i for i, b in zip(ids, pieces) if not (len(b) == 1 and b[0] not in _PRINTED)]
    if len(kept) == len(ids):
        return [None, None]
    joined = b"".join(b for b in pieces if not (len(b) == 1 and b[0] not in _PRINTED))
    return [joined.decode("utf-8", "replace"), decoded(ref, kept, asked)]


def unprintable_bytes_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """``unprintable_bytes_dropped_all`` where a simpler cause does not give the same text: the bytes
    that are not UTF-8 left out, or control characters removed (a C string's NUL among them)."""
    simpler = {*invalid_bytes_dropped(ref, ids, prompt, asked), *control_characters_removed(ref, ids, prompt, asked),
               decoded(ref, ids, asked).replace("\x00", "")}
    return [None if form in simpler else form for form in unprintable_bytes_dropped_all(ref, ids, prompt, asked)]
