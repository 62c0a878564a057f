"""The mutation suite, two bugs at once (tests/diagnose/mutation.py says how the checks read).

First the Gemma 3 write-up's engine: greedy longest match that never escapes spaces and adds no
dummy prefix (the file's add_space_prefix is false), so every space is the byte piece <0x20>
(id 270 on Gemma 3), on gemma-3 and on llama-spm (whose file asks for the prefix: the engine adds
it, as a space). Then the engine docs/gemma3.md replays (escapes spaces, but always prepends '▁'),
greedy alone on Gemma 3, and three compositions of real libraries with two settings changed.

Gemma 3 is a 262k vocabulary: its engines share one run (one load of each side), on the
multilingual corpus's prose (the write-up's prompts were prose; the code texts hold whitespace
runs, which the GGUF the engine reads spells with spaces and the tokenizer.json with '▁', a third
difference of its own).
"""

from __future__ import annotations

import pytest
from mutation import Mutation, check_composition, check_single, compare_runs, engine, param

GREEDY = ("greedy_engine.py", "{gguf}")
TWIN = engine(*GREEDY, "--file-space-prefix", "--segment", "merges")  # both bugs off
WRITE_UP = engine(*GREEDY, "--file-space-prefix", "--no-escape")
HF = ("tokenizers_engine.py", "{tokenizer_json}")
SP = ("sentencepiece_engine.py", "{spm_model}")
LLAMA = ("llamacpp_engine.py", "{gguf}")

COMPOSITIONS = [
    param(Mutation("space.escape+model.greedy-longest-match", "gemma-3", WRITE_UP, TWIN, ("focus:prose",)),
          "write-up-gemma-3"),
    param(Mutation("space.escape+model.greedy-longest-match", "llama-spm", WRITE_UP, TWIN, ("multilingual", "edge")),
          "write-up-llama-spm"),
    # The engine as docs/gemma3.md replays it: '▁' always prepended, though Gemma 3's file says not.
    param(Mutation("space.dummy-prefix+model.greedy-longest-match", "gemma-3", engine(*GREEDY), TWIN,
                   ("focus:prose",)), "always-prefix-gemma-3"),
    # tokenizers on Llama 3 with GPT-2's split and ignore_merges off.
    param(Mutation("pretokenizer.gpt-2+model.ignore-merges", "llama-bpe",
                   engine(*HF, "--gpt2-split", "--model", "ignore_merges=false"), engine(*HF),
                   ("multilingual", "edge", "focus:whole-words")), "gpt2-split-ignore-merges-llama-bpe"),
    # SentencePiece with an identity normalizer and remove_extra_whitespaces off.
    param(Mutation("normalizer.none+whitespace.collapse", "kyoto-ja-unigram",
                   engine(*SP, "--identity", "--set", "remove_extra_whitespaces=false"), engine(*SP),
                   ("multilingual", "edge")), "identity-keep-whitespace-kyoto"),
    # llama.cpp always adding BOS and always parsing special-token text.
    param(Mutation("specials.parse+bos", "llama-spm",
                   engine(*LLAMA, "--add-special", "always", "--parse-special", "always"), engine(*LLAMA),
                   ("edge", "focus:llama-specials")), "bos-and-parse-always-llama-spm"),
]

# The write-up's segmentation alone on Gemma 3 (the prefix fixed, spaces escaped).
GREEDY_GEMMA3 = Mutation("model.greedy-longest-match", "gemma-3", engine(*GREEDY, "--file-space-prefix"), TWIN,
                         ("focus:prose",))


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    every = [p.values[0] for p in COMPOSITIONS] + [GREEDY_GEMMA3]
    return compare_runs(every, tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", COMPOSITIONS)
def test_composition(runs, m):
    check_composition(runs[m.group], m)


def test_greedy_alone_gemma_3(runs):
    check_single(runs[GREEDY_GEMMA3.group], GREEDY_GEMMA3)


def test_write_up_ids_gemma_3(runs):
    """The write-up engine's ids on a prompt: every space the byte piece <0x20> (270), and the
    cause reproduced exactly on that case."""
    m = COMPOSITIONS[0].values[0]
    case = next(x for x in runs[m.group].mismatches(m.bug) if x.case_id == "en-0001")
    assert case.backend_ids.count(270) == case.text.count(" ") and 236743 not in case.backend_ids
    assert case.cause in ("space.escape", m.cause)
