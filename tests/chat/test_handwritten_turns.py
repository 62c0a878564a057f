"""A format written by hand with its own whitespace after each end of turn (``chat.turn-end-spacing``),
on tests/engines/blind/handwritten_turns.py: an engine a helper wrote blind from LlamaIndex's
``messages_to_prompt_v3_instruct`` (llama-index-llms-llama-cpp 0.7.0 writes ``"<|eot_id|>\\n"``) and a
ChatML builder that joins its turns with nothing. The whitespace is read off the prompt, then the
other values are read off a render that writes it so: a default system message beside it. The
same format's ``assert`` that roles alternate is ``chat.alternation-refused``."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from blind_rounds import assert_named_beside_their_twin

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'engines' / 'blind' / 'handwritten_turns.py'} {{tokenizer_json}}"


@pytest.mark.parametrize("model,form,bugs", [
    ("llama-bpe", "llama-3", {"eot-newline": ("chat.turn-end-spacing", 20), "default-system": ("chat.default-system-added", 15),
                              "alternation-assert": ("chat.alternation-refused", 2)}),
    ("qwen3", "chatml", {"eot-newline": ("chat.turn-end-spacing", 20), "no-newline-after-end": ("chat.turn-end-spacing", 20)}),
])
def test_each_format_bug_is_named_and_its_twin_agrees(zoo, model, form, bugs):
    zoo(model)
    assert_named_beside_their_twin(model, "chat", ["chats"], f"{ENGINE} --format {form}", bugs, failures_apart=True)


def test_the_newline_after_each_end_of_turn_and_a_default_system_message_are_named_at_once(zoo):
    zoo("llama-bpe")
    engine = f"{ENGINE} --format llama-3 --bug eot-newline --bug default-system"
    results = run_compare(["llama-bpe"], ["chats"], [f"both={engine}"], CompareOptions(ops=("chat",)))
    run = next(r for r in results.runs if r.backend == "both")
    causes = Counter(m.cause for m in results.mismatches if m.backend == "both")
    assert causes["chat.default-system-added+chat.turn-end-spacing"] >= 15, causes
    assert causes["chat.turn-end-spacing"] >= 5, causes
    verdict = run.root_cause
    assert verdict.cause == "chat.default-system-added+chat.turn-end-spacing" and verdict.proven, verdict
    assert "writes its own whitespace after each end of turn: '\\n'" in verdict.said, verdict.said
