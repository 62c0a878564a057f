"""Helpers of the converter tests: the pooled texts, llama.cpp on a GGUF, and agreement counts.

Every converter test asks the same question: does the library reading the converted file give
the same ids as the library reading the original, over the same texts? The texts are llama.cpp's
golden ``.inp`` texts of every zoo model (pooled, de-duplicated), the first lines of botchan.txt,
and the committed corpora ``multilingual.jsonl`` and ``edge.jsonl`` when they exist.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tokparity.zoo import load_manifest, resolve_model, zoo_text
from tokparity.zoo.golden import read_golden

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
BOTCHAN_LINES = 300


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no library can be given it as UTF-8
        return False
    return True


def pooled_texts() -> dict[str, str]:
    """``{case_id: text}``: golden texts of all zoo models, botchan lines, corpora records."""
    texts: dict[str, str] = {}
    seen: set[str] = set()

    def add(case_id: str, text: str) -> None:
        if text not in seen and _encodable(text):
            seen.add(text)
            texts[case_id] = text

    for name, model in load_manifest().models.items():
        if "golden_inp" in model.files and "golden_out" in model.files:
            files = resolve_model(name).files
            for case in read_golden(files["golden_inp"], files["golden_out"]):
                add(f"golden:{name}:{case.index}", case.text)
    lines = [ln for ln in zoo_text("botchan").read_text("utf-8").splitlines() if ln.strip()]
    for i, line in enumerate(lines[:BOTCHAN_LINES]):
        add(f"botchan:{i}", line)
    for corpus in ("multilingual", "edge"):
        path = CORPORA / f"{corpus}.jsonl"
        if path.is_file():
            for n, line in enumerate(path.read_text("utf-8").splitlines()):
                if line.strip():
                    record = json.loads(line)
                    add(f"{corpus}:{record.get('id', n)}", record["text"])
    return texts


class LlamaCpp:
    """llama.cpp on a GGUF through llama-cpp-python's low-level API (vocab only)."""

    def __init__(self, path):
        import llama_cpp

        self._lib = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.cap = 1024
        self.buf = (llama_cpp.llama_token * self.cap)()

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        data = text.encode("utf-8")
        while True:
            n = self._lib.llama_tokenize(self.vocab, data, len(data), self.buf, self.cap, add_special, parse_special)
            if n >= 0:
                return list(self.buf[:n])
            self.cap = -n + 16
            self.buf = (self._lib.llama_token * self.cap)()


@dataclass
class Agreement:
    """How two tokenizers compare over a set of texts."""

    total: int = 0
    disagree: dict[str, tuple[str, list[int], list[int]]] = field(default_factory=dict)

    @property
    def agree(self) -> int:
        return self.total - len(self.disagree)

    def __str__(self) -> str:
        return f"{self.agree} of {self.total} agree"


def agreement(texts: dict[str, str], a, b) -> Agreement:
    """Run ``a(text)`` and ``b(text)`` on every text; keep the disagreements."""
    result = Agreement()
    for case_id, text in texts.items():
        ids_a, ids_b = a(text), b(text)
        result.total += 1
        if ids_a != ids_b:
            result.disagree[case_id] = (text, ids_a, ids_b)
    return result
