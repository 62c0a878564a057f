"""Decoding causes on engines written blind (tests/engines/blind/detok_blind.py, detok_blind2.py
and detok_blind3.py: three helpers wrote them on tokenizers from docs/contracts.md and one paragraph
per bug, without seeing the diagnosis): each bug is named by its cause on every mismatch (one stream
delta aside), the run's verdict proves it and keeps every agreement, and its bug-free twin agrees
on every case. The blind engine showed the variants two things they had missed:
llama.cpp's ``lstrip`` takes off *up to one* leading space, not all of them (decode.lstrip now
answers both), and a GGUF model judged by its tokenizer.json (``--oracle hf``) must be diagnosed
by the reference of that file, which decodes as tokenizers does (no clean-up of spaces)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind" / "detok_blind.py"
BLIND2 = Path(__file__).parents[1] / "engines" / "blind" / "detok_blind2.py"  # a second helper's, five more bugs
BLIND3 = Path(__file__).parents[1] / "engines" / "blind" / "detok_blind3.py"  # a third helper's, four stream bugs


# model, op, bug, the cause, the fewest mismatches, the share of them the cause must name
@pytest.mark.parametrize("model,op,bug,cause,fewest,share", [
    # a byte-level vocabulary streamed with a SentencePiece detokenizer: 'Ġworld' sent as it is (mlx-lm #1041)
    ("llama-bpe", "stream", "metaspace-stream", "stream.metaspace-on-byte-level", 200, 1.0),
    # each piece's leading space taken off before joining (llama.cpp's lstrip=1 on every token)
    ("llama-bpe", "decode", "lstrip-pieces", "decode.lstrip", 200, 1.0),
    # each id decoded alone: on a Metaspace vocabulary no token keeps its space ('▁world' -> 'world')
    ("lenml-llama2", "pieces", "pieces-alone", "pieces.decoded-alone", 200, 1.0),
    # each id decoded alone, the texts joined (on a byte-level vocabulary a split character alone
    # is U+FFFD, which tokparity spells as one however many: 2 of 113 rows there look right)
    ("lenml-llama2", "decode", "decode-alone", "decode.ids-alone", 200, 1.0),
    # a strict UTF-8 decoder: the text ends where the first invalid byte begins (6 id sequences split a character)
    ("lenml-llama2", "decode", "stop-at-invalid", "decode.rest-dropped-after-invalid-byte", 5, 1.0),
    # each delta's leading spaces taken off: the words of the stream run together (one delta
    # that also reads as the prompt dropped)
    ("lenml-llama2", "stream", "lstrip-deltas", "stream.deltas-lstripped", 200, 0.99),
    # a 32-byte buffer per token: a longer token gives nothing (Llama 3's runs of spaces and dashes)
    ("llama-bpe", "decode", "2:long-token-dropped", "decode.long-token-dropped", 5, 1.0),
    # the added tokens that are not special written as tokenizer.json spells them (Gemma 3's '▁▁')
    ("gemma-3", "pieces", "2:added-raw", "pieces.added-raw", 30, 1.0),
    # a table of 16-byte fields
    ("llama-bpe", "pieces", "2:long-token-cut", "pieces.long-token-cut", 5, 1.0),
    # a word-buffering streamer that never flushes the last word
    ("lenml-llama2", "stream", "2:tail-never-flushed", "stream.tail-never-sent", 200, 1.0),
    # the tokens' bytes read as Latin-1
    ("llama-bpe", "decode", "2:latin1-decode", "decode.bytes-as-latin1", 200, 1.0),
    # a table of strings: a token that is part of a character is U+FFFD (judged by tokenizers, whose
    # own text shows U+FFFD there too: the vocabulary's bytes judge those ids)
    ("qwen3", "pieces", "2:pieces-text", "pieces.text-not-bytes", 50, 1.0),
    # the special tokens left out of the table
    ("llama-bpe", "pieces", "2:pieces-no-specials", "pieces.specials-left-out", 2, 1.0),
    # a stream that starts at len(decode(prompt)): a character the prompt began is never sent
    ("llama-bpe", "stream", "2:stream-prompt-offset", "stream.begun-character-dropped", 50, 1.0),
    # each delta sliced off a decode of the growing list at the last text's length (mlx-vlm before #1076)
    ("llama-bpe", "stream", "3:cumulative-slice", "stream.offset-into-lossy-text", 100, 1.0),
    # what was sent counted in grapheme clusters: a joining mark sends its character again (mlx-swift-lm #612)
    ("qwen3", "stream", "3:cluster-prefix", "stream.cluster-resent", 15, 1.0),
])
def test_a_blind_detokenizer_with_one_bug_is_named_and_its_twin_agrees(zoo, model, op, bug, cause, fewest, share):
    zoo(model)
    blind, bug = {"2": (BLIND2, bug[2:]), "3": (BLIND3, bug[2:])}.get(bug[:1], (BLIND, bug))
    engine = f"cmd:{sys.executable} {blind} {{tokenizer_json}}"
    results = run_compare([model], ["edge", "ids"], [f"bug={engine} --bug {bug}", f"twin={engine}"],
                          CompareOptions(ops=(op,), oracle="hf"))
    runs = {r.backend: r for r in results.runs}
    causes = Counter(m.cause for m in results.mismatches if m.backend == "bug")
    assert runs["twin"].cases == runs["bug"].cases > 600 and runs["twin"].mismatches == 0
    assert runs["bug"].mismatches >= fewest and causes[cause] >= share * runs["bug"].mismatches, causes
    # the run-level verdict: the cause, proven on the mismatches and checked on every agreement
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == cause and verdict.proven, verdict
    assert verdict.keeps == verdict.agreements == runs["bug"].cases - runs["bug"].mismatches
    assert runs["twin"].root_cause is None


def test_a_bug_narrower_than_its_variant_is_not_proven(zoo):
    """An engine that takes a space off each id only past 24 ids: every mismatch is reproduced by
    decode.lstrip, but that variant would break the shorter cases the engine got right, so the
    run's verdict names it and says it is not proven."""
    zoo("llama-bpe")
    engine = Path(__file__).parents[1] / "engines" / "hf_decode_engine.py"
    results = run_compare(["llama-bpe"], ["edge", "ids"], [f"long=py:{engine}:LstripWhenLong"],
                          CompareOptions(ops=("decode",), oracle="hf"))
    run = next(r for r in results.runs if r.backend == "long")
    verdict = run.root_cause
    assert run.mismatches >= 5 and verdict is not None and verdict.cause == "decode.lstrip", verdict
    assert verdict.explains == verdict.mismatches == run.mismatches
    assert verdict.keeps < 0.9 * verdict.agreements and not verdict.proven

