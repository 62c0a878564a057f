"""A role written under another name, read off the engine's prompt (``chat.role-renamed``). The
engine was written by a helper trying the README as a newcomer, with a bug of its own choosing:
a Llama 3 format that writes `tool` as `ipython`, Llama 3.1's name (tests/engines/blind/
role_rename_chat.py). At first no cause named it: only three renamings were declared."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "role_rename_chat.py"


def _run(tmp_path: Path, engine: str) -> tuple[dict, list[dict]]:
    out = tmp_path / engine
    proc = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "--ops", "chat",
                           "-b", f"mine=py:{ENGINE}:{engine}", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    run = next(r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"] if r["backend"] == "mine")
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        return run, [r for r in csv.DictReader(f) if r["backend"] == "mine"]


@pytest.mark.parametrize("engine", ["Engine", "FixedEngine"])
def test_a_role_written_under_another_name_is_read_and_named(zoo, tmp_path, engine):
    zoo("llama-bpe")
    run, rows = _run(tmp_path, engine)
    if engine == "FixedEngine":
        assert run["mismatches"] == 0, run
        return
    verdict = run["root_cause"]
    assert verdict["cause"] == "chat.role-renamed" and verdict["proven"], verdict
    assert verdict["explains"] == verdict["mismatches"] > 0, verdict
    assert all("`tool` message with the role `ipython`" in r["cause_evidence"] for r in rows), rows
