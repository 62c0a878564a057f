"""SentencePiece-style normalizers: the ``precompiled_charsmap``, whitespace rules, dummy prefix.

The input is read one *prefix* at a time (``normalize_prefix``):

1. a user-defined piece that starts here is copied whole, untouched (so ``[toxicity=0]``
   survives normalization and can be matched as one token);
2. else the longest charsmap key that starts here is replaced by its replacement string
   (``ｱ`` -> ``ア``, ``ﬁ`` -> ``fi``, a tab -> a space in nmt_nfkc);
3. else one character is copied as it is.

Then spaces are handled as the flags say: ``remove_extra_whitespaces`` drops leading and
trailing spaces and squeezes runs to one; ``add_space_prefix`` (SentencePiece's
``add_dummy_prefix``) puts one space before the text (after it with
``treat_whitespace_as_suffix``); ``escape_whitespaces`` writes each space as ``▁``.

Two implementations of those rules exist and they differ, so both are here:

* ``flavour="sentencepiece"``: SentencePiece's ``Normalizer::Normalize``.
* ``flavour="llama.cpp"``: ``llm_tokenizer_ugm_session::normalize``. With
  ``remove_extra_whitespaces`` it writes one space before *every* run of non-spaces, so the
  first word gets its space even when ``add_space_prefix`` is off, where SentencePiece would
  not add one.

Worked example (no charsmap, all flags on)::

    "  Hello   world  " -> "▁Hello▁world"
"""

from __future__ import annotations

from tokparity.reference.charsmap import CharsMap

SPACE_MARK = "\u2581"  # ▁
_UTF8_LEN = [1] * 0xC0 + [2] * 0x20 + [3] * 0x10 + [4] * 0x10  # by lead byte (llama.cpp's table)
_UTF8_LEN[0x80:0xC0] = [1] * 0x40


def escape_spaces(text: str) -> str:
    """``"a b" -> "a▁b"``."""
    return text.replace(" ", SPACE_MARK)


class SpNormalizer:
    def __init__(self, charsmap: CharsMap | None, user_defined: list[str], *, add_space_prefix: bool,
                 remove_extra_whitespaces: bool, escape_whitespaces: bool, treat_whitespace_as_suffix: bool,
                 flavour: str):
        if flavour not in ("sentencepiece", "llama.cpp"):
            raise ValueError(flavour)
        self.charsmap = charsmap
        self.user_defined = sorted({u.encode("utf-8", "surrogateescape") for u in user_defined if u},
                                   key=len, reverse=True)
        self.user_first_bytes = {u[0] for u in self.user_defined}
        self.add_space_prefix = add_space_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.flavour = flavour
        self.space = SPACE_MARK.encode() if escape_whitespaces else b" "
        # Fast path: the normalization of one character that no longer key and no
        # user-defined piece can start with does not depend on what follows; cache it.
        self._char_cache: dict[bytes, tuple[bytes, int] | None] = {}

    # -- one prefix ----------------------------------------------------------------------------

    def normalize_prefix(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """(replacement, bytes consumed) for the input starting at ``pos`` (readable path)."""
        for piece in self.user_defined:
            if data.startswith(piece, pos):
                return piece, len(piece)
        if self.charsmap is not None:
            match = self.charsmap.longest_match(data, pos)
            if match is not None:
                return match[1], match[0]
        n = min(_UTF8_LEN[data[pos]], len(data) - pos)
        return data[pos:pos + n], n

    def _prefix_fast(self, data: bytes, pos: int) -> tuple[bytes, int]:
        n = _UTF8_LEN[data[pos]]
        key = data[pos:pos + n]
        hit = self._char_cache.get(key)
        if hit is not None:
            return hit
        result = self.normalize_prefix(data, pos)
        if key not in self._char_cache:
            self._char_cache[key] = result if self._context_free(key, result) else None
        return result

    def _context_free(self, key: bytes, result: tuple[bytes, int]) -> bool:
        """Whether ``key`` normalizes the same whatever follows it: no user-defined piece
        starts with its first byte, and the charsmap walk cannot go past it."""
        if key[0] in self.user_first_bytes or result[1] != len(key):
            return False
        if self.charsmap is None:
            return True
        return not self.charsmap.can_extend(key)

    # -- whole text ----------------------------------------------------------------------------

    def normalize(self, text: str) -> str:
        data = text.encode("utf-8", "surrogatepass")
        if self.flavour == "sentencepiece":
            out = self._normalize_sentencepiece(data)
        else:
            out = self._normalize_llama(data)
        return out.decode("utf-8", "surrogatepass")

    def _normalize_llama(self, data: bytes) -> bytes:
        space = self.space
        prepend = self.add_space_prefix and not self.treat_whitespace_as_suffix
        append = self.add_space_prefix and self.treat_whitespace_as_suffix
        merge = self.remove_extra_whitespaces
        out = bytearray()
        prepended = False
        in_word = False  # llama.cpp's processing_non_ws
        pos = 0
        while pos < len(data):
            chunk, consumed = self._prefix_fast(data, pos)
            if in_word and b" " not in chunk:
                out += chunk  # common case: the middle of a word
            else:
                for c in chunk:
                    if c != 0x20:
                        if not in_word:
                            in_word = True
                            if (prepend and not prepended) or merge:
                                out += space
                                prepended = True
                        out.append(c)
                    else:
                        in_word = False
                        if not merge:
                            out += space
            pos += consumed
        if append:
            out += space
        return bytes(out)

    def _normalize_sentencepiece(self, data: bytes) -> bytes:
        space = self.space
        pos = 0
        if self.remove_extra_whitespaces:  # drop leading spaces
            while pos < len(data):
                chunk, consumed = self._prefix_fast(data, pos)
                if chunk != b" ":
                    break
                pos += consumed
        if pos >= len(data):
            return b""
        out = bytearray()
        if not self.treat_whitespace_as_suffix and self.add_space_prefix:
            out += space
        prev_space = self.remove_extra_whitespaces
        while pos < len(data):
            chunk, consumed = self._prefix_fast(data, pos)
            if prev_space:
                chunk = chunk.lstrip(b" ")
            if chunk:
                out += chunk.replace(b" ", space) if self.escape_whitespaces else chunk
                prev_space = chunk.endswith(b" ")
            pos += consumed
            if not self.remove_extra_whitespaces:
                prev_space = False
        if self.remove_extra_whitespaces:  # drop trailing spaces
            while out.endswith(space):
                del out[len(out) - len(space):]
        if self.treat_whitespace_as_suffix and self.add_space_prefix:
            out += space
        return bytes(out)
