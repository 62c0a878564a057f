"""The ``rwkv`` backend: the ``rwkv`` package's ``TRIE_TOKENIZER`` on an RWKV World vocabulary.

It is the library RWKV World models were trained with, so it is the oracle of a model whose
vocabulary is an ``rwkv_vocab`` file. Only the tokenizer module is imported
(``rwkv.rwkv_tokenizer``, plain Python): the package's model code needs torch, the tokenizer
does not.

The package reads its vocabulary with ``eval`` on every line. A file is therefore read by
tokparity's own loader first, which evaluates nothing (``ast.literal_eval``) and refuses any line
that is not a literal; only a file that passed is handed to the package.

Quirks, as the package has them: no BOS/EOS and no special tokens (``add_special`` and
``parse_special`` change nothing); id 0 (end of text) is not in its vocabulary, so it cannot
decode it; a byte no token starts with would stop it with an error (RWKV World has all 256).
"""

from __future__ import annotations

from importlib import metadata

from tokparity.backends.base import Backend
from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.vocab import load_vocab
from tokparity.zoo import ModelFiles


class RwkvBackend(Backend):
    name = "rwkv"

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"rwkv backend: unknown option(s) {', '.join(sorted(opts))}")
        path = model.path("rwkv_vocab")
        if path is None:
            raise TokparityError(f"model {model.name}: the rwkv backend needs an RWKV vocabulary (rwkv_vocab_*.txt), "
                                 f"and it has none (it has: {', '.join(model.files) or 'nothing'})")
        load_vocab(path, "rwkv-vocab")  # refuses what is not a literal, before the package evals the file
        from rwkv.rwkv_tokenizer import TRIE_TOKENIZER

        self.path = path
        try:
            self.tokenizer = TRIE_TOKENIZER(str(path))
        except (AssertionError, ValueError, OSError) as e:
            raise BadModelFile(path, f"the rwkv package could not load it ({type(e).__name__}: {e})") from None

    @property
    def version(self) -> str:
        return metadata.version("rwkv")

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        data = text.encode("utf-8")
        try:
            return self.tokenizer.encodeBytes(data)
        except UnboundLocalError:  # find_longest found no token at all: the package's own failure
            raise ValueError("the rwkv package found no token for a byte of this text (find_longest: "
                             "UnboundLocalError)") from None

    decode_switches = frozenset({"skip_special", "clean_up=off"})  # (its vocabulary has no special tokens)

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        # decodeBytes, read with U+FFFD for bytes that are not UTF-8 (the package's ``decode``
        # answers one U+FFFD for the whole text then).
        return b"".join(self._bytes(i) for i in ids).decode("utf-8", "replace")

    def pieces(self, ids: list[int]) -> list[str]:
        return [self._bytes(i).decode("utf-8", "surrogateescape") for i in ids]

    def _bytes(self, token_id: int) -> bytes:
        try:
            return self.tokenizer.idx2token[token_id]
        except KeyError:
            raise ValueError(f"token id {token_id} is not in the rwkv package's vocabulary") from None
