"""A real package's chat format, written by hand: chat-bricks 0.1.5 (PyPI). Its Qwen 3 format
dumps each tool call whole with ``json.dumps`` (``templates/renderer.py``), so string arguments are
quoted and escaped where Qwen 3's template writes the string as it is. The ninth survey
(2026-12-02) found the row without a cause: it needs that bug on top of the engine's two others,
four ways at once, past the search's three. The run's causes, with one more of the catalogue, now
name it; the run's verdict holds all of them, proven. It also writes the newline after a header with
the content only, so an empty message reads ``<|im_start|>assistant<|im_end|>``."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from cli_runs import tokparity

pytest.importorskip("chat_bricks", reason="chat-bricks is not installed: pip install -e '.[test]'")

ENGINE = Path(__file__).parents[1] / "engines" / "thirdparty" / "chat_bricks_chat.py"


def test_a_tool_call_dumped_whole_is_named_on_top_of_the_engines_other_bugs(zoo, tmp_path):
    zoo("qwen3")
    out = tmp_path / "out"
    done = tokparity("compare", "qwen3", "--ops", "chat", "-b", f"bricks=cmd:{sys.executable} {ENGINE} qwen3",
                     "--out", str(out), timeout=900)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    with open(out / "mismatches.csv", newline="", encoding="utf-8") as f:
        causes = {r["case_id"]: r["cause"] for r in csv.DictReader(f) if r["backend"] == "bricks"}
    assert "chat.tool-arguments-quoted" in causes["tool-call-string-01"].split("+"), causes
    assert not any("chat.tool-arguments-quoted" in c for k, c in causes.items() if k != "tool-call-string-01"), causes
    # (an empty assistant message's header without its newline: a shape alone until 2026-12-03)
    assert "chat.empty-message-unspaced" in causes["empty-content-02"].split("+"), causes
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "bricks")
    verdict = run["root_cause"]
    assert "chat.tool-arguments-quoted" in verdict["variants"] and verdict["proven"], verdict
    assert verdict["keeps"] == verdict["agreements"] > 0, verdict
