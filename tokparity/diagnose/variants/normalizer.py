"""The normalizer stage: another Unicode normalization, lower-casing or accent stripping toggled,
or none at all."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import partial

from tokparity.diagnose import nfd_first
from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.charsmap_nfc import table_nfc
from tokparity.diagnose.variants.variant import Variant, is_ugm_or_sp, renormalized, with_pipeline
from tokparity.reference import unicode as uc
from tokparity.reference.hf import HfBpe, HfPipeline
from tokparity.reference.llama import LlamaSpm, LlamaWpm
from tokparity.vocab.token_bytes import printable_bytes, spelt_in_byte_table

_UNICODE_STEPS = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Precompiled", "StripAccents", "BertNormalizer"}


def _normalizer_none(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if is_ugm_or_sp(p):
        return renormalized(c, charsmap=None) if p.normalizer.charsmap is not None else None
    if isinstance(p, HfBpe) and any(k.kind in _UNICODE_STEPS for k in p.normalizer.configs):
        return with_pipeline(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind in _UNICODE_STEPS)))
    if isinstance(p, LlamaWpm) and (p.lowercase or p.strip_accents):
        return with_pipeline(c, fork(p, lowercase=False, strip_accents=False))
    return None


# What ports that "simplify" the charsmap write instead (transformers.js's Precompiled normalizer):
# C0 controls dropped, Unicode spaces, ZWJ/ZWNJ and U+2581 turned into spaces, then NFKC.
_SIMPLIFIED_DROP = re.compile("[\u0001-\u0008\u000b\u000e-\u001f\u007f\u008f\u009f]")
_SIMPLIFIED_SPACE = re.compile("[\t\n\u000c\r\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u2581\u3000"
                               "\ufeff\ufffd]")


def simplified_charsmap(text: str) -> str:
    return unicodedata.normalize("NFKC", _SIMPLIFIED_SPACE.sub(" ", _SIMPLIFIED_DROP.sub("", text)))


class _Nfkc:
    """NFKC from Python's ``unicodedata`` in place of the model's charsmap (``simplified``: with the
    control and space rules ports add around it)."""

    def __init__(self, inner, simplified: bool = False):
        self.inner, self.simplified = inner, simplified

    def normalize(self, text: str) -> str:
        return self.inner.normalize(simplified_charsmap(text) if self.simplified else
                                    unicodedata.normalize("NFKC", text))

    # A second variant of the same case (whitespace.collapse, space.escape, …) rebuilds the
    # normalizer with one setting changed and reads its settings: both go to the SentencePiece
    # normalizer inside, which keeps NFKC in front (without them the pair raised AttributeError
    # and the case lost its cause).
    def replaced(self, **changes) -> _Nfkc:
        return _Nfkc(self.inner.replaced(**changes), self.simplified)

    def __getattr__(self, name: str):
        if name == "inner" or name.startswith("__"):  # (a copy being made has no inner yet)
            raise AttributeError(name)
        return getattr(self.inner, name)


def _normalizer_nfkc(c: Candidate, simplified: bool = False) -> Candidate | None:
    p = c.pipeline
    if is_ugm_or_sp(p) and p.normalizer.charsmap is not None:
        return with_pipeline(c, fork(p, normalizer=_Nfkc(p.normalizer.replaced(charsmap=None), simplified)))
    if simplified:
        return None
    if isinstance(p, HfBpe) and p.normalizer.has("Precompiled"):
        q = fork(p, normalizer=p.normalizer.without(lambda k: k.kind == "Precompiled"))
        return c.replace(pipeline=q, text_maps=c.text_maps + (partial(unicodedata.normalize, "NFKC"),))
    return None


def _unicode_form(form: str, skip: bool, c: Candidate) -> Candidate | None:
    """Apply the form where the model does not (``skip`` False), or skip it where the model's
    normalizer has it (``skip`` True). Each direction is a variant of its own, so that the
    evidence says which one the engine took."""
    p = c.pipeline
    has = isinstance(p, HfBpe) and p.normalizer.has(form)
    if has != skip:
        return None
    if skip:
        return with_pipeline(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind == form)))
    return c.replace(text_maps=c.text_maps + (partial(unicodedata.normalize, form),))  # type: ignore[arg-type]


def _nfkc_added(c: Candidate) -> Candidate | None:
    """NFKC on every input, where the model has no charsmap either (for one, normalizer.nfkc's
    first form puts NFKC in its place)."""
    p = c.pipeline
    if (is_ugm_or_sp(p) and p.normalizer.charsmap is not None) or (isinstance(p, HfBpe) and p.normalizer.has("Precompiled")):
        return None
    return _unicode_form("NFKC", False, c)


def _canonical_step(forms: tuple[str, ...], normalize: Callable[[str], str], c: Candidate) -> Candidate | None:
    """The model's steps of ``forms`` (a tokenizer.json's NFC or NFD) run by ``normalize`` instead:
    llama.cpp's one-code-point NFD (``nfd_first.py``), alone or recomposed as pytorch-tokenizers
    does, or NFC as a table (``charsmap_nfc.py``)."""
    p = c.pipeline
    if not isinstance(p, HfPipeline) or not any(k.kind in forms for k in p.normalizer.configs):
        return None
    return with_pipeline(c, fork(p, normalizer=p.normalizer.replacing(lambda k: k.kind in forms, normalize)))


def _lowercase(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaWpm):
        return with_pipeline(c, fork(p, lowercase=not p.lowercase))
    if isinstance(p, HfBpe) and p.normalizer.has("Lowercase"):
        return with_pipeline(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind == "Lowercase")))
    return c.replace(text_maps=c.text_maps + (str.lower,))


def strip_accents(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")


def _strip_accents(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaWpm):
        return with_pipeline(c, fork(p, strip_accents=not p.strip_accents))
    return c.replace(text_maps=c.text_maps + (strip_accents,))


def first_accents_stripped(text: str) -> str:
    """The text as llama.cpp's WordPiece strips its accents, but with only the first of each accent
    mark (Mn) taken off: a later one is kept after its letter. A strip written as one ``replace``
    per mark does this: JavaScript's ``replace`` with a string, Python's ``replace(mark, "", 1)``.
    The pipeline then strips nothing more."""
    table, seen, out = uc.flag_table(), set(), []
    for ch in text:
        first = chr(uc.nfd_first(ord(ch)))
        marks = unicodedata.normalize("NFD", ch)[1:]
        if table[ord(first)] & uc.ACCENT_MARK:  # (a mark alone: what follows it is its own)
            first, marks = "", first
        out.append(first)
        for mark in marks:
            if unicodedata.category(mark) == "Mn" and mark in seen:
                out.append(mark)
            seen.add(mark)
    return "".join(out)


def _marks_twice(text: str) -> bool:
    marks = [ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) == "Mn"]
    return len(marks) > len(set(marks))


def _strip_first_accents(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if not isinstance(p, LlamaWpm) or not p.strip_accents:
        return None
    return with_pipeline(c.replace(text_maps=c.text_maps + (first_accents_stripped,)), fork(p, strip_accents=False))



def _byte_bpe_table(c: Candidate) -> Candidate | None:
    """The text spelt as fairseq's byte-level BPE spells it before a SentencePiece model: each UTF-8
    byte one printable character. A character the vocabulary lacks then falls back to the bytes of
    those characters, or to the unknown piece."""
    if not is_ugm_or_sp(c.pipeline) and not isinstance(c.pipeline, LlamaSpm):
        return None
    if not spelt_in_byte_table(c.pipeline.vocab):  # (simple-sentencepiece's test for a byte-level model)
        return None
    return c.replace(text_maps=c.text_maps + (printable_bytes,))

def variants() -> list[Variant]:
    """The normalizer's variants, in catalogue order."""
    return [
        Variant("normalizer.nfkc", "normalizer.nfkc", "Python's NFKC in place of the precompiled_charsmap",
                _normalizer_nfkc),
        Variant("normalizer.nfkc:simplified", "normalizer.nfkc",
                "NFKC with C0 controls dropped and Unicode spaces, ZWJ/ZWNJ to spaces in place of the charsmap "
                "(transformers.js's Precompiled)", partial(_normalizer_nfkc, simplified=True)),
        # (not ASCII: NFKC changes no ASCII text)
        Variant("normalizer.nfkc:added", "normalizer.nfkc", "NFKC applied to the text, where the model's files have no "
                "NFKC step and no charsmap (a wrapper that normalizes every input first)", _nfkc_added,
                lambda c, text: not text.isascii()),
        Variant("normalizer.nfkc:skipped", "normalizer.nfkc", "NFKC left out, where the model's normalizer has it",
                partial(_unicode_form, "NFKC", True)),
        Variant("normalizer.nfc", "normalizer.nfc", "NFC applied to the text, where the model's files have no NFC "
                "step", partial(_unicode_form, "NFC", False)),
        Variant("normalizer.nfc:skipped", "normalizer.nfc", "NFC left out, where the model's normalizer has it",
                partial(_unicode_form, "NFC", True)),
        # (not ASCII: only then has the table a mark to leave unordered or uncomposed)
        Variant("normalizer.nfc:charsmap", "normalizer.nfc",
                "NFC as a table of code point sequences matched longest first (SentencePiece's kind of charsmap, "
                "which openvino-tokenizers builds for NFC): only whole decompositions in canonical order are "
                "composed; marks are never reordered",
                partial(_canonical_step, ("NFC",), table_nfc), lambda c, text: not text.isascii()),
        Variant("normalizer.nfd", "normalizer.nfd", "NFD applied to the text, where the model's files have no NFD "
                "step", partial(_unicode_form, "NFD", False)),
        Variant("normalizer.nfd:skipped", "normalizer.nfd", "NFD left out, where the model's normalizer has it",
                partial(_unicode_form, "NFD", True)),
        # (not ASCII: only then has llama.cpp's table anything to map, or a mark to reorder)
        Variant("normalizer.nfd-first", "normalizer.nfd-first",
                "each code point replaced by the first code point of its canonical decomposition (llama.cpp's "
                "unicode_cpts_normalize_nfd) in place of NFC or NFD: accents dropped, a Hangul syllable its first jamo",
                partial(_canonical_step, ("NFC", "NFD"), nfd_first.first_code_points), lambda c, text: not text.isascii()),
        Variant("normalizer.nfd-first:recomposed", "normalizer.nfd-first",
                "NFC as pytorch-tokenizers 1.5.0 runs it: llama.cpp's one-code-point NFD (a precomposed letter loses "
                "its accent), then the marks the text itself holds composed by a partial table (e + U+0301 is é)",
                partial(_canonical_step, ("NFC", "NFD"), nfd_first.recomposed), lambda c, text: not text.isascii()),
        Variant("normalizer.lowercase", "normalizer.lowercase", "lower-casing toggled", _lowercase),
        Variant("normalizer.strip-accents", "normalizer.strip-accents", "accent stripping toggled", _strip_accents),
        # (only where a second mark of one kind can be left: a text with two of them)
        Variant("normalizer.strip-accents:first-only", "normalizer.strip-accents",
                "only the first of each accent mark in the text taken off (one replace per mark, not a global one)",
                _strip_first_accents, lambda c, text: _marks_twice(text)),
        Variant("normalizer.none", "normalizer.none", "no normalizer (charsmap, NFKC, lower-casing skipped)",
                _normalizer_none),
        Variant("normalizer.byte-bpe-table", "normalizer.byte-bpe-table",
                "each UTF-8 byte spelt as fairseq's byte-level BPE spells it, before a SentencePiece model", _byte_bpe_table),
    ]
