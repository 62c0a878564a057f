"""Bytes and ``<unk>``: byte fallback toggled, characters outside the vocabulary dropped, runs of
unknown characters merged into one ``<unk>`` or not."""

from __future__ import annotations

from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.variants.specials import unk_id_of
from tokparity.diagnose.variants.variant import Variant, with_pipeline
from tokparity.reference.hf import HfBpe
from tokparity.reference.llama import LlamaSpm, LlamaUgm
from tokparity.reference.sentencepiece import SentencePiecePipeline
from tokparity.reference.spm import byte_piece


def _has_byte_pieces(vocab) -> bool:
    return all(vocab.id_of(byte_piece(b)) is not None for b in range(256))


def _byte_fallback(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm):
        return with_pipeline(c, fork(p, byte_fallback=not p.byte_fallback)) if _has_byte_pieces(c.vocab) else None
    if isinstance(p, (LlamaUgm, SentencePiecePipeline, HfBpe)):
        if not p.byte_fallback and not _has_byte_pieces(c.vocab):
            return None
        return with_pipeline(c, fork(p, byte_fallback=not p.byte_fallback))
    return None


def _drop_unknown(c: Candidate) -> Candidate | None:
    """Characters outside the vocabulary dropped: neither <unk> nor byte pieces. (With byte fallback
    on, a search composes it with ``bytes.fallback``: turning both at once here made it coincide with
    engines that cut or collapse their input.)"""
    unk = unk_id_of(c.pipeline)
    if unk is None or unk in c.drop_ids:
        return None
    return c.replace(drop_ids=c.drop_ids | {unk})


BYTE_ID_OFFSET = 3  # llama2.c's run.c: "+3 because the first 3 vocab elements are <unk>, <s>, </s>"


def _byte_ids_by_offset(c: Candidate) -> Candidate | None:
    """Each byte piece's id (``<0x41>``) written as the byte plus 3, not looked up: a vocabulary
    whose byte pieces stand elsewhere (Gemma 3's) gets other ids."""
    vocab = c.vocab
    if not _has_byte_pieces(vocab) or all(vocab.id_of(byte_piece(b)) == b + BYTE_ID_OFFSET for b in range(256)):
        return None
    byte_of = {vocab.id_of(byte_piece(b)): b for b in range(256)}

    def by_offset(ids: list[int]) -> list[int]:
        return [byte_of[i] + BYTE_ID_OFFSET if i in byte_of else i for i in ids]

    return c.replace(id_maps=c.id_maps + (by_offset,))


def _unk_runs(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, (LlamaUgm, SentencePiecePipeline)):
        return with_pipeline(c, fork(p, merge_unk_runs=not p.merge_unk_runs))
    if isinstance(p, HfBpe) and p.unk_id is not None:
        return with_pipeline(c, fork(p, fuse_unk=not p.fuse_unk))
    return None


def variants() -> list[Variant]:
    """The byte and <unk> variants, in catalogue order."""
    return [
        Variant("bytes.fallback", "bytes.fallback", "byte fallback toggled (<0xNN> pieces vs <unk>)", _byte_fallback),
        Variant("bytes.fallback:drop", "bytes.fallback", "characters outside the vocabulary dropped (no <unk>, no bytes)",
                _drop_unknown),
        Variant("unk.merge-runs", "unk.merge-runs", "one <unk> per run vs one per character", _unk_runs),
        Variant("bytes.id-by-offset", "bytes.id-by-offset", "each byte piece's id written as the byte's value plus 3, "
                "not looked up", _byte_ids_by_offset),
    ]
