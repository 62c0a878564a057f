"""The mutation suite, model stage: model.greedy-longest-match, model.merge-by-score,
model.ignore-merges, model.viterbi-tie, bytes.fallback, unk.merge-runs (tests/diagnose/mutation.py
says how each check reads)."""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine, param

HF = ("tokenizers_engine.py", "{tokenizer_json}")
LLAMA = ("llamacpp_engine.py", "{gguf}")
GREEDY = ("greedy_engine.py", "{gguf}", "--file-space-prefix")
CORPORA = ("multilingual", "edge")

MUTATIONS = [
    # The write-up's segmentation alone: the longest vocabulary piece at each position. No library
    # segments this way, so the engine is hand-written (examples/engines/greedy_engine.py, not built
    # from tokparity's reference); its twin merges by piece score as llama.cpp does.
    param(Mutation("model.greedy-longest-match", "llama-spm", engine(*GREEDY), engine(*GREEDY, "--segment", "merges"),
                   CORPORA), "greedy-llama-spm"),
    # Merges sorted by the merged token's id ("a lower id was learned earlier") in a Llama-2-style
    # tokenizer.json, whose ids follow the pieces' scores, not the merge ranks.
    param(Mutation("model.merge-by-score", "lenml-llama2", engine(*HF, "--merges-by-id"), engine(*HF), CORPORA),
          "merges-by-id-lenml-llama2"),
    # Llama 3 without ignore_merges: words that are one token but not built by the merges.
    param(Mutation("model.ignore-merges", "llama-bpe", engine(*HF, "--model", "ignore_merges=false"), engine(*HF),
                   ("focus:whole-words",)), "ignore-merges-off-llama-bpe"),
    # byte_fallback off: <unk> where the model writes <0xNN> pieces.
    param(Mutation("bytes.fallback", "lenml-llama2", engine(*HF, "--model", "byte_fallback=false"), engine(*HF),
                   CORPORA), "byte-fallback-off-lenml-llama2"),
    # fuse_unk off: one <unk> per unknown character where SentencePiece writes one per run.
    param(Mutation("unk.merge-runs", "botchan-bpe", engine(*HF, "--model", "fuse_unk=false"), engine(*HF),
                   ("multilingual",)), "fuse-unk-off-botchan-bpe"),
]


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    every = [p.values[0] for p in MUTATIONS] + [VITERBI_TIE]
    return compare_runs(every, tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", MUTATIONS)
def test_model_cause(runs, m):
    check_single(runs[m.group], m)


# A real one: llama.cpp and SentencePiece on kyoto-ja's unigram model pick different segmentations
# of exactly equal score on runs of digits ("1111111": [2375, 170, 170, 39] against
# [2375, 39, 170, 170]). A tie is not a bug, so there is no twin with it switched off; instead every
# mismatch must be a tie, counted apart and not as unexplained.
VITERBI_TIE = Mutation("model.viterbi-tie", "kyoto-ja-unigram", engine(*LLAMA), None, ("focus:digit-runs",))


def test_viterbi_tie_llama_cpp_kyoto(runs):
    run = runs[VITERBI_TIE.group]
    check_single(run, VITERBI_TIE, stage_level=True)
    summary = run.summary(VITERBI_TIE.bug)
    assert summary.ties == summary.mismatches and summary.unexplained == 0
    assert all(m.cls == "viterbi-tie" for m in run.mismatches(VITERBI_TIE.bug))
