"""Whitespace and spaces: runs of spaces collapsed or not, spaces escaped to '▁' or not, the dummy
prefix toggled."""

from __future__ import annotations

import re

from tokparity.components import normalizers as hf_components
from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.variants.variant import Variant, is_ugm_or_sp, per_vocab, renormalized, with_pipeline
from tokparity.reference.hf import HfBpe
from tokparity.reference.llama import LlamaBpe, LlamaSpm, LlamaUgm, LlamaWpm
from tokparity.vocab.model import TokenType


def collapse_spaces(text: str) -> str:
    """SentencePiece's ``remove_extra_whitespaces`` on the raw text: runs of spaces squeezed,
    leading and trailing ones dropped."""
    return " ".join(w for w in text.split(" ") if w)


class _TokenizersWhitespace:
    """transformers' SentencePiece -> tokenizers converter in place of ``remove_extra_whitespaces``:
    ``Strip`` (right: every Unicode whitespace, newlines included), ``Replace(" {2,}", "▁")``, then
    ``Metaspace`` (spaces -> "▁", a "▁" prepended unless the text starts with one). With no
    prefix asked (Metaspace's prepend_scheme "first", after the start), nothing is prepended."""

    def __init__(self, inner, prefix: bool = True):
        self.inner = inner.replaced(remove_extra_whitespaces=False, add_space_prefix=False, escape_whitespaces=False)
        self.prefix = prefix

    def normalize(self, text: str) -> str:
        s = _SPACE_RUNS.sub("\u2581", self.inner.normalize(text).rstrip()).replace(" ", "\u2581")
        return s if not self.prefix or not s or s.startswith("\u2581") else "\u2581" + s

    def replaced(self, **changes) -> _TokenizersWhitespace:
        prefix = changes.pop("add_space_prefix", self.prefix)
        return _TokenizersWhitespace(self.inner.replaced(**changes), prefix)

    def __getattr__(self, name: str):
        if name == "inner" or name.startswith("__"):  # (a copy being made has no inner yet)
            raise AttributeError(name)
        return getattr(self.inner, name)


_SPACE_RUNS = re.compile(" {2,}")


def _whitespace_as_tokenizers(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if not is_ugm_or_sp(p) or not p.normalizer.add_space_prefix:
        return None
    return with_pipeline(c, fork(p, normalizer=_TokenizersWhitespace(p.normalizer)))


def _whitespace_other_flavour(c: Candidate) -> Candidate | None:
    """SentencePiece's and llama.cpp's implementations of the same flags differ on whitespace
    (normalize.py says how): the other one's."""
    p = c.pipeline
    if not is_ugm_or_sp(p) or not hasattr(p.normalizer, "flavour"):
        return None
    other = "llama.cpp" if p.normalizer.flavour == "sentencepiece" else "sentencepiece"
    return renormalized(c, flavour=other)


def _whitespace_collapse(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if is_ugm_or_sp(p):
        return renormalized(c, remove_extra_whitespaces=not p.normalizer.remove_extra_whitespaces)
    if isinstance(p, (LlamaSpm, LlamaBpe, HfBpe)):
        return c.replace(text_maps=c.text_maps + (collapse_spaces,))
    return None


def _is_space_escape(k) -> bool:
    return isinstance(k, hf_components.Replace) and not k.is_regex and k.pattern == " " and k.content == "\u2581"


def _space_escape(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm):
        return with_pipeline(c, fork(p, escape_spaces=not p.escape_spaces))
    if is_ugm_or_sp(p):
        return renormalized(c, escape_whitespaces=not p.normalizer.escape_whitespaces)
    if isinstance(p, HfBpe) and any(_is_space_escape(k) for k in p.normalizer.configs):
        return with_pipeline(c, fork(p, normalizer=p.normalizer.without(_is_space_escape)))
    if isinstance(p, LlamaBpe) and not p.pre.byte_encode:  # Gemma 4's SPM-style BPE
        q = fork(p)
        q.flags.escape_whitespaces = not q.flags.escape_whitespaces
        return with_pipeline(c, q)
    return None


def _dummy_prefix(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm):
        q = fork(p)
        q.flags.add_space_prefix = not q.flags.add_space_prefix
        return with_pipeline(c, q)
    if is_ugm_or_sp(p):
        out = renormalized(c, add_space_prefix=not p.normalizer.add_space_prefix)
        if out is not None and isinstance(p, LlamaUgm):
            out.pipeline.flags.add_space_prefix = not p.flags.add_space_prefix
        return out
    if isinstance(p, HfBpe):
        if p.normalizer.has("Prepend"):
            return with_pipeline(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind == "Prepend")))
        if any(_is_space_escape(k) for k in p.normalizer.configs):
            return with_pipeline(c, fork(p, normalizer=p.normalizer.with_step(_prepend_mark, hf_components.Prepend("\u2581"))))
    return None


def _prefix_unless_space(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm) and p.flags.add_space_prefix:
        return with_pipeline(c, fork(p, prefix_unless_space=True))
    if isinstance(p, HfBpe) and any(_is_space_escape(k) for k in p.normalizer.configs):
        # (no Prepend: the mark added unless one leads; Llama 2's Prepend then Replace: the Prepend
        # moved after the Replace and skipped where a mark leads, as Metaspace with "first" does)
        rest = p.normalizer.without(lambda k: isinstance(k, hf_components.Prepend) and k.prepend == "\u2581")
        step = rest.with_step(_prepend_mark_unless_one, hf_components.Prepend("\u2581"))
        return with_pipeline(c, fork(p, normalizer=step))
    return None


def _prepend_mark_unless_one(text: str) -> str:
    return text if not text or text.startswith("\u2581") else "\u2581" + text


def _prepend_mark(text: str) -> str:
    return "\u2581" + text if text else text


def _prefix_every_split(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm) and p.flags.add_space_prefix:
        return with_pipeline(c, fork(p, prefix_every_fragment=not p.prefix_every_fragment))
    return None


# Stands for a '▁' typed in the text while the pipeline runs: no piece holds it, so it falls back to
# its bytes, which are then written as the '▁''s. A noncharacter; a text that holds it is left alone.
_TYPED_MARK = "\ufdd0"


def _typed_mark_as_bytes(c: Candidate) -> Candidate | None:
    """A '▁' typed in the text is no space: it matches no piece and falls back to its bytes, as in an
    engine whose table holds the pieces with '▁' read as a space and that never escapes the text."""
    byte_id = c.vocab.id_of
    found = [byte_id(f"<0x{b:02X}>") for b in (_TYPED_MARK + "\u2581").encode()]
    if byte_id("\u2581") is None or None in found or not getattr(c.pipeline, "byte_fallback", True):
        return None  # (spaces are not '▁' here, or nothing falls back to bytes)
    cut = len(_TYPED_MARK.encode())
    stand_in, mark = [i for i in found[:cut] if i is not None], [i for i in found[cut:] if i is not None]
    # (a user-defined piece spelt with '▁', Gemma 3's '▁▁', is matched in the text as the file spells it)
    spelt = getattr(c.pipeline, "tokens", None) or c.vocab.tokens  # (tokenizers' spelling: Vocab has Gemma's '  ')
    pieces = per_vocab(c.vocab, ("typed mark",), lambda: sorted(
        (t for i, t in enumerate(spelt) if "\u2581" in t and c.vocab.type_of(i) == TokenType.USER_DEFINED),
        key=len, reverse=True))
    kept = re.compile("|".join(map(re.escape, pieces)) + ("|" if pieces else "") + "\u2581")
    stood_in = [False]  # (whether the text being encoded now had its marks stood in for)

    def mark_stood_in(text: str) -> str:
        stood_in[0] = _TYPED_MARK not in text
        return kept.sub(lambda m: _TYPED_MARK if m.group() == "\u2581" else m.group(), text) if stood_in[0] else text

    def written_as_mark(ids: list[int]) -> list[int]:
        if not stood_in[0]:
            return ids
        out, n, i = [], len(stand_in), 0
        while i < len(ids):
            if ids[i:i + n] == stand_in:
                out += mark
                i += n
            else:
                out.append(ids[i])
                i += 1
        return out
    return c.replace(text_maps=c.text_maps + (mark_stood_in,), id_maps=c.id_maps + (written_as_mark,))


def variants() -> list[Variant]:
    """The whitespace and space variants, in catalogue order."""
    return [
        Variant("whitespace.collapse", "whitespace.collapse", "remove_extra_whitespaces toggled (where the "
                "pipeline has no such flag: runs of spaces squeezed, the ends stripped)", _whitespace_collapse),
        Variant("whitespace.collapse:tokenizers", "whitespace.collapse",
                "remove_extra_whitespaces as transformers' converter writes it for tokenizers (Strip right of "
                "every whitespace, Replace(' {2,}', '▁'), Metaspace)", _whitespace_as_tokenizers),
        Variant("whitespace.collapse:other-library", "whitespace.collapse",
                "the whitespace flags as the other library implements them (llama.cpp's UGM vs SentencePiece)",
                _whitespace_other_flavour),
        Variant("space.escape", "space.escape", "spaces not escaped to '▁' (or escaped where the model does not)",
                _space_escape),
        Variant("space.dummy-prefix", "space.dummy-prefix", "the dummy prefix toggled", _dummy_prefix),
        Variant("space.typed-mark", "space.typed-mark",
                "a '▁' typed in the text is no space: it matches no piece and falls back to its bytes",
                _typed_mark_as_bytes, lambda c, text: "\u2581" in text and _TYPED_MARK not in text),
        Variant("space.dummy-prefix:unless-space", "space.dummy-prefix",
                "no dummy prefix before a text that starts with a space (tokenizers' Metaspace)",
                _prefix_unless_space),
        Variant("space.prefix-every-split", "space.prefix-every-split",
                "the dummy prefix only at the start, not after every special token", _prefix_every_split),
        Variant("whitespace.empty-words", "whitespace.empty-words",
                "words split at each space, so a run of spaces or a space at either end makes an empty "
                "word, which becomes [UNK]", _empty_words,
                lambda c, text: not text or any(ch.isspace() for ch in text)),
    ]


def _empty_words(c: Candidate) -> Candidate | None:
    p = c.pipeline
    return with_pipeline(c, fork(p, empty_words=True)) if isinstance(p, LlamaWpm) else None
