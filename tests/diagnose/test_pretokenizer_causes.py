"""The mutation suite, pre-tokenizer stage: pretokenizer.<name> (GPT-2's split, Qwen 2's digits),
pretokenizer.none, pretokenizer.regex-engine, pretokenizer.regex-part, unicode.tables, and the
stage-level pretokenizer.other
(tests/diagnose/mutation.py says how each check reads). All on Llama 3 (llama-bpe), whose oracle
is llama.cpp's own split, with tokenizers running an edited tokenizer.json."""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine, param

HF = ("tokenizers_engine.py", "{tokenizer_json}")
TWIN = engine(*HF)
CORPORA = ("multilingual", "edge")
CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
# @microsoft/tiktokenizer 1.0.10's list (dist/tokenizerBuilder.js), spelt out for JavaScript:
# 'eR where 'rE belongs.
SPELT_OUT = "(?:'s|'S|'t|'T|'re|'RE|'Re|'eR|'ve|'VE|'vE|'Ve|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)"

MUTATIONS = [
    # The Split regex replaced by ByteLevel's own, GPT-2's (transformers #45812).
    param(Mutation("pretokenizer.gpt-2", "llama-bpe", engine(*HF, "--gpt2-split"), TWIN, CORPORA), "gpt2-split"),
    # Digits one at a time instead of up to three: Qwen 2's rule, so the split behaves like qwen2's.
    param(Mutation("pretokenizer.qwen2", "llama-bpe", engine(*HF, "--regex", r"\p{N}{1,3}=>\p{N}"), TWIN, CORPORA),
          "single-digits"),
    # Qwen 3 (a tokenizer.json, judged by tokenizers) with marks taken into words, as Qwen 3.5's
    # split does: the split behaves like qwen35's.
    param(Mutation("pretokenizer.qwen35", "qwen3",
                   engine(*HF, "--regex", r"[^\r\n\p{L}\p{N}]?\p{L}+=>[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+",
                          "--regex", r" ?[^\s\p{L}\p{N}]+=> ?[^\s\p{L}\p{M}\p{N}]+"), TWIN, CORPORA),
          "marks-in-words-qwen3"),
    # No split regex at all, only the byte-level mapping (the missing pre-tokenizer of llama.cpp #7476).
    param(Mutation("pretokenizer.none", "llama-bpe", engine(*HF, "--no-pre-tokenizer"), TWIN, CORPORA),
          "no-pre-tokenizer"),
    # The contractions written out case by case with a form misspelt, as @microsoft/tiktokenizer has
    # them, on gpt-oss (o200k_harmony: the group after each kind of word) ...
    param(Mutation("pretokenizer.contractions", "gpt-oss", engine(*HF, "--regex", f"{CONTRACTIONS}=>{SPELT_OUT}"), TWIN,
                   ("focus:contraction-forms",), at_least=4), "misspelt-contractions-gpt-oss"),
    # ... and in lower case only, the (?i: dropped, on Llama 3.
    param(Mutation("pretokenizer.contractions", "llama-bpe",
                   engine(*HF, "--regex", f"{CONTRACTIONS}=>(?:'s|'t|'re|'ve|'m|'ll|'d)"), TWIN,
                   ("focus:contraction-forms",), at_least=8), "lower-case-contractions"),
    # \s read as RE2 / Go read it (ASCII only) and as ECMAScript does (no U+0085, U+FEFF included) ...
    param(Mutation("pretokenizer.regex-engine", "llama-bpe", engine(*HF, "--space-class", "re2"), TWIN,
                   ("focus:unicode-spaces",)), "re2-spaces"),
    param(Mutation("pretokenizer.regex-engine", "llama-bpe", engine(*HF, "--space-class", "ecmascript"), TWIN,
                   ("focus:unicode-spaces",)), "ecmascript-spaces"),
    # ... and as PCRE2 with PCRE2_UCP does (Unicode's and U+180E, its \h list: pytorch-tokenizers'
    # fallback for a lookahead RE2 cannot compile). One code point apart: 8 of the focus texts.
    param(Mutation("pretokenizer.regex-engine", "llama-bpe", engine(*HF, "--space-class", "pcre2"), TWIN,
                   ("focus:unicode-spaces",), at_least=8), "pcre2-spaces"),
    # A real one: tokenizers (Oniguruma) reads Unicode 16, where Garay and Myanmar Extended-C digits
    # are \p{N}; llama.cpp's tables predate them (tests/diff/test_classify.py). Its twin is the same
    # library with those 30 code points taken out of \p{N} (Oniguruma's class intersection).
    param(Mutation("unicode.tables", "llama-bpe", "hf",
                   engine(*HF, "--regex", r"\p{N}=>[\p{N}&&[^\x{10D40}-\x{10D49}\x{116D0}-\x{116E3}]]"),
                   ("focus:unicode16-digits",)), "unicode16-digits-tokenizers"),
    # A regex copied with one part missing: punctuation no longer takes the newlines after it.
    param(Mutation("pretokenizer.regex-part", "llama-bpe",
                   engine(*HF, "--regex", r" ?[^\s\p{L}\p{N}]+[\r\n]*=> ?[^\s\p{L}\p{N}]+"), TWIN, CORPORA),
          "punctuation-newlines"),
]

# Stage-level: the engine splits where no regex of the table does, so no variant reproduces it;
# the evidence is the boundary (a finer split whose pieces the model's merges give).
STAGE_LEVEL = [
    # A port that no longer takes a tab into the word after it (issue 16's Rust port).
    param(Mutation("pretokenizer.other", "llama-bpe",
                   engine(*HF, "--regex", r"[^\r\n\p{L}\p{N}]?\p{L}+=>[^\r\n\t\p{L}\p{N}]?\p{L}+"), TWIN,
                   CORPORA), "tab-not-taken"),
]


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in MUTATIONS + STAGE_LEVEL], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", MUTATIONS)
def test_pretokenizer_cause(runs, m):
    check_single(runs[m.group], m)


@pytest.mark.parametrize("m", STAGE_LEVEL)
def test_pretokenizer_stage_level(runs, m):
    check_single(runs[m.group], m, stage_level=True)
