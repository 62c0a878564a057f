"""Texts the reference agreement tests run over (imported by the tests of this folder)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from tokparity.zoo import load_manifest, resolve_model, zoo_text
from tokparity.zoo.golden import read_golden

CORPORA = Path(__file__).resolve().parents[2] / "corpora"

# Hand-written texts that have broken tokenizers before: whitespace runs, special-token text,
# emoji sequences, scripts without spaces, ligatures and full-width forms, control characters.
NASTY = [
    "", " ", "  ", "   ", "\t", "\n", "\n\n", " \n ", "\r\n", "a  b", "a   b", "  leading", "trailing  ",
    "\t\t\t\t\t\tsix tabs", "x\u3000y", "\u00a0nbsp\u2009thin\u200bzero", "emoji 🦙🤗👨‍👩‍👧 ok", "🇯🇵🇫🇷",
    "ÅÄÖ café naïve", "Kantō Tōkyō", "日本語のテキスト、東京都。", "Привет, мир!", "مرحبا بالعالم", "नमस्ते दुनिया",
    "ﬁ ½ ｱ Ａ ① ㍻", "<s>hi</s>", "<|endoftext|>x<|im_start|>", "<unk><mask> [MASK][CLS]", "a\r\nb",
    "\u2029\uA3E4", "don't I'LL 'Ve we'Re", "1234567890 3.14159 1,000,000", "   \n\n\n  x", "\x00\x01\x1c\x1f\x7f",
    "\ufffd", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛", "Ǆ ǅ ǆ İ ß ẞ", "e\u0301 a\u0308 combining", "Führer", " Việt", "[toxicity=0]",
    "▁already▁escaped", "<0x0A> <0xFF>", "Hello world", "    def f(x):\n        return x  # comment\n",
]


def pooled_texts() -> list[str]:
    """The .inp texts of every zoo model, pooled and de-duplicated, then NASTY."""
    return _pooled()


@lru_cache(maxsize=1)
def _pooled() -> list[str]:
    texts: list[str] = []
    for name, m in load_manifest().models.items():
        if "golden_inp" in m.files:
            files = resolve_model(name).files
            texts += [c.text for c in read_golden(files["golden_inp"], files["golden_out"])]
    return list(dict.fromkeys(texts + NASTY))


@lru_cache(maxsize=1)
def botchan_lines() -> list[str]:
    return zoo_text("botchan").read_text("utf-8").splitlines()


@lru_cache(maxsize=1)
def corpus_texts() -> list[str]:
    """multilingual.jsonl and edge.jsonl when the corpora issue has written them."""
    texts = []
    for name in ("multilingual.jsonl", "edge.jsonl"):
        path = CORPORA / name
        if path.is_file():
            for line in path.read_text("utf-8").splitlines():
                if line.strip():
                    texts.append(json.loads(line)["text"])
    return texts
