"""The mutation suite, special tokens, user-defined pieces and BOS/EOS: specials.parse,
specials.strip, specials.ids, user-defined.atomic, bos, bos.double, eos
(tests/diagnose/mutation.py says how each check reads)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mutation import Mutation, check_composition, check_single, compare_runs, engine, param

HF = ("tokenizers_engine.py", "{tokenizer_json}")
LLAMA = ("llamacpp_engine.py", "{gguf}")
CORPORA = ("multilingual", "edge")

MUTATIONS = [
    # llama.cpp told to parse special-token text even when the caller did not ask.
    param(Mutation("specials.parse", "llama-spm", engine(*LLAMA, "--parse-special", "always"), engine(*LLAMA),
                   ("edge", "focus:llama-specials")), "parse-always-llama-spm"),
    # tokenizers matching special added tokens in any text (its default, encode_special_tokens off).
    param(Mutation("specials.parse", "llama-bpe", engine(*HF, "--parse-special", "always"), engine(*HF),
                   ("focus:chat-specials",)),
          "parse-always-llama-bpe"),
    # llama.cpp on Phi-3 with the GGUF's general.name overridden: llama.cpp recognises Phi-3 by name
    # to give its special tokens rstrip, so they no longer eat the whitespace after them (PR #7375).
    param(Mutation("specials.strip", "phi-3", engine(*LLAMA, "--kv", "general.name=phi"), engine(*LLAMA),
                   ("focus:phi3-chat",), parse_special=True), "rstrip-lost-phi-3"),
    # A GGUF whose unknown-token id points at </s> (id 2), as transformers' GGUF converter does
    # for unigram models (T5's unk id is 2): llama.cpp with tokenizer.ggml.unknown_token_id overridden.
    param(Mutation("specials.ids", "botchan-unigram", engine(*LLAMA, "--kv", "tokenizer.ggml.unknown_token_id=2"),
                   engine(*LLAMA), ("multilingual",)), "unk-id-2-botchan-unigram"),
    # Qwen 3 without its non-special added tokens (<think>, <tool_call>, …): matched by the merges instead.
    param(Mutation("user-defined.atomic", "qwen3", engine(*HF, "--drop-added", "nonspecial"), engine(*HF),
                   ("focus:qwen-tags",)), "added-dropped-qwen3"),
    # BOS added when the caller did not ask for special tokens.
    param(Mutation("bos", "llama-spm", engine(*LLAMA, "--add-special", "always"), engine(*LLAMA), CORPORA),
          "add-special-always-llama-spm"),
    # With add_special: a GGUF saying add_bos_token=false (BOS missing) ...
    param(Mutation("bos", "llama-spm", engine(*LLAMA, "--kv", "tokenizer.ggml.add_bos_token=false"), engine(*LLAMA),
                   CORPORA, add_special=True), "add-bos-false-llama-spm"),
    # ... an engine putting BOS in front of what llama.cpp already starts with BOS (PR #7332) ...
    param(Mutation("bos.double", "llama-spm", engine(*LLAMA, "--bos", "twice"), engine(*LLAMA), CORPORA,
                   add_special=True), "bos-twice-llama-spm"),
    # ... and one saying add_eos_token=true.
    param(Mutation("eos", "llama-spm", engine(*LLAMA, "--kv", "tokenizer.ggml.add_eos_token=true"), engine(*LLAMA),
                   CORPORA, add_special=True), "add-eos-true-llama-spm"),
]

# A real one, with two deviations: transformers' own GGUF converter (hf-gguf) on nomic-bert-moe
# skips the precompiled_charsmap and takes T5's unknown id 2 (which is </s> here). On prose these
# two are all it does differently (on the edge corpus it shows more: Unicode spaces split as
# whitespace, "<s>" read as padding), so it is checked as a composition.
HF_GGUF = Mutation("normalizer.none+specials.ids", "nomic-bert-moe", "hf-gguf", None, ("multilingual",))


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in MUTATIONS] + [HF_GGUF], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", MUTATIONS)
def test_special_cause(runs, m):
    check_single(runs[m.group], m)


def test_hf_gguf_nomic_bert_moe(runs):
    check_composition(runs[HF_GGUF.group], HF_GGUF)


BLIND21 = Path(__file__).parents[1] / "engines" / "blind" / "blind21_spm_specials.py"


def test_a_port_that_cuts_control_tokens_out_before_normalizing_is_named_so(zoo, tmp_path):
    """A SentencePiece wrapper written blind (tests/engines/blind/blind21_spm_specials.py): with
    --parse-special it cuts ``<s>`` and ``</s>`` out of the raw text and encodes each part apart.
    Each part then gets the dummy prefix, or only a part at the start of the text does. Every row
    is named specials.parse, and each verdict names its own form, proven. The engine without the bug agrees. The variants parse
    ``<unk>`` too, as specials.parse does, and this engine does not: three edge texts with
    ``<unk>`` are agreements they change."""
    from tokparity.run.driver import run_compare
    from tokparity.run.options import CompareOptions

    zoo("botchan-unigram")
    command = f"cmd:{sys.executable} {BLIND21} {{spm_model}}"
    results = run_compare(["botchan-unigram"], [str(BLIND21.with_name("blind21_texts.jsonl")), "edge"],
                          [f"each={command} --bug cut-first", f"first={command} --bug cut-first-one-prefix",
                           f"twin={command}"], CompareOptions(parse_special=True, explicit_backends=True))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 0
    for backend, variant in (("each", "specials.parse:before-normalizing"),
                             ("first", "specials.parse:before-normalizing-one-prefix")):
        rows = [m for m in results.mismatches if m.backend == backend]
        assert len(rows) >= 30 and {m.cause for m in rows} == {"specials.parse"}, backend
        verdict = runs[backend].root_cause
        assert verdict is not None and verdict.variants == (variant,) and verdict.proven, verdict
        assert verdict.agreements - verdict.keeps <= 3, verdict


def test_tokenizers_own_prepend_schemes_are_named_by_their_forms(zoo):
    """tokenizers itself, on botchan-unigram's tokenizer.json, with ``--parse-special``: it cuts
    ``<s>`` and ``</s>`` out of the raw text, as SentencePiece never does. Its Metaspace gives each
    part the dummy prefix ("always"), or only the part at offset 0 ("first"). The two engines differ
    in that setting only, and each verdict names its own form, proven, every agreement kept. Both
    also show the file's conversion (whitespace.collapse:tokenizers): tokenizers trims no leading
    whitespace where SentencePiece does."""
    from tokparity.run.driver import run_compare
    from tokparity.run.options import CompareOptions

    zoo("botchan-unigram")
    corpora = [str(BLIND21.with_name("blind21_texts.jsonl")), "edge"]
    backends = [f"{scheme}={engine(*HF, '--prepend-scheme', scheme)}" for scheme in ("always", "first")]
    results = run_compare(["botchan-unigram"], corpora, backends,
                          CompareOptions(parse_special=True, explicit_backends=True))
    runs = {r.backend: r for r in results.runs}
    for scheme, variant in (("always", "specials.parse:before-normalizing"),
                            ("first", "specials.parse:before-normalizing-one-prefix")):
        rows = [m for m in results.mismatches if m.backend == scheme]
        assert len(rows) >= 30 and all(m.cause for m in rows), (scheme, rows[:3])
        verdict = runs[scheme].root_cause
        assert verdict is not None and set(verdict.variants) == {"whitespace.collapse:tokenizers", variant}, verdict
        assert verdict.proven and verdict.keeps == verdict.agreements, verdict
