"""Converters between tokenizer file formats: ``convert(src, to, out) -> ConversionResult``.

    tokenizer.json (+ tokenizer_config.json) ──► GGUF            (to_gguf.hf_json_to_gguf)
    SentencePiece .model                    ──► GGUF            (to_gguf.spm_model_to_gguf)
    GGUF (llama / t5)                       ──► .model          (to_spm.gguf_to_spm_model)
    SentencePiece .model                    ──► tokenizer.json  (to_hf.spm_model_to_hf_json)
    RWKV World rwkv_vocab_*.txt             ──► GGUF            (to_gguf.rwkv_vocab_to_gguf)

Each converter is a pure function of its input file: it writes one output file and returns the
list of what it could not carry over, one ``ConversionWarning`` per lost or guessed field
(``add_bos_token: a .model has no field for it``). Nothing is dropped silently; a conversion
that cannot be done at all raises ``TokparityError`` before writing anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tokparity.convert.base import ConversionWarning
from tokparity.errors import TokparityError
from tokparity.whole_files import write_whole

TARGETS = ("gguf", "spm", "hf")

# (source format as detect_format names it, target) -> "module:function"
DIRECTIONS = {
    ("hf-json", "gguf"): "tokparity.convert.to_gguf:hf_json_to_gguf",
    ("spm-model", "gguf"): "tokparity.convert.to_gguf:spm_model_to_gguf",
    ("gguf", "spm"): "tokparity.convert.to_spm:gguf_to_spm_model",
    ("spm-model", "hf"): "tokparity.convert.to_hf:spm_model_to_hf_json",
    ("rwkv-vocab", "gguf"): "tokparity.convert.to_gguf:rwkv_vocab_to_gguf",
}


@dataclass
class ConversionResult:
    out_path: Path
    warnings: list[ConversionWarning] = field(default_factory=list)


def supported() -> list[str]:
    names = {"hf-json": "tokenizer.json", "spm-model": ".model", "gguf": "gguf", "rwkv-vocab": "rwkv_vocab.txt"}
    return [f"{names[s]} -> {t}" for s, t in DIRECTIONS]


def convert(src: str | os.PathLike, to: str, out: str | os.PathLike) -> ConversionResult:
    """Convert the tokenizer file ``src`` to format ``to`` (gguf, spm or hf), written to ``out``."""
    from tokparity.vocab import detect_format

    if to not in TARGETS:
        raise TokparityError(f"unknown target format {to!r}; known: {', '.join(TARGETS)}")
    src = Path(src)
    fmt = detect_format(src)
    target = DIRECTIONS.get((fmt, to))
    if target is None:
        raise TokparityError(f"{src}: cannot convert {fmt} to {to}; supported: {', '.join(supported())}")
    out = Path(out)
    if out.resolve() == src.resolve():
        raise TokparityError(f"{out}: the output would overwrite the input; choose another -o path")
    if out.parent and not out.parent.is_dir():
        raise TokparityError(f"{out}: folder {out.parent} does not exist")
    module_name, func_name = target.split(":")
    import importlib

    func = getattr(importlib.import_module(module_name), func_name)
    warnings = _write_whole(out, lambda partial: func(src, partial))
    return ConversionResult(out, list(warnings))


def _write_whole(out: Path, write):
    """``write(path)`` to a fresh temporary name beside ``out``, renamed to ``out`` once complete
    (tokparity.whole_files): a full disk or an interruption leaves ``out`` as it was."""
    try:
        return write_whole(out, write, suffix=".partial")
    except OSError as e:  # ENOSPC, EFBIG, EACCES, …
        raise TokparityError(f"{out}: cannot write it ({e.strerror or e}); nothing written") from None
