"""ref == llama.cpp on every zoo GGUF, over the pooled .inp texts, hand-written nasty texts,
the project's corpora (multilingual, edge) and lines of Botchan; with and without specials.

A disagreement that is llama.cpp's own (the originals disagree among themselves) belongs in
KNOWN with its reason; anything else fails. None has been needed so far.
"""

from __future__ import annotations

import pytest
from reference_fixtures import llama, ref  # noqa: F401  (pytest fixtures)
from reference_texts import NASTY, botchan_lines, corpus_texts, pooled_texts

from tokparity.zoo import load_manifest

GGUF_MODELS = [name for name, m in load_manifest().models.items() if "gguf" in m.files]
BIG = {"gemma-4", "command-r", "nomic-bert-moe"}  # 250k+ vocabularies: fewer texts, same checks

# (model, text, add_special, parse_special) -> why the originals themselves disagree
KNOWN: dict[tuple[str, str, bool, bool], str] = {}


def _texts(model: str) -> list[tuple[str, bool, bool]]:
    plain = pooled_texts() + corpus_texts()
    prose = botchan_lines()[:100] if model in BIG else botchan_lines()[:600]
    cases = [(t, False, False) for t in plain + prose]
    cases += [(t, True, False) for t in pooled_texts()]
    cases += [(t, True, True) for t in pooled_texts() + NASTY]
    return cases


@pytest.mark.parametrize("model", GGUF_MODELS)
def test_ref_equals_llamacpp(ref, llama, model):
    tok, lc = ref(model), llama(model)
    mismatches = {}
    cases = _texts(model)
    for text, add, parse in cases:
        expected = lc.encode(text, add, parse)
        got = tok.encode(text, add, parse)
        if got != expected:
            mismatches[(model, text, add, parse)] = (expected, got)
    unexplained = {k: v for k, v in mismatches.items() if k not in KNOWN}
    assert not unexplained, f"{len(unexplained)} of {len(cases)} cases differ; first: {next(iter(unexplained.items()))}"
    stale = [k for k in KNOWN if k[0] == model and k not in mismatches]
    assert not stale, f"KNOWN lists cases that now agree: {stale}"
