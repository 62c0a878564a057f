"""The ``sentencepiece`` backend: ``SentencePieceProcessor`` on a ``.model``.

Quirks, as SentencePiece has them:

* ``add_special`` adds BOS/EOS only where the file asks for them. A ``.model`` never does (in
  SentencePiece they are options of ``encode``), so on a plain ``.model`` it adds nothing, as
  tokparity's reference does; pass ``add_bos=True`` / ``add_eos=True`` to force them.
* ``parse_special`` has no effect: SentencePiece never matches control-token text in the input
  (``"<s>"`` is three characters), while user-defined pieces are always matched.
* ``normalize`` is SentencePiece's own normalizer (charsmap, whitespace, dummy prefix, ``▁``).
  There is no pre-tokenizer stage to show.
"""

from __future__ import annotations

import sentencepiece

from tokparity.backends.base import Backend
from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.zoo import ModelFiles


class SentencePieceBackend(Backend):
    name = "sentencepiece"

    def __init__(self, model: ModelFiles, add_bos: bool | None = None, add_eos: bool | None = None, **opts):
        if opts:
            raise TokparityError(f"sentencepiece backend: unknown option(s) {', '.join(sorted(opts))} "
                                 "(known: add_bos, add_eos)")
        path = model.path("spm_model")
        if path is None:
            raise TokparityError(f"model {model.name}: the sentencepiece backend needs a SentencePiece .model file, "
                                 f"and it has none (it has: {', '.join(model.files) or 'nothing'})")
        self.path = path
        self.sp = sentencepiece.SentencePieceProcessor()
        try:
            self.sp.Load(model_file=str(path))
        except (OSError, RuntimeError) as e:
            raise BadModelFile(path, f"SentencePiece could not load it ({e})") from None
        # A .model has no field asking for BOS/EOS (tokparity's loader leaves both flags unset), so
        # without the options nothing is added, as SentencePiece's own encode does.
        self.add_bos = bool(add_bos) and self.sp.bos_id() >= 0
        self.add_eos = bool(add_eos) and self.sp.eos_id() >= 0
        self.n_vocab = self.sp.get_piece_size()

    @property
    def version(self) -> str:
        return sentencepiece.__version__

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        return self.sp.encode(text, out_type=int, add_bos=add_special and self.add_bos,
                              add_eos=add_special and self.add_eos)

    # (DecodeIds has no switch: control tokens are always left out, user-defined ones written; it
    # never cleans up)
    decode_switches = frozenset({"skip_special", "clean_up=off"})

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        self._check_ids(ids)
        return self.sp.decode(list(ids))

    def pieces(self, ids: list[int]) -> list[str]:
        self._check_ids(ids)
        return [self.sp.id_to_piece(i) for i in ids]

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        """``id_to_piece`` with ``▁`` a space and ``<0xNN>`` its byte (SentencePiece has no call for
        a token's bytes: this is what a grammar engine reads from it)."""
        from tokparity.reference.decode import spm_piece_bytes
        return [spm_piece_bytes(p) for p in self.pieces(ids)]

    def normalize(self, text: str) -> str:
        return self.sp.normalize(text)

    def _check_ids(self, ids: list[int]) -> None:
        for i in ids:
            if not 0 <= i < self.n_vocab:
                raise ValueError(f"token id {i} is outside the vocabulary (0..{self.n_vocab - 1})")
