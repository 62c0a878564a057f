"""A Llama 3 chat format written by hand (tests/engines/handwritten_llama3_chat.py), one bug per
class: each is named by the cause that reproduces it, and the twin agrees. The same causes named
real packages' formats: llama-cpp-agent 0.2.35's Llama 3 format (one newline after a header, the
generation prompt stripped, parts refused) and kani 1.10's Mistral format ("[INST]Hello")."""

from __future__ import annotations

from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parents[1] / "engines" / "handwritten_llama3_chat.py"


def test_each_bug_of_a_handwritten_format_is_named_and_its_twin_agrees(zoo):
    zoo("llama-bpe")
    bugs = {"one": "OneNewline", "strip": "Stripped", "parts": "StringsOnly"}
    results = run_compare(["llama-bpe"], ["chats"], [f"twin=py:{ENGINE}:Twin"]
                          + [f"{label}=py:{ENGINE}:{name}" for label, name in bugs.items()], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 20
    rows: dict[str, list[str]] = {}
    for m in results.mismatches:
        rows.setdefault(m.backend, []).append(m.cause)
    # one newline after each header, the generation prompt's too: the header's whitespace, read off
    # the prompt ("\n"); a content the template trims and that starts with whitespace is not marked
    assert rows["one"].count("chat.header-spacing") >= 20, rows["one"]
    assert "'\\n'" in next(m.cause_evidence for m in results.mismatches if m.cause == "chat.header-spacing")
    assert set(rows["strip"]) == {"chat.trailing-space-stripped"}, rows["strip"]
    assert set(rows["parts"]) == {"chat.parts-refused"}, rows["parts"]
    verdict = runs["parts"].root_cause
    assert verdict is not None and verdict.cause == "chat.parts-refused" and verdict.proven
    assert verdict.keeps == verdict.agreements > 20
