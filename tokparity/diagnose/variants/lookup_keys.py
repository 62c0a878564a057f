"""Imitations of the lookup tables of two JavaScript engines: byte strings packed into integer
keys that lose trailing NULs, and keys decoded by ``TextDecoder`` (a leading BOM dropped)."""

from __future__ import annotations

from tokparity.vocab.model import Vocab
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte

LOOKUP_LEVEL = 6  # bytes a key packs (two 24-bit integers) before it nests another level


def packed_key(spelled: str) -> tuple[str, str]:
    """A byte-level token's key where its bytes are packed into integers a level at a time and a
    short last level is padded with zero bytes: trailing NUL bytes ('Ā' spelled) of that level
    are lost (one character of the spelling is one byte)."""
    cut = len(spelled) - len(spelled) % LOOKUP_LEVEL
    return spelled[:cut], spelled[cut:].rstrip("\u0100")


class PackedRanks:
    """{packed key: id} of a vocabulary, filled in id order (a later id takes a key over), made on
    first use: a diagnosis needs it only for a text with a NUL in it. Every lookup, the whole
    piece's included, goes through the key (``HfBpe.keyed``)."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.ranks: dict[tuple[str, str], int] | None = None

    def rank(self, part: str) -> int | None:
        if self.ranks is None:
            self.ranks = {packed_key(t): i for i, t in enumerate(self.vocab.tokens) if t}
        return self.ranks.get(packed_key(part))

    whole = rank


BOM = "\u00ef\u00bb\u00bf"  # U+FEFF's UTF-8 bytes, EF BB BF, as a byte-level token spells them


class DecodedRanks:
    """A rank map of two tables, as ai-tokenizer generates one: a token whose bytes decode to
    text that encodes back to them, keyed by that text; every other token (bytes that are not
    UTF-8, and those that start with a BOM, which a decoder drops) by its bytes. A whole piece is
    looked up as text, so a token that starts with a BOM is never found whole. A byte string of
    the merge that is UTF-8 is decoded first, its leading BOM dropped (TextDecoder's default), and
    looked up as text; only where that text is no token, by its bytes: EF BB BF + 'b' ranks, and
    at the end reads, as 'b'."""

    def __init__(self, ids: dict[str, int]):
        self.ids = ids  # the model's tokens (the rank map holds no special token)

    def whole(self, word: str) -> int | None:
        return None if word.startswith(BOM) else self.ids.get(word)

    def rank(self, part: str) -> int | None:
        if part.startswith(BOM):
            text = part[len(BOM):]
            found = self.ids.get(text) if text and not text.startswith(BOM) else None
            if found is not None and _is_utf8(text):
                return found
        return self.ids.get(part)


def _is_utf8(spelled: str) -> bool:
    """Whether a byte-level spelling's bytes are UTF-8 (as strict as Python's decoder and
    ai-tokenizer's isValidUTF8: no surrogates, no overlong forms)."""
    table = gpt2_unicode_to_byte()
    try:
        bytes(table[ch] for ch in spelled).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return False
    return True
