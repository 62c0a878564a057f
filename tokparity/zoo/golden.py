"""llama.cpp's tokenizer test pairs: ``ggml-vocab-*.gguf.inp`` and ``.out``.

The ``.inp`` holds texts, each followed by ``\\n__ggml_vocab_test__\\n``; the ``.out`` holds one
line per text with the ids the original Hugging Face tokenizer gave (add_special off), as
space-separated integers (an empty line for the empty text). This is what llama.cpp's own
``test-tokenizer-0`` checks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tokparity.errors import BadModelFile

SEPARATOR = "\n__ggml_vocab_test__\n"


@dataclass(frozen=True)
class GoldenCase:
    index: int
    text: str
    ids: tuple[int, ...]


def read_golden(inp: str | os.PathLike, out: str | os.PathLike) -> list[GoldenCase]:
    inp, out = Path(inp), Path(out)
    try:
        text = inp.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadModelFile(inp, f"not valid UTF-8 at byte {e.start}") from None
    except FileNotFoundError:
        raise BadModelFile(inp, "no such file") from None
    texts = text.split(SEPARATOR)
    if texts and texts[-1] == "":
        texts.pop()
    try:
        lines = out.read_text("utf-8").split("\n")
    except FileNotFoundError:
        raise BadModelFile(out, "no such file") from None
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(texts):
        raise BadModelFile(out, f"has {len(lines)} lines of ids for {len(texts)} texts in {inp.name}")
    cases = []
    for i, (t, line) in enumerate(zip(texts, lines)):
        try:
            ids = tuple(int(x) for x in line.split())
        except ValueError:
            raise BadModelFile(out, f"line {i + 1} is not a list of integer ids: {line[:60]!r}") from None
        cases.append(GoldenCase(i, t, ids))
    return cases
