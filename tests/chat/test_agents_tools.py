"""A real package's tools: openai-agents 0.24.0 (PyPI) makes each function tool strict before it
reaches an OpenAI-compatible server (``ensure_strict_json_schema``), and writes ``strict`` into
it. The server's template then writes the edited schema into the prompt, not the request's.
``chat.tools-edited`` learns its rules off the prompts (tokparity/diagnose/tools_edited.py). It
was written from round 31's blind engine, which copies the strict rules by hand; this is the
package itself, with its own ``strict`` key and empty descriptions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runs import tokparity

pytest.importorskip("agents", reason="openai-agents is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "agents_tools_chat.py"


def test_the_tools_openai_agents_sends_are_named_by_their_rules_and_the_twin_agrees(zoo, tmp_path):
    zoo("qwen3")
    out = tmp_path / "out"
    spec = f"cmd:{sys.executable} {ENGINE} {{tokenizer_json}}"
    done = tokparity("compare", "qwen3", "--ops", "chat", "-b", f"agents={spec}", "-b", f"plain={spec} --plain",
                     "--out", str(out), timeout=900)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    runs = {r["backend"]: r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"]}
    assert runs["plain"]["mismatches"] == 0, runs["plain"]
    agents = runs["agents"]
    verdict = agents["root_cause"]
    assert agents["causes"] == {"chat.tools-edited": agents["mismatches"]} and agents["mismatches"] >= 5, agents
    assert verdict["variants"] == ["chat.tools-edited"] and verdict["proven"], verdict
    assert verdict["keeps"] == verdict["agreements"] > 0, verdict
    # (said in the verdict's own words: each rule, with its key and the objects it picks)
    said = verdict["said"][0]
    assert "sets additionalProperties to false where missing, in every object schema" in said, said
    assert "sets strict to true where missing, in every tool's function" in said, said
