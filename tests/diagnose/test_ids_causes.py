"""The ids an engine gives back: a tokenizer.json saved with truncation on (``"truncation":
{"max_length": N}``, as a file saved after ``enable_truncation`` ships it). tokenizers itself then
gives back at most N ids of a text, and nothing says so. The engine is tokenizers on that edited
file (tests/engines/tokenizers_engine.py ``--truncation``); its twin is the file as it is.
tests/diagnose/mutation.py says how each check reads.

* ``--truncation 24`` on llama-bpe (Llama 3) and on qwen3: ``ids.truncated``, one length for the
  whole run, its shorter texts still agreeing.

An engine written blind from a description of a C binding's buffer (tests/engines/blind/
blind17_buffer.py) sizes its ids from the text's length once and drops what does not fit:

* ``--bug chars-third`` (a third of the characters plus 4) on llama-bpe, ``--bug bytes-quarter`` (a
  quarter of the bytes plus 8) on qwen3: ``ids.truncated``, each at that rule.
"""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine, param

from tokparity.diagnose.variants.ids import IdLimit

HF = ("tokenizers_engine.py", "{tokenizer_json}")
BLIND = ("blind/blind17_buffer.py", "{tokenizer_json}")

SINGLES = [
    param(Mutation("ids.truncated", "llama-bpe", engine(*HF, "--truncation", "24"), engine(*HF), ("edge",)),
          "truncation-llama3"),
    param(Mutation("ids.truncated", "qwen3", engine(*HF, "--truncation", "24"), engine(*HF), ("edge",)),
          "truncation-qwen3"),
    param(Mutation("ids.truncated", "llama-bpe", engine(*BLIND, "--bug", "chars-third"), engine(*BLIND), ("edge",)),
          "buffer-chars-llama3"),
    param(Mutation("ids.truncated", "qwen3", engine(*BLIND, "--bug", "bytes-quarter"), engine(*BLIND), ("edge",)),
          "buffer-bytes-qwen3"),
]
RULES = {engine(*BLIND, "--bug", "chars-third"): "ids.truncated:chars/3+4",
         engine(*BLIND, "--bug", "bytes-quarter"): "ids.truncated:bytes/4+8"}


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in SINGLES], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", SINGLES)
def test_ids_cut_at_a_length(runs, m):
    check_single(runs[m.group], m)
    if m.bug in RULES:
        assert runs[m.group].summary(m.bug).root_cause.variants == (RULES[m.bug],)


@pytest.mark.parametrize("key", ["-5", "bytes/2+-20", " 7", "016", "bytes/2", "words/2+1", "bytes/0+1", "\u0661\u0662"])
def test_a_limit_key_that_is_not_one_is_refused(key):
    """A key read back from anywhere but truncations() (a hand-edited journal, say) is refused, not
    read as another limit: '-5' would cut five ids off the end of every text."""
    with pytest.raises(ValueError, match="no such limit of ids"):
        IdLimit.of_key(key)
