"""The `bpe` crate's backtracking encoder (github/rust-gems, ``crates/bpe``), kept as a reference.

No tokenizer of the zoo encodes this way; fast engines port it (quicktok-v1's ``src/bpe.hpp`` is
"a faithful C++ port of the `bpe` crate's encode_via_backtracking"). It does not merge: at each
position it takes the longest vocabulary token, and backs off to a shorter one (or back to the
previous position) where that token and the one before it are not a *valid pair*: a pair that
rank BPE, run on their two byte strings joined, would leave side by side. Validity is read from
a merge tree it builds out of the vocabulary alone, tokens ranked by id: each token is the first
pair of lower-ranked tokens (longest first part first) that is valid itself.

That equals rank BPE on a vocabulary in which every token's own encoding is itself, which the
crate asserts when it builds (``from_dictionary`` panics on any other); a port that leaves the check
out runs on one that is not so (Llama 3's, whose 28,000 tokens past cl100k's were added later), and
the two part: ``' každou'`` is ``[16909, 12453, 114541]`` by Llama 3's merges, and here
``[103870, 283]`` (``' každ'``, ``'ou'``), every pair valid. ``model.backtracking`` in
``tokparity.diagnose`` swaps it in for the model's merges to reproduce such an engine.

    >>> # 'ab' ranks before 'bc'; 'abc' is 'ab' + 'c', its longest first part that makes a valid pair
    >>> encoder = Backtracking(["a", "b", "c", "ab", "bc", "abc"])
    >>> encoder.split("abc"), encoder.split("abcbc")
    (['abc'], ['abc', 'bc'])
"""

from __future__ import annotations

from collections.abc import Sequence

from tokparity.reference.greedy import LongestMatch


class Backtracking:
    """The encoder over ``tokens`` (strings, ranked by position; None: a rank with no token), every
    character of a text a token by itself (a byte-level vocabulary, one character a byte).

    The crate builds its merge tree for the whole vocabulary at once, in rank order (a second or
    two in Python for 128,000 tokens); here each token's parts are worked out when a text first
    needs them (a diagnosis tries the encoder on a few texts), as the build would have found them:
    a token's parts are chosen with only the tokens ranked before it known to be merges. Worked
    out so, one token's parts may need those of a chain of others as long as the token (a stack
    frame or three a character); where that is deeper than Python's stack, every token's parts are
    worked out in rank order instead, each of which needs only those already known."""

    def __init__(self, tokens: Sequence[str | None]):
        self.tokens = tokens
        self.ids: dict[str, int] = {}
        for i, token in enumerate(tokens):
            if token and token not in self.ids:
                self.ids[token] = i
        self.matcher = LongestMatch(self.ids)
        self._shorter: dict[int, int] = {}
        self._parts: dict[int, tuple[int, int]] = {}
        self._valid: dict[tuple[int, int], bool] = {}

    def shorter(self, token: int) -> int:
        """The longest token that is a proper prefix of ``token``, or -1."""
        found = self._shorter.get(token)
        if found is None:
            text = self.tokens[token] or ""
            found = next((i for n in range(len(text) - 1, 0, -1) if (i := self.ids.get(text[:n])) is not None), -1)
            self._shorter[token] = found
        return found

    def parts(self, token: int) -> tuple[int, int]:
        """The two tokens ``token`` is merged from (itself twice where it has none): its longest
        first part whose rest is a token, both ranked before it, that make a valid pair while only
        the tokens ranked before it are merges."""
        found = self._parts.get(token)
        if found is None:
            found = (token, token)
            text = self.tokens[token] or ""
            if self.ids.get(text) == token:
                first = self.shorter(token)
                while first >= 0:
                    second = self.ids.get(text[len(self.tokens[first] or ""):])
                    if second is not None and first < token and second < token and self.valid(first, second, token):
                        found = (first, second)
                        break
                    first = self.shorter(first)
            self._parts[token] = found
        return found

    def merged(self, left: int, right: int, below: int | None = None) -> int | None:
        """The token the merge of ``left`` and ``right`` makes (ranked before ``below``), or None."""
        token = self.ids.get((self.tokens[left] or "") + (self.tokens[right] or ""))
        if token is None or below is not None and token >= below:
            return None
        return token if self.parts(token) == (left, right) else None

    def valid(self, left: int, right: int, below: int | None = None) -> bool:
        """Whether rank BPE leaves ``left`` and ``right`` side by side in their joined text: no
        merge across them ranks before the merges that made each (the crate's
        ``is_valid_token_pair``: take apart the later-made of the two, one merge at a time).
        ``below``: only the tokens ranked before it are merges (while ``parts`` chooses a token's)."""
        if below is None and (left, right) in self._valid:
            return self._valid[left, right]
        pair = (left, right)
        limit = None
        while True:
            merged = self.merged(left, right, below)
            if merged is not None and (limit is None or merged < limit):
                answer = False
                break
            if left > right:
                limit, left = left, self.parts(left)[1]
                if left == limit:
                    limit, right = right + 1, self.parts(right)[0]
                    if right + 1 == limit:
                        answer = True
                        break
            else:
                limit, right = right + 1, self.parts(right)[0]
                if right + 1 == limit:
                    limit, left = left, self.parts(left)[1]
                    if left == limit:
                        answer = True
                        break
        if below is None:
            self._valid[pair] = answer
        return answer

    def _longest_at(self, text: str, pos: int) -> int:
        n = self.matcher.length_at(text, pos)
        return self.ids[text[pos:pos + n]] if n else -1

    def split(self, text: str) -> list[str]:
        """``text`` as the encoder cuts it; a character that is no token by itself (none, in a
        byte-level vocabulary) is one piece of its own, for the caller's fallback."""
        try:
            return self._split(text)
        except RecursionError:
            for token in range(len(self.tokens)):
                self.parts(token)
            return self._split(text)

    def _split(self, text: str) -> list[str]:
        out: list[str] = []
        start = 0
        for pos, ch in enumerate(text):  # (runs the vocabulary can spell, apart)
            if ch not in self.ids:
                out += self._encode(text[start:pos]) + [ch]
                start = pos + 1
        return out + self._encode(text[start:])

    def _encode(self, text: str) -> list[str]:
        open_at = [True] * (len(text) + 1)  # a position a token may still end at
        chosen: list[int] = []
        pos = 0
        token = self._longest_at(text, 0) if text else -1
        while token >= 0:
            last = chosen[-1] if chosen else -1
            while True:
                end = pos + len(self.tokens[token] or "")
                if open_at[end] and (last < 0 or self.valid(last, token)):
                    chosen.append(token)
                    pos = end
                    token = self._longest_at(text, pos) if pos < len(text) else -1
                    break
                if self.shorter(token) >= 0:
                    token = self.shorter(token)
                    continue
                open_at[pos] = False  # nothing valid starts here: take the previous token back
                if chosen:
                    chosen.pop()
                    pos -= len(self.tokens[last] or "")
                token = last
                break
        return [self.tokens[i] or "" for i in chosen]
