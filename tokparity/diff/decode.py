"""Decoding: the same ids turned back into text by two implementations.

``compare --decode`` asks every backend that agrees with the oracle on a case's ids to decode
those ids too, and compares the text with the oracle's decoding. Two classes come from here:

``decode-cleanup``    the texts differ only in spaces before punctuation or inside contractions:
                      one side "cleans up tokenization spaces" (``"hello !"`` -> ``"hello!"``),
                      as transformers' ``clean_up_tokenization_spaces`` and llama.cpp's
                      ``clean_spaces`` do and tokenizers' raw decoders do not (tokenizers #1543).
``decode-roundtrip``  any other difference; the evidence says which side gives the input back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What clean_up_tokenization_spaces removes (transformers' list): a space before . ? ! , and
# before the English contractions 'm 's 've 're n't, and the space inside " ' ".
_CLEANUP = re.compile(r" (?=[.?!,]|'(?:m|s|ve|re)\b|n't\b)| (?=' )")


def cleaned(text: str) -> str:
    """``text`` as a cleaning decoder would give it."""
    return _CLEANUP.sub("", text)


@dataclass
class DecodeVerdict:
    cls: str
    evidence: str


def classify_decode(text: str, oracle_text: str, backend_text: str) -> DecodeVerdict:
    """Why ``backend_text`` differs from ``oracle_text`` (the same ids decoded on both sides);
    ``text`` is the case's input."""
    if cleaned(oracle_text) == cleaned(backend_text):
        side = "backend" if len(backend_text) < len(oracle_text) else "oracle"
        return DecodeVerdict("decode-cleanup", f"the decoded texts differ only in spaces before punctuation: the {side} "
                                               f"cleans them up (oracle {oracle_text[:80]!r} vs backend "
                                               f"{backend_text[:80]!r})")
    back = [name for name, t in (("oracle", oracle_text), ("backend", backend_text)) if t == text]
    says = f"only the {back[0]} gives the input back" if back else "neither gives the input back"
    return DecodeVerdict("decode-roundtrip", f"the same ids decode differently, {says}: oracle {oracle_text[:80]!r} vs "
                                             f"backend {backend_text[:80]!r}")
