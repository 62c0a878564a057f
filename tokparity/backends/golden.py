"""The ``golden`` backend: the expected ids of llama.cpp's ``ggml-vocab-*.gguf.inp/.out``.

Those ids were made with the original Hugging Face tokenizers, add_special off, so this backend
answers only for the texts in the ``.inp`` and only with add_special off; anything else raises
``NotCovered``, which the runner records as ``skipped`` (never as a mismatch). ``parse_special``
is not part of the question: the files were made with one setting and their texts hold no
special-token text to tell the two apart.

``pieces`` and ``decode`` come from the model's vocabulary (its GGUF, read by tokparity), with
tokparity's reference decoder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tokparity.backends.base import Backend
from tokparity.errors import NotCovered, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.zoo import ModelFiles
from tokparity.zoo.golden import GoldenCase, read_golden

if TYPE_CHECKING:
    from tokparity.reference import RefTokenizer
    from tokparity.vocab import Vocab


class GoldenBackend(Backend):
    name = "golden"

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"golden backend: unknown option(s) {', '.join(sorted(opts))}")
        inp, out = model.path("golden_inp"), model.path("golden_out")
        if inp is None or out is None:
            raise TokparityError(f"model {model.name}: the golden backend needs llama.cpp's .gguf.inp and "
                                 ".gguf.out files beside the GGUF, and this model has none")
        self.model = model
        self.out_path = Path(out)
        self.cases: list[GoldenCase] = read_golden(inp, out)
        self._ids: dict[str, list[int]] = {}
        for case in self.cases:  # a text listed twice keeps its first ids, as a reader of the file would
            self._ids.setdefault(case.text, list(case.ids))
        self._vocab: Vocab | None = None
        self._ref: RefTokenizer | None = None

    @property
    def version(self) -> str:
        return self.out_path.name  # the data is the version: llama.cpp's test file it came from

    def texts(self) -> list[str]:
        """The texts this backend can answer, in file order."""
        return [c.text for c in self.cases]

    def covers(self, text: str, add_special: bool = False) -> bool:
        return not add_special and text in self._ids

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        if add_special:
            raise NotCovered(f"golden ids were made with add_special off ({self.out_path.name})")
        ids = self._ids.get(text)
        if ids is None:
            raise NotCovered(f"no golden ids for this text ({self.out_path.name} has {len(self._ids)} texts)")
        return list(ids)

    def _vocabulary(self):
        if self._vocab is None:
            from tokparity.vocab import load_vocab
            self._vocab = load_vocab(self.model.primary[1])
        return self._vocab

    def pieces(self, ids: list[int]) -> list[str]:
        tokens = self._vocabulary().tokens
        for i in ids:
            if not 0 <= i < len(tokens):
                raise ValueError(f"token id {i} is outside the vocabulary (0..{len(tokens) - 1})")
        return [tokens[i] for i in ids]

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        if self._ref is None:
            try:
                from tokparity.reference import RefTokenizer
                self._ref = RefTokenizer(self._vocabulary())
            except (ImportError, TokparityError) as e:
                raise NotImplementedError(f"golden: decoding needs tokparity's reference decoder ({e})") from None
        return self._ref.decode(list(ids))
