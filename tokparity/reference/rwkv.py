"""RWKV World: greedy longest match over the UTF-8 bytes of the text, with a trie.

The RWKV World tokenizer has no normalizer, no pre-tokenizer and no merges. Its vocabulary holds
every single byte and 65,273 longer byte strings; encoding walks the text from its first byte,
takes the longest vocabulary entry that starts there, and goes on after it:

    >>> trie = ByteTrie({b"a": 1, b"b": 2, b"ab": 3, b"abc": 4})
    >>> trie.split(b"abab")
    [3, 3]
    >>> trie.split(b"abcb")            # "abc" is longer than "ab"
    [4, 2]

No look-ahead: ``"abc" + "d"`` wins over ``"ab" + "cd"`` even when that would give fewer tokens.

Two implementations read the same vocabulary, and differ at the edges only:

* the ``rwkv`` package (``TRIE_TOKENIZER``, the model's own library): the trie holds the file's
  tokens; a byte no token starts with stops encoding with an error (none exists in RWKV World,
  which has all 256 bytes); there are no special tokens. ``RwkvPipeline`` below.
* llama.cpp (``llm_tokenizer_rwkv``): the trie holds *every* token of the GGUF, control and unused
  ones included, unescaped from the text its converter wrote (``llama_unescape_rwkv_token``),
  and a byte no token starts with becomes the unk id. ``LlamaRwkv`` in llama.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tokparity.errors import TokparityError
from tokparity.reference.decode import bytes_to_text
from tokparity.vocab.model import TokenType, Vocab

END = -1  # the key under which a trie node keeps the id of the token that ends there


class ByteTrie:
    """Byte strings -> ids; each node is a dict from a byte (0..255) to the next node, and
    ``node[END]`` is the id of the token that ends at it. Inserting a key twice keeps the last
    id, as both the rwkv package (a dict built in id order) and llama.cpp (``naive_trie``) do."""

    def __init__(self, tokens: Mapping[bytes, int] | Iterable[tuple[bytes, int]] = ()):
        self.root: dict[int, Any] = {}
        items = tokens.items() if isinstance(tokens, Mapping) else tokens
        for key, token_id in items:
            self.insert(key, token_id)

    def insert(self, key: bytes, token_id: int) -> None:
        if not key:
            return  # an empty token matches nothing (both implementations never look at the root)
        node = self.root
        for b in key:
            node = node.setdefault(b, {})
        node[END] = token_id  # (a node's values are nodes, except this one)

    def longest(self, data: bytes, start: int) -> tuple[int, int] | None:
        """``(end, id)`` of the longest token that ``data[start:]`` starts with, or ``None``."""
        node: dict[int, Any] | None = self.root
        found, pos = None, start
        while pos < len(data) and node is not None:
            node = node.get(data[pos])
            if node is None:
                break
            pos += 1
            if END in node:
                found = (pos, node[END])
        return found

    def split(self, data: bytes, no_match=None) -> list[int]:
        """The ids of ``data``, longest match first. Where no token starts, ``no_match(data, pos)``
        gives ``(ids, next_pos)``; without it that is an error."""
        out: list[int] = []
        pos = 0
        while pos < len(data):
            hit = self.longest(data, pos)
            if hit is None:
                if no_match is None:
                    raise TokparityError(f"no token of the vocabulary starts with byte 0x{data[pos]:02x} "
                                         f"(at byte {pos}); the rwkv package stops with an error here")
                ids, pos = no_match(data, pos)
                out += ids
                continue
            pos, token_id = hit
            out.append(token_id)
        return out


class RwkvPipeline:
    """The rwkv package's ``TRIE_TOKENIZER`` on a vocabulary read from its own file."""

    algorithm = "rwkv"

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        # The file's tokens (the NORMAL ones; id 0 is tokparity's stand-in for end of text).
        self.token_bytes = [t.encode("utf-8", "surrogateescape") for t in vocab.tokens]
        self.trie = ByteTrie((b, i) for i, b in enumerate(self.token_bytes) if vocab.type_of(i) == TokenType.NORMAL)

    def matching_every_token(self) -> RwkvPipeline:
        """A copy whose trie also holds the tokens that are not the file's (id 0, ``<s>``), as
        llama.cpp's RWKV trie holds every token of its GGUF: ``"<s>"`` in a text is then id 0.
        What a diagnosis runs to name that divergence (``specials.parse``)."""
        import copy
        q = copy.copy(self)
        q.trie = ByteTrie((b, i) for i, b in enumerate(self.token_bytes))
        return q

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        # The package adds no BOS/EOS and knows no special tokens: both flags change nothing.
        return self.trie.split(text.encode("utf-8"))

    def decode(self, ids: list[int], errors: str = "replace") -> str:
        for i in ids:
            if not 0 <= i < self.vocab.size:
                raise TokparityError(f"token id {i} is outside the vocabulary (0..{self.vocab.size - 1})")
        # ``decodeBytes``: the tokens' bytes joined (the package's ``decode`` answers a lone U+FFFD
        # for the whole text when they are not UTF-8; here each bad byte is shown, or raised).
        return bytes_to_text(b"".join(self.token_bytes[i] for i in ids), errors)

    def normalize(self, text: str) -> str:
        return text  # no normalizer

    def pre_tokenize(self, text: str) -> list[str]:
        return [text] if text else []  # no pre-tokenizer: the whole text is one span
