"""SentencePiece's ``precompiled_charsmap``: a normalization table compiled to a double array.

The blob that ``.model`` files (NormalizerSpec field 2), tokenizer.json (``Precompiled``) and
GGUFs (``tokenizer.ggml.precompiled_charsmap``) carry is::

    uint32 little-endian   size of the trie in bytes (T)
    T bytes                the trie: T/4 uint32 units of an XOR-compressed double array
    the rest               replacement strings, each ended by a NUL byte

The trie maps input byte strings ("ｱ", "ﬁ", "½") to offsets of replacement strings ("ア",
"fi", "1⁄2"). Each 32-bit unit packs one node (darts-clone's layout, which llama.cpp calls
XCDA)::

    bits 10-30  BASE   (shifted left by 8 more bits when bit 9 is set)
    bits 0-7    LCHECK the byte label that leads to this node (bit 31 kept, so a value
                        unit never passes the label check)
    bit 8       LEAF   this node ends a key; the unit at BASE holds the value
    bits 0-30   VALUE  for a value unit: the offset of the replacement string

Walking a key: start at ``BASE(0)``; for each byte ``c``, go to ``node ^ c``; stop unless its
LCHECK is ``c``; move to ``node ^ BASE(node)``; if the node was a LEAF, remember
(bytes walked, VALUE there) as the longest match so far. Every index is checked against the
array: a malformed blob raises ``TokparityError``, never ``IndexError``.

A table with one key, ``"A"`` to ``"a"``, assembled by hand: the root's BASE is 64, so ``A``
(65) leads to node 64 ^ 65 = 1, whose unit has LCHECK 65, LEAF set and BASE 3; the value sits at
node 1 ^ 3 = 2 and is offset 0 of the strings. ``B`` (66) leads to node 2, whose LCHECK is not 66::

    >>> units = [64 << 10, 3 << 10 | 1 << 8 | 65, 0]
    >>> cm = CharsMap(struct.pack("<4I", 4 * len(units), *units) + b"a\\0")
    >>> cm.longest_match(b"A"), cm.longest_match(b"B")
    ((1, b'a'), None)

On a real table (``nmt_nfkc``, kyoto-ja-unigram's) ``longest_match("ﬁx".encode())`` is
``(3, b'fi')``: the "ﬁ" ligature's three bytes become "fi".
"""

from __future__ import annotations

import struct
from array import array

from tokparity.errors import CharsMapError


class CharsMap:
    def __init__(self, blob: bytes, source: str = "precompiled_charsmap"):
        self.source = source
        if len(blob) <= 4:
            raise CharsMapError(f"{source}: {len(blob)} bytes, too short for the 4-byte trie size; "
                                "the tokenizer file is corrupt")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size >= len(blob) - 4:
            raise CharsMapError(f"{source}: trie size {trie_size} does not fit in the {len(blob)}-byte blob; "
                                "the tokenizer file is corrupt or truncated")
        if trie_size % 4:
            raise CharsMapError(f"{source}: trie size {trie_size} is not a whole number of 4-byte units")
        units = array("I")
        units.frombytes(blob[4:4 + trie_size])
        if struct.pack("=I", 1) != struct.pack("<I", 1):
            units.byteswap()
        self.units = units
        self.strings = bytes(blob[4 + trie_size:])
        if not self.strings or self.strings[-1] != 0:
            raise CharsMapError(f"{source}: the replacement strings are not NUL-terminated; "
                                "the tokenizer file is corrupt or truncated")
        self._replacements: dict[int, bytes] = {}
        self._continuations: set[str] | None = None
        self._continuations_known = False

    # -- one node ------------------------------------------------------------------------------

    def _unit(self, index: int) -> int:
        if not 0 <= index < len(self.units):
            raise CharsMapError(f"{self.source}: trie index {index} outside the {len(self.units)}-unit array; "
                                "the tokenizer file is corrupt")
        return self.units[index]

    @staticmethod
    def _base(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    def replacement(self, offset: int) -> bytes:
        """The NUL-terminated replacement string at ``offset``."""
        found = self._replacements.get(offset)
        if found is None:
            if not 0 <= offset < len(self.strings):
                raise CharsMapError(f"{self.source}: replacement offset {offset} outside the "
                                    f"{len(self.strings)}-byte string table; the tokenizer file is corrupt")
            end = self.strings.index(b"\0", offset)  # found: the table ends with NUL
            found = self._replacements[offset] = self.strings[offset:end]
        return found

    # -- the walk ------------------------------------------------------------------------------

    def shortest_match(self, data: bytes) -> bytes | None:
        """The replacement of the shortest key that is a prefix of ``data`` (darts'
        ``commonPrefixSearch``, first result: what tokenizers' ``Precompiled::transform`` takes)."""
        node = self._base(self._unit(0))
        for c in data:
            node ^= c
            unit = self._unit(node)
            if unit & ((1 << 31) | 0xFF) != c:
                return None
            node ^= self._base(unit)
            if (unit >> 8) & 1:
                return self.replacement(self._unit(node) & ((1 << 31) - 1))
        return None

    def longest_match(self, data: bytes, start: int = 0) -> tuple[int, bytes] | None:
        """The longest key that is a prefix of ``data[start:]``: (its length, its replacement),
        or None. A NUL byte ends the walk, as in llama.cpp."""
        node = self._base(self._unit(0))
        best = None
        for pos in range(start, len(data)):
            c = data[pos]
            if c == 0:
                break
            node ^= c
            unit = self._unit(node)
            if unit & ((1 << 31) | 0xFF) != c:  # LCHECK: not a child labelled c
                break
            node ^= self._base(unit)
            if (unit >> 8) & 1:  # LEAF: the key ends here; its value sits at the new node
                best = (pos - start + 1, self._unit(node) & ((1 << 31) - 1))
        if best is None:
            return None
        return best[0], self.replacement(best[1])

    def continuation_chars(self) -> set[str] | None:
        """Every character that some key holds after its first character (the combining marks,
        dakuten, Hangul jamo, vowel signs of nmt_nfkc), or None if some key ends inside a
        character, where no such set can be trusted. A walk that starts at a character can
        only go past it into one of these.

        Breadth-first over the trie one whole UTF-8 character at a time, vectorized with numpy
        (darts-clone shares the nodes of common suffixes: 225k keys, 15k character boundaries).
        """
        if self._continuations_known:
            return self._continuations
        self._continuations_known = True
        import numpy as np

        units = np.frombuffer(self.units.tobytes(), dtype=np.uint32).astype(np.int64)
        if len(units) == 0:
            self._continuations = set()
            return set()

        def base(u):
            return (u >> 10) << ((u & (1 << 9)) >> 6)

        def children(nodes, labels):
            """(index of the parent, label, child node, child is a LEAF) for every edge."""
            if len(nodes) > 4096:  # bounded memory, whatever the blob holds
                parts = [children(nodes[k:k + 4096], labels) for k in range(0, len(nodes), 4096)]
                return tuple(np.concatenate([part[f] + (k * 4096 if f == 0 else 0)
                                             for k, part in enumerate(parts)]) for f in range(4))
            index = nodes[:, None] ^ labels[None, :]
            inside = (index >= 0) & (index < len(units))
            index = np.where(inside, index, 0)
            unit = units[index]
            hit = inside & ((unit & ((1 << 31) | 0xFF)) == labels[None, :])
            parent, which = np.nonzero(hit)
            unit = unit[parent, which]
            return parent, labels[which], index[parent, which] ^ base(unit), (unit >> 8) & 1

        lead_bytes = np.array([c for c in range(1, 256) if c < 0x80 or 0xC2 <= c <= 0xF4], dtype=np.int64)
        continuation_bytes = np.arange(0x80, 0xC0, dtype=np.int64)
        found: set[str] = set()
        root = int(base(units[0]))
        seen = {root}
        frontier = np.array([root], dtype=np.int64)
        first = True
        while len(frontier):
            _, label, node, _leaf = children(frontier, lead_bytes)
            need = np.select([label < 0x80, label < 0xE0, label < 0xF0], [0, 1, 2], 3)
            code = np.select([label < 0x80, label < 0xE0, label < 0xF0], [label, label & 0x1F, label & 0x0F],
                             label & 0x07)
            ends = []
            while True:
                if len(node) > 4 * len(units):  # a well-formed trie never gets here: treat as irregular
                    self._continuations = None
                    return None
                complete = need == 0
                if not first:
                    found.update(map(chr, code[complete].tolist()))
                ends.append(node[complete])
                node, code, need = node[~complete], code[~complete], need[~complete]
                if not len(node):
                    break
                parent, label, node, leaf = children(node, continuation_bytes)
                code, need = (code[parent] << 6) | (label & 0x3F), need[parent] - 1
                if np.any(leaf[need > 0]):
                    self._continuations = None  # a key ends inside a character
                    return None
            first = False
            fresh = [n for n in np.unique(np.concatenate(ends)).tolist() if n not in seen]
            seen.update(fresh)
            frontier = np.array(fresh, dtype=np.int64)
        self._continuations = found
        return found

    def walk_reach(self, data: bytes) -> int:
        """How many bytes of ``data`` the walk from the root gets through before it stops
        (``len(data)``: all of them, so some key may go on past ``data``)."""
        node = self._base(self._unit(0))
        for pos, c in enumerate(data):
            if c == 0:
                return pos
            node ^= c
            if not 0 <= node < len(self.units):
                return len(data)  # let the real walk report the corrupt index
            unit = self.units[node]
            if unit & ((1 << 31) | 0xFF) != c:
                return pos
            node ^= self._base(unit)
        return len(data)

    def can_extend(self, key: bytes) -> bool:
        """Whether some key longer than ``key`` starts with it (the walk could go on)."""
        node = self._base(self._unit(0))
        for c in key:
            if c == 0:
                return False
            node ^= c
            if not 0 <= node < len(self.units):
                return True  # let the real walk report the corrupt index
            unit = self.units[node]
            if unit & ((1 << 31) | 0xFF) != c:
                return False
            node ^= self._base(unit)
        for c in range(1, 256):
            child = node ^ c
            if not 0 <= child < len(self.units):
                return True
            if self.units[child] & ((1 << 31) | 0xFF) == c:
                return True
        return False
