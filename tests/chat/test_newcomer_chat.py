"""A newcomer's hand-written Qwen3 chat format (tests/engines/blind/newcomer4_chat.py), written from
the README and docs on 2026-11-30, writes the generation prompt's assistant header without its
newline. Where the prompt ends with that header, the prompt's last newline is missing too; the
run's verdict names the generation prompt, which also holds where the prompt goes on after it
(``enable_thinking`` off). Its twin writes the newline and agrees."""

from __future__ import annotations

from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "newcomer4_chat.py"


def test_a_generation_prompt_written_by_hand_is_named(zoo):
    zoo("qwen3")
    results = run_compare(["qwen3"], ["chats"], [f"bug=py:{ENGINE}:Engine", f"twin=py:{ENGINE}:Twin"],
                          CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 0
    verdict = runs["bug"].root_cause
    assert verdict is not None and verdict.cause == "chat.generation-prompt-otherwise" and verdict.proven, verdict
    assert verdict.keeps == verdict.agreements > 0
    rows = [m for m in results.mismatches if m.backend == "bug"]
    assert all(m.cause == "chat.generation-prompt-otherwise" for m in rows)
