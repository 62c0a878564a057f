"""The ``ref`` backend: tokparity's own pure-Python tokenizers (tokparity.reference)."""

from __future__ import annotations

import tokparity
from tokparity.backends.base import Backend, in_steps
from tokparity.errors import BackendTimeout, TokparityError
from tokparity.reference import reference_of
from tokparity.reference.decode import AS_FILES_SAY, EVERY_SWITCH, DecodeSettings
from tokparity.vocab import load_vocab
from tokparity.zoo import ModelFiles


class RefBackend(Backend):
    """Reads the model's primary file (GGUF first, then ``.model``, then ``tokenizer.json``) and
    tokenizes it the way that file's original library does."""

    name = "ref"

    def __init__(self, model: ModelFiles, **opts):
        role = opts.pop("role", None)
        if opts:
            raise TokparityError(f"ref backend: unknown option(s) {', '.join(sorted(opts))} (known: role)")
        if role is not None:
            path = model.path(role)
            if path is None:
                raise TokparityError(f"model {model.name}: no {role} file for the ref backend")
            self.role, self.path = role, path
        else:
            self.role, self.path = model.primary
        self.model = model
        self.vocab = load_vocab(self.path)
        self.tokenizer = reference_of(self.vocab)

    @property
    def version(self) -> str:
        return tokparity.__version__

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        try:
            return self.tokenizer.encode(text, add_special, parse_special)
        except TimeoutError as e:  # a tokenizer.json regex that backtracks for ever: this case times out
            raise BackendTimeout(f"ref: {e}") from None

    @property
    def decode_switches(self) -> frozenset[str]:  # type: ignore[override]
        """Every setting; llama.cpp's remove_special on llama.cpp's own files only."""
        return EVERY_SWITCH if self.tokenizer.flavour == "llama.cpp" else EVERY_SWITCH - {"remove_special"}

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        # Control and unknown tokens as their text, as the llama.cpp backend decodes (unparse_special):
        # '[UNK]' in a BERT text, not nothing.
        return self.tokenizer.decode_as(ids, settings)

    def pieces(self, ids: list[int]) -> list[str]:
        return self.tokenizer.pieces(ids)

    @property
    def n_vocab(self) -> int:
        return self.vocab.size

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        return in_steps(self.tokenizer.stream(ids, prompt, special=not settings.skip_special), step)

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        return list(self.tokenizer.piece_bytes(ids))

    def normalize(self, text: str) -> str:
        return self.tokenizer.normalize(text)

    def pre_tokenize(self, text: str) -> list[str]:
        return self.tokenizer.pre_tokenize(text)

    def trace(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[str]:
        return self.tokenizer.trace(text, add_special, parse_special)
