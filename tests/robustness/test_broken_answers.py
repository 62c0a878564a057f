"""An engine whose answers break, on every op the diagnosis reads (tests/engines/broken_answers.py):
a lone surrogate, bytes that are not UTF-8, a field of the wrong type, a panic. The run ends with
exit 1, not a traceback. Every broken answer is a row. Each row is a crash, or says what the engine
did. The bug-free library beside it agrees."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_runs import tokparity

ENGINE = Path(__file__).parents[1] / "engines" / "broken_answers.py"
HOWS = ("surrogate", "bad-utf8", "wrong-type", "panic")


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("op", ["decode", "stream", "pieces", "chat"])
def test_a_broken_answer_is_a_row_not_a_traceback(zoo, tmp_path, op, how):
    zoo("qwen3")
    corpus = ["-c", "chats", "--sample", "12"] if op == "chat" else ["-c", "edge", "--sample", "24"]
    engine = f"broken=cmd:{{python}} {ENGINE} {op} {how} {{tokenizer_json}} {{tokenizer_config}}"
    done = tokparity("compare", "qwen3", *corpus, "-b", engine, "--ops", op, "-o", str(tmp_path), "-q")
    assert done.returncode == 1 and "Traceback" not in done.stderr, (done.stdout, done.stderr)
    runs = {r["backend"]: r for r in json.loads((tmp_path / "summary.json").read_text("utf-8"))["runs"]
            if r["op"] == op}
    assert all(r["mismatches"] == 0 for name, r in runs.items() if name != "broken"), runs  # (hf beside it)
    assert runs["broken"]["mismatches"] >= (24 if op == "pieces" else 4), runs["broken"]
    with open(tmp_path / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["backend"] == "broken"]
    assert len(rows) == runs["broken"]["mismatches"]
    for row in rows:
        assert row["class"] == "crash" or row["shape"], row  # (a crash, or what the engine did)
        assert row["evidence"], row
