"""A deliberately buggy byte-level BPE engine (GPT-2 / Llama 3 style) over a tokenizer.json.

Written for tokparity's test suite from bug descriptions only (see README.md beside it).

    python byte_bpe.py tokenizer.json [--digits-unbounded] [--unicode-3.2] [--always-parse-special]
                       [--newline-run-stops] [--tab-prefixes-punct] [--ascii-word-prefix]
                       [--space-joins-number] [--split-mixed-trailing-space] [--backtracking]

It speaks tokparity's ``cmd:`` protocol: one JSON request per line on stdin, one JSON reply per
line on stdout, in order, flushed after each.

With no flag it is meant to be right. What it does, in the order the text goes through it:

1. **Added tokens.** The text is cut at every added token's text (the leftmost match, the longest
   one there). Tokens marked ``special`` are cut out only when the request says
   ``parse_special``; the others always (Hugging Face's and llama.cpp's rule for non-special
   added tokens). The ``lstrip`` / ``rstrip`` / ``single_word`` / ``normalized`` options of an
   added token are not implemented (they are all false in Llama 3's file).
2. **Split.** Each stretch between added tokens is split into pre-tokens by the pre-tokenizer's
   ``Split`` regex. For Llama 3's pattern the split is this file's own hand-written scanner
   (``split_llama3``), which reads the character classes from ``CharClasses``; for any other
   pattern it is the ``regex`` module on the file's pattern (and the split bugs are refused).
3. **Bytes.** Each pre-token's UTF-8 bytes are spelled with GPT-2's byte-to-unicode alphabet
   (``bytes_to_unicode``), with a space in front when the ByteLevel step says
   ``add_prefix_space``.
4. **Merges.** If the model sets ``ignore_merges`` and the whole pre-token is a vocabulary
   entry, that entry is the answer. Otherwise the pre-token starts as one symbol per byte and
   the adjacent pair of lowest merge rank is merged, the leftmost of equal ranks first, until
   no pair has a rank (Hugging Face's order, with a heap). ``--backtracking`` replaces this step.
5. ``add_special`` adds what the post-processor's ``TemplateProcessing`` ``single`` template
   adds around the text (nothing for a ByteLevel post-processor, as in the zoo's Llama 3 file).

The flags (each one a bug an engine writer's own splitter or token matcher could have)
------------------------------------------------------------------------------------------
``--digits-unbounded``
    The split keeps a whole run of digits together (``\\p{N}+``) where the file's regex takes at
    most three at a time (``\\p{N}{1,3}``). GPT-2's pattern had ``\\p{N}+``; a splitter written
    from GPT-2's and reused for Llama 3, or one whose regex engine has no ``{m,n}``, gets this.
    ``12345`` then becomes one pre-token (and ids that exist only as smaller pieces) instead of
    ``123`` ``45``.
``--unicode-3.2``
    What ``\\p{L}`` (letter), ``\\p{N}`` (number) and ``\\s`` (whitespace) mean is read from the
    Unicode 3.2 tables (Python's ``unicodedata.ucd_3_2_0``), as an engine with character tables
    generated long ago would. Code points unassigned in 3.2 (scripts added since, such as N'Ko
    or Tifinagh, and newer letters of old scripts) are then neither letters nor numbers but
    "other", and characters whose category changed since are classed as they were in 2002:
    U+200B ZERO WIDTH SPACE was a space separator (Zs), so it counts as whitespace.
``--always-parse-special``
    Special added-token text in the input (``<|begin_of_text|>``) is always matched as that
    token, even when the request says ``parse_special`` false. A writer who builds one matcher
    of every added token (as Hugging Face ``tokenizers`` does by default) and never looks at
    the flag has this bug: a user can then inject control tokens through plain text.

The next three are the bugs of a fast hand-written scanner that picks its rule by the first
character of each piece (a ``switch`` on it) instead of trying the alternatives in order with
backtracking, and the last two those of a scanner that decides a run of whitespace by what comes
around it. Any of the nine flags may be given together; each changes only what it says.

``--newline-run-stops``
    A piece that starts with a line break (``\\n`` or ``\\r``) takes only the line breaks that
    directly follow it: the scanner's "line break" case loops ``while c in "\\r\\n"``, where the
    regex's ``\\s*[\\r\\n]+`` takes every whitespace character up to the last line break of the
    run. Spaces and tabs between line breaks then start a piece of their own: ``"\\n \\n"`` gives
    ``"\\n"`` ``" \\n"`` (the regex: ``"\\n \\n"``), ``"x\\n  \\ny"`` gives ``"x"`` ``"\\n"``
    ``"  \\n"`` ``"y"``. A run that starts with a space, a tab or any other whitespace goes
    through the whitespace case, which is right (``" \\n \\n"`` stays one piece); so does a line
    break followed by spaces and no later line break (``"\\n  x"``: ``"\\n"`` ``" "`` ``" x"``
    either way).
``--tab-prefixes-punct``
    The scanner's case for a space is shared with the tab (``case ' ': case '\\t':``), so a tab
    directly before punctuation is taken into the punctuation piece as the optional space of
    `` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*`` is, as if that ``␣?`` were ``[ \\t]?``. ``'\\t"fmt'`` gives
    ``'\\t"'`` ``'fmt'`` (the regex: ``'\\t'`` ``'"fmt'``: the tab is a piece of its own and the
    quote goes in front of the word). Tab-indented code and TSV are where it shows. A tab before
    letters is unchanged: the word's rule takes it, as the regex does.
``--ascii-word-prefix``
    The one non-letter character the regex allows in front of a word (``[^\\r\\n\\p{L}\\p{N}]?``)
    may be whitespace only when it is ASCII (a space, a tab, VT, FF). The scanner dispatches an
    ASCII first character through a 128-entry table, where a space or a tab is "a word's prefix
    if a letter follows, else whitespace", and any other character through the Unicode tables,
    where a whitespace character goes straight to the whitespace case: the writer had punctuation
    and symbols in mind as the non-ASCII prefixes of a word (``«word``), not U+00A0 NO-BREAK
    SPACE, U+0085 NEXT LINE, U+2002 EN SPACE, U+3000 IDEOGRAPHIC SPACE, .... ``"a\\u00a0b"``
    gives ``"a"`` ``"\\u00a0"`` ``"b"`` (the regex: ``"a"`` ``"\\u00a0b"``). Non-ASCII
    punctuation or symbols in front of a word are unchanged (``"«word"`` stays one piece), and
    the whitespace case itself is the regex's (``"  \\u00a0b"`` gives ``"  "`` first, leaving the
    last space to the word's case, which now refuses it: ``"\\u00a0"`` ``"b"``).
``--space-joins-number``
    A number that is not an ASCII digit (general category N but not ``0``-``9``: ``½``, ``①``,
    ``Ⅻ``, ``૧``, ``𝟎`` ...) takes the one whitespace character (not a line break) right before
    it, as a word takes its leading space, when that whitespace ends a run of one repeated
    character with no line break in it (``" "``, ``"   "``, ``"\\t\\t"``) and the character right
    before the run is alphabetic (the Unicode Alphabetic property: the letters, letter numbers
    and the marks and symbols Unicode counts as alphabetic, such as U+0345 or ``Ⓐ``) or a number
    (N*). Only that last whitespace character moves; the number piece is otherwise Llama 3's
    (``\\p{N}{1,3}`` from the number on). ``"a ½"`` gives ``"a"`` ``" ½"`` (the regex: ``"a"``
    ``" "`` ``"½"``: ``\\p{N}`` takes no leading space), ``"a  ½"`` gives ``"a"`` ``" "``
    ``" ½"``, ``"a\\t\\t½"`` gives ``"a"`` ``"\\t"`` ``"\\t½"``, ``"½ ¼"`` gives ``"½"`` ``" ¼"``.
    Unchanged: an ASCII digit (``"a 1"``), punctuation before the space (``"! ½"``), nothing
    before it (``" ½"`` at the start of the text, or of a stretch after an added token), a line
    break before the run (``"a\\n ½"`` stays ``"a"`` ``"\\n"`` ``" "`` ``"½"``: the line break
    stops the look-back and is not a letter or number), a run that mixes characters
    (``"a \\t½"`` stays ``"a"`` ``" "`` ``"\\t"`` ``"½"``, ``"a \\u00a0½"`` stays ``"a"`` ``" "``
    ``"\\u00a0"`` ``"½"``: the scanner cuts a mixed run before its last character first, and that
    character's neighbour is then whitespace, not a letter).
    The writer's scanner handles "a space before a word" and "a space before a non-ASCII number"
    with the same code path: a space between two alphanumeric runs (``is_alphanumeric`` on both
    sides) is given to what follows, which is right for a word and wrong for a number; ASCII
    digits have a fast path of their own and never get there.
``--split-mixed-trailing-space``
    The run of whitespace characters other than line breaks at the very end of the text (after
    its last line break, if it has one; the end of a stretch before an added token counts too),
    when made of more than one distinct character (``" \\t"``, ``"\\t "``, ``" \\u00a0"``,
    ``"  \\t\\t"``, ``"\\u00a0 \\u00a0"``), leaves its last character as a piece of its own:
    ``" \\t"`` gives ``" "`` ``"\\t"`` (the regex: one piece, ``\\s+(?!\\S)`` at the end of the
    text takes the whole run), ``"  \\t\\t"`` gives ``"  \\t"`` ``"\\t"``, ``"a\\t "`` gives
    ``"a"`` ``"\\t"`` ``" "``, ``"a\\n \\t"`` gives ``"a"`` ``"\\n"`` ``" "`` ``"\\t"``. A run of one
    repeated character (``"   "``, ``"\\t\\t"``, ``"\\u00a0\\u00a0"``) stays one piece, as the
    regex has it. The writer's scanner cuts a run of mixed whitespace into single characters and
    glues them back as it would before a following word (all but the last one together, the last
    one left to the word), forgetting that at the end of the text no word follows; a run of one
    repeated character goes through a faster path that keeps it whole.

The last flag is not the split's but the encoder's (it works with any split pattern):

``--backtracking``
    Each pre-token is encoded not by the merges but by the backtracking encoder of GitHub's
    ``bpe`` crate (github/rust-gems, ``crates/bpe``: ``encode_via_backtracking``, ported in
    ``BacktrackingBPE``), with the ids of ``model.vocab`` as the ranks: the ``merges`` list is
    not read (added tokens are not part of that vocabulary and are cut out as before). The crate
    rebuilds the merges from the ranks alone: a token's split is its first prefix token (longest
    first) whose rest is a token, both ranked before it, that form a valid pair; a token with
    none is a base token. It then encodes by taking the longest token at each position, backing
    off to shorter prefix tokens when a pair across the boundary is not one BPE would leave
    (``is_valid_token_pair``), and backtracking where nothing fits. That is BPE exactly when
    every token BPE-encodes to itself under those ranks, true of OpenAI's tiktoken vocabularies
    it was written for, which is why fast Rust and C++ tokenizers port it (linear time, tiktoken's
    ids). Llama 3's vocabulary is cl100k with 28k tokens added after it, and 588 of those added
    tokens do not encode to themselves (``" každ"``, 103870, is one: the merges never make it,
    and the crate finds no split for it, so it counts as a base token). ``" každou"`` gives
    ``" každ"`` ``"ou"`` [103870, 283] (the merges: ``" ka"`` ``"ž"`` ``"dou"`` [16909, 12453,
    114541]); ``" çıktık"``, ``" градусов"``, ``" радиле"`` change too. A pre-token that is
    one whole token is unchanged (the encoder takes the longest match first and keeps it), and
    so is most text, English nearly always. The crate itself refuses such a vocabulary (its
    ``from_dictionary`` ends by asserting that every token encodes to itself); a port that
    leaves the check out gives these ids.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
import unicodedata

# The Llama 3 pre-tokenizer pattern, as tokenizer.json spells it; split_llama3 implements it.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's alphabet: printable Latin-1 bytes stand for themselves, the other 68 bytes are
    moved to U+0100 and up, in byte order (so the space 0x20 is 'Ġ', the newline 0x0A 'Ċ')."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    moved = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + moved)
            moved += 1
    return table


# -------------------------------------------------------------------------------------------------
# Character classes and the hand-written split


class CharClasses:
    """``\\p{L}``, ``\\p{N}`` and ``\\s`` from one version of the Unicode Character Database.

    Letters are the general categories L*, numbers N*; whitespace is the White_Space property,
    which is (in every version) the separators Z* plus TAB, LF, VT, FF, CR and NEL. Only the
    categories come from the tables, so the version decides all three.
    """

    CONTROLS_THAT_ARE_SPACE = frozenset("\t\n\x0b\x0c\r\x85")

    def __init__(self, ucd=unicodedata):
        self.ucd = ucd
        self._memo: dict[str, str] = {}

    def _kind(self, c: str) -> str:
        """'L', 'N', 'S' (whitespace) or 'O' (anything else)."""
        kind = self._memo.get(c)
        if kind is None:
            cat = self.ucd.category(c)
            if c in self.CONTROLS_THAT_ARE_SPACE or cat[0] == "Z":
                kind = "S"
            elif cat[0] in "LN":
                kind = cat[0]
            else:  # includes Cn: a code point the tables do not assign
                kind = "O"
            self._memo[c] = kind
        return kind

    def letter(self, c: str) -> bool:
        return self._kind(c) == "L"

    def number(self, c: str) -> bool:
        return self._kind(c) == "N"

    def space(self, c: str) -> bool:
        return self._kind(c) == "S"

    def other(self, c: str) -> bool:  # [^\s\p{L}\p{N}]
        return self._kind(c) == "O"


# (?i:'s|'t|'re|'ve|'m|'ll|'d): the letters each may be written with under simple case folding
# (the regex module also folds U+017F LATIN SMALL LETTER LONG S to s).
_FOLD = {"s": "sSſ", "t": "tT", "r": "rR", "e": "eE", "v": "vV", "m": "mM", "l": "lL", "d": "dD"}
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")


def _contraction(text: str, i: int) -> int:
    """Length of the contraction alternative matched at text[i] (an apostrophe), or 0."""
    for suffix in _CONTRACTIONS:
        end = i + 1 + len(suffix)
        if end <= len(text) and all(text[i + 1 + k] in _FOLD[ch] for k, ch in enumerate(suffix)):
            return end - i
    return 0


_ALPHABETIC = None  # the regex module's \p{Alphabetic}, compiled when --space-joins-number needs it


def _alphanumeric(c: str, cc: CharClasses) -> bool:
    """Unicode's Alphabetic property, or a number (N*): the test of --space-joins-number."""
    global _ALPHABETIC
    if cc.letter(c) or cc.number(c):
        return True
    if _ALPHABETIC is None:
        import regex
        _ALPHABETIC = regex.compile(r"\p{Alphabetic}")
    return _ALPHABETIC.match(c) is not None


def split_llama3(text: str, cc: CharClasses, max_digits: int | None = 3, *,
                 newline_run_stops: bool = False, tab_prefixes_punct: bool = False,
                 ascii_word_prefix: bool = False, space_joins_number: bool = False,
                 split_mixed_trailing_space: bool = False) -> list[str]:
    """Llama 3's pre-tokenizer regex, alternative by alternative, as the regex engine would try
    them at each position (first alternative that matches wins, each with its backtracking):

        (?i:'s|'t|'re|'ve|'m|'ll|'d)      contractions
        [^\\r\\n\\p{L}\\p{N}]?\\p{L}+          a word, with one leading non-letter (a space, a quote)
        \\p{N}{1,3}                         up to three digits (max_digits; None: any number)
        ␣?[^\\s\\p{L}\\p{N}]+[\\r\\n]*          punctuation, with one leading space, trailing newlines
        \\s*[\\r\\n]+                         whitespace up to its last newline
        \\s+(?!\\S)                          whitespace but the last one before a non-space
        \\s+                                any whitespace left

    The keyword flags are the bugs ``--newline-run-stops``, ``--tab-prefixes-punct``,
    ``--ascii-word-prefix``, ``--space-joins-number`` and ``--split-mixed-trailing-space`` (the
    module docstring says what each does); all false, the split is the regex's.
    """
    out: list[str] = []
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        # 'll, 'VE, ...
        if c == "'":
            m = _contraction(text, i)
            if m:
                out.append(text[i:i + m])
                i += m
                continue
        # [^\r\n\p{L}\p{N}]?\p{L}+
        j = i
        if (i + 1 < n and c not in "\r\n" and not cc.letter(c) and not cc.number(c)
                and cc.letter(text[i + 1])
                and not (ascii_word_prefix and c > "\x7f" and cc.space(c))):  # the bug: ASCII only
            j = i + 1
        if cc.letter(text[j]):
            k = j + 1
            while k < n and cc.letter(text[k]):
                k += 1
            out.append(text[i:k])
            i = k
            continue
        # \p{N}{1,3}
        if cc.number(c):
            k = i + 1
            while k < n and cc.number(text[k]) and (max_digits is None or k - i < max_digits):
                k += 1
            out.append(text[i:k])
            i = k
            continue
        # ␣?[^\s\p{L}\p{N}]+[\r\n]*
        lead = " \t" if tab_prefixes_punct else " "  # the bug: the tab shares the space's rule
        j = i + 1 if c in lead and i + 1 < n and cc.other(text[i + 1]) else i
        if cc.other(text[j]):
            k = j + 1
            while k < n and cc.other(text[k]):
                k += 1
            while k < n and text[k] in "\r\n":
                k += 1
            out.append(text[i:k])
            i = k
            continue
        # the three whitespace alternatives; c is whitespace here
        if newline_run_stops and c in "\r\n":  # the bug: a line break takes only line breaks
            k = i + 1
            while k < n and text[k] in "\r\n":
                k += 1
            out.append(text[i:k])
            i = k
            continue
        if (space_joins_number and c not in "\r\n" and i + 1 < n  # the bug: a word's leading space
                and cc.number(text[i + 1]) and text[i + 1] not in "0123456789"):
            b = i - 1
            while b >= 0 and text[b] == c:  # the run: one repeated character, no line break
                b -= 1
            if b >= 0 and _alphanumeric(text[b], cc):  # a mixed run or a line break: nothing moves
                k = i + 2
                while k < n and cc.number(text[k]) and (max_digits is None or k - i - 1 < max_digits):
                    k += 1
                out.append(text[i:k])
                i = k
                continue
        end = i + 1
        while end < n and cc.space(text[end]):
            end += 1
        last_newline = max((k for k in range(i, end) if text[k] in "\r\n"), default=-1)
        if last_newline >= 0:             # \s*[\r\n]+
            k = last_newline + 1
        elif end == n:                    # \s+(?!\S) at the end of the text
            k = end
            if split_mixed_trailing_space and len(set(text[i:end])) > 1:
                k = end - 1               # the bug: the last one left for a word that never comes
        elif end - i >= 2:                # \s+(?!\S): leave the last space to the next word
            k = end - 1
        else:                             # \s+
            k = end
        out.append(text[i:k])
        i = k
    return out


# -------------------------------------------------------------------------------------------------
# GitHub's bpe crate's backtracking encoder (--backtracking)


class BacktrackingBPE:
    """``encode_via_backtracking`` of GitHub's ``bpe`` crate (github/rust-gems, crates/bpe), over a
    list of tokens' bytes whose index is the token's rank.

    A port of ``BytePairEncoding::from_dictionary`` (the tables ``next_prefix_match``,
    ``split_table`` and ``pair_lookup``), of ``is_valid_token_pair`` (byte_pair_encoding.rs) and
    of ``BacktrackEncoder::step`` with its ``BitField`` (backtrack_encoder.rs, bitfield.rs). The
    crate's Aho-Corasick automaton (leftmost-longest) is a dict here: every prefix of a token maps
    to the longest token that is a prefix of it. The crate's check that every token encodes to
    itself (an ``assert_eq!`` at the end of ``from_dictionary``) is not made: it fails on Llama 3's
    vocabulary, and a port that runs anyway gives the ids described in the module docstring.
    """

    def __init__(self, tokens: list[bytes | None]):
        self.tokens = tokens
        self.by_bytes = {b: i for i, b in enumerate(tokens) if b is not None}
        missing = [b for b in range(256) if bytes([b]) not in self.by_bytes]
        if missing:
            raise SystemExit(f"byte_bpe.py: --backtracking needs a token for every byte; {len(missing)} "
                             f"bytes have none (the first: {missing[0]:#04x})")
        # longest[p]: the longest token that is a prefix of p, for every prefix p of a token. It
        # answers the crate's next_match (leftmost-longest search) where the text starts.
        longest: dict[bytes, int] = {}
        by_bytes = self.by_bytes
        for tok in tokens:
            if tok is None:
                continue
            cur = None
            for k in range(1, len(tok) + 1):
                p = tok[:k]
                cur = by_bytes.get(p, cur)
                if p not in longest:
                    longest[p] = cur
        self.longest = longest
        # next_prefix_match: next_match on the token without its last byte
        self.next_prefix_match: list[int | None] = [
            longest[tok[:-1]] if tok is not None and len(tok) > 1 else None for tok in tokens]
        # the split table and the pair lookup, "reverse engineered" in rank order
        self.split_table: list[tuple[int, int]] = []
        self.pair_lookup: dict[tuple[int, int], int] = {}
        npm = self.next_prefix_match
        for id_, tok in enumerate(tokens):
            token1 = npm[id_]
            while token1 is not None:
                token2 = by_bytes.get(tok[len(tokens[token1]):])
                if (token2 is not None and token1 < id_ and token2 < id_
                        and self.is_valid_token_pair(token1, token2)):
                    self.pair_lookup[(token1, token2)] = id_
                    self.split_table.append((token1, token2))
                    break
                token1 = npm[token1]
            if token1 is None:
                self.split_table.append((id_, id_))

    def is_valid_token_pair(self, token1: int, token2: int) -> bool:
        """Whether BPE could have left ``token1`` ``token2`` side by side: no pair across the
        boundary, in the merges that made the two, merges before what made them (the crate's
        loop, literally)."""
        pair_lookup, split_table = self.pair_lookup, self.split_table
        limit = 0xFFFFFFFF  # u32::MAX
        while True:
            combined = pair_lookup.get((token1, token2))
            if combined is not None and combined < limit:
                return False
            if token1 > token2:
                limit = token1
                token1 = split_table[token1][1]
                if token1 == limit:
                    limit = token2 + 1
                    token2 = split_table[token2][0]
                    if token2 + 1 == limit:
                        return True
            else:
                limit = token2 + 1
                token2 = split_table[token2][0]
                if token2 + 1 == limit:
                    limit = token1
                    token1 = split_table[token1][1]
                    if token1 == limit:
                        return True

    def next_match(self, text: bytes, pos: int) -> int | None:
        """The longest token that text[pos:] starts with (every byte is a token)."""
        longest = self.longest
        best = None
        end = pos + 1
        while end <= len(text):
            t = longest.get(text[pos:end], -1)
            if t == -1:
                break
            best = t
            end += 1
        return best

    def encode(self, text: bytes) -> list[int]:
        """encode_via_backtracking: BacktrackEncoder::step until it returns None."""
        tokens: list[int] = []
        pos = 0
        bitfield = bytearray(b"\x01") * (len(text) + 1)  # BitField::new: all set
        next_token = self.next_match(text, 0)
        while next_token is not None:
            token = next_token
            last = tokens[-1] if tokens else None
            while True:
                end_pos = pos + len(self.tokens[token])
                if bitfield[end_pos] and (last is None or self.is_valid_token_pair(last, token)):
                    tokens.append(token)
                    pos = end_pos
                    next_token = self.next_match(text, end_pos)
                    break
                shorter = self.next_prefix_match[token]
                if shorter is not None:
                    token = shorter
                else:
                    bitfield[pos] = 0
                    if tokens:
                        tokens.pop()
                    pos -= len(self.tokens[last]) if last is not None else 0
                    next_token = last
                    break
        return tokens


# -------------------------------------------------------------------------------------------------
# The engine


class ByteBPE:
    def __init__(self, path: str, digits_unbounded: bool = False, unicode_32: bool = False,
                 always_parse_special: bool = False, newline_run_stops: bool = False,
                 tab_prefixes_punct: bool = False, ascii_word_prefix: bool = False,
                 space_joins_number: bool = False, split_mixed_trailing_space: bool = False,
                 backtracking: bool = False):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec["model"]
        if model.get("type", "BPE") != "BPE":
            raise SystemExit(f"byte_bpe.py: {path}: model type {model.get('type')!r} is not BPE")
        if spec.get("normalizer"):
            raise SystemExit(f"byte_bpe.py: {path}: a normalizer ({spec['normalizer'].get('type')}) "
                             "is not implemented")
        self.vocab: dict[str, int] = model["vocab"]
        self.ranks: dict[tuple[str, str], int] = {}
        for rank, merge in enumerate(model["merges"]):
            pair = tuple(merge.split(" ", 1)) if isinstance(merge, str) else tuple(merge)
            self.ranks.setdefault(pair, rank)
        self.ignore_merges = bool(model.get("ignore_merges"))
        self.byte_chars = bytes_to_unicode()
        self.char_bytes = {ch: b for b, ch in self.byte_chars.items()}

        self.added = {t["content"]: t["id"] for t in spec.get("added_tokens", [])}
        self.special = {t["content"] for t in spec.get("added_tokens", []) if t.get("special")}
        self.always_parse_special = always_parse_special
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.id_to_token.update({i: t for t, i in self.added.items()})

        self.pattern, self.prefix_space = self._pre_tokenizer(spec.get("pre_tokenizer"))
        self.classes = CharClasses(unicodedata.ucd_3_2_0 if unicode_32 else unicodedata)
        self.max_digits = None if digits_unbounded else 3
        self.scan_bugs = {"newline_run_stops": newline_run_stops, "tab_prefixes_punct": tab_prefixes_punct,
                          "ascii_word_prefix": ascii_word_prefix, "space_joins_number": space_joins_number,
                          "split_mixed_trailing_space": split_mixed_trailing_space}
        if self.pattern is not None and self.pattern != LLAMA3_PATTERN:
            if digits_unbounded or unicode_32 or any(self.scan_bugs.values()):
                raise SystemExit("byte_bpe.py: --digits-unbounded, --unicode-3.2, --newline-run-stops, "
                                 "--tab-prefixes-punct, --ascii-word-prefix, --space-joins-number and "
                                 "--split-mixed-trailing-space change the hand-written Llama 3 split; "
                                 "this file's pattern is another one")
            import regex  # the library's regex, for patterns this engine has no scanner for
            self._regex = regex.compile(self.pattern)
        self.template = self._template(spec.get("post_processor"))
        self._cache: dict[str, list[int]] = {}
        self.backtracking = backtracking
        self._backtracker: BacktrackingBPE | None = None  # built at the first word that needs it

    def _backtracking_tables(self) -> BacktrackingBPE:
        """The bpe crate's tables over model.vocab, a token's rank its id (added tokens are not
        in it, and the merges are not read)."""
        if self._backtracker is None:
            tokens: list[bytes | None] = [None] * (max(self.vocab.values(), default=-1) + 1)
            for token, i in self.vocab.items():
                tokens[i] = bytes(self.char_bytes[ch] for ch in token)
            self._backtracker = BacktrackingBPE(tokens)
        return self._backtracker

    @staticmethod
    def _pre_tokenizer(pre) -> tuple[str | None, bool]:
        """(the Split regex or None, ByteLevel's add_prefix_space) from the pre_tokenizer."""
        steps = pre.get("pretokenizers", []) if pre and pre.get("type") == "Sequence" else [pre] if pre else []
        pattern, prefix = None, False
        for step in steps:
            kind = step.get("type")
            if kind == "Split":
                if step.get("behavior") != "Isolated" or step.get("invert"):
                    raise SystemExit("byte_bpe.py: only an Isolated, non-inverted Split is implemented")
                pattern = step["pattern"].get("Regex") or __import__("re").escape(step["pattern"]["String"])
            elif kind == "ByteLevel":
                prefix = bool(step.get("add_prefix_space"))
                if step.get("use_regex", True):
                    raise SystemExit("byte_bpe.py: ByteLevel's own GPT-2 regex is not implemented")
            else:
                raise SystemExit(f"byte_bpe.py: pre-tokenizer {kind} is not implemented")
        return pattern, prefix

    def _template(self, post) -> tuple[list[int], list[int]]:
        """The ids TemplateProcessing's single template puts before and after the text."""
        if post and post.get("type") == "Sequence":
            post = next((p for p in post.get("processors", []) if p.get("type") == "TemplateProcessing"), None)
        if not post or post.get("type") != "TemplateProcessing":
            return [], []
        before, after, seen_text = [], [], False
        for item in post["single"]:
            if "Sequence" in item:
                seen_text = True
            else:
                ids = post["special_tokens"][item["SpecialToken"]["id"]]["ids"]
                (after if seen_text else before).extend(ids)
        return before, after

    # -- encoding --------------------------------------------------------------------------------

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        ids = list(self.template[0]) if add_special else []
        for chunk, token_id in self._split_added(text, parse_special or self.always_parse_special):
            if token_id is not None:
                ids.append(token_id)
                continue
            for word in self._split(chunk):
                if self.prefix_space and not word.startswith(" "):
                    word = " " + word
                ids.extend(self._word(word))
        if add_special:
            ids.extend(self.template[1])
        return ids

    def _split_added(self, text: str, parse_special: bool):
        """Yield (text, None) and (token text, id) for each added token cut out of the text."""
        tokens = {t: i for t, i in self.added.items() if parse_special or t not in self.special}
        if not tokens:
            if text:
                yield text, None
            return
        by_first: dict[str, list[str]] = {}
        for t in sorted(tokens, key=len, reverse=True):
            if t:
                by_first.setdefault(t[0], []).append(t)
        start = pos = 0
        while pos < len(text):
            for t in by_first.get(text[pos], ()):
                if text.startswith(t, pos):
                    if start < pos:
                        yield text[start:pos], None
                    yield t, tokens[t]
                    pos += len(t)
                    start = pos
                    break
            else:
                pos += 1
        if start < len(text):
            yield text[start:], None

    def _split(self, text: str) -> list[str]:
        if not text:
            return []
        if self.pattern is None:
            return [text]
        if self.pattern == LLAMA3_PATTERN:
            return split_llama3(text, self.classes, self.max_digits, **self.scan_bugs)
        # Isolated: the matches, and whatever lies between them, each a pre-token
        out, last = [], 0
        for m in self._regex.finditer(text):
            if m.start() > last:
                out.append(text[last:m.start()])
            if m.end() > m.start():
                out.append(m.group())
            last = m.end()
        if last < len(text):
            out.append(text[last:])
        return out

    def _word(self, word: str) -> list[int]:
        ids = self._cache.get(word)
        if ids is None:
            data = word.encode("utf-8", "surrogatepass")
            if self.backtracking:  # the bug: the bpe crate's backtracking encoder, not the merges
                ids = self._backtracking_tables().encode(data)
            else:
                ids = self._bpe("".join(self.byte_chars[b] for b in data))
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[word] = ids
        return ids

    def _bpe(self, word: str) -> list[int]:
        """Merge by rank, leftmost first among equal ranks; ``word`` is in the byte alphabet."""
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        symbols = list(word)
        nxt = list(range(1, len(symbols) + 1))   # index of the next live symbol (len: none)
        prv = list(range(-1, len(symbols) - 1))
        heap = []
        for k in range(len(symbols) - 1):
            rank = self.ranks.get((symbols[k], symbols[k + 1]))
            if rank is not None:
                heap.append((rank, k, symbols[k], symbols[k + 1]))
        heapq.heapify(heap)
        while heap:
            rank, k, left, right = heapq.heappop(heap)
            r = nxt[k] if symbols[k] is not None else len(symbols)
            if symbols[k] != left or r >= len(symbols) or symbols[r] != right:
                continue  # stale: one side was merged into something else since
            symbols[k] = left + right
            symbols[r] = None
            nxt[k] = nxt[r]
            if nxt[k] < len(symbols):
                prv[nxt[k]] = k
            p = prv[k]
            if p >= 0:
                rank = self.ranks.get((symbols[p], symbols[k]))
                if rank is not None:
                    heapq.heappush(heap, (rank, p, symbols[p], symbols[k]))
            if nxt[k] < len(symbols):
                rank = self.ranks.get((symbols[k], symbols[nxt[k]]))
                if rank is not None:
                    heapq.heappush(heap, (rank, k, symbols[k], symbols[nxt[k]]))
        ids = []
        for s in symbols:
            if s is None:
                continue
            if s not in self.vocab:
                raise KeyError(f"no vocabulary entry for the piece {s!r}")
            ids.append(self.vocab[s])
        return ids

    # -- decoding --------------------------------------------------------------------------------

    def decode(self, ids: list[int]) -> str:
        out = bytearray()
        for i in ids:
            token = self.id_to_token.get(i)
            if token is None:
                raise ValueError(f"id {i} is not in the vocabulary")
            if token in self.added:
                out += token.encode("utf-8")
            else:
                out += bytes(self.char_bytes[ch] for ch in token)
        return out.decode("utf-8", "replace")


def serve(engine: ByteBPE) -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            reply = {"id": None, "error": f"not JSON: {e}"}
        else:
            rid = req.get("id") if isinstance(req, dict) else None
            try:
                op = req.get("op")
                if op == "encode":
                    reply = {"id": rid, "ids": engine.encode(req["text"], bool(req.get("add_special")),
                                                             bool(req.get("parse_special")))}
                elif op == "decode":
                    reply = {"id": rid, "text": engine.decode([int(i) for i in req["ids"]])}
                else:
                    reply = {"id": rid, "error": f"unknown op {op!r}"}
            except Exception as e:  # one bad request must not end the engine
                reply = {"id": rid, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--digits-unbounded", action="store_true", help="split digit runs whole, not by three")
    ap.add_argument("--unicode-3.2", dest="unicode_32", action="store_true",
                    help="letter/number/space classes from Unicode 3.2")
    ap.add_argument("--always-parse-special", action="store_true",
                    help="match special-token text even when parse_special is false")
    ap.add_argument("--newline-run-stops", action="store_true",
                    help="a piece that starts with a line break takes only the line breaks after it")
    ap.add_argument("--tab-prefixes-punct", action="store_true",
                    help="a tab before punctuation is taken into it, as the optional space is")
    ap.add_argument("--ascii-word-prefix", action="store_true",
                    help="only ASCII whitespace can be the one character before a word")
    ap.add_argument("--space-joins-number", action="store_true",
                    help="a non-ASCII number takes the whitespace before it after a letter or number")
    ap.add_argument("--split-mixed-trailing-space", action="store_true",
                    help="mixed whitespace at the end of the text leaves its last character apart")
    ap.add_argument("--backtracking", action="store_true",
                    help="encode each pre-token with the bpe crate's backtracking encoder, ranks = ids")
    args = ap.parse_args(argv)
    serve(ByteBPE(args.tokenizer_json, args.digits_unbounded, args.unicode_32, args.always_parse_special,
                  args.newline_run_stops, args.tab_prefixes_punct, args.ascii_word_prefix,
                  args.space_joins_number, args.split_mixed_trailing_space, args.backtracking))


if __name__ == "__main__":
    main()
