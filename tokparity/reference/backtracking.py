"""The `bpe` crate's backtracking encoder (github/rust-gems, ``crates/bpe``), kept as a reference.

No tokenizer of the zoo encodes this way; fast engines port it (quicktok-v1's ``src/bpe.hpp`` is
"a faithful C++ port of the `bpe` crate's encode_via_backtracking"). It does not merge: at each
position it takes the longest vocabulary token, and backs off to a shorter one (or back to the
previous position) where that token and the one before it are not a *valid pair*: a pair that
rank BPE, run on their two byte strings joined, would leave side by side. Validity is read from
a merge tree it builds out of the vocabulary alone, tokens ranked by id: each token is the first
pair of lower-ranked tokens (longest first part first) that is valid itself.

That equals rank BPE on a vocabulary in which every token's own encoding is itself, as the crate
assumes; on one that is not so (Llama 3's, whose 28,000 tokens past cl100k's were added later),
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


class Backtracking:
    """The encoder over ``tokens`` (strings, ranked by position; None: a rank with no token)."""

    def __init__(self, tokens: Sequence[str | None]):
        self.tokens = tokens
        self.ids: dict[str, int] = {}
        for i, token in enumerate(tokens):
            if token and token not in self.ids:
                self.ids[token] = i
        self.longest = max((len(t) for t in self.ids), default=1)
        # the longest token that is a proper prefix of each token, or -1
        self.shorter = [-1] * len(tokens)
        for token, i in self.ids.items():
            for n in range(len(token) - 1, 0, -1):
                prefix = self.ids.get(token[:n])
                if prefix is not None:
                    self.shorter[i] = prefix
                    break
        # each token's two parts (itself twice where it has none) and the pair each merge makes,
        # found in rank order: a token's parts are valid pairs of the tokens ranked before it
        self.parts: list[tuple[int, int]] = [(i, i) for i in range(len(tokens))]
        self.merged: dict[tuple[int, int], int] = {}
        for i, token in enumerate(tokens):
            if not token or self.ids[token] != i:
                continue
            first = self.shorter[i]
            while first >= 0:
                second = self.ids.get(token[len(self.tokens[first] or ""):])
                if second is not None and first < i and second < i and self.valid(first, second):
                    self.parts[i] = (first, second)
                    self.merged[first, second] = i
                    break
                first = self.shorter[first]
        self._valid: dict[tuple[int, int], bool] = {}

    def valid(self, left: int, right: int) -> bool:
        """Whether rank BPE leaves ``left`` and ``right`` side by side in their joined text: no
        merge across them ranks before the merges that made each (the crate's
        ``is_valid_token_pair``: take apart the later-made of the two, one merge at a time)."""
        limit = None
        while True:
            merged = self.merged.get((left, right))
            if merged is not None and (limit is None or merged < limit):
                return False
            if left > right:
                limit, left = left, self.parts[left][1]
                if left == limit:
                    limit, right = right + 1, self.parts[right][0]
                    if right + 1 == limit:
                        return True
            else:
                limit, right = right + 1, self.parts[right][0]
                if right + 1 == limit:
                    limit, left = left, self.parts[left][1]
                    if left == limit:
                        return True

    def _valid_pair(self, left: int, right: int) -> bool:
        """``valid``, remembered (asked only once the merge tree is whole)."""
        key = (left, right)
        found = self._valid.get(key)
        if found is None:
            found = self._valid[key] = self.valid(left, right)
        return found

    def _longest_at(self, text: str, pos: int) -> int:
        for n in range(min(self.longest, len(text) - pos), 0, -1):
            found = self.ids.get(text[pos:pos + n])
            if found is not None:
                return found
        return -1

    def split(self, text: str) -> list[str]:
        """``text`` as the encoder cuts it; a character no token starts with is one piece of its own
        (for the caller's fallback), as greedy.LongestMatch leaves it."""
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
                if open_at[end] and (last < 0 or self._valid_pair(last, token)):
                    chosen.append(token)
                    pos = end
                    token = self._longest_at(text, pos) if pos < len(text) else -1
                    break
                if self.shorter[token] >= 0:
                    token = self.shorter[token]
                    continue
                open_at[pos] = False  # nothing valid starts here: take the previous token back
                if chosen:
                    chosen.pop()
                    pos -= len(self.tokens[last] or "")
                token = last
                break
        return [self.tokens[i] or "" for i in chosen]
