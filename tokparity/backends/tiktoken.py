"""The ``tiktoken`` backend: OpenAI's tiktoken library on a tiktoken encoding file.

The file gives the ranks; the split regex and the special tokens come from the same file where
it holds them (js-tiktoken encoder JSON, Mistral tekken JSON) or are the ones tokparity's loader
assumes for a plain rank file (GPT-2's regex, ``<|endoftext|>`` after the last rank), so the
library and the reference read one encoding (``tokparity.vocab.tiktoken``).

Quirks, as tiktoken has them:

* ``parse_special`` on reads the specials' text in the input (``allowed_special="all"``); off,
  it is ordinary text (``disallowed_special=()``: tiktoken's default would raise instead).
* ``add_special`` adds nothing: tiktoken has no BOS/EOS of its own.
* A tekken file is encoded as mistral-common's Tekkenizer does it: tiktoken on its ranks (the first
  ``default_vocab_size - default_num_special_tokens``), ids shifted by the number of special
  tokens, whose text is never read from the input; ``add_special`` puts its ``<s>`` first, as the
  Tekkenizer's ``encode(bos=True)`` does.
"""

from __future__ import annotations

import tiktoken

from tokparity.backends.base import Backend
from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.vocab.tiktoken import read_encoding
from tokparity.zoo import ModelFiles


class TiktokenBackend(Backend):
    name = "tiktoken"

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"tiktoken backend: unknown option(s) {', '.join(sorted(opts))} (known: none)")
        path = model.path("tiktoken")
        if path is None:
            raise TokparityError(f"model {model.name}: the tiktoken backend needs a tiktoken encoding file, and it "
                                 f"has none (it has: {', '.join(model.files) or 'nothing'})")
        self.path = path
        spec = read_encoding(path)
        try:
            self.enc = tiktoken.Encoding(name=f"tokparity-{model.name}", pat_str=spec.pattern,
                                         mergeable_ranks={b: r for r, b in spec.ranks.items()},
                                         special_tokens=spec.specials)
        except ValueError as e:  # a regex fancy-regex rejects, ranks and specials that overlap
            raise BadModelFile(path, f"tiktoken could not build the encoding ({e})") from None
        self.offset = spec.offset
        self.reserved = spec.reserved or []
        self.bos = self.reserved.index("<s>") if spec.kind == "tekken" and "<s>" in self.reserved else None
        self.n_vocab = spec.size

    @property
    def version(self) -> str:
        return tiktoken.__version__

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        if parse_special:
            ids = self.enc.encode(text, allowed_special="all", disallowed_special=())
        else:
            ids = self.enc.encode(text, allowed_special=set(), disallowed_special=())
        ids = [i + self.offset for i in ids] if self.offset else ids
        return [self.bos] + ids if add_special and self.bos is not None else ids

    def _token_bytes(self, i: int) -> bytes:
        if not 0 <= i < self.n_vocab:
            raise ValueError(f"token id {i} is outside the vocabulary (0..{self.n_vocab - 1})")
        if i < self.offset:
            return self.reserved[i].encode()
        return self.enc.decode_single_token_bytes(i - self.offset)

    decode_switches = frozenset({"clean_up=off"})  # (its decode has no switch: a special token is its text)

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        return b"".join(self._token_bytes(i) for i in ids).decode("utf-8", errors="replace")

    def pieces(self, ids: list[int]) -> list[str]:
        return [self._token_bytes(i).decode("utf-8", errors="backslashreplace") for i in ids]
