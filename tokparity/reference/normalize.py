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

import re
from typing import Any

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
        self.user_defined_texts = list(user_defined)
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
        # Faster path (``_normalize_translated``): those context-free characters as a
        # ``str.translate`` table, and the characters that must take the readable path.
        self._table: dict[int, str] = {}
        self._safe: set[str] = set()
        self._unsafe: set[str] = set()
        self._safe_pairs: set[tuple[str, str]] = set()

    def replaced(self, **changes) -> SpNormalizer:
        """A new normalizer with some settings changed (and fresh caches): what a diagnosis
        tries when it asks whether an engine normalizes differently."""
        settings: dict[str, Any] = {
            "add_space_prefix": self.add_space_prefix, "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "escape_whitespaces": self.escape_whitespaces, "treat_whitespace_as_suffix": self.treat_whitespace_as_suffix,
            "flavour": self.flavour, "charsmap": self.charsmap, "user_defined": self.user_defined_texts}
        settings.update(changes)
        charsmap, user_defined = settings.pop("charsmap"), settings.pop("user_defined")
        return SpNormalizer(charsmap, user_defined, **settings)

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
        fast = self._normalize_translated(text)
        return fast if fast is not None else self.normalize_plain(text)

    def normalize_plain(self, text: str) -> str:
        """The readable path: the input read one prefix at a time, as both originals do."""
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

    # -- the fast path ---------------------------------------------------------------------------
    #
    # Reading prefix by prefix is the same as replacing each character on its own
    # (``str.translate``) when no prefix match crosses a character boundary: no user-defined
    # piece starts with a character of the text, each character's own match is the whole
    # character, and where a character follows one that a charsmap key could go on from (only
    # the characters of ``CharsMap.continuation_chars``: "e" + U+0301 composes in nmt_nfkc),
    # the walk from the first stops inside the second (a pair check, cached per pair). The
    # whitespace rules then act on the translated text. They act per replacement string in the
    # originals, so a replacement holding two spaces in a row would be squeezed differently:
    # such a character is "unsafe", as is a text whose result would be empty (the originals'
    # early exits). Anything unsafe sends the whole text down the readable path; tests compare
    # the two paths on the corpora.

    def _classify(self, char: str) -> None:
        key = char.encode("utf-8", "surrogatepass")
        result = self.normalize_prefix(key, 0)
        if key[0] in self.user_first_bytes or result[1] != len(key) or b"  " in result[0]:
            self._unsafe.add(char)
            return
        replacement = result[0].decode("utf-8", "surrogatepass")
        if replacement != char:
            self._table[ord(char)] = replacement
        self._safe.add(char)

    def _pair_is_safe(self, first: str, second: str) -> bool:
        """Whether the charsmap walk from ``first`` stops inside ``second`` without a match
        beyond ``first``, so ``first`` normalizes as it does on its own."""
        assert self.charsmap is not None
        head = first.encode("utf-8", "surrogatepass")
        both = head + second.encode("utf-8", "surrogatepass")
        if self.charsmap.walk_reach(both) >= len(both):
            return False
        match = self.charsmap.longest_match(both)
        return match is None or match[0] <= len(head)

    def _pairs_are_safe(self, text: str, chars: set[str]) -> bool:
        if self.charsmap is None:
            return True
        continuations = self.charsmap.continuation_chars()
        if continuations is None:
            return False
        if continuations.isdisjoint(chars):
            return True
        for i in range(1, len(text)):
            if text[i] in continuations:
                pair = (text[i - 1], text[i])
                if pair not in self._safe_pairs:
                    if not self._pair_is_safe(*pair):
                        return False
                    self._safe_pairs.add(pair)
        return True

    def _normalize_translated(self, text: str) -> str | None:
        chars = set(text)
        if not self._unsafe.isdisjoint(chars):
            return None
        for char in chars - self._safe:
            self._classify(char)
            if char in self._unsafe:
                return None
        if not self._pairs_are_safe(text, chars):
            return None
        translated = text.translate(self._table)
        space = SPACE_MARK if self.escape_whitespaces else " "
        if self.flavour == "sentencepiece":
            return self._spaces_sentencepiece(translated, space)
        return self._spaces_llama(translated, space)

    def _spaces_sentencepiece(self, s: str, space: str) -> str | None:
        if self.remove_extra_whitespaces:
            s = _SPACE_RUN.sub(" ", s).lstrip(" ")
            if not s.strip(" "):
                return None  # nothing but spaces: the readable path's early exit decides
        elif not s:
            return None
        if self.escape_whitespaces:
            s = s.replace(" ", space)
        if self.add_space_prefix and not self.treat_whitespace_as_suffix:
            s = space + s
        if self.remove_extra_whitespaces:
            s = s.rstrip(space)  # SentencePiece strips escaped spaces, a literal "▁" among them
        if self.add_space_prefix and self.treat_whitespace_as_suffix:
            s += space
        return s

    def _spaces_llama(self, s: str, space: str) -> str:
        if self.remove_extra_whitespaces:
            # llama.cpp writes one space before every run of non-spaces and drops the spaces.
            words = [w for w in s.split(" ") if w]
            s = "".join(space + w for w in words)
        else:
            body = s.lstrip(" ")
            lead = space * (len(s) - len(body))
            if body and self.add_space_prefix and not self.treat_whitespace_as_suffix:
                lead += space  # the dummy prefix goes before the first non-space
            s = lead + body.replace(" ", space)
        if self.add_space_prefix and self.treat_whitespace_as_suffix:
            s += space
        return s


_SPACE_RUN = re.compile(" {2,}")
