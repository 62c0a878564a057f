"""The mutation suite, whitespace and space stage: whitespace.collapse, space.escape,
space.dummy-prefix, space.prefix-every-split (tests/diagnose/mutation.py says how each check reads)."""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine, param

SP = ("sentencepiece_engine.py", "{spm_model}")
LLAMA = ("llamacpp_engine.py", "{gguf}")
HF = ("tokenizers_engine.py", "{tokenizer_json}")

MUTATIONS = [
    # SentencePiece with remove_extra_whitespaces off: runs of spaces kept (the T5 slow/fast bug).
    param(Mutation("whitespace.collapse", "kyoto-ja-unigram", engine(*SP, "--set", "remove_extra_whitespaces=false"),
                   engine(*SP), ("multilingual", "edge")), "collapse-kyoto"),
    # SentencePiece with escape_whitespaces off: no space is ever '▁'.
    param(Mutation("space.escape", "kyoto-ja-unigram", engine(*SP, "--set", "escape_whitespaces=false"), engine(*SP),
                   ("multilingual", "edge")), "escape-kyoto"),
    # tokenizers without the Replace(' ' -> '▁') normalizer step of a Llama-2-style tokenizer.json.
    param(Mutation("space.escape", "lenml-llama2", engine(*HF, "--drop-normalizer", "Replace"), engine(*HF),
                   ("multilingual", "edge")), "escape-dropped-lenml-llama2"),
    # SentencePiece with add_dummy_prefix off.
    param(Mutation("space.dummy-prefix", "kyoto-ja-unigram", engine(*SP, "--set", "add_dummy_prefix=false"),
                   engine(*SP), ("multilingual", "edge")), "dummy-prefix-kyoto"),
    # tokenizers without the Prepend('▁') normalizer step (llama.cpp #2310 seen from the other side).
    param(Mutation("space.dummy-prefix", "lenml-llama2", engine(*HF, "--drop-normalizer", "Prepend"), engine(*HF),
                   ("multilingual", "edge")), "prepend-dropped-lenml-llama2"),
    # llama.cpp with the GGUF's add_space_prefix overridden, the engine putting one space before the
    # whole text: the dummy prefix at the start only (Metaspace 'first'), never after a special token.
    param(Mutation("space.prefix-every-split", "llama-spm", engine(*LLAMA, "--prefix-once"), engine(*LLAMA),
                   ("focus:llama-specials",), parse_special=True), "prefix-once-llama-spm"),
]


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in MUTATIONS], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", MUTATIONS)
def test_space_cause(runs, m):
    check_single(runs[m.group], m)
