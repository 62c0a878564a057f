"""The mutation suite, normalizer stage: normalizer.none, .nfkc, .nfc, .nfd, .nfd-first, .lowercase,
.strip-accents, input.edit and the stage-level normalizer.other (tests/diagnose/mutation.py
says how each check reads)."""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine, param

SP = ("sentencepiece_engine.py", "{spm_model}")
LLAMA = ("llamacpp_engine.py", "{gguf}")
HF = ("tokenizers_engine.py", "{tokenizer_json}")
BERT = ("bert_engine.py", "{gguf}")

MUTATIONS = [
    # SentencePiece with the .model's normalizer set to "identity": kyoto's nmt_nfkc charsmap skipped.
    param(Mutation("normalizer.none", "kyoto-ja-unigram", engine(*SP, "--identity"), engine(*SP),
                   ("multilingual", "edge")), "none-identity-kyoto"),
    # The charsmap replaced by Python's NFKC: they differ on 80 code points NFKC learned since.
    param(Mutation("normalizer.nfkc", "kyoto-ja-unigram", engine(*SP, "--identity", "--unicode", "NFKC"),
                   engine(*SP), ("focus:nfkc-changes",)), "nfkc-for-charsmap-kyoto"),
    # NFC applied before llama.cpp on a model without a normalizer: decomposed accents composed.
    param(Mutation("normalizer.nfc", "llama-spm", engine(*LLAMA, "--unicode", "NFC"), engine(*LLAMA),
                   ("focus:decomposed-prose",)), "nfc-llama-spm"),
    # NFD before tokenizers on Llama 3.
    param(Mutation("normalizer.nfd", "llama-bpe", engine(*HF, "--unicode", "NFD"), engine(*HF),
                   ("multilingual", "edge")), "nfd-llama-bpe"),
    # Qwen 3's NFC normalizer dropped from its tokenizer.json (PLM-1.8B's decomposed é).
    param(Mutation("normalizer.nfc", "qwen3", engine(*HF, "--drop-normalizer", "NFC"), engine(*HF),
                   ("focus:decomposed-prose",)), "nfc-dropped-qwen3"),
    # Qwen 3's NFC run as llama.cpp's one-code-point NFD (each character its decomposition's first):
    # precomposed accents lost ("é" is "e", "각" is "ᄀ"), decomposed ones left apart.
    param(Mutation("normalizer.nfd-first", "qwen3", engine(*HF, "--first-of-nfd"), engine(*HF),
                   ("focus:prose", "focus:decomposed-prose")), "nfd-first-qwen3"),
    # transformers' BertTokenizer on bert-bge's (uncased) vocabulary without lower-casing.
    param(Mutation("normalizer.lowercase", "bert-bge", engine(*BERT, "--do-lower-case", "false",
                                                              "--strip-accents", "true"),
                   engine(*BERT), ("focus:cased-prose",)), "lowercase-bert"),
    # ... and without accent stripping.
    param(Mutation("normalizer.strip-accents", "bert-bge", engine(*BERT, "--strip-accents", "false"), engine(*BERT),
                   ("focus:cased-prose",)), "strip-accents-bert"),
]

# Edits of the text no catalogue entry names, learnt from the cases (input.edit): the engine's ids
# spell the text with some characters read as others.
MUTATIONS += [
    # A port whose normalizer maps ZWJ and ZWNJ to spaces (issue 16's JavaScript port), before llama.cpp.
    param(Mutation("input.edit", "llama-spm", engine(*LLAMA, "--as-space", "U+200D,U+200C"), engine(*LLAMA),
                   ("emoji",)), "zwj-as-space-llama-spm"),
    # ... one that maps tabs to spaces: the texts differ in whitespace only.
    param(Mutation("input.edit", "llama-spm", engine(*LLAMA, "--as-space", "U+0009"), engine(*LLAMA),
                   ("multilingual", "edge")), "tab-as-space-llama-spm"),
]

# Stage-level: no named variant can reproduce these, and a letter read otherwise is not learnt as an
# edit (a normalizer's causes are named ones); the stage is proven to differ.
STAGE_LEVEL = [
    # A port whose normalizer reads 'é' (U+00E9) as a space, before llama.cpp.
    param(Mutation("normalizer.other", "llama-spm", engine(*LLAMA, "--as-space", "U+00E9"), engine(*LLAMA),
                   ("multilingual", "edge")), "e-acute-as-space-llama-spm"),
]


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in MUTATIONS + STAGE_LEVEL], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", MUTATIONS)
def test_normalizer_cause(runs, m):
    check_single(runs[m.group], m)


@pytest.mark.parametrize("m", STAGE_LEVEL)
def test_normalizer_stage_level(runs, m):
    check_single(runs[m.group], m, stage_level=True)
