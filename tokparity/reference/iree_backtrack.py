"""IREE's BPE encoder for byte-level vocabularies, ported to plain Python as a reference.

iree-tokenizer (PyPI; IREE's C tokenizer, github.com/iree-org/iree, ``runtime/src/iree/tokenizer``)
does not run rank BPE on a word. It takes the longest vocabulary token at each position and backs
off to shorter ones, as the ``bpe`` crate's backtracking encoder does, but it decides whether two
tokens may stand side by side with checks of its own, and it adds heuristics ("suffix blocking")
for merges that a token would hide. On some words this gives other tokens than rank BPE: on
Llama 3's vocabulary ``'Ġbackspace'`` is ``['Ġbacks', 'pace']`` (rank BPE: ``['Ġback', 'space']``).

Ported from ``runtime/src/iree/tokenizer/`` (IREE at b48a5955; ``model/`` has not changed since
March 2026 and gives the ids of iree-tokenizer 0.3.0); the functions are ``iree_tokenizer_bpe_*``:

- ``model/bpe_encode.c``: ``encode_segment``, the dispatch: a word that is one token (one rank
  BPE reaches, unless the model has ``ignore_merges``) is that token; a word of up to
  ``max_backtrack_segment_bytes`` is backtracked; a longer one takes the window path.
- ``model/bpe.c``: ``model_allocate`` (the limits), ``build_byte_to_token``.
- ``model/bpe_tables.c``: ``build_backtrack_tables`` (split table, effective ranks, prefixes,
  reachability), ``is_decomposition_reachable``, ``rightmost_base_token``, the consumed ranks.
- ``model/bpe_backtrack.c``: ``backtrack_encode``, ``is_valid_token_pair``, ``is_suffix_blocked``,
  ``is_suffix_merge_preempted``, ``is_token_consumed_rightward``, ``token_at_position``,
  ``token_raw_length``; ``model/bpe_internal.h``: ``backtrack_longest_match``.
- ``model/bpe_window.c``, ``model/bpe_heap.h``: the window path.
- ``vocab/vocab_merge_hash.c`` (a merge's result: the token of the two texts joined, or none) and
  ``format/huggingface/model_json.c`` (the tokens and merges a model gets: ``from_tokenizer_json``).

Left out: the word cache (``bpe_cache.c``), which only remembers results; the end-of-word suffix
(CLIP's ``</w>``); vocabularies that are not byte-level (a byte with no token is dropped, as IREE
does with no unk token); streaming; offsets; the pre-tokenizer (``split`` takes one word).

    >>> bpe = IreeBackTrack(["a", "b", "c", "ab", "bc", "abc"], [("a", "b"), ("b", "c"), ("ab", "c")])
    >>> bpe.split("abc"), bpe.split("abcbc")
    (['abc'], ['abc', 'bc'])
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tokparity.vocab.token_bytes import byte_to_unicode, gpt2_unicode_to_byte

NO_RANK = 0xFFFFFFFF  # UINT32_MAX: "no merge", and the limit of the first validation frame.
NO_TOKEN = 0xFFFFFFFF  # next_prefix_match of a token with no proper prefix token.
PAIR_STACK_CAPACITY = 64  # IREE_TOKENIZER_BPE_PAIR_VALIDATION_STACK_CAPACITY
SUFFIX_CAPACITY = 32  # the suffixes[32] array of is_suffix_blocked
DEFERRED_RANK_MAX = (1 << 20) - 1  # a backtrack entry keeps its deferred rank in 20 bits
MAX_MERGE_CONCAT_BYTES = 512  # vocab_merge_hash.c's stack buffer for a merge's joined texts


BYTE_CHARS = byte_to_unicode()  # GPT-2's byte alphabet: byte -> the character that stands for it
CHAR_BYTES = gpt2_unicode_to_byte()


class IreeBackTrack:
    """IREE's BPE encoder over one byte-level vocabulary.

    ``tokens``: the token strings by id, in GPT-2's byte alphabet (None: an id with no token).
    ``merges``: the (left, right) pairs, ranked by position. ``ignore_merges``: the model's
    flag (Llama 3's): a word that is one token is that token. ``special``: the ids of special
    added tokens, which IREE never takes as a stray multi-byte token."""

    def __init__(self, tokens: Sequence[str | None], merges: Iterable[Sequence[str]], *,
                 ignore_merges: bool = False, special: Iterable[int] = ()):
        self.tokens = [t or "" for t in tokens]
        self.ignore_merges = ignore_merges
        capacity = len(self.tokens)
        # A token's text as IREE stores it: UTF-8 bytes of the byte-alphabet string.
        self._utf8 = [t.encode() for t in self.tokens]
        # The vocab hash answers the first id of a text, the trie the last (vocab_trie.c).
        self._lookup: dict[str, int] = {}
        self._trie: dict[str, int] = {}
        for i, t in enumerate(self.tokens):
            if t:
                self._lookup.setdefault(t, i)
                self._trie[t] = i
        # Every prefix of a token is a trie node: a walk stops where the text leaves the trie.
        self._nodes = {t[:n] for t in self._trie for n in range(1, len(t) + 1)}
        self.max_token_length = max((len(b) for b in self._utf8), default=0) or 1
        # Words up to this many bytes are backtracked, longer ones go to the window path.
        self.max_backtrack_bytes = min(max(16 * self.max_token_length, 2048), 4095)
        self._byte_token = [self._lookup.get(BYTE_CHARS[b], -1) for b in range(256)]

        # Merges by ids, and the hash: (left, right) -> (rank, the token of the two texts joined or
        # -1). The first of two equal merges is the one found; one too long for the C's buffer is not.
        self._merges: list[tuple[int, int]] = []
        self._merge: dict[tuple[int, int], tuple[int, int]] = {}
        lookup, lengths = self._lookup, [len(b) for b in self._utf8]
        for rank, (left, right) in enumerate(merges):
            a, b = pair = (lookup.get(left, -1), lookup.get(right, -1))
            if a < 0 or b < 0:
                raise ValueError(f"merge {rank} ({left!r} {right!r}) names a token not in the vocabulary")
            self._merges.append(pair)
            if pair not in self._merge and lengths[a] + lengths[b] <= min(2 * self.max_token_length, MAX_MERGE_CONCAT_BYTES):
                self._merge[pair] = (rank, lookup.get(left + right, -1))

        self._build_tables(capacity, set(special))
        self._pairs: dict[tuple[int, int, int], bool] = {}  # pair validity, as IREE's pair cache
        self._cut_cache: dict[int, list[tuple[int, int, int]]] = {}

    @classmethod
    def from_tokenizer_json(cls, path: str | Path) -> IreeBackTrack:
        """The encoder of a tokenizer.json's BPE model, with its added tokens as IREE loads them."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        model = data["model"]
        if model.get("type", "BPE") != "BPE":
            raise ValueError("not a BPE model")
        if model.get("end_of_word_suffix") or model.get("continuing_subword_prefix"):
            raise ValueError("end_of_word_suffix and continuing_subword_prefix are not ported")
        vocab: dict[str, int] = model["vocab"]
        added = data.get("added_tokens") or []
        size = max([*vocab.values(), *(a["id"] for a in added)], default=-1) + 1
        tokens: list[str | None] = [None] * size
        for text, i in vocab.items():
            tokens[i] = text
        special = set()
        for a in added:
            if tokens[a["id"]] is None:  # an added token with the id of a vocabulary token keeps its text
                tokens[a["id"]] = a["content"]
            if a.get("special"):
                special.add(a["id"])
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        return cls(tokens, merges, ignore_merges=bool(model.get("ignore_merges")), special=special)

    # --- Tables (bpe_tables.c: iree_tokenizer_bpe_build_backtrack_tables) ---
    def _build_tables(self, capacity: int, special: set[int]) -> None:
        """The split table, effective ranks, longest proper prefixes and reachability."""
        merge, trie, tokens = self._merge, self._trie, self.tokens
        results = [merge.get(pair, (NO_RANK, -1))[1] for pair in self._merges]  # (-1: no token)
        # A token no merge makes is its own split (a "base" token) with effective rank 0.
        self._split = [(i, i) for i in range(capacity)]
        self._rank = [0] * capacity
        split, rank_of = self._split, self._rank
        # The first merge making a token gives its split and its rank (1-based).
        for rank, (pair, result) in enumerate(zip(self._merges, results)):
            if result < 0:
                continue
            # (and on the trie's id of its text, where the vocabulary has the text twice)
            for target in (result, trie.get(tokens[result], -1)):
                if target >= 0 and rank_of[target] == 0:
                    split[target] = pair
                    rank_of[target] = rank + 1
        # Rank 1 (matchable) for a multi-byte token no merge makes that takes part in merges, or
        # that is not special and has a byte with no token of its own (none, in a byte-level vocabulary).
        parts = {t for pair in self._merges for t in pair}
        for i in range(capacity):
            if rank_of[i] == 0 and len(self._utf8[i]) > 1 and (i in parts or (
                    i not in special and any(self._byte_token[b] < 0 for b in self._utf8[i]))):
                rank_of[i] = 1
        # The longest proper prefix of each token that is a token (the trie's id).
        self._prefix = [NO_TOKEN] * capacity
        for i, t in enumerate(tokens):
            if len(self._utf8[i]) > 1:
                self._prefix[i] = next((trie[t[:n]] for n in range(len(t) - 1, 0, -1) if t[:n] in trie), NO_TOKEN)
        # Reachability: single-character base tokens, then every merge of two reachable tokens
        # that no other merge at their boundary blocks, to a fixed point. A token that becomes
        # reachable takes that merge as its split (the C rewrites the split table in the loop).
        self._reachable = reachable = [split[i][0] == i and len(tokens[i]) <= 1 for i in range(capacity)]
        # Each pass scans, in rank order, the merges that may still fire: not one whose result is
        # reachable, nor a blocked one (the splits below reachable tokens are final: it stays blocked).
        waiting = [(left, right, result) for (left, right), result in zip(self._merges, results) if result >= 0]
        fired = True
        while fired:
            fired, left_over = False, []
            for left, right, result in waiting:
                if reachable[result]:
                    continue
                if not (reachable[left] and reachable[right]):
                    left_over.append((left, right, result))
                elif not self._boundary_blocked(left, right, result):
                    reachable[result] = fired = True
                    split[result] = (left, right)
            waiting = left_over

    def _leaf(self, token: int, side: int) -> int:
        """The first (side 0) or last (side 1) leaf of ``token``'s split tree."""
        split = self._split
        while split[token][side] != token:
            token = split[token][side]
        return token

    def _consumed_rank(self, token: int, side: int) -> int:
        """The rank at which ``token``'s first (side 0) or last (side 1) leaf is merged inside its
        tree: the rank of the node on that spine whose child is the leaf (NO_RANK: a base token)."""
        split = self._split
        while split[token][0] != token:
            child = split[token][side]
            if split[child][0] == child:
                return self._rank[token]
            token = child
        return NO_RANK

    def _boundary_blocked(self, left: int, right: int, token: int) -> bool:
        """Whether another merge of the two leaves at the left|right boundary fires before either
        leaf is merged inside its own side, so that ``token`` cannot form from these two."""
        boundary = self._merge.get((self._leaf(left, 1), self._leaf(right, 0)))
        if boundary is None or boundary[1] < 0 or boundary[1] == token:
            return False
        # The C compares the effective rank of the boundary's token, not the boundary merge's rank.
        boundary_rank = self._rank[boundary[1]]
        return boundary_rank < min(self._consumed_rank(left, 1), self._consumed_rank(right, 0))

    # --- Encoding a word (bpe_encode.c: iree_tokenizer_bpe_encode_segment) ---
    def split(self, word: str) -> list[str]:
        """The pieces IREE gives for one pre-tokenized word, written in the byte alphabet. A
        character outside that alphabet is a piece of its own, for the caller's fallback (a
        diagnosis may feed words that no ByteLevel step spelt)."""
        out: list[str] = []
        start = 0
        for pos, ch in enumerate(word):
            if ch not in CHAR_BYTES:
                out += [self.tokens[i] for i in self.split_ids(word[start:pos])] + [ch]
                start = pos + 1
        return out + [self.tokens[i] for i in self.split_ids(word[start:])]

    def split_ids(self, word: str) -> list[int]:
        """The ids IREE gives for one pre-tokenized word, written in the byte alphabet."""
        try:
            data = bytes(CHAR_BYTES[c] for c in word)
        except KeyError as e:
            raise ValueError(f"{word!r} is not in the byte alphabet") from e
        if not data:
            return []
        # Fast path: the whole word is one token, and rank BPE would reach it (or ignore_merges).
        whole = self._trie.get(word)
        if whole is not None and (self.ignore_merges or self._reachable[whole]):
            return [whole]
        if len(data) <= self.max_backtrack_bytes:
            return self._backtrack(data)
        return self._window(data)

    # --- The backtracking path (bpe_backtrack.c: iree_tokenizer_bpe_backtrack_encode) ---
    def _walk(self, data: bytes, pos: int, end: int | None = None) -> Iterator[tuple[int, int | None]]:
        """The trie walk from ``pos``: (raw length, the token there or None) for each byte taken,
        each raw byte as its byte-alphabet character, until the text leaves the trie."""
        text = ""
        for i in range(pos, len(data) if end is None else min(end, len(data))):
            text += BYTE_CHARS[data[i]]
            if text not in self._nodes:
                return
            yield i + 1 - pos, self._trie.get(text)

    def _longest_match(self, data: bytes, pos: int) -> tuple[int, int]:
        """(token, raw length) of the longest token at ``pos`` that BPE can use: one byte, or a
        token of effective rank above 0 (so no stray added token); (-1, 0) if none."""
        found, length = -1, 0
        for size, token in self._walk(data, pos):
            if token is not None and (size == 1 or self._rank[token] > 0):
                found, length = token, size
        return found, length

    def _raw_length(self, token: int, data: bytes, pos: int) -> int:
        """How many raw bytes from ``pos`` the token's text covers (a printable ASCII byte is one
        UTF-8 byte of the text, any other byte two)."""
        size = len(self._utf8[token])
        covered = raw = 0
        while covered < size:
            b = data[pos + raw]
            covered += 1 if 0x21 <= b <= 0x7E else 2
            raw += 1
        return raw

    def _backtrack(self, data: bytes) -> list[int]:
        """Greedy longest match with backing off: at each position the longest token is tried,
        then its shorter prefixes; where none fits, the previous token is popped and retried."""
        n = len(data)
        # stack entries: (token, start byte, deferred merge rank)
        stack: list[tuple[int, int, int]] = []
        reachable_end = [True] * (n + 1)  # the bitfield: a position not yet found a dead end
        position = 0
        committed = 0  # byte fallbacks before this are never popped
        next_token, next_length = self._longest_match(data, 0)
        while position < n:
            # No token here (or none fits and nothing may be popped): the byte's own token,
            # which a byte-level vocabulary always has, committed for good.
            fallback, popped = next_token < 0, False
            token, length = next_token, next_length
            last_token = stack[-1][0] if stack else -1
            # The rank of the last suffix-blocked candidate at this position, kept with the token
            # accepted here so that the pair check at the next position allows deferred merges.
            position_deferred = 0
            pair_deferred = stack[-1][2] if stack else 0
            while not fallback:
                end = position + length
                end_ok = reachable_end[end]
                unreachable = length > 1 and self._rank[token] > 1 and not self._reachable[token]
                blocked, blocking_rank = self._suffix_blocked(token, data, end)
                if blocked:
                    position_deferred = blocking_rank
                pair_ok = last_token < 0 or self._valid_pair(last_token, token, pair_deferred)
                if end_ok and not unreachable and pair_ok and not blocked:
                    stack.append((token, position, min(position_deferred, DEFERRED_RANK_MAX)))
                    position = end
                    break
                prefix = self._prefix[token]
                if prefix != NO_TOKEN:  # try the next shorter token
                    token = prefix
                    length = self._raw_length(prefix, data, position)
                    continue
                # No token fits here: this position is a dead end, no token may end at it again.
                reachable_end[position] = False
                if not stack or stack[-1][1] < committed:
                    fallback = True
                    break
                # Pop the previous token and retry it (its end is now ruled out).
                next_token, position, _ = stack.pop()
                next_length = self._raw_length(next_token, data, position)
                popped = True
                break
            if popped:
                continue
            if fallback:
                byte_token = self._byte_token[data[position]]
                if byte_token >= 0:
                    stack.append((byte_token, position, 0))
                position += 1
                committed = position
            next_token, next_length = self._longest_match(data, position) if position < n else (-1, 0)
        return [entry[0] for entry in stack]

    def _valid_pair(self, token1: int, token2: int, deferred_rank: int) -> bool:
        """Whether the two tokens may stand side by side: some way of building each from merges
        leaves no merge across their boundary that should have fired first. A depth-first search
        over decompositions with an explicit stack of 64 frames (full: the pair is invalid).
        ``deferred_rank``: merges of that effective rank or above were put off on purpose.
        Results are remembered, as IREE's pair cache does; they depend on nothing else."""
        known = self._pairs.get((token1, token2, deferred_rank))
        if known is None:
            known = self._pairs[(token1, token2, deferred_rank)] = self._search_pair(token1, token2, deferred_rank)
        return known

    def _search_pair(self, token1: int, token2: int, deferred_rank: int) -> bool:
        """is_valid_token_pair's search, frame by frame as the C runs it. The C searches the same
        sub-pair again each time another path reaches it, which takes seconds in Python on runs like ``'-' * 80`` (the C takes most of a second there too). A
        frame's search depends only on its two tokens and its limit, so a sub-pair found to fail
        is remembered with how deep below itself its search went: met again, it fails at once,
        unless that depth from where it now stands would fill the 64 frames, where the C's
        search would have stopped with "invalid" (the answer is then the same)."""
        split, rank_of, merge = self._split, self._rank, self._merge
        failed: dict[tuple[int, int, int], int] = {}  # (token1, token2, limit) -> depth below it
        # frame: [token1, token2, limit, split_pos, stage (0 init, 1 first side, 2 second), side, depth]
        stack: list[list[int]] = [[token1, token2, NO_RANK, 0, 0, 0, 0]]
        while stack:
            frame = stack[-1]
            t1, t2, limit = frame[0], frame[1], frame[2]
            if frame[4] == 0:
                # A merge across the boundary that should have fired first, and was not put off.
                found = merge.get((t1, t2))
                combined = rank_of[found[1]] if found is not None and found[1] >= 0 else NO_RANK
                if combined < limit and not (deferred_rank > 0 and combined >= deferred_rank):
                    self._fail(stack, failed)
                    continue
                t1_base = split[t1][1] == t1
                t2_base = split[t2][0] == t2
                if t1_base and t2_base:
                    return True
                # Stage 1: the token formed later (higher rank) is taken apart first, if not a base token.
                first = (2 if t1_base else 1) if rank_of[t1] > rank_of[t2] else (1 if t2_base else 2)
                frame[3:6] = [0, 1, first]
                continue

            side = frame[5]
            token = t1 if side == 1 else t2
            child: list[int] | None = None
            if frame[3] == 0:
                # First the split table's own decomposition.
                frame[3] = 1
                left, right = split[token]
                if left != token:
                    child = self._child(frame, left, right)
            if child is None:
                # Then every other cut of the token's text into two tokens that merge into it.
                left0 = split[token][0]
                table_pos = len(self._utf8[left0]) if left0 != token else 0
                for pos, left, right in self._cuts(token):
                    if pos < frame[3] or (pos == table_pos and table_pos > 0):
                        continue
                    frame[3] = (pos + 1) & 0xFFFF
                    child = self._child(frame, left, right)
                    break
            if child is not None:
                if len(stack) >= PAIR_STACK_CAPACITY:
                    return False
                depth = failed.get((child[0], child[1], child[2]))
                if depth is None:
                    stack.append(child)
                elif len(stack) + depth >= PAIR_STACK_CAPACITY:
                    return False  # the C's search would fill its stack in there
                else:
                    frame[6] = max(frame[6], depth + 1)  # it fails again: go on with this frame
                continue
            if frame[4] == 1:
                other = 2 if side == 1 else 1
                other_base = (split[t1][1] == t1) if other == 1 else (split[t2][0] == t2)
                if not other_base:
                    frame[3:6] = [0, 2, other]  # stage 2: the other side
                    continue
            self._fail(stack, failed)
        return False

    @staticmethod
    def _fail(stack: list[list[int]], failed: dict[tuple[int, int, int], int]) -> None:
        """Pops the top frame, whose search failed, remembering how deep below it the search went."""
        frame = stack.pop()
        failed[(frame[0], frame[1], frame[2])] = frame[6]
        if stack:
            stack[-1][6] = max(stack[-1][6], frame[6] + 1)

    def _child(self, frame: list[int], left: int, right: int) -> list[int]:
        """The frame that checks the pair left inside ``frame`` once one side is split in two."""
        if frame[5] == 1:
            return [right, frame[1], self._rank[frame[0]], 0, 0, 0, 0]
        return [frame[0], left, self._rank[frame[1]] + 1, 0, 0, 0, 0]

    def _cuts(self, token: int) -> list[tuple[int, int, int]]:
        """(byte position, left, right) for every cut of the token's UTF-8 text into two texts
        whose vocab-hash ids merge into the token, in position order (worked out once)."""
        cuts = self._cut_cache.get(token)
        if cuts is None:
            text = self._utf8[token]
            cuts = []
            for pos in range(1, len(text)):
                left = self._lookup_utf8(text[:pos])
                right = self._lookup_utf8(text[pos:])
                if left < 0 or right < 0:
                    continue
                found = self._merge.get((left, right))
                if found is not None and found[1] == token:
                    cuts.append((pos, left, right))
            self._cut_cache[token] = cuts
        return cuts

    def _lookup_utf8(self, text: bytes) -> int:
        """The vocab hash's id for a UTF-8 text, or -1 (a cut inside a character is no token)."""
        try:
            return self._lookup.get(text.decode(), -1)
        except UnicodeDecodeError:
            return -1

    def _token_at(self, data: bytes, pos: int) -> tuple[int, int]:
        """(token, raw length) of the base token at ``pos``: the byte's own token, else the
        shortest trie token within 8 bytes; (-1, 1) if none."""
        token = self._byte_token[data[pos]]
        if token >= 0:
            return token, 1
        return next(((found, size) for size, found in self._walk(data, pos, pos + 8) if found is not None), (-1, 1))

    def _consumed_rightward(self, token: int, data: bytes, token_end: int, max_rank: int) -> bool:
        """Whether ``token`` (ending at ``token_end``) merges with the token after it at a rank
        below ``max_rank``, that following token not being taken first by its own right neighbour."""
        n = len(data)
        if token_end >= n:
            return False
        following, following_length = self._token_at(data, token_end)
        if following < 0:
            return False
        found = self._merge.get((token, following))
        if found is None or found[0] >= max_rank:
            return False
        after = token_end + following_length
        next_after = self._token_at(data, after)[0] if after < n else -1
        following_merge = self._merge.get((following, next_after))  # (none with -1)
        return following_merge is None or following_merge[0] >= found[0]

    def _suffix_merge_preempted(self, prefix_token: int, suffix_merge_rank: int, data: bytes,
                                prefix_end: int) -> bool:
        """Whether the prefix token (ending at ``prefix_end``) is itself taken by a merge to its
        right, directly or with a compound built from the next few characters, before the suffix
        merge of rank ``suffix_merge_rank`` could fire."""
        n = len(data)
        merge = self._merge
        if prefix_end >= n:
            return False
        next_token, next_length = self._token_at(data, prefix_end)
        if next_token < 0:
            return False
        direct = merge.get((prefix_token, next_token))
        if direct is not None and direct[0] < suffix_merge_rank:
            if not self._consumed_rightward(next_token, data, prefix_end + next_length, direct[0]):
                return True
        # A compound grown from the next characters by merges below the suffix merge's rank:
        # next+third, then that+fourth, ... (four checks of merge(prefix, compound) at most).
        compound, compound_end = next_token, prefix_end + next_length
        for depth in range(5):
            if depth > 0:
                found = merge.get((prefix_token, compound))
                if found is not None and found[0] < suffix_merge_rank:
                    return True
            if compound_end >= n:
                break
            extension, extension_length = self._token_at(data, compound_end)
            if extension < 0:
                break
            compound_merge = merge.get((compound, extension))
            if compound_merge is None or compound_merge[0] >= suffix_merge_rank:
                break
            compound, compound_end = compound_merge[1], compound_end + extension_length
        return False

    def _suffix_blocked(self, token: int, data: bytes, end: int) -> tuple[bool, int]:
        """Whether taking ``token`` (ending at ``end``) would hide a better merge: a suffix on
        the right spine of its merge tree merges with a token that starts the rest of the word
        at a lower rank than the token's own, before that suffix is merged inside the token.
        With the token's effective rank when blocked (the merges the choice defers)."""
        n = len(data)
        if end >= n:
            return False, 0
        split, rank_of, merge, reachable = self._split, self._rank, self._merge, self._reachable
        token_rank = rank_of[token]
        if token_rank <= 1:
            return False, 0
        # The right spine's suffixes, with the rank at which each is merged into its parent;
        # the walk stops at a decomposition rank BPE cannot reach (its suffixes are not real).
        suffixes: list[tuple[int, int]] = []
        current = token
        while len(suffixes) < SUFFIX_CAPACITY and split[current][0] != current:
            left, right = split[current]
            if self._boundary_blocked(left, right, current) or not (reachable[left] and reachable[right]):
                break  # iree_tokenizer_bpe_is_decomposition_reachable
            suffixes.append((right, rank_of[current]))
            current = right
        if not suffixes:
            return False, 0
        for size, prefix_token in self._walk(data, end):
            if prefix_token is None:
                continue
            i = end + size - 1
            for suffix, consumed_at in suffixes:
                found = merge.get((suffix, prefix_token))
                if found is None:
                    continue
                merge_rank = found[0] + 1
                if merge_rank >= token_rank or merge_rank >= consumed_at:
                    continue
                if suffix == prefix_token:
                    continue  # a repeating pattern: a shorter token would be blocked the same way
                if self._suffix_merge_preempted(prefix_token, found[0], data, i + 1):
                    continue
                # A merged prefix must be able to form here: its last leaf not taken to the right first.
                if rank_of[prefix_token] > 1 and i + 1 < n:
                    if self._consumed_rightward(self._leaf(prefix_token, 1), data, i + 1,
                                                self._consumed_rank(prefix_token, 1)):
                        continue
                return True, token_rank
        return False, 0

    # --- The window path (bpe_window.c), for words longer than max_backtrack_bytes ---
    def _window(self, data: bytes) -> list[int]:
        """Rank BPE over a sliding window: each byte's token is pushed with its merge candidate
        on a min-heap (rank, then start byte). Once the front token ends ``max_token_length``
        bytes behind the current byte, every pending merge in the window is applied (merges at
        its right edge too, before the bytes after it are seen: so this is not rank BPE) and the
        front is emitted if still behind. At the end the rest is merged and emitted."""
        merge, length = self._merge, self.max_token_length
        window: list[list[int]] = []  # [token, start byte, end byte], sorted by start
        heap: list[tuple[int, int]] = []  # (rank, start byte of the left token)
        out: list[int] = []

        def add_candidate(index: int) -> None:
            if 0 <= index < len(window) - 1 and window[index][0] >= 0 and window[index + 1][0] >= 0:
                found = merge.get((window[index][0], window[index + 1][0]))
                if found is not None:
                    heapq.heappush(heap, (found[0], window[index][1]))

        def apply_pending() -> None:
            while heap:
                rank, start = heapq.heappop(heap)
                index = next((k for k, w in enumerate(window) if w[1] == start), -1)
                if index < 0 or index + 1 >= len(window):
                    continue  # stale: the token is gone or has no right neighbour
                left, right = window[index], window[index + 1]
                found = merge.get((left[0], right[0]))
                if found is None or found[0] != rank:
                    continue  # stale: the pair changed
                left[0], left[2] = found[1], right[2]
                del window[index + 1]
                add_candidate(index - 1)
                add_candidate(index)

        position = 0
        while position < len(data):
            token, token_length = self._byte_token[data[position]], 1
            if token < 0:
                token, token_length = self._longest_match(data, position)
                if token < 0:
                    position += 1  # no token and no unk: the byte is dropped
                    continue
            window.append([token, position, position + token_length])
            add_candidate(len(window) - 2)
            position += token_length
            # Emit the frozen front tokens (bpe_window.c: iree_tokenizer_bpe_emit_frozen_tokens).
            while window and window[0][2] + length <= position:
                apply_pending()
                if window[0][2] + length > position:
                    break
                out.append(window.pop(0)[0])
        apply_pending()
        return out + [w[0] for w in window]
