"""A message without text written as a turn left open (``chat.empty-turn-left-open``) and tool
results left out (``chat.tool-results-dropped``), judged on two engines the causes were not
written against: a FastChat-style formatter a helper wrote blind from one paragraph
(tests/engines/blind/blind14_chat.py), and llama-cpp-python's own Python chat formats, whose
``_format_no_colon_single`` writes ``role + message + sep`` only ``if message`` and whose
``_map_roles`` keeps only the roles a format names (tests/engines/thirdparty/survey6/)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
from cli_runs import tokparity

from tokparity.chat.reference import ChatReference
from tokparity.chat.sandbox import TemplateSandbox
from tokparity.chat.template import find_template

ENGINES = Path(__file__).parents[1] / "engines"
BLIND = ENGINES / "blind" / "blind14_chat.py"
FORMATS = ENGINES / "thirdparty" / "survey6" / "llama_cpp_formats.py"
pytestmark = pytest.mark.xdist_group("chat-empty-turn")


def rows(folder: Path) -> dict[str, str]:
    with open(folder / "mismatches.csv", newline="", encoding="utf-8") as f:
        return {r["case_id"]: r["cause"] for r in csv.DictReader(f)}


@pytest.mark.parametrize(("model", "turn_end"), [("llama-bpe", "<|eot_id|>"), ("qwen3", "<|im_end|>\n"),
                                                   ("qwen2", "<|im_end|>\n"), ("gemma-3", "<end_of_turn>\n")])
def test_the_end_of_a_turn_is_read_off_the_template(zoo, model, turn_end):
    """Llama 3's template of the zoo writes the assistant's header whatever is asked, and Qwen2's a
    default system turn first: each hides the end of a turn from one of the two probes."""
    reference = ChatReference(find_template(zoo(model)), lambda text, parse: [], None, TemplateSandbox(10))
    try:
        assert reference.turn_end() == turn_end
    finally:
        reference.close()


@pytest.mark.slow
def test_a_blind_formatter_that_leaves_an_empty_turn_open_is_named_and_its_twin_agrees(tmp_path, zoo):
    zoo("llama-bpe")
    engine = f"b14=cmd:{sys.executable} {BLIND} llama-3 {{tokenizer_json}}"
    bug = tokparity("compare", "llama-bpe", "--ops", "chat", "-q", "-b", engine + " --bug empty-open",
                    "-o", "bug", cwd=tmp_path)
    assert bug.returncode == 1, bug.stderr
    named = rows(tmp_path / "bug")
    assert named and set(named.values()) == {"chat.empty-turn-left-open"}, named
    twin = tokparity("compare", "llama-bpe", "--ops", "chat", "-q", "-b", engine, "-o", "twin", cwd=tmp_path)
    assert twin.returncode == 0, twin.stdout + twin.stderr


@pytest.mark.slow
def test_llama_cpp_pythons_llama3_format_has_every_row_named(tmp_path, zoo):
    """Before: 7 of its 12 rows had only a shape (an empty content, a content of parts, a tool
    call's turn). The BOS it leaves to the tokenizer, trimming and continue_final_message it ignores."""
    zoo("llama-bpe")
    done = tokparity("compare", "llama-bpe", "--ops", "chat", "-q", "-b",
                     f"fmt=cmd:{sys.executable} {FORMATS} llama-3 {{gguf}}", "-o", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    named = rows(tmp_path / "out")
    assert all(named.values()), named
    base = "chat.bos-added+chat.bos-token-empty"
    for case in ("empty-content-01", "empty-content-02", "content-parts-01", "content-parts-02"):
        assert named[case] == f"{base}+chat.empty-turn-left-open", (case, named[case])
    for case in ("tool-call-object-01", "tool-call-string-01", "tool-result-01"):
        assert named[case] == f"{base}+chat.tool-results-dropped+chat.empty-turn-left-open", (case, named[case])


def test_the_verdict_leaves_out_a_cause_that_one_way_cannot_make_with_the_others():
    """chatunify 0.1.0 on qwen2 (seventh survey): its rows named both chat.final-message-continued
    and chat.final-message-prefilled, which set one field two ways. Their union made no way at all,
    and the verdict read "reproduces 0 of 30 mismatches" where 27 rows had a cause."""
    from tokparity.diagnose.chat import _union

    counts = {"chat.chatml-fallback": 24, "chat.final-message-continued": 3, "chat.final-message-prefilled": 2,
              "chat.generation-prompt-added": 5}
    union = _union(counts, {})
    assert "chat.final-message-continued" in union and "chat.final-message-prefilled" not in union
    assert {"chat.chatml-fallback", "chat.generation-prompt-added"} <= set(union)
