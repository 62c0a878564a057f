"""Decoding: the same ids turned back into text by two implementations.

``compare --decode`` asks every backend that agrees with the oracle on a case's ids to decode
those ids too, and compares the text with the oracle's decoding. Two classes come from here:

``decode-cleanup``    the texts differ only in spaces before punctuation or inside contractions:
                      one side "cleans up tokenization spaces" (``"hello !"`` -> ``"hello!"``),
                      as transformers' ``clean_up_tokenization_spaces`` and llama.cpp's
                      ``clean_spaces`` do and tokenizers' raw decoders do not (tokenizers #1543).
``decode-roundtrip``  any other difference; the evidence says which side gives the input back.

A decoder that fails instead of answering (a ``cmd:`` engine that hangs or dies on the decode
request) is no round-trip finding: its case is a ``timeout`` or a ``crash``, as when encoding.
"""

from __future__ import annotations

from dataclasses import dataclass

from tokparity.backends.base import CaseFailure

# SentencePiece's DecodeIds renders <unk> as this (TrainerSpec.unk_surface, kDefaultUnknownSymbol),
# llama.cpp and tokenizers as the token's own text.
UNK_SURFACE = " \u2047 "

# What transformers' clean_up_tokenization does, in its order (str.replace, one after the other):
# the space before . ? ! , and before the contractions n't 'm 's 've 're goes, and " ' " loses
# both its spaces ("don ' t" -> "don't").
_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def cleaned(text: str) -> str:
    """``text`` as a cleaning decoder would give it."""
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text


@dataclass
class DecodeVerdict:
    cls: str
    evidence: str


def classify_decode_failure(oracle: str, oracle_text: str | CaseFailure, backend: str,
                             backend_text: str | CaseFailure) -> DecodeVerdict | None:
    """When decoding itself failed on either side (``oracle``'s first): ``timeout`` or ``crash``
    (any other failure, an exception included, is a crash of the decoder), with its detail."""
    for side, result in ((f"the oracle {oracle}", oracle_text), (backend, backend_text)):
        if isinstance(result, CaseFailure):
            cls = result.status if result.status in ("crash", "timeout") else "crash"
            return DecodeVerdict(cls, f"decoding the ids both sides agree on failed on {side}'s side: "
                                      f"{result.detail or result.status}")
    return None


def classify_decode(text: str, oracle_text: str, backend_text: str, unk: str | None = None) -> DecodeVerdict:
    """Why ``backend_text`` differs from ``oracle_text`` (the same ids decoded on both sides);
    ``text`` is the case's input, ``unk`` the text of the vocabulary's unknown token."""
    if cleaned(oracle_text) == cleaned(backend_text):
        side = "backend" if len(backend_text) < len(oracle_text) else "oracle"
        return DecodeVerdict("decode-cleanup", f"the decoded texts differ only in spaces before punctuation: the {side} "
                                               f"cleans them up (oracle {oracle_text[:80]!r} vs backend "
                                               f"{backend_text[:80]!r})")
    if unk and UNK_SURFACE in oracle_text + backend_text and unk in oracle_text + backend_text:
        marked = [t.replace(UNK_SURFACE, "\0").replace(unk, "\0") for t in (oracle_text, backend_text)]
        if marked[0] == marked[1]:
            side = "oracle" if UNK_SURFACE in oracle_text else "backend"
            return DecodeVerdict("decode-roundtrip", f"the ids agree, but the unknown token decodes as {UNK_SURFACE!r} "
                                                     f"(SentencePiece's unk_surface) on the {side}'s side and as {unk!r} "
                                                     f"on the other's: oracle {oracle_text[:80]!r} vs backend "
                                                     f"{backend_text[:80]!r}")
    back = [name for name, t in (("oracle", oracle_text), ("backend", backend_text)) if t == text]
    says = f"only the {back[0]} gives the input back" if back else "neither gives the input back"
    if oracle_text.lstrip(" ") == backend_text.lstrip(" "):
        lead_a, lead_b = (len(t) - len(t.lstrip(" ")) for t in (oracle_text, backend_text))
        return DecodeVerdict("decode-roundtrip", f"the decoded texts differ only in leading spaces, {lead_a} on the "
                                                 f"oracle's side and {lead_b} on the backend's ({says}; the input "
                                                 f"starts with {_leading_whitespace(text)!r})")
    return DecodeVerdict("decode-roundtrip", f"the same ids decode differently, {says}: oracle {oracle_text[:80]!r} vs "
                                             f"backend {backend_text[:80]!r}")


def _leading_whitespace(text: str) -> str:
    return text[:len(text) - len(text.lstrip(" \u2581"))]
