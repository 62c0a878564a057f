"""tokenizers' four models, each turning one pre-token (a "word") into ids.

* ``BPE`` (``merge_word`` + ``Word::merge_all``): one symbol per character (with the
  ``continuing_subword_prefix`` on all but the first and the ``end_of_word_suffix`` on the
  last), a character outside the vocabulary becomes ``<0xNN>`` pieces with ``byte_fallback``,
  else ``unk`` (a run fused into one with ``fuse_unk``); then the pair of lowest merge rank,
  leftmost on ties, merges until none is left. Merges are between ids, as in tokenizers, so a
  prefixed right part ("##b") merges into "ab". The reference's bpe.py merges strings and has
  no prefix; this module keeps tokenizers' ids.
* ``Unigram``: tokparity.reference.ugm's Viterbi, in double precision, every piece of the
  vocabulary in the trie (tokenizers has no piece types), the unknown piece scoring
  ``min(score) - 10``, consecutive unknown characters fused into one string which is a piece,
  ``<0xNN>`` pieces (``byte_fallback``) or ``unk_id``.
* ``WordPiece``: greedy longest match first, ``continuing_subword_prefix`` on every piece but
  the first; a word with no match somewhere, or longer than ``max_input_chars_per_word``
  characters, is one ``unk`` (reference.wpm has llama.cpp's variant: "▁" prefix, no "##").
* ``WordLevel``: the word is a token or it is ``unk``.
"""

from __future__ import annotations

import heapq

import regex

from tokparity.components import models as m
from tokparity.errors import TokparityError
from tokparity.reference.spm import byte_piece
from tokparity.reference.ugm import UgmModel, UgmOptions


def _missing_unk(what: str) -> TokparityError:
    return TokparityError(f"tokenizer.json: the {what} model needs its unknown token, which is not in its vocabulary "
                          "(tokenizers fails the same way: MissingUnkToken)")


def merge_ids(ids: list[int], merges: dict[tuple[int, int], tuple[int, int]]) -> list[int]:
    """Lowest rank first, leftmost on ties: ``[a, b, c]`` with ``(a, b) -> ab`` gives ``[ab, c]``."""
    ids = list(ids)
    nxt = list(range(1, len(ids) + 1))
    prv = list(range(-1, len(ids) - 1))
    alive = [True] * len(ids)
    heap: list[tuple[int, int, int]] = []

    def push(i: int) -> None:
        j = nxt[i]
        if j < len(ids):
            hit = merges.get((ids[i], ids[j]))
            if hit is not None:
                heapq.heappush(heap, (hit[0], i, hit[1]))

    for i in range(len(ids) - 1):
        push(i)
    while heap:
        _, i, new_id = heapq.heappop(heap)
        j = nxt[i] if alive[i] else len(ids)
        if j >= len(ids) or merges.get((ids[i], ids[j]), (0, None))[1] != new_id:
            continue  # an entry made stale by an earlier merge
        ids[i] = new_id
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] < len(ids):
            prv[nxt[j]] = i
        if prv[i] >= 0:
            push(prv[i])
        push(i)
    return [t for t, a in zip(ids, alive) if a]


class Bpe:
    def __init__(self, model: m.BPE, token_to_id: dict[str, int]):
        self.model = model
        self.vocab = model.vocab
        prefix_len = len(model.continuing_subword_prefix or "")
        self.merges: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (a, b) in enumerate(model.merges):
            left, right, merged = model.vocab.get(a), model.vocab.get(b), model.vocab.get(a + b[prefix_len:])
            if left is not None and right is not None and merged is not None:
                self.merges[(left, right)] = (rank, merged)  # a later duplicate wins, as in tokenizers' map
        self.unk_id = model.vocab.get(model.unk_token) if model.unk_token is not None else None

    def symbols(self, word: str, byte_fallback: bool, fuse_unk: bool, by_clusters: bool = False) -> list[int]:
        """The word's first symbols: its characters (``by_clusters``: its grapheme clusters), each a
        token, else its bytes' tokens with byte fallback, else the unknown token."""
        out: list[int] = []
        unk_run = False
        prefix, suffix = self.model.continuing_subword_prefix, self.model.end_of_word_suffix
        units = regex.findall(r"\X", word) if by_clusters else word
        for i, ch in enumerate(units):
            s = (prefix + ch if prefix and i else ch) + (suffix if suffix and i == len(units) - 1 else "")
            token_id = self.vocab.get(s)
            if token_id is not None:
                out.append(token_id)
                unk_run = False
                continue
            pieces = [self.vocab.get(byte_piece(b)) for b in s.encode()] if byte_fallback else [None]
            if None not in pieces:
                out += pieces  # type: ignore[arg-type]
                continue  # (tokenizers keeps a pending unk pending across byte pieces)
            if self.model.unk_token is None:
                continue  # no unk: the character is dropped
            if self.unk_id is None:
                raise _missing_unk("BPE")
            if not (fuse_unk and unk_run):
                out.append(self.unk_id)
            unk_run = True
        return out


class Unigram:
    def __init__(self, model: m.Unigram):
        self.model = model
        tokens = [piece for piece, _ in model.vocab]
        scores = [score for _, score in model.vocab]
        options = UgmOptions(float32=False, user_defined_bonus=False, rebase_threshold=None, match_unused=True)
        self.ugm = UgmModel.build(tokens, [1] * len(tokens), scores, model.unk_id if model.unk_id is not None else -1,
                                  options)
        self.ugm.unk_score = min(scores, default=0.0) - 10.0  # in double, as tokenizers
        self.ugm.max_abs_score = max([abs(self.ugm.unk_score)] + [abs(s) for s in scores])
        self.token_to_id: dict[str, int] = {}
        for i, piece in enumerate(tokens):
            self.token_to_id[piece] = i  # a later duplicate wins, as in tokenizers' map

    def encode(self, word: str) -> list[int]:
        unk_id = self.model.unk_id
        out: list[int] = []
        run = ""
        for token_id, piece in self.ugm.encode(word) + [(None, "")]:
            if token_id == -1:
                raise _missing_unk("Unigram")
            if token_id is not None and token_id == unk_id:  # tokenizers fuses every unk node, even "<unk>" read
                run += piece
                continue
            if run:
                out += self._fused(run)
                run = ""
            if token_id is not None:
                out.append(token_id)
        return out

    def _fused(self, run: str) -> list[int]:
        token_id = self.token_to_id.get(run)
        if token_id is not None:
            return [token_id]
        if self.model.byte_fallback:
            ids = [self.token_to_id.get(byte_piece(b)) for b in run.encode()]
            if None not in ids:
                return ids  # type: ignore[return-value]
        if self.model.unk_id is None:
            raise _missing_unk("Unigram")
        return [self.model.unk_id]


class WordPiece:
    def __init__(self, model: m.WordPiece):
        self.model = model

    def encode(self, word: str) -> list[int]:
        vocab, prefix = self.model.vocab, self.model.continuing_subword_prefix
        out: list[int] = []
        start = 0
        if len(word) <= self.model.max_input_chars_per_word:
            while start < len(word):
                for end in range(len(word), start, -1):
                    token_id = vocab.get(word[start:end] if start == 0 else prefix + word[start:end])
                    if token_id is not None:
                        out.append(token_id)
                        start = end
                        break
                else:
                    break
            if start == len(word):
                return out
        unk = vocab.get(self.model.unk_token)
        if unk is None:
            raise _missing_unk("WordPiece")
        return [unk]


class WordLevel:
    def __init__(self, model: m.WordLevel):
        self.model = model

    def encode(self, word: str) -> list[int]:
        token_id = self.model.vocab.get(word)
        if token_id is None:
            token_id = self.model.vocab.get(self.model.unk_token)
            if token_id is None:
                raise _missing_unk("WordLevel")
        return [token_id]
